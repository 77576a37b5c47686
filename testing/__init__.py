"""The harness the examples, the tests and bench/ share: inputs on the GPU or, without one, on
the CPU emulator; outputs poisoned with NaN first; the relative error against a float32 (torch)
or float64 (numpy) reference; CUDA-event timing of several implementations interleaved in
rounds; the peers they are timed beside (`tylo.testing.peers`).

An array is a torch CUDA tensor when a GPU runs the kernel and a numpy array (ml_dtypes for
bf16 and FP8) when the emulator does: `arrays` makes either from one call, so that a check
reads the same on both. Nothing here imports torch before it is used (``import tylo.testing``
stays as light as ``import tylo``); everything kernel-side it uses is public `tylo` API.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable

__all__ = [
    "Arrays", "arrays", "bench_gemm_beside_torch", "cuda_torch", "graphed", "interleaved_ms", "median_ms", "per_call_ms",
    "poison_next",
    "relative_error", "report", "report_attention", "to_numpy", "upcast", "written",
]


def cuda_torch():
    """torch when it is installed and sees a GPU, else None (then run on the emulator)."""
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


class Arrays:
    """Makes the arrays of one check: torch CUDA tensors (`torch` given) or numpy arrays for
    the emulator (`torch` None), from a `tylo` dtype (BFloat16, Float32, Float8E4M3, ...).
    `rng`: the numpy generator of the emulator's random values (fresh by default)."""

    def __init__(self, torch=None, rng=None):
        import numpy as np

        self.torch = torch
        self.rng = np.random.default_rng() if rng is None else rng

    @property
    def emulated(self) -> bool:
        return self.torch is None

    def _torch_dtype(self, dtype):
        return getattr(self.torch, dtype.torch)

    def randn(self, shape, dtype, scale: float = 1.0):
        """Standard normal values times `scale`, rounded to `dtype`."""
        if self.torch is not None:
            x = self.torch.randn(*shape, device="cuda")
            return (x * scale if scale != 1.0 else x).to(self._torch_dtype(dtype))
        import numpy as np

        x = self.rng.standard_normal(shape)
        return (x * scale if scale != 1.0 else x).astype(np.float32).astype(dtype.numpy)

    def full(self, shape, value, dtype):
        """An array of `value` in `dtype`."""
        if self.torch is not None:
            return self.torch.full(tuple(shape), value, device="cuda",
                                   dtype=self._torch_dtype(dtype))
        import numpy as np

        return np.full(tuple(shape), value, dtype.numpy)

    def poisoned(self, shape, dtype):
        """An output array filled with NaN: an element the kernel does not write stays NaN."""
        return self.full(shape, math.nan, dtype)

    def zeros(self, shape, dtype):
        return self.full(shape, 0, dtype)

    def ones(self, shape, dtype):
        return self.full(shape, 1, dtype)

    def synchronize(self) -> None:
        """Wait for the GPU (nothing to wait for on the emulator)."""
        if self.torch is not None:
            self.torch.cuda.synchronize()


def arrays(torch=None, rng=None) -> Arrays:
    """`Arrays` on the GPU (`torch`, e.g. `cuda_torch()`) or for the emulator (None)."""
    return Arrays(torch, rng)


def _is_torch(x) -> bool:
    return type(x).__module__.startswith("torch")


def to_numpy(x):
    """`x` (a torch tensor or a numpy array of any dtype) as a float64 numpy array."""
    import numpy as np

    if _is_torch(x):
        x = x.detach().float().cpu().numpy()
    return np.asarray(x, dtype=np.float64)


def upcast(x):
    """`x` in the precision of a reference: float32 for a torch tensor (on its device), float64
    for a numpy array; so that ``upcast(A) @ upcast(B)`` is the reference product of either."""
    if _is_torch(x):
        return x.float()
    import numpy as np

    return np.asarray(x, dtype=np.float64)


def written(x) -> bool:
    """No NaN left in `x` (every element of a poisoned output was written)."""
    import numpy as np

    return not np.isnan(to_numpy(x)).any()


