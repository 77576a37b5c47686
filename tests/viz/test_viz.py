"""tylo.viz: pictures of ownerships and layouts, bank conflicts, PNG output, the docs pictures.

Known answers come from sources independent of the code drawn: the m16n8k16 A fragment formula
of PTX ISA 9.7.14.5.8 (docs/facts/ptx_isa.md section 1), the 128-byte swizzle formula
``64 r + (k xor 8 (r % 8))`` of Julia Tylo's guide to TMA and WGMMA, and the bank rule of the CUDA
programming guide (32 banks of 4 bytes, successive words in successive banks).
"""

import importlib.util
import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tylo.compiler.hardware.dtypes import BFloat16, Float32
from tylo.compiler.layout.dynamic import DYNAMIC
from tylo.compiler.encodings.swizzle_modes import element_swizzle
from tylo.compiler.support.errors import GeometryError, LayoutError, TyloError
from tylo.compiler.layout.layout import Layout
from tylo.compiler.atoms.mma_atom import MMAAtom
from tylo.compiler.ownership.ownership import Ownership
from tylo.compiler.layout.swizzle import ComposedLayout, Swizzle
from tylo.compiler.atoms.tiled_mma import TiledMMA
from tylo.viz import (
    NoRasterizerError,
    PictureError,
    access_groups,
    available_rasterizers,
    bank_conflicts,
    draw_layout,
    draw_ownership,
    offset_grid,
    raster,
)

NS = "{http://www.w3.org/2000/svg}"
ROOT = Path(__file__).resolve().parents[2]
ATOM = MMAAtom((16, 8, 16), BFloat16, Float32)
SWIZZLED = ComposedLayout(element_swizzle(128, 2), Layout((8, 64), (64, 1)))


def cells(svg: str) -> dict[tuple[int, int], tuple[list[str], ET.Element]]:
    """{(row, col): (text lines, cell group)} read back from the SVG (which must parse)."""
    out = {}
    for g in ET.fromstring(svg).iter(f"{NS}g"):
        if g.get("class") != "cell":
            continue
        title = g.find(f"{NS}title").text
        r, c = map(int, re.match(r"\((\d+), (\d+)\):", title).groups())
        text = g.find(f"{NS}text")
        lines = [] if text is None else (
            [s.text for s in text.iter(f"{NS}tspan")] or [text.text])
        out[(r, c)] = (lines, g)
    return out


def a_m16n8k16(lane, i):
    """PTX ISA m16n8k16 .bf16 A fragment: (row, col) of element a_i of `lane`."""
    g, t = lane >> 2, lane % 4
    return g + 8 * (i in (2, 3, 6, 7)), 2 * t + (i & 1) + 8 * (i >= 4)


# --- ownership pictures ---------------------------------------------------------------------------
def test_mma_a_operand_cells_match_ptx_formula():
    svg = draw_ownership(ATOM.operand_layout("A"))
    got = cells(svg)
    assert len(got) == 16 * 16
    assert got[(1, 10)][0] == ["T5", "V4"]  # lane 5, a4 -> (1, 10)
    for lane in range(32):
        for i in range(8):
            assert got[a_m16n8k16(lane, i)][0] == [f"T{lane}", f"V{i}"]


def test_ownership_colours_stable_and_legend():
    got = cells(draw_ownership(ATOM.operand_layout("C")))
    fill = {lines[0]: g.find(f"{NS}rect").get("fill") for lines, g in got.values()}
    assert fill["T0"] == fill["T16"] != fill["T1"]  # 16-colour palette, thread modulo 16
    assert len(got) == 16 * 8


def test_replicated_ownership_has_marker_and_tooltip():
    o = Ownership((2, 4), Layout((2, 8), (0, 1)))  # both threads hold every element
    got = cells(draw_ownership(o))
    lines, g = got[(1, 2)]
    assert lines == ["T0", "V5"]
    assert g.find(f"{NS}polygon") is not None
    assert "held by 2: T0 V5, T1 V5" in g.find(f"{NS}title").text


def test_thread_subset_leaves_other_cells_blank(tmp_path):
    path = tmp_path / "a.svg"
    svg = draw_ownership(ATOM.operand_layout("A"), path, threads=[5])
    assert path.read_text() == svg
    got = cells(svg)
    held = {crd for crd, (lines, _) in got.items() if lines}
    assert held == {a_m16n8k16(5, i) for i in range(8)}


