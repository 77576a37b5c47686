"""Facts about ops, declared on the op classes as xDSL traits, that passes and the emulator query.

A fact that used to live in a list inside a pass (the shared-memory writers and async readers of
`tylo-insert-async-fences`, the emulator's warp collectives and pending-register ops) is a trait
of the op here, so a new op states it where it is defined, and the verifier refuses an op whose
facts contradict each other:

* `MemoryAccess`: the op reads or writes (or atomically updates) memory of one state space
  through one proxy. PTX ISA 8 "Memory Consistency Model" (8.2 "Memory operations", 8.3 "State
  spaces", 8.6 "Proxies"): generic loads and stores access memory through the *generic
  proxy*; the bulk copies and tensor copies (TMA, 9.7.9.25 ``cp.async.bulk(.tensor)``), the
  ``wgmma.mma_async`` operand reads from shared memory (9.7.15.5.2) and ``tcgen05.mma``'s
  (9.7.16.10) go through the *async proxy*, and a generic write is seen by an async-proxy access
  of the same bytes only after a proxy fence (9.7.13.4 ``fence.proxy.async``).
* `Collective`: a ``.sync.aligned`` instruction executed by every thread of a warp together, or
  of a warpgroup (4 consecutive warps, the first a multiple of 4; 9.7.15.2 "Warpgroup").
* `AsyncCompletion`: the op starts work that completes later, at one of the ops it names (a
  wait on a commit group, an mbarrier wait; 9.7.15.7 ``wgmma.wait_group``, 9.7.9.25.x
  ``cp.async.wait_group`` / ``cp.async.bulk.wait_group``, 9.7.13.15 mbarrier ``complete_tx``,
  9.7.16.8.x ``tcgen05.wait``).
* `PendingRegisterAccess`: the op may read or write registers that a pending asynchronous
  operation (an unfinished ``wgmma.mma_async``, ``tcgen05.ld``) still writes, as the ISA allows
  (9.7.15.5.2: the accumulator is handed on among wgmma ops; 9.7.16.8.x); any other op touching
  them before the wait is refused (the emulator's scheduler, `Machine.pending_registers`).

Verifier rules (`OpTrait.verify`, run by every ``op.verify()``):

* an op that declares an async-proxy `MemoryAccess` declares `AsyncCompletion` too (an
  asynchronous memory operation without the op that completes it cannot be ordered by any pass);
* an op that declares no memory effect (xDSL's ``Pure`` / ``NoMemoryEffect``) declares no
  memory access, collective or asynchronous completion: those are effects a pass that moves or
  removes side-effect-free ops (CSE, `tylo-hoist-invariants`) must not ignore.

Why `MemoryAccess` is not an xDSL ``MemoryEffect``: xDSL's CSE merges two ops whose only effects
are reads when no op with a write effect lies between them in the block, and its dead-code
elimination drops an unused read-only op. Declaring loads as reads would let both act on every
load (an unused out-of-bounds load would no longer fault in the emulator, and the PTX would
change), which is a decision of its own, not part of stating the facts. So the access facts are
read through `memory_effects`, which gives xDSL ``EffectInstance``s whose resource is the
`StateSpace` (space and proxy) and whose value is the address operand, while xDSL's own
``get_effects`` keeps seeing these ops as of unknown effect.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue
from xdsl.traits import (
    EffectInstance,
    MemoryEffect,
    MemoryEffectKind,
    OpTrait,
    Resource,
)
from xdsl.utils.exceptions import VerifyException

READ, WRITE, ATOMIC = "read", "write", "atomic"
"""Access kinds: a read, a write, an atomic read-modify-write (PTX ISA 8.7 "Morally strong
operations": ``atom``/``red`` are atomic, plain ``ld``/``st`` are not; the mbarrier operations,
9.7.13.15, update their object only through mbarrier instructions and count as atomic here)."""
KINDS = (READ, WRITE, ATOMIC)

GENERIC, ASYNC = "generic", "async"
"""PTX ISA 8.6 "Proxies": the generic proxy (ordinary loads and stores, ``cp.async``) and the
async proxy (``cp.async.bulk``, ``wgmma`` and ``tcgen05.mma`` operand reads)."""
PROXIES = (GENERIC, ASYNC)

SPACES = ("global", "shared", "shared::cluster", "local", "param", "tensor")
"""State spaces an access names (PTX ISA 5.1): ``shared`` is the CTA's own (``.shared::cta``),
``shared::cluster`` another CTA's of the cluster, ``tensor`` the tensor memory of tcgen05
(9.7.16.2 "Tensor Memory")."""


@dataclass(frozen=True)
class StateSpace(Resource):
    """The resource of an effect (xDSL ``Resource``): a state space seen through a proxy."""

    space: str | None  # None: not known from the op alone (a generic address)
    proxy: str

    def name(self) -> str:
        return f"{self.space or 'generic address'}/{self.proxy}"


def _flag(op: Operation, name: str) -> bool:
    """Whether `op` has property `name` set: a unit attribute present, an integer one not 0."""
    attr = op.properties.get(name)
    value = getattr(attr, "value", None)
    return attr is not None and (value is None or bool(value.data))


def _data(attr) -> str:
    data = attr.data
    return getattr(data, "value", data)


@dataclass(frozen=True)
class MemoryAccess(OpTrait):
    """The op reads, writes or atomically updates memory (module docstring).

    kind: `READ`, `WRITE` or `ATOMIC`.
    space: a state space of `SPACES`, or None when the op's own says: its address operand's type
      (a tylo pointer or tile, whose ``space``) or its ``space`` property (ptx memory ops).
    proxy: `GENERIC` or `ASYNC`.
    operand: the name of the operand holding the address (a pointer, a tile, a register, a
      matrix descriptor), or None when the op has none (an access at a fixed place).
    descriptor: the operand is a wgmma/tcgen05 matrix descriptor that encodes the address
      (PTX ISA 9.7.15.5.1 "Matrix Descriptor").
    when, unless: the access happens only when the op has (`when`) or lacks (`unless`) the named
      property (``tcgen05.mma`` reads A from shared memory unless ``a_tmem``).
    """

    kind: str
    space: str | None = None
    proxy: str = GENERIC
    operand: str | None = None
    descriptor: bool = False
    when: str | None = None
    unless: str | None = None

    def applies(self, op: Operation) -> bool:
        """Whether this access happens for `op` (its `when` / `unless` properties)."""
        if self.when is not None and not _flag(op, self.when):
            return False
        return self.unless is None or not _flag(op, self.unless)

    def address(self, op: Operation) -> SSAValue | None:
        """The operand holding the address, or None."""
        return None if self.operand is None else getattr(op, self.operand)

    def space_of(self, op: Operation) -> str | None:
        """The state space accessed: the declared one, else the address operand's type's or
        the op's ``space`` property; None when neither says."""
        if self.space is not None:
            return self.space
        address = self.address(op)
        space = getattr(address.type, "space", None) if address is not None else None
        if space is None:
            space = op.properties.get("space")
        return None if space is None else _data(space)

    def effect(self, op: Operation) -> EffectInstance:
        """The access as an xDSL effect: an atomic update is a write (it also reads)."""
        kind = MemoryEffectKind.READ if self.kind == READ else MemoryEffectKind.WRITE
        return EffectInstance(kind, self.address(op), StateSpace(self.space_of(op), self.proxy))

    def verify(self, op: Operation) -> None:
        where = f"{op.name}: MemoryAccess"
        if self.kind not in KINDS or self.proxy not in PROXIES:
            raise VerifyException(f"{where} kind {self.kind!r} / proxy {self.proxy!r}: kinds "
                                  f"are {KINDS}, proxies {PROXIES}")
        if self.space is not None and self.space not in SPACES:
            raise VerifyException(f"{where} space {self.space!r} is not one of {SPACES}")
        if self.operand is not None and not hasattr(op, self.operand):
            raise VerifyException(f"{where} names operand {self.operand!r}, which the op lacks")
        if self.proxy == ASYNC and not op.has_trait(AsyncCompletion):
            raise VerifyException(
                f"{op.name} accesses {self.space or 'memory'} through the async proxy but "
                "declares no AsyncCompletion (the op that completes it, tylo.dialects.facts): "
                "without it no pass can order the access")
        _refuse_pure(op, "a memory access")


