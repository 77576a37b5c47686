"""Device printf formats: C printf conversions as CUDA's ``vprintf`` reads them, and the Python
format specs `tylo.print` maps onto them. Plain Python, shared by the frontend, the ``tylo.print``
verifier and the lowering.

Facts (CUDA C++ Programming Guide, "Formatted Output"): a device ``printf`` takes a C format
``%[flags][width][.precision][size]type`` with flags ``#``, space, ``0``, ``+``, ``-``, sizes ``h``,
``hh``, ``l``, ``ll`` and types ``cdiouxXpeEfgGaAs``; its arguments arrive after C's default
argument promotions (float to double, integers narrower than int to int), at most 32 of them
after the format (more are ignored); the output is formatted on the host by the host's C library,
and ``long`` (``l``) is 64 bits on the 64-bit Linux hosts Tylo runs on. The lowering passes the
arguments to ``vprintf(fmt, args)`` in one buffer laid out as a C struct of the promoted values
(`buffer_layout`).

`printf_conversion` maps one Python spec (``{:08x}``, ``{:.3f}``, ``{:>6}``) of a runtime value of
some dtype to the conversion that prints it as Python's ``format`` would, choosing the length
modifier and the signedness from the dtype, so a mismatch such as ``%d`` of a double cannot be
written. A spec whose printf output would differ from Python's is refused, with two documented
exceptions: ``x``/``X``/``o`` of a negative signed value print the two's-complement bits of its
dtype's width (C's view; Python would write ``-ff``), and a float without a type (``{}``,
``{:.3}``) prints as C's ``%g`` (6 significant digits), not as Python's shortest repr. (A NaN
prints as the host C library writes it, ``nan`` or ``-nan``.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import dtypes
from .dtypes import DType
from ..support.errors import TypeMismatchError, UnsupportedError

MAX_ARGUMENTS = 32
"""The most arguments a device printf passes after its format (more are ignored by CUDA)."""

ARGUMENT_TYPES = ("i32", "i64", "f64")
"""The C types a vprintf argument buffer holds after the default promotions: int (and unsigned
int), long long (and unsigned), double."""

_C_CONVERSION = re.compile(r"%(?P<flags>[-+ #0]*)(?P<width>\*|\d*)(?:\.(?P<prec>\*|\d*))?"
                           r"(?P<length>hh|h|ll|l|L|j|z|t)?(?P<type>.?)", re.S)
_INT_TYPES, _FLOAT_TYPES = "diouxXc", "eEfFgGaA"


@dataclass(frozen=True)
class Conversion:
    """One conversion of a C format: as written (``%08llx``) and the argument it reads."""

    text: str
    argument: str  # "i32", "i64" or "f64"


def conversions(fmt: str) -> list[Conversion]:
    """The conversions of C printf format `fmt`, in order (``%%`` reads no argument).

    Raises ValueError for what a Tylo print never passes: ``%s``, ``%p``, ``%n``, ``*`` widths
    and precisions, sizes other than h, hh, l, ll, and a ``%`` that starts no conversion."""
    found = []
    i = fmt.find("%")
    while i >= 0:
        m = _C_CONVERSION.match(fmt, i)
        text, kind = m.group(0), m.group("type")
        if kind == "%" and text == "%%":
            i = fmt.find("%", m.end())
            continue
        if "*" in (m.group("width"), m.group("prec")):
            raise ValueError(f"'{text}': '*' reads its width or precision from an argument")
        length = m.group("length") or ""
        if length not in ("", "h", "hh", "l", "ll"):
            raise ValueError(f"'{text}': the size '{length}' is not one of h, hh, l, ll")
        if not kind:
            raise ValueError(f"'{text}' at the end of the format starts no conversion")
        if kind in _INT_TYPES:
            argument = "i64" if length in ("l", "ll") else "i32"
        elif kind in _FLOAT_TYPES and length in ("", "l"):
            argument = "f64"
        else:
            raise ValueError(f"'{text}' is not a conversion of an int, long long or double")
        found.append(Conversion(text, argument))
        i = fmt.find("%", m.end())
    return found


def buffer_layout(arguments: list[str]) -> tuple[list[int], int]:
    """Byte offsets of promoted arguments (`ARGUMENT_TYPES` names) in vprintf's buffer, a C
    struct: each at its natural alignment (4 for i32, 8 for i64/f64); and the buffer's size,
    a multiple of 8."""
    offsets, end = [], 0
    for a in arguments:
        size = 4 if a == "i32" else 8
        end = -(-end // size) * size
        offsets.append(end)
        end += size
    return offsets, -(-end // 8) * 8


# ---------------------------------------------------------------------------------------------
# Python format specs of runtime values.

_PY_SPEC = re.compile(
    r"(?:(?P<fill>.)?(?P<align>[<>=^]))?(?P<sign>[-+ ])?(?P<z>z)?(?P<alt>#)?(?P<zero>0)?"
    r"(?P<width>\d+)?(?P<grouping>[,_])?(?:\.(?P<precision>\d+))?(?P<type>.)?\Z", re.S)


def _refuse(where: str, why: str, error=UnsupportedError):
    raise error(f"{where}: {why}")


def printf_conversion(spec: str, dtype: DType, where: str) -> tuple[str, DType]:
    """The C conversion printing a runtime `dtype` value as ``format(value, spec)`` does, and the
    dtype the value is passed as (Int32, UInt32, Int64, UInt64 or Float64).

    spec: a Python format spec (the text after ``:`` in ``{:08x}``) made of ``[ |<|>]`` alignment
    (fill: spaces only), sign ``+``, ``-`` or space, ``#`` (floats), ``0``, a width, ``.precision``
    (floats) and a type: ``d``, ``x``, ``X``, ``o`` for integers and Bool (``d`` of an unsigned
    dtype is ``%u``), ``e``, ``E``, ``f``, ``F``, ``g``, ``G`` for floats, or none (``d``; ``g``
    for floats). Hex and octal pass an unsigned value: the bits of the dtype's width.
    where: names the placeholder in the messages.
    Raises UnsupportedError for a spec printf cannot follow (centering, other fills, grouping,
    ``b``/``c``/``n``/``%``, ``0`` with an alignment, ``#`` or a sign on integers where C's
    output differs from Python's, integer precision) and TypeMismatchError for a type of the other kind of value
    (``{:d}`` of a float, ``{:f}`` or ``{:s}`` of an integer).
    """
    m = _PY_SPEC.match(spec)
    if m is None:
        _refuse(where, f"'{spec}' is not a Python format spec")
    g = m.groupdict()
    if g["align"] in ("^", "="):
        what = "centering" if g["align"] == "^" else "'=' alignment (write '0' before the width)"
        _refuse(where, f"{what} has no printf form")
    if g["fill"] not in (None, " "):
        _refuse(where, f"fill character {g['fill']!r}: printf pads with spaces, or zeros with '0' "
                       "before the width")
    if g["z"] or g["grouping"]:
        _refuse(where, f"'{g['z'] or g['grouping']}' has no printf form")
    if g["zero"] and g["align"]:
        _refuse(where, f"'0' with the alignment '{g['align']}' makes '0' a fill character "
                       "(Python writes -5 as '000-5'); printf's '0' pads after the sign: drop "
                       "the alignment")
    kind = g["type"]
    if dtype.is_float:
        conv = _float_type(kind, dtype, where)
        promoted, length = dtypes.Float64, ""
    else:
        conv = _int_type(kind, dtype, where, g)
        unsigned = conv in "xXo" or dtype.kind == "uint"
        wide = dtype.bits == 64
        promoted = {(False, False): dtypes.Int32, (True, False): dtypes.UInt32,
                    (False, True): dtypes.Int64, (True, True): dtypes.UInt64}[unsigned, wide]
        if conv == "d" and dtype.kind == "uint":
            conv = "u"
        length = "ll" if wide else ""
    flags = ("-" if g["align"] == "<" else "") + (g["sign"] if g["sign"] in ("+", " ") else "")
    flags += ("#" if g["alt"] else "") + ("0" if g["zero"] else "")
    precision = f".{g['precision']}" if g["precision"] is not None else ""
    return f"%{flags}{g['width'] or ''}{precision}{length}{conv}", promoted


def _float_type(kind: str | None, dtype: DType, where: str) -> str:
    if kind is None:
        return "g"
    if kind in "eEfFgG":
        return kind
    if kind in "dxXobcn":
        _refuse(where, f"'{kind}' formats integers and this value is a {dtype}; convert it with "
                       ".to(Int32) (or another integer dtype) first", TypeMismatchError)
    if kind == "s":
        _refuse(where, f"'s' formats strings and this value is a {dtype}", TypeMismatchError)
    if kind == "%":
        _refuse(where, "'%' has no printf form: multiply by 100 and write '{:f}%'")
    _refuse(where, f"'{kind}' is not a format type of a float (e, E, f, F, g, G)")


def _int_type(kind: str | None, dtype: DType, where: str, g: dict) -> str:
    if kind is not None and kind in "eEfFgG%":
        _refuse(where, f"'{kind}' formats floats and this value is a {dtype}; convert it with "
                       ".to(Float32) first", TypeMismatchError)
    if kind == "s":
        _refuse(where, f"'s' formats strings and this value is a {dtype}", TypeMismatchError)
    if kind in ("b", "c", "n"):
        why = {"b": "printf has no binary conversion; use 'x'", "c": "'c' is not supported",
               "n": "'n' (locale digits) has no printf form"}[kind]
        _refuse(where, why)
    if kind not in (None, "d", "x", "X", "o"):
        _refuse(where, f"'{kind}' is not a format type of an integer (d, x, X, o)")
    conv = kind or "d"
    if g["precision"] is not None:
        _refuse(where, "an integer takes no precision (Python refuses it too)")
    if g["alt"]:
        _refuse(where, "'#' writes zero and octal prefixes unlike Python (C prints 0, not 0x0); "
                       "write the prefix into the format, '0x{:x}'")
    if g["sign"] in ("+", " ") and (conv in "xXo" or dtype.kind == "uint"):
        _refuse(where, f"sign '{g['sign']}' of an unsigned or hex/octal value: printf ignores it")
    return conv
