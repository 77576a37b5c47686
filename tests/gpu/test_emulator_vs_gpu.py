"""The emulator against the GPU, on the same inputs: the same kernels run on the H200 and on the
CPU emulator (backends.py), fresh random inputs each run, results compared bit for bit.

* Exact operations (`EXACT`): integer and float add, sub, mul, div.rn, fma.rn, sqrt.rn, min,
  max, setp (comparisons), selp (`tylo.select`), neg, abs, shifts, floor // and %, cvt between
  every pair the cases name; inputs are uniformly random bit patterns (every binade,
  subnormals, infinities, NaNs of any payload) plus edges. Every output bit must agree, NaNs
  included.
* Loads and stores of 8- to 64-bit elements (`test_gather`), ldmatrix / stmatrix
  (copy_atom_cases), the docs' block reduction and transpose (docs/kernel_language.md section
  11), the GEMM example at 256x256x256 with every plan (mma.sync: bit for bit if the
  emulator's accumulation model is the hardware's, else the test fails and names the max ulp),
  and tylo.print's output text (print_cases).
* ``.approx`` instructions (ex2, lg2, rsqrt through tylo.exp2, exp, log2, log, rsqrt) are not
  bit-exact by definition: the PTX ISA bounds each one's error (9.7.3.21 ex2: 2 ulp from the
  correctly rounded result; 9.7.3.20 lg2: absolute 2^-22 in (0.5, 2), relative 2^-22 outside;
  9.7.3.16 rsqrt: relative 2^-22.9), and the emulator computes them in float64 and rounds once.
  Each result must be within the bound; the two may differ by the sum of their errors, and the
  test reports by how many ulps they differ.

Run with ``-s`` to see one summary line per case (``emu-vs-gpu <case>: ...``).
"""

from __future__ import annotations

import runpy
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import ml_dtypes
import numpy as np
import pytest

import backends
import print_cases
from copy_atom_cases import CASES as COPY_CASES, load_through_shared, store_through_shared
from elementwise_kernels import binary, ternary, unary

import tylo
from tylo import BFloat16, Bool, Float16, Float32, Float64, Int8, Int32, Int64, UInt8, UInt32
from tylo.ops.kernels import ampere_gemm

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
N = 1 << 14
BF16 = ml_dtypes.bfloat16
UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


@pytest.fixture(scope="module")
def both():
    """(GPU, emulator) backends."""
    return backends.make("gpu"), backends.Emulator()


def bits(x: np.ndarray) -> np.ndarray:
    return x.view(UNSIGNED[x.itemsize])


def report(case: str, gpu: np.ndarray, emu: np.ndarray) -> int:
    """Print the case's summary line; return how many elements differ in any bit."""
    g, e = bits(np.ascontiguousarray(gpu)).ravel(), bits(np.ascontiguousarray(emu)).ravel()
    bad = np.flatnonzero(g != e)
    if not bad.size:
        print(f"emu-vs-gpu {case}: {g.size} elements, bit for bit equal")
        return 0
    shown = ", ".join(f"[{i}] gpu {int(g[i]):#x} emulator {int(e[i]):#x}" for i in bad[:4])
    print(f"emu-vs-gpu {case}: {bad.size} of {g.size} elements differ; first {shown}")
    return int(bad.size)


def run_both(both, kernel, grid, block, make_args, outputs) -> tuple[list, list]:
    """Run `kernel` on the GPU and on the emulator; `make_args(backend)` builds the arguments
    (the same host values for both), `outputs` are the positions of the outputs in them.
    Returns the outputs of each, as numpy."""
    results = []
    for backend in both:
        args = make_args(backend)
        backend.launch(kernel, grid, block, *args)
        results.append([backend.get(args[i]) for i in outputs])
    return results[0], results[1]


# -- elementwise --------------------------------------------------------------------------------

def random_bits(dtype, n: int, rng) -> np.ndarray:
    """`n` values of numpy `dtype` with uniformly random bit patterns, and the edges: 0, -0,
    +-1, +-inf, NaN, the largest and smallest normal and subnormal for floats; 0, +-1, the
    extremes for integers."""
    size = np.dtype(dtype).itemsize
    x = np.frombuffer(rng.bytes(n * size), UNSIGNED[size]).view(dtype)
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        edges = np.array([0, 1, info.max, info.min, info.max - 1, info.min + 1] +
                         ([-1, -2] if info.min < 0 else [2, 3]), dtype)
    else:
        fi = ml_dtypes.finfo(dtype) if dtype is BF16 else np.finfo(dtype)
        edges = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, float(fi.max),
                          -float(fi.max), float(fi.tiny), float(fi.smallest_subnormal),
                          -float(fi.smallest_subnormal)], np.float64).astype(dtype)
    return np.concatenate([edges, x])


