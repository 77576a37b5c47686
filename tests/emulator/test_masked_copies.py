"""Masked fragment loads and stores (``bounds=`` / ``other=`` of `tylo.load_fragment` and
`tylo.store`) on the emulator: only the elements inside the bounds are read or written, the rest
of a loaded fragment is `other`, and an element past the end of its array is never touched (the
same kernels without bounds fault there)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tylo
from tylo.compiler.support.errors import EmulationError

RNG = np.random.default_rng()
ROWS = tylo.Layout((32, 4), (4, 1))  # a 32 x 4 row-major tile: one 16-byte vector per row
OWN = tylo.LocalOwnership(4, 1)      # thread t holds row t


@tylo.kernel
def copy_rows(out, x, n):
    t = tylo.thread_idx()
    f = tylo.load_fragment(OWN, tylo.GlobalTile(x.ptr, ROWS, align=16), t, bounds=(n, None),
                           other=-1.0)
    tylo.store(tylo.GlobalTile(out.ptr, ROWS, align=16), f, t)


@tylo.kernel
def copy_box(out, x, n, m):
    t = tylo.thread_idx()
    f = tylo.load_fragment(OWN, tylo.GlobalTile(x.ptr, ROWS, align=16), t, bounds=(n, m),
                           other=7)
    tylo.store(tylo.GlobalTile(out.ptr, ROWS, align=16), f * 2.0, t, bounds=(n, m))


@tylo.kernel
def copy_unmasked(out, x):
    t = tylo.thread_idx()
    f = tylo.load_fragment(OWN, tylo.GlobalTile(x.ptr, ROWS, align=16), t)
    tylo.store(tylo.GlobalTile(out.ptr, ROWS, align=16), f, t)


def test_a_row_bound_reads_only_rows_inside_and_fills_the_rest():
    n = int(RNG.integers(1, 32))
    x = RNG.standard_normal(n * 4).astype(np.float32)  # exactly n rows: row n is past the end
    out = np.full(128, np.nan, np.float32)
    copy_rows.emulate[1, 32](out, x, n)
    want = np.full((32, 4), -1.0, np.float32)
    want[:n] = x.reshape(n, 4)
    np.testing.assert_array_equal(out.reshape(32, 4), want)


def test_without_bounds_the_same_copy_reads_past_the_array():
    x = RNG.standard_normal(20 * 4).astype(np.float32)
    with pytest.raises(EmulationError) as e:
        copy_unmasked.emulate[1, 32](np.zeros(128, np.float32), x)
    assert e.value.kind == "access" and "threads 20-31" in str(e.value)


def test_bounds_on_both_axes_store_only_inside():
    n, m = int(RNG.integers(1, 33)), int(RNG.integers(1, 5))
    x = RNG.standard_normal(128).astype(np.float32)
    out = np.full(128, np.nan, np.float32)
    copy_box.emulate[1, 32](out, x, n, m)
    got, src = out.reshape(32, 4), x.reshape(32, 4)
    np.testing.assert_array_equal(got[:n, :m], 2 * src[:n, :m])
    outside = np.ones((32, 4), bool)
    outside[:n, :m] = False
    assert np.isnan(got[outside]).all()  # never written


@tylo.kernel
def bf16_box(out, x, n, m):
    t = tylo.thread_idx()
    own = tylo.LocalOwnership(8, 1)
    tile = tylo.Layout((32, 8), (8, 1))
    f = tylo.load_fragment(own, tylo.GlobalTile(x.ptr, tile, align=16), t, bounds=(n, m),
                           other=-float("inf"))
    tylo.store(tylo.GlobalTile(out.ptr, tile, align=16), f.to(tylo.Float32).to(tylo.BFloat16), t)


def test_other_in_a_16_bit_fragment():
    n, m = 17, 5
    x = RNG.standard_normal(32 * 8).astype(ml_dtypes.bfloat16)
    out = np.zeros(32 * 8, ml_dtypes.bfloat16)
    bf16_box.emulate[1, 32](out, x, n, m)
    got = out.reshape(32, 8).astype(np.float32)
    want = np.full((32, 8), -np.inf, np.float32)
    want[:n, :m] = x.reshape(32, 8)[:n, :m].astype(np.float32)
    np.testing.assert_array_equal(got, want)


@tylo.kernel
def ragged_rows_loop(out, x, n):
    """Sum the 32-row tiles of an (n, 4) array: the last tile is ragged."""
    t = tylo.thread_idx()
    acc = tylo.full(OWN, 0.0, tylo.Float32)
    for r0 in range(0, n, 32):
        tile = tylo.GlobalTile(x.ptr + r0 * 4, ROWS, align=16)
        acc = acc + tylo.load_fragment(OWN, tile, t, bounds=(n - r0, None))
    tylo.store(tylo.GlobalTile(out.ptr, ROWS, align=16), acc, t)


def test_a_masked_load_in_a_runtime_loop_stays_behind_its_bound():
    n = 32 * 3 + int(RNG.integers(1, 32))
    x = RNG.standard_normal(n * 4).astype(np.float32)
    out = np.full(128, np.nan, np.float32)
    ragged_rows_loop.emulate[1, 32](out, x, n)
    padded = np.zeros((128, 4), np.float32)
    padded[:n] = x.reshape(n, 4)
    np.testing.assert_allclose(out.reshape(32, 4), padded.reshape(4, 32, 4).sum(0), rtol=1e-6)


@tylo.kernel
def shared_masked(out, x, n):
    t = tylo.thread_idx()
    atom = tylo.MMAAtom((16, 8, 16), tylo.BFloat16, tylo.Float32)
    own = atom.operand_layout("A")
    src = tylo.GlobalTile(x.ptr, tylo.Layout((16, 16), (16, 1)), align=16)
    f = tylo.load_fragment(own, src, t)
    s = tylo.shared_tile(tylo.Layout((16, 16), (16, 1)), tylo.BFloat16)
    tylo.store(s, tylo.full(own, 0.0, tylo.BFloat16), t)
    tylo.barrier()
    tylo.store(s, f, t, bounds=(n, None))  # no stmatrix: the masked store is per element
    tylo.barrier()
    tylo.store(tylo.GlobalTile(out.ptr, tylo.Layout((16, 16), (16, 1)), align=16),
               tylo.load_fragment(own, s, t), t)


def test_a_masked_store_to_shared_memory():
    n = int(RNG.integers(1, 16))
    x = RNG.standard_normal(256).astype(ml_dtypes.bfloat16)
    out = np.full(256, np.nan, ml_dtypes.bfloat16)
    shared_masked.emulate[1, 32](out, x, n)
    want = np.zeros((16, 16), np.float32)
    want[:n] = x.reshape(16, 16)[:n].astype(np.float32)
    np.testing.assert_array_equal(out.reshape(16, 16).astype(np.float32), want)


def test_a_static_bound_that_covers_the_tile_masks_nothing():
    @tylo.kernel
    def covered(out, x):
        t = tylo.thread_idx()
        f = tylo.load_fragment(OWN, tylo.GlobalTile(x.ptr, ROWS, align=16), t, bounds=(32, 4))
        tylo.store(tylo.GlobalTile(out.ptr, ROWS, align=16), f, t, bounds=(40, None))

    x = RNG.standard_normal(128).astype(np.float32)
    out = np.full(128, np.nan, np.float32)
    covered.emulate[1, 32](out, x)
    np.testing.assert_array_equal(out, x)
    ptx = covered.compile(out, x, block=32, arch="sm_90a").asm["ptx"]
    assert "setp" not in ptx and "ld.global.v4.f32" in ptx
