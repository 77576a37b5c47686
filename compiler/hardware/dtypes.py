"""Element types: the one table of their encodings.

Each `DType` row gives the PTX fundamental-type suffix, the PTX register class that holds one
value, the numpy/ml_dtypes type for host values, and the torch and DLPack names used to recognise
arguments. Source of the PTX names: PTX ISA section 5.2.1 "Fundamental Types" and 5.2.5
"Packed Data Types" (https://docs.nvidia.com/cuda/parallel-thread-execution/#fundamental-types).

The sub-byte types Int4 (``.s4``), UInt4 (``.u4``) and Bit1 (``.b1``) are MMA operand types
only (PTX ISA 9.7.14.5.14 mma: eight 4-bit or thirty-two 1-bit elements to a ``.b32`` register,
the low bits first): no array, scalar or register holds one on its own, so they have no torch or
DLPack name and numpy arrays of them are not arguments (`by_numpy` leaves them out); a kernel
carries their values packed in 32-bit words (`tylo.PackedFragment`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass


from ..support.lazy_modules import ml_dtypes, np
from . import ptx_types
from ..support.errors import TypeMismatchError


@dataclass(frozen=True)
class DType:
    """An element type. `bits` is its width; `ptx` its PTX type suffix (e.g. ``bf16``)."""

    name: str
    bits: int
    kind: str  # "float", "int", "uint", "bool", "bits" (Bit1: untyped bits)
    ptx: str
    numpy_name: str  # "float32", or "ml_dtypes.bfloat16": `numpy` is that type (imported when read)
    torch: str | None
    dlpack: tuple[int, int] | None  # (DLDataTypeCode, bits)

    @property
    def numpy(self) -> type:
        """The numpy (or ml_dtypes) scalar type of host values of this element type."""
        module, _, name = self.numpy_name.rpartition(".")
        return getattr(ml_dtypes if module == "ml_dtypes" else np, name)

    @property
    def reg(self) -> str:
        """The PTX register class that holds one value (from the PTX type table)."""
        return ptx_types.register_class(self.ptx).name

    @property
    def bytes(self) -> int:
        return max(self.bits // 8, 1)

    @property
    def sub_byte(self) -> bool:
        """Int4, UInt4 and Bit1: MMA operand types that travel packed in 32-bit words."""
        return self.bits < 8

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_int(self) -> bool:
        return self.kind in ("int", "uint")

    @property
    def is_signed(self) -> bool:
        return self.kind in ("int", "float")

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__


# DLPack type codes: kDLInt=0, kDLUInt=1, kDLFloat=2, kDLBfloat=4, kDLBool=6,
# kDLFloat8_e4m3fn=10, kDLFloat8_e5m2=12 (dlpack.h, DLDataTypeCode).
_TABLE = [
    # name, bits, kind, ptx suffix, numpy type, torch name, dlpack
    ("Bool", 8, "bool", "pred", "bool_", "bool", (6, 8)),
    ("Int8", 8, "int", "s8", "int8", "int8", (0, 8)),
    ("UInt8", 8, "uint", "u8", "uint8", "uint8", (1, 8)),
    ("Int16", 16, "int", "s16", "int16", "int16", (0, 16)),
    ("UInt16", 16, "uint", "u16", "uint16", "uint16", (1, 16)),
    ("Int32", 32, "int", "s32", "int32", "int32", (0, 32)),
    ("UInt32", 32, "uint", "u32", "uint32", "uint32", (1, 32)),
    ("Int64", 64, "int", "s64", "int64", "int64", (0, 64)),
    ("UInt64", 64, "uint", "u64", "uint64", "uint64", (1, 64)),
    ("Float8E4M3", 8, "float", "e4m3", "ml_dtypes.float8_e4m3fn", "float8_e4m3fn", (10, 8)),
    ("Float8E5M2", 8, "float", "e5m2", "ml_dtypes.float8_e5m2", "float8_e5m2", (12, 8)),
    ("Float16", 16, "float", "f16", "float16", "float16", (2, 16)),
    ("BFloat16", 16, "float", "bf16", "ml_dtypes.bfloat16", "bfloat16", (4, 16)),
    ("TFloat32", 32, "float", "tf32", "float32", None, None),
    ("Float32", 32, "float", "f32", "float32", "float32", (2, 32)),
    ("Float64", 64, "float", "f64", "float64", "float64", (2, 64)),
    # MMA operand types only (module docstring): 4-bit integers and single bits
    ("Int4", 4, "int", "s4", "ml_dtypes.int4", None, None),
    ("UInt4", 4, "uint", "u4", "ml_dtypes.uint4", None, None),
    ("Bit1", 1, "bits", "b1", "uint8", None, None),
]

ALL: dict[str, DType] = {
    row[0]: DType(*row[:4], numpy_name=row[4], torch=row[5], dlpack=row[6]) for row in _TABLE
}

Bool = ALL["Bool"]
Int8 = ALL["Int8"]
UInt8 = ALL["UInt8"]
Int16 = ALL["Int16"]
UInt16 = ALL["UInt16"]
Int32 = ALL["Int32"]
UInt32 = ALL["UInt32"]
Int64 = ALL["Int64"]
UInt64 = ALL["UInt64"]
Float8E4M3 = ALL["Float8E4M3"]
Float8E5M2 = ALL["Float8E5M2"]
Float16 = ALL["Float16"]
BFloat16 = ALL["BFloat16"]
TFloat32 = ALL["TFloat32"]
Float32 = ALL["Float32"]
Float64 = ALL["Float64"]
Int4 = ALL["Int4"]
UInt4 = ALL["UInt4"]
Bit1 = ALL["Bit1"]

BY_PTX: dict[str, DType] = {d.ptx: d for d in ALL.values()}
BY_TORCH: dict[str, DType] = {d.torch: d for d in ALL.values() if d.torch}
BY_DLPACK: dict[tuple[int, int], DType] = {d.dlpack: d for d in ALL.values() if d.dlpack}
@functools.lru_cache(maxsize=1)
def by_numpy() -> dict:
    """numpy dtype -> DType (numpy is imported when this is first asked for); TFloat32 and the
    sub-byte MMA operand types are no array dtypes."""
    return {np.dtype(d.numpy): d for d in ALL.values() if d is not TFloat32 and not d.sub_byte}


def as_dtype(value: object, what: str = "dtype") -> DType:
    """Resolve a DType, a name (``"bfloat16"``, ``"bf16"``), a numpy dtype or a torch dtype.

    Raises TypeMismatchError (naming ``what`` and listing the element types) for anything else:
    ``None`` (numpy would read it as float64), and Python's ``float`` and ``int``, which are
    ambiguous (a literal in a kernel is Float32 / Int32, a numpy or torch array of them
    float64 / int64).
    """
    if isinstance(value, DType):
        return value
    if value is None:
        raise TypeMismatchError(f"{what}: None is not an element type; {_known()}")
    if value is float or value is int:
        kernel, array = ("Float32", "Float64") if value is float else ("Int32", "Int64")
        raise TypeMismatchError(
            f"{what}: Python's {value.__name__} is ambiguous as an element type (a "
            f"{value.__name__} literal in a kernel is {kernel}, a numpy or torch "
            f"{value.__name__} array is {array}); name the dtype, e.g. tylo.{kernel} or "
            f"tylo.{array}. {_known()}")
    if isinstance(value, str):
        for table in (ALL, BY_PTX, BY_TORCH):
            if value in table:
                return table[value]
    mod = type(value).__module__
    if mod.startswith("torch"):
        name = str(value).removeprefix("torch.")
        if name in BY_TORCH:
            return BY_TORCH[name]
    try:
        np_dtype = np.dtype(value)  # type: ignore[call-overload]
    except TypeError:
        np_dtype = None
    if np_dtype is not None and np_dtype in by_numpy():
        return by_numpy()[np_dtype]
    raise TypeMismatchError(f"{what}: {value!r} is not an element type Tylo knows; {_known()}")


def _known() -> str:
    return "element types: " + ", ".join(d.name for d in ALL.values())
