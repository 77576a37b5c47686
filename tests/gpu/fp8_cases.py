"""FP8 conversion kernels and inputs shared by test_fp8_ptx.py (no GPU) and test_fp8_gpu.py.

`route` converts to an FP8 format and back: from float32 to float32 (PTX:
``cvt.rn.satfinite.e4m3x2.f32``, then ``cvt.rn.f16x2.e4m3x2`` and ``cvt.f32.f16``), and along
`ROUTES`, from other sources (f16, bf16, int32, the other FP8 format) to other destinations
(f16, bf16, the other FP8 format), which the lowering builds through f32
(passes/lower_to_ptx.py, `_convert`). `constants` stores Python floats as FP8. `edge_values`
lists the float32 inputs where a conversion is easiest to get wrong. The host model of every
conversion is compiler/hardware/fp8.py.
"""

from __future__ import annotations

import numpy as np

import tylo
from tylo import BFloat16, Float8E4M3, Float8E5M2, Float16, Int32
from tylo.compiler.hardware.fp8 import fp8_format, from_float8

FORMATS = (Float8E4M3, Float8E5M2)
OTHER = {Float8E4M3: Float8E5M2, Float8E5M2: Float8E4M3}
# (source, destination) of `route`; "other" is the FP8 format that is not the one converted to.
ROUTES = [(Float16, BFloat16), (BFloat16, Float16), (Int32, "other"), ("other", Float16)]
ROUTE_IDS = ["f16-bf16", "bf16-f16", "s32-fp8", "fp8-f16"]
# Kernel constants stored as FP8: they round and saturate as cvt does (compiler/hardware/fp8.py).
CONSTANTS = (1000.0, -1e9, float("nan"), 0.3, -0.0, 464.0, -2.0**-10)


def route_types(fmt, src, dst):
    """`route`'s (source, destination) dtypes for `fmt`, "other" resolved."""
    return tuple(OTHER[fmt] if d == "other" else d for d in (src, dst))


@tylo.kernel
def route(q, w, x, n, fmt: tylo.constexpr, dst: tylo.constexpr):
    """q[i] = x[i] (any dtype) converted to `fmt` (q is an FP8 tensor); w[i] = that value
    converted to `dst`."""
    i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
    if i < n:
        v = x[i].to(fmt)
        q[i] = v
        w[i] = v.to(dst)


@tylo.kernel
def constants(q, values: tylo.constexpr):
    """q[j] = values[j], Python floats stored into an FP8 tensor (run it with one thread)."""
    for j in tylo.static_range(len(values)):
        q[j] = values[j]


def _f32(bits) -> np.ndarray:
    return np.array(bits, np.uint32).view(np.float32)


def edge_values() -> np.ndarray:
    """Float32 inputs at the edges of both formats, both signs: every FP8 value, every tie
    between neighbours (and the one above MAX_NORM) and one ulp either side of each, values just
    under powers of two, beyond MAX_NORM, +-0, +-inf, float32 subnormals and NaNs."""
    pos = [np.array([0.0, np.inf, np.finfo(np.float32).max, 1e30], np.float32)]
    pos.append(_f32([0x00000001, 0x00000400, 0x007FFFFF, 0x00800000]))  # f32 subnormals, tiny
    for fmt in FORMATS:
        values = from_float8(np.arange(0x80), fmt)
        values = values[np.isfinite(values)]  # increasing: 0 up to MAX_NORM
        above = values[-1] + (values[-1] - values[-2])  # 480 (NaN's place), 65536 (inf's)
        ends = np.append(values, above)
        ties = (ends[:-1] + ends[1:]) / np.float32(2)  # exact: FP8 values have few bits
        base = np.concatenate([values, ties, [fp8_format(fmt).max_norm * 2]]).astype(np.float32)
        pos += [base, np.nextafter(base, np.float32(np.inf)), np.nextafter(base, np.float32(0))]
    powers = np.float32(2.0) ** np.arange(-30, 20, dtype=np.float32)
    pos += [powers, np.nextafter(powers, np.float32(0))]
    pos = np.concatenate(pos)
    nans = _f32([0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFBFFFFF, 0x7FFFFFFF, 0xFFFFFFFF])
    return np.concatenate([pos, -pos, nans])
