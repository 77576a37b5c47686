"""wgmma emulation (emulator/semantics/wgmma.py) on hand-built kernels (tests/gpu/wgmma_kernels.py):
exact small-integer products through every swizzle mode and majorness, register A, scale-d,
imm-scale, chained instructions, two warpgroups; the ordering and warpgroup refusals."""

import sys
from dataclasses import replace
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "gpu"))
from wgmma_kernels import Case, run_emulated, shared_operands, wgmma_text  # noqa: E402

from tylo.compiler.support.errors import EmulationError  # noqa: E402
from tylo.emulator.async_reads import refuse_overwrite  # noqa: E402
from tylo.emulator.semantics.wgmma_operands import fragment_coordinates  # noqa: E402

RNG = np.random.default_rng()


def _raw(x, t="bf16"):
    return x.astype(ml_dtypes.bfloat16 if t == "bf16" else np.float16).view(np.uint16)


def _run(c: Case, A, B, C=None, row_a=128, row_b=128):
    t = c.types.split(".")[1]
    img, ad, bd = shared_operands(_raw(A, t), _raw(B, t), row_a, row_b, c.tnsp_a, c.tnsp_b,
                                  128 * c.warpgroups)
    rows, cols = fragment_coordinates(c.n // 2)
    acc = np.zeros((128 * c.warpgroups, c.n // 2), np.float32)
    if C is not None:
        acc[:] = np.tile(C[rows, cols], (c.warpgroups, 1))
    a_regs = np.zeros((128 * c.warpgroups, 4), np.uint32)
    ar, ac = fragment_coordinates(8)
    halves = _raw(A, t)[ar, ac].astype(np.uint32).reshape(128, 4, 2)
    a_regs[:] = np.tile(halves[..., 0] | (halves[..., 1] << 16), (c.warpgroups, 1))
    out = run_emulated(c, img, acc.view(np.uint32), a_regs, ad, bd).view(np.float32)
    D = np.zeros((c.warpgroups, 64, c.n), np.float32)
    for q in range(c.warpgroups):
        D[q][rows, cols] = out[128 * q: 128 * (q + 1)]
    return D


def _ints(shape, lo=-8, hi=9):
    return RNG.integers(lo, hi, shape).astype(np.float32)


@pytest.mark.parametrize("row", [16, 32, 64, 128])
@pytest.mark.parametrize("tnsp_a,tnsp_b", [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_permutation_products_are_exact(row, tnsp_a, tnsp_b):
    n = 24
    A = _ints((64, 16))
    P = np.eye(16, n, dtype=np.float32)[RNG.permutation(16)]  # a permutation of A's columns
    D = _run(Case(n=n, tnsp_a=tnsp_a, tnsp_b=tnsp_b), A, P, row_a=row, row_b=row)
    np.testing.assert_array_equal(D[0], A @ P)


@pytest.mark.parametrize("n", [8, 64, 256])
@pytest.mark.parametrize("types", ["f32.bf16.bf16", "f32.f16.f16"])
def test_integer_products_with_accumulator(n, types):
    A, B, C = _ints((64, 16)), _ints((16, n)), _ints((64, n), -1000, 1000)
    D = _run(Case(n=n, types=types), A, B, C, row_a=64, row_b=32)
    np.testing.assert_array_equal(D[0], A @ B + C)


def test_register_a_scales_and_chains():
    A, B, C = _ints((64, 16)), _ints((16, 16)), _ints((64, 16))
    D = _run(Case(n=16, register_a=True, tnsp_b=1), A, B, C)
    np.testing.assert_array_equal(D[0], A @ B + C)
    D = _run(Case(n=16, scale_d=0, scale_a=-1, chain=1), A, B, C)
    np.testing.assert_array_equal(D[0], -(A @ B))  # scale-d 0: C is not read
    D = _run(Case(n=16, chain=3, scale_b=-1), A, B, C)
    np.testing.assert_array_equal(D[0], C - 3 * (A @ B))


def test_two_warpgroups_each_compute_their_own():
    A, B, C = _ints((64, 16)), _ints((16, 8)), _ints((64, 8))
    D = _run(Case(n=8, warpgroups=2), A, B, C, row_a=16, row_b=16)
    np.testing.assert_array_equal(D[0], A @ B + C)
    np.testing.assert_array_equal(D[1], A @ B + C)


def test_accumulator_read_before_the_wait_is_refused():
    A, B = _ints((64, 16)), _ints((16, 8))
    with pytest.raises(EmulationError, match="accumulator read before wait_mma") as e:
        _run(Case(n=8, read_before_wait=True), A, B)
    assert e.value.kind == "async" and len(e.value.threads) == 128


def test_shared_stage_overwritten_while_pending_is_refused():
    A, B = _ints((64, 16)), _ints((16, 8))
    with pytest.raises(EmulationError, match="shared stage overwritten while a WGMMA reading it "
                                             "may be pending") as e:
        _run(Case(n=8, store_before_wait=True), A, B)
    assert e.value.kind == "race" and "shared array 'image' byte 0" in e.value.message


def test_operands_stored_without_a_proxy_fence_are_refused():
    """The generic stores of the image reach the WGMMA (async proxy) only after the writers'
    fence.proxy.async: without it the read is a race, as for a TMA store's source."""
    A, B = _ints((64, 16)), _ints((16, 8))
    with pytest.raises(EmulationError, match="a WGMMA reads it through the async proxy") as e:
        _run(Case(n=8, proxy_fence=False), A, B)
    assert e.value.kind == "race"


def test_a_warpgroup_with_a_warp_elsewhere_is_refused(monkeypatch):
    import wgmma_kernels

    def split(c):  # warp 3 leaves before the wgmma.fence
        text = wgmma_text(c).replace("  ptx.wgmma_fence", """
  %lim = ptx.const "b32"(96) : !ptx.reg<r30>
  %hi = ptx.setp "ge" "u32" %t, %lim : (!ptx.reg<r2>, !ptx.reg<r30>) -> !ptx.reg<p9>
  ptx.cond_bra %hi : !ptx.reg<p9>, ^out, ^go
^out:
  ptx.ret
^go:
  ptx.label "GO"
  ptx.wgmma_fence""")
        from xdsl.parser import Parser

        from tylo.passes.universe import make_context
        return Parser(make_context(), text).parse_module()

    monkeypatch.setattr(wgmma_kernels, "wgmma_module", split)
    with pytest.raises(EmulationError) as e:
        _run(Case(n=8), _ints((64, 16)), _ints((16, 8)))
    msg = e.value.message
    assert e.value.kind == "divergence" and "warpgroup-collective" in msg
    assert "warps 0-2 reached it, warps 3 are elsewhere" in msg.replace("warps 3 ", "warps 3 ")


def test_a_cta_that_is_not_whole_warpgroups_is_refused():
    c = replace(Case(n=8), warpgroups=1)
    import wgmma_kernels
    text = wgmma_text(c).replace("reqntid [128, 1, 1]", "reqntid [64, 1, 1]")
    from xdsl.parser import Parser

    from tylo.emulator.memory import Memory
    from tylo.emulator.scheduler import run_entry
    from tylo.passes.universe import make_context
    module = Parser(make_context(), text).parse_module()
    mem = Memory()
    base = mem.allocate("argument 'x'", np.zeros(64 * 64, np.uint32))
    import struct
    with pytest.raises(EmulationError, match="in a CTA of 64 threads: warpgroup 0 has only 64"):
        run_entry(module, "k", (1, 1, 1), (64, 1, 1), struct.pack("<6Q", *[base] * 4, 0, 0), mem)
    assert wgmma_kernels


def test_refuse_overwrite_for_async_copies():
    """The function H2's TMA load calls: a write into a pending WGMMA read is refused."""
    from tylo.emulator.async_reads import PendingReads

    class FakeMachine:
        def __init__(self):
            self.async_reads = PendingReads()

        def _place(self, space, at):
            return f"shared byte {at}"

        def error(self, op, message, threads, kind, detail=""):
            raise EmulationError(message, kind=kind)

        def access_detail(self, op, what):
            return ""

    from tylo.dialects.ptx.wgmma import WgmmaCommitGroupOp, WgmmaFenceOp

    m, tma, wgmma = FakeMachine(), WgmmaFenceOp(), WgmmaCommitGroupOp()
    refuse_overwrite(m, [(0, 1024)], tma, [0])  # nothing pending: fine
    m.async_reads.add("g", np.arange(256, 512, 2), 2, wgmma, np.arange(128), "a WGMMA")
    refuse_overwrite(m, [(0, 256), (512, 64)], tma, [0])  # beside it: fine
    with pytest.raises(EmulationError, match="a TMA load writes shared byte 500, which"):
        refuse_overwrite(m, [(500, 16)], tma, [0], writer="a TMA load")
    m.async_reads.release(["g"])
    refuse_overwrite(m, [(500, 16)], tma, [0])
