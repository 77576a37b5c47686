"""Launches on a real GPU with torch tensors (skipped without a driver and GPU, or torch).

The kernels are the hand-written PTX files of ptx/, assembled for the GPU's arch.
"""

from __future__ import annotations

import pytest

from tylo.compiler.hardware.dtypes import Float16, Float32, Int32
from tylo.compiler.support.errors import ArgumentError, LaunchError
from tylo.compiler.params.signature import DeviceParam, ScalarSpec, Tensor, TensorSpec
from tylo.runtime import (
    as_device_array, assemble, check, common_device, launch, launch_stream, load_function,
    pack, prepare, target_arch,
)
from tylo.runtime.arrays import from_cuda_array_interface, from_dlpack_capsule

pytestmark = pytest.mark.gpu

VADD_PARAMS = [
    DeviceParam("x", "ptr", "u64"),
    DeviceParam("y", "ptr", "u64"),
    DeviceParam("out", "ptr", "u64"),
    *ScalarSpec(Float32).device_params("alpha"),
    *ScalarSpec(Int32).device_params("n"),
]


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


@pytest.fixture(scope="module")
def cubin(torch, load_ptx):
    torch.zeros(1, device="cuda")  # torch creates and makes current the primary context
    arch = target_arch()
    return lambda name, entry: assemble(load_ptx(name, arch), arch, entry).cubin


def _vadd(torch, cubin, x, y, out, alpha, annotations=None, specs=None):
    """Specialize (or check against `specs`), pack and launch vadd; returns the specs."""
    tensors = {"x": x, "y": y, "out": out}
    if specs is None:
        prepared = {k: prepare(k, t, annotations) for k, t in tensors.items()}
        specs = {k: spec for k, (spec, _) in prepared.items()}
        arrays = {k: a for k, (_, a) in prepared.items()}
    else:
        arrays = {k: check(k, t, specs[k]) for k, t in tensors.items()}
    n = x.shape[0]
    device = common_device(arrays.items())
    stream = launch_stream(arrays.values())
    packed = pack(VADD_PARAMS, {**arrays, "alpha": alpha, "n": n})
    launch(cubin("vadd", "vadd"), "vadd", (n + 255) // 256, 256, 0, stream, packed, device)
    return specs


def test_vector_add_matches_torch(torch, cubin):
    gen = torch.Generator(device="cuda").manual_seed(0)
    n = 10_000  # not a multiple of the block: the bounds check matters
    x = torch.randn(n, device="cuda", generator=gen)
    y = torch.randn(n, device="cuda", generator=gen)
    out = torch.full((n,), float("nan"), device="cuda")
    specs = _vadd(torch, cubin, x, y, out, 0.5, Tensor[Float32, 1])
    assert specs["x"] == TensorSpec(Float32, (None,), (1,), 16)
    torch.cuda.synchronize()
    assert not torch.isnan(out).any()
    torch.testing.assert_close(out, x + 0.5 * y)

    # a cache hit: new arguments checked against the compiled specs, then launched
    m = 777
    x2, y2 = torch.rand(m, device="cuda", generator=gen), torch.rand(m, device="cuda", generator=gen)
    out2 = torch.full((m,), float("nan"), device="cuda")
    _vadd(torch, cubin, x2, y2, out2, -2.0, specs=specs)
    torch.cuda.synchronize()
    torch.testing.assert_close(out2, x2 - 2.0 * y2)


def test_rules_refuse_before_launch(torch, cubin):
    x = torch.ones(64, device="cuda")
    specs = {k: TensorSpec(Float32, (None,), (1,), 16) for k in ("x", "y", "out")}
    with pytest.raises(ArgumentError, match=r"'y': is on the CPU \(device 'cpu'\)"):
        _vadd(torch, cubin, x, torch.ones(64), x, 1.0, specs=specs)
    with pytest.raises(ArgumentError, match=r"'x': axis 0 has stride 2 \(elements\)"):
        _vadd(torch, cubin, torch.ones(128, device="cuda")[::2], x, x, 1.0, specs=specs)
    with pytest.raises(ArgumentError, match=r"'out': pointer 0x[0-9a-f]+ is not aligned to 16"):
        _vadd(torch, cubin, x[:63], x[:63], x[1:], 1.0, specs=specs)


def test_dynamic_shared_memory_above_48_kib(torch, cubin):
    n = 20_000  # 80,000 bytes of dynamic shared memory: needs the opt-in
    out = torch.full((n,), float("nan"), device="cuda")
    a = as_device_array("out", out)
    params = [DeviceParam("out", "ptr", "u64"), DeviceParam("n", "value", "s32")]
    code = cubin("reverse_smem", "reverse_smem")
    launch(code, "reverse_smem", 1, 1024, n * 4, launch_stream([a]), pack(params, {"out": a, "n": n}),
           a.device)
    torch.cuda.synchronize()
    expected = torch.arange(n - 1, -1, -1, dtype=torch.float32, device="cuda")
    assert torch.equal(out, expected)
    function = load_function(code, "reverse_smem", a.device)
    assert function.dynamic_shared_set == n * 4
    too_much = function.optin_shared + 16
    with pytest.raises(LaunchError, match=rf"asks for {too_much} bytes of dynamic shared memory"):
        launch(code, "reverse_smem", 1, 1024, too_much, 0, pack(params, {"out": a, "n": n}),
               a.device)


def test_launch_uses_torch_current_stream(torch, cubin):
    flag = torch.zeros(1, dtype=torch.int32, device="cuda")
    a = as_device_array("flag", flag)
    params = [DeviceParam("flag", "ptr", "u64"), DeviceParam("ns", "value", "u64")]
    code = cubin("spin", "spin")
    load_function(code, "spin", a.device)  # load the module before timing anything
    side = torch.cuda.Stream()
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        stream = launch_stream([a])
        assert stream == side.cuda_stream != torch.cuda.default_stream().cuda_stream
        launch(code, "spin", 1, 1, 0, stream, pack(params, {"flag": a, "ns": 300_000_000}),
               a.device)
        assert not side.query()  # the 300 ms spin kernel is queued on the side stream
    side.synchronize()
    assert side.query()
    assert flag.item() == 1


def test_arch_and_array_interfaces_agree(torch):
    major, minor = torch.cuda.get_device_capability()
    assert target_arch().startswith(f"sm_{major}{minor}")
    t = torch.arange(12, dtype=torch.float16, device="cuda").reshape(3, 4)[:, 1:]
    via_torch = as_device_array("t", t)
    via_cai = from_cuda_array_interface("t", t.__cuda_array_interface__, t)
    capsule = t.__dlpack__()
    via_dlpack = from_dlpack_capsule("t", capsule)
    for a in (via_torch, via_cai, via_dlpack):
        assert (a.ptr, a.dtype, a.shape, a.strides) == (t.data_ptr(), Float16, (3, 3), (4, 1))
    assert via_dlpack.device == via_torch.device == t.device.index
