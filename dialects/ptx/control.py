"""Synchronization, warp MMA and control flow (PTX ISA 9.7.12, 9.7.13.1 bar, 9.7.14.5.14 mma).

Control flow is blocks, as in xDSL's riscv_cf: a `ptx.entry` body is a list of blocks, each
ending in `ptx.bra`, `ptx.cond_bra` or `ptx.ret`, each but the first starting with a `ptx.label`
(the rules are `EntryOp`'s). Blocks have no arguments: registers are types, and
`ptx.get_register` names a register's current value after a label.
"""

from __future__ import annotations

from xdsl.dialects.builtin import I64, IntegerAttr, StringAttr, UnitAttr, i64
from xdsl.ir import Block
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    successor_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import IsTerminator
from xdsl.utils.exceptions import VerifyException

from ...compiler.atoms.mma_atom import MMA_INSTRUCTIONS, MMAAtom
from ...compiler.hardware.ptx_types import register_class
from .abstract_ops import _r, _want, PTXInstruction
from .registers import RegisterType
from ..facts import Collective

# ---------------------------------------------------------------------------------------------
# Synchronization and matrix instructions.


@irdl_op_definition
class BarSyncOp(PTXInstruction):
    """Block-wide barrier ``bar.sync id;`` (9.7.13.1 bar)."""

    name = "ptx.bar_sync"
    barrier = prop_def(IntegerAttr[I64])
    assembly_format = "$barrier attr-dict"

    def __init__(self, barrier: int = 0):
        super().__init__(properties={"barrier": IntegerAttr(barrier, i64)})

    def verify_(self) -> None:
        if not 0 <= self.barrier.value.data <= 15:
            raise VerifyException(f"barrier {self.barrier.value.data} must be in 0..15")

    def assembly_line(self) -> str:
        return f"bar.sync {self.barrier.value.data};"


def _mma_instruction(shape: str, types: str):
    """The row of the MMA table (`MMA_INSTRUCTIONS`) of this shape and D.A.B.C types, or None."""
    for ins in MMA_INSTRUCTIONS.values():
        if ins.ptx_shape == shape and ".".join(ins.ptx_types) == types:
            return ins
    return None


