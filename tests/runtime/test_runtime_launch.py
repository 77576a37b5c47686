"""The launch fast path, streams, contexts and prepared launches, on the recording FakeDriver.

Kernels are compiled for real (ptxas); the driver is the FakeDriver of conftest.py, which
records every call and reads the kernel parameters during cuLaunchKernel. Torch tensors are
duck-typed (`FakeTensor`, module "torch") and torch's current stream comes from a fake
``torch._C._cuda_getCurrentRawStream`` that records the devices it is asked for.
"""

from __future__ import annotations

import struct
import threading
import types

import pytest

import tylo
from tylo import Float32
from tylo.compiler.support.errors import ArgumentError, LaunchError
from tylo.runtime import driver as driver_module

from fakes import BASE, FakeCAI, FakeTensor


def tensor(n, ptr=BASE, dtype="float32", device=0, stride=1):
    """A 1-D fake torch tensor of `n` elements (device -1: on the CPU)."""
    return FakeTensor((n,), (stride,), dtype, ("cuda", device) if device >= 0 else ("cpu",), ptr)


def cai(n, ptr=BASE, stream=None):
    return FakeCAI((n,), ptr=ptr, stream=stream)


@tylo.kernel
def axpy(y, x, alpha):
    i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
    y[i] = y[i] + alpha * x[i]


@tylo.kernel
def typed(out: tylo.Tensor(Float32, 1, stride=(1,), align=16), n: tylo.Scalar[tylo.Int8]):
    out[tylo.thread_idx()] = n.to(Float32)


@tylo.kernel
def offset(out, x, k, amount: tylo.constexpr = 1.0):
    out[tylo.thread_idx()] = x[tylo.thread_idx()] + amount + k.to(Float32)


@tylo.kernel
def fill(out, layout):
    out[tylo.thread_idx()] = 2.0


@pytest.fixture
def launch(count_binds, torch_streams):
    """The fake driver with torch's primary context of device 0 current, fresh kernel caches,
    and a count of full-path bindings."""
    count_binds.current = 1000
    count_binds.devices = 2
    count_binds.kernels = {"axpy", "typed", "offset", "fill", "uses_stream"}
    for k in (axpy, typed, offset, fill):
        k.cache.clear()
        k.fast.clear()
        k._launchers.clear()
    return count_binds


def _slots(raw, fmt):
    return [struct.unpack_from("<" + code, slot)[0] for code, slot in zip(fmt, raw)]


def test_a_cached_launch_reads_each_argument_once_and_calls_the_driver_twice(launch):
    launch.param_counts["axpy"] = 5  # out, out.shape0, x, x.shape0, alpha
    out, x = tensor(300), tensor(300, BASE + 0x1000)
    axpy[(3,), 128](out, x, 2.0)
    assert launch.binds == ["axpy"]
    launch.calls.clear()
    x2 = tensor(300, BASE + 0x2000)
    axpy[(3,), 128](out, x2, -1.5)
    assert launch.binds == ["axpy"]  # the fast path: no binding, no spec
    assert launch.names() == ["cuCtxGetCurrent", "cuLaunchKernel"]
    name, grid, block, smem, stream, _, extra, ctx = launch.launches[-1]
    assert (name, grid, block, smem, stream, extra, ctx) == (
        "axpy", (3, 1, 1), (128, 1, 1), 0, 0x5000, 0, 1000)
    assert _slots(launch.params[-1], "QiQif") == [BASE, 300, BASE + 0x2000, 300, -1.5]


