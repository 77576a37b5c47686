"""The vector half of tylo-plan-copies: the unit-stride axis it accepts, the multiples it reads
from origins and offsets, and the alignment of a root tile (declared, or from its allocation
lowered by the strides); each with the edit that loses it."""

from __future__ import annotations

import pytest
from xdsl.parser import Parser

from tylo.compiler.layout.dynamic import DYNAMIC
from tylo.compiler.layout.layout import Layout
from tylo.compiler.layout.swizzle import ComposedLayout, Swizzle
from tylo.dialects.tylo.ops import MakeTileOp
from tylo.passes.analysis.plan_vectors import known_multiple, tile_alignment, vector_axis
from tylo.passes.universe import make_context

CTX = make_context()


@pytest.mark.parametrize("layout,axis", [
    (Layout((8, 16), (16, 1)), 1), (Layout((16, 8), (1, 16)), 0),
    (Layout((DYNAMIC, DYNAMIC), (DYNAMIC, 1)), 1),  # a kernel argument's (M, N):(ld, 1)
    (Layout((8, 16), (16, 2)), None), (Layout((8, (2, 8)), (16, (1, 2))), None),
    (ComposedLayout(Swizzle(3, 3, 3), Layout((8, 64), (64, 1))), None),
])
def test_vector_axis(layout, axis):
    assert vector_axis(layout) == axis


def _values(body: str):
    module = Parser(CTX, f"func.func @k(%x: i32, %p: !tylo.ptr<f32, shared>) {{\n{body}\n"
                         "  func.return\n}").parse_module()
    return {op.results[0].name_hint: op for op in module.walk() if op.results}


def test_known_multiples():
    ops = _values("""
  %c0 = arith.constant 0 : i32
  %c3 = arith.constant 3 : i32
  %c24 = arith.constant 24 : i32
  %c4 = arith.constant 4 : i32
  %m = arith.muli %x, %c24 : i32
  %s = arith.shli %x, %c4 : i32
  %a = arith.addi %m, %s : i32
  %b = arith.addi %m, %c3 : i32
  %z = arith.addi %m, %c0 : i32""")
    got = {k: known_multiple(ops[k].results[0]) for k in ("c0", "c24", "m", "s", "a", "b", "z")}
    assert got == {"c0": 0, "c24": 8, "m": 8, "s": 16, "a": 8, "b": 1, "z": 8}
    assert known_multiple(next(iter(ops["m"].operands))) == 1  # a bare argument


@pytest.mark.parametrize("make,want", [
    ("%t = tylo.make_tile %q : !tylo.ptr<f32, shared> -> !tylo.tile<f32, shared, (8,8):(8,1)>", 32),
    ("%t = tylo.make_tile %q : !tylo.ptr<f32, shared> -> !tylo.tile<f32, shared, (8,8):(6,1)>", 8),
    ("%t = tylo.make_tile %q : !tylo.ptr<f32, shared> -> !tylo.tile<f32, shared, (1,8):(5,1)>", 128),  # an extent-1 mode moves nothing
    ("%t = tylo.make_tile %r : !tylo.ptr<f32, shared> -> !tylo.tile<f32, shared, (8,8):(8,1)>", 8),
    ("%t = tylo.make_tile %p : !tylo.ptr<f32, shared> -> !tylo.tile<f32, shared, (8,8):(8,1)>", 0),
    ("%t = tylo.make_tile %p align 16 : !tylo.ptr<f32, shared> -> !tylo.tile<f32, shared, "
     "(8,8):(8,1)>", 16),
])
def test_tile_alignment(make, want):
    ops = _values(f"""
  %q = tylo.shared_alloc 64, align 128 : !tylo.ptr<f32, shared>
  %c6 = arith.constant 6 : i32
  %o = arith.muli %x, %c6 : i32
  %r = tylo.ptr_add %q, %o : !tylo.ptr<f32, shared>, i32
  {make}""")
    op = ops["t"]
    assert isinstance(op, MakeTileOp)
    assert tile_alignment(op, 1, 4) == want
