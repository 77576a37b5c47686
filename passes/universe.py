"""Tylo's dialects, passes and the PTX target, as an xDSL `Universe` (the ``xdsl.universe``
entry point in pyproject.toml makes them visible to ``xdsl-opt`` and ``tylo-opt``)."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.universe import Universe


def _tylo_dialect():
    from ..dialects.tylo import Tylo

    return Tylo


def _ptx_dialect():
    from ..dialects.ptx import PTX

    return PTX


def _pass(module: str, name: str):
    def get():
        import importlib

        return getattr(importlib.import_module(f"tylo.passes.{module}"), name)

    return get


def _ptx_target():
    from ..dialects.ptx.target import PTXTarget

    return PTXTarget


TYLO_UNIVERSE = Universe(
    all_dialects={"tylo": _tylo_dialect, "ptx": _ptx_dialect},
    all_passes={
        "tylo-recognize-swizzles": _pass("recognize_swizzles", "RecognizeSwizzles"),
        "tylo-plan-copies": _pass("plan_copies", "PlanCopies"),
        "tylo-lower-fragments": _pass("lower_fragments", "LowerFragments"),
        "tylo-lower-tiles": _pass("lower_tiles", "LowerTiles"),
        "tylo-hoist-invariants": _pass("hoist_invariants", "HoistInvariants"),
        "tylo-insert-async-fences": _pass("insert_async_fences", "InsertAsyncFences"),
        "tylo-lower-scf": _pass("lower_scf", "LowerScf"),
        "tylo-select-ptx": _pass("select_ptx", "SelectPtx"),
        "tylo-ptx-linearize": _pass("ptx_linearize", "LinearizePtx"),
        "tylo-lower-to-ptx": _pass("lower_to_ptx", "LowerToPtx"),
        "tylo-plan-reductions": _pass("plan_reductions", "PlanReductions"),
    },
    all_targets={"ptx": _ptx_target},
)


def make_context() -> Context:
    """A context with the dialects a Tylo kernel's IR uses, at every stage."""
    from xdsl.dialects.arith import Arith
    from xdsl.dialects.builtin import Builtin
    from xdsl.dialects.cf import Cf
    from xdsl.dialects.func import Func
    from xdsl.dialects.math import Math
    from xdsl.dialects.scf import Scf

    ctx = Context()
    for dialect in (Builtin, Func, Arith, Math, Scf, Cf, _tylo_dialect(), _ptx_dialect()):
        ctx.load_dialect(dialect)
    return ctx
