"""A dialect's ops and attributes found by discovery: every module of its package is imported,
and every op or attribute class a module defines (with a ``name`` of its own: abstract bases
have none) belongs to the dialect.

A new instruction is then its op class in a module of ``dialects/ptx/`` (or a new module there)
and nothing else: no list to append to (docs/contributing.md). The order is the package's
modules in name order, then definition order, so a dialect's listing is stable.
`package_modules` also loads the handler packages of the passes (passes/select/,
passes/fragments/), whose modules register their handlers when imported.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

from xdsl.ir import Attribute
from xdsl.irdl import IRDLOperation

__all__ = ["package_modules", "package_operations", "package_attributes"]


def package_modules(package: str) -> list[ModuleType]:
    """Every module of the package named `package` (imported), in name order."""
    root = importlib.import_module(package)
    return [importlib.import_module(f"{package}.{m.name}")
            for m in sorted(pkgutil.iter_modules(root.__path__), key=lambda m: m.name)]


def _defined(package: str, base: type) -> list[type]:
    found: list[type] = []
    for module in package_modules(package):
        found += [v for v in vars(module).values()
                  if isinstance(v, type) and issubclass(v, base) and v.__module__ == module.__name__
                  and isinstance(vars(v).get("name"), str)]
    return found


def package_operations(package: str) -> list[type[IRDLOperation]]:
    """The op classes the modules of `package` define (those with a ``name`` of their own)."""
    return _defined(package, IRDLOperation)


def package_attributes(package: str) -> list[type[Attribute]]:
    """The attribute and type classes the modules of `package` define."""
    return _defined(package, Attribute)