def test_a_new_extent_or_layout_takes_the_full_path_once(launch):
    launch.param_counts["axpy"] = 5
    out = tensor(300)
    axpy[(3,), 128](out, tensor(300, BASE + 0x1000), 2.0)
    axpy[(3,), 128](out, tensor(64, BASE + 0x1000), 2.0)  # another extent: same kernel
    assert _slots(launch.params[-1], "QiQif")[3] == 64
    assert launch.binds == ["axpy", "axpy"] and len(axpy.cache) == 1
    axpy[(3,), 128](out, tensor(64, BASE + 0x1000), 3.0)
    assert launch.binds == ["axpy", "axpy"]
    strided = tensor(64, BASE + 0x1000, stride=2)
    axpy[(3,), 128](out, strided, 2.0)  # runtime stride: another specialization
    assert launch.binds == ["axpy"] * 3 and len(axpy.cache) == 2
    unaligned = tensor(64, BASE + 0x1004)
    axpy[(3,), 128](out, unaligned, 2.0)  # 4-byte aligned: another specialization
    assert len(axpy.cache) == 3


@pytest.mark.parametrize("bad, rule", [
    (tensor(64, BASE + 4), r"pointer 0x7f0000000004 is not aligned to 16 bytes"),
    (tensor(64, stride=2), r"axis 0 has stride 2 \(elements\), but the annotation fixes it"),
    (tensor(64, dtype="int32"), r"has dtype Int32, but the annotation expects Float32"),
    (tensor(64, device=-1), r"is on the CPU"),
])
def test_every_rule_still_holds_after_a_hit(launch, bad, rule):
    typed[1, 32](tensor(64), 5)
    typed[1, 32](tensor(64, BASE + 0x100), 6)
    assert launch.binds == ["typed"]  # the second call hit
    with pytest.raises(ArgumentError, match="argument 'out': " + rule):
        typed[1, 32](bad, 5)
    assert len(launch.launches) == 2


def test_scalar_ranges_are_checked_on_the_fast_path(launch):
    typed[1, 32](tensor(64), 5)
    with pytest.raises(ArgumentError, match=r"argument 'n': int 200 is out of the range "
                                            r"\[-128, 127\] of Int8"):
        typed[1, 32](tensor(64), 200)
    with pytest.raises(ArgumentError, match="argument 'n': expects an int"):
        typed[1, 32](tensor(64), 5.0)
    launch.param_counts["offset"] = 5
    offset[1, 32](tensor(8), tensor(8), 2)  # an int: Int32
    offset[1, 32](tensor(8), tensor(8), 2**40)  # Int64: another specialization
    assert len(offset.cache) == 2
    assert _slots(launch.params[-1], "QiQiq")[4] == 2**40
    with pytest.raises(ArgumentError, match="does not fit in 64 bits"):
        offset[1, 32](tensor(8), tensor(8), 2**64)


def test_arrays_on_two_devices_name_the_argument(launch):
    with pytest.raises(ArgumentError, match=r"argument 'x': is on CUDA device 1, but argument "
                                            r"'y' is on CUDA device 0"):
        axpy[1, 32](tensor(8), tensor(8, device=1), 1.0)
    axpy[1, 32](tensor(8), tensor(8), 1.0)
    with pytest.raises(ArgumentError, match=r"argument 'x': is on CUDA device 1"):
        axpy[1, 32](tensor(8), tensor(8, device=1), 1.0)  # after a hit, too
    assert len(launch.launches) == 1


def test_a_launch_runs_on_the_device_of_its_arrays(launch, torch_streams):
    out, x = tensor(8, device=1), tensor(8, BASE + 0x100, device=1)
    axpy[1, 32](out, x, 1.0)  # device 0's context is current (torch.cuda.set_device(0))
    assert launch.launches[-1][-1] == 1001 and launch.launches[-1][4] == 0x5001
    assert launch.current == 1000  # pushed and popped
    launch.calls.clear()
    axpy[1, 32](out, x, 1.0)
    assert launch.names() == ["cuCtxGetCurrent", "cuCtxPushCurrent", "cuLaunchKernel",
                              "cuCtxPopCurrent"]
    launch.current = 1001  # torch.cuda.set_device(1): the function is made again, once
    axpy[1, 32](out, x, 1.0)
    launch.calls.clear()
    axpy[1, 32](out, x, 1.0)
    assert launch.names() == ["cuCtxGetCurrent", "cuLaunchKernel"]
    assert launch.launches[-1][-1] == 1001
    assert len(driver_module._state.modules) == 1  # loaded once, in device 1's context


