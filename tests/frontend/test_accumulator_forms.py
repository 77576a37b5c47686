"""`tylo.accumulator`: a zero fragment for warp MMAs, a TMEM tile for tcgen05 atoms."""

import pytest

import tylo
from tylo import BFloat16, Float32


def test_tcgen05_accumulator_is_a_tmem_tile_at_the_address():
    atom = tylo.Tcgen05MMA((128, 64, 16), BFloat16, Float32)
    tile = tylo.accumulator(atom, 0x20)
    assert isinstance(tile, tylo.TmemTile)
    # lane m holds row m, column n holds column n (PTX 9.7.16.1.1: address = lane << 16 | column)
    assert tylo.tmem_location(tile, (5, 3)).address == (5 << 16) | (0x20 + 3)
    by_keyword = tylo.accumulator(atom, address=0x20)
    assert (by_keyword.address, by_keyword.layout) == (tile.address, tile.layout)


def test_tcgen05_accumulator_needs_an_address():
    atom = tylo.Tcgen05MMA((128, 64, 16), BFloat16, Float32)
    with pytest.raises(tylo.PlanError, match="pass its TMEM address"):
        tylo.accumulator(atom)


def test_warp_mma_accumulator_needs_a_kernel():
    with pytest.raises(tylo.CompileError):
        tylo.accumulator(tylo.MMAAtom((16, 8, 16), BFloat16, Float32))
