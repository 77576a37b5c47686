"""The GPU copy-atom kernels, without a GPU: they compile (ptxas included) to exactly the
instruction each case names, and the host model agrees with the target ownerships.

Runs everywhere (no `gpu` mark): `kernel.compile` traces, runs the pass pipeline and assembles
the PTX with ptxas for sm_90a. Targets below sm_90 keep ldmatrix and fall back to scalar stores
(stmatrix needs sm_90, PTX ISA 9.7.14.5.16).
"""

from __future__ import annotations

import pytest

import tylo
from copy_atom_cases import CASES, load_through_shared, predicted_table, store_through_shared


def _compile(case, arch="sm_90a"):
    t = tylo.Tensor(case.dtype, 2)
    if case.op == "load":
        return load_through_shared.compile(t, t, t, case.ownership, case.layout, block=case.threads, arch=arch)
    return store_through_shared.compile(t, t, t, t, case.ownership, case.layout, block=case.threads, arch=arch)


def _matrix_lines(ptx: str) -> list[str]:
    return [line.strip().split()[0] for line in ptx.splitlines() if "matrix.sync" in line]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_kernel_issues_exactly_its_instruction(case):
    assert _matrix_lines(_compile(case).ptx) == case.mnemonics


@pytest.mark.parametrize("case", CASES, ids=str)
def test_host_model_is_the_ownership(case):
    assert predicted_table(case) == case.ownership.table()


@pytest.mark.parametrize("case", [c for c in CASES if c.nums == (4,) and c.threads == 32], ids=str)
def test_sm80_keeps_ldmatrix_and_stores_scalars(case):
    lines = _matrix_lines(_compile(case, "sm_80").ptx)
    assert lines == (case.mnemonics if case.op == "load" else [])
