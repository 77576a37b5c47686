"""Nsight Compute's counters per Python line of a Tylo kernel, through the PTX's line info.

    python bench/ncu_source_lines.py --kernel gemm -- python examples/hopper/gemm.py --small

Tylo's PTX carries ``.file``/``.loc`` directives naming the kernel's .py lines (PTX ISA 11.5.3,
11.5.4) and ptxas runs with ``-lineinfo``, so Nsight Compute can correlate its per-instruction
counters with the Python source. This runs the command under ``ncu --import-source yes --section
SourceCounters --section WarpStateStats`` for one launch of the kernel (its name matched as a
regular expression), exports the source page at the high-level source level
(``--page source --print-source cuda,sass --csv``: ncu calls any line-info source "CUDA"; each
source line's row sums the counters of the SASS rows under it) and prints
the Python lines that hold the most warp-stall samples, with their instructions executed. The
report is kept (``--out``) for the GUI. Needs a GPU and ``ncu`` on PATH; the clocks are left as
they are (``--clock-control none``).
"""

from __future__ import annotations

import argparse
import csv
import io
import linecache
import shutil
import subprocess
import sys
from pathlib import Path


def _number(text: str) -> float:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def source_rows(report: Path) -> list[dict]:
    """The per-line rows of `report`'s source page: dicts of ncu's columns plus ``file``."""
    text = subprocess.run(["ncu", "--import", str(report), "--page", "source", "--print-source",
                           "cuda,sass", "--csv"], capture_output=True, text=True, check=True).stdout
    return parse_source_page(text)


def parse_source_page(text: str) -> list[dict]:
    """The source lines of ncu's CSV source page: a ``File Path`` (or ``File Name``) record
    opens each file, a header record follows (``Line No``, ``Source``, the counters), then one
    record per source line (its ``Line No`` set) with the SASS records under it (``Line No``
    empty), which are left out."""
    rows, header, path = [], None, ""
    for record in csv.reader(io.StringIO(text)):
        if not record:
            continue
        if record[0] in ("File Path", "File Name") and len(record) > 1:
            path, header = record[1], None
        elif record[0] in ("Function Name", "Kernel Name"):
            continue
        elif header is None:
            header = record
        else:
            row = dict(zip(header, record))
            if row.get(header[0], "").strip():
                row["file"] = path
                rows.append(row)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--kernel", required=True, help="regular expression of the kernel's name")
    parser.add_argument("--out", default="tylo_lines", help="report path without .ncu-rep")
    parser.add_argument("--top", type=int, default=15, help="lines to print")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the program to run")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if shutil.which("ncu") is None or not command:
        parser.error("needs ncu on PATH and a command after --")
    subprocess.run(["ncu", "--import-source", "yes", "--section", "SourceCounters", "--section",
                    "WarpStateStats", "--clock-control", "none", "-k", f"regex:{args.kernel}",
                    "-c", "1", "-f", "-o", args.out, *command], check=True)
    rows = [r for r in source_rows(Path(f"{args.out}.ncu-rep")) if r["file"].endswith(".py")]
    if not rows:
        print("no Python lines in the report: was the kernel compiled with line info?")
        return 1
    stall = next((c for c in rows[0] if "Stall Sampling (All" in c), None)
    executed = next((c for c in rows[0] if c.startswith("Instructions Executed")), None)
    line = next((c for c in rows[0] if c.startswith("Line")), "#")
    rows.sort(key=lambda r: -_number(r.get(stall, "0")))
    print(f"{'file:line':40s} {'stall samples':>14s} {'instructions':>14s}  source")
    for r in rows[: args.top]:
        number = r.get(line, "?")
        source = linecache.getline(r["file"], int(number)) if number.isdigit() else ""
        where = f"{Path(r['file']).name}:{number}"
        print(f"{where:40s} {r.get(stall, '-'):>14s} {r.get(executed, '-'):>14s}  {source.strip()[:70]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
