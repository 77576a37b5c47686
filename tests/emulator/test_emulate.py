"""``kernel.emulate[grid, block](...)``: kernels run on the CPU emulator and match numpy; what the
hardware would fault on is an `EmulationError` naming the instruction and the threads."""

from __future__ import annotations

import io

import numpy as np
import pytest

import tylo
from tylo import Float32, Int32, knobs
from tylo.compiler.support.errors import ArgumentError, EmulationError


@tylo.kernel
def add(out, x, y, n):
    i = tylo.block_idx(0) * 128 + tylo.thread_idx()
    if i < n:
        out[i] = x[i] + y[i]


def test_vector_add_matches_numpy_with_a_partial_last_block():
    rng = np.random.default_rng(1)
    n = 300
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    add.emulate[3, 128](out, x, y, n)
    np.testing.assert_array_equal(out, x + y)


@tylo.kernel
def reverse(out, x):
    t = tylo.thread_idx()
    s = tylo.SharedTile(tylo.shared_alloc(Float32, 256), tylo.Layout((256,), (1,)))
    s[t] = x[t]
    tylo.barrier()
    out[t] = s[255 - t]


@tylo.kernel
def reverse_racy(out, x):
    t = tylo.thread_idx()
    s = tylo.SharedTile(tylo.shared_alloc(Float32, 256), tylo.Layout((256,), (1,)))
    s[t] = x[t]
    out[t] = s[255 - t]  # no barrier: thread t reads what thread 255 - t wrote


def test_shared_memory_and_a_barrier():
    x = np.random.default_rng(2).standard_normal(256).astype(np.float32)
    out = np.zeros(256, np.float32)
    reverse.emulate[1, 256](out, x)
    np.testing.assert_array_equal(out, x[::-1])


def test_a_missing_barrier_is_reported_as_a_race_and_nothing_is_written():
    x = np.arange(256, dtype=np.float32)
    out = np.full(256, -1.0, np.float32)
    with pytest.raises(EmulationError) as e:
        reverse_racy.emulate[1, 256](out, x)
    msg = e.value.message
    assert "data race on shared" in msg and "read after write" in msg and "ld.shared.f32" in msg
    assert e.value.kind == "race" and len(e.value.threads) == 1
    assert (out == -1.0).all()


@tylo.kernel
def write_past(out):
    out[tylo.thread_idx() + 1] = 1.0


def test_an_out_of_bounds_store_names_the_argument_thread_and_address():
    out = np.zeros(32, np.float32)
    with pytest.raises(EmulationError) as e:
        write_past.emulate[1, 32](out)
    msg = e.value.message
    assert "at byte 128 (element 32) is past the end of argument 'out' (32 elements of 4 bytes" in msg and "thread 31" in msg
    assert "st.global.f32" in msg


@tylo.kernel
def divergent_barrier(out):
    t = tylo.thread_idx()
    if t < 16:
        tylo.barrier()
    out[t] = 1.0


def test_a_barrier_some_threads_never_reach_is_an_error_not_a_hang():
    with pytest.raises(EmulationError) as e:
        divergent_barrier.emulate[1, 32](np.zeros(32, np.float32))
    msg = e.value.message
    assert "barrier never completes" in msg and "threads 0-15 wait at 'bar.sync 0;'" in msg
    assert "threads 16-31 exited" in msg


@tylo.kernel
def checked_window(out, origin):
    w = tylo.window(out, (origin,), (32,))
    w[tylo.thread_idx()] = 2.0


def test_a_failed_window_check_traps():
    out = np.zeros(64, np.float32)
    checked_window.emulate[1, 32](out, 32)
    assert (out[32:] == 2.0).all() and (out[:32] == 0).all()
    with pytest.raises(EmulationError, match="trap: the kernel aborts: the check 'window axis 0 in bounds' failed") as e:
        checked_window.emulate[1, 32](out, 40)
    assert e.value.kind == "trap" and len(e.value.threads) == 32


@tylo.kernel
def show(x):
    t = tylo.thread_idx()
    tylo.print("thread {} has {}", t, x[t])


def test_print_writes_one_line_per_thread(capsys):
    show.emulate[1, 4](np.arange(4, dtype=np.float32) / 2)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4 and lines[1].startswith("thread 1 has 0.5")
    out = io.StringIO()
    emulated = show.emulate[1, 4]
    emulated.stdout = out
    emulated(np.arange(4, dtype=np.float32) / 2)
    lines = out.getvalue().splitlines()
    assert len(lines) == 4 and lines[1].startswith("thread 1 has 0.5")


