"""Disassemble a cubin into SASS with nvdisasm, and count its instructions by opcode.

Where nvdisasm comes from, in order (`find_nvdisasm`, as `ptxas.find_ptxas`):

1. ``TYLO_NVDISASM`` (`tylo.knobs.toolchain.nvdisasm`), which must name an executable file;
2. the nvidia-cuda-nvdisasm wheel, found with ``cuda.pathfinder.find_nvidia_binary_utility``;
3. ``nvdisasm`` on ``PATH``.

nvdisasm runs on the host and needs no GPU. `disassemble` runs ``nvdisasm --print-code`` (code
sections only) on the cubin, kept as a file in `tools.files_dir`. `opcode_counts` reads its
instruction lines, which have the form ``/*0290*/  @!P0 BRA `(.L_x_0) ;`` (an address comment, an
optional guard predicate, the opcode with its ``.``-separated modifiers, the operands); the
format is that of nvdisasm 12.x/13.x. `loop_opcode_counts` counts one pass through a loop (a label
up to a backward branch to it), leaving out its cold basic blocks: a K loop's instruction mix.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from collections import Counter
from pathlib import Path

from ..compiler.support import knobs
from ..compiler.support.errors import TyloError
from .tools import find_tool, kept_file


def find_nvdisasm() -> str:
    """The path of the nvdisasm executable; `TyloError` when there is none."""
    return find_tool("nvdisasm", knobs.toolchain.nvdisasm, "TYLO_NVDISASM", "nvidia-cuda-nvdisasm")


def disassemble(cubin: bytes, name: str = "kernel", cubin_path: Path | None = None) -> str:
    """The SASS text of `cubin` (bytes of an ELF cubin), from ``nvdisasm --print-code``.

    cubin_path: a file that already holds `cubin` (else it is written to `tools.files_dir`).
    Raises `TyloError` when nvdisasm is missing or fails (with its output).
    """
    tool = find_nvdisasm()
    if cubin_path is None or not Path(cubin_path).is_file():
        cubin_path = kept_file(name, hashlib.sha256(cubin).hexdigest()[:12], ".cubin", cubin)
    command = [tool, "--print-code", str(cubin_path)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise TyloError(f"cannot run nvdisasm on {cubin_path}: {exc}") from None
    if done.returncode != 0:
        raise TyloError(
            f"nvdisasm failed (exit status {done.returncode}) on {cubin_path}\n"
            + "\n".join("  " + line for line in (done.stderr + done.stdout).rstrip().splitlines())
        )
    return done.stdout


_INSTRUCTION = re.compile(
    r"^\s*/\*[0-9a-fA-F]+\*/\s*"  # the address comment
    r"(?:@!?U?P(?:T|\d+)\s+)?"  # an optional guard predicate: @P0, @!P1, @UPT, ...
    r"([A-Z][A-Z0-9_]*(?:\.[A-Za-z0-9_]+)*)"  # the opcode and its modifiers (.F32x2 too)
)


def opcode_counts(sass: str) -> tuple[Counter, Counter]:
    """(counts by base opcode, counts by full opcode) of the instructions in `sass`.

    ``HMMA.16816.F32.BF16`` counts once under ``"HMMA"`` in the first and under
    ``"HMMA.16816.F32.BF16"`` in the second; a guard predicate (``@P0``) is not part of either.
    """
    base: Counter = Counter()
    full: Counter = Counter()
    for line in sass.splitlines():
        match = _INSTRUCTION.match(line)
        if match:
            opcode = match.group(1)
            full[opcode] += 1
            base[opcode.split(".", 1)[0]] += 1
    return base, full


_ADDRESS = re.compile(r"^\s*/\*([0-9a-fA-F]+)\*/")
_BRANCH_TARGET = re.compile(r"\bBRA\b[^`]*`\((\.L_x_\d+)\)")
_LABEL = re.compile(r"^(\.L_x_\d+):")


def loop_opcode_counts(sass: str, marker: str, cold: tuple[str, ...] = ()) -> Counter:
    """Counts by base opcode of one pass through the loop of `sass` holding the most `marker`
    instructions (e.g. ``"HMMA"``): the instructions from a label to a backward ``BRA`` to it.
    Basic blocks (split at labels and after branches) that hold any of the substrings `cold`
    (e.g. ``("ZFILL", "BPT.TRAP")``: the boundary path and its checks) are left out, so the
    counts are those of the path a loop iteration usually takes. Empty when no loop holds a
    `marker` instruction.
    """
    lines, labels = [], {}
    for line in sass.splitlines():
        label = _LABEL.match(line.strip())
        if label:
            labels[label.group(1)] = len(lines)
            lines.append(("label", line))
        elif _INSTRUCTION.match(line):
            lines.append(("op", line))
    best, best_count = None, 0
    for end, (kind, line) in enumerate(lines):
        target = _BRANCH_TARGET.search(line) if kind == "op" else None
        start = labels.get(target.group(1)) if target else None
        if start is None or start >= end:
            continue
        n = sum(1 for k, l in lines[start:end + 1] if k == "op" and _opcode(l) == marker)
        if n > best_count or (n == best_count and best is not None and end - start < best[1] - best[0]):
            best, best_count = (start, end), n
    counts: Counter = Counter()
    if best is None:
        return counts
    block: list[str] = []

    def flush():
        if block and not any(c in l for l in block for c in cold):
            counts.update(_opcode(l) for l in block)
        block.clear()

    for kind, line in lines[best[0]:best[1] + 1]:
        if kind == "label":
            flush()
            continue
        block.append(line)
        if _opcode(line) in ("BRA", "EXIT"):
            flush()
    flush()
    return counts


def _opcode(line: str) -> str:
    return _INSTRUCTION.match(line).group(1).split(".", 1)[0]