def relative_error(out, ref) -> float:
    """The relative Frobenius error of `out` against `ref`, in float64 (inf when `out` holds a
    NaN: an element left unwritten, or a NaN computed). Two torch tensors on one device are
    compared there (no host copy: a GEMM's output of 10^9 elements stays on the GPU), anything
    else as numpy arrays."""
    if _is_torch(out) and _is_torch(ref) and out.device == ref.device:
        o, r = out.detach().float().double(), ref.detach().float().double()
        if bool(o.isnan().any()):
            return math.inf
        return float((o - r).norm() / r.norm())
    import numpy as np

    o, r = to_numpy(out), to_numpy(ref)
    if np.isnan(o).any():
        return math.inf
    return float(np.linalg.norm(o - r) / np.linalg.norm(r))


def report(name: str, out, ref, tol: float = 1e-2, against: str | None = None,
           extra: str = "") -> bool:
    """Print and judge one check: every output written and the relative Frobenius error
    against `ref` below `tol`. `against` names the reference in the printed line (default:
    "float32" for torch arrays, "numpy float64" for numpy ones)."""
    err = relative_error(out, ref)
    if against is None:
        against = "float32" if _is_torch(out) else "numpy float64"
    good = err < tol
    print(f"check {name}: relative Frobenius error vs {against} {err:.2e} (all outputs "
          f"written: {written(out)}){extra} {'ok' if good else 'FAILED'}")
    return good


def report_attention(name: str, O, lse, ref_o, ref_lse, seq: int, o_error: float = 1e-2) -> bool:
    """Print and judge one check of an attention forward pass, O (B, H, S, D) and lse (B, H, S)
    against their references over the first `seq` rows: O within `o_error` relative (L2; 1e-2:
    bf16 output and P; the FP8 forward's e4m3 P takes more), lse within 2e-3 absolute (-inf
    where the reference's is: a row that sees no key), every row < seq written, every row >=
    seq untouched (still NaN: the arrays were poisoned, and padding must not be written)."""
    import numpy as np

    o, l = to_numpy(O), to_numpy(lse)
    ro, rl = to_numpy(ref_o), to_numpy(ref_lse)
    done = not np.isnan(o[:, :, :seq]).any() and not np.isnan(l[:, :, :seq]).any()
    untouched = np.isnan(o[:, :, seq:]).all() and np.isnan(l[:, :, seq:]).all()
    err = float(np.linalg.norm(o[:, :, :seq] - ro) / np.linalg.norm(ro)) if done else math.inf
    empty = np.isneginf(l[:, :, :seq]) & np.isneginf(rl)  # rows that see no key: -inf both
    lse_err = (float(np.where(empty, 0.0, np.abs(l[:, :, :seq] - rl)).max()) if done
               else math.inf)
    good = done and untouched and err < o_error and lse_err < 2e-3
    print(f"check {name}: O relative error {err:.2e}, lse max error {lse_err:.2e} (rows < seq "
          f"written: {done}, rows >= seq untouched: {untouched}) {'ok' if good else 'FAILED'}")
    return good


def poison_next(torch, shape, dtype, device="cuda") -> None:
    """Fill a block of torch's caching allocator of a (shape) `dtype` tensor's size with NaN
    (an integer dtype: its least value, ``torch.iinfo(dtype).min``) and free it: the next
    tensor of that size allocated on the current stream (the new output of an op that has no
    ``out=``, e.g. ``tylo.ops.matmul`` or ``torch.matmul``) reuses the block, so an element the
    op does not write reads NaN (or the least integer). Call it right before the op, after the
    reference is computed (any allocation between the two may take the block)."""
    value = math.nan if dtype.is_floating_point else torch.iinfo(dtype).min
    poison = torch.full(tuple(shape), value, dtype=dtype, device=device)
    del poison


