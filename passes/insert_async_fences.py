"""tylo-insert-async-fences: the fences between the generic proxy and the async proxy, and the
refusals of what no fence can order.

Runs on scalar tylo IR (after `tylo-lower-tiles`, before `tylo-lower-scf`: pointers are explicit
and loops are still structured). Two kinds of fence go in (PTX ISA 9.7.13.4 membar/fence,
9.7.15.5.x wgmma.fence):

* ``tylo.wgmma_fence`` before a group of ``tylo.wgmma_instr`` (the instructions one mma_async
  committed) when a register it reads or writes (the accumulator, the A registers) was last
  written or read by other code: the ISA requires a wgmma.fence before the first wgmma of a
  warpgroup and between any other access to those registers and a wgmma that accesses them;
  accumulator accesses by wgmma instructions of one shape are ordered without one. A register
  that comes from a wgmma or a wgmma.wait_group and is read by nothing else needs none; one
  carried around a loop needs none inside the loop when the value that enters the loop was the
  only other access: the fence then goes before the loop, once.
* ``tylo.fence proxy_async`` (``fence.proxy.async.shared::cta``) after generic stores to shared
  memory (ops declaring a synchronous generic `MemoryAccess` write, `tylo.dialects.facts`:
  ``tylo.store``, ``tylo.stmatrix``, ``tylo.st_vector`` ...; and for an asynchronous generic
  write, ``tylo.copy_async``, the op its `AsyncCompletion` names, ``tylo.wait_copies``, where
  its writes land) that an async-proxy operation may read (an op declaring an async-proxy
  `MemoryAccess` read of shared memory: a WGMMA or tcgen05.mma operand through its descriptor,
  a TMA store source): every
  run of such stores is followed by a fence before the next operation that is not a plain
  computation, a load or another store (side-effect free, or whose only facts are synchronous
  generic reads and writes; not a barrier, an mbarrier operation, an async operation).
  Stores at the end of a loop body or a branch are fenced after the loop or the ``scf.if``
  (once, not per iteration), unless the loop body also synchronizes (then its own async reads
  may follow around the back edge, and the fence is at the end of the body). The fence lands
  on every path that has the stores, whatever a loop's trip count, and is executed by the
  threads that wrote, as the ISA requires (the writers fence, then meet the issuing thread at a
  barrier).

Refused (a CompileError through the pass manager):

* a pending accumulator (a result of a ``tylo.wgmma_instr`` not yet passed through
  ``tylo.wgmma_wait``) read by anything but another wgmma instruction of its chain, a wait, or
  a loop's yield;
* a generic store to shared memory, or an async copy into it, that provably overlaps a
  WGMMA operand of a group committed and not yet waited for (same allocation, static byte
  ranges that overlap). Stages chosen at run time cannot be decided here; the emulator refuses
  those when they happen (``emulator/async_reads.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import IsTerminator, is_side_effect_free

from ..dialects.locations import OpFailure, location_of
from ..dialects.facts import (
    ASYNC, GENERIC, READ, WRITE, MemoryAccess, accesses_pending_registers, completed_by,
    completion, memory_accesses,
)
from ..dialects.tylo import PointerType, dtype_of
from ..dialects.tylo.mbarrier_ops import FenceOp
from ..dialects.tylo.wgmma_ops import (
    WgmmaCommitOp,
    WgmmaEncodeOp,
    WgmmaFenceOp,
    WgmmaInstrOp,
    WgmmaInstrRegAOp,
    WgmmaWaitOp,
)
from .analysis.pointer_analysis import pointer_place, summand_op

NAME = "tylo-insert-async-fences"

#: The scalar wgmma instructions: A from a descriptor, or A in registers.
WGMMA = (WgmmaInstrOp, WgmmaInstrRegAOp)


def _shared(v: SSAValue) -> bool:
    return isinstance(v.type, PointerType) and v.type.space.data == "shared"


def _pointer_writes(op: Operation) -> list[SSAValue]:
    """The pointers `op` writes through (its `MemoryAccess` writes with a pointer operand)."""
    return [a.address(op) for a in memory_accesses(op, WRITE)
            if a.operand is not None and not a.descriptor]


def _generic_shared_writes(op: Operation) -> list[SSAValue]:
    """The shared pointers `op` writes through the generic proxy, its effect done when it is."""
    if completion(op) is not None:
        return []
    return [a.address(op) for a in memory_accesses(op, WRITE, GENERIC)
            if a.operand is not None and not a.descriptor and _shared(a.address(op))]


def _async_shared_reads(op: Operation) -> list[tuple[MemoryAccess, SSAValue | None]]:
    """(access, shared pointer or None when not traced) of each shared operand `op` reads
    through the async proxy: a pointer, or the pointer a matrix descriptor was encoded from."""
    found = []
    for a in memory_accesses(op, READ, ASYNC):
        if a.operand is None or a.space_of(op) != "shared":
            continue
        v = a.address(op)
        found.append((a, _descriptor_pointer(v) if a.descriptor else v))
    return found


def _synchronous_access_only(op: Operation) -> bool:
    """Whether every fact of `op` is a generic read or write done when the op is (a load or a
    store), and it has some."""
    found = memory_accesses(op)
    return (bool(found) and completion(op) is None
            and all(a.proxy == GENERIC and a.kind in (READ, WRITE) for a in found))


def _encoding(v: SSAValue) -> WgmmaEncodeOp | None:
    """The ``tylo.wgmma_encode`` a wgmma or tcgen05 descriptor operand comes from (through the
    additions that step it along K or move it to a runtime origin), or None."""
    return summand_op(v, WgmmaEncodeOp)


def _descriptor_pointer(v: SSAValue) -> SSAValue | None:
    """The shared pointer a wgmma descriptor operand was encoded from, or None."""
    enc = _encoding(v)
    return None if enc is None else enc.pointer


def _descriptors(op) -> list[tuple[str, SSAValue]]:
    """(role, descriptor operand) of a scalar wgmma: A's only when A is in shared memory."""
    return ([("A", op.a)] if isinstance(op, WgmmaInstrOp) else []) + [("B", op.b)]


