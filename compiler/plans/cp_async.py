"""CopyPlan: a tile's 16-byte vectors distributed over threads for ``cp.async`` copies.

``CopyPlan(shape, threads, axis, dtype)``: the (rows, cols) tile of `dtype` elements is cut into
vectors of 16 bytes (``16 / sizeof(dtype)`` elements) running along logical `axis` (0 = rows,
1 = columns; Julia Tylo's axes 1 and 2). Vector v (zero-based) is number ``v % q`` along the axis
and ``v // q`` across it, q being the vectors per line along the axis; thread t copies vectors
``t + threads * i`` for i in ``range(vectors_per_thread)``, so consecutive threads take
consecutive vectors of a line (coalesced global reads when `axis` is the global unit-stride
axis). Every thread copies the same number of vectors: partial coverage is rejected, so every
thread issues the same instruction sequence.

One vector is one ``cp.async.cg.shared.global [dst], [src], 16`` (PTX ISA 9.7.9.25.3.1
"cp.async", anchor #data-movement-and-conversion-instructions-cp-async: sm_80+, ``.cg`` copies
exactly 16 bytes; as for every PTX memory access both addresses must be aligned to that
size). `validate_copy` checks a plan against the destination and source layouts on the host.
The thread count need not be a multiple of 32: cp.async is a per-thread instruction.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..hardware.dtypes import DType
from ..support.errors import GeometryError, PlanError
from ..layout.int_tuple import is_int, require_axis

#: Bytes one cp.async vector moves.
VECTOR_BYTES = 16


@dataclass(frozen=True)
class CopyPlan:
    """16-byte vectors of a static (rows, cols) tile over `threads` threads, along `axis`.

    `line_steps` (static bool, default False): how `origin` writes a runtime thread's
    coordinates when `threads` is a multiple of the vectors per line: as vector 0's line plus a
    constant per vector (True: the addresses are one base plus constants that ptxas folds into
    the instructions; the mma.sync GEMM's K loop lost an IMAD per copy with it) or from
    ``thread + threads * i`` (False). The values are the same; ptxas schedules the two forms
    differently: on the H200 the d128 streaming attention ran 20% slower with True (its
    softmax no longer interleaved with the P V HMMAs), hence the default.

    Raises GeometryError when shape is not two positive ints or its extent along `axis` is not
    a multiple of 16 bytes; PlanError when threads is not a positive int, axis not 0 or 1,
    dtype not a DType, or the vector count is not a multiple of threads.
    """

    shape: tuple[int, int]
    threads: int
    axis: int
    dtype: DType
    line_steps: bool = False

    def __post_init__(self):
        shape = tuple(self.shape) if isinstance(self.shape, (tuple, list)) else self.shape
        if not (isinstance(shape, tuple) and len(shape) == 2
                and all(is_int(s) and s > 0 for s in shape)):
            raise GeometryError(f"CopyPlan: shape {self.shape!r} must be two positive static ints")
        object.__setattr__(self, "shape", shape)
        if not (is_int(self.threads) and self.threads > 0):
            raise PlanError(f"CopyPlan: threads {self.threads!r} must be a positive int")
        object.__setattr__(self, "axis", require_axis(self.axis, "CopyPlan", PlanError))
        if not isinstance(self.dtype, DType):
            raise PlanError(f"CopyPlan: dtype {self.dtype!r} is not a DType")
        if not isinstance(self.line_steps, bool):
            raise PlanError(f"CopyPlan: line_steps {self.line_steps!r} must be True or False")
        extent = shape[self.axis]
        if extent * self.dtype.bytes % VECTOR_BYTES:
            raise GeometryError(
                f"CopyPlan: shape[{self.axis}] = {extent} elements of {self.dtype} is "
                f"{extent * self.dtype.bytes} bytes, not a multiple of {VECTOR_BYTES}-byte vectors")
        if self.vectors % self.threads:
            raise PlanError(
                f"CopyPlan: {self.vectors} vectors of {VECTOR_BYTES} bytes do not divide evenly "
                f"over threads = {self.threads}")

    @property
    def elements_per_vector(self) -> int:
        return VECTOR_BYTES // self.dtype.bytes

    @property
    def vectors(self) -> int:
        """Vectors in the whole tile."""
        return self.shape[0] * self.shape[1] // self.elements_per_vector

    @property
    def vectors_per_thread(self) -> int:
        return self.vectors // self.threads

    def origin(self, thread, i: int):
        """Logical (row, col) of the first element of vector `i` of `thread`; its elements run
        along `axis` from there. `thread` may be a runtime value (it meets only + // %, and
        must be >= 0). When `threads` is a multiple of the vectors per line, vector i of a
        thread sits `threads / q * i` lines below its vector 0, at the same place along the line:
        with `line_steps` the coordinates are written so, a constant apart, which keeps a
        runtime thread's addresses one base plus constants (class docstring)."""
        n = self.elements_per_vector
        q = self.shape[self.axis] // n
        if self.line_steps and self.threads % q == 0:  # whole lines per round: t's place in its line is i's too
            along, across = thread % q * n, thread // q + self.threads // q * i
            return (across, along) if self.axis == 1 else (along, across)
        v = thread + self.threads * i if i else thread
        along, across = v % q * n, v // q
        return (across, along) if self.axis == 1 else (along, across)
