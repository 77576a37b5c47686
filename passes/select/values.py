"""PTX types of IR values: the type suffix, register class and ld/st type of a value type, and
the bits of a float constant, for instruction selection (tylo-select-ptx).

Integers are signless in the IR: `ptx_type`'s `kind` picks s/u/b; 8-bit values live in 16-bit
registers (`tylo.compiler.hardware.ptx_types`). Pointers are 64-bit for .global, 32-bit for .shared.
"""

from __future__ import annotations

import struct

import numpy as np
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, Float64Type, IntegerType
from xdsl.ir import Attribute

from ...compiler.hardware.fp8 import float8_bits
# imported by a bf16 constant only (~1 s on some hosts)
from ...compiler.support.lazy_modules import ml_dtypes
from ...compiler.hardware.ptx_types import register_class
from ...dialects.tylo import PointerType, dtype_of


def ptx_type(t: Attribute, kind: str = "b") -> str:
    """PTX type suffix of a value type; `kind` picks s/u/b for integers."""
    if isinstance(t, IntegerType):
        width = t.width.data
        if width == 1:
            return "pred"
        return f"{kind}{max(width, 16)}"  # 8-bit values live in 16-bit registers
    if isinstance(t, PointerType):
        return "u64" if t.space.data == "global" else "u32"
    return dtype_of(t).ptx


def source_type(t: Attribute, kind: str) -> str:
    """The cvt source type of an integer value of type `t` read as signed ("s") or unsigned
    ("u"): an 8-bit value lives in a 16-bit register whose high byte is not its own (ld.s8
    sign-extends every 8-bit load), so it converts from .s8 / .u8, which read the low byte only
    (PTX ISA 9.7.9.21 cvt); wider values from their own type."""
    if isinstance(t, IntegerType) and t.width.data == 8:
        return f"{kind}8"
    return ptx_type(t, kind)


def reg_class(t: Attribute) -> str:
    """The register class holding a value of type `t` (pointers: by state space)."""
    if isinstance(t, PointerType):
        return "b64" if t.space.data == "global" else "b32"
    return register_class(ptx_type(t)).name


def class_of(suffix: str) -> str:
    """The register class holding a value of PTX type `suffix`."""
    return register_class(suffix).name


def memory_type(t: Attribute) -> str:
    """The ld/st type of one element: sized bit types, f32/f64 for those floats."""
    if isinstance(t, IntegerType):
        width = t.width.data
        return {1: "u8", 8: "s8"}.get(width, f"b{width}")
    if isinstance(t, (Float32Type, Float64Type)):
        return ptx_type(t)
    return f"b{dtype_of(t).bits}"


def float_bits(value: float, t: Attribute) -> int:
    """The bit pattern of constant `value` as a value of float type `t`."""
    if isinstance(t, Float32Type):
        return struct.unpack("<I", struct.pack("<f", value))[0]
    if isinstance(t, Float64Type):
        return struct.unpack("<Q", struct.pack("<d", value))[0]
    if isinstance(t, BFloat16Type):
        return int(np.array(value, dtype=ml_dtypes.bfloat16).view(np.uint16))
    if isinstance(t, Float16Type):
        return int(np.array(value, dtype=np.float16).view(np.uint16))
    return int(float8_bits(value, dtype_of(t)))  # rounded to float32, then as cvt rounds it
