"""How the emulator names instructions and threads in its errors."""

from __future__ import annotations


def line(op) -> str:
    """The PTX line of `op` (its name when it prints none)."""
    try:
        return op.assembly_line() or op.name
    except Exception:  # noqa: BLE001 - a name is enough to point at it
        return op.name


def ranges(threads) -> str:
    """``0-31, 64`` for sorted thread indices."""
    threads = [int(t) for t in threads]
    out, i = [], 0
    while i < len(threads):
        j = i
        while j + 1 < len(threads) and threads[j + 1] == threads[j] + 1:
            j += 1
        out.append(f"{threads[i]}" if i == j else f"{threads[i]}-{threads[j]}")
        i = j + 1
    return ", ".join(out)
