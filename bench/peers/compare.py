"""Timing several implementations of one product side by side, the way the examples' --bench
report them: CUDA events around each call, medians after warm-up, and the cases INTERLEAVED in
rounds, so that a drift of the card's clock or power state over the run (on the H200 the same
kernel was seen to fall from 740 to 660 TFLOP/s within a minute) lands on every case alike
instead of on whichever ran last. Importing this module needs torch (only on a GPU)."""

from __future__ import annotations

import statistics
from collections.abc import Callable


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
    """For each named case, the median over `rounds` rounds of its per-round `median_ms`; every
    round times every case once, in the given order."""
    per_round: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, fn in cases.items():
            per_round[name].append(median_ms(torch, fn, reps, warmup))
    return {name: statistics.median(times) for name, times in per_round.items()}
