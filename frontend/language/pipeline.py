"""`Pipeline`: the stage ring of a producer/consumer kernel over mbarriers.

``pipe = tylo.Pipeline(stages, consumers)`` allocates two barrier arrays: ``full[s]`` (count 1:
the producer's ``arrive_expect_tx`` plus the transaction bytes of its copies complete it) and
``empty[s]`` (count `consumers`: every consumer thread releases the stage).
``tylo.Pipeline(stages, consumers, cluster=k)`` in a kernel of k CTAs per cluster: the
consumers of every CTA release the stage on every CTA's empty[s] (count consumers x k; remote
arrives), the producer's wait on it acquires at cluster scope, and init ends with a
``cluster_sync`` (docs/kernel_language.md 12.5). A `PipelineState`
is (index, phase), two runtime Int32 values, carried through runtime loops like any tuple of
runtime values; ``state.advance()`` moves to the next stage and flips the phase on the wrap.

Producer, per tile: ``pipe.producer_acquire(state)`` (wait ``empty[index]`` with parity
``phase ^ 1``: on the first pass over the ring that is the "preceding" phase, complete at
once), ``pipe.producer_commit(state, tx_bytes)`` (``arrive_expect_tx`` on ``full[index]``),
copies that complete on ``pipe.full_barrier(state)``. Consumer: ``pipe.consumer_wait(state)``
(wait ``full[index]``, parity ``phase``), reads, ``pipe.consumer_release(state)`` (arrive on
``empty[index]``). Producer and consumers each keep their own state, both starting at
``pipe.start()`` (index 0, phase 0).
"""

from __future__ import annotations

import functools

from ...compiler.hardware import dtypes
from ...compiler.support.errors import GeometryError, TypeMismatchError
from ...compiler.layout.int_tuple import is_int
from ...dialects.scalars import Scalar, as_scalar, select
from .builtins import linear_thread_idx
from .cluster import cluster_ctas_now, cluster_sync
from .sync import barrier
from ..tracing.control_flow import if_
from .mbarrier import MAX_COUNT, MBarrier, fence_mbarrier_init, mbarriers


class PipelineState(tuple):
    """(index, phase) of a stage ring of `STAGES` stages: two runtime Int32 values. A tuple,
    so that runtime loops carry it (`frontend.tracing.carried`); ``state = state.advance()``."""

    STAGES = 0

    @property
    def index(self) -> Scalar:
        return self[0]

    @property
    def phase(self) -> Scalar:
        return self[1]

    def advance(self) -> "PipelineState":
        """The next stage: index + 1 modulo the stage count; the phase flips on the wrap."""
        index, phase = self
        if self.STAGES == 1:
            return type(self)((index, phase ^ 1))
        nxt = index + 1
        wrap = nxt == self.STAGES
        return type(self)((select(wrap, 0, nxt), select(wrap, phase ^ 1, phase)))


@functools.cache
def _state_class(stages: int) -> type:
    return type(f"PipelineState{stages}", (PipelineState,), {"STAGES": stages, "__slots__": ()})


