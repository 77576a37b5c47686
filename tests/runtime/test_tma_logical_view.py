"""tylo.prepare_tma takes the LOGICAL view (the shape in the plan's axis order) and checks that
the plan's axis is contiguous (issue 24): a B (K, N) plan with axis 0 takes ``Bt.T`` and refuses
a row-major (K, N) tensor, which used to run and return a wrong product."""

from __future__ import annotations

import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import tylo
from tylo import BFloat16, TMATile
from tylo.compiler.plans.tma_rules import TMAError
from tylo.runtime import tma as tma_module

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "emulator"))
from fakes import BASE, FakeTensor  # noqa: E402
from test_wgmma_after_tma import TA, TB, product  # noqa: E402  (out (64, 64) f32 = A @ B)

TX = 2 * 64 * 64 * 2  # the bytes of both boxes
K_MAJOR_B = TMATile(BFloat16, (64, 128), 0)


def operands():
    rng = np.random.default_rng()
    A = rng.standard_normal((64, 64)).astype(ml_dtypes.bfloat16)
    Bt = rng.standard_normal((64, 64)).astype(ml_dtypes.bfloat16)  # B (K, N) stored as (N, K)
    return A, Bt, A.astype(np.float64) @ Bt.astype(np.float64).T


def test_a_row_major_k_by_n_tensor_is_refused_for_a_k_major_b_plan():
    """The issue's case: B (K, N) row-major for a plan whose K axis is the contiguous one (it
    used to run and give a relative error of 1.49); the message names the rule, the axis, the
    strides and what to pass."""
    A, Bt, _ = operands()
    B = np.ascontiguousarray(Bt.T)  # (K, N), N contiguous
    with pytest.raises(TMAError, match=r"has shape \(64, 64\) and strides \(64, 1\) elements, "
                                       r"but the plan .* copies along axis 0: axis i0 of the "
                                       r"logical \(i0, i1\) view must be contiguous \(stride 1; "
                                       r"rule R5.* pass a view whose K axis is contiguous: "
                                       r"Bt.T") as info:
        tylo.prepare_tma(TB, B)
    assert info.value.argument == "array"


def test_bt_transposed_is_accepted_and_the_emulated_product_is_right():
    A, Bt, ref = operands()
    out = np.full((64, 64), np.nan, np.float32)
    product.emulate[1, 128](out, tylo.prepare_tma(TA, A), tylo.prepare_tma(TB, Bt.T), True, TX)
    assert np.linalg.norm(out - ref) / np.linalg.norm(ref) < 1e-2


def test_a_torch_cpu_transposed_view_runs_on_the_emulator():
    torch = pytest.importorskip("torch")
    A, Bt = torch.randn(64, 64).to(torch.bfloat16), torch.randn(64, 64).to(torch.bfloat16)
    out = np.full((64, 64), np.nan, np.float32)
    product.emulate[1, 128](out, tylo.prepare_tma(TA, A), tylo.prepare_tma(TB, Bt.T), True, TX)
    ref = (A.double() @ Bt.double().T).numpy()
    assert np.linalg.norm(out - ref) / np.linalg.norm(ref) < 1e-2


def test_a_b_plan_encodes_the_k_by_n_view_in_driver_order():
    Bt = np.zeros((300, 64), ml_dtypes.bfloat16)  # (N, K) storage
    b = tylo.prepare_tma(K_MAJOR_B, Bt.T, bounds=(64, 290))
    assert b.bounds == (64, 290)
    assert b.encoding.global_dims == (64, 290) and b.encoding.array_dims == (64, 300)
    assert b.encoding.global_strides == (128,)


def test_a_batch_of_b_matrices_is_the_batch_first_k_by_n_view():
    """3-D: (batch, K, N) with K contiguous binds (Bt.swapaxes(1, 2)); the row-major (batch,
    K, N) is refused, naming array axis 1."""
    Bt = np.zeros((3, 256, 64), ml_dtypes.bfloat16)  # (batch, N, K)
    b = tylo.prepare_tma(K_MAJOR_B, Bt.swapaxes(1, 2), bounds=(64, 250, 2))
    assert b.encoding.global_dims == (64, 250, 2) and b.encoding.array_dims == (64, 256, 3)
    assert b.encoding.global_strides == (128, 256 * 128) and b.encoding.box_dims == (64, 128, 1)
    with pytest.raises(TMAError, match=r"axis i0 \(array axis 1\) of the logical \(batch, i0, "
                                       r"i1\) view must be contiguous.*Bt.swapaxes\(1, 2\)"):
        tylo.prepare_tma(K_MAJOR_B, np.zeros((3, 64, 256), ml_dtypes.bfloat16))


