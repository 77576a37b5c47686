"""tylo.print in kernels: the C format and the promoted values it records, the refusals (at the
caller's line), and what stays of Python's print. The one-mistake refusals with a catalogue
entry (placeholder count, centering, a spec of the other dtype, a fragment) are in
tests/catalogue/mistakes.py."""

from __future__ import annotations

import re

import pytest

import tylo
from tylo import BFloat16, Bool, Float32, Int16, Int32, Int64, UInt8, UInt64


def prints(kernel, *args, **kwargs) -> list[str]:
    """The tylo.print lines of the kernel's frontend IR."""
    ir = kernel.compile(*args, **kwargs).asm["tylo"]
    return [line.strip() for line in ir.splitlines() if "tylo.print" in line]


def test_static_values_are_formatted_while_compiling():
    LAYOUT = tylo.Layout((4, 8), (8, 1))

    @tylo.kernel
    def k(x, label: tylo.constexpr):
        tylo.print("{} {!r} {:>6.2f} {:08b} {} 50% {{ok}} {}", label, "s", 2 / 3, 5, LAYOUT,
                   (1, 2), end="|")

    (line,) = prints(k, tylo.Tensor(Float32, 1), "lbl")
    assert line == "tylo.print \"lbl 's'   0.67 00000101 (4,8):(8,1) 50%% {ok} (1, 2)|\""


def test_runtime_values_take_their_conversion_from_the_dtype():
    @tylo.kernel
    def k(a, b, c, d, e, f):
        t = tylo.thread_idx()
        tylo.print("{} {:x} {} {:o} {:+.1e} {} {}", a[t], a[t], b[t], c[t], d[t], e[t], f[t] > 0)

    (line,) = prints(k, tylo.Tensor(Int16, 1), tylo.Tensor(UInt8, 1), tylo.Tensor(Int64, 1),
                     tylo.Tensor(BFloat16, 1), tylo.Tensor(UInt64, 1), tylo.Tensor(Int32, 1))
    fmt, types = re.fullmatch(r'tylo.print "(.*)" .* : (.*)', line).groups()
    assert fmt == r"%d %x %u %llo %+.1e %llu %d\0A"
    assert types == "i32, i32, i32, i64, f64, i64, i32"


def test_hex_of_a_narrow_signed_value_masks_its_own_bits():
    @tylo.kernel
    def k(a):
        tylo.print("{:x}", a[tylo.thread_idx()])

    ir = k.compile(tylo.Tensor(tylo.Int8, 1)).asm["tylo"]
    assert "arith.extsi" in ir and "arith.constant 255 : i32" in ir and "arith.andi" in ir


def test_prints_in_a_runtime_if_a_loop_and_a_helper():
    @tylo.func
    def helper(v):
        tylo.print("helper {}", v)

    @tylo.kernel
    def k(x, n):
        t = tylo.thread_idx()
        if t < n:
            tylo.print("if {}", t)
        for j in range(n):
            helper(j)

    compiled = k.compile(tylo.Tensor(Float32, 1), 4)
    ir = compiled.asm["tylo"]
    assert ir.index("scf.if") < ir.index('tylo.print "if %d\\0A"')
    assert ir.index("scf.for") < ir.index('tylo.print "helper %d\\0A"')
    assert compiled.ptx.count("call.uni (retval0), vprintf, (param0, param1);") == 2


def _error(kernel, *args) -> tylo.TyloError:
    with pytest.raises(tylo.TyloError) as info:
        kernel.compile(*args)
    return info.value


@pytest.mark.parametrize("body, error, message", [
    ('tylo.print("{0}", t)', tylo.UnsupportedError, "named and numbered fields are not supported"),
    ('tylo.print("{:{w}}", t)', tylo.UnsupportedError, "a nested field in the spec"),
    ('tylo.print("{!r}", t)', tylo.UnsupportedError, "!r converts static values only"),
    ('tylo.print("{}", x)', tylo.TypeMismatchError, "has no printable value; print its elements"),
    ('tylo.print("{}", (t, 1))', tylo.TypeMismatchError, "holds runtime values; give each"),
    ('tylo.print("{", t)', tylo.CompileError, "does not parse"),
    ('tylo.print("{:d}", "s")', tylo.CompileError, "Unknown format code 'd'"),
    ('tylo.print(t)', tylo.TypeMismatchError, "the format and end= are static strings"),
    ('tylo.print("{}" * 33, *([t] * 33))', tylo.UnsupportedError, "passes at most 32"),
    ('tylo.print("a\\0b")', tylo.UnsupportedError, "a NUL character"),
])
def test_refusals_name_the_line(body, error, message, tmp_path):
    source = ("import tylo\n\n@tylo.kernel\ndef k(x, n):\n    t = tylo.thread_idx()\n"
              f"    {body}\n")
    path = tmp_path / "kernel_print.py"
    path.write_text(source)
    namespace: dict = {}
    exec(compile(source, str(path), "exec"), namespace)
    err = _error(namespace["k"], tylo.Tensor(Float32, 1), 4)
    assert type(err) is error, err
    assert message in err.message, err.message
    assert (err.location.filename, err.location.line) == (str(path), 6), str(err)


def test_outside_a_kernel_it_is_refused():
    with pytest.raises(tylo.CompileError, match="inside a @tylo.kernel"):
        tylo.print("hello")


def test_tylo_print_does_not_shadow_the_builtin():
    assert tylo.print is tylo.device_print
    assert "print" not in tylo.__all__ and "device_print" in tylo.__all__
    namespace: dict = {}
    exec("from tylo import *", namespace)
    assert "print" not in namespace
    from tylo import print as device

    assert device is tylo.device_print


def test_builtin_print_of_static_values_still_runs_at_trace_time(capsys):
    @tylo.kernel
    def k(x, n):
        print("tracing", tylo.block_dim())
        x[tylo.thread_idx()] = 1.0

    k.compile(tylo.Tensor(Float32, 1), 4, block=64)
    assert capsys.readouterr().out == "tracing 64\n"


def test_bool_promotes_to_int():
    @tylo.kernel
    def k(x, flag: tylo.Scalar[Bool]):
        tylo.print("{}", flag)

    (line,) = prints(k, tylo.Tensor(Float32, 1), True)
    assert line.endswith(": i32") and "%d" in line
