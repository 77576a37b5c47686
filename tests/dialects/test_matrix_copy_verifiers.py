"""The verifiers of the matrix-copy ops reject bad IR with their own messages.

tylo: `tylo.matrix_load` / `tylo.matrix_store` (planned fragment copies) and `tylo.ldmatrix` /
`tylo.stmatrix` (one instruction on element values); ptx: `ptx.ldmatrix` / `ptx.stmatrix`.
Each case is one rule: a valid snippet that must verify, the one edit that breaks the rule, and
the message the rejection must carry.
"""

import re

import pytest
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from tylo.passes.universe import make_context

CTX = make_context()

HEADER = (
    "func.func @k(%g: !tylo.ptr<bf16, global>, %i: i32, %v: bf16, %h: f16, %z: f32) {\n"
    "%p = tylo.shared_alloc 256, align 16 : !tylo.ptr<bf16, shared>\n"
    "%q = tylo.shared_alloc 256, align 16 : !tylo.ptr<f32, shared>\n"
)


def verify_tylo(body: str) -> None:
    Parser(CTX, HEADER + body + "\n  func.return\n}").parse_module().verify()


def verify_ptx(body: str) -> None:
    text = (
        'ptx.entry "k" [] reqntid [32, 1, 1] {\n'
        "  %a = ptx.get_register : !ptx.reg<r1>\n"
        "  %b = ptx.get_register : !ptx.reg<r2>\n"
        "  %rd = ptx.get_register : !ptx.reg<rd1>\n"
        "  %f = ptx.get_register : !ptx.reg<f1>\n"
        f"  {body}\n  ptx.ret\n}}"
    )
    Parser(CTX, text).parse_module().verify()


def case(rule, good, old, new, message, verify=verify_tylo):
    olds, news = (old, new) if isinstance(old, tuple) else ((old,), (new,))
    bad = good
    for o, n in zip(olds, news, strict=True):
        assert o in bad, f"{rule}: {o!r} is not in the snippet"
        bad = bad.replace(o, n)
    return pytest.param(good, bad, message, verify, id=rule)


ROW = "!tylo.tile<bf16, shared, (16,16):(16,1)>"  # row-major: axis 1 contiguous
COL = "!tylo.tile<bf16, shared, (16,16):(1,16)>"  # column-major: axis 0 contiguous
OA = "#tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>"  # m16n8k16 A: one .x4
FA = f"!tylo.fragment<bf16, {OA}>"
MAKE_ROW = f"%s = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> {ROW}\n"
MAKE_COL = f"%c = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> {COL}\n"
LOAD = MAKE_ROW + f"%f = tylo.matrix_load %s, %i axis 1 : {ROW} -> {FA}"
LOAD_T = MAKE_COL + f"%f = tylo.matrix_load %c, %i axis 0 {{trans}} : {COL} -> {FA}"
STORE = MAKE_ROW + f"%a = tylo.splat %v : bf16 -> {FA}\ntylo.matrix_store %a, %s, %i axis 1 : {FA}, {ROW}"
LD = MAKE_ROW + f"%e0, %e1 = tylo.ldmatrix 1 %s[%i, %i] : {ROW} -> (bf16, bf16)"
LD_PTR = "%e0, %e1, %e2, %e3 = tylo.ldmatrix 2 %p {trans} : !tylo.ptr<bf16, shared> -> (bf16, bf16, bf16, bf16)"
ST = "tylo.stmatrix 1(%v, %v), %p : (bf16, bf16), !tylo.ptr<bf16, shared>"
PTX_LD = "%x, %y = ptx.ldmatrix 2[%a] {trans} : !ptx.reg<r1> -> (!ptx.reg<r3>, !ptx.reg<r4>)"
PTX_ST = "ptx.stmatrix 2[%a], %b, %b : !ptx.reg<r1>, (!ptx.reg<r2>, !ptx.reg<r2>)"

