"""swizzled_structure: structural recognition of canonical swizzled encodings, and its inverse."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from runtime_int import RuntimeInt

from tylo.compiler.hardware.dtypes import BFloat16, Float8E4M3, Float16, Float32, Int8
from tylo.compiler.support.errors import GeometryError, LayoutError
from tylo.compiler.layout.layout import Layout
from tylo.compiler.layout.offsets import offset_grid
from tylo.compiler.plans.swizzled_structure import (
    SwizzledStructure,
    structure_layout,
    swizzled_structure,
)
from tylo.compiler.layout.swizzle import ComposedLayout, Swizzle

FAST = settings(max_examples=80, deadline=None)
BY_BYTES = {1: Float8E4M3, 2: BFloat16, 4: Float32}


def sw(bits, e):
    """Swizzle(B, M, 3) of rows of 16 << bits bytes over e-byte elements."""
    return Swizzle(bits, 4 - (e.bit_length() - 1), 3)


@st.composite
def canonical(draw):
    """A random canonical encoding, with the parameters it was built from.

    The contiguous axis is written as one row mode or split into 16-byte chunks; the 8-row axis
    as (8, q) or, when dense, as one mode or a (2, 4 q) split."""
    e = draw(st.sampled_from([1, 2, 4]))
    bits = draw(st.integers(0, 3))
    r, chunk = (16 << bits) // e, 16 // e
    period = 8 * r
    step = period if bits else chunk
    groups, q = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    lead = draw(st.integers(1, 2 * groups * q + 2)) * step
    stride = draw(st.integers(1, 2 * groups * q + 2)) * step
    bases = sorted(g * lead + j * stride for g in range(groups) for j in range(q))
    if any(b - a < period for a, b in zip(bases, bases[1:])):
        # fall back to a dense arrangement: 8-row groups packed, row groups after them
        stride, lead = period, q * period
    if draw(st.booleans()) and bits:
        along_s, along_d = (chunk, 1 << bits), (1, chunk)
    else:
        along_s, along_d = r, 1
    if groups > 1:
        along_s, along_d = (along_s, groups), (along_d, lead)
    if stride == period and draw(st.booleans()):
        other_s, other_d = ((2, 4 * q), (r, 2 * r)) if draw(st.booleans()) else (8 * q, r)
    else:
        other_s, other_d = (8, q), (r, stride)
    a = draw(st.integers(0, 1))
    shape_t = (along_s, other_s) if a == 0 else (other_s, along_s)
    stride_t = (along_d, other_d) if a == 0 else (other_d, along_d)
    inner = Layout(shape_t, stride_t)
    layout = ComposedLayout(sw(bits, e), inner) if bits or draw(st.booleans()) else inner
    shape = (groups * r, 8 * q) if a == 0 else (8 * q, groups * r)
    params = dict(e=e, bits=bits, r=r, groups=groups, q=q, lead=lead if groups > 1 else None,
                  stride=stride if q > 1 else period, a=a, shape=shape, inner=inner)
    return layout, params


@FAST
@given(canonical(), st.integers(0, 1))
def test_accepts_canonical_layouts_and_rebuilds_them(case, kaxis):
    layout, p = case
    s = swizzled_structure(layout, BY_BYTES[p["e"]], kaxis)
    assert s is not None
    assert s.major == ("K" if p["a"] == kaxis else "MN")
    assert s.swizzle_bytes == 16 << p["bits"]
    assert s.row_elements == p["r"]
    assert s.groups == p["groups"]
    assert s.stride_bytes == p["stride"] * p["e"]
    if p["lead"] is not None:
        assert s.leading_bytes == p["lead"] * p["e"]
    rebuilt = structure_layout(s, p["shape"], kaxis)
    assert np.array_equal(offset_grid(rebuilt), offset_grid(layout))
    assert swizzled_structure(rebuilt, BY_BYTES[p["e"]], kaxis) == s


def _near_misses(layout, p):
    """Layouts one rule away from canonical, each paired with the rule it breaks."""
    e, bits, r, a, inner = p["e"], p["bits"], p["r"], p["a"], p["inner"]
    m = 4 - (e.bit_length() - 1)
    swz = sw(bits, e)
    out = []
    if bits:
        out.append(("swizzle base", ComposedLayout(Swizzle(bits, m + 1, 3), inner)))
        if m > 0:
            out.append(("swizzle base", ComposedLayout(Swizzle(bits, m - 1, 3), inner)))
    for b2 in {1, 2, 3} - {bits}:
        out.append(("swizzle bits", ComposedLayout(Swizzle(b2, m, 3), inner)))
    along, other = inner[a], inner[1 - a]
    y, q = 8 * p["q"], p["q"]

    def put(al, ot):
        modes = (al, ot) if a == 0 else (ot, al)
        shape, stride = tuple(x.shape for x in modes), tuple(x.stride for x in modes)
        return ComposedLayout(swz, Layout(shape, stride))

    chunk = 16 // e
    skew = Layout((8, q), (r + chunk, p["stride"] + 8 * chunk))
    out.append(("rows not packed", put(along, skew)))
    out.append(("rows not packed", put(along, Layout(y, 2 * r))))
    out.append(("4-row groups", put(along, Layout((4, 2 * q), (r, 8 * r * (q + 1))))))
    out.append(("rows not a multiple of 8", put(along, Layout(y + 4, r))))
    if q > 1:
        off = p["stride"] + (chunk if bits else 1)
        out.append(("8-row stride off the period", put(along, Layout((8, q), (r, off)))))
    if p["groups"] > 1 and q > 1:
        same = Layout((r, p["groups"]), (1, p["stride"]))
        out.append(("overlapping blocks", put(same, Layout((8, q), (r, p["stride"])))))
    out.append(("row longer than the swizzle", put(Layout(2 * r, 1), Layout(y, 2 * r))))
    if bits:
        out.append(("row shorter than the swizzle", put(Layout(r // 2, 1), Layout(y, r))))
    out.append(("broken chunk", put(Layout((chunk, 2), (1, chunk + 1)), other)))
    out.append(("wrong dtype", layout, {1: 2, 2: 4, 4: 1}[e]))
    return out


@FAST
@given(canonical(), st.integers(0, 1))
def test_rejects_near_misses(case, kaxis):
    layout, p = case
    for name, bad, *e in _near_misses(layout, p):
        dtype = BY_BYTES[e[0] if e else p["e"]]
        assert swizzled_structure(bad, dtype, kaxis) is None, (name, bad)


def test_tma_style_examples():
    k128 = ComposedLayout(Swizzle(3, 3, 3), Layout((128, 64), (64, 1)))
    assert swizzled_structure(k128, BFloat16, 1) == SwizzledStructure("K", 128, 16384, 1024, 64, 1)
    assert swizzled_structure(k128, BFloat16, 0).major == "MN"
    mn64 = ComposedLayout(Swizzle(2, 2, 3), Layout((16, 64), (1, 16)))
    assert swizzled_structure(mn64, Float32, 1) == SwizzledStructure("MN", 64, 4096, 512, 16, 1)
    assert swizzled_structure(mn64, Float32, 0).major == "K"
    # two 128-byte row groups along K (K = 128 bf16), stored as two TMA boxes one after the other
    two = ComposedLayout(Swizzle(3, 3, 3), Layout((64, (64, 2)), (64, (1, 4096))))
    assert swizzled_structure(two, Float16, 1) == SwizzledStructure("K", 128, 8192, 1024, 64, 2)
    # unswizzled K-major: 16-byte rows, core matrices along M packed, K groups 2048 bytes apart
    plain = Layout(((8, 16), (8, 2)), ((8, 64), (1, 1024)))
    assert swizzled_structure(plain, BFloat16, 1) == SwizzledStructure("K", 16, 2048, 128, 8, 2)
    assert swizzled_structure(ComposedLayout(Swizzle(0, 3, 3), plain), BFloat16, 1) is not None
    int8 = ComposedLayout(Swizzle(3, 4, 3), Layout((8, 128), (128, 1)))
    assert swizzled_structure(int8, Int8, 1) == SwizzledStructure("K", 128, 1024, 1024, 128, 1)


def test_rejects_other_shapes_and_runtime_layouts():
    row = RuntimeInt("row_stride", [])
    assert swizzled_structure(ComposedLayout(Swizzle(3, 3, 3), Layout((128, 64), (row, 1))),
                              BFloat16, 1) is None
    assert swizzled_structure(ComposedLayout(Swizzle(3, 3, 3), Layout(64, 1)), BFloat16, 1) is None
    assert swizzled_structure(ComposedLayout(Swizzle(3, 3, 3), Layout((8, 64, 2), (64, 1, 512))),
                              BFloat16, 1) is None
    # a layout whose rows go along both axes at once (no stride-1 axis)
    assert swizzled_structure(Layout((8, 8), (16, 2)), BFloat16, 1) is None
    # dense 8-row groups followed by a differently strided group: no single stride
    uneven = ComposedLayout(Swizzle(3, 3, 3), Layout(((16, 2), 64), ((64, 4096), 1)))
    assert swizzled_structure(uneven, BFloat16, 1) is None


def test_rejections_raise_for_bad_arguments():
    k128 = ComposedLayout(Swizzle(3, 3, 3), Layout((128, 64), (64, 1)))
    with pytest.raises(GeometryError, match="swizzled_structure: kaxis 2 must be 0 \\(rows\\) or 1 \\(columns\\)"):
        swizzled_structure(k128, BFloat16, 2)
    with pytest.raises(LayoutError, match="is not a Layout or a ComposedLayout"):
        swizzled_structure("(8,64):(64,1)", BFloat16, 1)
    s = swizzled_structure(k128, BFloat16, 1)
    with pytest.raises(GeometryError, match="axis 1 extent 32 is not groups \\* row_elements"):
        structure_layout(s, (128, 32), 1)
    with pytest.raises(GeometryError, match="axis 0 extent 12 is not a positive multiple of 8"):
        structure_layout(s, (12, 64), 1)
    with pytest.raises(GeometryError, match="kaxis 3"):
        structure_layout(s, (128, 64), 3)
    with pytest.raises(GeometryError, match="must have two extents"):
        structure_layout(s, (128, 64, 1), 1)


def test_structure_properties():
    s = SwizzledStructure("MN", 64, 512, 2048, 32, 2)
    assert (s.element_bytes, s.period_bytes, s.swizzled, s.mode.name) == (2, 512, True, "64B")
    assert not SwizzledStructure("K", 16, 2048, 128, 8, 2).swizzled
