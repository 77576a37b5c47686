"""Where a pointer points and what divides its address: the one walk of ``tylo.ptr_add`` chains.

Used by the passes (tylo-plan-copies: the alignment of a tile's rows; tylo-insert-async-fences:
the allocation and static byte range an access touches) and by the frontend (frontend/language/tma.py:
whether a TMA tile starts at its swizzle period). Three pieces, each conservative (unknown is
never reported as known):

* `constant(v)`: the value of an integer computed from constants only, folding the address
  arithmetic canonicalize leaves unfolded (one `_FOLD` table; i32/i64 wrap-around as the
  hardware computes it, ``arith`` semantics: a shift by the width or more folds to nothing);
* `is_uniform(v)`: `v` has one value across the lanes of a warp;
* `pointer_address(p)` (`Address`: the root op, the static byte offset from it, and a power of
  two dividing the runtime part of the offset), `pointer_place(p)` (root, static offset or
  None) and `shared_alignment(p)` (bytes known to divide a shared address);
* `summand_op(v, cls)`: the op of a class at the root of an ``arith.addi`` chain (a matrix
  descriptor plus its K steps and runtime origin offsets).

An element offset is read as a sum of terms (``arith.addi`` / ``arith.subi``): constants, and
runtime values scaled by a constant (``x * c``, ``c * x``, ``x << c``), whose product with the
pointer's element size in bytes is a known multiple: a pipeline stage ``index * stage_elems``
(`tylo.shared_tiles`) is a multiple of the stage stride. Anything else is a runtime term known
only to be a whole number of elements.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IntegerAttr, IntegerType
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue

from ...dialects.tylo import dtype_of
from ...dialects.tylo.ops import PtrAddOp, SharedAllocOp, ThreadIdxOp

# -- constants -----------------------------------------------------------------------------------
_FOLD = {
    arith.AddiOp: lambda a, b, w: a + b, arith.SubiOp: lambda a, b, w: a - b,
    arith.MuliOp: lambda a, b, w: a * b, arith.AndIOp: lambda a, b, w: a & b,
    arith.OrIOp: lambda a, b, w: a | b, arith.XOrIOp: lambda a, b, w: a ^ b,
    arith.ShLIOp: lambda a, b, w: a << b if 0 <= b < w else None,
    arith.ShRSIOp: lambda a, b, w: a >> b if 0 <= b < w else None,
}


def _width(v: SSAValue) -> int:
    """Bits of an integer value (64 for index)."""
    return v.type.width.data if isinstance(v.type, IntegerType) else 64


def _signed(x: int, width: int) -> int:
    """`x` wrapped to `width` bits, read as two's complement."""
    x &= (1 << width) - 1
    return x - (1 << width) if x >> (width - 1) else x


def constant(v: SSAValue, depth: int = 8) -> int | None:
    """The value of integer `v` when computed from ``arith.constant``s only through the ops of
    `_FOLD` (at most `depth` deep), else None. A constant is returned as its attribute holds it;
    a folded value wraps to the result's width, signed."""
    owner = v.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    fold = _FOLD.get(type(owner))
    if fold is None or depth == 0:
        return None
    a, b = constant(owner.lhs, depth - 1), constant(owner.rhs, depth - 1)
    if a is None or b is None:
        return None
    w = _width(v)
    r = fold(_signed(a, w), _signed(b, w), w)
    return None if r is None else _signed(r, w)


def _low_bit(x: int) -> int:
    """The largest power of two dividing `x` (x != 0)."""
    return x & -x


