"""Regenerate the pictures of docs/pictures.md into docs/img/ (run: python docs/make_pictures.py).

Each picture is built by one function below from Tylo's own tables, so the pictures change
when the tables do; tests/viz/test_viz.py checks that the committed SVGs match this script.
A picture whose module is missing or fails is reported by name and skipped; the script then
exits with status 1 so that a stale or missing picture is noticed.
"""

from __future__ import annotations

import sys
from pathlib import Path

IMG = Path(__file__).resolve().parent / "img"


def mma_a() -> str:
    from tylo.compiler.hardware.dtypes import BFloat16, Float32
    from tylo.compiler.atoms.mma_atom import MMAAtom
    from tylo.viz import draw_ownership

    atom = MMAAtom((16, 8, 16), BFloat16, Float32)
    return draw_ownership(atom.operand_layout("A"), title=(
        f"mma.sync m16n8k16 bf16 A operand (16x16, M x K): lane T, element V of its 4 registers"
        f"\nownership (lane, element) -> index {atom.operand_layout('A').layout}"))


def mma_c() -> str:
    from tylo.compiler.hardware.dtypes import BFloat16, Float32
    from tylo.compiler.atoms.mma_atom import MMAAtom
    from tylo.viz import draw_ownership

    atom = MMAAtom((16, 8, 16), BFloat16, Float32)
    return draw_ownership(atom.operand_layout("C"), title=(
        f"mma.sync m16n8k16 f32 accumulator (16x8, M x N): lane T, element V"
        f"\nownership (lane, element) -> index {atom.operand_layout('C').layout}"))


def _swizzle_tile(swizzled: bool) -> str:
    from tylo.compiler.encodings.swizzle_modes import element_swizzle
    from tylo.compiler.layout.layout import Layout
    from tylo.compiler.layout.swizzle import ComposedLayout
    from tylo.viz import draw_layout

    rows = Layout((8, 64), (64, 1))
    layout = ComposedLayout(element_swizzle(128, 2), rows) if swizzled else rows
    what = "128-byte swizzle" if swizzled else "no swizzle"
    return draw_layout(layout, element_bytes=2, access="chunks", title=(
        f"8 x 64 tile of 16-bit elements, 128-byte rows, {what}: {layout}\n"
        "each group = 8 rows x one 16-byte chunk (one ldmatrix 8x8 matrix)"))


def swizzle_128b() -> str:
    return _swizzle_tile(True)


def no_swizzle() -> str:
    return _swizzle_tile(False)


def wgmma_c() -> str:
    from tylo.compiler.hardware.dtypes import BFloat16
    from tylo.compiler.plans.wgmma import WGMMA64
    from tylo.viz import draw_ownership

    plan = WGMMA64(BFloat16, 16, 16)
    ownership = plan.operand_layout("C")
    return draw_ownership(ownership, title=(
        "wgmma m64n16k16 f32 accumulator (64x16): 128 threads of a warpgroup, colour by warp"
        f"\nownership (thread, element) -> index {ownership.layout}"), colour_by="warp")


def tma_tile() -> str:
    from tylo.compiler.hardware.dtypes import BFloat16
    from tylo.compiler.plans.tma_tile import TMATile, shared_layout
    from tylo.viz import draw_layout

    layout = shared_layout(TMATile(BFloat16, (64, 64), 1))
    return draw_layout(layout, element_bytes=2, access="chunks", title=(
        f"TMA tile 64 x 64 bf16, inner axis 1, 128-byte swizzle: {layout}\n"
        "each group = 8 rows x one 16-byte chunk"))


#: file name in docs/img -> the function drawing it.
PICTURES = {
    "mma_m16n8k16_A.svg": mma_a,
    "mma_m16n8k16_C.svg": mma_c,
    "swizzle_128B_bf16.svg": swizzle_128b,
    "no_swizzle_bf16.svg": no_swizzle,
    "wgmma_m64n16_C.svg": wgmma_c,
    "tma_tile_64x64_bf16.svg": tma_tile,
}


def make(outdir: Path = IMG, names=None) -> dict[str, str]:
    """Write the pictures into ``outdir``; return {name: reason} of those that could not be made."""
    outdir.mkdir(parents=True, exist_ok=True)
    failed = {}
    for name, draw in PICTURES.items():
        if names is not None and name not in names:
            continue
        try:
            svg = draw()
        except Exception as exc:  # a module another part of Tylo has not written yet, say
            failed[name] = f"{type(exc).__name__}: {exc}"
            continue
        (outdir / name).write_text(svg, encoding="utf-8")
    return failed


def main() -> int:
    failed = make()
    for name in PICTURES:
        print(f"{'FAILED' if name in failed else 'wrote '} docs/img/{name}")
    for name, why in failed.items():
        print(f"could not make {name}: {why}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
