"""mbarriers, fences and the producer/consumer stage ring (`Pipeline`) while a kernel is traced.

``bars = tylo.mbarriers(n)`` allocates n mbarriers in static shared memory (8 bytes each, 8-byte
aligned); ``bars[i]`` (i static or a runtime Int32) is an `MBarrier`. Its operations, also
module functions taking the barrier first (``tylo.mbarrier_arrive(bar)``), record one PTX
instruction each (PTX ISA 9.7.13.15, sm_90 forms):

* ``bar.init(count)``: ``mbarrier.init.shared::cta.b64`` (count 1 .. 2^20 - 1, checked here when
  static); publish it with ``tylo.fence_mbarrier_init()`` and a ``tylo.barrier()``;
* ``bar.arrive()``, ``bar.arrive_expect_tx(nbytes)``, ``bar.expect_tx(nbytes)``;
  (init, arrive and expect_tx are recorded as their ptx ops directly, `tylo.dialects.direct`,
  after the target is checked here: UnsupportedError below sm_90)
* ``bar.try_wait(parity)`` -> Bool (whether the phase of that parity, 0 or 1, has completed);
* ``bar.wait(parity)``: try_wait in a loop (PTX blocks, not a Python-level loop).

``tylo.fence_proxy_async()`` is ``fence.proxy.async.shared::cta`` (generic shared writes before
it are visible to async-proxy reads after it: TMA stores, wgmma), ``tylo.fence_mbarrier_init()``
is ``fence.mbarrier_init.release.cluster`` (PTX ISA 9.7.13.4).
"""

from __future__ import annotations

from ...compiler.hardware import dtypes
from ...compiler.layout.dynamic import static_hint
from ...compiler.support.errors import GeometryError, TypeMismatchError, UnsupportedError
from ...compiler.layout.int_tuple import is_int
from ...compiler.hardware.ptx_types import arch_number
from ...dialects import direct
from ...dialects.builder import emit
from ...dialects.ptx.mbarrier import (
    MbarrierArriveExpectTxOp, MbarrierArriveOp, MbarrierExpectTxOp, MbarrierInitOp,
)
from ...dialects.scalars import Scalar
from ...dialects.tylo.cluster_ops import MBarrierArriveClusterOp
from ...dialects.tylo.mbarrier_ops import FenceOp, MBarrierTryWaitOp, MBarrierWaitOp
from .tiles import Pointer, _index, shared_alloc
from ..tracing.tracing import current

MAX_COUNT = (1 << 20) - 1
"""Largest arrival count and transaction byte count of a phase (PTX ISA 9.7.13.15.1)."""


def _amount(x, what: str, low: int) -> Scalar:
    """An Int32 operand in low .. 2^20 - 1 (checked when static)."""
    if is_int(x) and not isinstance(x, bool):
        if not low <= x <= MAX_COUNT:
            raise GeometryError(f"{what} {x} must be {low} .. {MAX_COUNT} (2^20 - 1, the limit "
                                "of an mbarrier phase, PTX ISA 9.7.13.15.1)")
    return Scalar(_index(x, what), dtypes.Int32)


def _parity(parity) -> Scalar:
    if is_int(parity) and parity not in (0, 1):
        raise GeometryError(f"mbarrier parity {parity!r} must be 0 or 1 (the phase's parity)")
    return Scalar(_index(parity, "mbarrier parity"), dtypes.Int32)


def _scope(scope: str) -> str | None:
    if scope not in ("cta", "cluster"):
        raise GeometryError(f"mbarrier wait scope {scope!r} must be 'cta' or 'cluster'")
    return None if scope == "cta" else "cluster"


def _require_sm90(instruction: str) -> None:
    arch = current().arch
    if arch_number(arch) < 90:
        raise UnsupportedError(f"{instruction} needs sm_90 or later; the target is {arch}")


class MBarrier:
    """One mbarrier: a shared pointer to its 8 bytes (`pointer`)."""

    __slots__ = ("pointer",)

    def __init__(self, pointer: Pointer):
        if not (isinstance(pointer, Pointer) and pointer.space == "shared"
                and pointer.dtype.bytes == 8):
            raise TypeMismatchError(f"an mbarrier is a shared pointer to 8-byte elements, got "
                                    f"{pointer!r}")
        self.pointer = pointer

    def __repr__(self) -> str:
        return "<mbarrier>"

    def init(self, count) -> None:
        """``mbarrier.init``: `count` arrivals complete a phase (1 .. 2^20 - 1); phase 0."""
        count = _amount(count, "mbarrier count", 1)
        _require_sm90("mbarrier.init")
        direct.instruction(lambda regs, out: MbarrierInitOp(*regs), [self.pointer.value, count], [])

    def arrive(self, cta=None) -> None:
        """``mbarrier.arrive``: one arrival on the current phase (release, CTA scope). With
        `cta` (a CTA rank of the cluster, static or runtime Int32): the arrival is on the
        barrier at this barrier's offset in that CTA (``mapa`` + ``mbarrier.arrive.release.
        cluster.shared::cluster``, PTX ISA 9.7.13.15.13; the rank may be this CTA's own), and
        the waits that pair with it need ``scope="cluster"``."""
        if cta is None:
            _require_sm90("mbarrier.arrive")
            direct.instruction(lambda regs, out: MbarrierArriveOp(regs[0]), [self.pointer.value], [])
            return
        from .cluster import _sm90, check_rank

        check_rank(cta, "mbarrier arrive")
        _sm90("a remote mbarrier arrive")
        emit(MBarrierArriveClusterOp(self.pointer.value, _index(cta, "mbarrier arrive cta")))

    def arrive_expect_tx(self, nbytes) -> None:
        """``mbarrier.arrive.expect_tx``: expect `nbytes` more transaction bytes (what the async
        copies completing on this phase deliver), then arrive once."""
        self._expect_tx(MbarrierArriveExpectTxOp, nbytes)

    def expect_tx(self, nbytes) -> None:
        """``mbarrier.expect_tx``: expect `nbytes` more transaction bytes, without arriving."""
        self._expect_tx(MbarrierExpectTxOp, nbytes)

    def _expect_tx(self, cls, nbytes) -> None:
        tx = _amount(nbytes, "transaction bytes", 0)
        _require_sm90(cls.MNEMONIC)
        direct.instruction(lambda regs, out: cls(*regs), [self.pointer.value, tx], [])

    def try_wait(self, parity, scope: str = "cta") -> Scalar:
        """``mbarrier.try_wait.parity``: a Bool, whether the phase of `parity` (0 or 1, static
        or runtime) has completed (acquire, CTA scope; ``scope="cluster"``:
        ``.acquire.cluster``, which a phase that other CTAs arrive on needs)."""
        op = emit(MBarrierTryWaitOp(self.pointer.value, _parity(parity).value, _scope(scope)))
        return Scalar(op.results[0], dtypes.Bool)

    def wait(self, parity, scope: str = "cta") -> None:
        """Wait until the phase of `parity` has completed (try_wait in a PTX loop); `scope` as
        for `try_wait`."""
        emit(MBarrierWaitOp(self.pointer.value, _parity(parity).value, _scope(scope)))


