"""The emulator's instruction semantics against the GPU, bit for bit: each case is one ptx op,
printed as its PTX line (`assembly_line`) inside a kernel that loads its operands per thread
from 8-byte slots and stores its results; the same op runs through the emulator
(semantics_harness.run) on the same inputs.

Exact cases must agree in every bit (NaN encodings included: they test the values the ISA
leaves open, see emulator/semantics/arithmetic.py, conversion.py, math.py and rounding.py).
The approximate instructions (ex2, lg2, rsqrt, sqrt.approx, div.approx/full) are within the
ISA's bounds on both sides, so they must agree within the sum of those bounds; the largest
difference is printed (run with ``-s`` to see it).

Float inputs end in a grid of edge values (NaNs of both signs, quiet and signalling, with and
without payload; infinities, zeros, extremes): every pair of edges meets in a binary case (and
a third edge list runs alongside in fma), so that the NaN rules (which of two NaNs wins, the NaN
of inf - inf or 0 * inf) are measured, not sampled. A failure lists 8 differing rows; with
``TYLO_SEMANTICS_DIFFS=<file>`` set, every differing row of every case is written to that file,
one line each: the case name, the inputs, the emulated and the GPU result (hex), and for the
approximate cases the reason (NaN-ness, or the ulp distance)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from semantics_harness import run

from tylo.compiler.support import knobs
from tylo.compiler.hardware.ptx_types import ptx_version
from tylo.compiler.params.signature import DeviceParam
from tylo.dialects.ptx import math as M
from tylo.dialects.ptx import ops as P
from tylo.dialects.ptx.registers import RegisterType, reg_class_of
from tylo.emulator.values import REGISTER_DTYPES

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

RNG = np.random.default_rng()
_PREFIX = {"pred": "%p", "b16": "%rs", "b32": "%r", "b64": "%rd", "f32": "%f", "f64": "%fd"}
_index = itertools.count(1)


def _reg(cls: str) -> RegisterType:
    return RegisterType(cls, next(_index) % 190 + 1)


def _operand(cls: str):
    from xdsl.utils.test_value import create_ssa_value

    return create_ssa_value(_reg(cls))


def _kernel(op, arch: str) -> str:
    ins = [reg_class_of(v) for v in op.operands]
    outs = [reg_class_of(r) for r in op.results]
    slots = len(ins) + len(outs)
    lines = [f".version {ptx_version(arch)}", f".target {arch}", ".address_size 64",
             ".visible .entry k(" + ", ".join(f".param .u64 k_{i}" for i in range(slots)) + ")", "{"]
    lines += [f".reg .{c} {p}<256>;" for c, p in _PREFIX.items()]
    lines += ["mov.u32 %r250, %tid.x;", "mov.u32 %r251, %ctaid.x;", "mov.u32 %r252, %ntid.x;",
              "mad.lo.s32 %r253, %r251, %r252, %r250;", "mul.wide.u32 %rd250, %r253, 8;"]
    for i in range(slots):
        lines += [f"ld.param.u64 %rd{200 + i}, [k_{i}];", f"cvta.to.global.u64 %rd{200 + i}, %rd{200 + i};",
                  f"add.s64 %rd{220 + i}, %rd{200 + i}, %rd250;"]
    for i, (v, c) in enumerate(zip(op.operands, ins)):
        if c == "pred":
            lines += [f"ld.global.u8 %rs{240 + i}, [%rd{220 + i}];",
                      f"setp.ne.u16 {v.type.register_name}, %rs{240 + i}, 0;"]
        else:
            lines.append(f"ld.global.{c} {v.type.register_name}, [%rd{220 + i}];")
    lines.append(op.assembly_line())
    for j, (r, c) in enumerate(zip(op.results, outs)):
        slot = len(ins) + j
        if c == "pred":
            lines += [f"selp.u16 %rs{248 + j}, 1, 0, {r.type.register_name};",
                      f"st.global.u8 [%rd{220 + slot}], %rs{248 + j};"]
        else:
            lines.append(f"st.global.{c} [%rd{220 + slot}], {r.type.register_name};")
    return "\n".join(lines + ["ret;", "}"])


def _on_gpu(op, arrays):
    from tylo.runtime import assemble, launch, pack, target_arch

    n = len(arrays[0])
    padded = (n + 127) // 128 * 128
    torch.zeros(1, device="cuda")  # torch's primary context, current
    arch = target_arch()
    cubin = assemble(_kernel(op, arch), arch, "k").cubin
    slots = [np.resize(a.astype(np.uint64), padded) for a in arrays]
    tensors = [torch.from_numpy(s.view(np.int64)).to("cuda") for s in slots]
    tensors += [torch.zeros(padded, dtype=torch.int64, device="cuda") for _ in op.results]
    params = [DeviceParam(f"a{i}", "ptr", "u64") for i in range(len(tensors))]
    packed = pack(params, {f"a{i}": t for i, t in enumerate(tensors)})
    launch(cubin, "k", padded // 128, 128, 0, 0, packed, 0)
    torch.cuda.synchronize()
    outs = tensors[len(arrays):]
    return [o.cpu().numpy().view(np.uint64)[:n].astype(REGISTER_DTYPES[reg_class_of(r)])
            for o, r in zip(outs, op.results)]


# -- inputs -----------------------------------------------------------------------------------

F32_EDGES = [0x7FC00000, 0xFFC00000, 0x7FC12345, 0xFF812345, 0x7F800001, 0x7F800000, 0xFF800000,
             0, 0x80000000, 0x3F800000, 0xBF800000, 0x7F7FFFFF, 0x00000001, 0x807FFFFF, 0x3F801000]
F64_EDGES = [0x7FF8000000000000, 0xFFF8000000000000, 0x7FF8000000012345, 0xFFF0000000000123,
             0x7FF4CAFE12345678, 0x7FF0000000000000, 0xFFF0000000000000, 0, 0x8000000000000000,
             0x3FF0000000000000, 0x7FEFFFFFFFFFFFFF, 1, 0x800FFFFFFFFFFFFF]
H16_EDGES = [0x7E00, 0xFE00, 0x7C01, 0xFD23, 0x7C00, 0xFC00, 0, 0x8000, 0x3C00, 0x7BFF, 1, 0x83FF]
BF16_EDGES = [0x7FC0, 0xFFC0, 0x7F81, 0xFFA3, 0x7F80, 0xFF80, 0, 0x8000, 0x3F80, 0x7F7F, 1, 0x807F]
EDGES = {"f32": (np.uint32, F32_EDGES), "f64": (np.uint64, F64_EDGES), "f16": (np.uint16, H16_EDGES),
         "bf16": (np.uint16, BF16_EDGES)}
RANDOM = 2048  # random inputs before the edge grid


def _grid(edges):
    """The edges each repeated len(edges) times, then the edges tiled as often: against the
    same grid with its halves swapped (`_pair`), every two edges meet, in both orders."""
    return np.concatenate([np.repeat(edges, len(edges)), np.tile(edges, len(edges))])


def _floats(t: str):
    """RANDOM encodings of float type `t` (uniform bits and values near 1), then its edge grid."""
    dtype, edges = EDGES[t]
    width = 8 * np.dtype(dtype).itemsize
    n = RANDOM
    bits = RNG.integers(0, 2**width, n, dtype=np.uint64).astype(dtype)
    near = {"f32": np.float32, "f64": np.float64, "f16": np.float16}.get(t)
    if near is not None:
        bits[: n // 2] = RNG.standard_normal(n // 2).astype(near).view(dtype)
    else:
        bits[: n // 2] = (RNG.standard_normal(n // 2).astype(np.float32).view(np.uint32) >> 16).astype(dtype)
    return np.concatenate([bits, _grid(np.array(edges, dtype))])


def _ints(width: int):
    """RANDOM integers of `width` bits (a quarter small), then the edge grid."""
    dtype = {16: np.uint16, 32: np.uint32, 64: np.uint64}[width]
    n = RANDOM
    x = RNG.integers(0, 2**width, n, dtype=np.uint64).astype(dtype)
    x[: n // 4] = RNG.integers(-20, 20, n // 4).astype(dtype)
    edges = np.array([0, 1, 2**width - 1, 2 ** (width - 1), 2 ** (width - 1) - 1, 7, 2**width - 7],
                     np.uint64).astype(dtype)
    return np.concatenate([x, _grid(edges)])


def _same(n, *arrays):
    return [np.resize(a, n) for a in arrays]


def _pair(make):
    """Two inputs of `make` (`_floats` or `_ints`): the random parts paired at random, the
    edge grids against each other (b's halves swapped), so that every two edges meet."""
    a, b = make(), make().copy()
    b[:RANDOM] = RNG.permutation(b[:RANDOM])
    b[RANDOM:] = np.roll(b[RANDOM:], (len(b) - RANDOM) // 2)
    return _same(len(a), a, b)


def _third(a, t: str):
    """A third input for fma beside `_pair` (a, b) of `_floats(t)`: a's random part shuffled,
    then edges that change with both a's and b's edge, so that NaNs of all three meet."""
    dtype, edges = EDGES[t]
    c = a.copy()
    c[:RANDOM] = RNG.permutation(a[:RANDOM])
    i, k = np.arange(len(a) - RANDOM), len(edges)
    c[RANDOM:] = np.array(edges, dtype)[(i // k + i % k + 1) % k]
    return c


# -- cases ------------------------------------------------------------------------------------

FLOAT_CLASS = {"f16": "b16", "bf16": "b16", "f32": "f32", "f64": "f64"}


def _binary(cls_op, t, mode=None, out=None, b_cls=None):
    c = FLOAT_CLASS.get(t) or {"16": "b16", "32": "b32", "64": "b64"}[t[1:]]
    return cls_op(t, _operand(c), _operand(b_cls or c), _reg(out or c), mode=mode)


def _cases():
    cases = []
    for t in ("s16", "u16", "s32", "u32", "s64", "u64"):
        w = int(t[1:])
        a, b = _pair(lambda: _ints(w))  # noqa: B023
        b[:64] = 0  # division by zero
        for cls_op in (P.DivOp, P.RemOp):
            cases.append((f"{cls_op.name}.{t}", _binary(cls_op, t), [a, b], "exact"))
        cases.append((f"mul.hi.{t}", _binary(P.MulOp, t, "hi"), [a, b], "exact"))
        if w < 64:
            cases.append((f"mul.wide.{t}", _binary(P.MulOp, t, "wide", out={16: "b32", 32: "b64"}[w]),
                          [a, b], "exact"))
    amounts = np.array([0, 1, 15, 16, 31, 32, 33, 63, 64, 65, 2**31, 2**32 - 1], np.uint32)
    for t in ("b16", "b32", "b64", "s16", "s32", "s64", "u32"):
        a = _ints(int(t[1:]))
        s = np.resize(amounts, len(a))
        if t[0] == "b":
            cases.append((f"shl.{t}", _binary(P.ShlOp, t, b_cls="b32"), [a, s], "exact"))
        cases.append((f"shr.{t}", _binary(P.ShrOp, t, b_cls="b32"), [a, s], "exact"))
    a, b = _pair(lambda: _ints(32))
    cases.append(("add.sat.s32", _binary(P.AddOp, "s32", "sat"), [a, b], "exact"))
    for t in ("f32", "f64"):
        a, b = _pair(lambda: _floats(t))  # noqa: B023
        for cls_op in (P.AddOp, P.SubOp, P.MulOp):
            for mode in ("rn", "rz", "rm", "rp"):
                cases.append((f"{cls_op.name}.{mode}.{t}", _binary(cls_op, t, mode), [a, b], "exact"))
        for mode in ("rn", "rz", "rm", "rp"):
            cases.append((f"div.{mode}.{t}", _binary(P.DivOp, t, mode), [a, b], "exact"))
        for cls_op in (P.MinOp, P.MaxOp):
            cases.append((f"{cls_op.name}.{t}", _binary(cls_op, t), [a, b], "exact"))
        c = _third(a, t)
        op = P.FmaOp(t, _operand(t), _operand(t), _operand(t), _reg(t))
        cases.append((f"fma.rn.{t}", op, [a, b, c], "exact"))
        for cmp in ("eq", "ne", "lt", "ge", "equ", "neu", "ltu", "geu", "num", "nan"):
            cases.append((f"setp.{cmp}.{t}", P.SetpOp(cmp, t, _operand(t), _operand(t), _reg("pred")),
                          [a, b], "exact"))
        cases.append((f"neg.{t}", P.NegOp(t, _operand(t), _reg(t)), [a], "exact"))
        cases.append((f"abs.{t}", M.AbsOp(t, _operand(t), _reg(t)), [a], "exact"))
        for mode in ("rn", "rz", "rm", "rp"):
            cases.append((f"sqrt.{mode}.{t}", M.SqrtOp(t, _operand(t), _reg(t), mode=mode), [a], "exact"))
    a, b = _pair(lambda: _floats("f32"))
    for cls_op in (P.MinOp, P.MaxOp):
        cases.append((f"{cls_op.name}.NaN.f32", _binary(cls_op, "f32", "NaN"), [a, b], "exact"))
    cases.append(("add.rn.ftz.f32", _binary(P.AddOp, "f32", "rn.ftz"), [a, b], "exact"))
    cases.append(("add.rn.sat.f32", _binary(P.AddOp, "f32", "rn.sat"), [a, b], "exact"))
    for t in ("f16", "bf16"):
        a, b = _pair(lambda: _floats(t))  # noqa: B023
        c = _third(a, t)
        for cls_op in (P.AddOp, P.SubOp, P.MulOp):
            cases.append((f"{cls_op.name}.rn.{t}", _binary(cls_op, t, "rn"), [a, b], "exact"))
        cases.append((f"fma.rn.{t}", P.FmaOp(t, _operand("b16"), _operand("b16"), _operand("b16"), _reg("b16")),
                      [a, b, c], "exact"))
        cases.append((f"abs.{t}", M.AbsOp(t, _operand("b16"), _reg("b16")), [a], "exact"))
        for cls_op in (P.MinOp, P.MaxOp):
            cases.append((f"{cls_op.name}.{t}", _binary(cls_op, t), [a, b], "exact"))
    ints = {w: _ints(w) for w in (16, 32, 64)}
    cases.append(("abs.s32", M.AbsOp("s32", _operand("b32"), _reg("b32")), [ints[32]], "exact"))
    cases += _conversion_cases(ints)
    x = _floats("f32")
    for cls_op, mode, bound in ((M.Ex2Op, "approx", "ex2"), (M.Lg2Op, "approx", "lg2"),
                                (M.RsqrtOp, "approx", "rsqrt"), (M.SqrtOp, "approx", "sqrt")):
        cases.append((f"{cls_op.OPCODE}.approx.f32", cls_op("f32", _operand("f32"), _reg("f32"), mode=mode),
                      [x], bound))
    a, b = _pair(lambda: _floats("f32"))
    b[:8] = np.array([2.0**126.5, -(2.0**127), 2.0**126.1, 3e38] * 2, np.float32).view(np.uint32)
    for mode in ("approx", "full"):
        cases.append((f"div.{mode}.f32", _binary(P.DivOp, "f32", mode), [a, b], "div"))
    return cases


def _conversion_cases(ints):
    cases = []
    floats = {t: _floats(t) for t in ("f16", "bf16", "f32", "f64")}
    forms = [("f16", "f32", "rn"), ("f16", "f32", "rz"), ("bf16", "f32", "rn"), ("bf16", "f32", "rz"),
             ("bf16", "f32", "rn.relu"), ("f16", "f32", "rn.satfinite"), ("f32", "f16", None),
             ("f32", "bf16", None), ("f64", "f32", None), ("f32", "f64", "rn"), ("f32", "f64", "rz"),
             ("bf16", "f16", "rn"), ("f16", "bf16", "rn"), ("bf16", "f64", "rn"), ("tf32", "f32", "rna"),
             ("f32", "f32", "rni"), ("f32", "f32", "rzi"), ("f64", "f64", "rmi"),
             ("s32", "f32", "rzi"), ("s32", "f64", "rzi"), ("u32", "f32", "rzi"), ("u32", "f64", "rpi"),
             ("s64", "f32", "rzi"), ("u64", "f32", "rni"), ("s64", "f64", "rmi"), ("s16", "f32", "rni"),
             ("u8", "f32", "rzi"), ("s8", "f64", "rzi"), ("s32", "bf16", "rzi"), ("u16", "f16", "rni")]
    for to, frm, mode in forms:
        cls_in = FLOAT_CLASS[frm]
        cls_out = FLOAT_CLASS.get(to) or {"tf32": "b32", "s8": "b16", "u8": "b16"}.get(to) or \
            {"16": "b16", "32": "b32", "64": "b64"}[to[1:]]
        op = P.CvtOp(to, frm, _operand(cls_in), _reg(cls_out), mode=mode)
        cases.append((f"cvt.{mode}.{to}.{frm}", op, [floats[frm]], "exact"))
    for to in ("f32", "f64", "f16", "bf16"):
        for frm, mode in (("s32", "rn"), ("u32", "rz"), ("s64", "rn"), ("u64", "rp"), ("s16", "rm")):
            width = int(frm[1:])
            op = P.CvtOp(to, frm, _operand({16: "b16", 32: "b32", 64: "b64"}[width]), _reg(FLOAT_CLASS[to]),
                         mode=mode)
            cases.append((f"cvt.{mode}.{to}.{frm}", op, [ints[width]], "exact"))
    for to, frm, mode in (("s16", "s8", None), ("u32", "u8", None), ("s8", "s32", "sat"),
                          ("u16", "s64", "sat"), ("s32", "u64", "sat"), ("u32", "s16", None)):
        w_in = max(16, int(frm[1:]))
        w_out = max(16, int(to[1:]))
        op = P.CvtOp(to, frm, _operand(f"b{w_in}"), _reg(f"b{w_out}"), mode=mode)
        cases.append((f"cvt.{mode}.{to}.{frm}", op, [ints[w_in]], "exact"))
    every = np.arange(2**16, dtype=np.uint32).astype(np.uint16)
    for frm in ("e4m3x2", "e5m2x2"):
        op = P.CvtOp("f16x2", frm, _operand("b16"), _reg("b32"), mode="rn")
        cases.append((f"cvt.rn.f16x2.{frm}", op, [every], "exact"))
    hi, lo = _pair(lambda: floats["f32"])
    for to, mode, cls in (("bf16x2", "rn", "b32"), ("f16x2", "rn", "b32"), ("bf16x2", "rz.relu", "b32"),
                          ("e4m3x2", "rn.satfinite", "b16"), ("e5m2x2", "rn.satfinite", "b16"),
                          ("e4m3x2", "rn.satfinite.relu", "b16")):
        op = P.CvtPairOp(to, "f32", _operand("f32"), _operand("f32"), _reg(cls), mode=mode)
        cases.append((f"cvt.{mode}.{to}.f32", op, [hi, lo], "exact"))
    return cases


CASES = _cases()


def _ulps(x, y):
    """Steps between float32 values of the same sign (a large number across signs or NaN)."""
    xi, yi = x.view(np.int32).astype(np.int64), y.view(np.int32).astype(np.int64)
    xi = np.where(xi < 0, -(xi & 0x7FFFFFFF), xi)
    yi = np.where(yi < 0, -(yi & 0x7FFFFFFF), yi)
    return np.abs(xi - yi)


@pytest.fixture(scope="module")
def diffs():
    """The file named by ``TYLO_SEMANTICS_DIFFS``, open for writing once per run, or None."""
    path = knobs.testing.semantics_diffs
    if path is None:
        yield None
        return
    with path.open("w") as f:
        yield f


def _rows(inputs, emu, gpu, index, notes=None):
    """(inputs..., emulated, GPU[, note]) in hex of the rows `index`."""
    notes = notes if notes is not None else [None] * len(index)
    return [tuple(hex(int(a[i])) for a in inputs) + (hex(int(emu[i])), hex(int(gpu[i])))
            + ((note,) if note else ()) for i, note in zip(index, notes)]


def _write(diffs, name, rows):
    if diffs is not None and rows:
        diffs.writelines(" ".join((name, *row)) + "\n" for row in rows)
        diffs.flush()


@pytest.mark.parametrize("name,op,inputs,compare", CASES, ids=[c[0] for c in CASES])
def test_emulator_matches_the_gpu(name, op, inputs, compare, diffs):
    emulated = run(op, *[a.astype(REGISTER_DTYPES[reg_class_of(v)]) for a, v in zip(inputs, op.operands)])
    measured = _on_gpu(op, inputs)
    for emu, gpu in zip(emulated, measured):
        if compare == "exact":
            bad = np.nonzero(emu != gpu)[0]
            rows = _rows(inputs, emu, gpu, bad)
            _write(diffs, name, rows)
            assert bad.size == 0, f"{name}: {bad.size} of {emu.size} differ (inputs, emulated, GPU): {rows[:8]}"
            continue
        e, g = emu.view(np.float32), gpu.view(np.float32)
        stated = np.ones(e.shape, bool)
        if name == "div.approx.f32":  # the ISA bounds it for 2**-126 <= |b| <= 2**126 only
            b = np.abs(inputs[1].view(np.float32))
            stated = (b >= 2.0**-126) & np.isfinite(b)  # and states 2**126 < |b| < 2**128 apart
        nan_differs = np.nonzero((np.isnan(e) != np.isnan(g)) & stated)[0]
        both = ~np.isnan(e) & ~np.isnan(g) & stated
        ulps = np.zeros(e.shape, np.int64)
        ulps[both] = _ulps(e[both], g[both])
        limit = {"ex2": 3, "sqrt": 2, "rsqrt": 4, "div": 2, "lg2": 4}[compare]
        if compare == "lg2":  # absolute 2**-22 near 1: compare in absolute terms there
            x = inputs[0].view(np.float32)
            near = (x > 0.5) & (x < 2)
            with np.errstate(invalid="ignore"):
                close = np.abs(e.astype(np.float64) - g) <= 2.0**-21
            ulps = np.where(near & close, 0, ulps)
        over = np.nonzero(ulps > limit)[0]
        nan_rows = _rows(inputs, emu, gpu, nan_differs, ["NaN-ness"] * nan_differs.size)
        _write(diffs, name, nan_rows + _rows(inputs, emu, gpu, over, [f"{ulps[i]}ulp" for i in over]))
        print(f"{name}: largest difference {ulps.max(initial=0)} ulp")
        assert nan_differs.size == 0, (f"{name}: NaN-ness differs in {nan_differs.size} rows (inputs, "
                                       f"emulated, GPU): {nan_rows[:8]}")
        assert over.size == 0, f"{name}: {ulps.max()} ulp apart"
