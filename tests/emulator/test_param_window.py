"""Generic loads and stores in the emulator's param window (`emulator.memory.PARAM_WINDOW`): a
load through the generic address of a kernel parameter (``mov.b64`` + ``cvta.param.u64``)
reads the launch's parameter bytes; a store, an overrun and a misaligned load are refused
naming the param window."""

from __future__ import annotations

import io

import numpy as np
import pytest

from tylo.compiler.support.errors import EmulationError
from tylo.emulator.machine import Machine
from tylo.emulator.memory import PARAM_WINDOW, Memory

PARAMS = bytes(range(64)) + bytes(range(100, 228))  # a slot area and a 128-byte descriptor


class Op:  # what an error report reads of an instruction
    name = "ptx.ld"
    attributes: dict = {}


def machine(threads=4):
    m = Machine(Memory(), (1, 1, 1), (threads, 1, 1), PARAMS, 0, io.StringIO(), "k")
    m.threads = np.arange(threads)
    m.cta_index = 0
    return m


def test_a_generic_load_reads_the_parameter_bytes():
    m = machine()
    addresses = np.uint64(PARAM_WINDOW) + np.array([64, 72, 184, 0], np.uint64)
    got = m.load(Op(), "generic", addresses, 8)
    assert [bytes(row) for row in got] == [PARAMS[64:72], PARAMS[72:80], PARAMS[184:192],
                                           PARAMS[0:8]]
    one = m.load(Op(), "generic", np.array([PARAM_WINDOW + 67] * 4, np.uint64), 1)
    assert one[:, 0].tolist() == [PARAMS[67]] * 4


def test_lanes_of_several_windows_in_one_load():
    m = machine(2)
    region = np.arange(16, dtype=np.uint8)
    base = m.memory.allocate("argument 'x'", region)
    got = m.load(Op(), "generic", np.array([base + 8, PARAM_WINDOW + 8], np.uint64), 8)
    assert bytes(got[0]) == bytes(range(8, 16)) and bytes(got[1]) == PARAMS[8:16]


@pytest.mark.parametrize("offset, size, message", [
    (len(PARAMS), 8, r"param window \(kernel parameters\) offset 192 \(\+8 bytes\) is "
                         r"outside the 192 bytes declared"),
    (4, 8, r"misaligned 8-byte param window \(kernel parameters\) access"),
])
def test_an_overrun_or_misaligned_load_names_the_param_window(offset, size, message):
    with pytest.raises(EmulationError, match=message):
        machine().load(Op(), "generic", np.full(4, PARAM_WINDOW + offset, np.uint64), size)


def test_a_store_to_the_param_window_is_refused():
    with pytest.raises(EmulationError, match=r"a 4-byte store to the param window \(kernel "
                                             r"parameters.*are read-only"):
        machine().store(Op(), "generic", np.full(4, PARAM_WINDOW + 64, np.uint64),
                        np.zeros((4, 4), np.uint8))
