"""The fused gate/up GEMM on Hopper at prefill sizes: out (M, R) bf16 = silu(x W_gate^T) *
(x W_up^T), x (M, K) bf16, W_gate and W_up (R, K) bf16 (two nn.Linear weights, two tensor maps),
f32 accumulation; the Llama MLP's first half in one kernel, g and u never written to memory.

It is the bf16 GEMM of gemm.py (128 x 256 x 64 tiles; one producer warpgroup, two consumer
warpgroups of 64 rows, each with two 64 x 128 accumulators; persistent, `common.tile_origin`'s
order) with a B tile made of two halves from two tensors: for the tile at output columns
[n0, n0 + 128), the producer loads half 0 of the (64, 256) B stage from W_gate rows [n0, n0 +
128) and half 1 from W_up's same rows (each half a `gemm.B_HALF` box, the second half one swizzle
period on, as gemm_cluster's multicast halves). A consumer's acc0 is then its 64 x 128 block of
g = x W_gate^T and acc1 the same block of u = x W_up^T (`gemm.consume_k_steps`, the K loop
unchanged), and the epilogue writes silu(acc0) * acc1 (f32, `tylo.silu`, rounded once to bf16)
as one 64 x 128 half into its staging tile, TMA-stored as two 64 x 64 boxes. So a CTA computes
128 x 256 products per K step as gemm does, and writes 128 x 128 outputs.

K tails and W rows past R are zero-filled by TMA (silu(0) * 0 = 0, and those columns are
clipped by the TMA store, as are rows past M). K must be a multiple of 8 and R of 8 (TMA row
strides are 16-byte multiples). The decode sizes (M <= 64) are projection.py's (swap AB,
Stream-K); `tylo.ops.gate_up` routes between them.
"""

from __future__ import annotations

import tylo
from tylo import BFloat16, SharedTile

from .common import C_TILE, persistent_grid, sm_count, start, store_half, tile_origin
from .gemm import (A_TILE, B_HALF, B_HALF_ELEMENTS, B_TILE, BK, BM, HALF, PLAN, STAGE_BYTES,
                   STAGES, THREADS, consume_k_steps)
from .projection import reference, shapes

__all__ = ["GateUp", "gate_up", "reference"]


@tylo.kernel
def gate_up(a_map, gate_map, up_map, c_map, M, R, K):
    """out = silu(x W_gate^T) * (x W_up^T) over persistent 128 x 128 output tiles (module
    docstring). a_map: A_TILE bound to x (M, K); gate_map, up_map: B_HALF bound to W_gate.T
    and W_up.T (the (K, R) views of the (R, K) weights); c_map: C_TILE bound to out (M, R). THREADS threads."""
    wg, t, a_stages, b_stages, c_halves, pipe, tiles_m, tiles_n, k_steps = start(
        A_TILE, B_TILE, STAGES, BM, HALF, BK, M, R, K)
    tiles = tiles_m * tiles_n
    st = pipe.start()
    if wg == 0:
        tylo.setmaxnreg(72, "dec")
        if t == 0:
            produce(pipe, st, a_stages, b_stages, a_map, gate_map, up_map, tiles, tiles_m,
                    tiles_n, k_steps)
    else:
        tylo.setmaxnreg(216, "inc")
        q = wg - 1
        for tile in range(tylo.block_idx(), tiles, tylo.grid_dim()):
            m0, n0 = tile_origin(tile, tiles_m, tiles_n, BM, HALF)
            st, g, u = consume_k_steps(pipe, st, a_stages, b_stages, q, t, k_steps)
            h = tylo.silu(tylo.finish_mma(g, PLAN)) * tylo.finish_mma(u, PLAN)
            store_half(c_halves, c_map, q, t, h.to(BFloat16), m0, n0)
        if t == 0:
            tylo.wait_tma_stores(0)


@tylo.func
def produce(pipe, st, a_stages, b_stages, a_map, gate_map, up_map, tiles, tiles_m, tiles_n,
            k_steps):
    """The producer thread's loop: per persistent tile (128 rows of x, 128 rows of each W) and
    K step, acquire the next stage, expect its STAGE_BYTES, TMA-load x's tile and the two
    halves of the B tile (W_gate's rows, then W_up's)."""
    for tile in range(tylo.block_idx(), tiles, tylo.grid_dim()):
        m0, n0 = tile_origin(tile, tiles_m, tiles_n, BM, HALF)
        for k in range(k_steps):
            pipe.producer_acquire(st)
            pipe.producer_commit(st, STAGE_BYTES)
            bar = pipe.full_barrier(st)
            tylo.tma_load(a_stages[st.index], a_map, (m0, k * BK), bar)
            for half, w_map in ((0, gate_map), (1, up_map)):
                dst = SharedTile(b_stages.pointer(st.index) + half * B_HALF_ELEMENTS,
                                 tylo.shared_layout(B_HALF))
                tylo.tma_load(dst, w_map, (k * BK, n0), bar)
            st = st.advance()


def bindings(x, W_gate, W_up, out):
    """The four TMA bindings, in `gate_up`'s order: x (M, K), W_gate and W_up (R, K) (each bound
    as its (K, R) view W.T, the B_HALF plan's axis order: K contiguous), out (M, R)."""
    return (tylo.prepare_tma(A_TILE, x), tylo.prepare_tma(B_HALF, W_gate.T),
            tylo.prepare_tma(B_HALF, W_up.T), tylo.prepare_tma(C_TILE, out))


class GateUp:
    """out = silu(x W_gate^T) * (x W_up^T) for one set of arrays: x (M, K), W_gate and W_up
    (R, K), out (M, R), bf16 with K-contiguous rows (torch CUDA tensors, or numpy / CPU arrays
    with ``emulate=True``, the CPU emulator). Makes the four TMA bindings once (keep the
    object alive while the kernel may run: it owns the descriptors). `ctas`: the persistent
    grid (default one CTA per SM; on the emulator one CTA walking every tile). Raises
    tylo.ArgumentError naming W_gate, W_up or out for a shape that does not match x's, a
    TMAError for strides TMA cannot take."""

    def __init__(self, x, W_gate, W_up, out, ctas: int | None = None, emulate: bool = False):
        M, R, K = shapes(x, W_gate, W_up, out, 1)
        if ctas is None:
            ctas = 1 if emulate else sm_count()
        self.M, self.R, self.K = M, R, K
        self.maps = bindings(x, W_gate, W_up, out)
        self.grid = persistent_grid(-(-M // BM) * -(-R // HALF), ctas)
        self.launch = (gate_up.emulate if emulate else gate_up)[self.grid, THREADS]

    def __call__(self):
        self.launch(*self.maps, self.M, self.R, self.K)


def compile_for_sm90a():
    """The kernel compiled for sm_90a from host bindings (numpy arrays; no GPU)."""
    import ml_dtypes
    import numpy as np

    x, Wg, Wu = (np.zeros(s, ml_dtypes.bfloat16) for s in ((256, 128), (256, 128), (256, 128)))
    out = np.zeros((256, 256), ml_dtypes.bfloat16)
    return gate_up.compile(*bindings(x, Wg, Wu, out), 256, 256, 128, block=THREADS,
                           arch="sm_90a")
