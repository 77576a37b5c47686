"""The tcgen05.mma instruction descriptor: a 32-bit word giving shape, types, majorness, negation.

Source: PTX ISA section 9.7.16.4.2 "Instruction descriptor", Table 42 (newer builds 9.7.17.4.2),
anchor ``#tcgen05-instruction-descriptor``, for ``.kind::tf32``, ``.kind::f16``,
``.kind::f8f6f4`` and ``.kind::i8`` (restated in docs/facts/ptx_isa.md section 4.1).
Which kinds allow transpose and negate: PTX section 9.7.16.10.1, Table 49
(``#tcgen05-transpose-negate-mma-kind``).

Two tables, each the only place its facts live:

* `IDESC_FIELDS`: bit range of every field (reserved bits 6, 23 and 29 must be zero), packed
  and unpacked by `bitfields`.
* `KINDS`: per MMA kind, the D type codes and the A/B type codes, and whether the kind has
  negation and saturation.

Majorness is ``"K"`` (K contiguous, "no transpose") or ``"MN"`` (M or N contiguous,
"transpose"). For ``.kind::tf32`` the PTX allows transpose only with the 128-byte swizzle of
32-byte atomicity, and for the other kinds never with that swizzle; the descriptor itself
cannot see the swizzle, so `instruction_descriptor` encodes MN-major tf32 and the operand check
(`tcgen05_operand`) is where storage that cannot be transposed is refused.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..hardware import dtypes
from ..hardware.dtypes import DType
from ..support.errors import PlanError
from .bitfields import BitField, pack_fields, unpack_fields


_WHAT = "instruction descriptor"

#: PTX Table 42: field name -> bit range. Bits 6, 23 and 29 are reserved (zero).
IDESC_FIELDS: dict[str, BitField] = {
    "sparsity_selector": BitField(0, 2),
    "sparse": BitField(2, 1),
    "saturate": BitField(3, 1),
    "d_type": BitField(4, 2),
    "a_type": BitField(7, 3),
    "b_type": BitField(10, 3),
    "negate_a": BitField(13, 1),
    "negate_b": BitField(14, 1),
    "transpose_a": BitField(15, 1),
    "transpose_b": BitField(16, 1),
    "n_dim": BitField(17, 6),   # N >> 3
    "m_dim": BitField(24, 5),   # M >> 4
    "max_shift": BitField(30, 2),  # B reuse shift of .ws; 0 = none
}


@dataclass(frozen=True)
class KindCodes:
    """One row of `KINDS`: the PTX ``.kind`` name and its type codes (PTX Table 42)."""

    ptx: str
    d_codes: dict[DType, int]
    ab_codes: dict[DType, int]
    negate: bool     # Table 49: negate A/B supported
    saturate: bool   # bit 3 is meaningful (integer kinds only)


#: Per MMA kind: D codes and A/B codes. Float32 inputs are read as TF32 by ``.kind::tf32``.
#: f8f6f4 also has E2M3 = 3, E3M2 = 4, E2M1 = 5, which Tylo has no element types for.
KINDS: dict[str, KindCodes] = {
    "tf32": KindCodes("kind::tf32", {dtypes.Float32: 1}, {dtypes.Float32: 2}, True, False),
    "f16": KindCodes("kind::f16", {dtypes.Float16: 0, dtypes.Float32: 1},
                     {dtypes.Float16: 0, dtypes.BFloat16: 1}, True, False),
    "f8f6f4": KindCodes("kind::f8f6f4", {dtypes.Float16: 0, dtypes.Float32: 1},
                        {dtypes.Float8E4M3: 0, dtypes.Float8E5M2: 1}, True, False),
    "i8": KindCodes("kind::i8", {dtypes.Int32: 2}, {dtypes.UInt8: 0, dtypes.Int8: 1}, False, True),
}

MAJORS = {"K": 0, "MN": 1}


def kind_of(a: DType) -> str | None:
    """The kind whose A/B type codes include ``a``, or None."""
    for name, row in KINDS.items():
        if a in row.ab_codes:
            return name
    return None


def _major(which: str, value) -> int:
    try:
        return MAJORS[value]
    except (KeyError, TypeError):
        raise PlanError(f"instruction_descriptor: {which} = {value!r}: expected 'K' (K contiguous) "
                        f"or 'MN' (M or N contiguous)") from None


def instruction_descriptor(atom, a_major: str = "K", b_major: str = "K", *,
                           negate_a: bool = False, negate_b: bool = False,
                           saturate: bool = False) -> int:
    """The 32-bit tcgen05.mma instruction descriptor of a dense `Tcgen05MMA` atom.

    A pure function of the atom's shape (m, n), element types (kind, D/A/B codes) and the
    operands' majorness (``"K"`` or ``"MN"``), plus the optional negate bits (not for
    ``.kind::i8``) and saturate bit (``.kind::i8`` only). Sparsity and the ``.ws`` B-reuse
    shift are 0. Source: PTX Table 42 (#tcgen05-instruction-descriptor), Table 49.

    Raises PlanError for an atom that is not a `Tcgen05MMA`, a majorness other than "K"/"MN",
    negation on ``.kind::i8`` or saturation on a floating-point kind.
    """
    kind = getattr(atom, "kind", None)
    if kind not in KINDS:
        raise PlanError(f"instruction_descriptor: {atom!r} is not a Tcgen05MMA atom "
                        "(no tcgen05 kind)")
    row = KINDS[kind]
    if (negate_a or negate_b) and not row.negate:
        raise PlanError(f"instruction_descriptor: negate_a/negate_b: .{row.ptx} has no "
                        "negation (PTX Table 49)")
    if saturate and not row.saturate:
        raise PlanError(f"instruction_descriptor: saturate: only .kind::i8 saturates, not .{row.ptx}")
    return pack_fields(IDESC_FIELDS, {
        "sparsity_selector": 0, "sparse": 0, "saturate": int(bool(saturate)),
        "d_type": row.d_codes[atom.c], "a_type": row.ab_codes[atom.a],
        "b_type": row.ab_codes[atom.b],
        "negate_a": int(bool(negate_a)), "negate_b": int(bool(negate_b)),
        "transpose_a": _major("a_major", a_major), "transpose_b": _major("b_major", b_major),
        "n_dim": atom.n >> 3, "m_dim": atom.m >> 4, "max_shift": 0,
    }, what=_WHAT)


def encode_instruction_descriptor(**fields: int) -> int:
    """Pack every field of `IDESC_FIELDS` (by name) into a descriptor word.

    Raises GeometryError for a missing or unknown field or a value too wide for its bits."""
    return pack_fields(IDESC_FIELDS, fields, what=_WHAT)


def decode_instruction_descriptor(word: int) -> dict[str, int]:
    """The fields of a 32-bit descriptor word, by name (``n_dim`` is N >> 3, ``m_dim`` M >> 4).

    Raises GeometryError when ``word`` is not a 32-bit unsigned integer or sets a reserved bit."""
    return unpack_fields(IDESC_FIELDS, word, 32, what=_WHAT)
