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
"""

from __future__ import annotations

import random

import pytest

from copy_atom_cases import CASES, load_through_shared, predicted_table, store_through_shared

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

POISON = -1  # 0xFFFF; for bytes 0xFF, which the high-byte plane never holds (codes < 32768)
KERNEL_DTYPES = {"bf16": "bfloat16", "s8": "int8", "e4m3": "float8_e4m3fn"}


def _torch_dtype(case):
    """Code storage: int16, or int8 for 8-bit elements."""
    return torch.int8 if case.dtype.bits == 8 else torch.int16


def _as_kernel(x, case):
    """Code tensors travel as the case's element type, bits unchanged."""
    return x.view(getattr(torch, KERNEL_DTYPES[case.dtype.ptx]))


def _planes(codes, case):
    """The launches' inputs: one int16 plane, or the low and high bytes as int8."""
    if case.dtype.bits != 8:
        return [codes.to(torch.int16)]
    return [(codes % 256 - 128).to(torch.int8), (codes // 256 - 128).to(torch.int8)]


def _decode(planes, case):
    if case.dtype.bits != 8:
        return planes[0].to(torch.int64)
    lo, hi = (p.to(torch.int64) + 128 for p in planes)
    return lo + 256 * hi


def _check_ptx(kernel, args, case):
    ptx = kernel.compile(*args, block=case.threads).ptx
    found = [line.strip().split()[0] for line in ptx.splitlines() if "matrix.sync" in line]
    assert found == case.mnemonics, f"{case}: expected {case.mnemonics}, PTX has {found}"


def _run_load(case):
    R, C = case.ownership.shape
    N, V = case.threads, case.ownership.values
    base = random.randrange(1, 30000)
    r, c = torch.meshgrid(torch.arange(R), torch.arange(C), indexing="ij")
    codes = (base + r + R * c).cuda()
    outs, refs = [], []
    for plane in _planes(codes, case):
        X = _as_kernel(plane.contiguous(), case)
        out = _as_kernel(torch.full((N, V), POISON, device="cuda", dtype=_torch_dtype(case)), case)
        ref = _as_kernel(torch.full((N, V), POISON, device="cuda", dtype=_torch_dtype(case)), case)
        args = (out, ref, X, case.ownership, case.layout)
        _check_ptx(load_through_shared, args, case)
        load_through_shared[(1,), (N,)](*args)
        torch.cuda.synchronize()
        outs.append(out.view(_torch_dtype(case)).cpu())
        refs.append(ref.view(_torch_dtype(case)).cpu())
    held, scalar = _decode(outs, case) - base, _decode(refs, case) - base
    return [[(int(x) % R, int(x) // R) for x in row] for row in held], torch.equal(held, scalar)


def _run_store(case):
    R, C = case.ownership.shape
    N, V = case.threads, case.ownership.values
    base = random.randrange(1, 30000)
    table = predicted_table(case)
    codes = torch.zeros(R, C, dtype=torch.int64)
    for t in range(N):  # code(t, v); a coordinate held twice keeps its last holder's code
        for v in range(V):
            codes[case.ownership(t, v)] = base + t * V + v
    outs, refs = [], []
    for plane in _planes(codes.cuda(), case):
        V_ = _as_kernel(plane.contiguous(), case)
        P = _as_kernel(torch.full((R, C), POISON, device="cuda", dtype=_torch_dtype(case)), case)
        out = _as_kernel(torch.full((R, C), POISON, device="cuda", dtype=_torch_dtype(case)), case)
        ref = _as_kernel(torch.full((R, C), POISON, device="cuda", dtype=_torch_dtype(case)), case)
        args = (out, ref, V_, P, case.ownership, case.layout)
        _check_ptx(store_through_shared, args, case)
        store_through_shared[(1,), (N,)](*args)
        torch.cuda.synchronize()
        outs.append(out.view(_torch_dtype(case)).cpu())
        refs.append(ref.view(_torch_dtype(case)).cpu())
    written, scalar = _decode(outs, case) - base, _decode(refs, case) - base
    want = torch.full((R, C), -1, dtype=torch.int64)
    for t in range(N):  # what thread t's slot v holds, where the host model puts it
        for v in range(V):
            want[table[t][v]] = codes[case.ownership(t, v)] - base
    return written, want, torch.equal(written, scalar)


@pytest.mark.parametrize("case", [c for c in CASES if c.op == "load"], ids=str)
def test_ldmatrix_lanes_and_slots(case):
    held, same_as_scalar = _run_load(case)
    assert held == predicted_table(case), f"{case}: lanes/slots differ from the host model"
    assert same_as_scalar, f"{case}: ldmatrix and scalar loads differ"


@pytest.mark.parametrize("case", [c for c in CASES if c.op == "store"], ids=str)
def test_stmatrix_lanes_and_slots(case):
    written, want, same_as_scalar = _run_store(case)
    assert torch.equal(written, want), f"{case}: stored places differ from the host model"
    assert same_as_scalar, f"{case}: stmatrix and scalar stores differ"
