"""WGMMA in kernels (frontend/language/wgmma.py): the PTX of mma_async for the plan shapes and swizzle
modes (assembled by ptxas for sm_90a), descriptor stepping, the in-place accumulator, and the
refusals at the user's line. GPU runs: tests/gpu (the lead's)."""

import re

import numpy as np
import pytest

import tylo
from tylo import BFloat16
from tylo.compiler.support.errors import TyloError
from tylo.compiler.plans.tma_tile import TMATile, shared_layout


def _kernel(n, k, swizzle=128, partials=1, b_layout=None):
    plan = tylo.WGMMA64(BFloat16, n, k, partials)
    la = shared_layout(TMATile(BFloat16, (64, k), 1, swizzle))
    lb = b_layout or shared_layout(TMATile(BFloat16, (k, n), 0, swizzle))

    @tylo.kernel
    def gemm(out: tylo.Tensor):
        t = tylo.thread_idx()
        sa = tylo.SharedTile(tylo.shared_alloc(BFloat16, 64 * k, align=1024), la)
        sb = tylo.SharedTile(tylo.shared_alloc(BFloat16, n * k, align=1024), lb)
        acc = tylo.zero_accumulator(plan)
        a = tylo.wgmma_operand(plan, "A", sa)
        b = tylo.wgmma_operand(plan, "B", sb)
        acc = tylo.wait_mma(tylo.mma_async(plan, a, b, acc))
        tylo.store(tylo.window(out, (0, 0), (64, n)), tylo.finish_mma(acc), t)

    return gemm


def _compile(n, k, swizzle=128, partials=1):
    return _kernel(n, k, swizzle, partials).compile(np.zeros((64, n), np.float32), block=128,
                                                      arch="sm_90a")


def _mma_lines(ptx):
    return [line.strip() for line in ptx.splitlines() if "wgmma.mma_async" in line]


@pytest.mark.parametrize("n", [8, 24, 64, 128, 256])
@pytest.mark.parametrize("k,swizzle", [(16, 32), (32, 64), (64, 128)])
def test_mma_async_ptx(n, k, swizzle):
    ptx = _compile(n, k, swizzle).ptx
    lines = _mma_lines(ptx)
    assert len(lines) == k // 16
    regs = re.search(r"\{([^}]*)\}", lines[0]).group(1).split(", ")
    assert len(regs) == n // 2 and len(set(regs)) == n // 2
    # one accumulator register list for every instruction: updated in place, no copies between
    assert all(re.search(r"\{([^}]*)\}", x).group(1) == ", ".join(regs) for x in lines)
    assert lines[0].endswith(", 0, 1, 1, 0, 0;")  # scale-d 0: the zero accumulator is not read
    assert all(x.endswith(", 1, 1, 1, 0, 0;") for x in lines[1:])
    assert ptx.count("wgmma.fence.sync.aligned;") == 1
    assert ptx.count("wgmma.commit_group.sync.aligned;") == 1
    assert ptx.count("wgmma.wait_group.sync.aligned 0;") == 1


def test_every_n_assembles():
    """Every n = 8..256 step 8 with k = 16, and n = 256 with k = 32: ptxas (sm_90a) assembles
    the kernel (compile runs ptxas) and the SASS has one HGMMA per instruction, no spills."""
    pytest.importorskip("tylo.runtime.ptxas")
    for n in range(8, 257, 8):
        assert len(_mma_lines(_compile(n, 16, 32).ptx)) == 1
    c = _compile(256, 64, 128)
    counts = c.sass_counts()
    assert counts.opcodes["HGMMA"] == 4
    assert counts.spill_store_bytes == 0 and counts.spill_load_bytes == 0


def test_partials_sum():
    ptx = _compile(8, 64, 128, partials=4).ptx
    lines = _mma_lines(ptx)
    groups = [re.search(r"\{([^}]*)\}", x).group(1) for x in lines]
    assert len(set(groups)) == 4  # four independent accumulators
    assert all(x.endswith(", 0, 1, 1, 0, 0;") for x in lines)  # each partial starts at zero
    assert ptx.count("add.rn.f32") + ptx.count("add.f32") >= 3 * 4


def test_descriptor_steps_along_k():
    """K-major 128B-swizzled: the start address advances 32 bytes (2 in the encoded field) per
    K = 16 instruction, for A and B alike."""
    ptx = _compile(64, 64, 128).ptx
    steps = [int(x) for x in re.findall(r"mov\.b64 %rd\d+, (\d+);", ptx) if int(x) < 1 << 14]
    assert steps == [2, 4, 6]  # shared by A and B (one constant each, after CSE)
    assert len(re.findall(r"add\.s64 %rd\d+, %rd\d+, %rd\d+;", ptx)) >= 6


def _refusal(kernel_fn):
    with pytest.raises(TyloError) as e:
        kernel_fn.compile(np.zeros((64, 64), np.float32), block=128, arch="sm_90a")
    return str(e.value)


