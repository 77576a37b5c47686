"""The audit of the Python a kernel body may contain (`tylo.frontend.tracing.rewrite.ACCEPTED`): what is
accepted compiles and computes, everything else is refused at its line, and
docs/kernel_language.md lists exactly what is accepted. The one-construct refusals are also
entries of the catalogue (tests/catalogue/syntax_mistakes.py)."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import tylo
from tylo import Float32
from tylo.frontend.tracing import rewrite

DOC = Path(__file__).resolve().parents[2] / "docs" / "kernel_language.md"
OUT = tylo.Tensor(Float32, 1)


def _refusal(kernel, *args) -> tylo.UnsupportedError:
    with pytest.raises(tylo.UnsupportedError) as info:
        kernel.compile(*args)
    return info.value


def _line_of(kernel, text: str) -> int:
    lines, first = inspect.getsourcelines(kernel.fn)
    return next(first + i for i, line in enumerate(lines) if text in line)


def test_the_docs_list_what_is_accepted():
    doc = DOC.read_text()
    section = doc[doc.index("### 5.1 "):doc.index("## 6. ")]
    table = section[section.index("| statements |"):]
    listed = set(re.findall(r"`([A-Z][A-Za-z]+)`", table))
    assert listed == {kind.__name__ for kind in rewrite.ACCEPTED}


def test_every_node_type_is_accepted_or_refused_with_a_reason():
    kinds = {k for k in vars(ast).values()
             if isinstance(k, type) and issubclass(k, (ast.stmt, ast.expr))
             and k not in (ast.stmt, ast.expr) and not (k.__doc__ or "").startswith("Deprecated")}
    own = {"Try", "TryStar", "Global", "Nonlocal", "Yield", "YieldFrom", "Await"}
    unexplained = {k.__name__ for k in kinds - set(rewrite.ACCEPTED)} - set(rewrite.REFUSED) - own
    assert not unexplained


def test_nonlocal_is_refused_at_its_line():
    calls = 0

    @tylo.kernel
    def nonlocal_kernel(out):
        nonlocal calls
        calls = calls + 1
        out[0] = 1.0

    err = _refusal(nonlocal_kernel, OUT)
    assert "'nonlocal' is not supported in kernels" in err.message
    assert err.location.line == _line_of(nonlocal_kernel, "nonlocal calls")
    assert str(err).splitlines()[2].strip() == "^~~~~~~~" and calls == 0


@tylo.kernel
def yield_from_kernel(out):
    yield from (1, 2)
    out[0] = 1.0


def test_yield_from_is_refused_at_its_line():
    err = _refusal(yield_from_kernel, OUT)
    assert "'yield from' is not supported in kernels" in err.message
    assert err.location.line == _line_of(yield_from_kernel, "yield from")


TRY_STAR = """
import tylo
@tylo.kernel
def k(out):
    try:
        out[0] = 1.0
    except* ValueError:
        pass
"""


@pytest.mark.skipif(sys.version_info < (3, 11), reason="except* is Python 3.11 syntax")
def test_try_star_is_refused_at_its_line(tmp_path):
    path = tmp_path / "try_star_kernel.py"
    path.write_text(TRY_STAR)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    err = _refusal(module.k, OUT)
    assert "try/except is not supported" in err.message
    assert (err.location.filename, err.location.line) == (str(path), 5)


@tylo.kernel
def walrus_in_while(out, n):
    i = tylo.thread_idx()
    while (j := i * 2) < n:
        i = i + j
    out[i] = 1.0


def test_walrus_in_a_runtime_while_is_refused():
    # it bound j in the rewritten condition's function only: the body would not see it
    err = _refusal(walrus_in_while, OUT, 4)
    assert err.location.line == _line_of(walrus_in_while, "while (j")
    assert str(err).splitlines()[2].strip() == "^~~~~~~~~~"


@tylo.kernel
def with_in_static_branch(out, n: tylo.constexpr):
    if n > 0:
        out[0] = 1.0
    else:
        with open("x"):
            out[0] = 2.0


def test_a_refusal_is_raised_where_the_trace_reaches_it():
    with_in_static_branch.compile(OUT, 1)  # the with is in the branch not traced
    err = _refusal(with_in_static_branch, OUT, 0)
    assert err.location.line == _line_of(with_in_static_branch, "with open")


@tylo.kernel
def plain_pass(out):
    pass  # the statement refused


def test_a_node_type_not_accepted_gets_a_generic_refusal(monkeypatch):
    monkeypatch.delitem(rewrite.ACCEPTED, ast.Pass)
    err = _refusal(plain_pass, OUT)
    assert "the Python construct Pass is not supported in kernels" in err.message
    assert err.location.line == _line_of(plain_pass, "the statement refused")


@tylo.func
def twice(v):
    return v * 2.0


@tylo.kernel
def accepted(out, x, n, label: tylo.constexpr):
    import math
    i = tylo.thread_idx()
    assert label, f"a label, {label!r}, is needed"
    a, *rest = (x[0], x[1], x[2])
    for _ in range(n):
        a, *rest = (a + 1.0, rest[0] * 2.0, rest[1] + a)
    scale = (lambda v: v * 0.5)(2.0)
    total: float = sum(v for v in (1.0, 2.0))
    bonus = {k: k * 2 for k in range(2)}[1] + len([0 for _ in range(3)]) + len({1, 2})
    if i == 0:
        out[0] = a
        out[1] = rest[0]
        out[2] = rest[1]
        out[3] = twice(x[3]) * scale + total + bonus + math.floor(0.5)
    return None


def test_accepted_constructs_compute():
    out = np.zeros(4, np.float32)
    accepted.emulate[1, 32](out, np.array([1, 2, 3, 4], np.float32), 3, "run")
    a, b, c = 1.0, 2.0, 3.0
    for _ in range(3):
        a, b, c = a + 1.0, b * 2.0, c + a
    assert out.tolist() == [a, b, c, 4.0 * 2.0 * 1.0 + 3.0 + 2 + 3 + 2]


def test_a_static_f_string_is_accepted_and_a_runtime_one_refused():
    @tylo.kernel
    def fstring(out, n: tylo.constexpr):
        i = tylo.thread_idx()
        name = f"n={n:03d}"
        tylo.print(name + " {}", i)
        tylo.print(f"{i}")

    err = _refusal(fstring, OUT, 7)
    assert "an f-string is built once while the kernel is compiled" in err.message
    assert err.location.line == _line_of(fstring, 'tylo.print(f"{i}")')
    assert str(err).splitlines()[2].strip() == "^"


def test_a_helper_returns_its_value_and_a_kernel_none():
    @tylo.kernel
    def returns(out, x):
        out[0] = twice(x[0])
        return x[0]

    err = _refusal(returns, OUT, OUT)
    assert "a kernel returns no value" in err.message
    assert err.location.line == _line_of(returns, "return x[0]")
