"""The race record of emulated memory (`tylo.emulator.races`), access by access."""

import numpy as np

from tylo.emulator.races import RaceTracker

T = np.array  # thread ids


def offsets(*o):
    return np.array(o, np.int64)


def test_a_read_of_another_threads_write_in_the_same_epoch_is_a_race():
    r = RaceTracker(64)
    assert r.write(1, T([0]), offsets(0), 4, np.ones((1, 4), np.uint8)) is None
    race = r.read(1, T([5]), offsets(0), 4)
    assert race.kind == "read after write" and race.other == 0 and race.offset == 0


def test_a_barrier_between_write_and_read_orders_them():
    r = RaceTracker(64)
    r.write(1, T([0]), offsets(0), 4, np.ones((1, 4), np.uint8))
    assert r.read(2, T([5]), offsets(0), 4) is None


def test_a_thread_reads_its_own_write():
    r = RaceTracker(64)
    r.write(1, T([3]), offsets(8), 4, np.ones((1, 4), np.uint8))
    assert r.read(1, T([3]), offsets(8), 4) is None


def test_write_after_read_by_another_thread():
    r = RaceTracker(64)
    assert r.read(1, T([1, 2]), offsets(0, 4), 4) is None
    race = r.write(1, T([2]), offsets(0), 4, np.zeros((1, 4), np.uint8))
    assert race.kind == "write after read" and race.other == 1


def test_several_readers_of_one_byte_are_all_remembered():
    r = RaceTracker(16)
    assert r.read(1, T([1, 2]), offsets(0, 0), 4) is None  # both read bytes 0-3
    race = r.write(1, T([1]), offsets(0), 4, np.zeros((1, 4), np.uint8))
    assert race is not None and race.kind == "write after read"  # thread 2 read it too


def test_write_after_write_and_one_instruction_storing_two_values():
    r = RaceTracker(16)
    r.write(1, T([0]), offsets(0), 4, np.ones((1, 4), np.uint8))
    assert r.write(1, T([1]), offsets(0), 4, np.ones((1, 4), np.uint8)).kind == "write after write"
    r2 = RaceTracker(16)
    same = np.ones((2, 4), np.uint8)
    assert r2.write(1, T([0, 1]), offsets(4, 4), 4, same) is None  # equal values: benign
    other = np.array([[1] * 4, [2] * 4], np.uint8)
    race = RaceTracker(16).write(1, T([0, 1]), offsets(4, 4), 4, other)
    assert race.kind == "two lanes of one instruction store different values"


def test_a_race_names_the_other_access_site():
    r = RaceTracker(16)
    assert r.write(1, T([0]), offsets(0), 4, np.ones((1, 4), np.uint8), site=3) is None
    assert r.read(1, T([5]), offsets(0), 4, site=7).site == 3  # read after write: the write's
    assert r.read(1, T([5]), offsets(8), 4, site=7) is None
    assert r.write(1, T([6]), offsets(8), 4, np.ones((1, 4), np.uint8), site=9).site == 7
    assert r.atomic(1, T([2]), offsets(0), 4, site=4).site == 3
    clash = r.write(1, T([1, 2]), offsets(12, 12), 4, np.arange(8, dtype=np.uint8).reshape(2, 4),
                    site=5)
    assert clash.kind == "two lanes of one instruction store different values" and clash.site == 5