def median_ms(torch, fn: Callable[[], object], reps: int = 20, warmup: int = 5) -> float:
    """Median milliseconds of `fn()` over `reps` calls, each between two CUDA events on the
    current stream, after `warmup` untimed calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def interleaved_ms(torch, cases: dict[str, Callable[[], object]], rounds: int = 7,
                   reps: int = 20, warmup: int = 5) -> dict[str, float]:
    """For each named case, the median over `rounds` rounds of its per-round `median_ms`;
    every round times every case once, in the given order. Interleaving lands a drift of the
    card's clock or power state over the run (on the H200 the same kernel was seen to fall
    from 740 to 660 TFLOP/s within a minute) on every case alike instead of on whichever ran
    last."""
    per_round: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, fn in cases.items():
            per_round[name].append(median_ms(torch, fn, reps, warmup))
    return {name: statistics.median(times) for name, times in per_round.items()}


def per_call_ms(torch, cases: dict[str, Callable[[], object]], graph_calls: int = 0,
                **timing) -> dict[str, float]:
    """Milliseconds per call of each named case, timed in one interleaved run
    (`interleaved_ms`, `timing` its keywords); with `graph_calls` > 0 each case is replayed
    from a CUDA graph of that many calls (`graphed`: the GPU's time without the host's) and
    the time divided by them."""
    if graph_calls:
        cases = {name: graphed(torch, fn, graph_calls) for name, fn in cases.items()}
    ms = interleaved_ms(torch, cases, **timing)
    return {name: t / max(graph_calls, 1) for name, t in ms.items()}


def graphed(torch, fn: Callable[[], object], calls: int) -> Callable[[], object]:
    """A callable replaying a CUDA graph of `calls` back-to-back calls of `fn` (captured once,
    after a warm-up on the capture stream): GPU time without the host's launch cost."""
    graph, stream = torch.cuda.CUDAGraph(), torch.cuda.Stream()
    with torch.cuda.stream(stream):
        fn()
        torch.cuda.synchronize()
        with torch.cuda.graph(graph, stream=stream):
            for _ in range(calls):
                fn()
    torch.cuda.synchronize()
    return graph.replay


def bench_gemm_beside_torch(torch, shapes, launch: Callable, describe: Callable, dtype,
                            out_dtype, peak_tflops: float | None = None) -> None:
    """Time C = A @ B by ``launch(C, A, B)`` beside ``torch.matmul(A, B)`` at each (M, N, K) of
    `shapes`, all cases interleaved in one run (`interleaved_ms`), and print one line a shape:
    ms and TFLOP/s of both, the ratio, ``describe(C, A, B)`` (the configuration the launch
    took) and, given `peak_tflops`, the fraction of that peak. A, B random `dtype`, C
    `out_dtype` (torch dtypes, on the GPU); each launch runs once first (tuning outside the
    timing). The examples' `--bench` (examples/ampere/gemm.py, examples/hopper/gemm_f64.py)."""
    cases, inputs = {}, {}
    for M, N, K in shapes:
        A = torch.randn(M, K, device="cuda", dtype=dtype)
        B = torch.randn(K, N, device="cuda", dtype=dtype)
        C = torch.empty(M, N, device="cuda", dtype=out_dtype)
        launch(C, A, B)
        inputs[M, N, K] = (C, A, B)
        cases[f"tylo {M}"] = lambda C=C, A=A, B=B: launch(C, A, B)
        cases[f"torch {M}"] = lambda A=A, B=B: torch.matmul(A, B)
    ms = interleaved_ms(torch, cases)
    for (M, N, K), (C, A, B) in inputs.items():
        flops = 2 * M * N * K
        t_tylo, t_torch = ms[f"tylo {M}"], ms[f"torch {M}"]
        tf_tylo, tf_torch = flops / t_tylo / 1e9, flops / t_torch / 1e9
        peak = "" if peak_tflops is None else (
            f" ({tf_tylo / peak_tflops:.0%} of the {peak_tflops:.0f} TFLOP/s peak)")
        print(f"bench {M}x{N}x{K}: tylo ({describe(C, A, B)}) {t_tylo:.3f} ms = {tf_tylo:.1f} "
              f"TFLOP/s{peak} | torch.matmul {t_torch:.3f} ms = {tf_torch:.1f} TFLOP/s | ratio "
              f"{tf_tylo / tf_torch:.3f}")
