"""Windows: parent(origin + c) per top-level mode, with static bounds refused at once."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from layout_strategies import layouts

from tylo.compiler.support.errors import LayoutError
from tylo.compiler.layout.layout import Layout
from tylo.compiler.layout.window import Window, window


@st.composite
def windows_in_bounds(draw):
    parent = draw(layouts(tuple_shape=True, max_size=128))
    extents = [m.size() for m in parent.modes()]
    shape = tuple(draw(st.integers(1, e)) for e in extents)
    origin = tuple(draw(st.integers(0, e - w)) for e, w in zip(extents, shape))
    return parent, origin, shape


@settings(max_examples=80, deadline=None)
@given(windows_in_bounds())
def test_window_evaluates_the_parent_at_origin_plus_c(case):
    parent, origin, shape = case
    win = window(parent, origin, shape)
    assert win.size() == Layout(shape).size() and win.shape == shape and win.parent is parent
    assert all(cond is True for _, cond in win.bound_conditions())
    for i in range(win.size()):
        coord, rest = [], i  # i decomposes first-mode-fastest over the window's shape
        for w in shape:
            coord.append(rest % w)
            rest //= w
        expected = parent(tuple(o + x for o, x in zip(origin, coord)))
        assert win(i) == win(tuple(coord)) == expected


@settings(max_examples=60, deadline=None)
@given(windows_in_bounds(), st.integers(0, 2), st.integers(1, 3))
def test_out_of_bounds_static_windows_are_refused(case, mode, excess):
    parent, origin, shape = case
    mode = mode % parent.rank()
    extent = parent[mode].size()
    too_far = tuple(extent - shape[mode] + excess if k == mode else o for k, o in enumerate(origin))
    with pytest.raises(LayoutError, match=f"mode {mode}: origin .* <= extent {extent} does not hold"):
        window(parent, too_far, shape)
    negative = tuple(-excess if k == mode else o for k, o in enumerate(origin))
    with pytest.raises(LayoutError, match=f"mode {mode}: 0 <= origin -{excess} does not hold"):
        window(parent, negative, shape)


def test_window_errors():
    matrix = Layout((16, 32))
    with pytest.raises(LayoutError, match="need 2 entries"):
        window(matrix, (0, 0, 0), (8, 8))
    with pytest.raises(LayoutError, match="need 2 entries"):
        window(matrix, (0, 0), (8,))
    with pytest.raises(LayoutError, match="window extent 0 of mode 1 is not positive"):
        window(matrix, (0, 0), (8, 0))
    with pytest.raises(LayoutError, match="extent 16 does not hold"):
        window(matrix, (0, 0), (17, 8))  # the window is larger than the parent
    with pytest.raises(LayoutError, match="one integer per mode"):
        window(matrix, (0, 0), (8, 8))((1, 2, 3))


def test_window_of_rank_1_layout_and_of_a_window():
    vec = Layout(64, 2)
    win = window(vec, 8, 16)
    assert isinstance(win, Window) and win.shape == (16,) and win.origin == (8,)
    assert [win(i) for i in range(16)] == [2 * (8 + i) for i in range(16)]
    inner = window(win, 4, 4)
    assert [inner(i) for i in range(4)] == [2 * (12 + i) for i in range(4)]
    with pytest.raises(LayoutError, match="extent 16 does not hold"):
        window(win, 14, 4)  # fits in the parent layout but not in the outer window
    hierarchical = Layout(((2, 4), 8), ((1, 16), 2))
    sub = window(hierarchical, (3, 1), (4, 2))
    assert sub((1, 1)) == hierarchical((4, 2))
    assert str(sub) == "window(((2,4),8):((1,16),2), origin=(3,1), shape=(4,2))"
