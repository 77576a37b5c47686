"""The catalogue's entries for Python constructs a kernel body may not contain (the audit of
`tylo.frontend.tracing.rewrite.ACCEPTED`): each is refused at its line."""

from __future__ import annotations

from mistakes_base import Mistake

K = "kernel language"

SYNTAX: list[Mistake] = [
    Mistake("with-statement", K, "a with statement in a kernel", """
import contextlib
@tylo.kernel
def k(out):
    i = tylo.thread_idx()
    with contextlib.suppress(Exception):  # <-
        out[i] = 1.0
k.compile(tylo.Tensor(Float32, 1))
""", "UnsupportedError", "'with' is not supported in kernels"),
    Mistake("match-statement", K, "a match statement in a kernel", """
@tylo.kernel
def k(out, n):
    i = tylo.thread_idx()
    match n:  # <-
        case 1:
            out[i] = 1.0
k.compile(tylo.Tensor(Float32, 1), 4)
""", "UnsupportedError", "'match' is not supported in kernels"),
    Mistake("del-statement", K, "del in a kernel", """
@tylo.kernel
def k(out, x):
    i = tylo.thread_idx()
    y = x[i]
    del y  # <-
    out[i] = 1.0
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1))
""", "UnsupportedError", "'del' is not supported in kernels"),
    Mistake("assignment-expression", K, "an assignment expression (:=) in a condition", """
@tylo.kernel
def k(out, n):
    i = tylo.thread_idx()
    if (j := i * 2) < n:  # <-
        out[j] = 1.0
k.compile(tylo.Tensor(Float32, 1), 4)
""", "UnsupportedError", "an assignment expression (:=) is not supported in kernels"),
    Mistake("class-in-kernel", K, "a class defined inside a kernel", """
@tylo.kernel
def k(out):
    class Box:  # <-
        value = 1.0
    out[tylo.thread_idx()] = Box.value
k.compile(tylo.Tensor(Float32, 1))
""", "UnsupportedError", "a class definition is not supported in a kernel"),
    Mistake("async-def-in-kernel", K, "an async def inside a kernel", """
@tylo.kernel
def k(out):
    async def helper():  # <-
        return 1.0
    out[tylo.thread_idx()] = 1.0
k.compile(tylo.Tensor(Float32, 1))
""", "UnsupportedError", "'async def' is not supported in kernels"),
    Mistake("f-string-of-runtime-value", K, "an f-string formatting a runtime value", """
@tylo.kernel
def k(out):
    i = tylo.thread_idx()
    tylo.print(f"thread {i}")  # <-
k.compile(tylo.Tensor(Float32, 1))
""", "UnsupportedError", "an f-string is built once while the kernel is compiled"),
    Mistake("kernel-returns-a-value", K, "a kernel that returns a value", """
@tylo.kernel
def k(out, x):
    i = tylo.thread_idx()
    return x[i] * 2.0  # <-
k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1))
""", "UnsupportedError", "a kernel returns no value"),
]
