"""examples/blackwell/gemm.py without a Blackwell GPU: ptxas accepts it for sm_100a, its SASS
(nvdisasm) holds the tcgen05 MMA (UTCHMMA), the commit (UTCBAR), the TMEM loads (LDTM) and the
TMA loads, with no spills; and the CPU emulator, running the same PTX with TMEM and the
asynchronous MMA, matches numpy's float64 product (fresh random inputs, C poisoned, a K tail,
the stage ring wrapping)."""

from __future__ import annotations

import runpy
from pathlib import Path
from types import SimpleNamespace

BLACKWELL = Path(__file__).resolve().parents[2] / "examples" / "blackwell"
gemm = SimpleNamespace(**runpy.run_path(str(BLACKWELL / "gemm.py")))


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