def test_large_ownership_shows_thread_numbers_only():
    plan = TiledMMA(ATOM, (2, 2), (2, 16))
    o = plan.operand_layout("C")
    assert (o.shape, o.threads) == ((64, 256), 128)
    got = cells(draw_ownership(o))
    assert len(got) == 64 * 256
    table = o.table()
    for t in (0, 37, 127):
        r, c = table[t][5]
        assert got[(r, c)][0] == [f"T{t}"]
    by_warp = cells(draw_ownership(o, colour_by="warp", labels="none"))
    fills = {t: by_warp[tuple(table[t][0])][1].find(f"{NS}rect").get("fill") for t in (0, 31, 32)}
    assert fills[0] == fills[31] != fills[32]


# --- layouts, banks, conflicts ------------------------------------------------------------------
def test_swizzled_offsets_and_banks_match_tma_formula():
    got = cells(draw_layout(SWIZZLED, element_bytes=2))
    assert len(got) == 8 * 64
    for r in range(8):
        for k in range(64):
            offset = 64 * r + (k ^ (8 * (r % 8)))
            assert got[(r, k)][0] == [str(offset), f"b{offset * 2 // 4 % 32}"]


def test_offsets_only_and_rank1():
    got = cells(draw_layout(Layout(8, 2)))
    assert {crd: lines for crd, (lines, _) in got.items()} == {
        (0, c): [str(2 * c)] for c in range(8)}


@st.composite
def rank2_layouts(draw):
    def mode():
        shape = draw(st.lists(st.integers(1, 4), min_size=1, max_size=2))
        stride = draw(st.lists(st.integers(0, 40), min_size=len(shape), max_size=len(shape)))
        return (tuple(shape), tuple(stride)) if len(shape) > 1 else (shape[0], stride[0])
    (s0, d0), (s1, d1) = mode(), mode()
    return Layout((s0, s1), (d0, d1))


@settings(max_examples=60, deadline=None)
@given(rank2_layouts(), st.sampled_from([None, (2, 1, 3), (1, 2, -2)]))
def test_offset_grid_is_layout_evaluation(layout, sw):
    drawn = layout if sw is None else ComposedLayout(Swizzle(*sw), layout)
    grid = offset_grid(drawn)
    rows, cols = grid.shape
    assert rows * cols == layout.size()
    for r in range(rows):
        for c in range(cols):
            assert grid[r, c] == drawn((r, c))


def test_bank_conflicts_known_values():
    tile = Layout((32, 32), (32, 1))
    assert bank_conflicts(tile, 4, "columns") == 32
    assert bank_conflicts(tile, 4, "rows") == 1
    assert bank_conflicts(Layout((32, 32), (33, 1)), 4, "columns") == 1  # padded rows
    plain = Layout((8, 64), (64, 1))
    assert bank_conflicts(SWIZZLED, 2, "chunks") == 1
    assert bank_conflicts(plain, 2, "chunks") == 8
    assert bank_conflicts(plain, 2, [[(0, 0), (0, 1)]]) == 1  # same word: broadcast
    assert bank_conflicts(Layout(64, 1), 8, [[0, 16]]) == 2  # 8-byte elements span 2 banks


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 32), st.integers(1, 70))
def test_column_read_conflict_degree(rows, cols):
    period = 32 // math.gcd(cols, 32)  # rows apart that land on the same bank
    layout = Layout((rows, cols), (cols, 1))
    assert bank_conflicts(layout, 4, "columns") == math.ceil(rows / period)


@pytest.mark.parametrize("row_bytes", [32, 64, 128])
@pytest.mark.parametrize("element_bytes", [1, 2, 4])
def test_every_swizzle_mode_removes_chunk_conflicts(row_bytes, element_bytes):
    n = row_bytes // element_bytes
    plain = Layout((8, n), (n, 1))
    assert bank_conflicts(plain, element_bytes, "chunks") == row_bytes // 16
    swizzled = ComposedLayout(element_swizzle(row_bytes, element_bytes), plain)
    assert bank_conflicts(swizzled, element_bytes, "chunks") == 1


def test_conflict_view_marks_cells_and_title():
    svg = draw_layout(Layout((8, 64), (64, 1)), element_bytes=2, access="chunks")
    title = "".join(ET.fromstring(svg).find(f"{NS}text").itertext())
    assert "read by chunks: 8-way bank conflict" in title
    got = cells(svg)
    assert all(len(g.findall(f"{NS}rect")) == 2 for _, g in got.values())  # fill + red outline
    svg = draw_layout(SWIZZLED, element_bytes=2, access="chunks")
    title = "".join(ET.fromstring(svg).find(f"{NS}text").itertext())
    assert "read by chunks: no bank conflict" in title
    got = cells(svg)
    assert all(len(g.findall(f"{NS}rect")) == 1 for _, g in got.values())