@dataclass(frozen=True)
class Case:
    name: str
    kernel: object
    fn: object
    inputs: tuple  # numpy dtypes of the operands
    out: object  # numpy dtype of the result

    def __str__(self) -> str:
        return self.name


def _floats(dtype, suffix):
    return [
        Case(f"add.{suffix}", binary, lambda a, b: a + b, (dtype, dtype), dtype),
        Case(f"sub.{suffix}", binary, lambda a, b: a - b, (dtype, dtype), dtype),
        Case(f"mul.{suffix}", binary, lambda a, b: a * b, (dtype, dtype), dtype),
        Case(f"div.{suffix}", binary, lambda a, b: a / b, (dtype, dtype), dtype),
        Case(f"fma.{suffix}", ternary, lambda a, b, c: tylo.fma(a, b, c), (dtype,) * 3, dtype),
        Case(f"sqrt.{suffix}", unary, tylo.sqrt, (dtype,), dtype),
        Case(f"min.{suffix}", binary, tylo.minimum, (dtype, dtype), dtype),
        Case(f"max.{suffix}", binary, tylo.maximum, (dtype, dtype), dtype),
        Case(f"neg.{suffix}", unary, lambda a: -a, (dtype,), dtype),
        Case(f"abs.{suffix}", unary, abs, (dtype,), dtype),
        Case(f"setp.lt.{suffix}", binary, lambda a, b: a < b, (dtype, dtype), np.bool_),
        Case(f"setp.ne.{suffix}", binary, lambda a, b: a != b, (dtype, dtype), np.bool_),
        Case(f"selp.{suffix}", binary, lambda a, b: tylo.select(a >= b, a, b), (dtype, dtype),
             dtype),
    ]


