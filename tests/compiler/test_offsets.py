"""static_offsets / offset_grid: vectorized evaluation of static layouts, swizzles included."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from layout_strategies import layouts
from runtime_int import RuntimeInt

from tylo.compiler.support.errors import LayoutError
from tylo.compiler.layout.layout import Layout
from tylo.compiler.layout.offsets import distinct_offsets, offset_grid, static_offsets
from tylo.compiler.layout.swizzle import ComposedLayout, Swizzle

FAST = settings(max_examples=60, deadline=None)
SWIZZLES = st.sampled_from([None, Swizzle(0, 4, 3), Swizzle(1, 3, 3), Swizzle(2, 3, 3),
                            Swizzle(3, 3, 3), Swizzle(2, 2, 3), Swizzle(2, 1, 3), Swizzle(1, 2, -2)])


@FAST
@given(layouts(max_size=128))
def test_static_offsets_is_evaluation(layout):
    assert static_offsets(layout).tolist() == [layout(i) for i in range(layout.size())]


@FAST
@given(layouts(max_size=128))
def test_distinct_offsets_are_the_sorted_set_of_offsets(layout):
    assert distinct_offsets(layout).tolist() == sorted({layout(i) for i in range(layout.size())})


@FAST
@given(layouts(max_size=128, tuple_shape=True).filter(lambda l: l.rank() == 2), SWIZZLES)
def test_offset_grid_is_evaluation(layout, sw):
    drawn = layout if sw is None else ComposedLayout(sw, layout)
    grid = offset_grid(drawn)
    rows, cols = (m.size() for m in layout.modes())
    assert grid.shape == (rows, cols) and grid.dtype == np.int64
    assert all(grid[r, c] == drawn((r, c)) for r in range(rows) for c in range(cols))
    plain = offset_grid(drawn, swizzled=False)
    assert all(plain[r, c] == layout((r, c)) for r in range(rows) for c in range(cols))


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from([(16, 16), (8, 64), (32, 8)]),
    st.booleans(),
    st.sampled_from([None, (1, 3, 3), (2, 3, 3), (3, 3, 3), (2, 2, 3)]),
)
def test_offset_grid_of_row_and_column_major_tiles(shape, row_major, swizzle):
    rows, cols = shape
    layout = Layout(shape, (cols, 1) if row_major else (1, rows))
    if swizzle is not None:
        layout = ComposedLayout(Swizzle(*swizzle), layout)
    grid = offset_grid(layout)
    assert all(grid[r, c] == layout((r, c)) for r in range(rows) for c in range(cols))


def test_rank_one_is_one_row():
    assert offset_grid(Layout(4, 3)).tolist() == [[0, 3, 6, 9]]


@FAST
@given(st.sampled_from([Swizzle(3, 3, 3), Swizzle(2, 4, 3), Swizzle(1, 2, -2), Swizzle(0, 1, 1)]))
def test_swizzle_applies_elementwise_to_arrays(sw):
    x = np.arange(4096, dtype=np.int64)
    assert sw(x).tolist() == [sw(int(v)) for v in x]


def test_offset_grid_rejections():
    with pytest.raises(LayoutError, match="offset_grid: layout '8:1' is not a Layout"):
        offset_grid("8:1")
    with pytest.raises(LayoutError, match="rank 3; an offset grid has two axes"):
        offset_grid(Layout((2, 2, 2)))
    with pytest.raises(LayoutError, match="mine"):
        offset_grid(Layout((4, RuntimeInt("n", [])), (1, 4)), what="mine")
