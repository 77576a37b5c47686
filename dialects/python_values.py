"""Errors for runtime values where Python needs a number: name the Tylo operation to use.

``float(x)``, ``int(x)`` and the functions of Python's ``math`` module (which call them) need a
number while the kernel is traced; a runtime scalar or fragment has none. `no_python_number`
words the error: when the user's expression is a call of a ``math`` function with a Tylo
equivalent (``math.exp(x)``), it names that (``tylo.exp(x)``); otherwise it lists Tylo's math.
"""

from __future__ import annotations

import ast

from ..compiler.support.errors import user_location

__all__ = ["TYLO_MATH", "no_python_number"]

# Python's math functions with a Tylo equivalent on runtime values, for the error of
# math.exp(x) & co. (they ask the value for a Python float).
_TYLO_EQUIVALENT = {
    "exp": "tylo.exp(x)", "exp2": "tylo.exp2(x)", "log": "tylo.log(x)", "log2": "tylo.log2(x)",
    "sqrt": "tylo.sqrt(x)", "fabs": "tylo.abs(x) (or abs(x))", "fma": "tylo.fma(a, b, c)",
    "pow": "tylo.exp2(y * tylo.log2(x)) for x > 0",
}
TYLO_MATH = ("tylo.exp, tylo.exp2, tylo.log, tylo.log2, tylo.sqrt, tylo.rsqrt, tylo.abs "
             "(or abs), tylo.fma, tylo.minimum, tylo.maximum")


def _called_function() -> str | None:
    """The function the user's code is calling at this moment (``"math.exp"``), read from the
    expression at the user's current position (Python 3.11+ positions), or None."""
    where = user_location(3)
    if where is None or not where.source_line or where.end_column is None:
        return None
    try:
        node = ast.parse(where.source_line[where.column:where.end_column].strip(), mode="eval").body
    except SyntaxError:
        return None
    return ast.unparse(node.func) if isinstance(node, ast.Call) else None


def no_python_number(what: str, kind: str) -> str:
    """The message for `what` (e.g. "a runtime Float32") asked for a Python `kind` number
    (``float(x)``, or ``math.exp(x)``, which calls it): name the Tylo operation to use."""
    called = _called_function()
    name = called.rsplit(".", 1)[-1] if called else None
    if called and name in _TYLO_EQUIVALENT and called in (name, f"math.{name}"):
        return (f"{called}() needs a Python number, but its argument is {what}, known only when "
                f"the kernel runs: use {_TYLO_EQUIVALENT[name]}")
    convert = {"int": "x.to(Int32) converts at run time (truncating toward zero, as int() "
                      "does)",
               "float": "x.to(Float32) converts at run time",
               "complex": "Tylo has no complex numbers"}[kind]
    return (f"{what} has no Python {kind} value: {kind}(x), or a function of Python's math "
            f"module, needs a number known while the kernel compiles. {convert}; math on "
            f"runtime values: {TYLO_MATH}")