CASES = [
    # -- tylo.matrix_load / tylo.matrix_store ----------------------------------------------------
    case("matrix_load-space", LOAD, ("%p : !tylo.ptr<bf16, shared>", ROW), ("%g : !tylo.ptr<bf16, global>", ROW.replace("shared", "global")),
         "tylo.matrix_load needs a shared tile, got a global one"),
    case("matrix_load-element", LOAD, ("%p :", "bf16"), ("%q :", "f32"),
         "tylo.matrix_load moves 8- or 16-bit elements, not f32"),
    case("matrix_load-axis", LOAD, "axis 1", "axis 2", "tylo.matrix_load: axis 2 must be 0 (rows) or 1 (columns)"),
    case("matrix_load-not-unit-stride", LOAD, "axis 1", "axis 0 {trans}",
         "tylo.matrix_load: axis 0 is not the unit-stride axis of layout (16,16):(16,1) (axis 1 is)"),
    case("matrix_load-no-unit-stride", LOAD, "(16,16):(16,1)", "(16,16):(16,2)",
         "tylo.matrix_load: axis 1 is not the unit-stride axis of layout (16,16):(16,2)"),
    case("matrix_load-no-plan", LOAD, "(16,8,128)", "(8,16,128)",  # slots 0, 1 not adjacent
         "tylo.matrix_load: ownership (16,16), ((4,8),(2,2,2)):((32,1),(8,16,128)) of bf16 has no "
         "matrix copy plan along axis 1"),
    case("matrix_load-trans-extra", LOAD, "axis 1", "axis 1 {trans}",
         "tylo.matrix_load: the plan along axis 1 must not have trans"),
    case("matrix_load-trans-missing", LOAD_T, " {trans}", "", "tylo.matrix_load: the plan along axis 0 needs trans"),
    case("matrix_load-shape", LOAD, f"-> {FA}", f"-> {FA.replace('(16,16), ((4,8)', '(16,32), ((4,8)')}",
         "ownership covers a 16x32 tile but the tile is 16x16"),
    case("matrix_store-element", STORE, ("%v : bf16", FA), ("%h : f16", FA.replace("bf16", "f16")),
         "fragment of f16 and tile of bf16: element types differ"),
    case("matrix_store-trans-extra", STORE, "axis 1 :", "axis 1 {trans} :",
         "tylo.matrix_store: the plan along axis 1 must not have trans"),
    # -- tylo.ldmatrix / tylo.stmatrix -------------------------------------------------------------
    case("ldmatrix-num", LD_PTR, "ldmatrix 2", "ldmatrix 3", "tylo.ldmatrix: the number of matrices 3 must be 1, 2 or 4"),
    case("ldmatrix-count", LD_PTR, ("%e0, %e1, %e2, %e3", "bf16, bf16, bf16, bf16)"), ("%e0, %e1, %e2", "bf16, bf16, bf16)"),
         "tylo.ldmatrix of 2 matrices of bf16 needs 4 results, got 3"),
    case("ldmatrix-type", LD_PTR, "(bf16, bf16, bf16, bf16)", "(bf16, bf16, f16, bf16)",
         "tylo.ldmatrix: results must be bf16, got f16"),
    case("ldmatrix-global", LD_PTR, "%p {trans} : !tylo.ptr<bf16, shared>", "%g {trans} : !tylo.ptr<bf16, global>",
         "tylo.ldmatrix addresses shared memory, not global"),
    case("ldmatrix-pointer-coord", LD_PTR, "%p {trans}", "%p[%i] {trans}", "tylo.ldmatrix through a pointer takes no coordinates"),
    case("ldmatrix-tile-coord", LD, "[%i, %i]", "[%i]", "tile of rank 2 needs 2 coordinates, got 1"),
    case("ldmatrix-f32", LD, ("%p : !tylo.ptr<bf16, shared>", ROW, "(bf16, bf16)"),
         ("%q : !tylo.ptr<f32, shared>", ROW.replace("bf16", "f32"), "(f32, f32)"),
         "tylo.ldmatrix moves 8- or 16-bit elements, not f32"),
    case("stmatrix-count", ST, ("(%v, %v)", "(bf16, bf16)"), ("(%v)", "(bf16)"),
         "tylo.stmatrix of 1 matrices of bf16 needs 2 operands, got 1"),
    case("stmatrix-type", ST, ("(%v, %v)", "(bf16, bf16)"), ("(%v, %h)", "(bf16, f16)"),
         "tylo.stmatrix: operands must be bf16, got f16"),
    # -- ptx.ldmatrix / ptx.stmatrix ---------------------------------------------------------------
    case("ptx-ldmatrix-num", PTX_LD, "ldmatrix 2", "ldmatrix 3", "ldmatrix .x3: the number of matrices must be 1, 2 or 4", verify_ptx),
    case("ptx-ldmatrix-count", PTX_LD, ("%x, %y", "(!ptx.reg<r3>, !ptx.reg<r4>)"), ("%x", "(!ptx.reg<r3>)"),
         "ldmatrix .x2 needs 2 destination registers, got 1", verify_ptx),
    case("ptx-ldmatrix-class", PTX_LD, "!ptx.reg<r4>)", "!ptx.reg<f4>)",
         "ldmatrix destination register must be a .b32 register, got .f32 (%f4)", verify_ptx),
    case("ptx-ldmatrix-address", PTX_LD, "[%a] {trans} : !ptx.reg<r1>", "[%rd] {trans} : !ptx.reg<rd1>",
         "ldmatrix shared address must be a .b32 register, got .b64 (%rd1)", verify_ptx),
    case("ptx-stmatrix-count", PTX_ST, ("%b, %b :", "(!ptx.reg<r2>, !ptx.reg<r2>)"), ("%b :", "(!ptx.reg<r2>)"),
         "stmatrix .x2 needs 2 source registers, got 1", verify_ptx),
    case("ptx-stmatrix-class", PTX_ST, ("%b, %b :", "(!ptx.reg<r2>, !ptx.reg<r2>)"), ("%b, %f :", "(!ptx.reg<r2>, !ptx.reg<f1>)"),
         "stmatrix source register must be a .b32 register, got .f32 (%f1)", verify_ptx),
    case("ptx-stmatrix-num", PTX_ST, "stmatrix 2", "stmatrix 8", "stmatrix .x8: the number of matrices must be 1, 2 or 4", verify_ptx),
]


@pytest.mark.parametrize("good, bad, message, verify", CASES)
def test_valid_snippet_verifies(good, bad, message, verify):
    verify(good)


@pytest.mark.parametrize("good, bad, message, verify", CASES)
def test_broken_snippet_is_refused_with_its_message(good, bad, message, verify):
    with pytest.raises(VerifyException, match=re.escape(message)):
        verify(bad)
