"""`HANDLERS`: the handler of each op class in tylo-lower-fragments.

`lower_fragments._Lowering` (the pass state: each fragment's slot values, the ops to erase, the
target) and the modules of this package register their functions with
``@HANDLERS.on(OpClass)``; each is called as ``handler(lowering, op)``. `load_handlers` imports
every module of this package, so a new family is a new module here.
"""

from __future__ import annotations

from ...dialects.discovery import package_modules
from ..analysis.op_table import OpTable

HANDLERS = OpTable()
"""Op class -> the function (or `_Lowering` method) that lowers it."""


def load_handlers() -> None:
    """Import every module of this package, so that each has registered its handlers."""
    package_modules(__package__)
