"""tylo.ops.kernels.gate_up, the fused gate/up GEMM for prefill, on the CPU emulator (fresh random
inputs, out poisoned, against numpy's float64), its argument errors, and its SASS (HGMMA,
UTMALDG, UTMASTG, no spills; ptxas and nvdisasm, no GPU); on a GPU, against torch."""

from __future__ import annotations

import pytest

import tylo
from tylo import BFloat16, testing
from tylo.ops.kernels import gate_up as gu


def run(M: int, R: int, K: int, torch=None) -> bool:
    arrays = testing.arrays(torch)
    x = arrays.randn((M, K), BFloat16)
    Wg, Wu = (arrays.randn((R, K), BFloat16, scale=K ** -0.5) for _ in range(2))
    out = arrays.poisoned((M, R), BFloat16)
    gu.GateUp(x, Wg, Wu, out, emulate=torch is None)()
    arrays.synchronize()
    return testing.report(f"gate_up M={M} R={R} K={K}", out, gu.reference(x, Wg, Wu))


@pytest.mark.parametrize("M, R, K", [
    (130, 192, 200),   # 2 x 2 tiles walked by one CTA: row and column tails, a K tail of 8
    (70, 64, 64),      # one tile, W rows past R zero-filled, one K step
])
def test_gate_up_emulated(M, R, K):
    assert run(M, R, K)


def test_argument_errors_name_the_argument():
    import ml_dtypes
    import numpy as np

    x, W, out = (np.zeros(s, ml_dtypes.bfloat16) for s in ((128, 64), (128, 64), (128, 128)))
    with pytest.raises(tylo.ArgumentError, match="W_gate"):
        gu.GateUp(x, W[:, :32], W, out, emulate=True)
    with pytest.raises(tylo.ArgumentError, match="W_up"):
        gu.GateUp(x, W, W[:64], out, emulate=True)
    with pytest.raises(tylo.ArgumentError, match="out"):
        gu.GateUp(x, W, W, out[:, :64], emulate=True)


def test_sass():
    pytest.importorskip("tylo.runtime.ptxas")
    compiled = gu.compile_for_sm90a()
    counts = compiled.sass_counts()
    assert counts.opcodes["HGMMA"] >= 8        # two m64n128k16 per K = 16 step of a 64 step
    assert counts.opcodes["UTMALDG"] >= 3 and counts.opcodes["UTMASTG"] >= 2
    assert counts.spill_store_bytes == 0 and counts.spill_load_bytes == 0
    assert compiled.report.stack_frame_bytes == 0


@pytest.mark.gpu
@pytest.mark.parametrize("M, R, K", [(2048, 14336, 4096), (1000, 1088, 1000), (65, 640, 4104)])
def test_gate_up_on_the_gpu(M, R, K):
    torch = testing.cuda_torch()
    if torch is None or torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("needs sm_90a (Hopper) and torch with CUDA")
    assert run(M, R, K, torch)
