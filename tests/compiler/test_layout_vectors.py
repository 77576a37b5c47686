"""Reference vectors (tests/compiler/data/layout_vectors_sample.json, a copy of
tests/compiler/data/layout_vectors_sample.json; conventions in docs/facts/layout_vectors_README.md).

Layouts are compared by value (R(0..size-1)) first; the exact shape:stride is compared only for
cases whose provenance is "asserted-in-source" (or one of their `equivalent_canonical` forms).
"""

import json
from pathlib import Path

import pytest

from tylo.compiler.layout import int_tuple as it
from tylo.compiler.support.errors import LayoutError
from tylo.compiler.layout.divide import zipped_divide
from tylo.compiler.layout.inverse import left_inverse, right_inverse
from tylo.compiler.layout.layout import Layout, coalesce, complement, compose, logical_divide
from tylo.compiler.layout.product import blocked_product, logical_product, raked_product
from tylo.compiler.layout.swizzle import ComposedLayout, Swizzle

DATA = Path(__file__).parent / "data" / "layout_vectors_sample.json"
CASES = json.loads(DATA.read_text())

def tup(x):
    return tuple(tup(e) for e in x) if isinstance(x, list) else x


def layout_of(d):
    return Layout(tup(d["shape"]), tup(d["stride"]))


def tiler_of(x):
    """A JSON tiler: a layout, an int (n:1) or a list of tilers applied by mode."""
    if isinstance(x, dict):
        return layout_of(x)
    if isinstance(x, list):
        return tuple(tiler_of(e) for e in x)
    return x


def check_layout(result, case):
    expected = case["expected"]
    assert result.size() == expected["size"]
    if "values" in expected:
        assert [result(i) for i in range(result.size())] == expected["values"]
    for i, v in expected.get("values_at", {}).items():
        assert result(int(i)) == v
    if case["provenance"] == "asserted-in-source":
        forms = [(tup(expected["shape"]), tup(expected["stride"]))]
        forms += [(tup(f["shape"]), tup(f["stride"])) for f in expected.get("equivalent_canonical", [])]
        assert (result.shape, result.stride) in forms


def run_coalesce(case):
    inputs = case["inputs"]
    check_layout(coalesce(layout_of(inputs["layout"]), tup(inputs.get("profile"))), case)


def run_composition(case):
    a, b = layout_of(case["inputs"]["A"]), tiler_of(case["inputs"]["B"])
    if "error" in case["expected"]:
        with pytest.raises(LayoutError):
            compose(a, b)
        return
    result = compose(a, b)
    check_layout(result, case)
    if isinstance(b, Layout):
        assert [result(i) for i in range(b.size())] == [a(b(i)) for i in range(b.size())]


def run_complement(case):
    inputs = case["inputs"]
    cotarget = tup(inputs["cotarget"]) if "cotarget" in inputs else None
    check_layout(complement(layout_of(inputs["layout"]), cotarget), case)


def run_logical_divide(case):
    check_layout(logical_divide(layout_of(case["inputs"]["A"]), tiler_of(case["inputs"]["B"])), case)


def binary_op(fn):
    """Runner for the ops that take a layout A and a tiler B (a layout, an int or a by-mode list)."""
    def run(case):
        check_layout(fn(layout_of(case["inputs"]["A"]), tiler_of(case["inputs"]["B"])), case)
    return run


def run_right_inverse(case):
    layout = layout_of(case["inputs"]["layout"])
    result = right_inverse(layout)
    check_layout(result, case)
    assert all(layout(result(i)) == i for i in range(result.size()))


def run_left_inverse(case):
    """Only the values on the image of the layout are determined (README): compare those."""
    layout, expected = layout_of(case["inputs"]["layout"]), case["expected"]
    result = left_inverse(layout)
    assert result.size() == expected["size"]
    image = [layout(i) for i in range(layout.size())]
    back = [result(x) for x in image]
    if expected.get("R_of_layout") is not None:
        assert back == expected["R_of_layout"]
    if len(set(image)) == len(image):
        assert back == list(range(layout.size()))
    else:
        assert [layout(r) for r in back] == image
    on_image = set(image)
    if "values" in expected:
        assert all(result(x) == expected["values"][x] for x in on_image if x < result.size())
    for x, v in expected.get("values_at", {}).items():
        if int(x) in on_image:
            assert result(int(x)) == v