def test_one_module_per_context(launch):
    """Arrays known by their pointer only run in the current context; torch tensors in their
    device's primary context, where torch allocated them, whatever context is current."""
    launch.context_devices[5000] = 0  # a context the user made on device 0
    raw = (cai(8), cai(8, BASE + 0x100), 1.0)
    axpy[1, 32](*raw)
    launch.current = 5000
    axpy[1, 32](*raw)
    axpy[1, 32](tensor(8), tensor(8, BASE + 0x100), 1.0)
    assert [entry[-1] for entry in launch.launches] == [1000, 5000, 1000]
    assert launch.current == 5000  # the primary context was pushed and popped
    assert sorted(ctx for ctx, _ in driver_module._state.modules) == [1000, 5000]


def test_streams(launch, torch_streams):
    out, x = tensor(8), tensor(8, BASE + 0x100)
    axpy[1, 32](out, x, 1.0)
    torch_streams.bump = 0x10  # under torch.cuda.stream(s), or graph capture
    axpy[1, 32](out, x, 1.0)
    assert [entry[4] for entry in launch.launches] == [0x5000, 0x5010]
    axpy[1, 32, 0, 0xABC](out, x, 1.0)  # an explicit stream
    axpy[1, 32, 0, types.SimpleNamespace(cuda_stream=0xDEF)](out, x, 1.0)
    assert [entry[4] for entry in launch.launches[2:]] == [0xABC, 0xDEF]
    launch.stream_contexts[0x999] = 1001
    with pytest.raises(LaunchError, match=r"the stream belongs to CUDA device 1, but the arrays "
                                          r"are on CUDA device 0"):
        axpy[1, 32, 0, 0x999](out, x, 1.0)
    axpy[1, 32](cai(8), cai(8, stream=0x77), 1.0)
    assert launch.launches[-1][4] == 0x77  # a __cuda_array_interface__ stream entry


def test_a_stream_parameter_name_does_not_collide(launch):
    @tylo.kernel
    def uses_stream(out, stream):
        out[tylo.thread_idx()] = stream

    uses_stream[1, 32, 0, 0x42](tensor(8), 3.0)
    assert launch.launches[-1][4] == 0x42


def test_keywords_and_defaults_take_the_fast_path(launch):
    launch.param_counts["offset"] = 5
    out, x = tensor(8), tensor(8, BASE + 0x100)
    offset[1, 32](out, x, 3)
    offset[1, 32](out, k=4, x=x)
    offset[1, 32](out, x, 5, 1.0)
    assert launch.binds == ["offset"]
    assert [_slots(p, "QiQii")[4] for p in launch.params] == [3, 4, 5]
    offset[1, 32](out, x, 5, amount=2.0)  # another constexpr: another kernel
    assert len(offset.cache) == 2


def test_static_objects_key_by_value(launch):
    """A layout (or plan) argument is a compile-time value: equal objects share a kernel and a
    fast-path entry, another value compiles another kernel."""
    out = tensor(32)
    fill[1, 32](out, tylo.Layout((4, 8), (8, 1)))
    fill[1, 32](out, tylo.Layout((4, 8), (8, 1)))  # equal, another object
    assert launch.binds == ["fill"]
    fill[1, 32](out, tylo.Layout((4, 8), (1, 4)))
    fill[1, 32](out, tylo.Layout((4, 8), (8, 1)))
    fill[1, 32](out, tylo.Layout((4, 8), (1, 4)))
    assert launch.binds == ["fill", "fill"] and len(fill.cache) == 2
    assert len(launch.launches) == 5