@dataclass(frozen=True)
class Collective(OpTrait):
    """A ``.sync.aligned`` instruction: every thread of `warps` consecutive warps executes it
    together (1: a warp; 4: a warpgroup, the first warp a multiple of 4, PTX ISA 9.7.15.2). The
    emulator issues it for whole warps (warpgroups) only and refuses one some lanes miss."""

    warps: int = 1

    def verify(self, op: Operation) -> None:
        if self.warps not in (1, 4):
            raise VerifyException(f"{op.name}: Collective over {self.warps} warps; collectives "
                                  "span a warp (1) or a warpgroup (4)")
        _refuse_pure(op, "a collective")


@dataclass(frozen=True)
class AsyncCompletion(OpTrait):
    """The op's effects complete asynchronously, at one of the ops named (by op name) in
    `completed_by`: the wait of its commit group, or the mbarrier wait that observes its
    transaction count (module docstring). `committed_by` names the op that closes the group of
    such ops the wait counts (``wgmma.commit_group``, ``cp.async.commit_group``, PTX ISA
    9.7.15.6, 9.7.9.25.3.1), None when the completion is tracked otherwise (an mbarrier's
    transaction count, 9.7.13.15.16; ``tcgen05.wait``)."""

    completed_by: tuple[str, ...]
    committed_by: str | None = None

    def verify(self, op: Operation) -> None:
        if not self.completed_by:
            raise VerifyException(f"{op.name}: AsyncCompletion names no op that completes it")
        _refuse_pure(op, "an asynchronous completion")


