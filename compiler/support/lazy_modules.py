"""`np` and `ml_dtypes`, imported on first use.

numpy and ml_dtypes take most of ``import tylo`` (about 0.1 s of it on a fast host), and the
host-side model needs them only when it computes (offset grids, ownership tables, FP8
rounding), not to define its values. Modules of Tylo write ``from ..compiler.lazy_modules
import np`` instead of ``import numpy as np``: the first attribute read imports the module and
every attribute is then an ordinary instance attribute of the stand-in (no further cost).
"""

from __future__ import annotations

import importlib

__all__ = ["ml_dtypes", "np"]


class LazyModule:
    """Stands for the module `name` and imports it at the first attribute read."""

    def __init__(self, name: str):
        self.__dict__["_name"] = name

    def __getattr__(self, attribute: str):
        value = getattr(importlib.import_module(self.__dict__["_name"]), attribute)
        self.__dict__[attribute] = value  # found directly from now on
        return value

    def __repr__(self) -> str:
        return f"<lazy module {self.__dict__['_name']!r}>"


np = LazyModule("numpy")
ml_dtypes = LazyModule("ml_dtypes")