# --- PNG ------------------------------------------------------------------------------------------
def test_png_without_rasterizer_raises(tmp_path, monkeypatch):
    monkeypatch.setattr(raster, "_cairosvg", lambda: None)
    monkeypatch.setattr(raster.shutil, "which", lambda name: None)
    path = tmp_path / "a.png"
    with pytest.raises(NoRasterizerError, match="none is installed"):
        draw_ownership(ATOM.operand_layout("A"), path)
    assert not path.exists()


@pytest.mark.skipif(not available_rasterizers(), reason="no SVG rasterizer installed")
def test_png_with_rasterizer(tmp_path):
    path = tmp_path / "a.png"
    draw_layout(SWIZZLED, path, element_bytes=2)
    assert path.read_bytes()[:8] == raster.PNG_MAGIC


# --- rejections -----------------------------------------------------------------------------------
@pytest.mark.parametrize("call, error, message", [
    (lambda: draw_layout(Layout((2, 2, 2))), LayoutError, r"rank 3; a picture has two axes"),
    (lambda: draw_layout(Layout((8, DYNAMIC), (DYNAMIC, 1))), LayoutError,
     r"an extent is the runtime value \?"),
    (lambda: draw_layout(Layout((8, 8), (DYNAMIC, 1))), LayoutError,
     r"a stride is the runtime value \?"),
    (lambda: draw_layout("8:1"), LayoutError, r"is not a Layout or ComposedLayout"),
    (lambda: draw_layout(Layout((4, 4)), element_bytes=0), GeometryError,
     r"element_bytes = 0 must be a positive int"),
    (lambda: bank_conflicts(Layout((4, 4)), 4, "rows", bank_bytes=-4), GeometryError,
     r"bank_bytes = -4 must be a positive int"),
    (lambda: bank_conflicts(Layout((4, 4)), 4, "rows", banks=0), GeometryError,
     r"banks = 0 must be a positive int"),
    (lambda: bank_conflicts(Layout((4, 4)), 4, "diagonals"), GeometryError,
     r"access='diagonals' is not one of"),
    (lambda: bank_conflicts(Layout((4, 4)), 4, []), GeometryError, r"no group given"),
    (lambda: bank_conflicts(Layout((4, 4)), 4, [[(0, 0)], []]), GeometryError,
     r"group 1 is empty"),
    (lambda: bank_conflicts(Layout((4, 4)), 4, [[(4, 0)]]), GeometryError,
     r"coordinate \(4, 0\) in group 0 is outside the 4x4 grid"),
    (lambda: bank_conflicts(Layout((4, 4)), 4, [[(0, 0, 0)]]), GeometryError,
     r"not a \(row, col\) pair of ints"),
    (lambda: bank_conflicts(Layout((4, 4)), 4, 7), GeometryError, r"nor a list of groups"),
    (lambda: access_groups((8, 8), "chunks", 3), GeometryError,
     r"access='chunks' needs element_bytes of 1, 2, 4, 8 or 16"),
    (lambda: draw_ownership(Layout((32, 8))), GeometryError, r"is not an Ownership"),
    (lambda: draw_ownership(ATOM.operand_layout("A"), threads=[32]), GeometryError,
     r"thread 32 in threads is outside 0..31"),
    (lambda: draw_ownership(ATOM.operand_layout("A"), threads=[]), GeometryError,
     r"threads is empty"),
    (lambda: draw_ownership(ATOM.operand_layout("A"), labels="slots"), PictureError,
     r"labels='slots' is not one of"),
    (lambda: draw_ownership(ATOM.operand_layout("A"), colour_by="lane"), PictureError,
     r"colour_by='lane' is not one of"),
    (lambda: draw_ownership(ATOM.operand_layout("A"), "/tmp/x.pdf"), PictureError,
     r"suffix '.pdf' is not a picture format"),
])
def test_rejections(call, error, message):
    with pytest.raises(error, match=message):
        call()
    assert issubclass(error, TyloError)


# --- the docs pictures are what docs/make_pictures.py draws -------------------------------------
def test_docs_pictures_up_to_date(tmp_path):
    script = ROOT / "docs" / "make_pictures.py"
    spec = importlib.util.spec_from_file_location("make_pictures", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    failed = module.make(tmp_path)
    committed = {p.name for p in (ROOT / "docs" / "img").glob("*.svg")}
    assert {"mma_m16n8k16_A.svg", "mma_m16n8k16_C.svg", "swizzle_128B_bf16.svg",
            "no_swizzle_bf16.svg"} <= committed
    for name in committed:
        assert name not in failed, failed.get(name)
        fresh = (tmp_path / name).read_text()
        committed_svg = (ROOT / "docs" / "img" / name).read_text()
        assert fresh == committed_svg, f"rerun docs/make_pictures.py: {name} is stale"
