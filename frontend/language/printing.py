"""`tylo.print(fmt, *values)`: printf from the GPU, with Python's format syntax.

The format takes ``{}`` placeholders in order (``{{`` and ``}}`` are braces), each with an
optional spec after a colon. A static value (an int, float, string, layout, plan: anything
that is not a runtime value) is formatted into the text while the kernel is compiled, with
Python's own ``format`` (so any spec Python accepts, and ``!r``/``!s``). A runtime scalar
becomes a printf argument: its C conversion follows from its dtype and the spec
(`tylo.compiler.hardware.printf.printf_conversion`): ``{:08x}`` of an Int64 becomes ``%08llx`` and
``{:.3f}`` of a BFloat16 ``%.3f`` of the value widened to a double, as C's varargs are (floats to f64, 8/16-bit integers and Bool to 32 bits, 64-bit ones stay 64-bit,
unsigned dtypes print unsigned). Every thread that runs the call prints a line; the driver
writes the lines to the process's stdout when the launch's context synchronizes.
"""

from __future__ import annotations

import string

from ...compiler.hardware import dtypes
from ...compiler.support.errors import CompileError, TypeMismatchError, UnsupportedError
from ...compiler.hardware.printf import MAX_ARGUMENTS, printf_conversion
from ...dialects.builder import emit
from ...dialects.scalars import Scalar
from ...dialects.tylo.printing import PrintOp
from .fragments import Fragment
from .tiles import Pointer, Tile
from ..tracing.tracing import current

_FORMATTER = string.Formatter()


def device_print(fmt: str, *values, end: str = "\n") -> None:
    """Print from every thread that runs it: `fmt` with its ``{}`` placeholders replaced by
    `values`, then `end` (a newline unless given), through CUDA's device printf.

    fmt: a static str with one ``{}`` (or ``{:spec}``) per value, in order. Static values are
    formatted while compiling; runtime scalars (at most 32) on the device. A runtime spec is
    ``[<|>][+|-| ][0][width][.precision][type]`` with types d, x, X, o for integers and Bool, e,
    E, f, F, g, G for floats; ``{}`` of a float prints like C's ``%g``, and hex/octal of a signed
    value prints its two's-complement bits (see `tylo.compiler.hardware.printf`).
    Raises CompileError (at the caller's line) when the placeholders and values differ in
    number or the format does not parse, UnsupportedError for a spec printf cannot follow or a
    named/nested field, TypeMismatchError for a spec of the other kind of value, a fragment
    (print its slots, ``f[v]``), a tile or pointer.
    """
    current()  # only while a kernel is traced
    if not isinstance(fmt, str) or not isinstance(end, str):
        bad = fmt if not isinstance(fmt, str) else end
        raise TypeMismatchError(f"tylo.print: the format and end= are static strings, got {bad!r}")
    try:
        pieces = list(_FORMATTER.parse(fmt))
    except ValueError as e:
        raise CompileError(f"tylo.print: the format {fmt!r} does not parse: {e}") from None
    fields = [p for p in pieces if p[1] is not None]
    if len(fields) != len(values):
        raise CompileError(f"tylo.print: the format has {_count(len(fields), 'placeholder')} and "
                           f"{_count(len(values), 'value')} {'was' if len(values) == 1 else 'were'} "
                           f"given ({fmt!r})")
    text, arguments = [], []
    index = 0
    for literal, field, spec, conversion in pieces:
        text.append(literal.replace("%", "%%"))
        if field is None:
            continue
        where = f"tylo.print placeholder {index} '{{{field}{'!' + conversion if conversion else ''}{':' + spec if spec else ''}}}'"
        value, index = values[index], index + 1
        if field:
            raise UnsupportedError(f"{where}: placeholders are '{{}}' in order; named and "
                                   "numbered fields are not supported")
        if "{" in spec:
            raise UnsupportedError(f"{where}: a nested field in the spec is not supported")
        if isinstance(value, Scalar):
            if conversion:
                raise UnsupportedError(f"{where}: !{conversion} converts static values only")
            directive, promoted = printf_conversion(spec, value.dtype, where)
            text.append(directive)
            arguments.append(_promote(value, promoted))
        else:
            text.append(_static(value, spec, conversion, where).replace("%", "%%"))
    text.append(end.replace("%", "%%"))
    if len(arguments) > MAX_ARGUMENTS:
        raise UnsupportedError(f"tylo.print: {len(arguments)} runtime values; a device printf "
                               f"passes at most {MAX_ARGUMENTS} (split the print)")
    out = "".join(text)
    if "\0" in out:
        raise UnsupportedError("tylo.print: a NUL character would end the C format early")
    emit(PrintOp(out, [a.value for a in arguments]))


def _static(value, spec: str, conversion: str | None, where: str) -> str:
    """`value` formatted now, as Python's str.format would."""
    if isinstance(value, Fragment):
        raise TypeMismatchError(
            f"{where}: a fragment holds one value per slot ({value.slots} here); print its "
            "slots, f[0], f[1], ... (f[v] for a static slot v)")
    if isinstance(value, (Tile, Pointer)):
        raise TypeMismatchError(f"{where}: {value!r} has no printable value; print its "
                                "elements (x[i]) or its shape")
    if isinstance(value, (tuple, list)) and any(_holds_runtime(v) for v in value):
        raise TypeMismatchError(f"{where}: {type(value).__name__} {value!r} holds runtime "
                                "values; give each its own placeholder")
    try:
        converted = _FORMATTER.convert_field(value, conversion)
        return format(converted, spec)
    except (ValueError, TypeError) as e:
        raise CompileError(f"{where}: {e}") from None


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _holds_runtime(v) -> bool:
    if isinstance(v, (tuple, list)):
        return any(_holds_runtime(x) for x in v)
    return isinstance(v, (Scalar, Fragment, Tile, Pointer))


def _promote(v: Scalar, to: dtypes.DType) -> Scalar:
    """`v` as the C vararg printf reads: floats widened to Float64 (through Float32, which
    is exact and converts on every target); integers to `to`. An 8- or 16-bit value passed
    unsigned (hex/octal of a signed one, any unsigned one) is widened and masked to its own
    bits, so a signed value prints its two's complement, and the result does not depend on
    how the narrow register was extended when it was loaded."""
    d = v.dtype
    if d.is_float:
        return (v if d.bits >= 32 else v.to(dtypes.Float32)).to(dtypes.Float64)
    if to.kind == "uint" and d.is_int and d.bits < 32:
        masked = v.to(dtypes.Int32) & ((1 << d.bits) - 1)
        return Scalar(masked.value, dtypes.UInt32)
    if to.kind == "uint" and d.kind == "int":
        return Scalar(v.value, to)  # same width: the same bits, read as unsigned
    return v.to(to)


EXPORTS = (
    "device_print",
)
"""Names this module adds to the `tylo` namespace (api/__init__.py finds them)."""

__all__ = ["device_print"]