def _instr_extent(op, role: str) -> int | None:
    """Bytes from an operand's start address that one instruction may read: rows (64 for A, n
    for B) of one swizzle row each (None for no swizzle: its core matrices may lie anywhere)."""
    enc = _encoding(op.a if role == "A" else op.b)
    static = enc.static.value.data & ((1 << 64) - 1) if enc is not None else 0
    row = {1: 128, 2: 64, 3: 32}.get(static >> 62)
    if row is None:
        return None
    return (64 if role == "A" else op.n.value.data) * row


# -- wgmma.fence -------------------------------------------------------------------------------
HERE = "here"


def _fence_need(v: SSAValue, seen: frozenset = frozenset()):
    """Whether a wgmma taking register value `v` needs a wgmma.fence: None (no: `v` holds what
    a wgmma left in its registers and nothing else reads them), `HERE` (at the wgmma's group),
    or an ``scf.for`` before which one fence suffices (`v` is carried by that loop, only wgmma
    code touches it inside, and the value entering the loop comes from other code)."""
    if isinstance(v, BlockArgument):
        loop = v.owner.parent_op()
        if v in seen:
            return None
        if not (isinstance(loop, scf.ForOp) and v.index > 0 and _only_wgmma_uses(v)):
            return HERE
        j = v.index - 1
        if _fence_need(v.owner.last_op.operands[j], seen | {v}) is not None:
            return HERE
        outer = _fence_need(loop.iter_args[j], seen)
        return None if outer is None else (loop if outer is HERE else outer)
    owner = v.owner
    if isinstance(owner, WGMMA):
        return None
    if isinstance(owner, WgmmaWaitOp) and _only_wgmma_uses(v):
        return None
    return HERE


def _only_wgmma_uses(v: SSAValue) -> bool:
    return all(_hands_on(u.operation) for u in v.uses)


#: The ops that complete a wgmma (its `AsyncCompletion`: ``tylo.wgmma_wait``).
WGMMA_ENDS = completed_by(WgmmaInstrOp)


