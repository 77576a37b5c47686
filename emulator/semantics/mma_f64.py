"""The numerics of FP64 ``mma.sync`` (DMMA): a model, NOT yet fitted on hardware.

PTX ISA 9.7.14.5.14 mma, "Precision and rounding", .f64: "Precision of the element-wise
multiplication and addition operation is identical to that of .f64 precision fused
multiply-add", rounding ``.rn`` by default (Tylo emits no other). The ISA names no order of the
K additions. The model (`DMMA_MODEL`): each output element is a chain of K fused multiply-adds
in float64, rounded to nearest even at every step, starting from C and taking k = 0, 1, ...,
K - 1 in turn (``d = fma(a[m, k], b[k, n], d)``, `rounding.fma64`, exact), for every shape
(m8n8k4, m16n8k4, m16n8k8, m16n8k16). It is the reading of the ISA's sentence; which order the
DMMA units of the H100/H200 take (ptxas 13.0 assembles each shape into one DMMA.8x8x4,
DMMA.16x8x4, DMMA.16x8x8 or DMMA.16x8x16 for sm_90a) has not been measured.

Refitting: `FmaChain` has the parameters a measurement decides: the order of k (`order`:
ascending or descending) and where C enters (`c_last`: added after the products' chain, which
then starts from +0). `fit(A, B, C, D)` scores every model of `CANDIDATES` against measured
tiles (the fraction of elements each reproduces bit for bit); tests/gpu/test_dmma_gpu.py runs
the hardware on operands whose sums depend on the order and prints that score when the
emulation disagrees. Set `DMMA_MODEL` to the winner (or add the candidate that wins) and
record the data, as for the f32 model of `matrix`.

Not decided by anything measured, so the model's choices: infinities and NaNs follow the float64
arithmetic of the chain, and a NaN result is written as the f64 default NaN
(`rounding.F64.canonical_nan`, 0xFFF8000000000000); subnormal operands and results are kept.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...compiler.support.lazy_modules import np
from . import rounding as R


@dataclass(frozen=True)
class FmaChain:
    """D = a chain of fused multiply-adds in float64 over the K products (module text).

    order: "ascending" (k = 0 first) or "descending" (k = K - 1 first). c_last: C is added
    (one rounding) after the chain, which starts from +0, instead of starting it."""

    order: str = "ascending"
    c_last: bool = False

    def __call__(self, A, B, C):
        """D (warps, m, n) float64 of A (warps, m, k), B (warps, k, n), C (warps, m, n)."""
        k = A.shape[-1]
        steps = range(k) if self.order == "ascending" else range(k - 1, -1, -1)
        shape = C.shape
        acc = np.zeros(shape) if self.c_last else C
        acc = acc.reshape(-1)
        for s in steps:
            a = np.broadcast_to(A[..., s, None], shape).reshape(-1)
            b = np.broadcast_to(B[:, None, s, :], shape).reshape(-1)
            acc = R.fma64(a, b, acc)
        if self.c_last:
            acc = R.fma64(np.ones_like(acc), acc, C.reshape(-1))  # acc + C, rounded once
        return acc.reshape(shape)


DMMA_MODEL = FmaChain()
"""The model the emulator runs (module text: not yet fitted on hardware)."""

CANDIDATES = (FmaChain(), FmaChain("descending"), FmaChain(c_last=True),
              FmaChain("descending", c_last=True))
"""The models `fit` scores."""


def dmma(A, B, C, model: FmaChain = DMMA_MODEL):
    """D of FP64 mma.sync as uint64 register bits (warps, m, n), from exact float64 operand
    values A (warps, m, k), B (warps, k, n) and C (warps, m, n) (module text)."""
    with np.errstate(all="ignore"):
        d = model(A, B, C)
    bits = d.view(np.uint64)
    return np.where(np.isnan(d), np.uint64(R.F64.canonical_nan), bits)


def fit(A, B, C, D, candidates=CANDIDATES) -> dict:
    """Each candidate model -> the fraction of the measured D (uint64 bits, (tiles, m, n)) it
    reproduces bit for bit, from the tiles' A, B and C (float64): the refit of `DMMA_MODEL`."""
    return {model: float((dmma(A, B, C, model) == D).mean()) for model in candidates}
