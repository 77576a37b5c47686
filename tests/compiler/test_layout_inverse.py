"""Right and left inverses (CuTe C++ definitions), and what they refuse."""

import pytest
from layout_strategies import values
from runtime_int import RuntimeInt

from tylo.compiler.support.errors import LayoutError
from tylo.compiler.layout.inverse import left_inverse, right_inverse
from tylo.compiler.layout.layout import Layout, compose
from tylo.compiler.layout.parse import parse_layout
from tylo.compiler.layout.swizzle import ComposedLayout, Swizzle


@pytest.mark.parametrize("layout, expected", [
    ("4:0", "1:0"),
    ("4:1", "4:1"),
    ("(4,2):(1,16)", "4:1"),            # the chain stops where stride 4 is missing
    ("(4,2):(1,4)", "8:1"),
    ("(2,4):(4,1)", "(4,2):(2,1)"),     # row-major 2x4: the transpose
    ("(2,3,2):(1,1,2)", "(2,2):(1,6)"),  # C++ keeps scanning after a gap; pycute stops at 2:1
    ("(8,8):(16,1)", "8:8"),
])
def test_right_inverse_examples(layout, expected):
    layout = parse_layout(layout)
    r = right_inverse(layout)
    assert str(r) == expected
    assert [layout(r(i)) for i in range(r.size())] == list(range(r.size()))


def test_right_inverse_of_a_bijection_composes_to_the_identity():
    layout = Layout((4, (2, 3)), (6, (1, 2)))  # a permutation of 0..23
    r = right_inverse(layout)
    assert r.size() == 24 and values(compose(layout, r)) == list(range(24))
    assert sorted(values(r)) == list(range(24))


@pytest.mark.parametrize("layout, expected", [
    ("(2,4,6):(4,1,8)", "(4,2,6):(2,1,8)"),
    ("(4,2):(1,16)", "(16,2):(1,4)"),
    ("(4,2):(1,5)", "(5,2):(1,4)"),
    ("(2,4):(4,1)", "(4,2):(2,1)"),
    ("(128,64):(131072,2)", "(2,65536,128):(0,128,1)"),  # a leading gap: extent d0, stride 0
    ("1:0", "1:0"),
])
def test_left_inverse_examples(layout, expected):
    layout = parse_layout(layout)
    r = left_inverse(layout)
    assert str(r) == expected
    assert all(r(layout(i)) == i for i in range(layout.size()))


def test_left_inverse_of_a_broadcast_layout_is_a_quasi_inverse():
    layout = parse_layout("(2,4,4,6):(4,1,0,8)")  # the stride-0 mode repeats every offset 4 times
    r = left_inverse(layout)
    assert str(r) == "(4,2,6):(2,1,32)"
    image = values(layout)
    assert [layout(r(x)) for x in image] == image
    assert [r(x) for x in image][:9] == [0, 1, 2, 3, 4, 5, 6, 7, 0]


@pytest.mark.parametrize("layout, message", [
    ("(2,2):(2,3)", r"left inverse divisibility condition fails: stride 3 is not a multiple of 2"),
    ("(2,4):(12,4)", r"overlapping modes: CuTe's quasi-inverse .* maps offset 24 to index 2, "
                     r"where the layout is 4, not 24"),
    # CuTe's answers reach these offsets only through indices past the domain, where evaluating
    # the layout extends its last mode: 4:4 sends 4 to 16 (size 16), (2,2):(1,3) sends 4 to 6
    ("(4,4):(1,1)", r"quasi-inverse 4:4 maps offset 4 to index 16, outside the layout's domain \[0, 16\)"),
    ("(3,2):(1,2)", r"quasi-inverse \(2,2\):\(1,3\) maps offset 4 to index 6, outside .* \[0, 6\)"),
    ("(8,2):(2,6)", r"maps offset 12 to index 16, outside the layout's domain \[0, 16\)"),
    ("(2,3):(1,1)", r"quasi-inverse 3:2 maps offset 3 to index 6, outside the layout's domain \[0, 6\)"),
])
def test_left_inverse_refusals(layout, message):
    with pytest.raises(LayoutError, match=message):
        left_inverse(parse_layout(layout))


@pytest.mark.parametrize("fn", [left_inverse, right_inverse])
def test_inverses_need_static_plain_layouts(fn):
    with pytest.raises(LayoutError, match="a stride is the runtime value s"):
        fn(Layout((4, 2), (1, RuntimeInt("s", []))))
    with pytest.raises(LayoutError, match="an extent is the runtime value n"):
        fn(Layout((RuntimeInt("n", []), 2)))
    with pytest.raises(LayoutError, match="the inverse of a swizzled layout is not provided"):
        fn(ComposedLayout(Swizzle(3, 3, 3), Layout((8, 64), (64, 1))))
    with pytest.raises(LayoutError, match="is not a Layout"):
        fn((4, 2))
