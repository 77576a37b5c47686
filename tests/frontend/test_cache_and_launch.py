"""The compile cache (a second launch with the same signature does not trace), launch-time
argument checks through a kernel (refused before anything compiles or runs), and the one-line
error of a launch on a machine without a GPU."""

from __future__ import annotations

import numpy as np
import pytest

import tylo
from tylo import Float32, knobs
from tylo.runtime import driver


class FakeDeviceArray:
    """Describes device memory through __cuda_array_interface__ (never dereferenced here)."""

    def __init__(self, shape, typestr="<f4", ptr=0x7F0000000000, strides=None):
        self.__cuda_array_interface__ = {
            "shape": tuple(shape), "typestr": typestr, "data": (ptr, False),
            "strides": strides, "version": 3,
        }


@tylo.kernel
def scale(out, x, alpha):
    i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
    if i < x.shape[0]:
        out[i] = x[i] * alpha


@tylo.kernel
def shift(out, x, amount: tylo.constexpr):
    i = tylo.thread_idx()
    out[i] = x[i] + amount


def test_compile_is_cached_per_signature(builds):
    scale.cache.clear()
    desc = tylo.Tensor(Float32, 1)
    first = scale.compile(desc, desc, 2.0, block=128)
    again = scale.compile(desc, desc, 3.0, block=128)  # another float: same signature
    assert again is first and builds == ["scale"]
    other_block = scale.compile(desc, desc, 2.0, block=64)
    assert other_block is not first and builds == ["scale", "scale"]
    unaligned = tylo.Tensor(Float32, 1, align=4)  # another specialization: another kernel
    assert scale.compile(unaligned, desc, 2.0, block=128) is not first
    assert builds == ["scale", "scale", "scale"]


def test_constexpr_values_are_part_of_the_key(builds):
    shift.cache.clear()
    desc = tylo.Tensor(Float32, 1)
    a = shift.compile(desc, desc, 1.0)
    b = shift.compile(desc, desc, 2.0)
    assert a is not b and len(builds) == 2
    assert "arith.constant 1.000000e+00" in a.asm["tylo"]
    assert "arith.constant 2.000000e+00" in b.asm["tylo"]
    assert shift.compile(desc, desc, 1.0) is a and len(builds) == 2


def test_compiled_kernel_holds_every_stage():
    c = scale.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1), 2.0, block=128)
    stages = list(c.asm)
    assert stages[0] == "tylo" and stages[-3:] == ["ptx", "cubin", "sass"]
    assert not c.asm.made("sass")  # nvdisasm runs on first access only
    assert "tylo-lower-fragments" in stages and "tylo-lower-to-ptx" in stages
    assert ".visible .entry scale(" in c.ptx and isinstance(c.cubin, bytes) and c.cubin
    assert c.report.registers > 0 and "registers" in str(c.report)
    assert c.ptx_path.read_text() == c.ptx


def test_dump_ir_writes_every_stage(tmp_path):
    knobs.compile.dump_ir = tmp_path
    shift.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1), 7.5)
    names = sorted(p.name for p in tmp_path.iterdir())
    from tylo.passes.pipeline import pipeline

    last = len(pipeline('sm_90a'))
    assert names[0] == "shift.00.tylo.mlir"
    assert names[-2] == f"shift.{last:02d}.tylo-lower-to-ptx.mlir"
    assert "ptx.entry" in (tmp_path / names[-2]).read_text()
    assert names[-1] == f"shift.{last + 1:02d}.ptx.ptx"  # the PTX, with its line info
    ptx = (tmp_path / names[-1]).read_text()
    assert ".entry shift" in ptx and ".loc\t1 " in ptx


def test_host_array_is_refused_before_compiling(builds):
    out = FakeDeviceArray((256,))
    with pytest.raises(tylo.ArgumentError, match="argument 'x': .*CPU"):
        scale[(2,), (128,)](out, np.zeros(256, np.float32), 2.0)
    assert builds == []


def test_wrong_annotation_dtype_is_refused(builds):
    @tylo.kernel
    def typed(out: tylo.Tensor(Float32, 1)):
        out[0] = 1.0

    with pytest.raises(tylo.ArgumentError, match="argument 'out'"):
        typed[(1,), (32,)](FakeDeviceArray((4,), typestr="<i4"))
    assert builds == []


@pytest.mark.skipif(driver.probe() is None, reason="this machine has a GPU")
def test_launch_without_gpu_is_one_line_after_compiling_once(builds):
    scale.cache.clear()
    out, x = FakeDeviceArray((256,)), FakeDeviceArray((256,), ptr=0x7F0000010000)
    for _ in range(2):
        with pytest.raises(tylo.DeviceError) as info:
            scale[(2,), (128,)](out, x, 2.0)
        assert "\n" not in str(info.value)
    assert builds == ["scale"]  # compiled once; the second launch hit the cache


@pytest.mark.skipif(driver.probe() is None, reason="launches fake pointers: only without a GPU")
def test_a_launch_reuses_the_kernel_compile_described():
    """compile() with a description builds the kernel a launch of such arrays then uses."""
    scale.cache.clear()
    compiled = scale.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1), 2.0, block=128)
    out, x = FakeDeviceArray((256,)), FakeDeviceArray((256,), ptr=0x7F0000010000)
    try:
        scale[(2,), (128,)](out, x, 2.0)
    except tylo.DeviceError:
        pass  # no GPU here; the kernel was looked up before the driver was needed
    assert list(scale.cache.values()) == [compiled]


@tylo.func
def clamp_add(x, y, limit):
    """A device helper with a runtime branch: rewritten and inlined like kernel code."""
    s = x + y
    if s > limit:
        s = limit
    return s


@tylo.kernel
def uses_helper(out, x, limit):
    i = tylo.thread_idx()
    out[i] = clamp_add(x[i], x[i], limit)


def test_helpers_are_inlined_and_part_of_the_key():
    c = uses_helper.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1), 1.0)
    ir = c.asm["tylo"]
    assert "scf.if" in ir and "func.call" not in ir
    assert uses_helper.dependencies().helpers == [clamp_add.source]
    with pytest.raises(tylo.CompileError, match="call it from a kernel"):
        clamp_add(1.0, 2.0, 3.0)


@tylo.kernel
def runtime_slot(out, x):
    f = tylo.zeros(tylo.MMAAtom((16, 8, 16), tylo.BFloat16).operand_layout("C"))
    out[0] = f[tylo.thread_idx()]


def test_fragment_slots_take_static_indices_only():
    with pytest.raises(tylo.UnsupportedError, match="no runtime register indexing"):
        runtime_slot.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1))


@pytest.mark.skipif(driver.probe() is None, reason="launches fake pointers: only without a GPU")
def test_launch_fast_path_keys_on_what_the_specialization_depends_on(builds):
    scale.cache.clear()
    scale.fast.clear()
    out, x = FakeDeviceArray((256,)), FakeDeviceArray((256,), ptr=0x7F0000010000)
    strided = FakeDeviceArray((256,), ptr=0x7F0000020000, strides=(8,))
    for args in [(out, x, 2.0), (out, x, 3.0), (out, strided, 2.0), (out, x, 2.0)]:
        with pytest.raises(tylo.DeviceError):
            scale[(2,), (128,)](*args)
    assert builds == ["scale", "scale"]  # contiguous and strided x: two specializations
    with pytest.raises(tylo.ArgumentError, match="argument 'x'"):
        scale[(2,), (128,)](out, np.zeros(256, np.float32), 2.0)  # still checked