def test_pending_read_is_refused():
    plan = tylo.WGMMA64(BFloat16, 64, 64)
    la = shared_layout(TMATile(BFloat16, (64, 64), 1, 128))
    lb = shared_layout(TMATile(BFloat16, (64, 64), 0, 128))

    @tylo.kernel
    def bad(out: tylo.Tensor):
        sa = tylo.SharedTile(tylo.shared_alloc(BFloat16, 4096, align=1024), la)
        sb = tylo.SharedTile(tylo.shared_alloc(BFloat16, 4096, align=1024), lb)
        p = tylo.mma_async(plan, tylo.wgmma_operand(plan, "A", sa),
                           tylo.wgmma_operand(plan, "B", sb), tylo.zero_accumulator(plan))
        q = p * 2.0  # noqa: F841

    msg = _refusal(bad)
    assert "test_wgmma.py" in msg and "p * 2.0" in msg and "wait_mma" in msg


def test_wrong_role_and_origin_and_layout_are_refused():
    plan = tylo.WGMMA64(BFloat16, 64, 64)
    la = shared_layout(TMATile(BFloat16, (64, 64), 1, 128))

    @tylo.kernel
    def role(out: tylo.Tensor):
        sa = tylo.SharedTile(tylo.shared_alloc(BFloat16, 4096, align=1024), la)
        tylo.wgmma_operand(plan, "C", sa)

    assert "role 'C' must be 'A' or 'B'" in _refusal(role)

    @tylo.kernel
    def origin(out: tylo.Tensor):
        sa = tylo.SharedTile(tylo.shared_alloc(BFloat16, 8192, align=1024),
                             shared_layout(TMATile(BFloat16, (128, 64), 1, 128)))
        tylo.wgmma_operand(plan, "A", sa, (4, 0))

    assert "must be a non-negative multiple of 8" in _refusal(origin)

    @tylo.kernel
    def layout(out: tylo.Tensor):
        sa = tylo.SharedTile(tylo.shared_alloc(BFloat16, 4096, align=1024),
                             tylo.Layout((64, 64), (64, 1)))
        tylo.wgmma_operand(plan, "A", sa)

    msg = _refusal(layout)
    assert "not a canonical swizzled encoding" in msg and "wgmma_operand" in msg


def _consumed_kernel(use):
    plan = tylo.WGMMA64(BFloat16, 64, 64)
    la = shared_layout(TMATile(BFloat16, (64, 64), 1, 128))
    lb = shared_layout(TMATile(BFloat16, (64, 64), 0, 128))

    @tylo.kernel
    def bad(out: tylo.Tensor):
        t = tylo.thread_idx()
        sa = tylo.SharedTile(tylo.shared_alloc(BFloat16, 4096, align=1024), la)
        sb = tylo.SharedTile(tylo.shared_alloc(BFloat16, 4096, align=1024), lb)
        a, b = tylo.wgmma_operand(plan, "A", sa), tylo.wgmma_operand(plan, "B", sb)
        acc = tylo.zero_accumulator(plan)
        pending = tylo.mma_async(plan, a, b, acc)
        use(plan, a, b, acc, out, t)
        tylo.wait_mma(pending)

    return bad


@pytest.mark.parametrize("use,line", [
    (lambda plan, a, b, acc, out, t: acc[0], "acc[0]"),
    (lambda plan, a, b, acc, out, t: acc + 1.0, "acc + 1.0"),
    (lambda plan, a, b, acc, out, t: tylo.store(tylo.window(out, (0, 0), (64, 64)), acc, t),
     "tylo.store"),
    (lambda plan, a, b, acc, out, t: tylo.mma_async(plan, a, b, acc), "tylo.mma_async(plan, a, b, acc)"),
], ids=["slot", "arithmetic", "store", "second-mma"])
def test_accumulator_passed_to_mma_async_is_refused(use, line):
    """Reading the accumulator given to mma_async before its wait is refused at the user's line
    (the registers belong to the pending WGMMA), not silently copied."""
    msg = _refusal(_consumed_kernel(use))
    assert "test_wgmma.py" in msg and line in msg
    assert "passed to tylo.mma_async" in msg and "wait_mma" in msg


def _k_loop(plan, finish):
    """A kernel of a runtime K loop of mma_async/wait_mma over shared A and B, storing
    ``finish(acc)`` (64, plan.n) into `out`."""
    la = shared_layout(TMATile(BFloat16, (64, 64), 1, 128))
    lb = shared_layout(TMATile(BFloat16, (64, plan.n), 0, 128))

    @tylo.kernel
    def kloop(out: tylo.Tensor, steps: int):
        t = tylo.thread_idx()
        sa = tylo.SharedTile(tylo.shared_alloc(BFloat16, 64 * 64, align=1024), la)
        sb = tylo.SharedTile(tylo.shared_alloc(BFloat16, 64 * plan.n, align=1024), lb)
        a, b = tylo.wgmma_operand(plan, "A", sa), tylo.wgmma_operand(plan, "B", sb)
        acc = tylo.zero_accumulator(plan)
        for _ in range(steps):
            acc = tylo.wait_mma(tylo.mma_async(plan, a, b, acc))
        tylo.store(tylo.window(out, (0, 0), (64, plan.n)), finish(acc), t)

    return kloop


