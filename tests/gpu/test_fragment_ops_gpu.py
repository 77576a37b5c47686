"""Fragment operations on the GPU and the emulator (`backend`), against numpy on fresh random
inputs (NaN, infinities and signed zeros among them), outputs poisoned with NaN:

* comparisons (Bool fragments) and tylo.select, elementwise, bit for bit;
* broadcasting of a replicated row fragment (the ownership a row reduction gives) and of a
  column fragment against the accumulator, and of scalars (`tylo.scale`), bit for bit;
* tylo.rcp: rcp.rn.f32 / .f64 bit for bit against numpy's 1 / x (IEEE division), and
  rcp.approx.ftz.f32 within 1 ulp (the PTX ISA's bound) with subnormals flushed;
* permutedims, a static window and relayout: register renamings, values unchanged.

Every kernel is one warp per 16 x 8 tile of the m16n8k16 accumulator ownership, one tile per block.
"""

import numpy as np
import pytest

from elementwise_kernels import unary

import tylo
from tylo import BFloat16, Float32, Layout, MMAAtom, Ownership

RNG = np.random.default_rng()
ATOM = MMAAtom((16, 8, 16), BFloat16, Float32)
C = ATOM.operand_layout("C")
ROWS = tylo.reduced_ownership(C, 1)  # (16, 1): rows g and g + 8, replicated over the quad
COLS = Ownership((1, 8), Layout(((4, 8), 2), ((2, 0), 1)))  # (1, 8): columns 2 (t % 4) + {0, 1}
SWAPPED = Ownership((16, 8), Layout(((4, 8), (2, 2)), ((32, 1), (8, 16))))  # C, slots reordered


def tile(x, b, rows=16, cols=8):
    return tylo.window(x, (b * rows, 0), (rows, cols))


@tylo.kernel
def two_tiles(out, x, y, fn: tylo.constexpr):
    t, b = tylo.thread_idx(), tylo.block_idx()
    f = tylo.load_fragment(C, tile(x, b), t)
    g = tylo.load_fragment(C, tile(y, b), t)
    tylo.store(tile(out, b), fn(f, g), t)


@tylo.kernel
def tile_and_row(out, x, r, fn: tylo.constexpr):
    t, b = tylo.thread_idx(), tylo.block_idx()
    f = tylo.load_fragment(C, tile(x, b), t)
    v = tylo.load_fragment(ROWS, tile(r, b, cols=1), t)
    tylo.store(tile(out, b), fn(f, v), t)


@tylo.kernel
def tile_and_cols(out, x, c, alpha, fn: tylo.constexpr):
    t, b = tylo.thread_idx(), tylo.block_idx()
    f = tylo.load_fragment(C, tile(x, b), t)
    v = tylo.load_fragment(COLS, tile(c, b, rows=1), t)
    tylo.store(tile(out, b), fn(f, v, alpha), t)


def specials(x: np.ndarray, share: float = 0.1) -> np.ndarray:
    """`x` with a share of its entries replaced by NaN, +-inf, +-0."""
    x = x.copy()
    flat = x.reshape(-1)
    k = RNG.choice(flat.size, int(flat.size * share), replace=False)
    flat[k] = RNG.choice(np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], x.dtype), k.size)
    return x


def random_tiles(backend, cols=8, share=0.1) -> np.ndarray:
    blocks = backend.size(64, 4)
    return specials((RNG.standard_normal((16 * blocks, cols)) * 3).astype(np.float32), share)


def run(backend, kernel, shape, *args):
    out = backend.full(shape, np.nan, np.float32)
    blocks = shape[0] // 16
    backend.launch(kernel, (blocks,), 32, out, *(backend.put(a) if isinstance(a, np.ndarray) else a
                                                 for a in args))
    return backend.get(out)


def assert_bits(got, want):
    """Equal bit for bit, except that any NaN matches any NaN."""
    want = np.asarray(want, np.float32)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(got[ok].view(np.uint32), want[ok].view(np.uint32))


# -- comparisons and select ----------------------------------------------------------------------

