"""tylo.coordinates on the GPU and the emulator (`backend`): every thread stores the row and
the column fragments it gets at its own coordinates, so the outputs must be the row and column
index grids exactly (a wrong slot lands a wrong number somewhere, a missing one leaves the
poison); separable ownerships (MMA operands, a TiledMMA over four warps, a warp-striped one)
and one that is not (each lane holds two adjacent linear indices that cross rows)."""

import numpy as np
import pytest

import tylo
from tylo import BFloat16, Float32, Layout, MMAAtom, Ownership, TiledMMA

ATOM = MMAAtom((16, 8, 16), BFloat16, Float32)
CASES = [
    pytest.param(ATOM.operand_layout("C"), id="mma-c"),
    pytest.param(ATOM.operand_layout("A"), id="mma-a"),
    pytest.param(TiledMMA(ATOM, warps=(2, 2)).operand_layout("C"), id="tiled-c"),
    pytest.param(Ownership((4, 64), Layout(((32, 4), 2), ((8, 1), 4))), id="striped"),
    pytest.param(Ownership((8, 8), Layout((32, 2), (2, 1))), id="not-separable"),
]


@tylo.kernel
def coordinate_grids(rows_out, cols_out, own: tylo.constexpr):
    t = tylo.thread_idx()
    rows, cols = tylo.coordinates(own, t)
    tylo.store(tylo.window(rows_out, (0, 0), own.shape), rows, t)
    tylo.store(tylo.window(cols_out, (0, 0), own.shape), cols, t)


@pytest.mark.parametrize("own", CASES)
def test_grids(backend, own):
    assert own.separable == (own.shape != (8, 8))
    rows = backend.full(own.shape, -7, np.int32)
    cols = backend.full(own.shape, -7, np.int32)
    backend.launch(coordinate_grids, (1,), own.threads, rows, cols, own)
    want_rows, want_cols = np.indices(own.shape)
    np.testing.assert_array_equal(backend.get(rows), want_rows)
    np.testing.assert_array_equal(backend.get(cols), want_cols)
