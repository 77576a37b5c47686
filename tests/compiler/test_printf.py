"""compiler/hardware/printf.py: C format conversions, the vprintf buffer layout, and Python specs mapped to
printf conversions. The mapping is checked against the host C library's snprintf (CUDA formats a
device printf's output on the host with it): the promoted value through the C conversion prints
exactly what Python's format prints of the value."""

from __future__ import annotations

import ctypes
import ctypes.util

import ml_dtypes
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tylo.compiler.hardware import dtypes
from tylo.compiler.support.errors import TypeMismatchError, UnsupportedError
from tylo.compiler.hardware.printf import buffer_layout, conversions, printf_conversion

LIBC = ctypes.CDLL(ctypes.util.find_library("c"))
C_TYPES = {dtypes.Int32: ctypes.c_int, dtypes.UInt32: ctypes.c_uint,
           dtypes.Int64: ctypes.c_longlong, dtypes.UInt64: ctypes.c_ulonglong,
           dtypes.Float64: ctypes.c_double}
INTS = [dtypes.Bool, dtypes.Int8, dtypes.UInt8, dtypes.Int16, dtypes.UInt16, dtypes.Int32,
        dtypes.UInt32, dtypes.Int64, dtypes.UInt64]
FLOATS = [dtypes.BFloat16, dtypes.Float16, dtypes.Float32, dtypes.Float64]


def c_printf(fmt: str, *args) -> str:
    buf = ctypes.create_string_buffer(512)
    LIBC.snprintf(buf, 512, fmt.encode(), *args)
    return buf.value.decode()


def device_text(spec: str, dtype, value) -> str:
    """What vprintf prints for `value` of `dtype` under `spec`: the conversion and the value
    promoted as tylo.print promotes it (hex/octal of signed values: their own bits)."""
    conv, promoted = printf_conversion(spec, dtype, "test")
    if promoted.is_float:
        arg = float(value)
    elif promoted.kind == "uint":
        arg = int(value) & ((1 << dtype.bits) - 1) if dtype.kind == "int" else int(value)
    else:
        arg = int(value)
    return c_printf(conv, C_TYPES[promoted](arg))


# -- C conversions ---------------------------------------------------------------------------

def test_conversions_name_their_argument_types():
    found = conversions("a %d %5u %-08x %hhd %lld %llu %lx %.3f %e %G %a %c 100%%")
    assert [c.text for c in found] == ["%d", "%5u", "%-08x", "%hhd", "%lld", "%llu", "%lx",
                                       "%.3f", "%e", "%G", "%a", "%c"]
    assert [c.argument for c in found] == ["i32"] * 4 + ["i64"] * 3 + ["f64"] * 4 + ["i32"]
    assert conversions("no conversions, 50%% off") == []


@pytest.mark.parametrize("fmt, message", [
    ("%s", "'%s' is not a conversion"), ("%p", "'%p' is not a conversion"),
    ("%n", "'%n' is not a conversion"), ("%*d", "'*' reads its width"),
    ("%.*f", "'*' reads its width"), ("%Lf", "the size 'L'"), ("%zd", "the size 'z'"),
    ("%lf%", "starts no conversion"), ("%5%", "'%5%' is not a conversion"),
])
def test_conversions_refuse_what_tylo_never_passes(fmt, message):
    with pytest.raises(ValueError, match=message):
        conversions(fmt)


def test_buffer_layout_is_a_c_struct():
    assert buffer_layout([]) == ([], 0)
    assert buffer_layout(["i32"]) == ([0], 8)
    assert buffer_layout(["i32", "f64", "i32", "i32", "i64"]) == ([0, 8, 16, 20, 24], 32)
    assert buffer_layout(["i32", "i32", "i32"]) == ([0, 4, 8], 16)


# -- Python specs ----------------------------------------------------------------------------

@pytest.mark.parametrize("spec, dtype, conv, promoted", [
    ("", dtypes.Int32, "%d", dtypes.Int32),
    ("", dtypes.UInt32, "%u", dtypes.UInt32),
    ("", dtypes.Int8, "%d", dtypes.Int32),
    ("", dtypes.UInt16, "%u", dtypes.UInt32),
    ("", dtypes.Bool, "%d", dtypes.Int32),
    ("", dtypes.Int64, "%lld", dtypes.Int64),
    ("", dtypes.UInt64, "%llu", dtypes.UInt64),
    ("08x", dtypes.Int32, "%08x", dtypes.UInt32),
    ("X", dtypes.Int64, "%llX", dtypes.UInt64),
    ("o", dtypes.Int8, "%o", dtypes.UInt32),
    ("+d", dtypes.Int16, "%+d", dtypes.Int32),
    ("<6", dtypes.Int32, "%-6d", dtypes.Int32),
    (">6", dtypes.Int32, "%6d", dtypes.Int32),
    (" 5d", dtypes.Int32, "% 5d", dtypes.Int32),
    ("", dtypes.Float32, "%g", dtypes.Float64),
    (".3", dtypes.BFloat16, "%.3g", dtypes.Float64),
    (".3f", dtypes.BFloat16, "%.3f", dtypes.Float64),
    ("+012.4e", dtypes.Float16, "%+012.4e", dtypes.Float64),
    ("#g", dtypes.Float64, "%#g", dtypes.Float64),
    ("<10.2F", dtypes.Float8E4M3, "%-10.2F", dtypes.Float64),
])
def test_printf_conversion(spec, dtype, conv, promoted):
    assert printf_conversion(spec, dtype, "p") == (conv, promoted)


