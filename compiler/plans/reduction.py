"""Reduction plans: how a fragment's values are reduced along one logical axis.

A plan is Julia Tylo's recipe for ``sum``/``maximum``/``minimum(fragment; dims)``: first a local
tree over the slots of a thread that share a kept coordinate (one ``group`` per kept coordinate),
then one butterfly step ``v = op(v, shfl.sync.bfly(v, 1 << b))`` per lane bit ``b`` in ``bits``.
Every thread runs the same instructions; afterwards every thread holding a kept coordinate holds
the reduced value of that whole line, so the result ownership is replicated.

The shuffles are PTX ``shfl.sync.bfly.b32`` (PTX ISA "Data Movement and Conversion
Instructions: shfl.sync", section 9.7.8.6 in the PTX 7.x numbering -- numbers shift between
releases, follow the anchor ``#data-movement-and-conversion-instructions-shfl-sync``; not yet
restated in docs/facts/ptx_isa.md): in ``.bfly`` mode a lane exchanges with lane
``lane ^ (1 << b)`` of the same warp, so only lane bits 0..4 can be used, and all 32 lanes of
each warp must execute them. An axis whose values are spread over several warps has no plan.

Zero-based throughout: axis 0 = rows, axis 1 = columns; slots and bits count from 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations


from ..support.lazy_modules import np
from ..support.errors import PlanError
from ..layout.int_tuple import require_axis
from ..ownership.ownership import Ownership, require_ownership
from ..ownership.fit import fit_ownership

__all__ = ["ReductionPlan", "reduction_plan", "reduced_ownership"]

LANE_BITS = 5  # xor shuffles reach lanes of the same 32-lane warp only


@dataclass(frozen=True)
class ReductionPlan:
    """A thread-uniform recipe reducing one logical axis of an ownership.

    groups: for each kept coordinate a thread holds, in order of its first slot, the zero-based
        slots sharing it (increasing); the same on every thread. Result slot g is group g.
    bits: thread-index bits (0..4, increasing) whose flip keeps the kept coordinate and brings
        the rest of the line; one xor shuffle over each completes the reduction.
    result: the replicated result ownership; the reduced axis has extent 1.
    """

    groups: tuple[tuple[int, ...], ...]
    bits: tuple[int, ...]
    result: Ownership


def _group_labels(kept: np.ndarray) -> np.ndarray:
    """labels[t, v]: index of slot v's kept coordinate among thread t's, by first occurrence."""
    labels = np.empty_like(kept)
    for t, row in enumerate(kept):
        _, first, inverse = np.unique(row, return_index=True, return_inverse=True)
        rank = np.argsort(np.argsort(first))
        labels[t] = rank[inverse]
    return labels


def _line_coverage_reason(o: Ownership, axis: int, group_kept: np.ndarray) -> str | None:
    """Why some thread's line is not held inside its own warp (or at all), or None."""
    idx = o._indices
    size, extent = o.rows * o.cols, o.shape[axis]
    warps = -(-o.threads // 32)
    held = np.zeros((warps, size), dtype=bool)
    for w in range(warps):
        held[w, idx[32 * w: 32 * (w + 1)].ravel()] = True
    j = np.arange(extent)
    kc = group_kept[:, :, None]
    lines = kc + o.rows * j if axis == 1 else j + o.rows * kc  # [t, g, j]
    warp = (np.arange(o.threads) // 32)[:, None, None]
    ok = held[warp, lines]
    if ok.all():
        return None
    t, g, k = (int(x[0]) for x in np.nonzero(~ok))
    i = int(lines[t, g, k])
    coord = (i % o.rows, i // o.rows)
    if not held[:, i].any():
        return f"coordinate {coord} of the reduced line is held by no thread"
    return (
        f"the reduced axis spans warps: thread {t} (warp {t // 32}) needs coordinate {coord}, "
        f"which only other warps hold; xor shuffles stay inside a warp"
    )


def _covers(red: np.ndarray, groups, bits, extent: int) -> bool:
    """Whether the butterfly over `bits` brings each line's `extent` values exactly once."""
    threads = np.arange(red.shape[0])
    masks = [0]
    for b in bits:
        masks += [m | (1 << b) for m in masks]
    partners = threads[:, None] ^ np.array(masks)[None, :]  # [t, m]
    for slots in groups:
        reached = red[partners][:, :, list(slots)].reshape(len(threads), -1)  # [t, m * |g|]
        if not (np.sort(reached, axis=1) == np.arange(extent)).all():
            return False
    return True


def _plan(o: Ownership, axis: int) -> tuple[ReductionPlan | None, str]:
    require_ownership(o, "reduction")
    axis = require_axis(axis, f"reduction of {o}")
    coords = o._coords
    kept, red = coords[..., 1 - axis], coords[..., axis]
    labels = _group_labels(kept)
    differ = np.nonzero((labels != labels[:1]).any(axis=1))[0]
    if len(differ):
        return None, (
            f"the slots sharing a kept coordinate differ between thread 0 and thread {int(differ[0])}"
        )
    count = int(labels[0].max()) + 1
    groups = tuple(tuple(int(v) for v in np.nonzero(labels[0] == g)[0]) for g in range(count))
    first = [g[0] for g in groups]
    group_kept = kept[:, first]  # [t, g]
    reason = _line_coverage_reason(o, axis, group_kept)
    if reason:
        return None, reason

    idx = o._indices
    ordered = np.sort(idx, axis=1)
    dup = np.nonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))[0]
    if len(dup):
        t = int(dup[0])
        i = int(ordered[t, 1:][ordered[t, 1:] == ordered[t, :-1]][0])
        slots = [int(v) for v in np.nonzero(idx[t] == i)[0]]
        return None, (
            f"thread {t} holds coordinate {(i % o.rows, i // o.rows)} in slots {slots}; a sum "
            f"would count it more than once"
        )
    extent, per_group = o.shape[axis], len(groups[0])
    lanes, rest = divmod(extent, per_group)
    steps = lanes.bit_length() - 1
    if any(len(g) != per_group for g in groups) or rest or lanes & (lanes - 1):
        return None, (
            f"groups of sizes {sorted({len(g) for g in groups})} cannot complete lines of {extent} "
            f"values through a power of two of lanes each"
        )
    threads = np.arange(o.threads)
    candidates = []
    for b in range(LANE_BITS):
        partner = threads ^ (1 << b)
        if (partner < o.threads).all() and np.array_equal(group_kept[partner], group_kept):
            candidates.append(b)
    for bits in combinations(candidates, steps):
        if _covers(red, groups, bits, extent):
            break
    else:
        return None, (
            f"no {steps} of the lane bits {candidates} that keep the kept coordinate bring every "
            f"value of a line exactly once on every thread"
        )

    shape = (1, o.cols) if axis == 0 else (o.rows, 1)
    zero = np.zeros_like(group_kept)
    table = np.stack([zero, group_kept] if axis == 0 else [group_kept, zero], axis=-1)
    result = fit_ownership(table, shape)
    if result is None:
        return None, "the replicated result ownership is not representable as a layout"
    return ReductionPlan(groups, tuple(bits), result), ""


def reduction_plan(o: Ownership, axis: int) -> ReductionPlan | None:
    """Derive the collective reduction of logical `axis` (0 or 1) of ownership `o`.

    Returns None when no local tree plus xor-shuffle recipe reaches every value sharing a kept
    coordinate exactly once with an identical instruction sequence on all threads: the slot
    groups differ between threads, the line of a kept coordinate spans warps or is not held at
    all, a thread holds one coordinate in two slots, the lane bits that keep the kept
    coordinate do not bring each value exactly once (a partly replicated ownership), or the
    result ownership is not a layout. Thread t is lane t % 32 of warp t // 32.

    Semantics (Julia Tylo is silent): every value of a line must be reached exactly once, so the
    plan is right for sums as well as for max/min; a line of `extent` values held `k` per group
    needs log2(extent / k) shuffles. Among the lane bits whose flip keeps every kept coordinate,
    the lowest-first combination of that many bits that reaches each value once is chosen; lane
    bits that only meet copies of a thread's own values (a replicated ownership, such as a
    previous reduction's result) are thereby left out.

    Raises GeometryError when `axis` is not 0 or 1 or `o` is not an `Ownership`.
    """
    return _plan(o, axis)[0]


def reduced_ownership(o: Ownership, axis: int) -> Ownership:
    """The replicated result ownership of reducing `axis` (0 or 1) of `o`.

    Raises PlanError ("no recipe: ...", with the reason) when `reduction_plan` has no plan, and
    GeometryError when `axis` is not 0 or 1.
    """
    plan, reason = _plan(o, axis)
    if plan is None:
        raise PlanError(f"reduction of axis {axis} of ownership {o}: no recipe: {reason}")
    return plan.result
