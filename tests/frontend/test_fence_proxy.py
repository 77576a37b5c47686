"""tylo.fence_proxy_async (frontend/language/mbarrier.py): its PTX line in place, and the refusal of
targets below sm_90."""

import numpy as np
import pytest

import tylo
from tylo import Float32
from tylo.compiler.support.errors import TyloError


@tylo.kernel
def fenced(out: tylo.Tensor):
    t = tylo.thread_idx()
    s = tylo.SharedTile(tylo.shared_alloc(Float32, 128), tylo.Layout((128,), (1,)))
    s[t] = 1.0
    tylo.fence_proxy_async()
    tylo.barrier()
    out[t] = s[127 - t]


def test_fence_is_between_the_store_and_the_barrier():
    ptx = fenced.compile(np.zeros(128, np.float32), block=128, arch="sm_90a").ptx
    lines = [x.strip() for x in ptx.splitlines() if not x.strip().startswith(".loc")]  # line info
    i = lines.index("fence.proxy.async.shared::cta;")
    assert lines[i + 1] == "bar.sync 0;"
    assert any(x.startswith("st.shared") for x in lines[:i])


def test_below_sm90_is_refused():
    with pytest.raises(TyloError, match="fence.proxy.async needs sm_90"):
        fenced.compile(np.zeros(128, np.float32), block=128, arch="sm_80")


@tylo.kernel
def fenced_global(out: tylo.Tensor, flag: tylo.Tensor):
    seen = tylo.atomic_add(flag, 0, 0, sem="acquire")
    tylo.fence_proxy_async("global")
    out[tylo.thread_idx()] = seen.to(Float32)


def test_the_global_fence_prints_its_line_and_runs_on_the_emulator():
    """fence_proxy_async("global") is fence.proxy.async.global (after an acquire: the order a
    thread needs before its own TMA reductions into rows another CTA's reductions wrote); on
    the emulator (one coherent global memory) it orders nothing more."""
    args = np.zeros(32, np.float32), np.full(1, 7, np.int32)
    ptx = fenced_global.compile(*args, block=32, arch="sm_90a").ptx
    lines = [x.strip() for x in ptx.splitlines()]
    i = lines.index("fence.proxy.async.global;")
    assert any(x.startswith("atom.acquire.gpu") for x in lines[:i])
    out, flag = args
    fenced_global.emulate[1, 32](out, flag)
    np.testing.assert_array_equal(out, 7.0)


def test_a_space_it_has_not_is_refused():
    @tylo.kernel
    def cluster_fence(out: tylo.Tensor):
        tylo.fence_proxy_async("cluster")

    with pytest.raises(tylo.UnsupportedError, match="'shared' or 'global'"):
        cluster_fence.compile(np.zeros(1, np.float32), block=32, arch="sm_90a")
