"""bench/grouped_matmul.py imports without a GPU, and its pieces are what it claims: on CPU
tensors (the emulator) tylo.ops.grouped_matmul of the bench's inputs matches its torch.mm loop
and its float32 check; the bf16 and FP8 cases pass the bench's own checks (NaN-poisoned
outputs, per-case references; on this CPU torch refuses _scaled_mm's block scales, so the
per-tensor loop stands in) and a broken case fails them; ragged sizes have the stated range;
the default configs are issue 26's."""

from __future__ import annotations

import pytest
from bench_scripts import load

torch = pytest.importorskip("torch")

import tylo.ops  # noqa: E402

bench = load("grouped_matmul")


def test_the_bench_pieces_on_the_emulator():
    sizes = [0, 40, 3, 0, 90]
    a, b, offsets = bench.inputs(torch, sizes, 256, 64, device="cpu")
    ours = tylo.ops.grouped_matmul(a, b, offsets)
    assert bench.rel_error(torch, ours, a, b, sizes) < 2e-2
    loop = bench.mm_loop(torch, a, b, sizes).float()
    assert ((ours.float() - loop).abs().max() / loop.abs().max()).item() < 2e-2
    ours[50] = float("nan")
    assert bench.rel_error(torch, ours, a, b, sizes) == float("inf")


def test_group_sizes():
    assert bench.group_sizes(8, 512, False) == [512] * 8
    ragged = bench.group_sizes(64, 100, True)
    assert len(ragged) == 64 and all(0 <= n <= 200 for n in ragged) and len(set(ragged)) > 1


def test_default_configs():
    assert bench.CONFIGS[(8, 4096, 14336)] == (512, 1024, 2048, 4096)
    tokens = bench.CONFIGS[(64, 2048, 7168)]
    assert min(tokens) == 64 and max(tokens) == 1024


@pytest.mark.parametrize("make", ["bf16_cases", "fp8_cases"])
def test_the_cases_pass_the_bench_checks(make):
    sizes = [0, 40, 3, 0, 90]
    cases, (a, b), refs = getattr(bench, make)(torch, sizes, 256, 256, device="cpu")
    assert next(iter(cases)).startswith("tylo") and len(cases) >= 2
    good, notes = bench.check(torch, cases, a, b, refs, sizes, 256, device="cpu")
    assert good, notes
    first = next(iter(cases))
    broken = {first: lambda: cases[first]().roll(1, 1)}  # columns shifted by one
    assert not bench.check(torch, broken, a, b, refs, sizes, 256, device="cpu")[0]
