"""tylo-plan-copies: fragment loads/stores become ldmatrix/stmatrix copies, else vector accesses.

Per access, in this order: ldmatrix/stmatrix (below), else ``ld/st.{global,shared}.v2/.v4``
(`plan_vectors`: the widest `vector_plan` grouping the tile's alignment proves), else the scalar
accesses `tylo-lower-fragments` emits for any ownership. A masked access (``bounds=``) is
never an ldmatrix/stmatrix, and a vector access only when no bound lies along the vector axis
(each vector is then inside or outside the bounds as a whole).

``tylo.load_fragment`` / ``tylo.store_fragment`` of a shared tile of 8- or 16-bit elements
become ``tylo.matrix_load`` / ``tylo.matrix_store`` when all of these hold (otherwise the op is
left alone and lowers to scalar accesses, which are correct for any ownership):

* the target runs the instruction: ldmatrix sm_75+, stmatrix sm_90+
  (`compiler.atoms.copy_atom.MATRIX_COPY_INSTRUCTIONS`; PTX ISA 9.7.14.5.15-16);
* the root tile's layout is static and exactly one of its two modes has a first stride of 1:
  that mode is `axis`, the axis memory stores contiguously (0 rows, 1 columns; zero-based);
* `matrix_copy_plan(ownership, dtype, axis)` gives a plan;
* every row a lane addresses is whole, contiguous and 16-byte aligned (PTX ISA 9.7.14.5.15,
  facts 2.2): checked element by element through the layout (swizzle included) for every warp,
  block and row at the windows' static origins (`copy_checks.broken_matrix_row`, the check of
  `validate_copy`), which needs the root pointer's alignment known (a ``tylo.shared_alloc`` of
  16 bytes or more, through ``tylo.ptr_add``s by constants or warp-uniform known multiples of
  16 bytes: `pointer_analysis.shared_alignment` with `warp_uniform`). A runtime window origin
  is allowed only along a mode that moves rows by whole 16-byte multiples without changing
  them (`runtime_origins_keep_rows`: no swizzle, a single-leaf mode, a stride of a multiple of
  16 bytes), e.g. a pipeline stage or warp offset across rows, never along the contiguous
  axis, and only when it is the same on every lane of a warp (`pointer_analysis.is_uniform`:
  the warp index ``%tid.x // 32`` is, a lane-dependent value is not), because a lane receives
  rows whose addresses other lanes supply; the window's own bounds check (unless
  ``inbounds``) guards the range;
* the copy is warp-uniform: the thread operand is ``tylo.thread_idx "x"`` (or that modulo a
  multiple of 32), so thread t is lane t % 32 of warp t // 32 when the block's x extent is a
  multiple of 32 or the block is one-dimensional, and the block is whole warps (the kernel's
  ``tylo.block``, when given); and
  every enclosing ``scf.if`` / ``scf.for`` has conditions and bounds that do not depend on the
  thread index (ldmatrix and stmatrix are ``.sync.aligned``: the whole warp executes them).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from ..compiler.atoms.copy_atom import ROW_BYTES, CopyAtom
from ..compiler.layout.offsets import offset_grid
from ..compiler.plans.copy_checks import broken_matrix_row, unit_stride_axis
from ..compiler.plans.matrix_copy import MatrixCopyPlan, matrix_copy_plan
from ..compiler.hardware.ptx_types import arch_number
from ..dialects.builder import kernel_block_shape
from ..dialects.locations import each_located
from ..dialects.tylo import TileType, dtype_of
from ..dialects.tylo.matrix_ops import MatrixLoadOp, MatrixStoreOp
from ..dialects.tylo.ops import (
    LoadFragmentOp,
    MakeTileOp,
    StoreFragmentOp,
    ThreadIdxOp,
    WindowOp,
)
from .analysis.pointer_analysis import constant, is_uniform, shared_alignment
from .analysis.target_option import TargetOption


def _tile_chain(tile: SSAValue):
    """(root make_tile, static sum of the windows' origins, axes with a runtime origin, the
    runtime origin values), or None when the tile does not come from make_tile through windows."""
    origin, runtime, values = [0, 0], set(), []
    owner = tile.owner
    while isinstance(owner, WindowOp):
        for axis, v in enumerate(owner.origin):
            c = constant(v)
            if c is None:
                runtime.add(axis)
                values.append(v)
            else:
                origin[axis] += c
        owner = owner.tile.owner
    if not isinstance(owner, MakeTileOp):
        return None
    return owner, (origin[0], origin[1]), runtime, values


def _unbounded(vector, op):
    """`vector` ((axis, width) or None) unless `op` has a bound along the vector axis: a masked
    access is vectorized only across its bounds (each vector then in or out as a whole)."""
    return None if vector is None or vector[0] in op.bounded_axes() else vector


def runtime_origins_keep_rows(layout, runtime: set, element_bytes: int) -> bool:
    """A runtime window origin along axis m moves every row by stride_m * m_origin elements, and
    keeps rows whole and 16-byte aligned, when the layout is linear in m (no swizzle, mode m one
    leaf) and stride_m is a multiple of 16 bytes (never the unit-stride axis of 8/16-bit data)."""
    if not runtime:
        return True
    if layout.swizzle is not None:
        return False
    for m in runtime:
        shape, stride = layout.shape[m], layout.stride[m]
        if isinstance(shape, tuple) or (stride * element_bytes) % ROW_BYTES:
            return False
    return True


def rows_are_whole(plan: MatrixCopyPlan, layout, origin, base_align: int, element_bytes: int) -> bool:
    """Every row any lane of any warp addresses, from the windows' static `origin`, is
    `ROW_BYTES` contiguous, aligned bytes inside the tile (`broken_matrix_row` finds none), and
    the root pointer is known to be `ROW_BYTES` aligned (`base_align`; 0: unknown)."""
    if base_align <= 0 or base_align % ROW_BYTES:
        return False
    return broken_matrix_row(plan, offset_grid(layout), element_bytes, origin) is None


# ---------------------------------------------------------------------------------------------
# Warp uniformity.


def _thread_is_lane_exact(v: SSAValue) -> bool:
    """`v` is %tid.x, or %tid.x modulo (or masked to) a multiple of 32."""
    op = v.owner
    if isinstance(op, ThreadIdxOp):
        return op.dim.data == "x"
    if isinstance(op, (arith.RemSIOp, arith.RemUIOp)):
        c = constant(op.rhs)
        return c is not None and c > 0 and c % 32 == 0 and _thread_is_lane_exact(op.lhs)
    if isinstance(op, arith.AndIOp):
        c = constant(op.rhs)
        return c is not None and c >= 31 and (c + 1) & c == 0 and _thread_is_lane_exact(op.lhs)
    return False


def _in_uniform_control(op: Operation) -> bool:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        if isinstance(parent, scf.IfOp):
            if not is_uniform(parent.cond):
                return False
        elif isinstance(parent, scf.ForOp):
            if not all(is_uniform(x) for x in (parent.lb, parent.ub, parent.step)):
                return False
        else:
            return False
        parent = parent.parent_op()
    return True


def _block_is_warp_aligned(op: Operation) -> bool:
    shape = kernel_block_shape(op)
    if shape is None:
        return True
    x, y, z = shape
    return (x * y * z) % 32 == 0 and (x % 32 == 0 or y * z == 1)


# ---------------------------------------------------------------------------------------------


def plan_matrix_copy(op: Operation, fragment, tile: SSAValue, thread: SSAValue, kind: str, arch: str):
    """(axis, plan) when fragment access `op` may become a matrix copy (module docstring)."""
    t: TileType = tile.type
    if t.space.data != "shared":
        return None
    dtype = dtype_of(t.element_type)
    if dtype.bits not in (8, 16) or arch_number(arch) < CopyAtom(kind).min_sm:
        return None
    chain = _tile_chain(tile)
    if chain is None:
        return None
    make, origin, runtime, runtime_values = chain
    layout = make.result.type.layout.data
    axis = unit_stride_axis(layout)
    if axis is None:
        return None
    plan = matrix_copy_plan(fragment.ownership.data, dtype, axis)
    if plan is None:
        return None
    if not (_thread_is_lane_exact(thread) and _block_is_warp_aligned(op) and _in_uniform_control(op)):
        return None
    if not all(is_uniform(v) for v in runtime_values):  # each lane supplies rows for others
        return None
    if not runtime_origins_keep_rows(layout, runtime, dtype.bytes):
        return None
    align = shared_alignment(make.pointer, warp_uniform=True)
    if not rows_are_whole(plan, layout, origin, align, dtype.bytes):
        return None
    return axis, plan


@dataclass(frozen=True)
class PlanCopies(TargetOption, ModulePass):
    """Plan fragment loads/stores as ldmatrix/stmatrix or vector accesses (module docstring)."""

    name = "tylo-plan-copies"

    arch: str = "sm_90a"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from ..dialects.tylo.copy_ops import VectorLoadOp, VectorStoreOp
        from .analysis.plan_vectors import plan_vector_copy

        for inner in each_located(list(op.walk())):
            if isinstance(inner, LoadFragmentOp):
                bounds = inner.bounds()
                found = None if inner.bounded_axes() else plan_matrix_copy(
                    inner, inner.result.type, inner.tile, inner.thread, "load", self.arch)
                if found is not None:
                    axis, plan = found
                    new = MatrixLoadOp(inner.tile, inner.thread, inner.result.type, axis, plan.trans)
                    Rewriter.replace_op(inner, new)
                elif (vector := _unbounded(plan_vector_copy(inner.result.type, inner.tile),
                                           inner)) is not None:
                    other = None if inner.other is None else inner.other.value.data
                    new = VectorLoadOp(inner.tile, inner.thread, inner.result.type, vector[1],
                                       vector[0], bounds, other)
                    Rewriter.replace_op(inner, new)
            elif isinstance(inner, StoreFragmentOp):
                found = None if inner.bounded_axes() else plan_matrix_copy(
                    inner, inner.fragment.type, inner.tile, inner.thread, "store", self.arch)
                if found is not None:
                    axis, plan = found
                    new = MatrixStoreOp(inner.fragment, inner.tile, inner.thread, axis, plan.trans)
                    Rewriter.replace_op(inner, new)
                elif (vector := _unbounded(plan_vector_copy(inner.fragment.type, inner.tile),
                                           inner)) is not None:
                    new = VectorStoreOp(inner.fragment, inner.tile, inner.thread, vector[1],
                                        vector[0], inner.bounds())
                    Rewriter.replace_op(inner, new)
