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
