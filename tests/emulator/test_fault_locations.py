"""Shared arrays are named in emulator errors by the variable the kernel assigned them to
(`frontend.source.assigned_name`, kept as the ``tylo.variable`` attribute of the ptx.shared_decl);
the PTX keeps its own symbols."""

from __future__ import annotations

import numpy as np
import pytest

import tylo
from tylo import Float32


@tylo.kernel
def no_barrier(out, x):
    t = tylo.thread_idx()
    As = tylo.SharedTile(tylo.shared_alloc(Float32, 64), tylo.Layout((64,), (1,)))
    As[t] = x[t]  # the write
    out[t] = As[63 - t]  # the read


def test_a_race_names_the_array_by_its_variable():
    with pytest.raises(tylo.EmulationError) as info:
        no_barrier.emulate[1, 64](np.zeros(64, np.float32), np.ones(64, np.float32))
    assert "data race on shared array 'As' (__tylo_smem_0) byte 252: read after write" \
        in info.value.message


def test_the_user_variable_of_a_shared_array():
    from tylo.compiler.errors import SourceLocation
    from tylo.frontend.source import assigned_name

    def at(text: str, column: int = 0) -> SourceLocation:
        return SourceLocation("k.py", 1, column, text)

    assert assigned_name(at("    As = tylo.shared_tile(plan)\n", 9)) == "As"
    assert assigned_name(at("    bar: object = tylo.mbarriers(1)[0]\n")) == "bar"
    assert assigned_name(at("    sa, sb = tylo.shared_tile(p), tylo.shared_tile(q)\n", 35)) == "sb"
    assert assigned_name(at("    sa, sb = tylo.shared_tile(p), tylo.shared_tile(q)\n", 17)) == "sa"
    assert assigned_name(at("    stage = tylo.SharedTile(tylo.shared_alloc(\n")) == "stage"
    assert assigned_name(at("    tiles[0] = tylo.shared_tile(plan)\n")) is None
    assert assigned_name(at("    use(tylo.shared_tile(plan))\n")) is None
    assert assigned_name(at("")) is None and assigned_name(None) is None


def test_the_ptx_keeps_its_symbols():
    ptx = no_barrier.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1), block=64).ptx
    assert ".shared .align 16 .b8 __tylo_smem_0[256];" in ptx and "As" not in ptx
