"""tylo.print on the GPU and the emulator (`backend`): `print_cases.show` prints fresh random
Int32 (negative too, and its hex), UInt32, Int64, Float32, BFloat16 and Int8 values from 120
threads of two blocks, inside a runtime if and a runtime loop, and a value-less line from every
thread; the lines it writes equal Python's formatting of the same values (sorted: threads print
in no set order).

On the GPU the kernel runs in a subprocess (`print_cases.main`): the driver writes device printf
output to the C stdout of the process when the context synchronizes (CUDA C++ Programming Guide,
"Formatted Output"). The emulator writes the lines to the stream it is given.
"""

from __future__ import annotations

import os

import numpy as np

import print_cases


def test_device_print_matches_python_formatting(backend, tmp_path):
    seed = int.from_bytes(os.urandom(8), "little")
    values = print_cases.values(np.random.default_rng(seed))
    got = print_cases.printed(backend, values, tmp_path)
    expected = print_cases.expected(values)
    missing = sorted(set(expected) - set(got))[:5]
    extra = sorted(set(got) - set(expected))[:5]
    assert got == expected, f"seed {seed}: missing {missing}, unexpected {extra}"