@pytest.mark.parametrize("spec, dtype, error, message", [
    ("^8", dtypes.Int32, UnsupportedError, "centering has no printf form"),
    ("=8", dtypes.Int32, UnsupportedError, "'=' alignment"),
    ("*>8", dtypes.Int32, UnsupportedError, "fill character '*'"),
    (",", dtypes.Int32, UnsupportedError, "',' has no printf form"),
    ("_x", dtypes.Int32, UnsupportedError, "'_' has no printf form"),
    ("z.2f", dtypes.Float32, UnsupportedError, "'z' has no printf form"),
    ("<08", dtypes.Int32, UnsupportedError, "'0' with the alignment '<'"),
    (">08.2f", dtypes.Float32, UnsupportedError, "'0' with the alignment '>'"),
    ("b", dtypes.Int32, UnsupportedError, "no binary conversion"),
    ("c", dtypes.Int32, UnsupportedError, "'c' is not supported"),
    ("n", dtypes.Int32, UnsupportedError, "'n' (locale digits)"),
    (".2d", dtypes.Int32, UnsupportedError, "an integer takes no precision"),
    ("#x", dtypes.Int32, UnsupportedError, "'#' writes zero and octal prefixes"),
    ("+x", dtypes.Int32, UnsupportedError, "sign '+' of an unsigned or hex/octal value"),
    ("+d", dtypes.UInt32, UnsupportedError, "sign '+' of an unsigned"),
    ("%", dtypes.Float32, UnsupportedError, "'%' has no printf form"),
    ("q", dtypes.Float32, UnsupportedError, "'q' is not a format type of a float"),
    ("q", dtypes.Int32, UnsupportedError, "'q' is not a format type of an integer"),
    ("8.3.2f", dtypes.Float32, UnsupportedError, "is not a Python format spec"),
    ("d", dtypes.Float32, TypeMismatchError, "'d' formats integers and this value is a Float32"),
    ("x", dtypes.BFloat16, TypeMismatchError, "'x' formats integers"),
    ("f", dtypes.Int32, TypeMismatchError, "'f' formats floats and this value is a Int32"),
    ("s", dtypes.Int32, TypeMismatchError, "'s' formats strings"),
    ("s", dtypes.Float32, TypeMismatchError, "'s' formats strings"),
])
def test_printf_conversion_refuses(spec, dtype, error, message):
    with pytest.raises(error, match=r"^where: .*" + message.replace("(", r"\(").replace(")", r"\)")
                       .replace("*", r"\*").replace("+", r"\+")):
        printf_conversion(spec, dtype, "where")


# -- against the host C library ---------------------------------------------------------------

_ALIGN = st.sampled_from(["", "<", ">", " <", " >"])
_SIGN = st.sampled_from(["", "+", "-", " "])
_ZERO = st.sampled_from(["", "0"])
_WIDTH = st.sampled_from(["", "1", "5", "12", "24"])


def _spec(*parts) -> str:
    return "".join(parts)


@settings(max_examples=400, deadline=None)
@given(dtype=st.sampled_from(INTS), data=st.data(), align=_ALIGN, sign=_SIGN, zero=_ZERO,
       width=_WIDTH, kind=st.sampled_from(["", "d", "x", "X", "o"]))
def test_integers_print_as_python_formats_them(dtype, data, align, sign, zero, width, kind):
    spec = _spec(align, sign, zero, width, kind)
    try:
        printf_conversion(spec, dtype, "p")
    except UnsupportedError:
        assume(False)
    if dtype is dtypes.Bool:
        value = data.draw(st.booleans())
    elif dtype.kind == "uint":
        value = data.draw(st.integers(0, (1 << dtype.bits) - 1))
    else:
        value = data.draw(st.integers(-(1 << (dtype.bits - 1)), (1 << (dtype.bits - 1)) - 1))
    expected_value = int(value) & ((1 << dtype.bits) - 1) if kind in ("x", "X", "o") else int(value)
    assert device_text(spec, dtype, value) == format(expected_value, spec)


def _float_values(dtype):
    if dtype is dtypes.Float64:
        return st.floats(allow_nan=False, width=64)
    bits = st.integers(0, (1 << dtype.bits) - 1)
    raw = {16: np.uint16, 32: np.uint32}[dtype.bits]
    numpy_type = dtype.numpy
    return bits.map(lambda b: float(np.array(b, dtype=raw).view(numpy_type))).filter(lambda x: x == x)


@settings(max_examples=400, deadline=None)
@given(dtype=st.sampled_from(FLOATS), data=st.data(), align=_ALIGN, sign=_SIGN, zero=_ZERO,
       width=_WIDTH, precision=st.sampled_from(["", ".0", ".1", ".3", ".6", ".9", ".17"]),
       kind=st.sampled_from(["e", "E", "f", "F", "g", "G"]), alt=st.sampled_from(["", "#"]))
def test_floats_print_as_python_formats_them(dtype, data, align, sign, zero, width, precision,
                                             kind, alt):
    spec = _spec(align, sign, alt, zero, width, precision, kind)
    try:
        printf_conversion(spec, dtype, "p")
    except UnsupportedError:
        assume(False)
    value = data.draw(_float_values(dtype))
    assume(not (abs(value) == float("inf") and zero))  # Python zero-pads inf, C pads spaces
    assert device_text(spec, dtype, value) == format(value, spec)


def test_bfloat16_values_are_exact_in_the_double_they_travel_as():
    x = float(np.array(1.0 / 3.0, dtype=ml_dtypes.bfloat16))
    assert device_text(".20f", dtypes.BFloat16, x) == format(x, ".20f") == "0.33398437500000000000"
