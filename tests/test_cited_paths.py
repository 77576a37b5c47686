"""Every repository path that a docstring, a comment or a Markdown page cites exists.

A citation is a path that starts with one of the repository's top-level folders
(``docs/host_model.md``, ``examples/hopper/``, ``compiler/ownership/*.py`` as a pattern), read
from the docstrings and comments of every tracked Python file, the ``//`` comments of every lit
test (where a path may also be relative to ``lit_tests/``) and the whole text of every tracked
Markdown file; a path that follows another folder or a host (Triton's
``python/triton/runtime/jit.py``) is some other project's and not checked. A bare Markdown file
name in Python, which can only mean a page of ours, must name a tracked file too.

Nor does any text speak of "the seeds", the documents outside the repository that Tylo was first
specified by: it names what it means (Julia Tylo's API reference or TMA and WGMMA guide, which
docs/host_model.md describes).
"""

from __future__ import annotations

import ast
import functools
import io
import re
import subprocess
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tracked() -> list[str]:
    try:
        done = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                              check=True)
    except (OSError, subprocess.CalledProcessError):
        return []
    return [f for f in done.stdout.splitlines() if (ROOT / f).is_file()]


TRACKED = _tracked()
pytestmark = pytest.mark.skipif(not TRACKED, reason="not a git checkout")
TOP = sorted({f.split("/")[0] for f in TRACKED if "/" in f})
# A path: a top-level folder, then path characters (a `*` pattern allowed), not inside a longer
# path or a URL. Trailing dots and slashes are punctuation or "the folder".
CITED = re.compile(r"(?<![\w./:*-])((?:%s)/[\w./*-]*[\w*])" % "|".join(map(re.escape, TOP)))
PAGE = re.compile(r"(?<![\w./-])([\w-]+\.md)\b")


def _docstrings_and_comments(source: str):
    """(line, text) of every docstring and comment of a Python source."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                yield first.lineno, first.value.value
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string


@functools.lru_cache(maxsize=None)
def _texts(name: str, source: str) -> tuple[tuple[int, str], ...]:
    """(line, text) of what `name` says: a Markdown page's lines, a Python file's docstrings and
    comments."""
    if name.endswith(".md"):
        return tuple(enumerate(source.splitlines(), start=1))
    if name.endswith(".mlir"):
        return tuple((n, line) for n, line in enumerate(source.splitlines(), start=1)
                     if line.lstrip().startswith("//"))
    return tuple(_docstrings_and_comments(source))


def _exists(path: str, name: str) -> bool:
    """Whether `path`, cited in file `name`, exists: from the root, or from lit_tests/ in a lit
    test (which cites its neighbours that way)."""
    path = path.rstrip("/.")
    bases = [ROOT, ROOT / "lit_tests"] if name.startswith("lit_tests/") else [ROOT]
    return any(any(base.glob(path)) if "*" in path else (base / path).exists() for base in bases)


def missing_citations(sources: dict[str, str]) -> list[str]:
    """``file:line: path`` for each path cited in `sources` (file name: its text) that the
    repository does not hold."""
    pages = {Path(f).name for f in TRACKED}
    found = []
    for name, source in sources.items():
        for line, text in _texts(name, source):
            found += [f"{name}:{line}: {m}" for m in CITED.findall(text) if not _exists(m, name)]
            if name.endswith(".py"):
                found += [f"{name}:{line}: {m}" for m in PAGE.findall(text) if m not in pages]
    return found


@functools.lru_cache(maxsize=None)
def _sources() -> dict[str, str]:
    return {f: (ROOT / f).read_text(encoding="utf-8") for f in TRACKED
            if f.endswith((".py", ".md", ".mlir"))}


def test_every_cited_repository_path_exists():
    assert missing_citations(_sources()) == []


def test_no_text_cites_the_seeds():
    found = [f"{name}:{line}" for name, source in _sources().items()
             if name != "tests/test_cited_paths.py"  # (whose docstring says what not to write)
             for line, text in _texts(name, source) if re.search(r"\bseeds\b", text, re.I)]
    assert found == []


def test_a_missing_path_is_found():
    source = ('"""See docs/facts/ptx_isa.md, docs/no_such_page.md and bench/gone.py."""\n'
              "x = 'docs/gone.md'  # examples/*/gemm.py, compiler/ownership/*.py; hopper_notes.md\n"
              "# Triton's python/triton/runtime/jit.py is not ours, nor https://x.org/docs/a.md\n")
    lit = ("// RUN: tylo-opt %s  (passes/lower_gone.py; passes/tylo-lower-scf.mlir is a lit test)\n"
           "// CHECK: passes/gone_too.py\n")
    assert missing_citations({"probe.py": source, "probe.md": "See `bench/gone.py`.\n",
                              "lit_tests/passes/probe.mlir": lit}) == [
        "probe.py:1: docs/no_such_page.md",
        "probe.py:1: bench/gone.py",
        "probe.py:2: hopper_notes.md",
        "probe.md:1: bench/gone.py",
        "lit_tests/passes/probe.mlir:1: passes/lower_gone.py",
        "lit_tests/passes/probe.mlir:2: passes/gone_too.py"]