def _hands_on(op: Operation) -> bool:
    """Whether `op` may take a pending wgmma register: an op that completes the wgmma, another
    op of its chain (one that declares `PendingRegisterAccess` and is completed by the same ops:
    the wgmma instructions), or a loop's yield."""
    return (isinstance(op, scf.YieldOp) or op.name in WGMMA_ENDS
            or accesses_pending_registers(op) and completed_by(op) == WGMMA_ENDS)


def _insert_wgmma_fences(module: ModuleOp) -> None:
    groups: list[list] = []
    for block in _blocks(module):
        current: list = []
        for op in block.ops:
            if isinstance(op, WGMMA):
                current.append(op)
            elif isinstance(op, WgmmaCommitOp) and current:
                groups.append(current)
                current = []
        if current:
            groups.append(current)
    for group in groups:
        first = group[0]
        if isinstance(first.prev_op, WgmmaFenceOp):
            continue
        before: list[Operation] = []
        at_group = False
        for instr in group:
            for v in _register_operands(instr):
                need = _fence_need(v)
                if need is HERE:
                    at_group = True
                elif need is not None and need not in before:
                    before.append(need)
        if at_group:
            Rewriter.insert_op(WgmmaFenceOp(), InsertPoint.before(first))
        for loop in [] if at_group else before:
            if not isinstance(loop.prev_op, WgmmaFenceOp):
                Rewriter.insert_op(WgmmaFenceOp(), InsertPoint.before(loop))


def _register_operands(op) -> list[SSAValue]:
    """The registers a wgmma reads or writes: the accumulator, and A when it is in registers."""
    return list(op.acc) + (list(op.a) if isinstance(op, WgmmaInstrRegAOp) else [])


# -- fence.proxy.async -------------------------------------------------------------------------
def _async_roots(module: ModuleOp) -> tuple[set, bool]:
    """(roots of every shared pointer the async proxy reads, whether some root is unknown)."""
    roots, unknown = set(), False
    for op in module.walk():
        for _, p in _async_shared_reads(op):
            if p is None:
                unknown = True
                continue
            root, _ = pointer_place(p)
            if root is None:
                unknown = True
            roots.add(root)
    return roots, unknown


def _transparent(op: Operation) -> bool:
    """Operations a proxy fence may be moved past: computations, loads and stores."""
    if op.regions or op.has_trait(IsTerminator):
        return False
    return is_side_effect_free(op) or _synchronous_access_only(op)


def _insert_proxy_fences(module: ModuleOp) -> None:
    roots, unknown = _async_roots(module)
    if not roots and not unknown:
        return

    # asynchronous generic-proxy writes (cp.async) land at the op that completes them (the
    # wait_copies covering them, PTX ISA 9.7.9.25.3): that op is where the fence's writes are,
    # for every such write before it
    landed: dict[str, list] = {}  # completing op name -> roots of the writes landing there
    for op in module.walk():
        if completion(op) is None:
            continue
        for a in memory_accesses(op, WRITE, GENERIC):
            if a.operand is not None and not a.descriptor and a.space_of(op) == "shared":
                for name in completed_by(op):
                    landed.setdefault(name, []).append(pointer_place(a.address(op))[0])
    lands = {name: unknown and bool(r) or any(x is None or x in roots for x in r)
             for name, r in landed.items()}

    def feeds_async(op: Operation) -> bool:
        if lands.get(op.name):
            return True
        for ptr in _generic_shared_writes(op):
            root, _ = pointer_place(ptr)
            if unknown or root is None or root in roots:
                return True
        return False

    def walk(block: Block) -> bool:
        """Fence `block`; True when it ends with stores not yet fenced (its terminator
        yields to the parent op, which then fences after itself: a fence that runs also when
        a loop runs zero times, or a branch without stores is taken, is harmless)."""
        dirty = False
        synchronizes = False  # an op the fence may not move past, before the block's end
        for op in list(block.ops):
            if feeds_async(op):
                dirty = True
                continue
            if isinstance(op, FenceOp) and op.kind.data == "proxy_async":
                dirty = False
                continue
            if _transparent(op):
                continue
            if op is block.last_op and isinstance(op, (scf.YieldOp, scf.ConditionOp)):
                # a loop body that also synchronizes may reach its own async reads around the
                # back edge: fence here; otherwise the parent fences after the loop or branch
                if dirty and synchronizes and isinstance(op.parent_op(), (scf.ForOp, scf.WhileOp)):
                    Rewriter.insert_op(FenceOp("proxy_async"), InsertPoint.before(op))
                    dirty = False
                return dirty
            synchronizes = True
            if dirty:
                Rewriter.insert_op(FenceOp("proxy_async"), InsertPoint.before(op))
                dirty = False
            inner_dirty = False
            for region in op.regions:
                for inner in region.blocks:
                    inner_dirty |= walk(inner)
            dirty = inner_dirty
        return dirty

    for fn in module.ops:
        for region in fn.regions:
            for block in region.blocks:
                walk(block)