def _ints(dtype, suffix):
    return [
        Case(f"add.{suffix}", binary, lambda a, b: a + b, (dtype, dtype), dtype),
        Case(f"mul.lo.{suffix}", binary, lambda a, b: a * b, (dtype, dtype), dtype),
        Case(f"floordiv.{suffix}", binary, lambda a, b: a // b, (dtype, "divisor"), dtype),
        Case(f"floormod.{suffix}", binary, lambda a, b: a % b, (dtype, "divisor"), dtype),
        Case(f"and-xor.{suffix}", binary, lambda a, b: (a & b) ^ (a | ~b), (dtype, dtype), dtype),
        Case(f"shl.{suffix}", binary, lambda a, b: a << b, (dtype, "shift"), dtype),
        Case(f"shr.{suffix}", binary, lambda a, b: a >> b, (dtype, "shift"), dtype),
        Case(f"min-max.{suffix}", binary, lambda a, b: tylo.minimum(a, b) - tylo.maximum(a, b ^ 5),
             (dtype, dtype), dtype),
        Case(f"setp.le.{suffix}", binary, lambda a, b: a <= b, (dtype, dtype), np.bool_),
        Case(f"selp.{suffix}", binary, lambda a, b: tylo.select(a > b, a, b), (dtype, dtype),
             dtype),
    ]


def _cvt(src, dst, dst_dtype):
    name = f"cvt.{np.dtype(dst).name}.{np.dtype(src).name}"
    return Case(name, unary, lambda a: a.to(dst_dtype), (src,), dst)


EXACT = (
    _floats(np.float32, "f32") + _floats(np.float64, "f64") + _floats(np.float16, "f16")
    + _floats(BF16, "bf16") + _ints(np.int32, "s32") + _ints(np.uint32, "u32")
    + _ints(np.int64, "s64")
    + [_cvt(np.float32, d, t) for d, t in [(BF16, BFloat16), (np.float16, Float16),
                                          (np.float64, Float64), (np.int32, Int32),
                                          (np.uint32, UInt32), (np.int64, Int64),
                                          (np.int8, Int8), (np.uint8, UInt8), (np.bool_, Bool)]]
    + [_cvt(np.float64, d, t) for d, t in [(np.float32, Float32), (np.float16, Float16),
                                          (BF16, BFloat16), (np.int32, Int32), (np.int64, Int64)]]
    + [_cvt(s, np.float32, Float32) for s in (BF16, np.float16, np.int32, np.uint32, np.int64,
                                                np.int8, np.uint8)]
    + [_cvt(np.int32, d, t) for d, t in [(np.int8, Int8), (np.int64, Int64), (BF16, BFloat16),
                                        (np.float16, Float16), (np.float64, Float64)]]
    + [_cvt(np.float16, BF16, BFloat16), _cvt(BF16, np.float16, Float16)]
)


def _operand(kind, like, n, rng) -> np.ndarray:
    if kind == "divisor":  # no zero divisors (undefined in PTX), many small ones of both signs
        d = random_bits(like, n, rng)
        small = rng.integers(-40 if np.dtype(like).kind == "i" else 1, 41, d.size)
        d[::2] = small[::2].astype(like)
        d[d == 0] = 7
        return d
    if kind == "shift":  # 0 .. 2 * bits: past the width too
        width = 8 * np.dtype(like).itemsize
        return rng.integers(0, 2 * width + 1, n + 8).astype(like)
    return random_bits(kind, n, rng)


@pytest.mark.parametrize("case", EXACT, ids=str)
def test_exact_instruction(both, case):
    rng = np.random.default_rng()
    first = next(k for k in case.inputs if not isinstance(k, str))
    ops = [_operand(k, first, N, rng) for k in case.inputs]
    n = min(len(x) for x in ops)
    ops = [x[:n] for x in ops]
    gpu, emu = run_both(both, case.kernel, ((n + 255) // 256,), 256,
                        lambda b: (b.put(np.zeros(n, case.out)), *map(b.put, ops), case.fn), [0])
    assert report(case.name, gpu[0], emu[0]) == 0


# -- approximate instructions -------------------------------------------------------------------

def _ordered(x: np.ndarray) -> np.ndarray:
    """Integers in the order of the values (consecutive floats differ by one; -0 = +0)."""
    b = bits(x).astype(np.int64)
    sign = 1 << (8 * x.itemsize - 1)
    mag = b & (sign - 1)
    return np.where(b & sign, -mag, mag)


def _ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.abs(_ordered(a) - _ordered(b))


def _within_isa_bound(name, x, got) -> np.ndarray:
    """Where `got` (f32) meets the PTX ISA's bound for `name` of x; where the exact value is
    0 or infinite (lg2(0), rsqrt(0), rsqrt(inf), ex2 far below -149), `got` must be it."""
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        exact = {"ex2": np.exp2, "lg2": np.log2, "rsqrt": lambda v: 1 / np.sqrt(v)}[name](x64)
        if name == "ex2":  # 9.7.3.21: 2 ulp from the correctly rounded result (inf included)
            ok = _ulps(got, exact.astype(np.float32)) <= 2
        elif name == "lg2":  # 9.7.3.20
            bound = np.where((x64 > 0.5) & (x64 < 2), 2.0**-22, 2.0**-22 * np.abs(exact))
            ok = np.abs(got.astype(np.float64) - exact) <= bound
        else:  # 9.7.3.16
            ok = np.abs(got.astype(np.float64) - exact) <= 2.0**-22.9 * np.abs(exact)
        special = ~np.isfinite(exact) | (exact == 0)
        return np.where(special, got == exact.astype(np.float32), ok)


APPROX = [("ex2", tylo.exp2, "any"), ("lg2", tylo.log2, "positive"),
          ("rsqrt", tylo.rsqrt, "positive")]


@pytest.mark.parametrize("name, fn, domain", APPROX, ids=[a[0] for a in APPROX])
def test_approximate_instruction_within_the_isa_bound(both, name, fn, domain):
    rng = np.random.default_rng()
    x = random_bits(np.float32, N, rng)
    if domain == "positive":
        x = np.abs(x)
    x = x[np.isfinite(x)]
    n = len(x)
    gpu, emu = run_both(both, unary, ((n + 255) // 256,), 256,
                        lambda b: (b.put(np.zeros(n, np.float32)), b.put(x), fn), [0])
    g, e = gpu[0], emu[0]
    for who, got in (("gpu", g), ("emulator", e)):
        ok = _within_isa_bound(name, x, got)
        assert ok.all(), f"{who}: {name}({x[~ok][:3]}) = {got[~ok][:3]}"
    d = _ulps(g, e)
    print(f"emu-vs-gpu {name}.approx.f32: {n} inputs, both within the ISA bound; "
          f"{int((d > 0).sum())} differ, by at most {int(d.max()) if d.size else 0} ulp")


# -- memory -------------------------------------------------------------------------------------

@tylo.kernel
def gather(out, x, index):
    i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
    if i < index.shape[0]:
        out[i] = x[index[i]]


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.float16, BF16, np.int32, np.float32,
                                   np.int64, np.float64], ids=lambda d: np.dtype(d).name)
def test_gather(both, dtype):
    rng = np.random.default_rng()
    x = random_bits(dtype, 4096, rng)
    index = rng.integers(0, len(x), N).astype(np.int32)
    gpu, emu = run_both(both, gather, ((N + 255) // 256,), 256,
                        lambda b: (b.put(np.zeros(N, dtype)), b.put(x), b.put(index)), [0])
    assert report(f"ld/st.{np.dtype(dtype).name}", gpu[0], emu[0]) == 0
    assert (bits(emu[0]) == bits(x[index])).all()


@pytest.mark.parametrize("case", COPY_CASES, ids=str)
def test_ldmatrix_stmatrix(both, case):
    R, C = case.ownership.shape
    rng = np.random.default_rng()
    codes = rng.integers(-2**15, 2**15, (R, C)).astype(np.int16 if case.dtype.bits == 16 else np.int8)
    x = codes.view(case.dtype.numpy)
    N_, V = case.threads, case.ownership.values
    if case.op == "load":
        kernel, shapes = load_through_shared, [(N_, V), (N_, V)]
        inputs = [x]
    else:
        kernel, shapes = store_through_shared, [(R, C), (R, C)]
        inputs = [x, np.zeros((R, C), x.dtype)]
    gpu, emu = run_both(
        both, kernel, (1,), (N_,),
        lambda b: (*(b.put(np.zeros(s, x.dtype)) for s in shapes), *map(b.put, inputs),
                   case.ownership, case.layout), [0, 1])
    assert report(f"{case} (matrix)", gpu[0], emu[0]) + report(f"{case} (scalar)", gpu[1], emu[1]) == 0


# -- the docs' kernels, the GEMM example, tylo.print ---------------------------------------------

@pytest.fixture(scope="module")
def docs_kernels(tmp_path_factory):
    """The module of docs/kernel_language.md's python block that defines block_sum and
    transpose (run as test_docs_kernel_language.py runs it)."""
    import re

    text = (ROOT / "docs" / "kernel_language.md").read_text()
    block = next(b for b in re.findall(r"^```python\n(.*?)^```", text, re.M | re.S)
                 if "def block_sum" in b and "def transpose" in b)
    path = tmp_path_factory.mktemp("docs") / "emulator_docs_kernels.py"
    path.write_text("import tylo\nfrom tylo import *\n" + block)
    return SimpleNamespace(**runpy.run_path(str(path)))


def test_docs_block_reduction(both, docs_kernels):
    x = np.random.default_rng().standard_normal(64 * 256).astype(np.float32)
    gpu, emu = run_both(both, docs_kernels.block_sum, 64, 256,
                        lambda b: (b.put(np.zeros(64, np.float32)), b.put(x)), [0])
    assert report("docs block_sum (64 blocks)", gpu[0], emu[0]) == 0


def test_docs_transpose(both, docs_kernels):
    a = random_bits(np.float32, 128 * 96, np.random.default_rng())[: 128 * 96].reshape(128, 96)
    gpu, emu = run_both(both, docs_kernels.transpose, (4, 3), 256,
                        lambda b: (b.put(np.zeros((96, 128), np.float32)), b.put(a)), [0])
    assert report("docs transpose 128x96", gpu[0], emu[0]) == 0
    assert (bits(emu[0]) == bits(np.ascontiguousarray(a.T))).all()


GEMM = ampere_gemm


@pytest.mark.parametrize("cfg", GEMM.CONFIGS, ids=[f"config{i + 1}" for i in range(len(GEMM.CONFIGS))])
def test_gemm_example_256(both, cfg):
    """The mma.sync GEMM (tylo.ops.kernels.ampere_gemm) with `cfg` (a plain launch, no
    autotuning) at 256x256x256."""
    rng = np.random.default_rng()
    A = rng.standard_normal((256, 256)).astype(BF16)
    B = rng.standard_normal((256, 256)).astype(BF16)
    TM, TN, _ = cfg.plan.tile_shape
    gpu, emu = run_both(both, GEMM.gemm.kernel, (256 // TM, 256 // TN), cfg.plan.threads,
                        lambda b: (b.put(np.full((256, 256), np.nan, np.float32)), b.put(A),
                                   b.put(B), cfg.plan, cfg.bk, cfg.stages), [0])
    g, e = gpu[0], emu[0]
    differ, d = int((bits(g) != bits(e)).sum()), _ulps(g, e)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    err = [float(np.linalg.norm(v - ref) / np.linalg.norm(ref)) for v in (g, e)]
    print(f"emu-vs-gpu gemm 256^3 {GEMM.describe(cfg)}: {differ} of {g.size} elements differ "
          f"(max {int(d.max())} ulp); relative error vs float64: gpu {err[0]:.2e}, emulator "
          f"{err[1]:.2e}")
    assert differ == 0, f"{differ} elements differ, by at most {int(d.max())} ulp"


def test_print_text(both, tmp_path):
    """The lines tylo.print writes, the same values on both (test_print_gpu.py's kernel)."""
    values = print_cases.values(np.random.default_rng())
    got = [print_cases.printed(b, values, tmp_path) for b in both]
    same = got[0] == got[1]
    print(f"emu-vs-gpu tylo.print: {len(got[0])} lines from the GPU, {len(got[1])} from the "
          f"emulator, {'identical' if same else 'DIFFERENT'} text")
    assert same, sorted(set(got[0]) ^ set(got[1]))[:6]
