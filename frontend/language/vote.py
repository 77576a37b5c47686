"""Kernel builtins of warp synchronization and votes: `syncwarp`, `vote_all`, `vote_any`,
`vote_uni`, `ballot` (PTX ISA 9.7.13.2 bar.warp.sync, 9.7.13 vote.sync; CUDA's __syncwarp,
__all_sync, __any_sync, __uni_sync, __ballot_sync).

Each takes a member `mask`: bit l names lane l of the warp (``linear_thread_idx() % 32``).
Every lane of the mask that has not exited must execute the same call together with the same
mask, and the calling lane must be in it; otherwise the hardware's behaviour is undefined (the
emulator raises an EmulationError naming the lanes). The default, 0xffffffff, is the whole warp.
"""

from __future__ import annotations

from ...compiler.hardware import dtypes
from ...compiler.support.errors import GeometryError, TypeMismatchError
from ...compiler.layout.int_tuple import is_int
from ...dialects import direct
from ...dialects.ptx.vote import BarWarpSyncOp, VoteSyncOp
from ...dialects.scalars import Scalar, as_scalar, constant
from .tiles import _index

FULL_MASK = 0xFFFFFFFF


def _mask(mask, what: str) -> Scalar:
    """The Int32 member mask: a static int in 1..0xffffffff (an ``arith.constant``, which
    selection prints as the immediate: `BarWarpSyncOp.IMMEDIATE_OPERANDS`) or a runtime
    integer."""
    if isinstance(mask, Scalar):
        return Scalar(_index(mask, f"{what}: the member mask"), dtypes.Int32)
    if not is_int(mask) or isinstance(mask, bool) or not 0 < mask <= FULL_MASK:
        raise GeometryError(f"{what}: member mask {mask!r} must be a non-zero 32-bit lane mask "
                            "(bit l names lane l; 0xffffffff is the whole warp) or a runtime "
                            "integer")
    return constant(mask - (1 << 32) if mask >= 1 << 31 else mask, dtypes.Int32)


def _predicate(pred, what: str) -> Scalar:
    if isinstance(pred, bool):
        return as_scalar(pred)
    if not isinstance(pred, Scalar) or pred.dtype is not dtypes.Bool:
        got = f"a runtime {pred.dtype}" if isinstance(pred, Scalar) else repr(pred)
        raise TypeMismatchError(f"{what} takes a Bool predicate (a comparison such as x > 0), "
                                f"got {got}")
    return pred


def syncwarp(mask=FULL_MASK) -> None:
    """Wait until every lane of `mask` has reached this call (``bar.warp.sync mask``), and order
    the memory accesses of those lanes: what a lane wrote before it, the others read after it
    (PTX ISA 9.7.13.2). A static mask is an immediate; a runtime one (Int32/UInt32) is read per
    lane. Raises GeometryError for a static mask outside 1..0xffffffff, TypeMismatchError for a
    runtime one that is not an integer."""
    direct.instruction(lambda regs, out: BarWarpSyncOp(regs[0]), [_mask(mask, "syncwarp")], [])


def _vote(mode: str, pred, mask, what: str) -> Scalar:
    operands = [_predicate(pred, what), _mask(mask, what)]
    result = dtypes.UInt32 if mode == "ballot" else dtypes.Bool
    (value,) = direct.instruction(lambda regs, out: VoteSyncOp(mode, regs[0], regs[1], out[0]),
                                  operands, [result])
    return value


def vote_all(pred, mask=FULL_MASK) -> Scalar:
    """True (Bool, in every lane of `mask`) when `pred` (a Bool) holds in every non-exited lane of
    `mask` (``vote.sync.all.pred``). Errors as `syncwarp`, and TypeMismatchError for a predicate
    that is not a Bool."""
    return _vote("all", pred, mask, "vote_all")


def vote_any(pred, mask=FULL_MASK) -> Scalar:
    """True when `pred` holds in some lane of `mask` (``vote.sync.any.pred``); errors as
    `vote_all`."""
    return _vote("any", pred, mask, "vote_any")


def vote_uni(pred, mask=FULL_MASK) -> Scalar:
    """True when `pred` is the same in every non-exited lane of `mask` (``vote.sync.uni.pred``);
    errors as `vote_all`."""
    return _vote("uni", pred, mask, "vote_uni")


def ballot(pred, mask=FULL_MASK) -> Scalar:
    """The lanes of `mask` where `pred` holds, as a UInt32 (bit l: lane l; 0 for lanes outside
    the mask or exited) in every lane of `mask` (``vote.sync.ballot.b32``); errors as
    `vote_all`."""
    return _vote("ballot", pred, mask, "ballot")


EXPORTS = (
    "syncwarp", "vote_all", "vote_any", "vote_uni", "ballot",
)
"""Names this module adds to the `tylo` namespace (api/__init__.py finds them)."""

__all__ = ["syncwarp", "vote_all", "vote_any", "vote_uni", "ballot", "FULL_MASK"]
