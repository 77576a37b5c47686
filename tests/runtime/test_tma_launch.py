"""Launches with tensor-map arguments (tylo.prepare_tma bindings) on the recording FakeDriver:
the fast path keys a binding by its plan, rank, array kind and device, copies its 128
descriptor bytes into the 64-byte-aligned slot, and refuses what the full path refuses;
prepared launches swap descriptors the same way. The driver's encoding is replaced by a
pattern of the binding's address (the real one: tests/runtime/test_tma_host.py, GPU)."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import tylo
from tylo.compiler.hardware import dtypes
from tylo.compiler.support.errors import ArgumentError
from tylo.runtime import tma as tma_module
from tylo.runtime.dispatch import ArgKind, Dispatch, kind_of
from tylo.runtime.tma import TMABinding

from fakes import BASE, FakeCAI, FakeTensor

sys.path.insert(0, str(Path(__file__).parent))
from tma_kernels import tensor_map_address  # noqa: E402

BF16 = dtypes.BFloat16
A_PLAN = tylo.TMATile(BF16, (128, 64), 1)
OTHER_PLAN = tylo.TMATile(BF16, (64, 64), 1)


def descriptor_of(address: int) -> bytes:
    """The fake encoding's 128 bytes: the array's address, then a count."""
    return address.to_bytes(8, "little") + bytes(range(8, 128))


class FakeTensorMap:  # what cuda-python's CUtensorMap is to a binding: kept alive, not read
    pass


@pytest.fixture
def fake_encode(monkeypatch):
    """prepare_tma on device arrays without a driver: `descriptor_of` the address."""
    monkeypatch.setattr(tma_module, "_encode",
                        lambda e, argument, device: (FakeTensorMap(), descriptor_of(e.address)))


@pytest.fixture
def launch(count_binds, torch_streams, fake_encode):
    count_binds.current = 1000
    count_binds.devices = 2
    count_binds.kernels = {"tensor_map_address"}
    count_binds.param_sizes["tensor_map_address"] = (128, 8)  # tm, out's pointer
    tensor_map_address.cache.clear()
    tensor_map_address.fast.clear()
    tensor_map_address._launchers.clear()
    return count_binds


def matrix(rows=256, ptr=BASE, device=0):
    return FakeTensor((rows, 64), (64, 1), "bfloat16", ("cuda", device), ptr)


def out_tensor(ptr=BASE + 0x10_0000, device=0):
    return FakeTensor((2,), (1,), "int64", ("cuda", device), ptr)


def host_binding():
    return tylo.prepare_tma(A_PLAN, np.zeros((256, 64), ml_dtypes.bfloat16))


def check_params(launch, binding, out_ptr):
    tm, out = launch.params[-1]
    assert tm == binding.descriptor_bytes and len(tm) == 128
    assert launch.param_pointers[-1][0] % 64 == 0  # the descriptor's slot (PTX .align 64)
    assert struct.unpack("<Q", out)[0] == out_ptr


# -- dispatch decisions (no driver) ------------------------------------------------------------

def test_kind_of_a_binding_takes_the_fast_path_a_host_binding_does_not(fake_encode):
    spec_binding = tylo.prepare_tma(A_PLAN, matrix())
    from tylo.compiler.params.signature import TensorMapSpec

    spec = TensorMapSpec(A_PLAN, 2)
    assert kind_of(spec_binding, spec_binding, spec, None) == ArgKind(
        "tensor_map", TMABinding, array_kind="torch")
    assert kind_of(host_binding(), host_binding(), spec, None) is None
    f16 = tylo.TMATile(dtypes.Float16, (128, 64), 1)
    cai = tylo.prepare_tma(f16, FakeCAI((256, 64), "<f2", ptr=BASE))
    assert kind_of(cai, cai, TensorMapSpec(f16, 2), None).array_kind == "cai"


def test_the_dispatch_keys_a_binding_by_kind_device_plan_and_rank_never_its_address(
        fake_encode, torch_streams):
    d = Dispatch([ArgKind("tensor_map", TMABinding, array_kind="torch")], ["tm"])
    b1 = tylo.prepare_tma(A_PLAN, matrix())
    b2 = tylo.prepare_tma(A_PLAN, matrix(512, BASE + 0x4_0000))
    assert d.key_of((b1,)) == d.key_of((b2,))
    assert d.key_of((tylo.prepare_tma(OTHER_PLAN, matrix()),)) != d.key_of((b1,))
    assert d.key_of((tylo.prepare_tma(A_PLAN, matrix(device=1)),)) != d.key_of((b1,))
    batch = tylo.prepare_tma(A_PLAN, FakeTensor((2, 256, 64), (256 * 64, 64, 1), "bfloat16"))
    assert d.key_of((batch,)) != d.key_of((b1,))
    assert d.key_of((host_binding(),)) != d.key_of((b1,))
    assert "a0.descriptor_bytes" in d.source and "TORCH_STREAM(a0.device_array.device)" in d.source


# -- launches ------------------------------------------------------------------------------

def test_a_cached_tensor_map_launch_takes_the_fast_path(launch):
    out = out_tensor()
    b1 = tylo.prepare_tma(A_PLAN, matrix())
    tensor_map_address[1, 32](b1, out)
    check_params(launch, b1, out.data_ptr())
    assert launch.binds == ["tensor_map_address"]
    launch.calls.clear()
    b2 = tylo.prepare_tma(A_PLAN, matrix(512, BASE + 0x4_0000), bounds=(500, 64))
    tensor_map_address[1, 32](b2, out)
    assert launch.binds == ["tensor_map_address"]  # no binding, no spec: the fast path
    assert launch.names() == ["cuCtxGetCurrent", "cuLaunchKernel"]
    check_params(launch, b2, out.data_ptr())
    assert launch.launches[-1][4] == 0x5000  # torch's current stream of device 0
    assert len(tensor_map_address.cache) == 1


def test_another_plan_or_rank_takes_the_full_path_and_compiles_again(launch):
    out = out_tensor()
    tensor_map_address[1, 32](tylo.prepare_tma(A_PLAN, matrix()), out)
    other = tylo.prepare_tma(OTHER_PLAN, matrix())
    tensor_map_address[1, 32](other, out)
    check_params(launch, other, out.data_ptr())
    assert launch.binds == ["tensor_map_address"] * 2 and len(tensor_map_address.cache) == 2
    tensor_map_address[1, 32](tylo.prepare_tma(OTHER_PLAN, matrix(ptr=BASE + 0x100)), out)
    assert launch.binds == ["tensor_map_address"] * 2


def test_a_host_binding_is_refused_naming_the_argument_even_after_a_hit(launch):
    out = out_tensor()
    tensor_map_address[1, 32](tylo.prepare_tma(A_PLAN, matrix()), out)
    count = len(launch.launches)
    with pytest.raises(ArgumentError, match="argument 'tm': is a tensor map of a host array"):
        tensor_map_address[1, 32](host_binding(), out)
    with pytest.raises(ArgumentError, match="argument 'tm': is a tensor map of a host array"):
        tensor_map_address[1, 32].prepare(host_binding(), out)
    assert len(launch.launches) == count


def test_a_binding_on_another_device_than_the_arrays_is_refused(launch):
    out = out_tensor()
    tensor_map_address[1, 32](tylo.prepare_tma(A_PLAN, matrix()), out)
    with pytest.raises(ArgumentError, match="argument 'out': is on CUDA device 0, but argument "
                                            "'tm' is on CUDA device 1"):
        tensor_map_address[1, 32](tylo.prepare_tma(A_PLAN, matrix(device=1)), out)


def test_a_prepared_launch_swaps_descriptors_and_refuses_other_plans(launch):
    out = out_tensor()
    b1 = tylo.prepare_tma(A_PLAN, matrix())
    run = tensor_map_address[1, 32].prepare(b1, out)
    assert launch.launches == []
    run()
    check_params(launch, b1, out.data_ptr())
    b2, out2 = tylo.prepare_tma(A_PLAN, matrix(ptr=BASE + 0x8_0000)), out_tensor(BASE + 0x200)
    run(b2, out2)
    check_params(launch, b2, out2.data_ptr())
    assert launch.launches[-1][4] == 0x5000
    with pytest.raises(ArgumentError, match=r"argument 'tm': is a tensor map of TMATile.* but "
                                            r"the compiled specialization is TMATile"):
        run(tylo.prepare_tma(OTHER_PLAN, matrix()), out)
    with pytest.raises(ArgumentError, match="argument 'tm': is a tensor map of a host array"):
        run(host_binding(), out)
    with pytest.raises(ArgumentError, match="argument 'tm': expects a tylo.prepare_tma binding"):
        run(matrix(), out)
    run()
    check_params(launch, b2, out2.data_ptr())


# -- GPU -----------------------------------------------------------------------------------

@pytest.mark.gpu
def test_gpu_fast_and_prepared_launches_with_bindings():
    torch = pytest.importorskip("torch")
    xs = [torch.randn(256 + 64 * i, 64, device="cuda").to(torch.bfloat16) for i in range(3)]
    bindings = [tylo.prepare_tma(A_PLAN, x) for x in xs]
    before = [bytes(b.descriptor_bytes) for b in bindings]
    tensor_map_address.fast.clear()
    addresses = []
    for b in bindings:  # the first takes the full path, the others the fast path
        out = torch.full((2,), -1, dtype=torch.int64, device="cuda")
        tensor_map_address[1, 32](b, out)
        torch.cuda.synchronize()
        addresses.append(int(out[0].item()))
    (fast,) = tensor_map_address.fast.values()
    (dispatch,) = fast.dispatches
    assert [k.role for k in dispatch.kinds] == ["tensor_map", "torch"]
    assert len(dispatch.entries) == 1  # three bindings of one shape: one entry
    out = torch.full((2,), -1, dtype=torch.int64, device="cuda")
    run = tensor_map_address[1, 32].prepare(bindings[0], out)
    run()
    run(bindings[1], out)
    torch.cuda.synchronize()
    addresses.append(int(out[0].item()))
    assert all(a != -1 and a % 64 == 0 for a in addresses), addresses
    assert [b.descriptor_bytes for b in bindings] == before
