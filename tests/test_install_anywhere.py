"""The repository works from a folder of any name, and every module is imported once, as `tylo.*`.

The repository root is a plain folder (no ``__init__.py``): pyproject maps ``tylo`` to ``api/``
and each code folder to a subpackage. These tests copy the tracked tree into folders whose names
are not Python identifiers (``Tylo-main``, the name a downloaded archive gets, and ``.proj``),
run a few test files there, and install the copy normally (not editable) to check that the
installed package, not the source folders, is what ``import tylo`` finds from the root.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CODE_FOLDERS = ("api", "compiler", "dialects", "frontend", "passes", "runtime", "viz", "ops", "testing")

# Imports everything (tylo.ops where torch is installed: Tylo does not depend on it), then lists
# modules that came from the repository under another name.
_IMPORT_CHECK = """
import importlib, pkgutil, sys, tylo
for info in pkgutil.walk_packages(tylo.__path__, "tylo."):
    try:
        importlib.import_module(info.name)
    except ModuleNotFoundError as e:
        if e.name != "torch":
            raise
import os
folders = tuple(os.path.join(sys.argv[1], f) + os.sep for f in sys.argv[2:])
strays = sorted(name for name, m in list(sys.modules.items())
                if (getattr(m, "__file__", None) or "").startswith(folders) and name != "tylo" and not name.startswith("tylo."))
print(tylo.__file__)
print("strays:", strays)
"""


def _tracked_files() -> list[str]:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    done = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
                          cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip("not a git checkout")
    return [f for f in done.stdout.split("\0") if f and (ROOT / f).is_file()]


def _copy_tree(destination: Path) -> Path:
    for name in _tracked_files():
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    return destination


def _run(cmd: list[str], cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env, timeout=600)


def test_root_is_not_a_package():
    assert not (ROOT / "__init__.py").exists()
    for folder in CODE_FOLDERS:
        assert (ROOT / folder / "__init__.py").is_file(), folder


@pytest.mark.parametrize("folder", ["Tylo-main", ".proj"])
def test_tests_pass_from_a_folder_named(folder, tmp_path):
    clone = _copy_tree(tmp_path / folder)
    done = _run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                 "tests/compiler/test_int_tuple.py", "tests/frontend/test_errors.py",
                 "tests/test_install_anywhere.py::test_root_is_not_a_package"], clone)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert " passed" in done.stdout and "error" not in done.stdout.splitlines()[-1]


def test_every_module_is_imported_once_as_tylo():
    done = _run([sys.executable, "-c", _IMPORT_CHECK, str(ROOT), *CODE_FOLDERS], ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "strays: []"


def test_a_normal_install_is_what_the_root_imports(tmp_path):
    """A non-editable install of a copy in ``Tylo-main``, imported with that copy's root as the
    working directory: ``tylo`` and its subpackages come from the install."""
    clone = _copy_tree(tmp_path / "Tylo-main")
    site = tmp_path / "site"
    done = _run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                 "--no-compile", "--target", str(site), str(clone)], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(site), os.environ.get("PYTHONPATH")) if p))
    done = _run([sys.executable, "-c", _IMPORT_CHECK, str(clone), *CODE_FOLDERS], clone, env)
    assert done.returncode == 0, done.stderr
    first, last = done.stdout.splitlines()[-2:]
    assert Path(first).resolve() == (site / "tylo" / "__init__.py").resolve()
    assert last == "strays: []"


def test_the_package_list_is_pyproject_s():
    tomllib = pytest.importorskip("tomllib")

    from tylo.compiler.support.version import PACKAGES

    listed = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    assert tuple(listed) == PACKAGES