class Pipeline:
    """A ring of `stages` stages between one producer and `consumers` consumer threads
    (module docstring). Raises GeometryError for a stage count outside 1 .. 64 or a consumer
    count outside 1 .. 2^20 - 1 (an mbarrier's arrival limit)."""

    def __init__(self, stages: int, consumers: int, cluster: int = 1):
        if not is_int(stages) or not 1 <= stages <= 64:
            raise GeometryError(f"Pipeline: stages {stages!r} must be a static int 1 .. 64")
        if not is_int(consumers) or not 1 <= consumers <= MAX_COUNT:
            raise GeometryError(f"Pipeline: consumers {consumers!r} must be a static int "
                                f"1 .. {MAX_COUNT} (the arrivals that release a stage)")
        ctas = cluster_ctas_now()
        if not is_int(cluster) or cluster not in (1, ctas):
            raise GeometryError(f"Pipeline: cluster={cluster!r} must be 1 or the kernel's "
                                f"{ctas} CTAs per cluster (@tylo.kernel(cluster=...))")
        if consumers * cluster > MAX_COUNT:
            raise GeometryError(f"Pipeline: {consumers} consumers x {cluster} CTAs exceed the "
                                f"{MAX_COUNT} arrivals of an mbarrier phase")
        self.stages, self.consumers, self.cluster = stages, consumers, cluster
        self.full = mbarriers(stages)
        self.empty = mbarriers(stages)

    def __repr__(self) -> str:
        per = f", a cluster of {self.cluster}" if self.cluster > 1 else ""
        return f"<Pipeline of {self.stages} stages, {self.consumers} consumers{per}>"

    def init(self) -> None:
        """Thread 0 (``linear_thread_idx() == 0``) initialises full[s] with count 1 and
        empty[s] with `consumers` (times the cluster's CTAs for a cluster pipeline), then
        ``fence.mbarrier_init``; a ``bar.sync`` (a `cluster_sync` for a cluster pipeline, whose
        peers arrive on these barriers) publishes the barriers before anyone uses them: every
        thread of the block (of the cluster) must call init."""
        def then():
            for s in range(self.stages):
                self.full[s].init(1)
                self.empty[s].init(self.consumers * self.cluster)
            fence_mbarrier_init()
            return ()

        if_(linear_thread_idx() == 0, then, lambda: (), (), ())
        if self.cluster > 1:
            cluster_sync()
        else:
            barrier()

    def start(self) -> PipelineState:
        """The state of the first tile: index 0, phase 0 (runtime values)."""
        return _state_class(self.stages)((as_scalar(0, dtypes.Int32), as_scalar(0, dtypes.Int32)))

    def _state(self, state) -> PipelineState:
        if not isinstance(state, PipelineState) or state.STAGES != self.stages:
            raise TypeMismatchError(f"{state!r} is not a PipelineState of this {self.stages}-stage "
                                    "pipeline (pipe.start(), then state.advance())")
        return state

    def _bar(self, bars, state) -> MBarrier:
        return bars[0] if self.stages == 1 else bars[self._state(state).index]

    def producer_acquire(self, state) -> None:
        """Wait until the consumers released stage ``state.index`` (empty, parity phase ^ 1;
        for a cluster pipeline the consumers of every CTA, acquired at cluster scope)."""
        scope = "cluster" if self.cluster > 1 else "cta"
        self._bar(self.empty, state).wait(self._state(state).phase ^ 1, scope)

    def producer_commit(self, state, tx_bytes) -> None:
        """Arrive on full[index] expecting `tx_bytes` of async copies (0: the producer filled
        the stage itself, before this call)."""
        self._bar(self.full, state).arrive_expect_tx(tx_bytes)

    def full_barrier(self, state) -> MBarrier:
        """full[index]: the barrier a `tma_load` into this stage completes on."""
        return self._bar(self.full, state)

    def empty_barrier(self, state) -> MBarrier:
        """empty[index]: the barrier a consumer's release of this stage arrives on (e.g. the
        tcgen05 commit of the MMAs that read it, `tylo.commit_mma`)."""
        return self._bar(self.empty, state)

    def consumer_wait(self, state) -> None:
        """Wait until stage ``state.index`` is full (parity phase)."""
        self._bar(self.full, state).wait(self._state(state).phase)

    def consumer_release(self, state, cta=None) -> None:
        """One consumer thread is done with stage ``state.index`` (arrive on empty[index]). In
        a cluster pipeline it arrives on empty[index] of every CTA of the cluster (each
        producer's next copy into the stage may write this CTA's copy of it: a multicast), or
        with `cta` (a rank) on that CTA's only."""
        bar = self._bar(self.empty, state)
        if cta is not None:
            bar.arrive(cta=cta)
        elif self.cluster > 1:
            for r in range(self.cluster):
                bar.arrive(cta=r)
        else:
            bar.arrive()


EXPORTS = (
    "Pipeline", "PipelineState",
)
"""Names this module adds to the `tylo` namespace (api/__init__.py finds them)."""

__all__ = ["Pipeline", "PipelineState"]
