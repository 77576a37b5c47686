"""The emulator's wgmma.mma_async (emulator/semantics/wgmma.py) against the H200, bit for bit.

The kernel is tests/gpu/wgmma_kernels.py's, made with the ptx dialect and run twice on the same
inputs: on the GPU (its PTX, with ``fence.proxy.async.shared::cta`` put after the barrier,
assembled for sm_90a by the runtime) and on the emulator. Every N of m64nNk16 (8..256 step 8,
the emulated twin a few of them), bf16 and f16, adversarial operands: exponents over the whole
range (products from 2**-250 to 2**250 for bf16), cancellation (A's columns in +/- pairs),
subnormals, signed zeros, and a large C. The f32 results must be equal bit for bit; a mismatch
says how many elements differ and by how many ulps. With ``TYLO_WGMMA_DUMP=<file.npz>``
(compiler/knobs.py) the GPU run writes every case's A, B, C and D (raw bits) there, so the
accumulation model (`K_STEP`, the fused dot-add of matrix.py) can be fitted offline.
"""

from __future__ import annotations

import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from wgmma_kernels import FENCE_LINE, Case, run_emulated, shared_operands, wgmma_module  # noqa: E402

from tylo.compiler import knobs  # noqa: E402
from tylo.emulator.semantics.wgmma_operands import fragment_coordinates  # noqa: E402

RNG = np.random.default_rng()
TYPES = ("f32.bf16.bf16", "f32.f16.f16")


def adversarial(t: str, n: int, rng):
    """(A (64, 16), B (16, n), C (64, n) float32) of the module text's kinds."""
    npt = ml_dtypes.bfloat16 if t == "bf16" else np.float16
    span = (-60, 60) if t == "bf16" else (-14, 14)
    def values(shape):
        x = rng.uniform(1, 2, shape) * 2.0 ** rng.integers(*span, shape)
        x *= rng.choice([-1, 1], shape)
        x[rng.random(shape) < 0.05] = 0.0
        x[rng.random(shape) < 0.03] = -0.0
        tiny = rng.random(shape) < 0.05  # subnormals of the input format
        x[tiny] = rng.integers(1, 64, tiny.sum()) * (2.0 ** -133 if t == "bf16" else 2.0 ** -24)
        return x.astype(npt).astype(np.float32)
    A, B = values((64, 16)), values((16, n))
    A[:, 1::2] = np.where(rng.random((64, 8)) < 0.5, -A[:, 0::2], A[:, 1::2])  # cancellation
    B[1::2] = np.where(rng.random((8, n)) < 0.5, B[0::2], B[1::2])
    C = (rng.uniform(-1, 1, (64, n)) * 2.0 ** rng.integers(-30, 40, (64, n))).astype(np.float32)
    C[rng.random((64, n)) < 0.05] = -0.0
    return A, B, C


def _inputs(case: Case, A, B, C):
    t = case.types.split(".")[1]
    npt = ml_dtypes.bfloat16 if t == "bf16" else np.float16
    raw = lambda x: x.astype(npt).view(np.uint16)  # noqa: E731
    image, ad, bd = shared_operands(raw(A), raw(B), 128, 128, case.tnsp_a, case.tnsp_b)
    rows, cols = fragment_coordinates(case.n // 2)
    acc = np.ascontiguousarray(C[rows, cols]).view(np.uint32)
    ar, ac = fragment_coordinates(8)
    h = raw(A)[ar, ac].astype(np.uint32).reshape(128, 4, 2)
    return image, acc, h[..., 0] | (h[..., 1] << 16), ad, bd


def _gpu(case: Case, image, acc, a_regs, ad, bd):
    import torch

    from tylo.compiler.signature import DeviceParam
    from tylo.passes.pipeline import emit_ptx
    from tylo.runtime import assemble, launch, pack

    from dataclasses import replace
    case = replace(case, image_bytes=len(image))
    text = emit_ptx(wgmma_module(case)).replace("bar.sync 0;", "bar.sync 0;\n" + FENCE_LINE, 1)
    cubin = assemble(text, "sm_90a", "k").cubin
    dev = lambda x: torch.from_numpy(np.ascontiguousarray(x).view(np.int32).copy()).cuda()  # noqa: E731
    tensors = {"a0": dev(image.view(np.int32)), "a1": dev(acc), "a2": dev(a_regs),
               "a3": torch.full((128 * case.n // 2,), -1, dtype=torch.int32, device="cuda")}
    params = [DeviceParam(k, "ptr", "u64") for k in tensors]
    params += [DeviceParam("a4", "value", "u64"), DeviceParam("a5", "value", "u64")]
    packed = pack(params, {**tensors, "a4": ad, "a5": bd})
    launch(cubin, "k", 1, 128, len(image), 0, packed, 0)
    torch.cuda.synchronize()
    return tensors["a3"].cpu().numpy().view(np.uint32).reshape(128, case.n // 2)


def _difference(hw, emu) -> str:
    bad = hw != emu
    ulps = np.abs(hw.view(np.int32).astype(np.int64) - emu.view(np.int32).astype(np.int64))[bad]
    return f"{bad.sum()} of {bad.size} elements differ, by {ulps.min()}..{ulps.max()} ulps"


@pytest.mark.gpu
@pytest.mark.parametrize("types", TYPES)
def test_emulated_wgmma_equals_the_hardware_bit_for_bit(types):
    pytest.importorskip("torch")
    dump, failures = {}, []
    for n in range(8, 257, 8):
        for tnsp in ((0, 0), (1, 1)):
            case = Case(n=n, types=types, tnsp_a=tnsp[0], tnsp_b=tnsp[1])
            A, B, C = adversarial(types.split(".")[1], n, RNG)
            inputs = _inputs(case, A, B, C)
            hw = _gpu(case, *inputs)
            emu = run_emulated(case, *inputs)
            key = f"{types}_n{n}_t{tnsp[0]}{tnsp[1]}"
            dump.update({f"{key}_A": A, f"{key}_B": B, f"{key}_C": C, f"{key}_D": hw})
            if not np.array_equal(hw, emu):
                failures.append(f"{key}: {_difference(hw, emu)}")
    if knobs.wgmma_dump():
        np.savez_compressed(knobs.wgmma_dump() + ("" if types == TYPES[0] else f".{types}"),
                            **dump)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("types", TYPES)
@pytest.mark.parametrize("n", [8, 24, 256])
def test_emulated_half_of_the_comparison_runs(types, n):
    """The emulated side of the comparison (what runs in CI): the same kernel and inputs, with the
    model's invariants that do not depend on the fit: finite inputs give finite results, and a
    zero B gives back C exactly."""
    case = Case(n=n, types=types)
    A, B, C = adversarial(types.split(".")[1], n, RNG)
    out = run_emulated(case, *_inputs(case, A, B, C)).view(np.float32)
    assert np.isfinite(out).all()
    rows, cols = fragment_coordinates(n // 2)
    same = run_emulated(case, *_inputs(case, A, np.zeros_like(B), C)).view(np.float32)
    np.testing.assert_array_equal(same.view(np.uint32) & 0x7FFFFFFF,
                                  np.ascontiguousarray(C[rows, cols]).view(np.uint32) & 0x7FFFFFFF)
