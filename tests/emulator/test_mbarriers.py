"""The emulator's mbarriers (emulator/mbarriers.py): phases and parities, the ISA's limits as
EmulationErrors, a deadlock named with its barrier, mbarrier ordering in the race record (the unordered read is
the catalogue's emulated-read-before-mbarrier-wait), and
the compile-time refusals of the frontend."""

import numpy as np
import pytest

import tylo
from tylo import Int32


@tylo.kernel
def phases(out):
    """One barrier of count 2 driven through phases by threads 0 and 1, with try_wait answers
    recorded: out[k] = try_wait(parity) results along the way (1 true, 0 false)."""
    t = tylo.thread_idx()
    bars = tylo.mbarriers(1)
    bar = bars[0]
    if t == 0:
        bar.init(2)
        tylo.fence_mbarrier_init()
    tylo.barrier()
    if t == 0:
        out[0] = tylo.select(bar.try_wait(0), 1, 0)   # phase 0 pending: false
        out[1] = tylo.select(bar.try_wait(1), 1, 0)   # the preceding phase: true
        bar.arrive_expect_tx(0)
        out[2] = tylo.select(bar.try_wait(0), 1, 0)   # one of two arrivals: false
    tylo.barrier()
    if t == 1:
        bar.expect_tx(16)
        bar.arrive()
        out[3] = tylo.select(bar.try_wait(0), 1, 0)   # 16 tx bytes outstanding: false
    tylo.barrier()


def test_try_wait_parity_and_tx_count():
    out = np.full(4, -1, np.int32)
    phases.emulate[1, 32](out)
    assert out.tolist() == [0, 1, 0, 0]


def test_ptx_of_the_barrier_ops():
    ptx = phases.compile(tylo.Tensor(Int32, 1), block=32).ptx
    for line in ("mbarrier.init.shared::cta.b64 [%r", "fence.mbarrier_init.release.cluster;",
                 "mbarrier.try_wait.parity.shared::cta.b64 %p",
                 "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r",
                 "mbarrier.expect_tx.shared::cta.b64 [%r", "mbarrier.arrive.shared::cta.b64 _, [%r"):
        assert line in ptx


@tylo.kernel
def over_arrive(out):
    bar = tylo.mbarriers(1)[0]
    if tylo.thread_idx() == 0:
        bar.init(1)
    tylo.barrier()
    if tylo.thread_idx() < 2:
        bar.expect_tx(8)
        bar.arrive()
    out[0] = 1


@tylo.kernel
def uninitialised(out):
    bar = tylo.mbarriers(2)[1]
    bar.arrive()
    out[0] = 1


@tylo.kernel
def never_released(out):
    bars = tylo.mbarriers(2)
    if tylo.thread_idx() == 0:
        bars[0].init(1)
        bars[1].init(1)
    tylo.barrier()
    bars[1].wait(0)
    out[0] = 1


@tylo.kernel
def ordered_read(out):
    t = tylo.thread_idx()
    bar = tylo.mbarriers(1)[0]
    s = tylo.SharedTile(tylo.shared_alloc(Int32, 4), tylo.Layout((4,), (1,)))
    if t == 0:
        bar.init(1)
    tylo.barrier()
    if t == 32:   # the consumer comes first in program order, and waits (parked, fairly)
        bar.wait(0)
        out[0] = s[0]
    if t == 0:
        s[0] = 5
        bar.arrive()


def _error(kernel, block=64):
    with pytest.raises(tylo.EmulationError) as e:
        kernel.emulate[1, block](np.zeros(1, np.int32))
    return e.value


def test_over_arrival():
    e = _error(over_arrive)
    assert e.kind == "mbarrier" and "over-arrival" in str(e) and e.threads == (1,)


def test_arrive_on_an_uninitialised_barrier():
    e = _error(uninitialised)
    assert e.kind == "mbarrier" and "never initialised" in str(e)


def test_deadlock_names_the_barrier_and_threads():
    e = _error(never_released)
    assert e.kind == "deadlock"
    assert "threads 0-63 wait on the mbarrier at shared array 'bars' (__tylo_smem_0) byte 8 " \
           "(phase 0, 1 of 1 arrivals pending, tx-count 0)" in str(e)


def test_wait_orders_the_read_and_a_spinning_consumer_does_not_starve_the_producer():
    out = np.zeros(1, np.int32)
    ordered_read.emulate[1, 64](out)
    assert out[0] == 5


@pytest.mark.parametrize("body, message", [
    ("tylo.mbarriers(1)[0].init(0)", "mbarrier count 0 must be 1 .. 1048575"),
    ("tylo.mbarriers(1)[0].init(1 << 20)", "mbarrier count 1048576 must be 1 .. 1048575"),
    ("tylo.mbarriers(1)[0].wait(2)", "mbarrier parity 2 must be 0 or 1"),
    ("tylo.mbarriers(2)[2].arrive()", "mbarrier index 2 is outside the 2 barriers"),
    ("tylo.Pipeline(0, 1)", "stages 0 must be a static int 1 .. 64"),
])
def test_static_refusals(tmp_path, body, message):
    src = tmp_path / "k.py"
    src.write_text(f"import tylo\n@tylo.kernel\ndef k(out):\n    {body}\n")
    ns = {}
    exec(compile(src.read_text(), str(src), "exec"), ns)
    with pytest.raises(tylo.TyloError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ns["k"].compile(tylo.Tensor(Int32, 1), block=32)