# -- refusals ----------------------------------------------------------------------------------
def _refuse_pending_reads(module: ModuleOp) -> None:
    for op in module.walk():
        if not isinstance(op, WGMMA):
            continue
        for v in op.results:
            for use in v.uses:
                user = use.operation
                if _hands_on(user):
                    continue
                raise OpFailure(
                    user, f"{NAME}: {user.name} reads a pending WGMMA accumulator (a result of "
                    "wgmma.mma_async) before wait_mma: the registers are being written "
                    "asynchronously; wait for the group first")


@dataclass
class _Pending:
    ranges: list  # (root, start, end, the user's file:line of the operand or None)


def _overlap(pending: list[_Pending], root, offset: int | None, size: int):
    """The (root, start, end, site) of a pending operand the bytes [offset, offset + size) of
    `root` overlap, or None."""
    if root is None or offset is None:
        return None
    for group in pending:
        for r, lo, hi, site in group.ranges:
            if r is root and offset < hi and lo < offset + size:
                return r, lo, hi, site
    return None


def _group_ranges(group: list) -> _Pending:
    ranges = []
    for instr in group:
        for role, v in _descriptors(instr):
            ptr = _descriptor_pointer(v)
            if ptr is None:
                continue
            root, offset = pointer_place(ptr)
            extent = _instr_extent(instr, role)
            if root is None or offset is None or extent is None:
                continue
            loc = location_of(_encoding(v))
            site = None if loc is None else f"{loc.filename.data}:{loc.line.data}"
            ranges.append((root, offset, offset + extent, site))
    return _Pending(ranges)


def _refuse_overwrites(module: ModuleOp) -> None:
    def walk(block: Block, pending: list[_Pending]) -> list[_Pending]:
        group: list = []
        for op in block.ops:
            if isinstance(op, WGMMA):
                group.append(op)
            elif isinstance(op, WgmmaCommitOp):
                pending = pending + [_group_ranges(group)]
                group = []
            elif isinstance(op, WgmmaWaitOp):
                keep = op.pending.value.data
                pending = pending[len(pending) - keep:] if keep else []
            else:
                for ptr in _pointer_writes(op):
                    if _shared(ptr):
                        root, offset = pointer_place(ptr)
                        size = dtype_of(ptr.type.element_type).bytes
                        hit = _overlap(pending, root, offset, size)
                        if hit is not None:
                            where = f" (the WGMMA operand of {hit[3]})" if hit[3] else ""
                            raise OpFailure(
                                op, f"{NAME}: {op.name} writes shared bytes {offset}.. of an "
                                f"allocation whose bytes {hit[1]}..{hit[2] - 1} a committed "
                                f"WGMMA group reads{where}, and no wait_mma has completed: the "
                                "stage is overwritten while the WGMMA may be reading it; "
                                "wait_mma before reusing it")
                for region in op.regions:
                    after = pending
                    for inner in region.blocks:
                        after = walk(inner, pending)
                    pending = pending + [g for g in after if g not in pending]
        return pending

    for fn in module.ops:
        for region in fn.regions:
            for block in region.blocks:
                walk(block, [])


def _blocks(module: ModuleOp):
    for op in module.walk():
        for region in op.regions:
            yield from region.blocks


@dataclass(frozen=True)
class InsertAsyncFences(ModulePass):
    """Fences between the generic and the async proxy, and their refusals (module docstring)."""

    name = NAME

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        _refuse_pending_reads(op)
        _refuse_overwrites(op)
        _insert_wgmma_fences(op)
        _insert_proxy_fences(op)
