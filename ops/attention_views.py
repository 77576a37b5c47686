"""How `tylo.ops.attention` (bf16, `attention_forward`, and FP8, `attention_fp8`) sees its
tensors: the kernel's 3-D view of q, k or v in either memory order ((B, S, H, D) or (B, H, S,
D), whichever the logical layout), the order that reads a tensor where it lies, and the
log-sum-exp's padded rows.
"""

from __future__ import annotations

import torch

from tylo import ArgumentError


def rows_view(x: torch.Tensor, order: str):
    """`x` (logical (B, S, H, D) when order is "bshd", (B, H, S, D) when "bhsd") seen as the
    kernel's 3-D view of that memory order, or None when its strides do not allow it."""
    B, S, H, D = x.shape if order == "bshd" else (x.shape[0], x.shape[2], x.shape[1], x.shape[3])
    mem = x if order == "bshd" else x.transpose(1, 2)  # (B, S, H, D) logical, any strides
    if order == "bshd":
        try:
            return mem.view(B * S, H, D)
        except (RuntimeError, ValueError):  # (fake tensors raise ValueError)
            return None
    try:
        return mem.transpose(1, 2).view(B * H, S, D)
    except (RuntimeError, ValueError):  # (fake tensors raise ValueError)
        return None


def memory_order(x, layout: str, name: str) -> str:
    """The kernel path, "bshd" or "bhsd", that reads `x` where it lies (the requested layout's
    own order first); ArgumentError naming the tensor when it fits neither."""
    for order in (layout, "bhsd" if layout == "bshd" else "bshd"):
        if rows_view(x if layout == order else x.transpose(1, 2), order) is not None:
            return order
    raise ArgumentError(name, f"has strides {tuple(x.stride())}: the kernel reads rows of D "
                              "contiguous elements laid out (B, S, H, D) or (B, H, S, D) in "
                              "memory; pass x.contiguous()")


def lse_rows(q, *shape: int):
    """A float32 log-sum-exp of `shape` whose rows lie a multiple of 4 elements apart (a view
    of rows padded to 4 or more): every sequence length, 1 (decode) included, then launches one
    compiled variant of the kernel (16-byte aligned rows of runtime stride)."""
    rows = max(-(-shape[-1] // 4) * 4, 4)
    return q.new_empty((*shape[:-1], rows), dtype=torch.float32)[..., :shape[-1]]
