"""Finding the CUDA binary utilities (ptxas, nvdisasm): the override variable, the wheel, PATH."""

from __future__ import annotations

import os
import re

import pytest

from tylo.compiler.support import knobs
from tylo.compiler.support.errors import TyloError
from tylo.runtime import tools
from tylo.runtime.nvdisasm import find_nvdisasm
from tylo.runtime.ptxas import find_ptxas

TOOLS = [(find_ptxas, "ptxas", "TYLO_PTXAS", "nvidia-cuda-nvcc"),
         (find_nvdisasm, "nvdisasm", "TYLO_NVDISASM", "nvidia-cuda-nvdisasm")]


@pytest.mark.parametrize("find, name, variable, wheel", TOOLS)
def test_found_with_a_version_and_the_override_is_used(find, name, variable, wheel):
    path = find()
    assert os.access(path, os.X_OK) and os.path.basename(path) == name
    assert re.fullmatch(r"\d+\.\d+\.\d+", tools.tool_version(path))
    setattr(knobs.toolchain, name, path)
    assert find() == path


@pytest.mark.parametrize("find, name, variable, wheel", TOOLS)
def test_an_override_that_is_no_executable(tmp_path, find, name, variable, wheel):
    missing = tmp_path / f"no-such-{name}"
    setattr(knobs.toolchain, name, missing)
    with pytest.raises(TyloError, match=rf"{variable}='{re.escape(str(missing))}' is not an"):
        find()


@pytest.mark.parametrize("find, name, variable, wheel", TOOLS)
def test_none_anywhere(monkeypatch, find, name, variable, wheel):
    setattr(knobs.toolchain, name, None)
    monkeypatch.setattr(tools, "_wheel_tool", lambda tool: None)
    monkeypatch.setenv("PATH", "")
    with pytest.raises(TyloError, match=rf"{name} not found: .*pip install {wheel}"):
        find()
