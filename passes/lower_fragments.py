"""tylo-lower-fragments: expand every fragment into one scalar per slot, by its ownership.

A fragment value becomes the list of its slot values (slot v of this thread holds the element at
``ownership(thread, v)``); every register index is static, so no runtime register indexing can
arise. Per op:

* ``tylo.load_fragment`` / ``tylo.store_fragment``: one ``tylo.load_element`` /
  ``tylo.store_element`` per slot at the slot's coordinate. When the ownership is separable
  (coordinate = thread base + static slot offset) the thread's base coordinate is computed once.
* ``tylo.matrix_load`` / ``tylo.matrix_store``: one ``tylo.ldmatrix`` / ``tylo.stmatrix`` per
  instruction of the op's `MatrixCopyPlan`, addressed at the row this lane supplies (computed
  from the lane's bits, see `lane_expression`); register j of instruction i carries the slots
  ``plan.register_slots(i)[j]``, low element first.
* ``tylo.vector_load`` / ``tylo.vector_store``: one ``tylo.ld_vector`` / ``tylo.st_vector``
  per group of the op's `VectorPlan` (`fragments.copies`).
* ``tylo.splat``: every slot is the splatted value; ``tylo.slot`` reads one slot;
  ``tylo.from_slots`` (a planned reduction's result) is its operands.
* ``tylo.map``: the body is cloned once per slot.
* ``tylo.mma``: one ``tylo.mma_sync`` per atom of the plan, fed by the atom's slots (the words
  of Int4, UInt4 and Bit1 A and B: `TiledMMA.operand_slots`).
* ``tylo.take_slots`` (renaming only), ``tylo.pack`` / ``tylo.unpack`` (one word op per
  32-bit word): `fragments.fragment_ops`; wgmma and tcgen05: `fragments.wgmma`, `fragments.tcgen05`.
* ``scf.for`` / ``scf.if`` / ``scf.while`` carrying fragments carry their slots instead.

Handlers are found by op class (`fragments.handlers.HANDLERS`, an `OpTable`: this module's
methods and the functions of the modules of passes/fragments/, each called with the pass state,
`_Lowering`), so ``tylo.yield`` (consumed by its ``tylo.map``)
never meets the handler of ``scf.yield``. Coordinates and lane expressions are built with the
scalar proxies (`tylo.dialects.scalars`) in front of the op, folding static terms as tracing
does. Option: ``arch`` (the target, default sm_90a), which the scalar proxies see.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from ..compiler.hardware import dtypes
from ..compiler.atoms.tiled_mma import TiledMMA
from ..dialects.builder import KernelBuilder
from ..dialects.locations import OpFailure, located
from ..dialects.scalars import Scalar, as_scalar, select
from ..dialects.tylo import FragmentType, TiledMMAAttr
from ..dialects.tylo.reduce_ops import FromSlotsOp
from ..dialects.tylo.matrix_ops import LdMatrixOp, MatrixLoadOp, MatrixStoreOp, StMatrixOp
from ..dialects.tylo.ops import (
    LoadElementOp,
    LoadFragmentOp,
    MapOp,
    MMAOp,
    MMASyncOp,
    SlotOp,
    SplatOp,
    StoreElementOp,
    StoreFragmentOp,
    YieldOp,
)
from .analysis.target_option import TargetOption
from .fragments.handlers import HANDLERS as _HANDLERS
from .fragments.masking import guarded
from .fragments.handlers import load_handlers


def _is_fragment(v: SSAValue) -> bool:
    return isinstance(v.type, FragmentType)


def _bit_deltas(table: list[int]) -> list[int] | None:
    """d_k with table[x] == table[0] + sum over set bits k of x of d_k for every x, or None."""
    n = len(table)
    nbits = max(1, (n - 1).bit_length())
    deltas = [table[1 << k] - table[0] if 1 << k < n else 0 for k in range(nbits)]
    ok = all(
        table[v] == table[0] + sum(d for k, d in enumerate(deltas) if v >> k & 1) for v in range(n)
    )
    return deltas if ok else None


def lane_expression(x, table: list[int]):
    """The value ``table[x]`` for a runtime index x in [0, len(table)), from x's bits.

    When the table is affine in the bits of x (``table[x] = table[0] + sum_k bit_k(x) * d_k``),
    runs of bits whose steps double are read as one field: ``((x >> k) & mask) * d_k``.
    Otherwise, when the low k bits contribute affinely and separately from the high ones
    (``table[x] = table[x & m] + table[x & ~m] - table[0]``), the two parts are built apart;
    else a chain of selects over the values of x. Static ints fold as in tracing."""
    n = len(table)
    nbits = max(1, (n - 1).bit_length())
    deltas = _bit_deltas(table)
    if deltas is None:
        for k in range(nbits - 1, 0, -1):
            mask = (1 << k) - 1
            low = table[: 1 << k]
            high = [table[h << k] - table[0] for h in range(-(-n >> k))]
            if _bit_deltas(low) is not None and all(
                table[v] == low[v & mask] + high[v >> k] for v in range(n)
            ):
                return lane_expression(x & mask, low) + lane_expression(x >> k, high)
        if isinstance(x, int):
            return table[x]
        out = as_scalar(table[0], dtypes.Int32)
        for v in range(1, n):
            if table[v] != table[0]:
                out = select(x == v, as_scalar(table[v], dtypes.Int32), out)
        return out
    out = table[0]
    k = 0
    while k < nbits:
        if deltas[k] == 0:
            k += 1
            continue
        width = 1
        while k + width < nbits and deltas[k + width] == deltas[k] << width:
            width += 1
        field = x >> k
        if k + width < nbits:
            field = field & ((1 << width) - 1)
        out = out + field * deltas[k]
        k += width
    return out


class _Lowering:
    """The state of tylo-lower-fragments that every handler is given: the target, each fragment's
    slot values (`slots`), the ops to erase at the end (`dead`); and the helpers handlers call
    (`expand`, `bind`, `before`, `coordinates`)."""

    def __init__(self, arch: str) -> None:
        load_handlers()
        self.arch = arch
        self.slots: dict[SSAValue, list[SSAValue]] = {}
        self.dead: list[Operation] = []

    # -- helpers --------------------------------------------------------------------------------
    def expand(self, values) -> list[SSAValue]:
        out: list[SSAValue] = []
        for v in values:
            out.extend(self.slots[v] if _is_fragment(v) else [v])
        return out

    def bind(self, old_values, new_values) -> None:
        """Map old (possibly fragment) values onto the flat list `new_values`."""
        k = 0
        for old in old_values:
            if _is_fragment(old):
                n = old.type.slots
                self.slots[old] = list(new_values[k : k + n])
                k += n
            else:
                old.replace_all_uses_with(new_values[k])
                k += 1

    @staticmethod
    def flat_types(values) -> list:
        types = []
        for v in values:
            t = v.type
            types.extend([t.element_type] * t.slots if isinstance(t, FragmentType) else [t])
        return types

    # -- walking --------------------------------------------------------------------------------
    def block(self, block: Block) -> None:
        for op in list(block.ops):
            self.op(op)

    def before(self, op: Operation) -> KernelBuilder:
        """A builder inserting in front of `op`."""
        return KernelBuilder.before(op, self.arch)

    def op(self, op: Operation) -> None:
        handler = _HANDLERS.lookup(op)
        if handler is not None:
            with located(op):
                handler(self, op)
            return
        if any(_is_fragment(v) for v in op.operands) or any(_is_fragment(r) for r in op.results):
            raise OpFailure(op, f"tylo-lower-fragments: {op.name} on fragments is not supported")
        for region in op.regions:
            for b in region.blocks:
                self.block(b)

    # -- fragment ops ---------------------------------------------------------------------------
    @_HANDLERS.on(SplatOp)
    def _SplatOp(self, op: SplatOp) -> None:
        self.slots[op.result] = [op.value] * op.result.type.slots
        self.dead.append(op)

    @_HANDLERS.on(FromSlotsOp)
    def _FromSlotsOp(self, op: FromSlotsOp) -> None:
        self.slots[op.result] = list(op.values)
        self.dead.append(op)

    @_HANDLERS.on(SlotOp)
    def _SlotOp(self, op: SlotOp) -> None:
        op.result.replace_all_uses_with(self.slots[op.fragment][op.slot.value.data])
        self.dead.append(op)

    def coordinates(self, op: Operation, ownership, thread: SSAValue) -> list[tuple]:
        with self.before(op).active():
            t = Scalar(thread, dtypes.Int32, nonneg=True)  # a thread index: >= 0
            coords = []
            if ownership.separable:
                r0, c0 = ownership.thread_coordinate(t)
                for dr, dc in ownership.slot_offsets:
                    coords.append((r0 + dr, c0 + dc))
            else:
                coords = [ownership(t, v) for v in range(ownership.values)]
            return [
                tuple(as_scalar(x, dtypes.Int32).value for x in rc) for rc in coords
            ]

    @_HANDLERS.on(LoadFragmentOp)
    def _LoadFragmentOp(self, op: LoadFragmentOp) -> None:
        ownership = op.result.type.ownership.data
        element = op.result.type.element_type
        values = []
        for coord in self.coordinates(op, ownership, op.thread):
            def load(coord=coord):
                ld = LoadElementOp(op.tile, list(coord))
                return [ld], [ld.result]
            values += guarded(self, op, coord, load, [element])
        self.slots[op.result] = values
        self.dead.append(op)

    @_HANDLERS.on(StoreFragmentOp)
    def _StoreFragmentOp(self, op: StoreFragmentOp) -> None:
        ownership = op.fragment.type.ownership.data
        values = self.slots[op.fragment]
        for coord, value in zip(self.coordinates(op, ownership, op.thread), values):
            guarded(self, op, coord,
                    lambda coord=coord, value=value: ([StoreElementOp(value, op.tile, list(coord))], []))
        self.dead.append(op)

    def _matrix_rows(self, op: Operation, plan, thread: SSAValue) -> list[list[SSAValue]]:
        """Per instruction of `plan`, the (row, col) i32 values of the row this thread addresses.

        Thread t is lane t % 32 of warp t // 32 (the pass that planned the copy checked it)."""
        with self.before(op).active():
            t = Scalar(thread, dtypes.Int32, nonneg=True)  # a thread index: >= 0
            warps = len(plan.warp_offsets)
            lane = t if warps == 1 else t % 32
            shift = [0, 0]
            if warps > 1:
                shift = [lane_expression(t // 32, [o[k] for o in plan.warp_offsets]) for k in (0, 1)]
            rows = []
            for i in range(len(plan.instructions)):
                coords = [plan.address_coordinate(i, x) for x in range(32)]
                rc = [lane_expression(lane, [c[k] for c in coords]) + shift[k] for k in (0, 1)]
                rows.append([as_scalar(x, dtypes.Int32).value for x in rc])
            return rows

    @_HANDLERS.on(MatrixLoadOp)
    def _MatrixLoadOp(self, op: MatrixLoadOp) -> None:
        plan = op.plan()
        values: list = [None] * op.result.type.slots
        n = plan.elements_per_word
        for i, coord in enumerate(self._matrix_rows(op, plan, op.thread)):
            ld = LdMatrixOp(plan.instructions[i][1], op.tile, coord, plan.trans)
            Rewriter.insert_op(ld, InsertPoint.before(op))
            for j, slots in enumerate(plan.register_slots(i)):
                for k, s in enumerate(slots):
                    values[s] = ld.elements[j * n + k]
        self.slots[op.result] = values
        self.dead.append(op)

    @_HANDLERS.on(MatrixStoreOp)
    def _MatrixStoreOp(self, op: MatrixStoreOp) -> None:
        plan = op.plan()
        values = self.slots[op.fragment]
        for i, coord in enumerate(self._matrix_rows(op, plan, op.thread)):
            elements = [values[s] for slots in plan.register_slots(i) for s in slots]
            st = StMatrixOp(plan.instructions[i][1], elements, op.tile, coord, plan.trans)
            Rewriter.insert_op(st, InsertPoint.before(op))
        self.dead.append(op)

    @_HANDLERS.on(MapOp)
    def _MapOp(self, op: MapOp) -> None:
        inputs = [self.slots[v] for v in op.inputs]
        body = op.body.block
        results = []
        for v in range(op.result.type.slots):
            mapping = {arg: inp[v] for arg, inp in zip(body.args, inputs)}
            for inner in body.ops:
                if isinstance(inner, YieldOp):
                    results.append(mapping.get(inner.value, inner.value))
                    break
                clone = inner.clone(value_mapper=mapping)
                Rewriter.insert_op(clone, InsertPoint.before(op))
                for old, new in zip(inner.results, clone.results):
                    mapping[old] = new
        self.slots[op.result] = results
        self.dead.append(op)

    @_HANDLERS.on(MMAOp)
    def _MMAOp(self, op: MMAOp) -> None:
        plan: TiledMMA = op.plan.data
        atom_plan = TiledMMAAttr(TiledMMA(plan.atom))
        a, b = self.slots[op.a], self.slots[op.b]
        acc = list(self.slots[op.c])
        for i, j, kk in plan.atoms():
            cs = plan.atom_slots("C", i, j)
            mma = MMASyncOp(
                atom_plan,
                [a[s] for s in plan.operand_slots("A", i, kk)],
                [b[s] for s in plan.operand_slots("B", j, kk)],
                [acc[s] for s in cs],
            )
            Rewriter.insert_op(mma, InsertPoint.before(op))
            for s, d in zip(cs, mma.d):
                acc[s] = d
        self.slots[op.result] = acc
        self.dead.append(op)

    # -- structured control flow ----------------------------------------------------------------
    def _rebuild_block(self, old: Block, leading: list = ()) -> Block:
        """A block with the old block's (expanded) argument types; the old ops moved into it."""
        new = Block(arg_types=list(leading) + self.flat_types(old.args[len(leading):]))
        for a, b in zip(old.args[: len(leading)], new.args[: len(leading)]):
            a.replace_all_uses_with(b)
        self.bind(old.args[len(leading):], new.args[len(leading):])
        for inner in list(old.ops):
            inner.detach()
            new.add_op(inner)
        return new

    def _replace_results(self, old: Operation, new: Operation) -> None:
        self.bind(old.results, new.results)
        self.dead.append(old)

    @_HANDLERS.on(scf.ForOp)
    def _ForOp(self, op: scf.ForOp) -> None:
        if not any(_is_fragment(v) for v in op.iter_args):
            self.block(op.body.block)
            return
        body = self._rebuild_block(op.body.block, [op.body.block.args[0].type])
        new = scf.ForOp(op.lb, op.ub, op.step, self.expand(op.iter_args), Region(body))
        Rewriter.insert_op(new, InsertPoint.before(op))
        self.block(body)
        self._replace_results(op, new)

    @_HANDLERS.on(scf.IfOp)
    def _IfOp(self, op: scf.IfOp) -> None:
        if not any(_is_fragment(r) for r in op.results):
            for region in op.regions:
                for b in region.blocks:
                    self.block(b)
            return
        regions = []
        for region in (op.true_region, op.false_region):
            block = self._rebuild_block(region.block)
            regions.append(Region(block))
        new = scf.IfOp(op.cond, self.flat_types(op.results), regions[0], regions[1])
        Rewriter.insert_op(new, InsertPoint.before(op))
        for region in new.regions:
            self.block(region.block)
        self._replace_results(op, new)

    @_HANDLERS.on(scf.WhileOp)
    def _WhileOp(self, op: scf.WhileOp) -> None:
        if not any(_is_fragment(v) for v in list(op.arguments) + list(op.results)):
            for region in op.regions:
                for b in region.blocks:
                    self.block(b)
            return
        before = self._rebuild_block(op.before_region.block)
        after = self._rebuild_block(op.after_region.block)
        new = scf.WhileOp(
            self.expand(op.arguments), self.flat_types(op.results), Region(before), Region(after)
        )
        Rewriter.insert_op(new, InsertPoint.before(op))
        self.block(before)
        self.block(after)
        self._replace_results(op, new)

    @_HANDLERS.on(scf.YieldOp)
    def _YieldOp(self, op: scf.YieldOp) -> None:
        if any(_is_fragment(v) for v in op.operands):
            op.operands = self.expand(op.operands)

    @_HANDLERS.on(scf.ConditionOp)
    def _ConditionOp(self, op: scf.ConditionOp) -> None:
        if any(_is_fragment(v) for v in op.args):
            op.operands = [op.condition, *self.expand(op.args)]

    def erase_dead(self) -> None:
        for op in reversed(self.dead):
            op.detach()
        for op in self.dead:
            op.drop_all_references()
        for op in self.dead:
            for region in op.regions:
                for b in region.blocks:
                    for a in b.args:
                        if a.uses:
                            raise PassFailedException(
                                f"tylo-lower-fragments: a value of {op.name} is still used"
                            )


@dataclass(frozen=True)
class LowerFragments(TargetOption, ModulePass):
    """Expand fragments into per-slot scalars by their ownership (see module docstring)."""

    name = "tylo-lower-fragments"

    arch: str = "sm_90a"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lowering = _Lowering(self.arch)
        for region in op.regions:
            for block in region.blocks:
                lowering.block(block)
        lowering.erase_dead()

