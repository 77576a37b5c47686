"""Where each kernel parameter's bytes go in a parameter buffer: 8-byte slots and byte arrays.

A kernel parameter is a scalar of a PTX type (``.param .u64``, ``.s32`` ...) or a byte array
declared ``.param .align A .b8 name[N]`` (PTX ISA 5.1.6 "Kernel Function Parameters", 5.4.5
alignment of ``.param`` variables). The one byte array Tylo passes is the CUDA tensor map: the
128-byte ``CUtensorMap`` by value, which must sit at a 64-byte-aligned address (CUDA Driver API,
"Tensor Map Object Management"; the ``__grid_constant__`` parameter of CUDA C++).

`param_layout` is the one place that lays parameters out in Tylo's own buffers (the launch's
value area in `runtime.packing`, the emulator's parameter space): every scalar gets an 8-byte
slot at a multiple of 8, every byte array its size rounded up to 8 at a multiple of its
alignment, in order. Without byte arrays parameter i is at byte 8 i, as it always was.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

TENSOR_MAP_BYTES = 128
"""Size of a ``CUtensorMap`` (CUDA driver API: ``CU_TENSOR_MAP_NUM_QWORDS`` = 16 qwords)."""
TENSOR_MAP_ALIGN = 64
"""Alignment of a ``CUtensorMap`` in host and parameter memory (CUDA driver API)."""
SLOT_BYTES = 8
"""Bytes of one scalar parameter's slot (every PTX scalar type fits)."""

_BYTE_ARRAY = re.compile(r"align (\d+) b8\[(\d+)\]")


def byte_array_param(align: int, size: int) -> str:
    """The parameter-type string of a byte array (``"align 64 b8[128]"``), as `ptx.entry` and
    `DeviceParam.ptx_type` carry it."""
    return f"align {align} b8[{size}]"


TENSOR_MAP_PARAM = byte_array_param(TENSOR_MAP_ALIGN, TENSOR_MAP_BYTES)
"""The parameter type of a tensor map: ``.param .align 64 .b8 name[128]``."""


def parse_byte_array(declared: str) -> tuple[int, int] | None:
    """(alignment, size) of a byte-array parameter type string, None for a scalar type.
    ValueError for an alignment that is not a power of two or a size that is not positive."""
    m = _BYTE_ARRAY.fullmatch(declared)
    if m is None:
        return None
    align, size = int(m.group(1)), int(m.group(2))
    if align < 1 or align & (align - 1) or size < 1:
        raise ValueError(f"byte-array parameter '{declared}': the alignment must be a power of "
                         "two and the size positive")
    return align, size


def param_layout(types: Sequence[str]) -> tuple[tuple[int, ...], int]:
    """(byte offset of each parameter, total bytes) for parameter type strings `types` (PTX
    scalar suffixes or `byte_array_param` strings), laid out as the module docstring says."""
    offsets, at = [], 0
    for t in types:
        array = parse_byte_array(t)
        align, size = (SLOT_BYTES, SLOT_BYTES) if array is None else array
        align = max(align, SLOT_BYTES)
        at = (at + align - 1) // align * align
        offsets.append(at)
        at += (size + SLOT_BYTES - 1) // SLOT_BYTES * SLOT_BYTES
    return tuple(offsets), at


def has_byte_arrays(types: Sequence[str]) -> bool:
    """Whether any parameter is a byte array (the launch then uses the general layout)."""
    return any(parse_byte_array(t) is not None for t in types)
