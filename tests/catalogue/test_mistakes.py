"""Every entry of the catalogue of mistakes (mistakes.py) gets its error, and docs/mistakes.md is
what docs/make_mistakes.py makes of the catalogue."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import pytest

import tylo
from mistakes import MISTAKES, Mistake

ROOT = Path(__file__).resolve().parent.parent.parent
PRELUDE = "import tylo\nfrom tylo import *\n"
MARK = "# <-"


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    return spec, module


@pytest.mark.parametrize("m", MISTAKES, ids=[m.name for m in MISTAKES])
def test_mistake(m: Mistake, tmp_path):
    if "import torch" in m.code:  # the torch ops' entries (tylo does not depend on torch)
        pytest.importorskip("torch")
    source = PRELUDE + textwrap.dedent(m.code).lstrip("\n")
    path = tmp_path / f"mistake_{m.name.replace('-', '_')}.py"
    path.write_text(source)
    marked = [i for i, line in enumerate(source.splitlines(), 1) if MARK in line]
    assert len(marked) == 1, "mark exactly one line with '# <-'"
    spec, module = _load(path, path.stem)
    with pytest.raises(tylo.TyloError) as info:
        spec.loader.exec_module(module)
    err = info.value
    assert type(err).__name__ == m.error, f"{type(err).__name__}: {err}"
    assert m.message in err.message, err.message
    if m.located:
        assert err.location is not None, str(err)
        assert (err.location.filename, err.location.line) == (str(path), marked[0]), str(err)
        assert str(err).startswith(f"{path}:{marked[0]}:")


def test_names_are_unique():
    names = [m.name for m in MISTAKES]
    assert len(names) == len(set(names))


def test_docs_page_is_current():
    script = ROOT / "docs" / "make_mistakes.py"
    spec, module = _load(script, "make_mistakes")
    spec.loader.exec_module(module)
    assert (ROOT / "docs" / "mistakes.md").read_text() == module.render(), \
        "docs/mistakes.md is stale: run python docs/make_mistakes.py"