# -- warp uniformity -----------------------------------------------------------------------------
def _is_warp_index(op: Operation) -> bool:
    """`op` is the same on all lanes of a warp because it reads only the warp's position:
    ``%tid.y``/``%tid.z``, or ``%tid.x`` divided by (or shifted right past) a multiple of 32.
    That holds when warps are whole rows of x threads (tylo-plan-copies checks the block)."""
    if isinstance(op, ThreadIdxOp):
        return op.dim.data in ("y", "z")
    if isinstance(op, (arith.DivSIOp, arith.DivUIOp, arith.FloorDivSIOp)):
        c = constant(op.rhs)
        lhs = op.lhs.owner
        return (c is not None and c > 0 and c % 32 == 0 and isinstance(lhs, ThreadIdxOp)
                and lhs.dim.data == "x")
    if isinstance(op, (arith.ShRUIOp, arith.ShRSIOp)):
        c = constant(op.rhs)
        lhs = op.lhs.owner
        return c is not None and c >= 5 and isinstance(lhs, ThreadIdxOp) and lhs.dim.data == "x"
    return False


def is_uniform(v: SSAValue, seen: dict | None = None) -> bool:
    """`v` has one value across the threads of a warp (conservative: False when unsure):
    kernel arguments, constants, the warp index (`_is_warp_index`), an ``scf.for`` induction
    variable of uniform bounds, and region-free ops of uniform operands; never a loop-carried
    value or ``%tid.x`` itself."""
    seen = {} if seen is None else seen
    if v in seen:
        return seen[v]
    seen[v] = False  # cycles through loop-carried values are not uniform
    if isinstance(v, BlockArgument):
        parent = v.block.parent_op()
        if isinstance(parent, func.FuncOp):
            result = True
        elif isinstance(parent, scf.ForOp) and v.index == 0:
            result = all(is_uniform(x, seen) for x in (parent.lb, parent.ub, parent.step))
        else:
            result = False
    else:
        op = v.owner
        result = _is_warp_index(op) or (
            not isinstance(op, ThreadIdxOp)
            and not op.regions
            and all(is_uniform(x, seen) for x in op.operands)
        )
    seen[v] = result
    return result


# -- offsets -------------------------------------------------------------------------------------
def _scaled(terms, k: int, width: int):
    """`terms` (static, runtime multiple) of x, for x * k in `width` bits."""
    static, multiple = terms
    scaled = None if multiple is None or k == 0 else multiple * _low_bit(k)
    return _signed(static * k, width), scaled


def _offset_terms(v: SSAValue, warp_uniform: bool, depth: int = 8):
    """(static part, power of two dividing the runtime part or None when there is none) of
    integer `v`, or None when a runtime term is not warp-uniform and `warp_uniform` asks it.
    The static part wraps to `v`'s width as the hardware computes it (wrapping keeps every
    power of two up to 2^width that divides a value, so the multiples stay true)."""
    c = constant(v)
    if c is not None:
        return _signed(c, _width(v)), None
    op = v.owner
    if depth > 0 and isinstance(op, (arith.AddiOp, arith.SubiOp)):
        a = _offset_terms(op.lhs, warp_uniform, depth - 1)
        b = _offset_terms(op.rhs, warp_uniform, depth - 1)
        if a is None or b is None:
            return None
        static = a[0] + b[0] if isinstance(op, arith.AddiOp) else a[0] - b[0]
        static = _signed(static, _width(v))
        multiples = [m for m in (a[1], b[1]) if m is not None]
        return static, min(multiples) if multiples else None
    if depth > 0 and isinstance(op, arith.MuliOp):
        for x, k in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            kc = constant(k)
            if kc == 0:
                return 0, None
            if kc is not None:
                terms = _offset_terms(x, warp_uniform, depth - 1)
                return None if terms is None else _scaled(terms, kc, _width(v))
    if depth > 0 and isinstance(op, arith.ShLIOp):
        kc = constant(op.rhs)
        if kc is not None and 0 <= kc < _width(v):
            terms = _offset_terms(op.lhs, warp_uniform, depth - 1)
            return None if terms is None else _scaled(terms, 1 << kc, _width(v))
    if warp_uniform and not is_uniform(v):
        return None
    return 0, 1


