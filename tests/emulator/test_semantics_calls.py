"""emulator/semantics/calls.py: vprintf formats each thread's arguments as the host C library
does and writes the texts in thread order; what a Tylo kernel cannot pass is an error."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from fake_warp_machine import Fault, FakeMachine, emulation, registers

from tylo.compiler.hardware import dtypes
from tylo.compiler.hardware.printf import buffer_layout, conversions, printf_conversion
from tylo.dialects.ptx.calls import CallUniOp
from tylo.emulator.semantics.calls import CallSemantics

STRINGS = 0x7F00_0000_0000  # generic addresses of the fake's .global strings
DEPOTS = 0x7D00_0000_0000  # and of the threads' local argument buffers, 256 bytes each
PACK = {"i32": "<i", "i64": "<q", "f64": "<d"}


def depot(fmt: str, values) -> bytes:
    """One thread's argument buffer for `fmt`, laid out as the lowering lays it out."""
    try:
        kinds = [c.argument for c in conversions(fmt)]
    except ValueError:  # a format the emulator must refuse: any bytes will do
        kinds = []
    offsets, size = buffer_layout(kinds)
    buf = bytearray(256)
    for kind, offset, v in zip(kinds, offsets, values):
        struct.pack_into(PACK[kind], buf, offset, v)
    assert size <= 256
    return bytes(buf)


def run(formats: list[str], per_thread: list[tuple[int, list]], null: bool = False):
    """vprintf for threads 0..n-1: thread i prints formats[per_thread[i][0]] with its values.
    Returns (stdout text, machine)."""
    strings, at = {}, STRINGS
    for f in formats:
        strings[f] = at
        at += 256
    regions = {strings[f]: f.encode() + b"\0" + b"\xff" * (255 - len(f.encode())) for f in formats}
    regions[DEPOTS] = b"".join(depot(formats[i], vals) for i, vals in per_thread)
    machine = FakeMachine(regions=regions)
    fmt = np.array([strings[formats[i]] for i, _ in per_thread], np.uint64)
    buf = np.zeros(len(per_thread), np.uint64) if null else \
        np.array([DEPOTS + 256 * t for t in range(len(per_thread))], np.uint64)
    op = CallUniOp("vprintf", registers("b64", 2))
    assert emulation(machine, len(per_thread), CallSemantics()).run_op(op, (fmt, buf)) == ()
    return machine.stdout.getvalue(), machine


@pytest.mark.parametrize("fmt, values, text", [
    ("x=%d y=%.3f z=%08llx\n", [-5, 3.14159, 0xABC], "x=-5 y=3.142 z=00000abc\n"),
    ("%u %x %X %o\n", [-1, 255, 255, 8], "4294967295 ff FF 10\n"),
    ("%hhd %hd %hu\n", [300, 70000, -1], "44 4464 65535\n"),
    ("%lld %llu %ld %li\n", [-2**63, -1, 2**40, -7], f"{-2**63} {2**64 - 1} {2**40} -7\n"),
    ("[%5d] [%-5d] [%+d] [% d] [%05d]\n", [42, 42, 42, 42, -42],
     "[   42] [42   ] [+42] [ 42] [-0042]\n"),
    ("%e %E %g %G %f\n", [1234.5, 0.00012, 1e-5, 1e20, 2.5], "1.234500e+03 1.200000E-04 1e-05 "
                                                              "1E+20 2.500000\n"),
    ("%10.4f|%-10.2e|%#g\n", [3.14159265, 31415.9, 2.0], "    3.1416|3.14e+04  |2.00000\n"),
    ("%a %c%c\n", [1.0, 79, 75], "0x1p+0 OK\n"),
    ("100%% of %d\n", [3], "100% of 3\n"),
    ("%f %f\n", [float("inf"), -float("inf")], "inf -inf\n"),
    ("mixed %d %f %d %lld %d\n", [1, 2.0, 3, 4, 5], "mixed 1 2.000000 3 4 5\n"),
])
def test_conversions_print_as_c_does(fmt, values, text):
    assert run([fmt], [(0, values)])[0] == text


def test_threads_print_in_order_each_with_its_own_arguments_and_format():
    formats = ["a%d\n", "b %d %f\n"]
    threads = [(0, [0]), (1, [1, 0.5]), (0, [2]), (1, [3, 1.5]), (0, [4])]
    text, machine = run(formats, threads)
    assert text == "a0\nb 1 0.500000\na2\nb 3 1.500000\na4\n"
    # each argument is read at its C struct offset from each thread's buffer
    loads = [a for a in machine.accesses if a[1] == "generic"]
    assert [(a[2], a[3]) for a in loads] == [
        ([DEPOTS + 256 * t for t in (0, 2, 4)], 4),
        ([DEPOTS + 256 * t for t in (1, 3)], 4),
        ([DEPOTS + 256 * t + 8 for t in (1, 3)], 8),
    ]


def test_a_format_without_conversions_reads_no_buffer():
    text, machine = run(["hello, world\n"], [(0, [])] * 3, null=True)
    assert text == "hello, world\n" * 3
    assert machine.accesses == []


def test_text_without_a_newline_runs_on():
    assert run(["%d,"], [(0, [1]), (0, [2])])[0] == "1,2,"


@pytest.mark.parametrize("spec, dtype, value", [
    ("", dtypes.Int32, -17), ("08x", dtypes.Int64, 48879), ("x", dtypes.Int8, -1),
    (">6", dtypes.UInt16, 65535), (".3f", dtypes.Float32, 2.71828), ("+e", dtypes.Float64, 1e-300),
    ("", dtypes.Float32, 0.1), ("<8d", dtypes.UInt64, 2**64 - 1), ("X", dtypes.UInt32, 3054),
])
def test_tylo_print_specs_print_as_python_formats(spec, dtype, value):
    # tylo.print's promise: the device text is Python's format(value, spec) (compiler/hardware/printf.py)
    conv, promoted = printf_conversion(spec, dtype, "test")
    if promoted.is_float:
        arg = float(np.float32(value)) if dtype is dtypes.Float32 else value
    else:
        arg = value & ((1 << dtype.bits) - 1) if promoted.kind == "uint" else value
        arg = arg - (1 << promoted.bits) if arg >= 1 << (promoted.bits - 1) else arg
    want = format(np.float32(value) if dtype is dtypes.Float32 else value, spec or "")
    if dtype.is_float and not spec:
        want = format(float(np.float32(value)), "g")  # a float without a type prints as %g
    if spec == "x" and dtype is dtypes.Int8:
        want = "ff"  # hex of a negative signed value: its own bits
    assert run([conv + "\n"], [(0, [arg])])[0] == want + "\n"


@pytest.mark.parametrize("fmt, message", [
    ("%s\n", "'%s' is not a conversion"), ("%*d\n", "'\\*' reads its width"),
    ("%d" * 33, "33 conversions; a device printf passes at most 32"),
])
def test_formats_tylo_never_writes_are_errors(fmt, message):
    with pytest.raises(Fault, match=message) as e:
        run([fmt], [(0, [0] * 33)] * 2)
    assert e.value.threads == [0, 1]


def test_a_null_argument_buffer_under_conversions_is_an_error():
    with pytest.raises(Fault, match="1 conversions and a null argument buffer"):
        run(["%d\n"], [(0, [1])], null=True)


def test_calls_of_other_functions_are_errors():
    op = CallUniOp("malloc", registers("b64", 1))
    with pytest.raises(Fault, match="call of 'malloc' with 1 arguments"):
        emulation(FakeMachine(), 2, CallSemantics()).run_op(op, (np.zeros(2, np.uint64),))
