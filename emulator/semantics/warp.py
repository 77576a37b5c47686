"""Semantics of warp shuffles (`tylo.dialects.ptx.warp`; PTX ISA "Data Movement and Conversion
Instructions: shfl.sync", anchor #data-movement-and-conversion-instructions-shfl-sync).

``shfl.sync.<mode>.b32 d[|p], a, b, c, membermask``: a warp collective here (its `Collective`
trait, `tylo.dialects.facts`: the scheduler issues it for whole warps only). The ISA lets the
lanes of `membermask` reach it from different program points (it is ``.sync``, not
``.aligned``); the emulator is stricter and wants every lane of the warp at the same
instruction, which a full mask (``0xffffffff``, what Tylo emits) needs anyway: a lane that
executes it outside its membermask is undefined behaviour in the ISA, and an error here, as is a
source lane outside the mask.

Per lane L (the ISA's pseudocode; `b` and `c` may differ between lanes):
``minLane = L & c[12:8]``, ``maxLane = minLane | (c[4:0] & ~c[12:8])``; ``.up`` reads lane
``j = L - b[4:0]`` when ``j >= maxLane``, ``.down`` ``j = L + b[4:0]`` when ``j <= maxLane``,
``.bfly`` ``j = L ^ b[4:0]`` when ``j <= maxLane``, ``.idx`` ``j = minLane | (b[4:0] &
~c[12:8])`` when ``j <= maxLane``; otherwise its own `a` (``j = L``). ``p`` = whether j was
valid. The 32 bits move unchanged (a NaN's payload included).
"""

from __future__ import annotations

from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ...compiler.support.lazy_modules import np
from ...dialects.ptx.warp import ShflSyncOp


def source_lanes(mode: str, lane, b, c):
    """(j, valid): the lane each lane reads and whether it is the shuffle's (module docstring);
    `lane`, `b`, `c` int64 arrays of one shape."""
    b = b & 31
    seg = (c >> 8) & 31
    min_lane = lane & seg
    max_lane = min_lane | (c & 31 & ~seg)
    if mode == "up":
        j = lane - b
        valid = j >= max_lane
    else:
        j = {"down": lane + b, "bfly": lane ^ b, "idx": min_lane | (b & ~seg)}[mode]
        valid = j <= max_lane
    return np.where(valid, j, lane), valid


@register_impls
class WarpSemantics(InterpreterFunctions):
    """shfl.sync."""

    @impl(ShflSyncOp)
    def run_shfl(self, interpreter, op: ShflSyncOp, args):
        a, b, c = args
        threads = interpreter.threads
        lane = (threads % 32).astype(np.int64)
        mask = op.mask
        outside = ((mask >> lane) & 1) == 0
        if outside.any():
            interpreter.machine.error(
                op, f"shfl.sync executed by lanes outside its membermask {mask:#010x} "
                    f"(undefined behaviour, PTX ISA shfl.sync)", threads[outside],
                kind="divergence")
        j, valid = source_lanes(op.mode.data, lane, b.astype(np.int64), c.astype(np.int64))
        warp_base = threads - lane  # (whole warps, in order: thread 32 w + l is lane l)
        index = np.searchsorted(threads, warp_base + j)
        d = a[index]
        return (d,) if op.valid is None else (d, valid)
