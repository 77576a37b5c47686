"""mma_async on a pending accumulator (frontend/language/wgmma.py): a chain of groups over one
accumulator with no wgmma.wait_group and no wgmma.fence between them, the accumulator updated
in place through the chain, ptxas (sm_90a) serializing nothing; and the refusals of every other
use of a pending accumulator at the user's line. Values (emulator and GPU):
tests/gpu/test_wgmma_gpu.py::test_chain_on_a_pending_accumulator; the lit case:
lit_tests/frontend/wgmma_chain.py."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tylo
from tylo import BFloat16, Float16
from tylo.compiler.support.errors import TyloError
from tylo.compiler.plans.tma_tile import TMATile, shared_layout

LA = shared_layout(TMATile(BFloat16, (64, 64), 1, 128))
LB = shared_layout(TMATile(BFloat16, (64, 64), 0, 128))


def _operands(plan):
    sa = tylo.SharedTile(tylo.shared_alloc(BFloat16, 4096, align=1024), LA)
    sb = tylo.SharedTile(tylo.shared_alloc(BFloat16, 4096, align=1024), LB)
    return tylo.wgmma_operand(plan, "A", sa), tylo.wgmma_operand(plan, "B", sb)


def _chain_kernel(ks):
    """out (64, 64) = the sum of len(ks) products of k each, chained on one accumulator."""
    plans = [tylo.WGMMA64(BFloat16, 64, k) for k in ks]

    @tylo.kernel
    def chained(out: tylo.Tensor):
        t = tylo.thread_idx()
        acc = tylo.zero_accumulator(plans[0])
        for plan in plans:
            a, b = _operands(plan)
            acc = tylo.mma_async(plan, a, b, acc)
        acc = tylo.wait_mma(acc)
        tylo.store(tylo.window(out, (0, 0), (64, 64)), tylo.finish_mma(acc), t)

    return chained


def _compile(kernel):
    return kernel.compile(np.zeros((64, 64), np.float32), block=128, arch="sm_90a")


def _wgmma_lines(ptx: str) -> list[str]:
    return [line.strip() for line in ptx.splitlines() if line.strip().startswith("wgmma.")]


@pytest.mark.parametrize("ks", [(64, 64), (64, 32, 16)])
def test_chain_ptx_has_no_wait_or_fence_between_groups(ks):
    ptx = _compile(_chain_kernel(ks)).ptx
    kinds = [line.split()[0] for line in _wgmma_lines(ptx)]
    want = ["wgmma.fence.sync.aligned;"]
    for k in ks:
        want += ["wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"] * (k // 16)
        want += ["wgmma.commit_group.sync.aligned;"]
    want += ["wgmma.wait_group.sync.aligned"]
    assert kinds == want
    mma = [x for x in _wgmma_lines(ptx) if x.startswith("wgmma.mma_async")]
    regs = {re.search(r"\{([^}]*)\}", x).group(1) for x in mma}
    assert len(regs) == 1  # one register list through the chain: updated in place, no copies
    assert mma[0].endswith(", 0, 1, 1, 0, 0;")  # the zero accumulator is not read
    assert all(x.endswith(", 1, 1, 1, 0, 0;") for x in mma[1:])


def test_ptxas_serializes_nothing():
    """ptxas's C7520 ("wgmma.mma_async instructions are serialized due to ...") would mean the
    chain costs a wait per instruction; the -v log of the chained kernel has none."""
    pytest.importorskip("tylo.runtime.ptxas")
    from tylo.runtime.ptxas import assemble

    compiled = _compile(_chain_kernel((64, 64)))
    log = assemble(compiled.ptx, compiled.arch, compiled.name).log
    assert "C7520" not in log and "serialized" not in log
    assert compiled.sass_counts()["HGMMA"] == 8


def _refusal(kernel) -> str:
    with pytest.raises(TyloError) as e:
        _compile(kernel)
    return str(e.value)


def _bad(second):
    """A chain's second step done by `second(plan, a, b, pending)`, then a wait."""
    plan = tylo.WGMMA64(BFloat16, 64, 64)

    @tylo.kernel
    def bad(out: tylo.Tensor):
        a, b = _operands(plan)
        pending = tylo.mma_async(plan, a, b, tylo.zero_accumulator(plan))
        tylo.wait_mma(second(plan, a, b, pending))

    return bad


def _other_plan(**kw):
    args = dict(dtype=BFloat16, n=64, k=64, partials=1)
    args.update(kw)
    plan = tylo.WGMMA64(args["dtype"], args["n"], args["k"], args["partials"])

    def second(_, a, b, pending):
        sa = tylo.SharedTile(tylo.shared_alloc(plan.dtype, 64 * plan.k, align=1024),
                             shared_layout(TMATile(plan.dtype, (64, plan.k), 1, 2 * plan.k)))
        sb = tylo.SharedTile(tylo.shared_alloc(plan.dtype, plan.k * plan.n, align=1024),
                             shared_layout(TMATile(plan.dtype, (plan.k, plan.n), 0, 2 * plan.k)))
        return tylo.mma_async(plan, tylo.wgmma_operand(plan, "A", sa),
                              tylo.wgmma_operand(plan, "B", sb), pending)
    return second


@pytest.mark.parametrize("second", [_other_plan(n=32), _other_plan(partials=2),
                                    _other_plan(dtype=Float16)], ids=["n", "partials", "dtype"])
def test_another_shape_is_refused(second):
    msg = _refusal(_bad(second))
    assert "only a plan of the same instructions on the same registers" in msg
    assert "test_wgmma_chain.py" in msg and "wait_mma it first" in msg


def test_accumulate_on_a_pending_accumulator_is_refused():
    flag = lambda: tylo.thread_idx() >= 0  # noqa: E731 - a runtime Bool
    msg = _refusal(_bad(lambda plan, a, b, p: tylo.mma_async(plan, a, b, p, accumulate=flag())))
    assert "accumulate= with a pending accumulator" in msg


def test_a_spent_pending_accumulator_is_refused():
    """Chaining twice on one pending value, waiting for the middle of a chain, chaining on a
    value already waited for: each refused at its line."""
    def twice(plan, a, b, p):
        tylo.mma_async(plan, a, b, p)
        return tylo.mma_async(plan, a, b, p)

    assert "a later mma_async already took it" in _refusal(_bad(twice))

    def middle(plan, a, b, p):
        last = tylo.mma_async(plan, a, b, p)
        tylo.wait_mma(p)
        return last

    msg = _refusal(_bad(middle))
    assert "wait for the last result of the chain" in msg and "tylo.wait_mma(p)" in msg

    def after_wait(plan, a, b, p):
        tylo.wait_mma(p)
        return tylo.mma_async(plan, a, b, p)

    assert "wait_mma already returned it" in _refusal(_bad(after_wait))
