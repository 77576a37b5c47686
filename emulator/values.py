"""Register values of the emulator: one numpy array per register, one element per thread.

Registers hold raw bits by class (PTX ISA 5.2 "Types", register classes in
`tylo.compiler.hardware.ptx_types.REGISTER_CLASSES`): ``pred`` as bool, ``b16`` as uint16, ``b32``/``f32``
as uint32, ``b64``/``f64`` as uint64. `as_float` views them as the floating type a `.type`
suffix names (bf16 through ml_dtypes) without converting.
"""

from __future__ import annotations

from ..compiler.support.lazy_modules import np

REGISTER_DTYPES = {
    "pred": "bool", "b16": "uint16", "b32": "uint32", "f32": "uint32", "b64": "uint64",
    "f64": "uint64",
}
"""Register class -> numpy dtype name of its array."""

_FLOATS = {"f16": "float16", "f32": "float32", "f64": "float64"}
_INTS = {
    "s8": "int8", "u8": "uint8", "b8": "uint8", "s16": "int16", "u16": "uint16", "b16": "uint16",
    "s32": "int32", "u32": "uint32", "b32": "uint32", "s64": "int64", "u64": "uint64",
    "b64": "uint64",
}


def numpy_dtype(suffix: str):
    """The numpy dtype of PTX type `suffix` (``"f32"`` -> float32, ``"bf16"`` -> ml_dtypes'
    bfloat16, ``"s32"`` -> int32, ``"pred"`` -> bool). KeyError for another suffix."""
    if suffix == "pred":
        return np.dtype(bool)
    if suffix == "bf16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    if suffix in _FLOATS:
        return np.dtype(_FLOATS[suffix])
    return np.dtype(_INTS[suffix])


def register_dtype(reg_class: str):
    """The numpy dtype of a register class's array."""
    return np.dtype(REGISTER_DTYPES[reg_class])


def as_float(bits, suffix: str):
    """View raw register bits as the float type `suffix` (f16, bf16, f32, f64): a b16 register
    read as bf16, a b32 or f32 one as f32. The widths must agree (no conversion)."""
    return bits.view(numpy_dtype(suffix))
