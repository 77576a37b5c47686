"""The pieces both main kernels of the attention backward use (`attention_backward` at D 64 and
128, `attention_backward_d256` at D 256): the query block BM, the layout of a Q or dO stage as
the B operand of S^T = K Q^T, the per-column ownership of lse2 and delta beside an accumulator,
dQ's WGMMA plan, the mask of S^T, and the spec of the float32 row arrays (lse2, delta). In a
module of their own so that the D 256 kernel and the runner that picks it
(attention_backward.py) import them without importing each other.
"""

from __future__ import annotations

import math

import tylo
from tylo import BFloat16, ComposedLayout, Float32, Layout, WGMMA64

from .attention_tiles import ROW, SWIZZLE

LOG2E = 1.4426950408889634
BM = 64  # query rows per step (the N of S^T = K Q^T)

#: lse2 and delta (B Hq, S_pad) float32, rows contiguous.
ROWS = tylo.Tensor(Float32, 2, stride=(None, 1))


def kt_layout(D: int) -> ComposedLayout:
    """A Q (or dO) stage (BM, D) seen as the B operand (D, BM) of S^T = K Q^T: K-major."""
    return ComposedLayout(SWIZZLE, Layout(((ROW, D // ROW), BM), ((1, BM * ROW), ROW)))


def column_ownership(C: tylo.Ownership) -> tylo.Ownership:
    """The (1, n) ownership of per-column values that each thread holds for the columns it owns
    in the accumulator ownership C (64, n) (replicated over the rows: broadcasts against C with
    no shuffle). C's layout values are column-major indices r + 64 c; the row strides (< 64)
    drop out."""
    def strides(x):
        return tuple(strides(y) for y in x) if isinstance(x, tuple) else (x // 64 if x % 64 == 0
                                                                          else 0)
    return tylo.Ownership((1, C.shape[1]), Layout(C.layout.shape, strides(C.layout.stride)))


def dq_plan() -> WGMMA64:
    """64 columns of dQ (BM, 64) = dS (BM, 64 keys) K (64 keys, 64 columns)."""
    return WGMMA64(BFloat16, ROW, 64)


@tylo.func
def masked(s, n0, m0, off, n_k, causal):
    """S^T (64 keys from n0, BM queries from m0): -inf where the key is past the sequence
    (key >= n_k) or, causal, past the query's diagonal (key > query + off)."""
    rows, cols = tylo.coordinates(s.ownership, tylo.warpgroup_thread_idx())
    keep = rows + n0 < n_k
    if causal:
        keep = keep & (rows + n0 <= cols + (m0 + off))
    return tylo.select(keep, s, -math.inf)
