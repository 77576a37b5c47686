"""Warp shuffles: ``tylo.shfl_idx``, ``tylo.shfl_up``, ``tylo.shfl_down``, ``tylo.shfl_xor``,
named and defined as CUDA's ``__shfl_sync``, ``__shfl_up_sync``, ``__shfl_down_sync`` and
``__shfl_xor_sync`` with the full member mask: every lane of the warp must execute the shuffle
(all 32 lanes of a warp, at the same point of the program: the emulator refuses a shuffle that
part of a warp reaches). Each becomes one ``shfl.sync.{idx,up,down,bfly}.b32`` (PTX ISA
"shfl.sync", `tylo.dialects.ptx.warp`), with the segment of `width` lanes packed into its
``c`` operand as CUDA does.

Values: a runtime scalar of any dtype but Bool: 32-bit ones (Float32, Int32, UInt32) move as they
are; 16- and 8-bit ones (Float16, BFloat16, Int16/UInt16, Int8/UInt8, the FP8 formats) in the low
half of a 32-bit register (one shuffle); 64-bit ones (Float64, Int64, UInt64) as two 32-bit
halves (two shuffles). A fragment is shuffled slot by slot (the same lane for every slot); a
Python number is the same in every lane and is returned unchanged.
"""

from __future__ import annotations

from ...dialects.scalars import Scalar, python_dtype
from ...dialects.shuffles import check_width, shuffle
from .fragments import Fragment, map_fragments


EXPORTS = (
    "shfl_idx", "shfl_up", "shfl_down", "shfl_xor",
)
"""Names this module adds to the `tylo` namespace (api/__init__.py finds them)."""

__all__ = ["shfl_idx", "shfl_up", "shfl_down", "shfl_xor"]


def _shuffle(mode: str, x, lane, width, what: str):
    check_width(width, what)
    if isinstance(x, Fragment):
        return map_fragments(lambda s: shuffle(mode, s, lane, width, what), [x], x.dtype)
    if not isinstance(x, Scalar):
        python_dtype(x)  # a number (the same in every lane), or TypeMismatchError
        return x
    return shuffle(mode, x, lane, width, what)


def shfl_idx(x, lane, width: int = 32):
    """`x` of lane ``lane % width`` of this lane's segment of `width` lanes (``__shfl_sync``):
    lanes ``[s, s + width)`` with ``s = laneid & ~(width - 1)``; `lane` an int or a runtime
    integer (may differ between lanes; only its low bits inside the segment count). `width`: a
    static power of two, 1..32. Raises GeometryError for a bad width, TypeMismatchError for a
    Bool or a non-integer lane."""
    return _shuffle("idx", x, lane, width, "tylo.shfl_idx")


def shfl_up(x, delta, width: int = 32):
    """`x` of the lane `delta` below this one (``__shfl_up_sync``); a lane whose source would
    fall below the start of its segment of `width` lanes keeps its own `x`. `delta` 0..31.
    Errors as `shfl_idx`."""
    return _shuffle("up", x, delta, width, "tylo.shfl_up")


def shfl_down(x, delta, width: int = 32):
    """`x` of the lane `delta` above this one (``__shfl_down_sync``); a lane whose source would
    pass the end of its segment of `width` lanes keeps its own `x`. Errors as `shfl_idx`."""
    return _shuffle("down", x, delta, width, "tylo.shfl_down")


def shfl_xor(x, mask, width: int = 32):
    """`x` of lane ``laneid ^ mask`` (``__shfl_xor_sync``, the butterfly); `mask` 0..31. As in
    CUDA, a source in a later segment of `width` lanes gives this lane's own `x`, one in an
    earlier segment is read (a `mask` below `width` stays inside the segment). Errors as
    `shfl_idx`."""
    return _shuffle("bfly", x, mask, width, "tylo.shfl_xor")