def test_arguments_the_fast_path_does_not_take_launch_from_the_full_path(launch):
    import numpy as np

    launch.param_counts["axpy"] = 5
    for value in (np.float32(2.5), np.float32(-1.0)):
        axpy[1, 32](tensor(8), tensor(8, BASE + 0x100), value)
    assert launch.binds == ["axpy", "axpy"]  # bound every time, compiled once
    assert [_slots(p, "QiQif")[4] for p in launch.params] == [2.5, -1.0]
    assert len(axpy.cache) == 1


def test_dynamic_shared_memory_opt_in_on_the_fast_path(launch):
    out, x = tensor(8), tensor(8, BASE + 0x100)
    for _ in range(3):
        axpy[1, 32, 64 * 1024](out, x, 1.0)
    assert [c[2] for c in launch.calls if c[0] == "cuFuncSetAttribute"] == [64 * 1024]
    with pytest.raises(LaunchError, match="asks for 300000 bytes of dynamic shared memory"):
        axpy[1, 32, 300_000](out, x, 1.0)


def test_threads_use_their_own_parameter_buffers(launch):
    out, x = tensor(8), tensor(8, BASE + 0x100)
    axpy[1, 32](out, x, 1.0)
    worker = threading.Thread(target=lambda: axpy[1, 32](out, x, 1.0))
    worker.start()
    worker.join()
    axpy[1, 32](out, x, 1.0)
    addresses = [entry[5] for entry in launch.launches]
    assert addresses[0] == addresses[2] != addresses[1]


def test_a_block_over_1024_threads_is_refused_before_tracing(launch):
    with pytest.raises(LaunchError, match=r"block \(32, 32, 2\) has 2048 threads; a CUDA thread "
                                          r"block has at most 1024 \(CUDA C\+\+ Programming Guide"):
        axpy[1, (32, 32, 2)]
    with pytest.raises(LaunchError, match=r"block \(64, 32, 1\) has 2048 threads"):
        axpy.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1), 1.0, block=(64, 32))
    assert launch.binds == [] and not axpy.cache


# --- prepared launches ------------------------------------------------------------------------


def test_prepared_launch(launch, torch_streams):
    launch.param_counts["axpy"] = 5
    out, x = tensor(64), tensor(64, BASE + 0x100)
    run = axpy[2, 32].prepare(out, x, 0.5)
    assert launch.launches == []  # prepare launches nothing
    launch.calls.clear()
    run()
    assert launch.names() == ["cuCtxGetCurrent", "cuLaunchKernel"]
    assert _slots(launch.params[-1], "QiQif") == [BASE, 64, BASE + 0x100, 64, 0.5]
    run(tensor(64, BASE + 0x200), tensor(64, BASE + 0x300), 4.0)  # swap pointers
    assert _slots(launch.params[-1], "QiQif") == [BASE + 0x200, 64, BASE + 0x300, 64, 4.0]
    run()  # the swapped arguments stay bound
    assert _slots(launch.params[-1], "QiQif") == [BASE + 0x200, 64, BASE + 0x300, 64, 4.0]
    torch_streams.bump = 0x20
    run()
    assert launch.launches[-1][4] == 0x5020  # torch's current stream, per call
    assert launch.binds == ["axpy"]


@pytest.mark.parametrize("args, message", [
    ((tensor(32), tensor(64), 1.0), r"argument 'y': differs from the argument the "
                                            r"launch was prepared with \(Float32, shape \(64,\)"),
    ((tensor(64, BASE + 8), tensor(64), 1.0), r"'y': pointer 0x7f0000000008 is not "
                                                      r"aligned to 16 bytes"),
    ((tensor(64), tensor(64, dtype="int32"), 1.0), r"'x': has dtype Int32"),
    ((tensor(64), tensor(64), 1), r"'alpha': differs from the argument"),
    ((tensor(64), tensor(64)), r"prepared with 3 arguments, called with 2"),
])
def test_prepared_launch_checks_what_it_swaps(launch, args, message):
    run = axpy[2, 32].prepare(tensor(64), tensor(64, BASE + 0x100), 0.5)
    with pytest.raises(ArgumentError, match=message):
        run(*args)
    assert launch.launches == []


