"""tylo.testing on the emulator's side (numpy; the torch side runs on a GPU in the kernels'
tests): poisoned arrays, the relative error and its verdict (of torch tensors too, computed in
torch), and no GPU found here; on a GPU, `poison_next`."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from tylo import BFloat16, Float32, testing


def test_arrays_for_the_emulator_are_numpy_of_the_dtype():
    arrays = testing.arrays(rng=np.random.default_rng(0))
    assert arrays.emulated
    x = arrays.randn((4, 8), BFloat16, scale=2.0)
    assert x.dtype == ml_dtypes.bfloat16 and x.shape == (4, 8) and np.isfinite(x.astype(float)).all()
    poisoned = arrays.poisoned((3,), Float32)
    assert poisoned.dtype == np.float32 and np.isnan(poisoned).all()
    assert (arrays.ones((2, 2), BFloat16).astype(float) == 1).all()


def test_an_unwritten_element_fails_the_check(capsys):
    ref = np.arange(1.0, 7.0).reshape(2, 3)
    out = ref.astype(np.float32)
    assert testing.written(out) and testing.relative_error(out, ref) == 0.0
    assert testing.report("exact", out, ref)
    out[1, 2] = np.nan
    assert not testing.written(out) and testing.relative_error(out, ref) == math.inf
    assert not testing.report("one left", out, ref)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith(" ok") and "numpy float64" in lines[0]
    assert lines[1].endswith(" FAILED") and "(all outputs written: False)" in lines[1]


def test_the_tolerance_is_relative_frobenius():
    ref = np.ones((10, 10))
    out = ref.copy()
    out[0, 0] = 1.5                      # error 0.5 / 10
    assert math.isclose(testing.relative_error(out, ref), 0.05)
    assert not testing.report("coarse", out, ref, tol=0.01)
    assert testing.report("coarse", out, ref, tol=0.1)


def test_upcast_is_float64_for_numpy():
    x = np.ones(3, ml_dtypes.bfloat16)
    assert testing.upcast(x).dtype == np.float64


def test_attention_report_wants_padding_untouched(capsys):
    ref_o, ref_lse = np.ones((1, 1, 4, 2)), np.zeros((1, 1, 4))
    O = np.full((1, 1, 6, 2), np.nan)
    lse = np.full((1, 1, 6), np.nan)
    O[:, :, :4], lse[:, :, :4] = 1, 0
    assert testing.report_attention("padded", O, lse, ref_o, ref_lse, 4)
    O[:, :, 5] = 0                       # a row past the sequence written
    assert not testing.report_attention("padded", O, lse, ref_o, ref_lse, 4)
    assert "rows >= seq untouched: False" in capsys.readouterr().out


def test_no_gpu_here_means_the_emulator():
    """(This machine has no GPU; on one, cuda_torch is torch.)"""
    torch = testing.cuda_torch()
    assert torch is None or torch.cuda.is_available()


def test_relative_error_of_torch_tensors_stays_in_torch(monkeypatch):
    torch = pytest.importorskip("torch")
    ref = torch.ones(10, 10)
    out = ref.to(torch.bfloat16)
    out[0, 0] = 1.5
    expected = testing.relative_error(out.float().numpy(), ref.numpy())
    monkeypatch.setattr(testing, "to_numpy", None)  # no host copy through numpy
    assert math.isclose(testing.relative_error(out, ref), expected)
    assert math.isclose(expected, 0.05)
    out[3, 4] = math.nan
    assert testing.relative_error(out, ref) == math.inf


@pytest.mark.gpu
def test_poison_next_leaves_nan_in_the_next_output():
    torch = pytest.importorskip("torch")
    a = torch.randn(512, 256, device="cuda").to(torch.bfloat16)
    b = torch.randn(256, 384, device="cuda").to(torch.bfloat16)
    testing.poison_next(torch, (512, 384), torch.bfloat16)
    assert bool(torch.empty(512, 384, device="cuda", dtype=torch.bfloat16).isnan().all())
    testing.poison_next(torch, (512, 384), torch.bfloat16)
    out = torch.matmul(a, b)  # writes every element: the poison is gone
    assert testing.relative_error(out, a.float() @ b.float()) < 1e-2


def test_poison_next_of_an_integer_dtype_leaves_its_least_value(monkeypatch):
    """Integers have no NaN: the poison is torch.iinfo(dtype).min (on the CPU's allocator the
    block is not reused, so only the fill is checked here; on a GPU the next output reads it)."""
    torch = pytest.importorskip("torch")
    filled = []
    real_full = torch.full
    monkeypatch.setattr(torch, "full", lambda *a, **kw: filled.append(real_full(*a, **kw)))
    testing.poison_next(torch, (4, 4), torch.int32, device="cpu")
    assert filled[0].dtype == torch.int32
    assert bool((filled[0] == torch.iinfo(torch.int32).min).all())


@pytest.mark.gpu
def test_poison_next_of_int32_reaches_the_next_output():
    torch = pytest.importorskip("torch")
    testing.poison_next(torch, (512, 384), torch.int32)
    assert bool((torch.empty(512, 384, device="cuda", dtype=torch.int32)
                 == torch.iinfo(torch.int32).min).all())


def test_per_call_ms_divides_a_graph_of_calls(monkeypatch):
    """per_call_ms: the interleaved times per case, each divided by the graph's calls when the
    cases are replayed from CUDA graphs (graphed and interleaved_ms stand in: no GPU here)."""
    made = []
    monkeypatch.setattr(testing, "interleaved_ms",
                        lambda torch, cases, **kw: {name: 10.0 * len(name) for name in cases})
    monkeypatch.setattr(testing, "graphed", lambda torch, fn, calls: made.append(calls) or fn)
    cases = {"a": lambda: None, "bb": lambda: None}
    assert testing.per_call_ms(None, cases) == {"a": 10.0, "bb": 20.0} and made == []
    assert testing.per_call_ms(None, cases, 10) == {"a": 1.0, "bb": 2.0} and made == [10, 10]


@pytest.mark.gpu
def test_per_call_ms_on_the_gpu():
    torch = pytest.importorskip("torch")
    x = torch.zeros(1 << 20, device="cuda")
    ms = testing.per_call_ms(torch, {"add": lambda: x.add_(1)}, 10, rounds=2, reps=3, warmup=1)
    assert 0 < ms["add"] < 10
