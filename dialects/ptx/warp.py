"""Warp shuffles: ``shfl.sync`` (PTX ISA "Data Movement and Conversion Instructions: shfl.sync",
9.7.8.6 in the 7.x numbering, in 9.7.9 later; numbers shift between releases, follow the anchor
``#data-movement-and-conversion-instructions-shfl-sync``).

``shfl.sync.{up,down,bfly,idx}.b32 d[|p], a, b, c, membermask;`` (sm_30+, PTX 6.0+): every
lane of `membermask` executes it together; lane L reads register `a` of a source lane j of the
same warp. Operands, exactly as the ISA's pseudocode reads them:

* ``b[4:0]``: the source lane (``.idx``), the delta (``.up`` / ``.down``) or the xor mask
  (``.bfly``);
* ``c``: two packed fields, the clamp ``c[4:0]`` and the segment mask ``c[12:8]``;
  ``minLane = L & segmask``, ``maxLane = (L & segmask) | (c[4:0] & ~segmask)``;
* the source lane: ``.up`` ``j = L - b``, valid when ``j >= maxLane``; ``.down``
  ``j = L + b``, ``.bfly`` ``j = L ^ b``, valid when ``j <= maxLane``; ``.idx``
  ``j = minLane | (b[4:0] & ~segmask)``, valid when ``j <= maxLane``. An invalid j reads the
  lane's own `a` (``j = L``); `p` (optional) is the validity.

CUDA's ``__shfl_*_sync(mask, v, x, width)`` (width a power of two <= 32) packs
``c = ((32 - width) << 8) | clamp``, clamp 0 for ``.up`` (``maxLane`` is then the segment's
first lane) and 31 for the others (``maxLane`` its last): `shuffle_c` computes it, so that a
shuffle stays inside its segment of `width` lanes.

The instruction type is ``.b32``: `a` and `d` are 32-bit registers of either bit or float class
(.b32 or .f32: PTX ISA 5.4.1 "Operand Type Information", a bit-size instruction type takes any
type of its size); `b` and `c` are .b32 registers; `membermask` a 32-bit immediate. A lane
outside `membermask` that executes it, or a source lane outside it, is undefined behaviour
(the ISA).
"""

from __future__ import annotations

from xdsl.dialects.builtin import I64, IntegerAttr, StringAttr, i64
from xdsl.irdl import irdl_op_definition, operand_def, opt_result_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from .abstract_ops import PTXInstruction, _r, _want
from .registers import RegisterType, reg_class_of
from xdsl.irdl import traits_def
from ..facts import Collective

SHFL_MODES = ("up", "down", "bfly", "idx")
FULL_MASK = 0xFFFFFFFF
WARP_SIZE = 32


def shuffle_c(mode: str, width: int = WARP_SIZE) -> int:
    """The packed ``c`` operand of a shuffle inside segments of `width` lanes (as CUDA's
    ``__shfl_*_sync``): segment mask ``32 - width`` in bits 12:8, clamp 0 (``.up``) or 31 in
    bits 4:0. Raises ValueError for a `mode` not in `SHFL_MODES` or a `width` that is not a
    power of two in 1..32."""
    if mode not in SHFL_MODES:
        raise ValueError(f"shuffle mode {mode!r} is not one of {SHFL_MODES}")
    if not isinstance(width, int) or not 1 <= width <= WARP_SIZE or width & (width - 1):
        raise ValueError(f"shuffle width {width!r} must be a power of two in 1..32")
    return ((WARP_SIZE - width) << 8) | (0 if mode == "up" else WARP_SIZE - 1)


@irdl_op_definition
class ShflSyncOp(PTXInstruction):
    """``shfl.sync.<mode>.b32 d[|p], a, b, c, membermask;`` (module docstring): `a`, `d` .b32
    or .f32 registers of one class, `b`, `c` .b32, `p` an optional .pred result."""

    name = "ptx.shfl_sync"
    traits = traits_def(Collective())
    mode = prop_def(StringAttr)
    membermask = prop_def(IntegerAttr[I64])
    source = operand_def(RegisterType)
    lane = operand_def(RegisterType)
    clamp = operand_def(RegisterType)
    result = result_def(RegisterType)
    valid = opt_result_def(RegisterType)
    assembly_format = (
        "$mode $source `,` $lane `,` $clamp `mask` $membermask attr-dict `:` "
        "`(` type($source) `,` type($lane) `,` type($clamp) `)` `->` type($result) "
        "(`,` type($valid)^)?"
    )

    def __init__(self, mode: str, source, lane, clamp, result: RegisterType,
                 valid: RegisterType | None = None, membermask: int = FULL_MASK):
        super().__init__(
            operands=[source, lane, clamp],
            result_types=[result, [valid] if valid is not None else []],
            properties={"mode": StringAttr(mode), "membermask": IntegerAttr(membermask, i64)},
        )

    @property
    def mask(self) -> int:
        return self.membermask.value.data

    def verify_(self) -> None:
        if self.mode.data not in SHFL_MODES:
            raise VerifyException(f"shfl.sync mode '{self.mode.data}' is not one of {SHFL_MODES}")
        if not 0 < self.mask <= FULL_MASK:
            raise VerifyException(f"shfl.sync membermask {self.mask:#x} must be a nonzero "
                                  "32-bit lane mask")
        cls = reg_class_of(self.source)
        if cls not in ("b32", "f32"):
            raise VerifyException(f"shfl.sync.b32 moves a 32-bit register (.b32 or .f32), got "
                                  f".{cls} ({_r(self.source)})")
        _want(self.result, cls, "shfl.sync result")
        _want(self.lane, "b32", "shfl.sync operand b (lane, delta or xor mask)")
        _want(self.clamp, "b32", "shfl.sync operand c (clamp and segment mask)")
        if self.valid is not None:
            _want(self.valid, "pred", "shfl.sync predicate")

    def assembly_line(self) -> str:
        d = _r(self.result) + (f"|{_r(self.valid)}" if self.valid is not None else "")
        return (f"shfl.sync.{self.mode.data}.b32 {d}, {_r(self.source)}, {_r(self.lane)}, "
                f"{_r(self.clamp)}, {self.mask:#010x};")


__all__ = ["ShflSyncOp", "SHFL_MODES", "FULL_MASK", "shuffle_c"]