@pytest.mark.parametrize("fn, ref", [
    (lambda f, g: tylo.select(f < g, f, g), lambda a, b: np.where(a < b, a, b)),
    (lambda f, g: tylo.select(f >= g, 1.0, -1.0), lambda a, b: np.where(a >= b, 1.0, -1.0)),
    (lambda f, g: tylo.select((f == g) | (f != f), g, f * 2.0),
     lambda a, b: np.where((a == b) | (a != a), b, a * np.float32(2))),
    (lambda f, g: tylo.select((f > 0.0) & ~(g <= 0.0), f + g, 0.0),
     lambda a, b: np.where((a > 0) & ~(b <= 0), a + b, 0)),
], ids=["min-like", "sign", "eq-nan", "and-not"])
def test_comparisons_and_select(backend, fn, ref):
    x, y = random_tiles(backend), random_tiles(backend)
    y[::5] = x[::5]  # some equal pairs
    got = run(backend, two_tiles, x.shape, x, y, fn)
    with np.errstate(invalid="ignore"):
        assert_bits(got, ref(x, y))


# -- broadcasting ---------------------------------------------------------------------------------

@pytest.mark.parametrize("fn, ref", [
    (lambda f, r: f - r, lambda a, r: a - r),
    (lambda f, r: tylo.exp2(f - tylo.maximum(r, f)), None),
    (lambda f, r: tylo.select(f > r, r, f) * r, lambda a, r: np.where(a > r, r, a) * r),
], ids=["x-row", "exp2", "select"])
def test_a_replicated_row_fragment_broadcasts(backend, fn, ref):
    """A (16, 1) fragment of the replicated ownership a row reduction gives (here loaded) against
    the accumulator: each thread reads its rows g and g + 8 from its own two slots."""
    x = random_tiles(backend)
    r = random_tiles(backend, cols=1, share=0.05)
    got = run(backend, tile_and_row, x.shape, x, r, fn)
    if ref is None:  # check against the same kernel's ops done on the broadcast operand
        wide = np.broadcast_to(r, x.shape).copy()
        ref_got = run(backend, two_tiles, x.shape, x, wide,
                      lambda f, g: tylo.exp2(f - tylo.maximum(g, f)))
        assert_bits(got, ref_got)
        with np.errstate(invalid="ignore", over="ignore"):
            near = np.exp2((x - np.maximum(wide, x)).astype(np.float64))  # ex2: 2 ulp
        ok = np.isfinite(near)
        np.testing.assert_allclose(got[ok], near[ok], rtol=3e-7, atol=1e-38)
        return
    with np.errstate(invalid="ignore"):
        assert_bits(got, ref(x, r))


def test_a_column_fragment_and_a_scalar_broadcast_and_scale(backend):
    x = random_tiles(backend)
    c = random_tiles(backend, cols=8, share=0.05)[: x.shape[0] // 16]  # one (1, 8) row per tile
    rows = np.repeat(c, 16, axis=0)
    alpha = float(np.float32(RNG.uniform(0.5, 2)))
    got = run(backend, tile_and_cols, x.shape, x, c, alpha,
              lambda f, v, a: tylo.scale(tylo.fma(f, v, 1.0), a) - tylo.scale(f, v))
    with np.errstate(invalid="ignore", over="ignore"):
        fma = (x.astype(np.float64) * rows + 1.0).astype(np.float32)  # fma.rn: one rounding
        want = fma * np.float32(alpha) - x * rows
    assert_bits(got, want)


# -- rcp ------------------------------------------------------------------------------------------

def random_bits(n: int, dtype=np.float32) -> np.ndarray:
    u = np.uint32 if dtype == np.float32 else np.uint64
    return RNG.integers(0, np.iinfo(u).max, n, dtype=u, endpoint=True).view(dtype)


def edges(dtype=np.float32) -> np.ndarray:
    fi = np.finfo(dtype)
    return np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -3.0, fi.max, -fi.max, fi.tiny,
                     fi.smallest_subnormal, -fi.smallest_subnormal, 1 / fi.max, 4 / fi.max], dtype)