def test_a_released_prepared_launch_holds_no_argument(launch):
    """release() drops the bound arrays (nothing keeps them alive); p() is then refused until
    p(*args) binds new ones, and a mismatch still names the prepared spec."""
    import gc
    import weakref

    launch.param_counts["axpy"] = 5
    axpy[2, 32](tensor(64, BASE + 0x400), tensor(64, BASE + 0x500), 1.0)  # (compiled: its
    out, x = tensor(64), tensor(64, BASE + 0x100)  # IR stages may trace those arrays again)
    run = axpy[2, 32].prepare(out, x, 0.5)
    alive = weakref.ref(x)
    run.release()
    del x
    gc.collect()
    assert alive() is None
    with pytest.raises(LaunchError, match="its arguments were released; launch it with new "
                                          r"arguments, p\(\*args\)"):
        run()
    assert len(launch.launches) == 1  # (the first, compiling launch)
    run(tensor(64, BASE + 0x200), tensor(64, BASE + 0x300), 4.0)
    assert _slots(launch.params[-1], "QiQif") == [BASE + 0x200, 64, BASE + 0x300, 64, 4.0]
    run()  # bound again
    assert len(launch.launches) == 3
    run.release()
    with pytest.raises(ArgumentError, match=r"argument 'y': differs from the argument the launch "
                                            r"was prepared with \(.*, released; now Float32, "
                                            r"shape \(32,\)"):
        run(tensor(32), tensor(64), 1.0)


def test_the_compiling_launch_s_arrays_are_not_kept(launch):
    """The launch that compiled a kernel hands the build its arrays; the `CompiledKernel` (kept
    by the kernel's cache for the process's life) must not hold them: its IR stages are traced
    again from the constexprs alone (an op's first call would otherwise keep its buffers)."""
    import gc
    import weakref

    axpy.cache.clear()
    out, x = tensor(64, BASE + 0x600), tensor(64, BASE + 0x700)
    alive = [weakref.ref(out), weakref.ref(x)]
    axpy[2, 32](out, x, 1.0)
    del out, x
    gc.collect()
    assert [r() for r in alive] == [None, None]


def test_prepared_launch_with_a_constexpr_and_another_context(launch):
    run = offset[1, 32].prepare(tensor(8, device=1), tensor(8, device=1), 2)
    run()
    assert launch.launches[-1][-1] == 1001 and launch.current == 1000  # pushed, popped
    with pytest.raises(ArgumentError, match="argument 'amount': is constexpr 3.0, but this "
                                            "kernel was compiled for 1.0"):
        run(tensor(8, device=1), tensor(8, device=1), 2, 3.0)


@tylo.kernel
def staged_dynamic(out):
    s = tylo.SharedTile(tylo.shared_alloc(Float32, 15 * 1024, align=1024, dynamic=True),
                        tylo.Layout((15 * 1024,), (1,)))
    s[tylo.thread_idx()] = 1.0
    tylo.barrier()
    out[tylo.thread_idx()] = s[31 - tylo.thread_idx()]


def test_the_launch_adds_the_kernel_s_dynamic_shared_memory_by_itself(launch):
    launch.kernels.add("staged_dynamic")
    staged_dynamic.cache.clear()
    staged_dynamic.fast.clear()
    own = 15 * 1024 * 4 + 1024 - 16  # the window and its alignment slack: above 48 KiB
    out = tensor(32)
    staged_dynamic[1, 32](out)  # full path
    staged_dynamic[1, 32](out)  # fast path
    staged_dynamic[1, 32, 512](out)  # 512 bytes more, on top
    prepared = staged_dynamic[1, 32].prepare(out)
    prepared()
    assert [entry[3] for entry in launch.launches] == [own, own, own + 512, own]
    assert [c[2] for c in launch.calls if c[0] == "cuFuncSetAttribute"] == [own, own + 512]
    (compiled,) = staged_dynamic.cache.values()
    assert compiled.dynamic_shared_bytes == own
