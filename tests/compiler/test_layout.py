"""Layout: construction, evaluation, printing, and the defining property of each operation."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from layout_strategies import flat_modes, layouts, pow2_layouts, values

from tylo.compiler.support.errors import LayoutError
from tylo.compiler.layout.layout import (
    Layout, coalesce, complement, compose, cosize, filter_layout, logical_divide, make_layout,
    size, tile,
)
from tylo.compiler.layout.parse import parse_layout

FAST = settings(max_examples=80, deadline=None)


# --- construction, evaluation, printing ------------------------------------------------------


def test_default_stride_is_column_major():
    assert Layout((2, 3, 5, 7)).stride == (1, 2, 6, 30)
    assert Layout(((2, 3), 4)).stride == ((1, 2), 6)
    assert Layout(8).stride == 1
    assert Layout([4, [2, 3]], [1, [4, 8]]).shape == (4, (2, 3))


@pytest.mark.parametrize("shape, stride, message", [
    ((4, 2), (1,), "not congruent"),
    ((4, (2, 3)), (1, 2, 6), "not congruent"),
    ((4, 0), (1, 4), "extent 0 is not positive"),
    ((4, 2), (1, -4), "stride -4 is negative"),
    ((4, 2.0), None, "invalid shape leaf 2.0"),
    ((4, True), None, "invalid shape leaf True"),
])
def test_invalid_layouts_are_rejected(shape, stride, message):
    with pytest.raises(LayoutError, match=message):
        Layout(shape, stride)


def test_evaluation_matches_the_docs_example():
    layout = Layout((3, (2, 3)), (3, (12, 1)))
    assert layout(16) == layout((1, 5)) == layout((1, (1, 2))) == layout(1, (1, 2)) == 17
    grid = Layout((4, 2), (1, 4))
    assert [[grid((r, c)) for c in range(2)] for r in range(4)] == [[0, 4], [1, 5], [2, 6], [3, 7]]
    with pytest.raises(LayoutError, match="does not match shape"):
        layout((1, 2, 3))


@pytest.mark.parametrize("text", [
    "(4,(2,3)):(1,(4,8))", "8:1", "(8):(1)", "(2,3,5,7):(1,2,6,30)", "((2,2),(2,2)):((1,32),(8,4))",
    "1:0", "Sw<3,3,3> o (8,64):(64,1)",
])
def test_printing_round_trips(text):
    parsed = parse_layout(text)
    assert str(parsed) == text == repr(parsed)
    assert parse_layout(str(parsed)) == parsed


@FAST
@given(layouts())
def test_parse_inverts_str(layout):
    assert parse_layout(str(layout)) == layout


@pytest.mark.parametrize("text", ["(4,2):(1)x", "(4,2)", "4:(1", "Sw<3,3> o 8:1", "(a):(1)"])
def test_malformed_text_is_rejected(text):
    with pytest.raises(LayoutError):
        parse_layout(text)


@pytest.mark.parametrize("text", [5, None, b"8:1"])
def test_parse_needs_a_str(text):
    with pytest.raises(LayoutError, match=r"parse_layout\(.*\): expected the text of a layout, a str"):
        parse_layout(text)


def test_a_mode_index_may_be_a_numpy_integer():
    assert Layout((4, 8), (8, 1))[np.int64(1)] == Layout(8, 1)


@pytest.mark.parametrize("index", ["x", 1.0, True, None])
def test_a_mode_index_must_be_an_int(index):
    with pytest.raises(LayoutError, match=r"\(4,8\):\(8,1\): mode index .* is not an int"):
        Layout((4, 8), (8, 1))[index]


def test_modes_equality_and_hash():
    layout = Layout((4, (2, 3)), (1, (4, 8)))
    assert layout[1] == Layout((2, 3), (4, 8)) and layout[-1] == layout[1]
    assert layout.rank() == 2 and layout.depth() == 2 and layout.is_static()
    assert Layout(8, 1)[0] == Layout(8, 1)
    assert len({layout, Layout((4, (2, 3)), (1, (4, 8))), Layout((4, 6))}) == 2
    assert Layout(8, 1) != Layout((8,), (1,))
    assert make_layout(Layout(4, 1), Layout((2, 3), (4, 8))) == layout
    with pytest.raises(LayoutError, match="no mode 2"):
        layout[2]
    with pytest.raises(AttributeError):
        layout._shape = 3


def test_size_and_cosize_of_a_broadcast_layout():
    layout = Layout((4, (2, 3)), (0, (1, 8)))
    assert size(layout) == 24 and cosize(layout) == 18
    assert layout.rank() == 2 and layout.depth() == 2


@FAST
@given(layouts())
def test_cosize_is_the_largest_offset_plus_one(layout):
    assert layout.cosize() == max(values(layout)) + 1


# --- coalesce --------------------------------------------------------------------------------


@FAST
@given(layouts())
def test_coalesce_keeps_size_and_function(layout):
    result = coalesce(layout)
    assert result.size() == layout.size()
    assert values(result) == values(layout)
    assert result.depth() <= 1
    modes = flat_modes(result)
    assert result == Layout(1, 0) or all(s != 1 for s, _ in modes)
    assert all(s0 * d0 != d1 for (s0, d0), (_, d1) in zip(modes, modes[1:]))


@FAST
@given(layouts(tuple_shape=True))
def test_coalesce_by_mode_keeps_the_modes(layout):
    result = coalesce(layout, (1,) * layout.rank())
    assert result.rank() == layout.rank()
    for i in range(layout.rank()):
        assert result[i] == coalesce(layout[i])
    assert values(result) == values(layout)


def test_coalesce_examples():
    assert coalesce(Layout((2, (1, 6)), (1, (6, 2)))) == Layout(12, 1)
    assert coalesce(Layout((2, (1, 6)), (1, (6, 2))), (1, 1)) == Layout((2, 6), (1, 2))
    assert coalesce(Layout((1, 1), (5, 7))) == Layout(1, 0)
    assert coalesce(Layout((2, 4, 6), (24, 6, 1))) == Layout((2, 4, 6), (24, 6, 1))
    # Modes beyond the profile are kept as they are.
    assert coalesce(Layout(((2, 2), (2, 2)), ((1, 2), (8, 16))), (1,)) == Layout((4, (2, 2)), (1, (8, 16)))
    with pytest.raises(LayoutError, match="profile has more modes"):
        coalesce(Layout(8, 1), (1, 1))
    assert coalesce(Layout((2, (1, 6)), (1, (6, 2))), [1, 1]) == Layout((2, 6), (1, 2))


@pytest.mark.parametrize("fn", [coalesce, filter_layout])
@pytest.mark.parametrize("profile", ["x", 1.0, True, (1, "x")])
def test_a_profile_must_be_none_an_int_or_a_tuple(fn, profile):
    name = "coalesce" if fn is coalesce else "filter"
    with pytest.raises(LayoutError, match=f"{name}\\(.*, .*\\): the profile must be None, an "
                                          "int or a tuple of profiles"):
        fn(Layout((4, 8), (8, 1)), profile)


# --- compose ---------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(pow2_layouts(), pow2_layouts())
def test_compose_of_powers_of_two(a, b):
    injective = len(set(values(b))) == b.size()
    try:
        result = compose(a, b)
    except LayoutError as e:
        # Powers of two always divide one another: only b's overlapping modes can be refused.
        assert not injective and "overlap" in str(e)
        return
    assert result.size() == b.size()
    assert [result(i) for i in range(b.size())] == [a(b(i)) for i in range(b.size())]
    if isinstance(b.shape, tuple):  # the result keeps b's modes
        assert result.rank() == b.rank()
        assert [result[k].size() for k in range(b.rank())] == [b[k].size() for k in range(b.rank())]


@settings(max_examples=150, deadline=None)
@given(layouts(max_size=64), layouts(strides=st.integers(0, 12), max_size=32))
def test_compose_is_a_of_b_whenever_defined(a, b):
    try:
        result = compose(a, b)
    except LayoutError as e:
        assert str(a) in str(e) and str(b) in str(e)
        assume(False)  # counted as invalid: a compose that always raised would fail the health check
    assert [result(i) for i in range(b.size())] == [a(b(i)) for i in range(b.size())]


@FAST
@given(layouts(), st.integers(1, 48))
def test_compose_with_an_int_takes_a_prefix(a, n):
    whole = compose(a, a.size())  # always defined: every extent divides what remains
    assert values(whole) == values(a)
    try:
        result = compose(a, n)
    except LayoutError as e:
        assert "divisibility fails" in str(e)
        return
    assert result.size() == n
    assert [result(i) for i in range(n)] == [a(i) for i in range(n)]


def test_compose_examples_and_cpp_semantics():
    assert compose(Layout(20, 2), Layout((5, 4), (4, 1))) == Layout((5, 4), (8, 2))
    assert compose(Layout((4, 3), (3, 1)), Layout(6, 2)) == Layout((2, 3), (6, 1))
    # C++ last-mode extension: a trailing 1:0 mode gives the extension stride 0 (pycute: 4,6:3,1).
    assert compose(Layout((4, 3, 1), (3, 1, 0)), 24) == Layout((4, 3, 2), (3, 1, 0))
    assert compose(Layout(1, 1), Layout(4, 1)) == Layout(4, 1)  # pycute gives 4:0
    # A by-mode tiler drops the modes of a it does not reach (C++), unlike logical_divide.
    a = Layout((8, 8, 2), (8, 1, 64))
    by_mode = compose(a, (Layout(4, 2), 2))
    assert by_mode == Layout((4, 2), (16, 1))
    with pytest.raises(LayoutError, match="the tiler has 4 modes, the layout only 3"):
        compose(a, (1, 1, 1, 1))


def test_compose_refuses_undefined_cases():
    with pytest.raises(LayoutError, match=r"compose\(\(8,8\):\(8,1\), 4:3\).*stride 3 and extent 8"):
        compose(Layout((8, 8), (8, 1)), Layout(4, 3))
    with pytest.raises(LayoutError, match="shape divisibility fails: extent 3 is not divisible by 2"):
        compose(Layout((4, 5), (1, 7)), Layout(3, 2))
    # C++'s weak check would accept this and return (2,2):(4,7), which is not a(b(c)).
    a, b = Layout((6, 2), (1, 7)), Layout(4, 4)
    assert [a(b(i)) for i in range(4)] == [0, 4, 9, 14]  # not affine: no layout represents it
    with pytest.raises(LayoutError, match="stride divisibility fails"):
        compose(a, b)
    # Per-mode composition is wrong when b's modes overlap on a mode of a (C++ returns (2,2):(1,2)).
    a, b = Layout((3, 3), (1, 10)), Layout((2, 2), (1, 2))
    assert [a(b(i)) for i in range(4)] == [0, 1, 2, 10]
    with pytest.raises(LayoutError, match="sum to 3 >= 3"):
        compose(a, b)
    assert values(compose(Layout((4, 4), (1, 10)), Layout((2, 4), (1, 2)))) == [0, 1, 2, 3, 10, 11, 12, 13]


# --- complement and logical_divide (complement in depth: test_layout_complement.py) -----------


@st.composite
def sub_layouts_of_compact(draw):
    """A subset of the modes of a compact layout, in a random order, and that layout's size."""
    shape = draw(st.lists(st.integers(2, 4), min_size=1, max_size=4))
    strides = [1]
    for s in shape[:-1]:
        strides.append(strides[-1] * s)
    picked = draw(st.permutations(range(len(shape))).map(lambda p: p[:max(1, len(p) // 2 + 1)]))
    picked = picked[: draw(st.integers(1, len(picked)))]
    layout = Layout(tuple(shape[i] for i in picked), tuple(strides[i] for i in picked))
    return layout, strides[-1] * shape[-1]


@FAST
@given(sub_layouts_of_compact())
def test_complement_completes_a_compact_layout(case):
    layout, total = case
    comp = complement(layout, total)
    joined = make_layout(layout, comp)
    assert sorted(values(joined)) == list(range(total))


@pytest.mark.parametrize("call, message", [
    (lambda a: compose(a, 0), r"compose\(\(4,8\):\(8,1\), 0\): the int tiler 0 must be a positive "
                              "extent"),
    (lambda a: compose(a, -2), r"compose\(.*, -2\): the int tiler -2 must be a positive extent"),
    (lambda a: logical_divide(a, 0), r"logical_divide\(\(4,8\):\(8,1\), 0\): the int tiler 0 "
                                     "must be a positive extent"),
    (lambda a: complement(a, 0), r"complement\(\(4,8\):\(8,1\), 0\): the cotarget's size 0 is "
                                 "not positive"),
    (lambda a: complement(a, -4), r"complement\(.*, -4\): the cotarget's size -4 is not positive"),
    (lambda a: complement(a, (4, 0)), r"complement\(.*, \(4,0\)\): the cotarget's size 0"),
])
def test_int_tilers_and_cotargets_must_be_positive(call, message):
    with pytest.raises(LayoutError, match=message):
        call(Layout((4, 8), (8, 1)))


def test_complement_examples():
    assert complement(Layout(4, 2), 24) == Layout((2, 3), (1, 8))
    assert complement(Layout((2, 4), (1, 6))) == Layout(3, 2)
    assert complement(Layout(4, 0)) == Layout(1, 0)
    assert complement(Layout(4, 1), (2, 4)) == Layout(2, 4)
    with pytest.raises(LayoutError, match=r"stride 1 < 2, the extent they cover\); it is not "
                       r"injective: layout\(1\) == layout\(2\) == 1"):
        complement(Layout((2, 2), (1, 1)))


@FAST
@given(layouts(max_size=64), st.sampled_from([1, 2, 4, 8]), st.sampled_from([1, 2, 3]))
def test_logical_divide_keeps_the_function(layout, n, step):
    tiler = Layout(n, step)
    try:
        result = logical_divide(layout, tiler)
    except LayoutError:
        assume(False)  # as above: the health check catches a divide that always raises
    assert result.rank() == 2 and result[0].size() == n
    assert [result[0](i) for i in range(n)] == [layout(tiler(i)) for i in range(n)]
    assert result.size() >= layout.size()


def test_logical_divide_examples():
    layout = Layout((4, 2, 3), (2, 1, 8))
    assert logical_divide(layout, Layout(4, 2)) == Layout(((2, 2), (2, 3)), ((4, 1), (2, 8)))
    assert logical_divide(Layout(96, 1), Layout(32, 2)) == Layout((32, (2, 2)), (2, (1, 64)))
    # A by-mode tiler keeps the modes it does not reach.
    matrix = Layout((16, 32, 2))
    assert logical_divide(matrix, (8,)) == Layout(((8, 2), 32, 2), ((1, 8), 16, 512))


# --- tile ------------------------------------------------------------------------------------


@st.composite
def tiled_cases(draw):
    layout = draw(layouts(tuple_shape=True, max_size=96))
    tiler = tuple(draw(st.sampled_from([d for d in range(1, m.size() + 1) if m.size() % d == 0]))
                  for m in layout.modes())
    return layout, tiler


@FAST
@given(tiled_cases())
def test_tile_factors_each_mode(case):
    layout, tiler = case
    try:
        result = tile(layout, tiler)
    except LayoutError:  # a hierarchical mode the tile does not split evenly
        assert any(isinstance(m.shape, tuple) for m in layout.modes())
        return
    assert result.rank() == layout.rank()
    for i, t in enumerate(tiler):
        assert result[i].rank() == 2
        assert (result[i][0].size(), result[i][1].size()) == (t, layout[i].size() // t)
        n = layout[i].size()
        tiled_order = [result[i]((a, b)) for b in range(n // t) for a in range(t)]
        assert tiled_order == [layout[i](k) for k in range(n)]


def test_tile_examples():
    tiled = tile(Layout((16, 32)), (8, 16))
    assert tiled.shape == ((8, 2), (16, 2))
    assert tiled == Layout(((8, 2), (16, 2)), ((1, 8), (16, 256)))
    assert tiled(((3, 1), (5, 1))) == Layout((16, 32))((11, 21))
    assert tile(Layout(12, 2), 4) == Layout(((4, 3),), ((2, 8),))
    with pytest.raises(LayoutError, match="tile extent 12 does not divide mode 1 of extent 32"):
        tile(Layout((16, 32)), (8, 12))
    with pytest.raises(LayoutError, match="expected 2 tile extents"):
        tile(Layout((16, 32)), (8,))


def test_make_layout_takes_cute_forms():
    from tylo.compiler.layout.layout import LayoutLeft, LayoutRight, make_layout

    assert make_layout((4, 8)) == Layout((4, 8), (1, 4)) == make_layout((4, 8), LayoutLeft)
    assert make_layout((4, 8), LayoutRight) == Layout((4, 8), (8, 1))
    assert make_layout((2, (3, 4)), LayoutRight) == Layout((2, (3, 4)), (12, (4, 1)))
    assert make_layout((4, 8), (2, 16)) == Layout((4, 8), (2, 16))
    assert make_layout(Layout(4), Layout(8, 4)) == Layout((4, 8), (1, 4))
    with pytest.raises(LayoutError, match="expected layouts to concatenate, or a shape"):
        make_layout(Layout(4), (8,))
