"""Runtime leaves: layouts over values known only at run time record minimal expressions.

`Sym` (tests/compiler/runtime_int.py) stands in for the tracing proxies of the frontend: each
operator returns a new `Sym` whose text is the expression and appends that text to its
recorder's log, so a test sees both the result and every operation that was recorded. Comparing a
`Sym` with ``==`` or testing its truth raises, so the algebra cannot silently make a static
decision about a runtime value.
"""

import pytest
from runtime_int import RuntimeInt as Sym

from tylo.compiler.support.errors import LayoutError
from tylo.compiler.layout.layout import Layout, coalesce, compose, complement, tile
from tylo.compiler.layout.swizzle import ComposedLayout, Swizzle
from tylo.compiler.layout.window import window


class Recorder:
    def __init__(self):
        self.ops = []

    def sym(self, name):
        return Sym(name, self.ops)


@pytest.fixture
def rec():
    return Recorder()


def test_runtime_stride_and_coordinates(rec):
    s, i, j = rec.sym("s"), rec.sym("i"), rec.sym("j")
    layout = Layout((4, 8), (s, 1))
    assert not layout.is_static() and str(layout) == "(4,8):(?,1)"
    assert layout((i, j)).text == "((i * s) + j)"
    assert rec.ops == ["(i * s)", "((i * s) + j)"]


def test_static_parts_fold_away(rec):
    s, j = rec.sym("s"), rec.sym("j")
    layout = Layout((4, 8), (s, 1))
    assert layout((0, j)) is j  # 0*s -> 0, 0 + j -> j, j*1 -> j
    assert layout((0, 0)) == 0
    assert layout((2, 3)).text == "((2 * s) + 3)"
    assert rec.ops == ["(2 * s)", "((2 * s) + 3)"]


def test_integer_coordinate_decomposes_with_minimal_ops(rec):
    t = rec.sym("t")
    assert Layout((4, 8), (8, 1))(t).text == "(((t % 4) * 8) + (t // 4))"
    assert len(rec.ops) == 4
    rec.ops.clear()
    assert Layout((4, 8), (0, 1))(t).text == "(t // 4)"  # a stride-0 mode costs nothing
    assert Layout((4, 8), (1, 0))(t).text == "(t % 4)"  # nor does a trailing one
    assert Layout((1, 8), (5, 3))(t).text == "(t * 3)"  # extent 1: no % or //
    assert rec.ops == ["(t // 4)", "(t % 4)", "(t * 3)"]


def test_runtime_extent(rec):
    n, i, j = rec.sym("n"), rec.sym("i"), rec.sym("j")
    layout = Layout((n, 4))
    assert layout.stride[0] == 1 and layout.stride[1] is n  # 1*n folds to n
    assert str(layout) == "(?,4):(1,?)"
    assert layout((i, j)).text == "(i + (j * n))"
    assert layout.size().text == "(n * 4)"


def test_decisions_on_runtime_leaves_raise_naming_the_leaf(rec):
    s, n = rec.sym("s"), rec.sym("n")
    message = r"coalesce\(\(4,8\):\(1,\?\)\): stride of flat mode 1 is the runtime value s"
    with pytest.raises(LayoutError, match=message):
        coalesce(Layout((4, 8), (1, s)))
    with pytest.raises(LayoutError, match="extent of flat mode 0 of the left layout is the runtime value n"):
        compose(Layout((n, 8), (1, 64)), Layout(16, 1))
    with pytest.raises(LayoutError, match="runtime value n"):
        complement(Layout(n, 1), 64)
    with pytest.raises(LayoutError, match="size of mode 0 is the runtime value"):
        tile(Layout((n, 8)), (4, 4))
    assert rec.ops == []  # refused before recording anything


def test_operations_that_need_no_decision_accept_runtime_leaves(rec):
    s = rec.sym("s")
    assert coalesce(Layout(8, s)).stride is s  # one mode: nothing to merge
    # The flattened left layout keeps its runtime last mode; only static extents are divided.
    composed = compose(Layout((4, 8), (1, s)), Layout(8, 2))
    assert composed.shape == (2, 4) and composed.stride[0] == 2 and composed.stride[1] is s
    tiled = tile(Layout((16, 32), (1, s)), (8, 16))
    assert tiled.shape == ((8, 2), (16, 2))
    assert tiled.stride[0] == (1, 8) and tiled.stride[1][0] is s and tiled.stride[1][1].text == "(16 * s)"


def test_runtime_swizzle_and_window(rec):
    x, o = rec.sym("x"), rec.sym("o")
    assert Swizzle(3, 3, 3)(x).text == "(x ^ ((x & 448) >> 3))"
    assert Swizzle(2, 1, -2)(x).text == "(x ^ ((x & 6) << 2))"
    assert Swizzle(0, 3, 0)(x) is x
    atom = ComposedLayout(Swizzle(3, 3, 3), Layout((16, 64), (64, 1)))
    win = window(atom, (o, 0), (8, 64))
    rec.ops.clear()
    assert win((1, 2)).text == "((((o + 1) * 64) + 2) ^ (((((o + 1) * 64) + 2) & 448) >> 3))"
    assert not win.is_static()
    conditions = win.bound_conditions()
    assert [d for d, _ in conditions] == [
        "mode 0: 0 <= origin ?", "mode 0: origin ? + 8 <= extent 16",
        "mode 1: 0 <= origin 0", "mode 1: origin 0 + 64 <= extent 64"]
    assert [c.text if isinstance(c, Sym) else c for _, c in conditions] == [
        "(o >= 0)", "((o + 8) <= 16)", True, True]
