"""bench/ncu_source_lines.py reads ncu's CSV source page (`--page source --print-source
cuda,sass --csv`): one row per source line of each file, the SASS rows under it left out."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from ncu_source_lines import parse_source_page  # noqa: E402

PAGE = """\
"File Name","/work/examples/hopper/gemm.py"
"Line No","Source","Warp Stall Sampling (All Samples)","Instructions Executed"
"53","def gemm(a_map, b_map, c_map, M, N, K):","1","126"
"","LDC R1, c[0x0][0x28]","1","126"
"169","    for k in range(k_steps):","9","1,212"
"","HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], R24","9","1212"
"File Name","/work/examples/hopper/other.py"
"Line No","Source","Warp Stall Sampling (All Samples)","Instructions Executed"
"7","x = 1","0","4"
"""


def test_source_lines_with_their_file_and_no_sass_rows():
    rows = parse_source_page(PAGE)
    assert [(Path(r["file"]).name, r["Line No"]) for r in rows] == [
        ("gemm.py", "53"), ("gemm.py", "169"), ("other.py", "7")]
    assert rows[1]["Instructions Executed"] == "1,212"
