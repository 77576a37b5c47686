"""tylo.prepare_tma: every driver rule checked before the driver, the tensor-map parameter's
signature, launch packing and emulator binding (no GPU), and the driver encoding (GPU)."""

import ctypes
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import tylo
from tylo.compiler.hardware import dtypes
from tylo.compiler.support.errors import ArgumentError
from tylo.compiler.params.kernel_params import TENSOR_MAP_PARAM
from tylo.compiler.plans.tma_rules import TMAError, encode_params, tensor_map_data_type
from tylo.compiler.params.signature import DeviceParam
from tylo.emulator.memory import PARAM_WINDOW
from tylo.runtime.arrays import DeviceArray
from tylo.runtime.packing import packer

sys.path.insert(0, str(Path(__file__).parent))
from tma_kernels import tensor_map_address  # noqa: E402

BF16 = dtypes.BFloat16
A_PLAN = tylo.TMATile(BF16, (128, 64), 1)  # A(M, K), K inner
B_PLAN = tylo.TMATile(BF16, (64, 128), 0)  # B(K, N), K inner


def enc(plan=A_PLAN, shape=(256, 512), strides=None, address=0, bounds=None, dtype=BF16):
    strides = strides or tuple(int(np.prod(shape[i + 1:])) for i in range(len(shape)))
    return encode_params(plan, "a", dtype, address, shape, strides, bounds)


def test_a_row_major_matrix_in_driver_order():
    e = enc()
    assert e.global_dims == (512, 256) and e.global_strides == (1024,)
    assert e.box_dims == (64, 128) and e.swizzle == 3 and e.data_type == ("BFLOAT16", 9)


def test_a_b_plan_takes_the_k_by_n_view_and_bounds_in_logical_order():
    e = enc(B_PLAN, shape=(64, 300), strides=(1, 64), bounds=(64, 290))  # Bt.T of Bt (300, 64)
    assert e.global_dims == (64, 290) and e.array_dims == (64, 300)


def test_a_batch_of_matrices_adds_a_third_dimension():
    e = enc(shape=(4, 256, 512), bounds=(200, 512, 3))
    assert e.global_dims == (512, 200, 3) and e.global_strides == (1024, 256 * 1024)
    assert e.box_dims == (64, 128, 1)


def test_r5_the_1022_byte_stride_message():
    with pytest.raises(TMAError, match=r"global stride 1022 B .* is not a multiple of 16 \(rule "
                                       r"R5: cuTensorMapEncodeTiled needs 16-byte multiples\)"):
        enc(shape=(128, 511))


