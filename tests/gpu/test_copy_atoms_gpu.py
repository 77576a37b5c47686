"""ldmatrix / stmatrix on the GPU: which lane and slot receives (or writes) which element.

For every CopyAtom variant (ldmatrix and stmatrix, plain and .trans) and every matrix count
(.x1, .x2, .x4), plus a swizzled tile, a 3x2 block grid (.x4 then .x2, row addresses not affine
in the lane bits), four warps of a TiledMMA and 8-bit elements (`copy_atom_cases.CASES`):

* load: a shared tile holds known codes (element (r, c) holds base + r + rows * c, base fresh
  per run); the warps load it through `load_fragment` with an ownership whose plan is exactly
  those instructions, and write out what each thread holds in each slot. Decoded, it must be the host
  model's table (`predicted_table`, from the CopyAtom registers ownership and the plan), and
  equal what the scalar path (`load_fragment` of the same codes from global memory) loads.
* store: each thread's fragment holds codes of (thread, slot), stored into a poisoned shared tile
  through `store`; the tile, copied out, must place each code where the host model says, and
  equal the scalar path's global store of the same fragment.

Outputs are poisoned before each run; the compiled PTX must hold exactly the expected
instructions, so a test cannot pass through the scalar path. 8-bit codes use two launches (low and high byte).
Every test runs on the GPU and on the emulator (`backend`).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from copy_atom_cases import CASES, load_through_shared, predicted_table, store_through_shared

POISON = -1  # 0xFFFF; for bytes 0xFF, which the high-byte plane never holds (codes < 32768)


def _storage(case):
    """Code storage: int16, or int8 for 8-bit elements."""
    return np.int8 if case.dtype.bits == 8 else np.int16


def _as_kernel(x: np.ndarray, case) -> np.ndarray:
    """Code arrays travel as the case's element type, bits unchanged."""
    return x.view(case.dtype.numpy)


def _planes(codes: np.ndarray, case) -> list[np.ndarray]:
    """The launches' inputs: one int16 plane, or the low and high bytes as int8."""
    if case.dtype.bits != 8:
        return [codes.astype(np.int16)]
    return [(codes % 256 - 128).astype(np.int8), (codes // 256 - 128).astype(np.int8)]


def _decode(planes, case) -> np.ndarray:
    if case.dtype.bits != 8:
        return planes[0].astype(np.int64)
    lo, hi = (p.astype(np.int64) + 128 for p in planes)
    return lo + 256 * hi


def _check_ptx(backend, kernel, args, case):
    ptx = backend.ptx(kernel, *args, block=case.threads)
    found = [line.strip().split()[0] for line in ptx.splitlines() if "matrix.sync" in line]
    assert found == case.mnemonics, f"{case}: expected {case.mnemonics}, PTX has {found}"


def _poisoned(backend, shape, case):
    return backend.put(_as_kernel(np.full(shape, POISON, _storage(case)), case))


def _got(backend, array, case) -> np.ndarray:
    return backend.get(array).view(_storage(case))


def _run_load(backend, case):
    R, C = case.ownership.shape
    N, V = case.threads, case.ownership.values
    base = random.randrange(1, 30000)
    r, c = np.meshgrid(np.arange(R), np.arange(C), indexing="ij")
    codes = base + r + R * c
    outs, refs = [], []
    for plane in _planes(codes, case):
        X = backend.put(_as_kernel(np.ascontiguousarray(plane), case))
        out, ref = _poisoned(backend, (N, V), case), _poisoned(backend, (N, V), case)
        args = (out, ref, X, case.ownership, case.layout)
        _check_ptx(backend, load_through_shared, args, case)
        backend.launch(load_through_shared, (1,), (N,), *args)
        outs.append(_got(backend, out, case))
        refs.append(_got(backend, ref, case))
    held, scalar = _decode(outs, case) - base, _decode(refs, case) - base
    return [[(int(x) % R, int(x) // R) for x in row] for row in held], (held == scalar).all()


def _run_store(backend, case):
    R, C = case.ownership.shape
    N, V = case.threads, case.ownership.values
    base = random.randrange(1, 30000)
    table = predicted_table(case)
    codes = np.zeros((R, C), np.int64)
    for t in range(N):  # code(t, v); a coordinate held twice keeps its last holder's code
        for v in range(V):
            codes[case.ownership(t, v)] = base + t * V + v
    outs, refs = [], []
    for plane in _planes(codes, case):
        V_ = backend.put(_as_kernel(np.ascontiguousarray(plane), case))
        P, out, ref = (_poisoned(backend, (R, C), case) for _ in range(3))
        args = (out, ref, V_, P, case.ownership, case.layout)
        _check_ptx(backend, store_through_shared, args, case)
        backend.launch(store_through_shared, (1,), (N,), *args)
        outs.append(_got(backend, out, case))
        refs.append(_got(backend, ref, case))
    written, scalar = _decode(outs, case) - base, _decode(refs, case) - base
    want = np.full((R, C), -1, np.int64)
    for t in range(N):  # what thread t's slot v holds, where the host model puts it
        for v in range(V):
            want[table[t][v]] = codes[case.ownership(t, v)] - base
    return written, want, (written == scalar).all()


@pytest.mark.parametrize("case", [c for c in CASES if c.op == "load"], ids=str)
def test_ldmatrix_lanes_and_slots(backend, case):
    held, same_as_scalar = _run_load(backend, case)
    assert held == predicted_table(case), f"{case}: lanes/slots differ from the host model"
    assert same_as_scalar, f"{case}: ldmatrix and scalar loads differ"


@pytest.mark.parametrize("case", [c for c in CASES if c.op == "store"], ids=str)
def test_stmatrix_lanes_and_slots(backend, case):
    written, want, same_as_scalar = _run_store(backend, case)
    np.testing.assert_array_equal(written, want, f"{case}: stored places differ from the host model")
    assert same_as_scalar, f"{case}: stmatrix and scalar stores differ"
