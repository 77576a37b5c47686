"""Write docs/mistakes.md, the catalogue of mistakes, from tests/catalogue/mistakes.py
(run: python docs/make_mistakes.py). tests/catalogue/test_mistakes.py runs every entry and fails
when the page is stale."""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEST = "tests/catalogue/test_mistakes.py::test_mistake"

HEADER = """# The catalogue of mistakes

Every mistake below is a test: `{test}[<name>]` runs the snippet (after `import tylo` and
`from tylo import *`) and checks that it raises exactly this error, with this fragment in its
message, at the marked line when the error is located. The snippets live in
`tests/catalogue/mistakes.py`; this page is generated from them (`python docs/make_mistakes.py`).
Compile-time errors print the file, the line and a caret under the expression; launch-time
errors name the argument and the rule. In both cases nothing runs and nothing is written.
Faults the emulator finds while the kernel runs print the line that made the faulting
instruction the same way (for a deadlock, the line that waits), then the PTX instruction.

Refusals of invalid IR (what the verifiers of the `tylo` and `ptx` dialects and the passes
reject) are lit tests, listed at the end.
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _marked(code: str) -> str:
    for line in textwrap.dedent(code).splitlines():
        if "# <-" in line:
            return line.split("# <-")[0].strip()
    return ""


def _lit_cases() -> list[tuple[str, int]]:
    rows = []
    for path in sorted((ROOT / "lit_tests").rglob("*_invalid.mlir")):
        text = path.read_text()
        chunks = re.split(r"^// -----$", text, flags=re.M)  # a case: a chunk with a CHECK line
        cases = sum(bool(re.search(r"^// CHECK[A-Z-]*:", c, re.M)) for c in chunks)
        rows.append((str(path.relative_to(ROOT)), cases))
    return rows


def render() -> str:
    sys.path.insert(0, str(ROOT / "tests" / "catalogue"))
    try:
        from mistakes import MISTAKES
    finally:
        sys.path.pop(0)
    out = [HEADER.format(test=TEST)]
    for area in dict.fromkeys(m.area for m in MISTAKES):
        out.append(f"\n## {area[0].upper()}{area[1:]}\n")
        out.append("| mistake | what was written | error | message says | test |")
        out.append("| --- | --- | --- | --- | --- |")
        for m in (m for m in MISTAKES if m.area == area):
            out.append(f"| {_cell(m.mistake)} | `{_cell(_marked(m.code))}` | `{m.error}` | "
                       f"{_cell(m.message)} | `{m.name}` |")
    out.append("\n## Invalid IR (lit)\n")
    out.append("| file | cases |")
    out.append("| --- | --- |")
    for path, count in _lit_cases():
        out.append(f"| `{path}` | {count} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    (ROOT / "docs" / "mistakes.md").write_text(render())
