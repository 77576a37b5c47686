"""Copy planning on the GPU and emulated (`backend`): fragment loads/stores as vector
``ld/st.{global,shared}.v4/.v2``, a packed ``.b32`` word, scalars or ldmatrix, chosen by the
tiles' alignment, all giving the same values; and cp.async pipelines with ragged edges
(zero-filled) through shared memory. Fresh random inputs, poisoned outputs, exact references
(a copy moves bits)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tylo
from tylo import BFloat16, Float32
from tylo.compiler.atoms.mma_atom import MMAAtom
from tylo.compiler.ownership.patterns import LocalOwnership

RNG = np.random.default_rng()
BF16 = ml_dtypes.bfloat16


def _bits(a):
    return np.asarray(a).view(np.uint16 if np.asarray(a).itemsize == 2 else np.uint32)


def _forms(ptx: str, prefix: str) -> set[str]:
    """The ld/st forms of `prefix` ("ld.global", "st.shared" ...) in `ptx`."""
    return {line.split()[0] for line in ptx.splitlines() if line.strip().startswith(prefix)}


# -- global fragments: the declared alignment selects the form ---------------------------------
@tylo.kernel
def global_fragments(out, X, n: tylo.constexpr, align: tylo.constexpr):
    t = tylo.thread_idx()
    own = LocalOwnership(n, 1)  # lane l holds row l: n consecutive elements
    src = tylo.GlobalTile(X.ptr, tylo.Layout((32, n), (n, 1)), align=align)
    dst = tylo.GlobalTile(out.ptr, tylo.Layout((32, n), (n, 1)), align=align)
    tylo.store(dst, tylo.load_fragment(own, src, t) * 2.0, t)


GLOBAL_CASES = [  # (dtype, n, align, the form of every load)
    (BF16, 8, 16, "ld.global.v4.b32"), (BF16, 8, 8, "ld.global.v2.b32"),
    (BF16, 8, 4, "ld.global.b32"), (BF16, 8, 2, "ld.global.b16"),
    (np.float32, 4, 16, "ld.global.v4.f32"), (np.float32, 4, 8, "ld.global.v2.f32"),
    (np.float32, 4, 4, "ld.global.f32"),
]


@pytest.mark.parametrize("dtype,n,align,form", GLOBAL_CASES)
def test_global_fragment_forms_agree(backend, dtype, n, align, form):
    x = RNG.standard_normal((32, n)).astype(dtype)
    out = backend.full((32, n), np.nan, dtype)
    backend.launch(global_fragments, 1, 32, out, backend.put(x), n, align)
    np.testing.assert_array_equal(_bits(backend.get(out)), _bits((x.astype(np.float64) * 2)
                                                                 .astype(dtype)))
    ptx = backend.ptx(global_fragments, out, backend.put(x), n, align, block=32)
    assert _forms(ptx, "ld.global") == {form}
    assert _forms(ptx, "st.global") == {form.replace("ld.", "st.")}


# -- shared fragments: ldmatrix, a packed word or scalars, by the row pitch ----------------------
ATOM = MMAAtom((16, 8, 16), BFloat16, Float32)


@tylo.kernel
def shared_fragments(out, X, pitch: tylo.constexpr):
    t = tylo.thread_idx()
    own = tylo.operand_layout(ATOM, "A")
    s = tylo.SharedTile(tylo.shared_alloc(BFloat16, 16 * pitch), tylo.Layout((16, 16), (pitch, 1)))
    for k in tylo.static_range(8):
        i = t + 32 * k
        s[i // 16, i % 16] = X[i // 16, i % 16]
    tylo.barrier()
    f = tylo.load_fragment(own, s, t)
    tylo.barrier()
    tylo.store(s, f, t)  # back through the same form, into the same places
    tylo.barrier()
    for k in tylo.static_range(8):
        i = t + 32 * k
        out[i] = s[i // 16, i % 16]
    tylo.store(tylo.GlobalTile(out.ptr + 256, tylo.Layout((16, 16), (16, 1)), align=16), f, t)


@pytest.mark.parametrize("pitch,form", [(16, "ldmatrix"), (24, "ldmatrix"), (20, "ld.shared.b32"),
                                        (17, "ld.shared.b16")])
def test_shared_fragment_forms_agree(backend, pitch, form):
    x = RNG.standard_normal((16, 16)).astype(BF16)
    out = backend.full((2 * 256,), np.nan, BF16)
    backend.launch(shared_fragments, 1, 32, out, backend.put(x), pitch)
    got = _bits(backend.get(out)).reshape(2, 16, 16)
    np.testing.assert_array_equal(got[0], _bits(x))
    np.testing.assert_array_equal(got[1], _bits(x))
    ptx = backend.ptx(shared_fragments, out, backend.put(x), pitch, block=32)
    loads = {w for w in _forms(ptx, "ld") if ".shared" in w or w.startswith("ldmatrix")}
    assert any(w.startswith(form) for w in loads), loads
    assert "st.global.b32" in _forms(ptx, "st.global")  # A holds pairs: one word each


# -- cp.async: a 2-stage pipeline over column tiles, ragged edges zero-filled ---------------------
BM, BN, THREADS = 16, 64, 128


@tylo.kernel
def pipeline(out, A, n_cols, plan: tylo.constexpr):
    t = tylo.thread_idx()
    row0 = tylo.block_idx() * BM
    src = tylo.GlobalTile(A.ptr, tylo.Layout((A.shape[0], n_cols), (A.stride[0], 1)), align=16)
    stages = tylo.shared_tiles(tylo.Layout((BM, BN), (BN, 1)), 2, BFloat16)
    tiles = (n_cols + BN - 1) // BN
    tylo.copy_async(plan, stages[0], src, t, origin=(row0, 0))
    tylo.commit_copies()
    for j in range(tiles):
        if j + 1 < tiles:
            tylo.copy_async(plan, stages[(j + 1) % 2], src, t, origin=(row0, (j + 1) * BN))
        tylo.commit_copies()
        tylo.wait_copies(1)  # this thread's copies of stage j have landed
        tylo.barrier()  # ... and every other thread's
        s = stages[j % 2]
        for k in tylo.static_range(BM * BN // THREADS):
            i = t + THREADS * k
            out[row0 + i // BN, j * BN + i % BN] = s[i // BN, i % BN]
        tylo.barrier()  # stage j is read before the next iteration's copy overwrites it


@pytest.mark.parametrize("rows,pitch,cols", [(37, 136, 133), (16, 64, 64), (5, 72, 65),
                                             (40, 200, 193)])
def test_cp_async_pipeline_zero_fills_the_edges(backend, rows, pitch, cols):
    """out = A[:, :cols] on the padded grid of tiles, zeros where the copies zero-filled (rows
    past A, columns past `cols`; vectors cut by the edge carry their valid bytes)."""
    plan = tylo.CopyPlan((BM, BN), THREADS, 1, BFloat16)
    a = RNG.standard_normal((rows, pitch)).astype(BF16)
    mp, np_ = -(-rows // BM) * BM, -(-cols // BN) * BN
    out = backend.full((mp, np_), np.nan, BF16)
    backend.launch(pipeline, mp // BM, THREADS, out, backend.put(a), cols, plan)
    want = np.zeros((mp, np_), BF16)
    want[:rows, :cols] = a[:, :cols]
    np.testing.assert_array_equal(_bits(backend.get(out)), _bits(want))


@tylo.kernel
def whole_tile(out, A, plan: tylo.constexpr):
    t = tylo.thread_idx()
    src = tylo.GlobalTile(A.ptr, tylo.Layout(plan.shape, (plan.shape[1], 1)), align=16)
    s = tylo.shared_tile(tylo.Layout(plan.shape, (plan.shape[1], 1)), Float32)
    tylo.copy_async(plan, s, src, t)
    tylo.commit_copies()
    tylo.wait_copies(0)
    tylo.barrier()
    own = LocalOwnership(plan.shape[1], 1)
    tylo.store(tylo.GlobalTile(out.ptr, tylo.Layout(plan.shape, (plan.shape[1], 1)), align=16),
               tylo.load_fragment(own, s, t % 32), t % 32)


def test_cp_async_whole_tile_then_vector_loads(backend):
    """A tile copied whole (no src_size operand), read back by ld.shared.v4.f32."""
    plan = tylo.CopyPlan((32, 8), 64, 1, Float32)
    a = RNG.standard_normal((32, 8)).astype(np.float32)
    out = backend.full((32, 8), np.nan, np.float32)
    backend.launch(whole_tile, 1, 64, out, backend.put(a), plan)
    np.testing.assert_array_equal(_bits(backend.get(out)), _bits(a))
    ptx = backend.ptx(whole_tile, out, backend.put(a), plan, block=64)
    assert "cp.async.cg.shared.global" in ptx and ", 16;" in ptx
    assert "ld.shared.v4.f32" in _forms(ptx, "ld.shared")


# -- masked fragment copies: bounds= / other= on a ragged tile at the end of its array ---------
@tylo.kernel
def masked_fragments(out, X, rows, cols: tylo.constexpr, n: tylo.constexpr):
    t = tylo.thread_idx()
    own = LocalOwnership(n, 1)
    src = tylo.GlobalTile(X.ptr, tylo.Layout((32, n), (n, 1)), align=16)
    dst = tylo.GlobalTile(out.ptr, tylo.Layout((32, n), (n, 1)), align=16)
    f = tylo.load_fragment(own, src, t, bounds=(rows, cols), other=-3.0)
    tylo.store(dst, f * 2.0, t, bounds=(rows, None))


@pytest.mark.parametrize("dtype,n,cols,form", [(np.float32, 4, 4, "ld.global.v4.f32"),
                                                (np.float32, 4, 3, "ld.global.f32"),
                                                (BF16, 8, 8, "ld.global.v4.b32"),
                                                (BF16, 8, 5, "ld.global.b16")])
def test_masked_fragment_copies_touch_only_the_inside(backend, dtype, n, cols, form):
    rows = int(RNG.integers(1, 32))
    x = RNG.standard_normal((rows, n)).astype(dtype)  # only `rows` rows exist
    out = backend.full((32, n), np.nan, dtype)
    backend.launch(masked_fragments, 1, 32, out, backend.put(x), rows, cols, n)
    want = np.full((32, n), np.nan)
    want[:rows] = -3.0
    want[:rows, :cols] = x[:, :cols].astype(np.float64)
    want[:rows] *= 2
    np.testing.assert_array_equal(_bits(backend.get(out)), _bits(want.astype(dtype)))
    ptx = backend.ptx(masked_fragments, out, backend.put(x), rows, cols, n, block=32)
    assert _forms(ptx, "ld.global") == {form}