def test_host_arrays_only():
    with pytest.raises(ArgumentError, match="tylo.Tensor description"):
        add.emulate[1, 128](tylo.Tensor(Float32, 1), np.zeros(4, np.float32),
                            np.zeros(4, np.float32), 4)


def test_torch_cpu_tensors_are_written_in_place():
    torch = pytest.importorskip("torch")
    x = torch.randn(256)
    out = torch.zeros(256)
    reverse.emulate[1, 256](out, x)
    assert torch.equal(out, x.flip(0))


def test_tylo_emulate_sends_launches_to_the_emulator():
    knobs.runtime.emulate = True

    @tylo.kernel
    def twice(out, x):
        t = tylo.thread_idx()
        out[t] = x[t] * 2

    x = np.arange(32, dtype=np.int32)
    out = np.zeros(32, np.int32)
    twice[1, 32](out, x)
    np.testing.assert_array_equal(out, 2 * x)
    assert Int32  # (the kernel's arrays are Int32)


@tylo.kernel
def shift(out, x):
    t = tylo.thread_idx()
    out[t] = x[t] * 2


def test_one_array_passed_twice_is_one_memory():
    a = np.arange(8, dtype=np.float32)
    shift.emulate[1, 8](a, a)  # in place
    np.testing.assert_array_equal(a, 2 * np.arange(8))
    b = np.arange(33, dtype=np.float32)
    with pytest.raises(EmulationError) as e:  # thread t reads b[t] and writes b[t + 1]: a race
        shift.emulate[1, 32](b[1:], b[:32])
    assert "data race on arguments 'x', 'out' (one memory) byte 4" in e.value.message
    assert "write after read" in e.value.message


@tylo.kernel
def read_before(out, x):
    t = tylo.thread_idx()
    out[t] = x[t - 1]


def test_a_load_before_the_start_names_that_array():
    with pytest.raises(EmulationError) as e:
        read_before.emulate[1, 32](np.zeros(32, np.float32), np.zeros(32, np.float32))
    assert "a 4-byte access 4 bytes before the start of argument 'x'" in e.value.message


def test_emulate_wants_brackets_and_takes_a_stream_and_prepare():
    from tylo.compiler.support.errors import LaunchError

    with pytest.raises(LaunchError, match=r"shift.emulate\[grid, block\]"):
        shift.emulate(np.zeros(8, np.float32), np.zeros(8, np.float32))
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    shift.emulate[1, 8, 0, None](out, x)  # a stream is accepted and ignored
    np.testing.assert_array_equal(out, 2 * x)
    run = shift.emulate[1, 8].prepare(out, x)
    x[:] = 5.0
    run()
    assert (out == 10.0).all()


def test_a_launch_with_host_arrays_says_how_to_emulate():
    with pytest.raises(ArgumentError, match=r"kernel.emulate\[grid, block\]"):
        shift[1, 8](np.zeros(8, np.float32), np.zeros(8, np.float32))


def test_an_autotuned_kernel_emulates_its_first_config():
    @tylo.autotune(configs=[tylo.Config(k=3), tylo.Config(k=5)], key=[])
    @tylo.kernel
    def add_k(out, x, k: tylo.constexpr):
        t = tylo.thread_idx()
        out[t] = x[t] + k

    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    add_k.emulate[1, 8](out, x)
    np.testing.assert_array_equal(out, x + 3)
    knobs.runtime.emulate = True
    out[:] = 0
    add_k[1, 8](out, x)
    np.testing.assert_array_equal(out, x + 3)


@tylo.kernel
def lanes_and_warps(out):
    i = tylo.linear_thread_idx()
    out[i, 0] = tylo.lane_id()
    out[i, 1] = tylo.warp_id()


def test_lanes_and_warps_of_a_3d_block_follow_the_linear_thread_index():
    out = np.full((64, 2), -1, np.int32)
    lanes_and_warps.emulate[1, (4, 4, 4)](out)
    np.testing.assert_array_equal(out[:, 0], np.arange(64) % 32)
    np.testing.assert_array_equal(out[:, 1], np.arange(64) // 32)
