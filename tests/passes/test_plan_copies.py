"""tylo-plan-copies: which fragment copies become ldmatrix/stmatrix, and the helpers it uses.

Each rule is one pair: a kernel whose fragment copy the pass rewrites, and the one edit after
which it must stay a scalar copy (the condition that failed is in the test id). The lowering's
lane arithmetic (`lane_expression`) is checked against plain evaluation (the offset grid the
row check reads: tests/compiler/test_offsets.py).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.parser import Parser

from tylo.passes.lower_fragments import lane_expression
from tylo.passes.plan_copies import PlanCopies
from tylo.passes.universe import make_context

CTX = make_context()

OA = "#tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>"
ROOT = "!tylo.tile<bf16, shared, (16,32):(32,1)>"
WIN = "!tylo.tile<bf16, shared, (16,32):(32,1), [16,16]>"
LOAD = f"""\
func.func @k(%n: i32, %lane: i32) {{
  %t = tylo.thread_idx "x" : i32
  %c0 = arith.constant 0 : i32
  %c4 = arith.constant 4 : i32
  %c8 = arith.constant 8 : i32
  %c32 = arith.constant 32 : i32
  %p = tylo.shared_alloc 512, align 16 : !tylo.ptr<bf16, shared>
  %s = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> {ROOT}
  %w = tylo.window %s[%c0, %c8] : {ROOT} -> {WIN}
  %f = tylo.load_fragment %w, %t : {WIN} -> !tylo.fragment<bf16, {OA}>
  func.return
}}"""
STORE = LOAD.replace(
    f"%f = tylo.load_fragment %w, %t : {WIN} -> !tylo.fragment<bf16, {OA}>",
    f"%v = arith.constant 1.0 : bf16\n  %f = tylo.splat %v : bf16 -> !tylo.fragment<bf16, {OA}>\n"
    f"  tylo.store_fragment %f, %w, %t : !tylo.fragment<bf16, {OA}>, {WIN}",
)
COPY = f"%f = tylo.load_fragment %w, %t : {WIN} -> !tylo.fragment<bf16, {OA}>"


def wrap(before: str, after: str = "") -> tuple[str, str]:
    """Replace the copy line by `before`, the copy, `after` (for control-flow cases)."""
    return COPY, f"{before}\n  {COPY}\n  {after}"


def pair(rule, good_edit, bad_edit, base=LOAD, arch="sm_90a", bad_arch=None):
    """(good kernel, bad kernel, archs): each edit is (old, new) or a tuple of such pairs."""

    def apply(text, edit):
        for old, new in (edit if edit and isinstance(edit[0], tuple) else [edit] if edit else []):
            assert old in text, f"{rule}: {old!r} missing"
            text = text.replace(old, new)
        return text

    good = apply(base, good_edit)
    return pytest.param(good, apply(good, bad_edit), arch, bad_arch or arch, id=rule)


def planned(text: str, arch: str) -> bool:
    module = Parser(CTX, text).parse_module()
    PlanCopies(arch=arch).apply(CTX, module)
    module.verify()
    out = str(module)
    # one or the other (a copy that is no matrix copy may still be planned as vectors)
    assert ("tylo.matrix_" in out) != ("_fragment %" in out or "tylo.vector_" in out)
    return "tylo.matrix_" in out


ACROSS = LOAD.replace(", [16,16]", ", [8,16]").replace(
    "((4,8),(2,2,2)):((32,1),(16,8,128))>", "((4,8),(2,2)):((16,1),(8,64))>").replace(
    "(16,16), ((4,8)", "(8,16), ((4,8)")
IF_T = "%cond = arith.cmpi slt, {x}, %c8 : i32\n  scf.if %cond {{"
PAIRS = [
    pair("window-origin-runtime-along-axis", None, ("%s[%c0, %c8]", "%s[%c0, %n]")),
    pair("window-origin-runtime-across-rows", ("%s[%c0, %c8]", "%s[%n, %c8]"),
         ("(16,32):(32,1)", "(16,32):(36,1)"), base=ACROSS),
    # Each lane supplies row addresses other lanes receive: a runtime origin must be the same on
    # every lane of a warp (one per warp, from the warp index, is fine).
    pair("window-origin-warp-uniform",
         ("%s[%c0, %c8]", "%s[%r, %c8]"), ("%q = arith.divsi %t, %c32", "%q = arith.remsi %t, %c32"),
         base=ACROSS.replace("  %p = ", "  %q = arith.divsi %t, %c32 : i32\n  %r = arith.muli %q, %c8 : i32\n  %p = ")),
    pair("window-origin-runtime-swizzled", ("%s[%c0, %c8]", "%s[%n, %c8]"), ("(16,32):(32,1)", "Sw<1,3,3> o (16,32):(32,1)")),
    pair("window-origin-runtime-hierarchical", ("%s[%c0, %c8]", "%s[%n, %c8]"), ("(16,32):(32,1)", "((8,2),32):((32,256),1)")),
    pair("row-not-16-byte-aligned", None, ("%s[%c0, %c8]", "%s[%c0, %c4]")),
    pair("allocation-alignment", None, ("align 16", "align 8")),
    pair("pointer-offset-alignment",
         ("%s = tylo.make_tile %p", "%o = tylo.ptr_add %p, %c8 : !tylo.ptr<bf16, shared>, i32\n  %s = tylo.make_tile %o"),
         ("tylo.ptr_add %p, %c8", "tylo.ptr_add %p, %c4")),
    pair("pointer-offset-runtime",
         ("%s = tylo.make_tile %p", "%o = tylo.ptr_add %p, %c8 : !tylo.ptr<bf16, shared>, i32\n  %s = tylo.make_tile %o"),
         ("tylo.ptr_add %p, %c8", "tylo.ptr_add %p, %n")),
    pair("element-width", None, ("bf16", "f32")),
    pair("no-unit-stride", None, ("(16,32):(32,1)", "(16,32):(64,2)")),
    pair("swizzle-keeps-rows", ("(16,32):(32,1)", "Sw<2,3,3> o (16,32):(32,1)"),
         ("Sw<2,3,3>", "Sw<2,2,3>")),
    pair("thread-operand", None, ("%w, %t", "%w, %lane")),
    pair("thread-modulo-warp", ("%w, %t", "%w, %l"), ("%l = arith.remsi %t, %c32", "%l = arith.remsi %t, %c8"),
         base=LOAD.replace("  %p = ", "  %l = arith.remsi %t, %c32 : i32\n  %p = ")),
    pair("thread-masked", ("%w, %t", "%w, %l"), ("arith.andi %t, %c32m1", "arith.andi %t, %c8"),
         base=LOAD.replace("  %p = ", "  %c32m1 = arith.constant 31 : i32\n  %l = arith.andi %t, %c32m1 : i32\n  %p = ")),
    pair("thread-dim", None, ('"x"', '"y"')),
    pair("branch-uniform", wrap(IF_T.format(x="%n"), "scf.yield\n  }"), ("slt, %n", "slt, %t")),
    pair("loop-bounds-uniform",
         wrap("scf.for %i = %c0 to %n step %c4 : i32 {", "scf.yield\n  }"), ("to %n step", "to %t step")),
    pair("loop-induction-uniform",
         wrap(IF_T.format(x="%i").replace("  scf.if", "  scf.if").join(["scf.for %i = %c0 to %n step %c4 : i32 {\n  ", ""]),
              "scf.yield\n  }\n  scf.yield\n  }"),
         ("to %n step", "to %t step")),
    pair("while-loop", None, wrap("scf.while () : () -> () {\n  %go = arith.cmpi slt, %n, %c8 : i32\n  scf.condition(%go)\n  } do {", "scf.yield\n  }")),
    pair("block-shape", ("func.func @k(%n: i32, %lane: i32) {", 'func.func @k(%n: i32, %lane: i32) attributes {"tylo.block" = array<i32: 64, 2, 1>} {'),
         ("64, 2, 1", "48, 2, 1")),
    pair("block-whole-warps", ("func.func @k(%n: i32, %lane: i32) {", 'func.func @k(%n: i32, %lane: i32) attributes {"tylo.block" = array<i32: 64, 1, 1>} {'),
         ("64, 1, 1", "48, 1, 1")),
    pair("store-needs-sm90", None, None, base=STORE, bad_arch="sm_89"),
]


@pytest.mark.parametrize("good, bad, arch, bad_arch", PAIRS)
def test_copy_is_planned(good, bad, arch, bad_arch):
    assert planned(good, arch)


@pytest.mark.parametrize("good, bad, arch, bad_arch", PAIRS)
def test_copy_stays_scalar_after_the_edit(good, bad, arch, bad_arch):
    assert not planned(bad, bad_arch)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(-9, 9), min_size=5, max_size=5),
    st.integers(-20, 20),
    st.sampled_from([32, 16, 8, 4, 2]),
)
def test_lane_expression_reads_affine_tables(deltas, base, n):
    """An affine table over the bits of x is rebuilt exactly from shifts, masks and products."""
    table = [base + sum(d for k, d in enumerate(deltas) if x >> k & 1) for x in range(n)]
    for x in range(n):
        assert lane_expression(x, table) == table[x]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(-9, 9), min_size=3, max_size=3),
    st.lists(st.integers(-30, 30), min_size=4, max_size=4),
    st.booleans(),
)
def test_lane_expression_reads_split_and_arbitrary_tables(low, high, arbitrary):
    """Low three bits affine plus any function of the high bits (an .x4 whose blocks are not
    affine in the matrix index), or any table at all (selects)."""
    if arbitrary:
        table = [(x * 7919 + high[x % 4]) % 23 for x in range(32)]
    else:
        table = [sum(d for k, d in enumerate(low) if x >> k & 1) + high[x >> 3] for x in range(32)]
    for x in range(32):
        assert lane_expression(x, table) == table[x]