class MBarriers:
    """`n` mbarriers in one shared allocation; ``bars[i]`` is barrier i, ``len(bars)`` n."""

    __slots__ = ("pointer", "n")

    def __init__(self, pointer: Pointer, n: int):
        self.pointer, self.n = pointer, n

    def __len__(self) -> int:
        return self.n

    def __repr__(self) -> str:
        return f"<{self.n} mbarriers>"

    def __getitem__(self, i) -> MBarrier:
        if is_int(i) and not 0 <= i < self.n:
            raise GeometryError(f"mbarrier index {i} is outside the {self.n} barriers")
        return MBarrier(self.pointer if is_int(i) and i == 0 else self.pointer + i)


def mbarriers(n: int) -> MBarriers:
    """Allocate `n` mbarriers (static shared memory, 8 bytes each, 8-byte aligned). Raises
    GeometryError unless n is a positive static int."""
    if not is_int(n) or n <= 0:
        raise GeometryError(f"mbarriers({n!r}): the count must be a positive static int"
                            f"{static_hint(n, 'the count')}")
    return MBarriers(shared_alloc(dtypes.UInt64, n, align=8), n)


def _barrier(bar) -> MBarrier:
    if not isinstance(bar, MBarrier):
        raise TypeMismatchError(f"{bar!r} is not an mbarrier (tylo.mbarriers(n)[i])")
    return bar


def mbarrier_init(bar, count) -> None:
    """`MBarrier.init` as a function."""
    _barrier(bar).init(count)


def mbarrier_arrive(bar, cta=None) -> None:
    """`MBarrier.arrive` as a function."""
    _barrier(bar).arrive(cta)


def mbarrier_arrive_expect_tx(bar, nbytes) -> None:
    """`MBarrier.arrive_expect_tx` as a function."""
    _barrier(bar).arrive_expect_tx(nbytes)


def mbarrier_expect_tx(bar, nbytes) -> None:
    """`MBarrier.expect_tx` as a function."""
    _barrier(bar).expect_tx(nbytes)


def mbarrier_try_wait(bar, parity, scope: str = "cta") -> Scalar:
    """`MBarrier.try_wait` as a function."""
    return _barrier(bar).try_wait(parity, scope)


def mbarrier_wait(bar, parity, scope: str = "cta") -> None:
    """`MBarrier.wait` as a function."""
    _barrier(bar).wait(parity, scope)


def fence_proxy_async(space: str = "shared") -> None:
    """A bidirectional proxy fence between this thread's generic-proxy and async-proxy memory
    accesses (PTX ISA 9.7.13.4 membar/fence, "fence.proxy.proxykind"), sm_90: `space` "shared"
    is ``fence.proxy.async.shared::cta`` (generic shared-memory writes before it visible to
    async-proxy reads after it: a TMA store's source, wgmma operands); "global" is
    ``fence.proxy.async.global`` (global memory: e.g. after acquiring a flag that another CTA
    released once its TMA reductions completed, before this thread's own TMA reductions into
    the same rows). UnsupportedError for another space."""
    if space not in ("shared", "global"):
        raise UnsupportedError(f"fence_proxy_async(space={space!r}): 'shared' or 'global' (the "
                               "state spaces of fence.proxy.async, PTX ISA 9.7.13.4)")
    emit(FenceOp("proxy_async" if space == "shared" else "proxy_async_global"))


def fence_mbarrier_init() -> None:
    """``fence.mbarrier_init.release.cluster``: releases this thread's prior mbarrier.init."""
    emit(FenceOp("mbarrier_init"))


EXPORTS = (
    "MBarrier", "MBarriers", "mbarriers", "mbarrier_init", "mbarrier_arrive",
    "mbarrier_arrive_expect_tx", "mbarrier_expect_tx", "mbarrier_try_wait", "mbarrier_wait",
    "fence_proxy_async", "fence_mbarrier_init",
)
"""Names this module adds to the `tylo` namespace (api/__init__.py finds them)."""

__all__ = ["MBarrier", "MBarriers", "mbarriers", "mbarrier_init", "mbarrier_arrive",
           "mbarrier_arrive_expect_tx", "mbarrier_expect_tx", "mbarrier_try_wait",
           "mbarrier_wait", "fence_proxy_async", "fence_mbarrier_init"]
