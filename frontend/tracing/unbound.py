"""`Unbound`: the value of a name that has none after a runtime region of a kernel.

A name assigned on one branch of a runtime ``if`` only, first assigned inside a runtime loop, or
the index of a runtime loop, has no value after it. Any use raises a CompileError that says why.
"""

from __future__ import annotations

from ...compiler.support.errors import CompileError


class Unbound:
    """A name with no value after a runtime region; every use raises CompileError."""

    def __init__(self, name: str, why: str):
        self.name, self.why = name, why

    def __repr__(self) -> str:
        return f"<unbound {self.name}>"

    def fail(self, *args, **kwargs):
        raise CompileError(f"'{self.name}' has no value here: {self.why}")

    #: The protocol by which `tylo.dialects.scalars` refuses it as a number, without importing
    #: the frontend.
    __tylo_no_value__ = fail

    __call__ = __bool__ = __getitem__ = __iter__ = __index__ = fail  # type: ignore[assignment]
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = fail  # type: ignore[assignment]
    __truediv__ = __floordiv__ = __mod__ = __lt__ = __le__ = __gt__ = __ge__ = fail  # type: ignore[assignment]

    def __getattr__(self, attribute: str):
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        self.fail()
