"""`MBarriers` and `BulkCopies` on their own (no kernel): transaction bytes completing a phase
(the ``complete_tx`` interface async copies use), bytes an async copy wrote readable only by a
thread that observed the phase (directly, or through a bar.sync), and the proxy fence."""

import numpy as np
import pytest

from tylo.compiler.support.errors import EmulationError
from tylo.emulator.bulk_copies import BulkCopies
from tylo.emulator.mbarriers import MBarriers


class FakeMachine:
    def error(self, op, message, threads, kind="fault"):
        raise EmulationError(message, threads=tuple(int(t) for t in threads), kind=kind)

    def _place(self, name, offset):
        return f"{name} byte {offset}"


def _barriers(n=4, shared=256):
    mb = MBarriers(FakeMachine())
    mb.begin_cta(n, 0, shared)
    return mb


def test_complete_tx_completes_the_phase_after_the_arrival():
    mb = _barriers()
    mb.init(None, [0], [1], [0])
    mb.arrive(None, [0], [0], tx=[4096])
    assert mb.try_wait(None, [0], [0], [1]).tolist() == [False]
    mb.complete_tx(None, 0, 4000, [0])
    assert mb.try_wait(None, [0], [0], [1]).tolist() == [False]
    mb.complete_tx(None, 0, 96, [0])
    assert mb.try_wait(None, [0], [0], [1]).tolist() == [True]
    assert mb.try_wait(None, [0], [1], [1]).tolist() == [False]  # phase 1 is current


def test_complete_tx_before_expect_tx_and_the_limits():
    mb = _barriers()
    mb.init(None, [8], [1], [0])
    mb.complete_tx(None, 8, 64, [0])          # tx-count -64: allowed
    mb.arrive(None, [8], [0], tx=[64])         # back to 0 with the arrival: complete
    assert mb.bars[8].phase == 1
    with pytest.raises(EmulationError, match="outside \\+-1048575"):
        mb.expect_tx(None, [8], [1 << 20], [0])
    with pytest.raises(EmulationError, match="not an 8-byte aligned"):
        mb.init(None, [12], [1], [0])


def test_async_write_is_seen_through_a_wait_or_a_bar_sync():
    mb = _barriers()
    mb.init(None, [0], [1], [0])
    mb.async_write(np.arange(64, 128), 0, "a TMA load")
    mb.arrive(None, [0], [0], tx=[0])                      # phase 0 completes
    with pytest.raises(EmulationError, match="without observing that phase") as e:
        mb.check_access(None, np.array([64]), 4, np.array([2]), write=False)
    assert e.value.kind == "race"
    assert mb.try_wait(None, [0], [0], [2]).tolist() == [True]
    mb.check_access(None, np.array([64]), 4, np.array([2]), write=False)   # thread 2 waited
    with pytest.raises(EmulationError):
        mb.check_access(None, np.array([100]), 4, np.array([3]), write=True)
    mb.barrier(slice(None))                                # thread 2 was at the bar.sync
    mb.check_access(None, np.array([100]), 4, np.array([3]), write=True)
    assert (mb.owner == -1).all()                          # seen by all: forgotten


def test_proxy_fence():
    bulk = BulkCopies(FakeMachine())
    bulk.begin_cta(64)
    bulk.generic_write(np.array([0, 16]), 4, np.array([5, 6]))
    with pytest.raises(EmulationError, match="thread 5 wrote it with a generic store"):
        bulk.check_async_read(None, np.arange(0, 32), "a TMA store")
    bulk.fence(np.array([5]))
    with pytest.raises(EmulationError, match="thread 6"):
        bulk.check_async_read(None, np.arange(0, 32), "a TMA store")
    bulk.fence(np.array([6]))
    bulk.check_async_read(None, np.arange(0, 32), "a TMA store")
