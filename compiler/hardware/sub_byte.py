"""Host packing of sub-byte MMA operands: Int4 / UInt4 values eight, Bit1 values thirty-two to a
32-bit word, the lowest index in the low bits (PTX ISA 9.7.14.5.14 mma: ".s4/.u4: eight elements
... in a .b32 register", ".b1: thirty two", elements low to high), which is the little-endian
memory order of a packed row, so a row-major (M, K) matrix packed along K is the (M, K / e)
matrix of words `tylo.load_a` of such an atom reads, and B packed along K its (K / e, N) words.
Plain numpy; the kernel side is `tylo.load_a` / `load_b` (frontend/language/packing.py).
"""

from __future__ import annotations

from ..support.errors import GeometryError, TypeMismatchError
from ..support.lazy_modules import np
from .dtypes import DType, as_dtype

__all__ = ["pack_sub_byte", "unpack_sub_byte"]


def _sub_byte(dtype, what: str) -> DType:
    d = as_dtype(dtype, what)
    if not d.sub_byte:
        raise TypeMismatchError(f"{what}: {d} is not a sub-byte type (Int4, UInt4, Bit1)")
    return d


def _range(d: DType) -> tuple[int, int]:
    return (-(1 << (d.bits - 1)), 1 << (d.bits - 1)) if d.kind == "int" else (0, 1 << d.bits)


def pack_sub_byte(values, dtype, axis: int = -1):
    """Integer `values` of sub-byte type `dtype` (Int4: -8..7, UInt4: 0..15, Bit1: 0..1) packed
    along `axis` into uint32 words, e = 32 / bits to a word (8 or 32): word w of that axis holds
    elements e w .. e w + e - 1, element e w + u in bits [u b, (u + 1) b) (two's complement for
    Int4). Returns a uint32 array whose `axis` is e times shorter. Raises TypeMismatchError for
    another dtype or non-integer values, GeometryError for an axis length that is not a multiple
    of e or for values outside the type's range."""
    d = _sub_byte(dtype, "pack_sub_byte")
    v = np.asarray(values)
    if v.dtype.kind not in "iub":
        raise TypeMismatchError(f"pack_sub_byte: values of dtype {v.dtype} must be integers")
    e = 32 // d.bits
    v = np.moveaxis(v.astype(np.int64), axis, -1)
    if v.shape[-1] % e:
        raise GeometryError(f"pack_sub_byte: the axis of {v.shape[-1]} {d} values is not a "
                            f"multiple of {e} (one 32-bit word)")
    low, high = _range(d)
    if v.size and (v.min() < low or v.max() >= high):
        raise GeometryError(f"pack_sub_byte: values must lie in [{low}, {high - 1}] for {d}")
    fields = (v & ((1 << d.bits) - 1)).astype(np.uint64).reshape(*v.shape[:-1], -1, e)
    shifts = np.arange(e, dtype=np.uint64) * np.uint64(d.bits)
    words = (fields << shifts).sum(axis=-1, dtype=np.uint64).astype(np.uint32)
    return np.moveaxis(words, -1, axis)


def unpack_sub_byte(words, dtype, axis: int = -1):
    """The inverse of `pack_sub_byte`: uint32 (or int32) `words` -> int64 values of `dtype`,
    `axis` e times longer (Int4 sign-extended)."""
    d = _sub_byte(dtype, "unpack_sub_byte")
    w = np.moveaxis(np.asarray(words).astype(np.uint32).astype(np.uint64), axis, -1)
    e = 32 // d.bits
    shifts = np.arange(e, dtype=np.uint64) * np.uint64(d.bits)
    fields = ((w[..., None] >> shifts) & np.uint64((1 << d.bits) - 1)).astype(np.int64)
    if d.kind == "int":
        fields = (fields ^ (1 << (d.bits - 1))) - (1 << (d.bits - 1))
    return np.moveaxis(fields.reshape(*w.shape[:-1], -1), -1, axis)
