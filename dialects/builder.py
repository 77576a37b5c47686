"""Where kernel IR is emitted: an xDSL `Builder` that also knows the kernel it builds.

`KernelBuilder` is an xDSL `Builder` (an `InsertPoint` plus ``insert(op)``) carrying the two
static facts of the kernel its ops belong to: ``arch``, the target it compiles for (``"sm_90a"``,
``"sm_80"``, ...), and ``block_shape``, its threads per block along x, y, z (None when not known).
The scalar proxies (`tylo.dialects.scalars`) emit through the *current* builder of this context:
`KernelBuilder.active()` makes a builder current for the duration of a ``with``, `emit(op)` inserts
through it, `current_builder()` returns it.

Two kinds of callers make one current: the frontend's tracer (`tylo.frontend.tracing.tracing.Tracer`, a
subclass that appends to the kernel body and its control-flow regions) and passes that emit index
arithmetic in front of an op (`KernelBuilder.before(op, arch)`, whose block shape is read from the
enclosing kernel's ``tylo.block`` attribute, `kernel_block_shape`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr
from xdsl.ir import Operation
from xdsl.rewriter import InsertPoint

from ..compiler.support.errors import CompileError
from .locations import inherit, location_of

__all__ = ["BLOCK_ATTRIBUTE", "CLUSTER_ATTRIBUTE", "KernelBuilder", "current_builder", "current_builder_or_none", "emit",
           "kernel_block_shape", "kernel_cluster_shape", "LAUNCH_BOUNDS_ATTRIBUTES",
           "kernel_launch_bounds", "enclosing_kernel"]

#: The ``func.func`` attribute holding a kernel's block shape: ``array<i32: x, y, z>`` threads.
BLOCK_ATTRIBUTE = "tylo.block"
#: The ``func.func`` attribute holding a kernel's cluster shape: ``array<i32: x, y, z>`` CTAs.
CLUSTER_ATTRIBUTE = "tylo.cluster"
#: The ``func.func`` attributes of `tylo.launch_bounds` (i32), by the PTX directive each gives.
LAUNCH_BOUNDS_ATTRIBUTES = {"minnctapersm": "tylo.minnctapersm", "maxnreg": "tylo.maxnreg"}

_current: ContextVar["KernelBuilder | None"] = ContextVar("tylo_kernel_builder", default=None)


@dataclass(eq=False, kw_only=True)
class KernelBuilder(Builder):
    """An xDSL `Builder` with the kernel's target and block shape (see the module docstring).

    arch: the PTX target, e.g. ``"sm_90a"`` (FP8 conversions and the builtins check it).
    block_shape: threads per block ``(x, y, z)``, or None when the kernel does not say.
    """

    arch: str
    block_shape: tuple[int, int, int] | None = None

    @classmethod
    def before(cls, op: Operation, arch: str) -> "KernelBuilder":
        """A builder that inserts in front of `op`, for a kernel compiled for `arch`; its block
        shape is the enclosing kernel's (`kernel_block_shape`), and what it inserts takes `op`'s
        location (`tylo.dialects.locations`)."""
        builder = cls(InsertPoint.before(op), arch=arch, block_shape=kernel_block_shape(op))
        loc = location_of(op)
        if loc is not None:
            builder.operation_insertion_handler.append(lambda new: inherit(new, loc))
        return builder

    @contextmanager
    def active(self) -> Iterator["KernelBuilder"]:
        """Make this the current builder (`emit` inserts through it) inside the ``with``."""
        token = _current.set(self)
        try:
            yield self
        finally:
            _current.reset(token)


def current_builder() -> KernelBuilder:
    """The current builder; raises CompileError when no kernel IR is being built."""
    builder = _current.get()
    if builder is None:
        raise CompileError(
            "this Tylo operation records kernel IR and can only be used inside a @tylo.kernel "
            "function while it is compiled"
        )
    return builder


def current_builder_or_none() -> KernelBuilder | None:
    """The current builder, or None outside of one."""
    return _current.get()


def emit(op: Operation) -> Operation:
    """Insert `op` through the current builder and return it."""
    return current_builder().insert(op)


def enclosing_kernel(op: Operation) -> func.FuncOp | None:
    """The ``func.func`` that is or encloses `op`, or None."""
    fn = op
    while fn is not None and not isinstance(fn, func.FuncOp):
        fn = fn.parent_op()
    return fn


def kernel_block_shape(op: Operation) -> tuple[int, int, int] | None:
    """The ``tylo.block`` shape (x, y, z threads) of the ``func.func`` that is or encloses `op`,
    or None when there is none or it has no such attribute."""
    fn = enclosing_kernel(op)
    attr = fn.attributes.get(BLOCK_ATTRIBUTE) if fn is not None else None
    if not isinstance(attr, DenseArrayBase):
        return None
    return tuple(attr.get_values())


def kernel_cluster_shape(fn: func.FuncOp) -> tuple[int, int, int] | None:
    """The ``tylo.cluster`` shape (x, y, z CTAs) of kernel `fn`, or None without one."""
    attr = fn.attributes.get(CLUSTER_ATTRIBUTE)
    return tuple(attr.get_values()) if isinstance(attr, DenseArrayBase) else None


def kernel_launch_bounds(fn: func.FuncOp) -> dict[str, int]:
    """The `tylo.launch_bounds` directives of kernel `fn`: {"minnctapersm": n, "maxnreg": r},
    each present only when set."""
    out = {}
    for directive, name in LAUNCH_BOUNDS_ATTRIBUTES.items():
        attr = fn.attributes.get(name)
        if isinstance(attr, IntegerAttr):
            out[directive] = attr.value.data
    return out
