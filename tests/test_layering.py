"""The layers import downward only: frontend -> passes -> dialects -> compiler (runtime and the
emulator beside passes, below frontend), and no folder's modules import one another in a cycle.
On top, ``ops/`` (`tylo.ops`, Tylo kernels as PyTorch operators) is a library written in the
public Tylo language: it imports nothing private, only `tylo` and its public names.

Each module's imports are read from its own source (the AST, every ``import`` statement,
function-level ones included), resolved to the installed names (``compiler/layout/layout.py``
is ``tylo.compiler.layout.layout``, ``api/__init__.py`` is ``tylo``). Nothing is imported.
``api/`` is the public API and may import anything.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("compiler", "dialects", "passes", "frontend", "runtime", "viz", "emulator", "ops",
           "testing")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    if parts[0] == "api":
        parts.pop(0)
    return ".".join(["tylo", *parts])


def _sources() -> dict[str, Path]:
    files = [ROOT / "api" / "__init__.py"]
    for folder in FOLDERS:
        files += sorted((ROOT / folder).rglob("*.py"))
    return {_module_name(p): p for p in files}


SOURCES = _sources()


def _imports(name: str, path: Path) -> list[tuple[str, int]]:
    """(absolute module name, line) of every import in the module's source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module
            for alias in node.names:  # `from pkg import submodule` imports the submodule
                sub = f"{origin}.{alias.name}"
                found.append((sub if sub in SOURCES else origin, node.lineno))
    return sorted(set(found), key=lambda f: f[1])


IMPORTS = {name: _imports(name, path) for name, path in SOURCES.items()}


def _folder(module: str) -> str | None:
    """The code folder of a tylo module ("compiler", ...), "api" for `tylo`, None outside."""
    parts = module.split(".")
    if parts[0] != "tylo":
        return None
    return parts[1] if len(parts) > 1 and parts[1] in FOLDERS else "api"


#: folder -> the tylo folders its modules may import (their own included).
ALLOWED = {
    "compiler": {"compiler"},
    "dialects": {"dialects", "compiler"},
    "passes": {"passes", "dialects", "compiler"},
    "runtime": {"runtime", "compiler"},
    "emulator": {"emulator", "dialects", "compiler"},
    # the layers on top: the library's kernels and the harness use the public API (`tylo`) only
    "ops": {"ops", "api"},
    "testing": {"testing", "api"},
}
#: folder -> outside packages its modules must not import.
FORBIDDEN_OUTSIDE = {"compiler": {"xdsl"}}
#: package -> outside packages its modules import only inside functions (never at import time).
LAZY_OUTSIDE = {"tylo.ops.kernels": {"torch", "triton"}, "tylo.testing": {"torch", "triton"}}


def test_the_sources_are_found():
    for name in ("tylo", "tylo.compiler.layout.layout", "tylo.dialects.scalars",
                 "tylo.passes.pipeline", "tylo.frontend.tracing.tracing", "tylo.runtime.driver",
                 "tylo.ops.library"):
        assert name in SOURCES
    targets = {target for target, _ in IMPORTS["tylo.compiler.layout.layout"]}
    # `from .layout_base import ...` and `from . import int_tuple as it` resolve to modules
    assert {"tylo.compiler.layout.layout_base", "tylo.compiler.layout.int_tuple"} <= targets


@pytest.mark.parametrize("folder", sorted(ALLOWED))
def test_layers_import_downward_only(folder):
    wrong = []
    for name, imports in IMPORTS.items():
        if _folder(name) != folder:
            continue
        for target, line in imports:
            layer = _folder(target)
            outside = target.split(".")[0]
            if (layer is not None and layer not in ALLOWED[folder]) or (
                    layer is None and outside in FORBIDDEN_OUTSIDE.get(folder, ())):
                wrong.append(f"{SOURCES[name].relative_to(ROOT)}:{line} imports {target}")
    assert not wrong, f"{folder}/ may import only {sorted(ALLOWED[folder])}:\n" + "\n".join(wrong)


def _module_level_imports(path: Path) -> set[str]:
    """The top-level packages a module imports at module level (not inside a function)."""
    found = set()
    for node in ast.parse(path.read_text(), str(path)).body:
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("package", sorted(LAZY_OUTSIDE))
def test_torch_is_imported_lazily(package):
    """The kernels of ops/kernels/ and the harness in testing/ import torch inside the
    functions that use it, so that importing them costs no more than ``import tylo``
    (tests/test_import_cost.py)."""
    modules = [name for name in SOURCES if name == package or name.startswith(package + ".")]
    assert modules
    wrong = [f"{SOURCES[name].relative_to(ROOT)} imports {sorted(heavy)} at module level"
             for name in modules
             for heavy in [_module_level_imports(SOURCES[name]) & LAZY_OUTSIDE[package]] if heavy]
    assert not wrong, "\n".join(wrong)


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (or a module importing itself),
    each sorted; Tarjan's algorithm."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph.get(v, ()):
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_find_cycles_finds_cycles():
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert find_cycles({"a": {"a"}, "b": set()}) == [["a"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def _graph(folder: str) -> dict[str, set[str]]:
    return {name: {t for t, _ in imports if _folder(t) == folder}
            for name, imports in IMPORTS.items() if _folder(name) == folder}


CYCLE_FREE = [
    "compiler",
    "dialects",
    "passes",
    "frontend",
    "runtime",
    "ops",
    "testing",
]


@pytest.mark.parametrize("folder", CYCLE_FREE)
def test_no_import_cycles_inside_a_folder(folder):
    graph = _graph(folder)
    assert graph, f"no modules found in {folder}/"
    cycles = find_cycles(graph)
    assert not cycles, f"modules of {folder}/ import one another in cycles: {cycles}"
