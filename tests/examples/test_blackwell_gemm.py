"""examples/blackwell/gemm.py without a Blackwell GPU: ptxas accepts it for sm_100a, its SASS
(nvdisasm) holds the tcgen05 MMA (UTCHMMA), the commit (UTCBAR), the TMEM loads (LDTM) and the
TMA loads, with no spills; and the CPU emulator, running the same PTX with TMEM and the
asynchronous MMA, matches numpy's float64 product (fresh random inputs, C poisoned, a K tail,
the stage ring wrapping)."""

from __future__ import annotations

import tylo
from tutorials import load

gemm = load("blackwell/gemm.py")


def test_compiles_for_sm_100a_with_the_tcgen05_sass():
    compiled = gemm.compile_for_blackwell()
    assert compiled.arch == "sm_100a"
    assert compiled.report.spill_store_bytes == compiled.report.spill_load_bytes == 0
    sass = compiled.asm["sass"]
    counts = compiled.sass_counts()
    assert counts["UTCHMMA"] == gemm.BK // 16  # one K step of 64 in the loop: 4 x K = 16
    assert counts["LDTM"] == gemm.N_TILE // gemm.EPILOGUE_COLUMNS
    assert counts["UTCBAR"] == 2 and counts["UTMALDG"] == 2
    assert "UTCHMMA gdesc[" in sass and "tmem[" in sass and "idesc[" in sass
    assert counts["LDL"] == counts["STL"] == 0
    assert gemm.report(compiled)


def test_emulated_against_numpy():
    """128 x 64 x 200: three full K steps and a tail of 8, two stages (the ring wraps)."""
    assert gemm.emulated_check(128, 64, 200, 2)


def test_64_row_tiles_compile_and_emulate():
    """--bm 64: M = 64 tcgen05.mma (idesc M >> 4 = 4), the epilogue reading each warp's 16 rows
    with tcgen05.ld.16x256b (SASS LDTM.16dp256bit); 128 x 64 x 200 on the emulator (two CTAs)."""
    compiled = gemm.compile_for_blackwell(bm=64)
    assert compiled.report.spill_store_bytes == compiled.report.spill_load_bytes == 0
    idesc = tylo.instruction_descriptor(tylo.Tcgen05MMA((64, gemm.N_TILE, 16), tylo.BFloat16))
    assert idesc >> 24 == 4 and f", {idesc};" in compiled.ptx
    assert compiled.ptx.count("tcgen05.ld.sync.aligned.16x256b.x4.b32") == gemm.N_TILE // 32
    assert compiled.sass_counts()["UTCHMMA"] == gemm.BK // 16
    assert compiled.asm["sass"].count("LDTM.16dp256bit.x4") == gemm.N_TILE // 32
    assert gemm.emulated_check(128, 64, 200, 2, 64)