def run_eval(case):
    layout = layout_of(case["inputs"]["layout"])
    assert [layout(tup(c)) for c in case["inputs"]["coords"]] == case["expected"]["values"]
    if "default_stride" in case["expected"]:
        assert Layout(layout.shape).stride == tup(case["expected"]["default_stride"])


def run_eval_2d(case):
    inputs, expected = case["inputs"], case["expected"]
    layout = layout_of(inputs["layout"])
    grid = [[layout((r, c)) for c in range(inputs["cols"])] for r in range(inputs["rows"])]
    assert grid == expected["grid_row_major_print"]
    assert [layout(i) for i in range(layout.size())] == expected["values_1d"]


def run_size_cosize(case):
    layout, expected = layout_of(case["inputs"]["layout"]), case["expected"]
    assert (layout.size(), layout.cosize(), layout.rank(), layout.depth()) == (
        expected["size"], expected["cosize"], expected["rank"], expected["depth"])


def int_tuple_op(fn, unary):
    def run(case):
        cases, results = case["inputs"]["cases"], case["expected"]["results"]
        assert len(cases) == len(results)
        for args, result in zip(cases, results):
            got = fn(tup(args)) if unary else fn(*(tup(a) for a in args))
            assert got == tup(result)
    return run


def swizzle_of(inputs):
    return Swizzle(inputs["bits"], inputs["base"], inputs["shift"])


def run_swizzle(case):
    sw, xs = swizzle_of(case["inputs"]), case["inputs"]["x"]
    assert [sw(x) for x in xs] == case["expected"]["y"]
    if case["expected"].get("involution"):
        assert [sw(sw(x)) for x in xs] == xs


def run_swizzle_layout(case):
    sw, grid = swizzle_of(case["inputs"]), case["expected"]["offset_grid"]
    rows, cols = len(grid), len(grid[0])
    atom = ComposedLayout(sw, Layout((rows, cols), (cols, 1)))
    assert [[atom((r, c)) for c in range(cols)] for r in range(rows)] == grid


HANDLERS = {
    "coalesce": run_coalesce,
    "coalesce_by_mode": run_coalesce,
    "composition": run_composition,
    "complement": run_complement,
    "logical_divide": run_logical_divide,
    "zipped_divide": binary_op(zipped_divide),
    "logical_product": binary_op(logical_product),
    "blocked_product": binary_op(blocked_product),
    "raked_product": binary_op(raked_product),
    "right_inverse": run_right_inverse,
    "left_inverse": run_left_inverse,
    "eval": run_eval,
    "eval_2d": run_eval_2d,
    "size_cosize": run_size_cosize,
    "prefix_product": int_tuple_op(it.prefix_product, unary=True),
    # The sample holds no case of the following; their formats follow the README and the
    # sibling cases above (binary int-tuple helpers take [a, b] pairs).
    "shape_div": int_tuple_op(it.shape_div, unary=False),
    "inner_product": int_tuple_op(it.inner_product, unary=False),
    "swizzle": run_swizzle,
    "swizzle_layout": run_swizzle_layout,
}

README_OPS = {
    "coalesce", "coalesce_by_mode", "composition", "complement", "logical_divide", "zipped_divide",
    "logical_product", "blocked_product", "raked_product", "right_inverse", "left_inverse", "eval",
    "eval_2d", "idx2crd", "size_cosize", "shape_div", "prefix_product", "inner_product", "swizzle",
    "swizzle_layout",
}


def test_every_op_of_the_sample_has_a_runner():
    unknown = {c["op"] for c in CASES} - set(HANDLERS)
    assert not unknown, f"no handler for vector ops {sorted(unknown)}"
    assert len(CASES) == 60


def test_every_readme_op_but_idx2crd_has_a_runner():
    # idx2crd has no case in the sample, so its input format is unknown: no runner is guessed.
    assert README_OPS - set(HANDLERS) == {"idx2crd"}


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_vector(case):
    HANDLERS[case["op"]](case)
