"""Compare two folders of PTX recorded with ``TYLO_PTX_RECORD`` (tests/conftest.py).

``python tests/ptx_record.py BEFORE AFTER`` normalizes each text (drops ``.file`` and ``.loc``
line-info directives, comments, blank lines and trailing spaces), then prints the texts found in
only one of the two folders and exits 1 if there are any. A change that keeps the PTX apart from
line info (the house rule for refactors) leaves the two sets equal.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

_LINE_INFO = re.compile(r"^\s*\.(file|loc)\b")


def normalized(text: str) -> str:
    """`text` without line-info directives, ``//`` comments, blank lines and trailing spaces."""
    lines = []
    for line in text.splitlines():
        if _LINE_INFO.match(line):
            continue
        line = line.split("//", 1)[0].rstrip()
        if line:
            lines.append(line)
    return "\n".join(lines)


def texts(folder: Path) -> dict[str, Path]:
    return {normalized(p.read_text()): p for p in sorted(folder.glob("*.ptx"))}


def main(argv: list[str]) -> int:
    before, after = (texts(Path(a)) for a in argv[1:3])
    only_before = [p for t, p in before.items() if t not in after]
    only_after = [p for t, p in after.items() if t not in before]
    for p in only_before:
        print(f"only before: {p}")
    for p in only_after:
        print(f"only after: {p}")
    print(f"{len(before)} texts before, {len(after)} after, {len(only_before) + len(only_after)} differ")
    return 1 if only_before or only_after else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
