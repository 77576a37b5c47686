"""Online softmax (tylo.SoftmaxState, softmax_update, softmax_merge, softmax_normalize,
softmax_logsumexp) on the GPU and the emulator (`backend`), against numpy in float64.

Scores are fresh random values (standard normal times 4) with -inf masks: about a third of the
scores at random, some lines fully masked, lines whose first chunks are fully masked (so an
empty state meets a non-empty chunk) and lines whose last chunks are (a chunk of zero weights).
Each kernel streams the scores chunk by chunk through a runtime loop, accumulating a per-line
numerator ``O = sum(weights * V)`` (a weighted sum over each line, with the rescale applied at
every chunk), and writes the normalized ``O`` (= softmax(scale s) . V per line), the
log-sum-exp, and the probabilities from a second pass with the final state. Outputs are
poisoned with NaN. Bounds: the FA2 exponent's (frontend/language/softmax.py) plus f32 summation."""

import numpy as np
import pytest

import tylo
from tylo import BFloat16, Float32, MMAAtom, TiledMMA

RNG = np.random.default_rng()
ATOM = MMAAtom((16, 8, 16), BFloat16, Float32)
MMA_C = ATOM.operand_layout("C")  # (16, 8), one warp
TILED_C = TiledMMA(ATOM, warps=(2, 1), repeat=(1, 2)).operand_layout("C")  # (32, 16), 2 warps
CASES = [
    pytest.param(TILED_C, 1, 0.125, id="rows-2warps-scaled"),
    pytest.param(MMA_C, 1, 1.0, id="rows-1warp"),
    pytest.param(MMA_C, 0, 0.5, id="columns-1warp"),
]


def chunk(x, own, dims, j):
    rows, cols = own.shape
    return tylo.window(x, (0, j * cols) if dims == 1 else (j * rows, 0), own.shape)


def line_window(x, own, dims):
    return tylo.window(x, (0, 0), (own.rows, 1) if dims == 1 else (1, own.cols))


@tylo.kernel
def stream(out, lse, prob, S, V, chunks, own: tylo.constexpr, dims: tylo.constexpr,
           scale: tylo.constexpr, runtime=None, weight_scale: tylo.constexpr = 1):
    """`runtime`: a 1-element Float32 array holding the scale (read at run time) instead of
    the static `scale`; `weight_scale`: the state's (weights and total times it)."""
    t = tylo.thread_idx()
    first = tylo.load_fragment(own, chunk(S, own, dims, 0), t)
    state = tylo.SoftmaxState(first, dims=dims, scale=scale if runtime is None else runtime[0],
                              weight_scale=weight_scale)
    o = tylo.zeros(state.maximum.ownership)
    for j in range(chunks):
        s = tylo.load_fragment(own, chunk(S, own, dims, j), t)
        v = tylo.load_fragment(own, chunk(V, own, dims, j), t)
        state, w, r = tylo.softmax_update(state, s)
        o = tylo.scale(o, r) + tylo.sum(w * v, dims)
    tylo.store(line_window(out, own, dims), tylo.softmax_normalize(state, o), t)
    tylo.store(line_window(lse, own, dims), tylo.softmax_logsumexp(state), t)
    for j in range(chunks):  # the final state: the maximum no longer changes
        s = tylo.load_fragment(own, chunk(S, own, dims, j), t)
        again, w, r = tylo.softmax_update(state, s)
        tylo.store(chunk(prob, own, dims, j), tylo.softmax_normalize(state, w), t)


@tylo.kernel
def merged(out, lse, S, V, chunks, own: tylo.constexpr, dims: tylo.constexpr,
           scale: tylo.constexpr, runtime=None, weight_scale: tylo.constexpr = 1):
    """The chunks split in two halves (even and odd), each summarized alone, then merged
    (`runtime`, `weight_scale`: as `stream`'s; both states share the runtime scalar)."""
    t = tylo.thread_idx()
    first = tylo.load_fragment(own, chunk(S, own, dims, 0), t)
    sc = scale if runtime is None else runtime[0]
    left = tylo.SoftmaxState(first, dims=dims, scale=sc, weight_scale=weight_scale)
    right = tylo.SoftmaxState(first, dims=dims, scale=sc, weight_scale=weight_scale)
    o_left = tylo.zeros(left.maximum.ownership)
    o_right = tylo.zeros(left.maximum.ownership)
    for j in range(0, chunks, 2):
        s = tylo.load_fragment(own, chunk(S, own, dims, j), t)
        v = tylo.load_fragment(own, chunk(V, own, dims, j), t)
        left, w, r = tylo.softmax_update(left, s)
        o_left = tylo.scale(o_left, r) + tylo.sum(w * v, dims)
        s = tylo.load_fragment(own, chunk(S, own, dims, j + 1), t)
        v = tylo.load_fragment(own, chunk(V, own, dims, j + 1), t)
        right, w, r = tylo.softmax_update(right, s)
        o_right = tylo.scale(o_right, r) + tylo.sum(w * v, dims)
    state, rl, rr = tylo.softmax_merge(left, right)
    o = tylo.scale(o_left, rl) + tylo.scale(o_right, rr)
    tylo.store(line_window(out, own, dims), tylo.softmax_normalize(state, o), t)
    tylo.store(line_window(lse, own, dims), tylo.softmax_logsumexp(state), t)


