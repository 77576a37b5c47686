"""``compiled.asm["sass"]`` and ``compiled.sass_counts()`` (nvdisasm, no GPU needed): the
flagship GEMM runs on HMMA and spills nothing; fragment loads from a shared tile are LDSM."""

from __future__ import annotations

import numpy as np

import tylo
from tylo import BFloat16, MMAAtom
from tylo.compiler.layout.layout import Layout
from tylo.ops.kernels import ampere_gemm


def test_flagship_gemm_uses_hmma_and_spills_nothing():
    compiled = ampere_gemm.compile_config(ampere_gemm.CONFIG, "sm_90a")
    sass = compiled.asm["sass"]
    assert "HMMA.16816.F32.BF16" in sass
    counts = compiled.sass_counts()
    # 4 x 4 atoms per warp, two k steps of 16 per K tile of 32: 32 HMMA in the loop body
    assert counts["HMMA"] == 32 and counts["HMMA.16816.F32.BF16"] == 32
    assert counts.spill_bytes == 0 and counts["STL"] == 0 and counts["LDL"] == 0
    assert counts["LDSM"] == 12  # its operands come from shared stages: ldmatrix


def test_sass_is_disassembled_on_first_use():
    """compiled.asm["sass"] runs nvdisasm when first asked (a kernel of this test alone: the
    flagship's compile is shared with other tests of the process)."""

    @tylo.kernel
    def one_store(out):
        out[0] = 1.0

    compiled = one_store.compile(np.zeros(1, np.float32), block=1, arch="sm_90a")
    assert not compiled.asm.made("sass")
    assert "STG" in compiled.asm["sass"]
    assert compiled.asm.made("sass")


A_OWNERSHIP = MMAAtom((16, 8, 16), BFloat16).operand_layout("A")


@tylo.kernel
def through_shared(out, X, own: tylo.constexpr):
    t = tylo.thread_idx()
    S = tylo.SharedTile(tylo.shared_alloc(X.dtype, 16 * 16), Layout((16, 16), (16, 1)))
    for i in tylo.static_range(8):
        idx = t + 32 * i
        S[idx // 16, idx % 16] = X[idx // 16, idx % 16]
    tylo.barrier()
    f = tylo.load_fragment(own, S, t)  # one ldmatrix.x4
    for v in tylo.static_range(own.values):
        out[t, v] = f[v]


def test_fragment_loads_from_shared_memory_are_ldsm():
    t = tylo.Tensor
    compiled = through_shared.compile(t(BFloat16, 2), t(BFloat16, 2), A_OWNERSHIP, block=32)
    counts = compiled.sass_counts()
    assert counts["LDSM"] == 1 and counts.opcodes["LDSM"] == 1
    assert counts["HMMA"] == 0 and counts.spill_bytes == 0
