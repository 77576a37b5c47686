"""PTX fundamental types and register classes: the one table of PTX type suffixes.

Source: PTX ISA section 5.2 "Types" (5.2.1 Fundamental Types, 5.2.5 Packed Data Types) and
section 5.3 / 9.7 for which register types an instruction type may name
(https://docs.nvidia.com/cuda/parallel-thread-execution/#fundamental-types). A register of a
bit-size class (``.b16``, ``.b32``, ``.b64``) may be used by any instruction type of that size;
``.f32``/``.f64`` registers hold floating-point values; ``.pred`` holds predicates. 8-bit values
live in 16-bit registers (PTX has no 8-bit register class in practice; nvcc uses ``.b16``); an FP8
value sits in the low byte of its ``.b16`` register.

`arith_min_sm`: ``add``/``sub``/``mul``/``setp`` on ``.bf16`` need sm_90 (PTX ISA 9.7.4
half-precision arithmetic, 9.7.5 comparison: "requires sm_90 or higher" for ``.bf16``); below
that Tylo computes in f32 and rounds once (`passes.lower_to_ptx`).
`param` is the type a kernel parameter of that type is declared with, where it differs.
`pair` names the packed type of two values of a type (``f16`` -> ``f16x2``: low element in the
low bits). FP8 (``e4m3``, ``e5m2``) has no scalar ``cvt`` at all, only the paired forms of PTX ISA
9.7.9.21 cvt (sm_89+, PTX 7.8): ``cvt.rn.satfinite.e4m3x2.f32 d, a, b`` (a -> bits 15:8, b -> bits
7:0) and ``cvt.rn.f16x2.e4m3x2 d, a``, and the same for ``e5m2x2``; `cvt_pair` gives the packed
type a scalar type converts through when it has no scalar form.
Plain Python: imported by the dtype table, the ptx dialect, the lowering and the printer alike.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..support.errors import UnsupportedError


@dataclass(frozen=True)
class PtxType:
    suffix: str  # as written after an opcode: "s32", "bf16x2"
    bits: int
    kind: str  # "b" bits, "s" signed, "u" unsigned, "f" float, "pred"
    reg: str  # register class that holds a value of this type
    pair: str | None = None  # the packed type of two such values ("f16" -> "f16x2")
    cvt_scalar: bool = True  # False: cvt converts this type only in pairs, as `pair` (FP8)
    param: str | None = None  # the type a .param declaration / ld.param names, when not `suffix`
    min_sm: int = 0  # lowest target that converts this type at all (FP8 cvt: sm_89, bf16: sm_80)
    arith_min_sm: int = 0  # lowest target with add/sub/mul/setp on this type (bf16: sm_90)


@dataclass(frozen=True)
class RegisterClass:
    name: str  # as declared: ".reg .b32"
    prefix: str  # virtual register name prefix: "%r"
    bits: int


REGISTER_CLASSES: dict[str, RegisterClass] = {
    r.name: r
    for r in (
        RegisterClass("pred", "%p", 1),
        RegisterClass("b16", "%rs", 16),
        RegisterClass("b32", "%r", 32),
        RegisterClass("b64", "%rd", 64),
        RegisterClass("f32", "%f", 32),
        RegisterClass("f64", "%fd", 64),
    )
}

PTX_TYPES: dict[str, PtxType] = {
    t.suffix: t
    for t in (
        PtxType("pred", 1, "pred", "pred"),
        PtxType("b8", 8, "b", "b16"),
        PtxType("b16", 16, "b", "b16"),
        PtxType("b32", 32, "b", "b32"),
        PtxType("b64", 64, "b", "b64"),
        PtxType("s8", 8, "s", "b16"),
        PtxType("s16", 16, "s", "b16"),
        PtxType("s32", 32, "s", "b32"),
        PtxType("s64", 64, "s", "b64"),
        PtxType("u8", 8, "u", "b16"),
        PtxType("u16", 16, "u", "b16"),
        PtxType("u32", 32, "u", "b32"),
        PtxType("u64", 64, "u", "b64"),
        PtxType("f16", 16, "f", "b16", pair="f16x2", param="b16"),
        PtxType("bf16", 16, "f", "b16", pair="bf16x2", param="b16", min_sm=80, arith_min_sm=90),
        PtxType("e4m3", 8, "f", "b16", pair="e4m3x2", cvt_scalar=False, param="b8", min_sm=89),
        PtxType("e5m2", 8, "f", "b16", pair="e5m2x2", cvt_scalar=False, param="b8", min_sm=89),
        PtxType("f16x2", 32, "f", "b32"),
        PtxType("bf16x2", 32, "f", "b32", min_sm=80),
        PtxType("e4m3x2", 16, "f", "b16", min_sm=89),
        PtxType("e5m2x2", 16, "f", "b16", min_sm=89),
        PtxType("tf32", 32, "f", "b32"),
        PtxType("f32", 32, "f", "f32"),
        PtxType("f64", 64, "f", "f64"),
    )
}


def ptx_type(suffix: str) -> PtxType:
    try:
        return PTX_TYPES[suffix]
    except KeyError:
        raise ValueError(f"unknown PTX type suffix '.{suffix}'") from None


def register_class(suffix: str) -> RegisterClass:
    """The register class holding one value of PTX type `suffix`."""
    return REGISTER_CLASSES[ptx_type(suffix).reg]


def param_type(suffix: str) -> str:
    """The type a kernel ``.param`` of a `suffix` value is declared and read (``ld.param``) with:
    the 16- and 8-bit floats travel as raw bits (``.b16``/``.b8``), because ptxas does not
    accept ``.param .bf16`` (PTX ISA 5.1.6: parameters take the fundamental types of 5.2.1;
    bf16 and the FP8 types are alternate formats, 5.2.3)."""
    t = ptx_type(suffix)
    return t.param or t.suffix


def cvt_pair(suffix: str) -> str | None:
    """The packed type `cvt` converts `suffix` through when PTX has no scalar `cvt` of it
    (``"e4m3"`` -> ``"e4m3x2"``), else None."""
    t = ptx_type(suffix)
    return None if t.cvt_scalar else t.pair


PAIR_TYPES = frozenset(t.pair for t in PTX_TYPES.values() if t.pair)
"""Packed types ``cvt`` writes from two ``.f32`` sources (``cvt.rn{.satfinite}.<pair>.f32 d, a, b``)."""


# PTX ISA version printed for a target: the first release with every instruction Tylo may emit
# for it. 8.4 brings FP8 mma.sync (sm_89/sm_90); newer targets need the release that introduced
# them (PTX ISA "Release Notes": sm_100a 8.6, sm_120a 8.7, sm_103a/sm_121a 8.8, sm_110a 9.0).
# sm_100a prints 8.7, the floor the tcgen05 path was specified for (ptxas 13.0 also assembles
# its tcgen05.alloc/ld/st/mma .kind::f16/commit forms at 8.6: measured). The family targets
# (``f``) came with 8.8, sm_110f with 9.0 (ptxas 13.0: "PTX .version 8.7 does not support
# .target sm_100f", measured for sm_100f/103f/120f/121f at 8.7 and sm_110f at 8.8).
PTX_VERSION_BY_SM = {100: "8.7", 103: "8.8", 110: "9.0", 120: "8.7", 121: "8.8"}
FAMILY_PTX_VERSION = "8.8"
DEFAULT_PTX_VERSION = "8.4"


# The compute capabilities ptxas 13 targets (``ptxas --help``, --gpu-name), and which take the
# architecture-specific ``a`` suffix (sm_90a and the Blackwell parts) or the family ``f``.
# sm_101 is not one: CUDA 13 renamed it sm_110 (ptxas 13.0: "Value 'sm_101a' is not defined for
# option 'gpu-name'").
KNOWN_SM = (75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121)
ARCH_SPECIFIC_SM = (90, 100, 103, 110, 120, 121)
FAMILY_SM = (100, 103, 110, 120, 121)
RENAMED_SM = {101: 110}


def arch_number(arch: str) -> int:
    """``"sm_90a"`` -> 90, ``"sm_100a"`` -> 100. Raises UnsupportedError for anything that is
    not a target ptxas 13 knows: ``sm_XY`` with XY in `KNOWN_SM`, an ``a`` suffix only where
    `ARCH_SPECIFIC_SM` has it and ``f`` where `FAMILY_SM` does."""
    name = arch.removeprefix("sm_") if isinstance(arch, str) and arch.startswith("sm_") else ""
    digits, suffix = name.rstrip("af"), name[len(name.rstrip("af")):]
    ok = (digits.isdigit() and int(digits) in KNOWN_SM and suffix in ("", "a", "f")
          and (suffix != "a" or int(digits) in ARCH_SPECIFIC_SM)
          and (suffix != "f" or int(digits) in FAMILY_SM))
    if not ok:
        known = ", ".join(f"sm_{n}" for n in KNOWN_SM)
        renamed = RENAMED_SM.get(int(digits)) if digits.isdigit() else None
        hint = (f" (CUDA 13 renamed sm_{digits} to sm_{renamed}: use 'sm_{renamed}{suffix}')"
                if renamed else "")
        raise UnsupportedError(f"target {arch!r} is not a target Tylo compiles for{hint}: "
                               f"{known}, with 'a' after sm_90 and the sm_10x-12x parts (e.g. "
                               f"'sm_90a'), 'f' after the sm_10x-12x parts")
    return int(digits)


def ptx_version(arch: str) -> str:
    """The ``.version`` Tylo prints for target `arch`: `PTX_VERSION_BY_SM`, at least
    `FAMILY_PTX_VERSION` for a family target (``sm_100f``)."""
    version = PTX_VERSION_BY_SM.get(arch_number(arch), DEFAULT_PTX_VERSION)
    if arch.endswith("f") and tuple(map(int, version.split("."))) < (8, 8):
        version = FAMILY_PTX_VERSION
    return version


# tcgen05 (TMEM, tcgen05.mma) exists on the datacenter Blackwell parts only, with the
# architecture-specific or family target (PTX ISA 9.7.16 "TensorCore 5th Generation": sm_100a,
# sm_100f and later; ptxas 13.0 accepts sm_100a/f, sm_103a/f, sm_110a/f and refuses sm_120a
# "Instruction 'tcgen05.mma' not supported on .target 'sm_120a'", measured here).
TCGEN05_SM = (100, 103, 110)


def tcgen05_target_error(arch: str, instruction: str) -> str | None:
    """None when `arch` runs tcgen05 instructions, else the message naming `instruction` (e.g.
    ``"tcgen05.mma"``) and the target. Raises UnsupportedError for an unknown target."""
    sm = arch_number(arch)
    if sm in TCGEN05_SM and arch[-1] in "af":
        return None
    targets = ", ".join(f"sm_{n}a" for n in TCGEN05_SM)
    return (f"{instruction} needs a datacenter Blackwell target ({targets}, or their 'f' "
            f"family forms); the target is {arch}")