def test_a_permuted_view_of_heads_for_a_k_major_plan():
    """The permuted views R5 takes, in the logical convention: (H, K, N) seen in an (N, H, K)
    array (K contiguous, head stride K, N stride H K) encodes; a view whose K rows overlap is
    refused naming the logical axis."""
    H, N, K = 4, 256, 64
    x = np.zeros((N, H, K), ml_dtypes.bfloat16).transpose(1, 2, 0)
    b = tylo.prepare_tma(K_MAJOR_B, x)
    assert b.encoding.global_dims == (K, N, H)
    assert b.encoding.global_strides == (H * K * 2, K * 2)
    overlapping = np.lib.stride_tricks.as_strided(np.zeros(20000, ml_dtypes.bfloat16),
                                                  (2, 64, 256), (32 * 2, 2, 64 * 2))
    with pytest.raises(TMAError, match=r"global stride 64 B \(axis 0\) is smaller.*rule R5"):
        tylo.prepare_tma(K_MAJOR_B, overlapping)


def test_an_axis_1_plan_takes_a_row_major_array_as_before():
    a = np.zeros((256, 64), ml_dtypes.bfloat16)
    assert tylo.prepare_tma(TA, a).encoding.global_dims == (64, 256)
    with pytest.raises(TMAError, match=r"axis i1 of the logical \(i0, i1\) view must be "
                                       r"contiguous.*x.contiguous\(\)"):
        tylo.prepare_tma(TA, np.zeros((64, 256), ml_dtypes.bfloat16).T)


def test_the_descriptor_cache_tells_a_view_from_its_transpose(monkeypatch):
    """The encoded-descriptor cache is keyed by shape and strides too: after Bt.T is bound,
    the row-major (K, N) tensor at the same address is still refused, and Bt.T again is a hit."""
    calls = []
    monkeypatch.setattr(tma_module, "_encode",
                        lambda e, argument, device: calls.append(e) or (object(), bytes(128)))
    ptr = BASE + 0x7_0000
    k_major = FakeTensor((64, 256), (1, 64), "bfloat16", ptr=ptr)  # Bt.T of Bt (256, 64)
    first = tylo.prepare_tma(K_MAJOR_B, k_major)
    again = tylo.prepare_tma(K_MAJOR_B, FakeTensor((64, 256), (1, 64), "bfloat16", ptr=ptr))
    assert len(calls) == 1 and again.encoding == first.encoding
    with pytest.raises(TMAError, match="axis i0 of the logical"):
        tylo.prepare_tma(K_MAJOR_B, FakeTensor((64, 256), (256, 1), "bfloat16", ptr=ptr))
    assert len(calls) == 1


def test_a_detached_binding_keeps_the_descriptor_and_not_the_array(monkeypatch):
    """`TMABinding.detached()`: the same descriptor, encoding and launch key, no array and no
    owner held; a host binding refuses to detach (the emulator reads its array)."""
    monkeypatch.setattr(tma_module, "_encode", lambda e, argument, device: (object(), bytes(128)))
    t = FakeTensor((64, 256), (1, 64), "bfloat16", ptr=BASE + 0x9_0000)
    bound = tylo.prepare_tma(K_MAJOR_B, t)
    free = bound.detached()
    assert free.array is None and free.device_array.owner is None
    assert (free.descriptor_bytes, free.encoding, free.launch_key, free.device) == \
        (bound.descriptor_bytes, bound.encoding, bound.launch_key, bound.device)
    assert bound.array is t  # (the original keeps its array)
    with pytest.raises(tylo.ArgumentError, match="host array"):
        tylo.prepare_tma(TA, np.zeros((256, 64), ml_dtypes.bfloat16)).detached()


@pytest.mark.gpu
def test_gpu_the_driver_encodes_bt_transposed_and_a_row_major_b_is_refused_first():
    torch = pytest.importorskip("torch")
    Bt = torch.randn(256, 64, device="cuda").to(torch.bfloat16)  # (N, K)
    b = tylo.prepare_tma(K_MAJOR_B, Bt.T)
    assert b.descriptor is not None and b.array is not Bt
    assert b.encoding.global_dims == (64, 256) and b.encoding.global_strides == (128,)
    with pytest.raises(TMAError, match="axis i0 of the logical"):
        tylo.prepare_tma(K_MAJOR_B, Bt.T.contiguous())


@pytest.mark.gpu
def test_gpu_a_torch_tensor_bound_again_is_a_hit_by_its_own_attributes(monkeypatch):
    """A torch CUDA tensor bound again hits the torch-keyed cache (no encode, no rule
    check); a view of other strides at the same address misses and is checked."""
    torch = pytest.importorskip("torch")
    Bt = torch.randn(256, 64, device="cuda").to(torch.bfloat16)
    first = tylo.prepare_tma(K_MAJOR_B, Bt.T)
    calls = []
    monkeypatch.setattr(tma_module, "_encode",
                        lambda *a: calls.append(a) or pytest.fail("encoded again"))
    again = tylo.prepare_tma(K_MAJOR_B, Bt.T)
    assert not calls and again.descriptor_bytes == first.descriptor_bytes
    assert again.array is not None and again.device == first.device
    with pytest.raises(TMAError, match="axis i0 of the logical"):
        tylo.prepare_tma(K_MAJOR_B, Bt.view(64, 256))