@pytest.mark.parametrize("kwargs, match", [
    (dict(address=8), r"address 0x8 is not 16-byte aligned \(rule R3"),
    (dict(shape=(512,)), r"1 dimensions.*rule R2"),
    (dict(shape=(2, 2, 128, 64)), r"4 dimensions.*rule R2"),
    (dict(strides=(1024, 2)), r"strides \(1024, 2\).*axis i1 of the logical.*rule R5"),
    (dict(bounds=(0, 512)), r"bounds\[0\] = 0 is outside 1 .. 2\^32 \(rule R4"),
    (dict(bounds=(300, 512)), r"bounds\[0\] = 300 exceeds the array's extent 256"),
    (dict(bounds=(256,)), r"bounds \(256,\) must be 2 ints"),
    (dict(strides=(256, 1)), r"global stride 512 B .* smaller than the 1024 B .*rule R5"),
    (dict(shape=(2, 4), strides=(2**40 // 2, 1)), r"not below 2\^40 \(rule R5\)"),
    (dict(dtype=dtypes.Float16), r"has dtype Float16, but the plan"),
])
def test_each_driver_rule_is_refused_before_the_driver(kwargs, match):
    with pytest.raises(TMAError, match=match) as info:
        enc(**kwargs)
    assert isinstance(info.value, ArgumentError) and info.value.argument == "a"


def test_r13_data_types():
    assert tensor_map_data_type(dtypes.Float16) == ("FLOAT16", 6)
    assert tensor_map_data_type(dtypes.Float32) == ("FLOAT32", 7)
    assert tensor_map_data_type(dtypes.as_dtype("uint8", "x")) == ("UINT8", 0)
    assert tensor_map_data_type(dtypes.as_dtype(ml_dtypes.float8_e4m3fn, "x")) == ("UINT8", 0)
    assert tensor_map_data_type(dtypes.as_dtype("int16", "x")) == ("UINT16", 1)
    assert tensor_map_data_type(dtypes.ALL["TFloat32"]) == ("TFLOAT32", 11)


def test_r6_r9_a_box_rule_names_the_rule():
    # a 3-D map's box: checked again with the batch extent (valid plans only pass)
    from tylo.compiler.plans.tma_tile import validate_tma_box
    from tylo.compiler.support.errors import GeometryError

    with pytest.raises(GeometryError, match="R9"):
        validate_tma_box((128, 8), 2, 128)
    with pytest.raises(GeometryError, match="R6"):
        validate_tma_box((64, 512), 2, 128)


def test_prepare_tma_on_a_host_array_has_no_descriptor_and_a_readable_repr():
    b = tylo.prepare_tma(A_PLAN, np.zeros((200, 64), ml_dtypes.bfloat16), bounds=(190, 64))
    assert b.descriptor is None and b.rank == 2 and b.bounds == (190, 64)
    assert "dims [64, 190], strides [128] B, box [64, 128], swizzle 128 B" in repr(b)
    with pytest.raises(ArgumentError, match="argument 'tm': is a tensor map of a host array"):
        b.param_bytes("tm")
    with pytest.raises(TMAError, match="1022 B"):
        tylo.prepare_tma(A_PLAN, np.zeros((128, 511), ml_dtypes.bfloat16))
    with pytest.raises(TMAError, match="not a TMATile"):
        tylo.prepare_tma("plan", np.zeros((128, 64), ml_dtypes.bfloat16))


def test_two_bindings_of_one_shape_share_one_compile_another_plan_recompiles():
    out = np.zeros(2, np.int64)
    b1 = tylo.prepare_tma(A_PLAN, np.zeros((256, 64), ml_dtypes.bfloat16))
    b2 = tylo.prepare_tma(A_PLAN, np.zeros((512, 128), ml_dtypes.bfloat16), bounds=(500, 100))
    c1, c2 = tensor_map_address.compile(b1, out), tensor_map_address.compile(b2, out)
    assert c1 is c2
    other = tylo.prepare_tma(tylo.TMATile(BF16, (64, 64), 1),
                             np.zeros((256, 64), ml_dtypes.bfloat16))
    assert tensor_map_address.compile(other, out) is not c1
    batch = tylo.prepare_tma(A_PLAN, np.zeros((2, 256, 64), ml_dtypes.bfloat16))
    assert tensor_map_address.compile(batch, out) is not c1
    ptx = c1.asm["ptx"]
    assert ".param .align 64 .b8 tensor_map_address_param_0[128]" in ptx
    assert "mov.b64 %rd1, tensor_map_address_param_0;" in ptx
    assert "cvta.param.u64 %rd2, %rd1;" in ptx


def test_launch_packing_places_the_descriptor_at_a_64_byte_offset():
    params = (DeviceParam("x", "ptr", "u64"), DeviceParam("tm", "tensor_map", TENSOR_MAP_PARAM),
              DeviceParam("n", "value", "s32"))
    descriptor = bytes(range(128))
    x = DeviceArray(0x1234, BF16, (4,), (1,))
    packed = packer(params).pack({"x": x, "tm": descriptor, "n": 7})
    pointers = struct_unpack(packed.address, 3)
    assert packed.address % 64 == 0
    assert pointers[1] % 64 == 0 and ctypes.string_at(pointers[1], 128) == descriptor
    assert int.from_bytes(ctypes.string_at(pointers[0], 8), "little") == 0x1234
    assert int.from_bytes(ctypes.string_at(pointers[2], 4), "little") == 7
    area = packed.value_area()
    assert area[64:192] == descriptor and len(area) == 200


def test_a_host_binding_is_refused_at_a_gpu_launch_naming_the_argument():
    params = (DeviceParam("tm", "tensor_map", TENSOR_MAP_PARAM),)
    b = tylo.prepare_tma(A_PLAN, np.zeros((128, 64), ml_dtypes.bfloat16))
    with pytest.raises(ArgumentError, match="argument 'tm': is a tensor map of a host array"):
        packer(params).pack({"tm": b})


def test_an_argument_of_another_plan_is_refused_naming_it():
    from tylo.compiler.params.signature import TensorMapSpec
    from tylo.runtime.arguments import check

    b = tylo.prepare_tma(B_PLAN, np.zeros((128, 64), ml_dtypes.bfloat16).T)
    with pytest.raises(ArgumentError, match="argument 'tm': is a tensor map of TMATile"):
        check("tm", b, TensorMapSpec(A_PLAN, 2))
    with pytest.raises(ArgumentError, match="argument 'tm': expects a tylo.prepare_tma"):
        check("tm", np.zeros(3), TensorMapSpec(A_PLAN, 2))


def test_the_emulator_binds_the_array_and_the_tensor_map_info(monkeypatch):
    seen = {}
    import tylo.emulator.scheduler as scheduler

    real = scheduler.Machine

    def spy(*args, **kwargs):
        m = real(*args, **kwargs)
        seen["machine"] = m
        return m

    monkeypatch.setattr(scheduler, "Machine", spy)
    a = np.zeros((2, 256, 64), ml_dtypes.bfloat16)
    b = tylo.prepare_tma(A_PLAN, a, bounds=(250, 64, 2))
    out = np.zeros(2, np.int64)
    tensor_map_address.emulate[1, 32](b, out)
    m = seen["machine"]
    (offset, info), = m.tensor_maps.items()
    assert offset % 64 == 0 and out[0] == PARAM_WINDOW + offset
    assert info.argument == "tm" and info.dtype == BF16
    assert info.global_dims == (64, 256, 2) and info.bounds == (64, 250, 2)
    assert info.global_strides == (128, 256 * 128) and info.box_dims == (64, 128, 1)
    assert info.swizzle_bytes == 128
    alloc, at = m.memory.allocation_of(info.global_address)
    assert alloc.name == "argument 'tm'" and at == 0 and alloc.data.size == a.nbytes


def struct_unpack(address, n):
    return [int.from_bytes(ctypes.string_at(address + 8 * i, 8), "little") for i in range(n)]


# -- GPU ---------------------------------------------------------------------------------------

TORCH_TYPES = ["bfloat16", "float16", "float32", "uint8"]


@pytest.mark.gpu
@pytest.mark.parametrize("row_bytes", [32, 64, 128])
@pytest.mark.parametrize("name", TORCH_TYPES)
@pytest.mark.parametrize("batch", [None, 3])
def test_gpu_the_driver_encodes_every_type_swizzle_and_rank(name, row_bytes, batch):
    torch = pytest.importorskip("torch")
    dtype = getattr(torch, name)
    e = torch.empty((), dtype=dtype).element_size()
    plan = tylo.TMATile(dtypes.as_dtype(dtype, "t"), (64, row_bytes // e), 1, row_bytes)
    shape = (200, 4 * (row_bytes // e))
    shape = shape if batch is None else (batch,) + shape
    x = torch.zeros(shape, dtype=dtype, device="cuda")
    bounds = (190, 3 * (row_bytes // e)) + (() if batch is None else (batch - 1,))
    b = tylo.prepare_tma(plan, x, bounds=bounds)
    assert b.descriptor is not None and len(b.descriptor_bytes) == 128
    assert b.array is x and b.rank == len(shape)


@pytest.mark.gpu
def test_gpu_the_parameter_reaches_the_kernel_64_byte_aligned_and_unchanged():
    torch = pytest.importorskip("torch")
    x = torch.randn(256, 64, device="cuda").to(torch.bfloat16)
    b = tylo.prepare_tma(A_PLAN, x)
    before = bytes(b.descriptor_bytes)
    out = torch.full((2,), -1, dtype=torch.int64, device="cuda")
    tensor_map_address[1, 32](b, out)
    torch.cuda.synchronize()
    address = int(out[0].item())
    assert address != -1 and address % 64 == 0
    assert b.descriptor_bytes == before
    assert ctypes.string_at(int(b.descriptor.getPtr()), 128) == before


def test_a_host_view_off_a_16_byte_boundary_is_refused():
    """R3 holds for host arrays too: the device copy of this view would be misaligned."""
    import ml_dtypes

    from tylo import BFloat16, TMATile, TyloError, prepare_tma

    view = np.ones((128, 200), ml_dtypes.bfloat16)[:, 1:65]
    with pytest.raises(TyloError, match="rule R3"):
        prepare_tma(TMATile(BFloat16, (64, 64), 1), view)


@pytest.mark.parametrize("size,name,value", [(0, "NONE", 0), (64, "L2_64B", 1),
                                             (128, "L2_128B", 2), (256, "L2_256B", 3)])
def test_l2_promotion_is_encoded_by_its_size(size, name, value):
    plan = A_PLAN
    e = encode_params(plan, "a", BF16, 0, (256, 512), (512, 1), None, size)
    assert e.l2_promotion == (name, value) and f"l2Promotion={name}" in e.describe()


@pytest.mark.parametrize("size", [32, 512, -1, 1.5, "128"])
def test_l2_promotion_of_another_size_is_refused(size):
    with pytest.raises(TMAError, match="l2_promotion"):
        encode_params(A_PLAN, "a", BF16, 0, (256, 512), (512, 1), None, size)


def test_prepare_tma_takes_l2_promotion_on_a_host_array():
    a = np.zeros((256, 512), ml_dtypes.bfloat16)
    assert tylo.prepare_tma(A_PLAN, a, l2_promotion=128).encoding.l2_promotion[0] == "L2_128B"
    with pytest.raises(TMAError, match="l2_promotion"):
        tylo.prepare_tma(A_PLAN, a, l2_promotion=100)


def test_a_permuted_view_of_heads_is_a_valid_map():
    """(H, rows, D) seen in a (rows, H, D) array (FlashAttention's (B, S, H, D) with B S rows):
    the head stride (D elements) is below the row stride (H D); no two elements share an
    address, so the map is valid (the driver takes strides in any order); a view whose rows
    overlap is still refused."""
    H, rows, D = 8, 300, 64
    x = np.zeros((rows, H, D), ml_dtypes.bfloat16).transpose(1, 0, 2)
    binding = tylo.prepare_tma(tylo.TMATile(BF16, (64, 64), 1), x)
    assert binding.encoding.global_dims == (D, rows, H)
    assert binding.encoding.global_strides == (H * D * 2, D * 2)
    with pytest.raises(TMAError, match="rule R5"):
        enc(shape=(4, 256, 64), strides=(64, 128, 1))  # rows of 128 B 64 apart: overlap


@pytest.mark.gpu
def test_gpu_a_map_of_the_same_array_again_reuses_its_descriptor():
    """prepare_tma of an array already bound (same address, shape, strides, bounds) takes the
    encoded descriptor from the cache instead of the driver; another view is another map."""
    torch = pytest.importorskip("torch")
    from tylo.runtime import tma

    plan = tylo.TMATile(BF16, (64, 64), 1)
    x = torch.zeros(512, 256, device="cuda", dtype=torch.bfloat16)
    first = tylo.prepare_tma(plan, x)
    calls = []
    real = tma._encode
    tma._encode = lambda *a: calls.append(1) or real(*a)
    try:
        again = tylo.prepare_tma(plan, x)
        other = tylo.prepare_tma(plan, x[:, 64:])
    finally:
        tma._encode = real
    assert again.descriptor_bytes == first.descriptor_bytes and again.array is x
    assert other.descriptor_bytes != first.descriptor_bytes and calls == [1]


@pytest.mark.gpu
def test_gpu_a_map_is_encoded_on_a_thread_with_no_current_context():
    """autograd runs a backward on a thread of its own, where no CUDA context is current:
    prepare_tma makes the array's device's context current there (the driver refused the
    encode with CUDA_ERROR_INVALID_CONTEXT before)."""
    import threading

    torch = pytest.importorskip("torch")
    plan = tylo.TMATile(BF16, (64, 64), 1)
    x = torch.zeros(384, 128, device="cuda", dtype=torch.bfloat16)
    found = []
    thread = threading.Thread(target=lambda: found.append(tylo.prepare_tma(plan, x[64:])))
    thread.start()
    thread.join()
    assert found and len(found[0].descriptor_bytes) == 128
