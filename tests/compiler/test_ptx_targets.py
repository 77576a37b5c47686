"""The PTX ISA version printed per target (compiler/hardware/ptx_types.py), against what ptxas 13.0
accepts: the family targets (``f``) need 8.8 (sm_110f 9.0), and sm_101 no longer exists."""

from __future__ import annotations

import pytest

import tylo
from tylo.compiler.hardware.ptx_types import arch_number, ptx_version


@pytest.mark.parametrize("arch, version", [
    ("sm_80", "8.4"), ("sm_90a", "8.4"), ("sm_100a", "8.7"), ("sm_100f", "8.8"),
    ("sm_103f", "8.8"), ("sm_110f", "9.0"), ("sm_120a", "8.7"), ("sm_120f", "8.8"),
    ("sm_121f", "8.8"),
])
def test_ptx_version(arch, version):
    assert ptx_version(arch) == version


@pytest.mark.parametrize("arch", ["sm_101", "sm_101a", "sm_101f"])
def test_sm_101_names_its_replacement(arch):
    with pytest.raises(tylo.UnsupportedError, match="CUDA 13 renamed sm_101 to sm_110"):
        arch_number(arch)


@pytest.mark.parametrize("arch", ["sm_90f", "sm_86a", "sm_99", "90a", "sm_120af"])
def test_unknown_targets_are_refused(arch):
    with pytest.raises(tylo.UnsupportedError, match="is not a target Tylo compiles for"):
        arch_number(arch)


@pytest.mark.parametrize("arch", ["sm_100f", "sm_120f", "sm_121f", "sm_110f"])
def test_family_targets_assemble(arch):
    """A plain kernel through ptxas for each family target (8.7 was refused for sm_100f)."""
    pytest.importorskip("tylo.runtime.ptxas")
    import numpy as np

    @tylo.kernel
    def twice(out, x):
        i = tylo.thread_idx()
        out[i] = x[i] * 2.0

    compiled = twice.compile(np.zeros(32, np.float32), np.zeros(32, np.float32), block=32,
                             arch=arch)
    assert f".target {arch}" in compiled.ptx and compiled.report.registers > 0
