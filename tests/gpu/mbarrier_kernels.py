"""Kernels of the mbarrier and Pipeline tests (tests/gpu/test_mbarrier_gpu.py)."""

import tylo
from tylo import Int32

CONSUMERS = 4


@tylo.kernel
def ring(out, src, iters, stages: tylo.constexpr):
    """Thread 0 produces `iters` tiles of CONSUMERS values (src[i, j]) through a ring of
    `stages` shared slots; threads 32..35 (another warp) consume them, each its own column,
    weighting tile i by i % 7 + 1; out[j] is consumer j's checksum."""
    t = tylo.thread_idx()
    pipe = tylo.Pipeline(stages, CONSUMERS)
    slots = tylo.SharedTile(tylo.shared_alloc(Int32, stages * CONSUMERS),
                            tylo.Layout((stages, CONSUMERS), (CONSUMERS, 1)))
    pipe.init()
    if t == 0:
        st = pipe.start()
        for i in range(iters):
            pipe.producer_acquire(st)
            for j in tylo.static_range(CONSUMERS):
                slots[st.index, j] = src[i, j]
            pipe.producer_commit(st, 0)
            st = st.advance()
    elif t >= 32 and t < 32 + CONSUMERS:
        st = pipe.start()
        acc = tylo.select(t == 32, 0, 0)
        for i in range(iters):
            pipe.consumer_wait(st)
            acc = acc + slots[st.index, t - 32] * (i % 7 + 1)
            pipe.consumer_release(st)
            st = st.advance()
        out[t - 32] = acc