def known_multiple(v: SSAValue) -> int:
    """A power of two known to divide the integer `v` on every thread (0 for a constant 0:
    any power divides it; 1 when nothing is known), from the terms `_offset_terms` reads."""
    static, multiple = _offset_terms(v, warp_uniform=False)
    low = _low_bit(abs(static)) if static else 0
    if multiple is None:
        return low
    return multiple if not low else min(low, multiple)


def summand_op(v: SSAValue, cls, depth: int = 16):
    """The `cls` op whose result `v` is, possibly plus other terms (a chain of ``arith.addi``
    at most `depth` deep, the op's result on either side), or None. A matrix descriptor
    stepped along K or re-originated at run time is its descriptor op's result plus offsets."""
    owner = v.owner
    if isinstance(owner, cls):
        return owner
    if depth == 0 or not isinstance(owner, arith.AddiOp):
        return None
    return summand_op(owner.lhs, cls, depth - 1) or summand_op(owner.rhs, cls, depth - 1)


# -- pointers ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Address:
    """A pointer as `root` (the op its ``tylo.ptr_add`` chain starts at; None for a block
    argument, e.g. a kernel parameter) plus `static_bytes` plus a runtime part that
    `runtime_multiple` (bytes, a power of two) divides; `runtime_multiple` is None when the
    whole offset is static."""

    root: Operation | None
    static_bytes: int
    runtime_multiple: int | None

    @property
    def alignment(self) -> int:
        """Bytes (a power of two) known to divide the address: the ``tylo.shared_alloc``'s
        alignment, the static offset's and the runtime multiple's, whichever is least; 0 when
        the root is not a shared allocation."""
        if not isinstance(self.root, SharedAllocOp):
            return 0
        parts = [self.root.align.value.data]
        if self.static_bytes:
            parts.append(_low_bit(self.static_bytes))
        if self.runtime_multiple is not None:
            parts.append(self.runtime_multiple)
        return min(parts)

    def excludes(self, period: int) -> bool:
        """The address is provably NOT a multiple of `period` (a power of two, bytes): the
        address is the static offset modulo the allocation's alignment and the runtime
        multiple, and that leaves a remainder modulo `period`."""
        if not isinstance(self.root, SharedAllocOp):
            return False
        modulus = min(period, self.root.align.value.data, self.runtime_multiple or period)
        return self.static_bytes % modulus != 0


def pointer_address(pointer: SSAValue, *, warp_uniform: bool = False) -> Address | None:
    """The `Address` of a pointer (SSA value of a ``!tylo.ptr``), walking its ``tylo.ptr_add``
    chain (offsets in elements of the pointer's dtype). `warp_uniform`: every runtime term of
    the offsets must be the same on all lanes of a warp (`is_uniform`), else None is returned
    (tylo-plan-copies: each lane supplies row addresses other lanes receive); a TMA copy, which
    one thread issues, does not ask it."""
    static, multiple = 0, None
    v = pointer
    while isinstance(v.owner, PtrAddOp):
        op = v.owner
        terms = _offset_terms(op.offset, warp_uniform)
        if terms is None:
            return None
        element = dtype_of(v.type.element_type).bytes
        static += terms[0] * element
        if terms[1] is not None:
            m = terms[1] * element
            multiple = m if multiple is None else min(multiple, m)
        v = op.pointer
    return Address(v.owner if isinstance(v, OpResult) else None, static, multiple)


def pointer_place(pointer: SSAValue) -> tuple[Operation | None, int | None]:
    """(root op, byte offset from it) of a pointer: the offset is None when a part of it is
    only known at run time, the root None when the chain starts at a block argument."""
    a = pointer_address(pointer)
    return a.root, a.static_bytes if a.runtime_multiple is None else None


def shared_alignment(pointer: SSAValue, *, warp_uniform: bool = False) -> int:
    """Bytes (a power of two) known to divide the shared address of `pointer`
    (`Address.alignment`); 0 when unknown: not from a ``tylo.shared_alloc``, or (with
    `warp_uniform`) a runtime offset term that is not warp-uniform."""
    a = pointer_address(pointer, warp_uniform=warp_uniform)
    return 0 if a is None else a.alignment