def test_k_loop_keeps_the_accumulator_in_place():
    """A runtime K loop of mma_async/wait_mma at n = 256 (128 f32 registers a thread): the loop
    body's PTX moves no accumulator register (the back edge's copies are identities, dropped),
    and ptxas (sm_90a) keeps it without spills and with a handful of MOVs (5 MOV, 19 UMOV
    with ptxas 13.0)."""
    pytest.importorskip("tylo.runtime.ptxas")
    plan = tylo.WGMMA64(BFloat16, 256, 64)
    kloop = _k_loop(plan, lambda acc: tylo.finish_mma(acc, plan))
    c = kloop.compile(np.zeros((64, 256), np.float32), 4, block=128, arch="sm_90a")
    lines = [x.strip() for x in c.ptx.splitlines()]
    first = next(i for i, x in enumerate(lines) if x.startswith("wgmma.mma_async"))
    back = next(i for i in range(first, len(lines)) if lines[i].startswith("bra.uni"))
    body = lines[first:back]
    # one wgmma.fence, before the loop (tylo-insert-async-fences: the registers are only
    # touched by wgmma inside it)
    fences = [i for i, x in enumerate(lines) if x.startswith("wgmma.fence")]
    assert len(fences) == 1 and fences[0] < first
    assert sum(x.startswith("wgmma.mma_async") for x in body) == 4
    assert not [x for x in body if x.startswith("mov.f32")]
    counts = c.sass_counts()
    assert counts.spill_store_bytes == 0 and counts.spill_load_bytes == 0
    assert counts.opcodes["MOV"] <= 16, counts.opcodes  # a copied accumulator would be >= 128


def _register_a_kernel(own):
    plan = tylo.WGMMA64(BFloat16, 64, 32)
    lb = shared_layout(TMATile(BFloat16, (32, 64), 0, 64))

    @tylo.kernel
    def rega(out: tylo.Tensor, A: tylo.Tensor):
        t = tylo.thread_idx()
        sb = tylo.SharedTile(tylo.shared_alloc(BFloat16, 64 * 32, align=1024), lb)
        fa = tylo.load_fragment(own(plan), tylo.window(A, (0, 0), own(plan).shape), t)
        a = tylo.wgmma_operand(plan, "A", fa)
        acc = tylo.wait_mma(tylo.mma_async(plan, a, tylo.wgmma_operand(plan, "B", sb),
                                           tylo.zero_accumulator(plan)))
        tylo.store(tylo.window(out, (0, 0), (64, 64)), tylo.finish_mma(acc), t)

    return rega


def test_register_a_packs_before_the_fence():
    """Register A: each K = 16 slice packed into four .b32 registers before wgmma.fence (the A
    registers' writes must precede it), one register list per instruction, the accumulator in
    place across both instructions."""
    from tylo.frontend.language.wgmma import register_a_ownership

    c = _register_a_kernel(register_a_ownership).compile(
        np.zeros((64, 64), np.float32), np.zeros((64, 32), BFloat16.numpy), block=128, arch="sm_90a")
    lines = [x.strip() for x in c.ptx.splitlines()]
    fence = lines.index("wgmma.fence.sync.aligned;")
    packs = [i for i, x in enumerate(lines) if re.match(r"mov\.b32 %r\d+, \{%rs\d+, %rs\d+\};", x)]
    assert len(packs) == 8 and max(packs) < fence
    mma = _mma_lines(c.ptx)
    assert len(mma) == 2
    a_regs = [re.findall(r"\{([^}]*)\}", x)[1] for x in mma]
    assert len(set(a_regs)) == 2 and all(len(r.split(", ")) == 4 for r in a_regs)
    assert re.findall(r"\{([^}]*)\}", mma[0])[0] == re.findall(r"\{([^}]*)\}", mma[1])[0]


def test_register_a_with_another_ownership_is_refused():
    plan = tylo.WGMMA64(BFloat16, 64, 32)  # noqa: F841
    wrong = tylo.TiledMMA(tylo.MMAAtom((16, 8, 16), BFloat16, tylo.Float32), warps=(4, 1),
                          repeat=(1, 1), k=32)
    with pytest.raises(TyloError) as e:
        _register_a_kernel(lambda p: wrong.operand_layout("A")).compile(
            np.zeros((64, 64), np.float32), np.zeros((64, 32), BFloat16.numpy), block=128,
            arch="sm_90a")
    assert "WGMMA A ownership" in str(e.value) and "test_wgmma.py" in str(e.value)


def test_finish_mma_knows_the_plan_of_a_loop_carried_accumulator():
    """An accumulator with partials carried by a runtime loop is still wait_mma's value for
    finish_mma: no plan= needed, the partials are summed into the (64, n) "C" fragment (the
    loop's new value used to be taken for a plain 64 x 2n accumulator)."""
    shapes = []

    def finish(acc):
        c = tylo.finish_mma(acc)
        shapes.append(c.ownership.shape)
        return c

    kloop = _k_loop(tylo.WGMMA64(BFloat16, 64, 64, partials=2), finish)
    kloop.compile(np.zeros((64, 64), np.float32), 4, block=128, arch="sm_90a")
    assert shapes == [(64, 64)]
