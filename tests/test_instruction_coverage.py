"""Every op of the ptx dialect is reachable, emulated and lit-tested (issue 23, docs/contributing.md):

* a selection path: the op class is used by code of passes/ (a selection handler or a lowering
  emits it) or of frontend/ (a builtin records it directly, `tylo.dialects.direct`), found by
  reading each module's source and resolving its names (imports inside functions included);
* an emulation: an ``@impl`` of a family of `tylo.emulator.semantics`, or a no-op of the
  scheduler (``Program.NOPS``; tests/emulator/test_every_op_has_semantics.py checks emulation
  alone);
* a lit test: its op name (``ptx.cp_async``) or its PTX spelling (``cp.async``) in a file of
  lit_tests/.

`KNOWN_GAPS` lists today's exceptions, each with its reason; a new op missing one of the three
fails, and so does an exception that is no longer one (remove it from the list).
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from tylo.dialects.ptx import PTX
from tylo.emulator.scheduler import Program
from tylo.emulator.semantics import families

ROOT = Path(__file__).resolve().parents[1]

_SCHEDULER = "run by the scheduler itself (emulator/scheduler.py), not by an @impl"
_DECLARATION = "a declaration the machine reads when it loads the module (emulator/machine.py)"
KNOWN_GAPS: dict[tuple[str, str], str] = {
    ("ptx.bar", "emulation"): _SCHEDULER,
    ("ptx.bar_sync", "emulation"): _SCHEDULER,
    ("ptx.barrier_cluster", "emulation"): _SCHEDULER,
    ("ptx.entry", "emulation"): _DECLARATION,
    ("ptx.extern_func", "emulation"): _DECLARATION,
    ("ptx.extern_shared_decl", "emulation"): _DECLARATION,
    ("ptx.global_string", "emulation"): _DECLARATION,
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["tylo", *parts])


def _classes_used(folder: str) -> set[type]:
    """The classes the code of `folder`'s modules names (``X`` or ``module.X``)."""
    found: set[type] = set()
    for path in sorted((ROOT / folder).rglob("*.py")):
        module = importlib.import_module(_module_name(path))
        names = dict(vars(module))
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):  # imports inside functions too
            if isinstance(node, ast.ImportFrom):
                source = importlib.import_module(
                    "." * node.level + (node.module or ""), module.__package__ if node.level else None)
                for alias in node.names:
                    value = getattr(source, alias.name, None)
                    if value is None and hasattr(source, "__path__"):  # a submodule
                        value = importlib.import_module(f"{source.__name__}.{alias.name}")
                    names.setdefault(alias.asname or alias.name, value)
        for node in ast.walk(tree):
            value = None
            if isinstance(node, ast.Name):
                value = names.get(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                value = getattr(names.get(node.value.id), node.attr, None)
            if isinstance(value, type):
                found.add(value)
    return found


def _lit_text() -> str:
    return "\n".join(p.read_text() for p in sorted((ROOT / "lit_tests").rglob("*"))
                     if p.suffix in (".mlir", ".py") and p.name != "lit.cfg.py")


def _in_lit(name: str, lit: str) -> bool:
    """`name` (``ptx.cp_async``) whole, or its PTX spelling (``cp.async``) starting a word."""
    spelled = name.removeprefix("ptx.").replace("_", ".")
    return (re.search(rf"(?<![\w.]){re.escape(name)}(?![\w.])", lit) is not None
            or re.search(rf"(?<![\w.%]){re.escape(spelled)}", lit) is not None)


def _gaps() -> dict[tuple[str, str], None]:
    used = _classes_used("passes") | _classes_used("frontend")
    emulated = {cls for family in families() for cls in getattr(family, "__impl_dict")}
    emulated |= {op for op in PTX.operations if op.name in Program.NOPS}
    lit = _lit_text()
    gaps: dict[tuple[str, str], None] = {}
    for op in PTX.operations:
        if op not in used:
            gaps[(op.name, "selection")] = None
        if op not in emulated:
            gaps[(op.name, "emulation")] = None
        if not _in_lit(op.name, lit):
            gaps[(op.name, "lit")] = None
    return gaps


GAPS = _gaps()


@pytest.mark.parametrize("op", sorted({op.name for op in PTX.operations}))
def test_every_ptx_op_has_a_selection_path_an_emulation_and_a_lit_test(op):
    missing = [what for (name, what) in GAPS if name == op and (name, what) not in KNOWN_GAPS]
    assert not missing, (
        f"{op} has no {' and no '.join(missing)}: see docs/contributing.md, 'Add an instruction'")


def test_known_gaps_are_still_gaps():
    closed = [gap for gap in KNOWN_GAPS if gap not in GAPS]
    assert not closed, f"no longer gaps, remove them from KNOWN_GAPS: {closed}"


def test_the_check_sees_each_kind_of_gap():
    """The three checks can fail: a class nobody uses, has no @impl and no lit test."""
    assert _classes_used("passes") and object not in _classes_used("passes")
    assert ("ptx.bar", "emulation") in GAPS and ("ptx.add", "emulation") not in GAPS
    assert _in_lit("ptx.ld_param", _lit_text()) and not _in_lit("ptx.no_such_op", _lit_text())