def _mma_registers(ins) -> dict[str, int]:
    """Registers per operand (A, B, C, D) of the table's row `ins`."""
    bit_op = ins.bit_ops[0][0] if ins.bit_ops else None
    atom = MMAAtom(ins.shape, ins.a, ins.c, b=ins.b, bit_op=bit_op)
    need = {r: atom.operand_layout(r).values // ins.register_elements(r) for r in "ABC"}
    return need | {"D": need["C"]}


@irdl_op_definition
class MmaSyncOp(PTXInstruction):
    """Warp MMA ``mma.sync.aligned.shape.row.col{.satfinite}.dtype.atype.btype.ctype{.bitOp.popc}
    {d}, {a}, {b}, {c};`` (9.7.14.5.14 mma). Registers hold packed elements, low element first
    (9.7.14.5.2 ff.): .b32 registers for A and B (.f64 ones for FP64), C and D of the
    accumulator's type. `satfinite` clamps an integer accumulation to the s32 range (integer
    operands only); `bit_op` ("and" or "xor") is the single-bit operation of a .b1 mma, which
    needs it. The forms are the rows of `tylo.compiler.atoms.mma_atom.MMA_INSTRUCTIONS`."""

    name = "ptx.mma_sync"
    traits = traits_def(Collective())
    shape = prop_def(StringAttr)
    types = prop_def(StringAttr)  # "f32.bf16.bf16.f32": D, A, B, C
    satfinite = opt_prop_def(UnitAttr)
    bit_op = opt_prop_def(StringAttr)
    a = var_operand_def(RegisterType)
    b = var_operand_def(RegisterType)
    c = var_operand_def(RegisterType)
    d = var_result_def(RegisterType)
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = (
        "$shape $types `(` $a `)` `,` `(` $b `)` `,` `(` $c `)` attr-dict `:` "
        "`(` type($a) `)` `,` `(` type($b) `)` `,` `(` type($c) `)` `->` `(` type($d) `)`"
    )

    def __init__(self, shape: str, types: str, a, b, c, d, satfinite: bool = False,
                 bit_op: str | None = None):
        props = {"shape": StringAttr(shape), "types": StringAttr(types)}
        if satfinite:
            props["satfinite"] = UnitAttr()
        if bit_op is not None:
            props["bit_op"] = StringAttr(bit_op)
        super().__init__(operands=[a, b, c], result_types=[d], properties=props)

    def verify_(self) -> None:
        ins = _mma_instruction(self.shape.data, self.types.data)
        if ins is None:
            raise VerifyException(
                f"mma.sync.{self.shape.data} with types '{self.types.data}' is not an "
                "instruction of the MMA table"
            )
        if self.satfinite is not None and not ins.saturating:
            raise VerifyException(f"mma.sync.{self.shape.data}.{self.types.data} takes no "
                                  ".satfinite (integer operands only)")
        op = None if self.bit_op is None else self.bit_op.data
        if ins.bit_ops and op not in dict(ins.bit_ops):
            raise VerifyException(f"mma.sync.{self.shape.data}.{self.types.data}: a .b1 mma "
                                  f"needs bit_op 'and' or 'xor', got {op!r}")
        if not ins.bit_ops and op is not None:
            raise VerifyException(f"mma.sync.{self.shape.data}.{self.types.data}: bit_op {op!r} "
                                  f"is for .b1 operands only")
        need = _mma_registers(ins)
        for what, vals in (("A", self.a), ("B", self.b), ("C", self.c), ("D", self.d)):
            if len(vals) != need[what]:
                raise VerifyException(f"mma {what} needs {need[what]} registers, got {len(vals)}")
        dt, at, bt, ct = self.types.data.split(".")
        for vals, t, what in ((self.a, at, "A"), (self.b, bt, "B")):
            for v in vals:
                _want(v, "f64" if t == "f64" else "b32", f"mma {what} register")
        for vals, t, what in ((self.c, ct, "C"), (self.d, dt, "D")):
            for v in vals:  # (an .f16 C/D register holds two: .f16x2 in a .b32)
                _want(v, "b32" if t == "f16" else register_class(t).name, f"mma {what} register")

    def assembly_line(self) -> str:
        def group(vals) -> str:
            return "{" + ", ".join(_r(v) for v in vals) + "}"

        satfinite = ".satfinite" if self.satfinite is not None else ""
        bit_op = f".{self.bit_op.data}.popc" if self.bit_op is not None else ""
        return (
            f"mma.sync.aligned.{self.shape.data}.row.col{satfinite}.{self.types.data}{bit_op} "
            f"{group(self.d)}, {group(self.a)}, {group(self.b)}, {group(self.c)};"
        )


# ---------------------------------------------------------------------------------------------
# Control flow (9.7.12): blocks of `ptx.entry`, each ending in a terminator.


def block_label(block: Block) -> str | None:
    """The name of `block`'s `ptx.label` (its first op), or None when it has none."""
    first = block.first_op
    return first.label.data if isinstance(first, LabelOp) else None


def _target_label(op: IRDLOperation, block: Block) -> str:
    label = block_label(block)
    if label is None:
        raise ValueError(f"{op.name} branches to a block without a ptx.label")
    return label


def _falls_through_to(op: IRDLOperation, block: Block) -> bool:
    """Whether `block` is the block right after the one `op` ends."""
    here = op.parent_block()
    return here is not None and here.next_block is block


@irdl_op_definition
class LabelOp(PTXInstruction):
    """A branch target ``name:``: the first op of every block of a `ptx.entry` except the first
    (and except a block only reached by falling through a `ptx.cond_bra`, see `EntryOp`)."""

    name = "ptx.label"
    label = prop_def(StringAttr)
    assembly_format = "$label attr-dict"

    def __init__(self, label: str):
        super().__init__(properties={"label": StringAttr(label)})

    def verify_(self) -> None:
        block = self.parent_block()
        if block is not None and block.first_op is not self:
            raise VerifyException(f"ptx.label '{self.label.data}' must be the first op of its block")

    def assembly_line(self) -> str:
        return f"{self.label.data}:"


@irdl_op_definition
class BraOp(PTXInstruction):
    """Unconditional branch ``bra.uni LABEL;`` to `dest` (PTX ISA 9.7.12 "bra"). Prints nothing
    when `dest` is the next block (the code falls through)."""

    name = "ptx.bra"
    dest = successor_def()
    traits = traits_def(IsTerminator())
    assembly_format = "$dest attr-dict"

    def __init__(self, dest: Block):
        super().__init__(successors=[dest])

    def assembly_line(self) -> str | None:
        if _falls_through_to(self, self.dest):
            return None
        return f"bra.uni {_target_label(self, self.dest)};"


@irdl_op_definition
class CondBraOp(PTXInstruction):
    """Predicated branch ``@p bra LABEL;`` (``@!p`` when `negate`) to `taken`; otherwise the code
    falls through to `fallthrough`, which must be the next block (PTX ISA 9.7.12 "bra"; the
    guard predicate: "Predicated Execution")."""

    name = "ptx.cond_bra"
    predicate = operand_def(RegisterType)
    negate = opt_prop_def(UnitAttr)
    taken = successor_def()
    fallthrough = successor_def()
    traits = traits_def(IsTerminator())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$predicate `:` type($predicate) `,` $taken `,` $fallthrough attr-dict"

    def __init__(self, predicate, taken: Block, fallthrough: Block, negate: bool = False):
        props = {"negate": UnitAttr()} if negate else {}
        super().__init__(operands=[predicate], successors=[taken, fallthrough], properties=props)

    def verify_(self) -> None:
        _want(self.predicate, "pred", "branch predicate")
        if self.parent_block() is not None and not _falls_through_to(self, self.fallthrough):
            raise VerifyException("ptx.cond_bra must fall through to the next block")

    def assembly_line(self) -> str:
        bang = "!" if self.negate is not None else ""
        return f"@{bang}{_r(self.predicate)} bra {_target_label(self, self.taken)};"


@irdl_op_definition
class TrapOp(PTXInstruction):
    """Abort the kernel (9.7.12.x trap), under an optional predicate (``@p`` or ``@!p`` when
    `negate`); an ordinary instruction, not a terminator. `reason` says what a trap of Tylo's
    own checks means (a window outside its tile ...); it is not printed (the emulator's error
    names it)."""

    name = "ptx.trap"
    negate = opt_prop_def(UnitAttr)
    reason = opt_prop_def(StringAttr)
    predicate = opt_operand_def(RegisterType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "(`if` $predicate^ `:` type($predicate))? attr-dict"

    def __init__(self, predicate=None, negate: bool = False, reason: str | None = None):
        props = {"negate": UnitAttr()} if negate else {}
        if reason:
            props["reason"] = StringAttr(reason)
        super().__init__(operands=[[predicate] if predicate is not None else []], properties=props)

    def verify_(self) -> None:
        if self.predicate is not None:
            _want(self.predicate, "pred", "trap predicate")
        elif self.negate is not None:
            raise VerifyException("negate needs a predicate")

    def assembly_line(self) -> str:
        if self.predicate is None:
            return "trap;"
        bang = "!" if self.negate is not None else ""
        return f"@{bang}{_r(self.predicate)} trap;"


@irdl_op_definition
class RetOp(PTXInstruction):
    """Return from the kernel (9.7.12.8 ret); a terminator."""

    name = "ptx.ret"
    traits = traits_def(IsTerminator())
    assembly_format = "attr-dict"

    def assembly_line(self) -> str:
        return "ret;"


@irdl_op_definition
class GetRegisterOp(IRDLOperation):
    """The current value of a register, as an SSA value; prints no PTX (like riscv.get_register).

    Used after a label for registers that several paths write (loop-carried values)."""

    name = "ptx.get_register"
    result = result_def(RegisterType)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, result: RegisterType):
        super().__init__(result_types=[result])
