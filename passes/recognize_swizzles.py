"""tylo-recognize-swizzles: recognise the shared tiles that async-proxy operands read, and put
their descriptor fields into the IR.

Every op with the `SwizzleOperand` trait (``tylo.wgmma_descriptor``, ``tylo.tcgen05_descriptor``:
`tcgen05_fields`; TMA ops may adopt it) names
a shared tile; its root layout (the ``tylo.make_tile`` the tile comes from) is matched
structurally by `swizzled_structure` (128, 64, 32-byte swizzles, and no swizzle: the interleave
of 8-row x 16-byte core matrices). The op's ``fields`` property receives: ``swizzle`` (bytes,
0 = none), ``major`` ("K"/"MN"), ``lbo`` and ``sbo`` (bytes, as the descriptor holds them:
`matrix_descriptor.canonical_offsets`), ``base_offset`` (0: allocations are aligned to the
pattern period), ``static`` (the 64-bit descriptor with start address 0, from the one bit table
`tylo.compiler.encodings.wgmma_descriptor.DESCRIPTOR_FIELDS`) and ``k_step`` (bytes the start
address advances per K = 16 instruction, `tylo.compiler.plans.wgmma.k_step_bytes`). Any other
layout is refused, naming the layout, the operand and the user's line (the op's location).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from ..compiler.encodings.matrix_descriptor import canonical_offsets
from ..compiler.encodings.tcgen05_smem_descriptor import tcgen05_smem_descriptor
from ..compiler.encodings.wgmma_descriptor import wgmma_descriptor
from ..compiler.support.errors import TyloError
from ..compiler.plans.swizzled_structure import swizzled_structure
from ..compiler.plans.tcgen05_mma import tcgen05_k_step_bytes
from ..compiler.plans.wgmma import k_step_bytes
from ..dialects.locations import each_located, location_of
from ..dialects.tylo import dtype_of
from ..dialects.tylo.tcgen05_ops import Tcgen05DescriptorOp
from ..dialects.tylo.wgmma_ops import SwizzleOperand
from .lower_tiles import tile_root


def _int(v: int) -> IntegerAttr:
    return IntegerAttr(v - (1 << 64) if v >= 1 << 63 else v, i64)


def descriptor_fields(structure) -> dict:
    """The ``fields`` of a recognised `SwizzledStructure` (module docstring)."""
    lbo, sbo = canonical_offsets(structure, "wgmma descriptor")
    return {"swizzle": StringAttr(str(structure.swizzle_bytes if structure.swizzled else 0)),
            "major": StringAttr(structure.major), "lbo": _int(lbo), "sbo": _int(sbo),
            "base_offset": _int(0), "static": _int(wgmma_descriptor(structure, 0)),
            "k_step": _int(k_step_bytes(structure))}


def tcgen05_fields(structure) -> dict:
    """`descriptor_fields` for a tcgen05 operand: ``static`` in the tcgen05 encoding (PTX ISA
    9.7.16.4.1, Table 40: version bits 46-48, swizzle codes in bits 61-63) and ``k_step`` per
    instruction's 256 bits of K (`tcgen05_k_step_bytes`)."""
    return descriptor_fields(structure) | {
        "static": _int(tcgen05_smem_descriptor(structure, 0)),
        "k_step": _int(tcgen05_k_step_bytes(structure))}


def recognize(op: SwizzleOperand) -> None:
    tile, kaxis, what = op.swizzle_operand()
    make, _ = tile_root(tile)
    layout = make.result.type.layout.data
    dtype = dtype_of(tile.type.element_type)
    loc = location_of(op)
    where = f" at {loc.filename.data}:{loc.line.data}" if loc is not None else ""
    try:
        structure = swizzled_structure(layout, dtype, kaxis) if layout.is_static() else None
        fields_of = tcgen05_fields if isinstance(op, Tcgen05DescriptorOp) else descriptor_fields
        fields = None if structure is None else fields_of(structure)
    except TyloError as e:
        raise PassFailedException(f"tylo-recognize-swizzles: {what}{where}: {e}") from e
    if fields is None:
        raise PassFailedException(
            f"tylo-recognize-swizzles: {what}{where}: layout {layout} of {dtype} is not a "
            "canonical swizzled encoding (128/64/32-byte swizzled rows or 8-row x 16-byte core "
            "matrices; see swizzled_structure), so no descriptor describes it")
    op.fields = DictionaryAttr(fields)


@dataclass(frozen=True)
class RecognizeSwizzles(ModulePass):
    """Attach descriptor fields to every `SwizzleOperand` op (module docstring)."""

    name = "tylo-recognize-swizzles"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in each_located(op.walk()):
            if isinstance(inner, SwizzleOperand):
                recognize(inner)