def masked_scores(own, dims, chunks):
    """Lines along `dims`: random scores with -inf masks and the special lines (docstring)."""
    rows, cols = own.shape
    shape = (rows, cols * chunks) if dims == 1 else (rows * chunks, cols)
    s = (RNG.standard_normal(shape) * 4).astype(np.float32)
    lines = s if dims == 1 else s.T  # a view: lines[i] is line i
    lines[RNG.random(lines.shape) < 0.33] = -np.inf
    width = lines.shape[1] // chunks
    n = lines.shape[0]
    lines[1 % n] = -np.inf  # fully masked
    lines[2 % n, : 2 * width] = -np.inf  # empty state until the third chunk
    lines[3 % n, width:] = -np.inf  # only the first chunk has scores
    lines[4 % n, :-1] = -np.inf  # one score, in the last column
    return s, lines


def reference(lines, values, scale):
    """softmax(scale * s) . v, logsumexp(scale * s), softmax per line, in float64; empty
    lines: 0, -inf, 0."""
    z = lines.astype(np.float64) * scale
    m = z.max(axis=1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(z - m)
    total = e.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(total > 0, e / total, 0.0)
        lse = np.where(total[:, 0] > 0, np.log(total[:, 0]) + m[:, 0], -np.inf)
    return (p * values).sum(axis=1), lse, p


def check_lines(got_out, got_lse, lines, values, scale):
    want_out, want_lse, _ = reference(lines, values, scale)
    empty = ~np.isfinite(lines).any(axis=1)
    assert empty.any() and not empty.all()
    np.testing.assert_array_equal(got_out[empty], 0.0)
    np.testing.assert_array_equal(got_lse[empty], -np.inf)
    magnitude = np.abs(lines[~empty] * scale).max(axis=1, initial=0, where=np.isfinite(
        lines[~empty]))
    # weights: ln2 (|m c| + 2 |(s - m) c|) 2^-24 + 2^-22 relative (module docstring), times
    # |v| summed; f32 sums of at most 64 terms
    rel = np.log(2) * 3 * (magnitude * 1.4427 + 1) * 2.0 ** -24 + 2.0 ** -22 + 64 * 2.0 ** -24
    v_scale = np.abs(values[~empty]).max(axis=1)
    assert np.all(np.abs(got_out[~empty] - want_out[~empty]) <= 4 * rel * v_scale + 1e-7)
    assert np.all(np.abs(got_lse[~empty] - want_lse[~empty])
                  <= 4 * rel * np.abs(want_lse[~empty]) + 2.0 ** -20)
    assert np.isfinite(got_out).all() and not np.isnan(got_lse).any()


def run(backend, kernel, own, dims, scale, chunks, with_prob, runtime=False, weight_scale=1):
    s, lines = masked_scores(own, dims, chunks)
    v = RNG.standard_normal(s.shape).astype(np.float32)
    n_lines = lines.shape[0]
    line_shape = (n_lines, 1) if dims == 1 else (1, n_lines)
    out = backend.full(line_shape, np.nan, np.float32)
    lse = backend.full(line_shape, np.nan, np.float32)
    args = [out, lse]
    prob = None
    if with_prob:
        prob = backend.full(s.shape, np.nan, np.float32)
        args.append(prob)
    extra = ()
    if runtime or weight_scale != 1:
        extra = (backend.put(np.float32([scale])) if runtime else None, weight_scale)
    backend.launch(kernel, (1,), own.threads, *args, backend.put(s), backend.put(v), chunks,
                   own, dims, scale, *extra)
    values = v if dims == 1 else v.T
    check_lines(backend.get(out).reshape(-1), backend.get(lse).reshape(-1), lines, values,
                scale)
    return lines, None if prob is None else backend.get(prob)


@pytest.mark.parametrize("runtime, weight_scale", [(False, 1), (True, 256)],
                         ids=["static", "runtime-scale-weight-scale-256"])
@pytest.mark.parametrize("own, dims, scale", CASES)
def test_streamed(backend, own, dims, scale, runtime, weight_scale):
    """The static scale, or (runtime) the scale read from memory with weights and totals 256
    times larger (FP8 attention's): the same softmax, log-sum-exp and probabilities."""
    lines, prob = run(backend, stream, own, dims, scale, 4, True, runtime, weight_scale)
    p = prob if dims == 1 else prob.T
    _, _, want = reference(lines, np.zeros_like(lines), scale)
    masked = ~np.isfinite(lines)
    np.testing.assert_array_equal(p[masked], 0.0)  # masked scores and empty lines: exactly 0
    assert np.all(np.abs(p - want) <= 2e-5 * want + 1e-7)
    full = np.isfinite(lines).any(axis=1)
    assert np.all(np.abs(p[full].sum(axis=1) - 1) <= 1e-5)


@pytest.mark.parametrize("runtime, weight_scale", [(False, 1), (True, 256)],
                         ids=["static", "runtime-scale-weight-scale-256"])
@pytest.mark.parametrize("own, dims, scale", CASES[:1] + CASES[2:])
def test_merged(backend, own, dims, scale, runtime, weight_scale):
    run(backend, merged, own, dims, scale, 4, False, runtime, weight_scale)



@tylo.kernel
def probabilities(prob, S, ftz: tylo.constexpr):
    t = tylo.thread_idx()
    s = tylo.load_fragment(MMA_C, tylo.window(S, (0, 0), (16, 8)), t)
    state, w, r = tylo.softmax_update(tylo.SoftmaxState(s, dims=1), s, ftz=ftz)
    tylo.store(tylo.window(prob, (0, 0), (16, 8)), tylo.softmax_normalize(state, w), t)


@pytest.mark.parametrize("ftz", [True, False], ids=["ftz", "ieee"])
def test_ftz_flushes_only_the_subnormal_weights(backend, ftz):
    """Scores 80..100 below their row's maximum: their weights e^(s - m) straddle 2^-126
    (e^-87.3). With ftz (ex2.approx.ftz.f32, the default) those below it are exactly 0 and the
    rest as without; without, they are the IEEE subnormals (within the weight's error plus the
    subnormal spacing, 2^-149)."""
    s = np.zeros((16, 8), np.float32)
    s[:, 1:] = -RNG.uniform(80, 100, (16, 7)).astype(np.float32)
    prob = backend.full(s.shape, np.nan, np.float32)
    backend.launch(probabilities, (1,), 32, prob, backend.put(s), ftz)
    got = backend.get(prob)
    _, _, want = reference(s, np.zeros_like(s), 1.0)
    tiny = float(np.finfo(np.float32).tiny)
    below = want < tiny * 0.99
    assert below.any() and (want[:, 1:] > tiny * 1.01).any()
    if ftz:
        assert (got[below] == 0).all()
    else:
        assert (got[below] > 0).all()
    # (weights within 1% of 2^-126 may fall on either side of it)
    edge = (want >= tiny * 0.99) & (want <= tiny * 1.01) & (got == 0)
    rest = ~below & ~edge if ftz else np.ones_like(below)
    assert np.all(np.abs(got[rest] - want[rest]) <= 2e-5 * want[rest] + 2.0 ** -148)


@tylo.kernel
def weights(w_out, total, lse, S, weight_scale: tylo.constexpr):
    t = tylo.thread_idx()
    s = tylo.load_fragment(MMA_C, tylo.window(S, (0, 0), (16, 8)), t)
    state, w, r = tylo.softmax_update(tylo.SoftmaxState(s, dims=1, weight_scale=weight_scale), s)
    tylo.store(tylo.window(w_out, (0, 0), (16, 8)), w, t)
    tylo.store(tylo.window(total, (0, 0), (16, 1)), state.total, t)
    tylo.store(tylo.window(lse, (0, 0), (16, 1)), tylo.softmax_logsumexp(state), t)


@pytest.mark.parametrize("weight_scale", [1, 256])
def test_weight_scale_scales_the_weights_and_the_total(backend, weight_scale):
    """weight_scale 256 (FP8 attention's P in [0, 256]): each row's largest weight is 256 (but
    for the exponent's rounding, module docstring) and every weight and the total 256 times
    weight_scale 1's; the log-sum-exp is unchanged."""
    s = (RNG.standard_normal((16, 8)) * 4).astype(np.float32)
    w, total, lse = (backend.full(shape, np.nan, np.float32) for shape in ((16, 8), (16, 1),
                                                                         (16, 1)))
    backend.launch(weights, (1,), 32, w, total, lse, backend.put(s), weight_scale)
    z = s.astype(np.float64)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    got_w, got_total = backend.get(w), backend.get(total)
    assert np.all(np.abs(got_w.max(axis=1) - weight_scale) <= 2.0 ** -20 * weight_scale)
    assert np.all(np.abs(got_w - weight_scale * e) <= 2e-6 * weight_scale * e + 1e-30)
    assert np.all(np.abs(got_total[:, 0] - weight_scale * e.sum(1)) <= 1e-5 * weight_scale * e.sum(1))
    want_lse = np.log(e.sum(1)) + z.max(1)
    assert np.all(np.abs(backend.get(lse)[:, 0] - want_lse) <= 1e-5 * np.abs(want_lse) + 2.0 ** -18)