@dataclass(frozen=True)
class PendingRegisterAccess(OpTrait):
    """The op may read or write registers a pending asynchronous operation still writes (the
    wgmma ops hand the accumulator on in hardware order, PTX ISA 9.7.15.5.2; ``tcgen05.wait``
    ends a ``tcgen05.ld``, 9.7.16.8.x). The emulator refuses any other op touching them."""


def _refuse_pure(op: Operation, what: str) -> None:
    for trait in op.get_traits_of_type(MemoryEffect):
        if trait.get_effects(op) == set():
            raise VerifyException(f"{op.name} declares no memory effect ({type(trait).__name__}) "
                                  f"and {what}: passes would move or drop it")


# -- queries ------------------------------------------------------------------------------------
def memory_accesses(op: Operation, kind: str | None = None, proxy: str | None = None
                    ) -> list[MemoryAccess]:
    """The `MemoryAccess` facts of `op` that apply to it, of `kind` and `proxy` when given."""
    return [t for t in op.get_traits_of_type(MemoryAccess)
            if t.applies(op) and kind in (None, t.kind) and proxy in (None, t.proxy)]


def memory_effects(op: Operation) -> set[EffectInstance]:
    """`op`'s memory accesses as xDSL effects (resource: `StateSpace`, value: the address)."""
    return {t.effect(op) for t in memory_accesses(op)}


def collective_warps(op: Operation) -> int:
    """The warps `op` is collective over (`Collective`), 0 for a per-thread op."""
    trait = op.get_trait(Collective)
    return 0 if trait is None else trait.warps


def completion(op: Operation) -> AsyncCompletion | None:
    """`op`'s `AsyncCompletion`, or None for an op whose effects are done when it is."""
    return op.get_trait(AsyncCompletion)


def completed_by(op: Operation) -> tuple[str, ...]:
    """The names of the ops that complete `op`'s asynchronous effects (empty: synchronous)."""
    trait = completion(op)
    return () if trait is None else trait.completed_by


def accesses_pending_registers(op: Operation) -> bool:
    """Whether `op` may touch registers of a pending asynchronous op (`PendingRegisterAccess`)."""
    return op.has_trait(PendingRegisterAccess)


__all__ = [
    "ASYNC", "ATOMIC", "GENERIC", "KINDS", "PROXIES", "READ", "SPACES", "WRITE",
    "AsyncCompletion", "Collective", "MemoryAccess", "PendingRegisterAccess", "StateSpace",
    "accesses_pending_registers", "collective_warps", "completed_by", "completion",
    "memory_accesses", "memory_effects",
]
