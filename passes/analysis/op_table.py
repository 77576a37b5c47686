"""`OpTable`: which method of a lowering handles which op class.

A lowering that walks ops itself (rather than through xDSL rewrite patterns) registers each
handler with ``@TABLE.on(scf.ForOp)`` and finds it with ``TABLE.lookup(op)``. Keys are op
classes, so ops of different dialects that share a Python class name (tylo's and PTX's
``LdMatrixOp``, ``tylo.yield`` and ``scf.yield``) never meet each other's handler.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Operation

__all__ = ["OpTable"]


class OpTable:
    """Handlers by op class; `lookup` tries the op's class, then its base classes in order."""

    def __init__(self) -> None:
        self._handlers: dict[type, Callable] = {}

    def on(self, *classes: type[Operation]) -> Callable[[Callable], Callable]:
        """Decorator: the function handles ops of `classes`. Raises ValueError for a class
        that already has a handler."""

        def register(handler: Callable) -> Callable:
            for cls in classes:
                if cls in self._handlers:
                    raise ValueError(f"{cls.__name__} already has a handler")
                self._handlers[cls] = handler
            return handler

        return register

    def lookup(self, op: Operation) -> Callable | None:
        """The handler of `op`'s class (or the nearest base class that has one), or None."""
        for cls in type(op).__mro__:
            handler = self._handlers.get(cls)
            if handler is not None:
                return handler
        return None