def run_unary(backend, fn, x):
    out = backend.full(len(x), np.nan, x.dtype)
    backend.launch(unary, ((len(x) + 255) // 256,), 256, out, backend.put(x), fn)
    return backend.get(out)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rcp_rn_is_correctly_rounded(backend, dtype):
    x = np.concatenate([random_bits(backend.size(1 << 14, 1 << 11), dtype), edges(dtype)])
    got = run_unary(backend, tylo.rcp, x)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        want = (dtype(1) / x).astype(dtype)
    u = np.uint32 if dtype == np.float32 else np.uint64
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(got[ok].view(u), want[ok].view(u))


def test_rcp_approx_within_one_ulp_with_subnormals_flushed(backend):
    x = np.concatenate([random_bits(backend.size(1 << 14, 1 << 11)), edges()])
    got = run_unary(backend, lambda v: tylo.rcp(v, approx=True), x)
    tiny = np.finfo(np.float32).tiny
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        flushed = np.where(np.abs(x) < tiny, np.copysign(np.float32(0), x), x)
        want = (np.float32(1) / flushed).astype(np.float32)
        want = np.where(np.abs(want) < tiny, np.copysign(np.float32(0), want), want)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    g, w = got[ok].view(np.int32).astype(np.int64), want[ok].view(np.int32).astype(np.int64)
    same_sign = (g < 0) == (w < 0)
    assert same_sign.all()
    ulps = np.abs(g - w)
    assert ulps.max() <= 1, f"{ulps.max()} ulps at x = {x[ok][ulps.argmax()]!r}"


def test_rcp_of_a_fragment(backend):
    x = random_tiles(backend)
    got = run(backend, two_tiles, x.shape, x, x, lambda f, g: tylo.rcp(f))
    with np.errstate(divide="ignore"):
        assert_bits(got, np.float32(1) / x)


# -- register maps --------------------------------------------------------------------------------

@tylo.kernel
def transposed(out, x):
    t, b = tylo.thread_idx(), tylo.block_idx()
    f = tylo.load_fragment(C, tile(x, b), t)
    tylo.store(tylo.window(out, (b * 8, 0), (8, 16)), tylo.permutedims(f), t)


def test_permutedims_moves_no_value(backend):
    x = random_tiles(backend)
    blocks = x.shape[0] // 16
    out = backend.full((8 * blocks, 16), np.nan, np.float32)
    backend.launch(transposed, (blocks,), 32, out, backend.put(x))
    got = backend.get(out).reshape(blocks, 8, 16)
    assert_bits(got, x.reshape(blocks, 16, 8).transpose(0, 2, 1))


@tylo.kernel
def windows(out, x):
    t, b = tylo.thread_idx(), tylo.block_idx()
    f = tylo.load_fragment(C, tile(x, b), t)
    tylo.store(tylo.window(out, (b * 16, 0), (8, 8)), tylo.window(f, (8, 0), (8, 8)), t)
    tylo.store(tylo.window(out, (b * 16 + 8, 0), (8, 8)), tylo.window(f, (0, 0), (8, 8)), t)


def test_a_static_window_of_a_fragment(backend):
    x = random_tiles(backend)
    got = run(backend, windows, x.shape, x)
    b = x.reshape(-1, 2, 8, 8)
    assert_bits(got, b[:, ::-1].reshape(x.shape))


def test_relayout_is_a_register_permutation(backend):
    x = random_tiles(backend)
    assert tylo.check_relayout(C, SWAPPED) == [0, 2, 1, 3]

    @tylo.kernel
    def k(out, x):
        t, b = tylo.thread_idx(), tylo.block_idx()
        f = tylo.load_fragment(C, tile(x, b), t)
        tylo.store(tile(out, b), tylo.relayout(f, SWAPPED) * 1.0, t)

    assert_bits(run(backend, k, x.shape, x), x)


def test_float64_select_and_compare(backend):
    x = (RNG.standard_normal(backend.size(4096, 512)) * 3)

    got = run_unary(backend, lambda v: tylo.select(v > 0.0, v, tylo.rcp(v)), x)
    np.testing.assert_array_equal(got, np.where(x > 0, x, 1 / x))
    assert got.dtype == np.float64
