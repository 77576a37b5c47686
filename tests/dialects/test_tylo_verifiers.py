"""Every verifier of the tylo dialect rejects bad IR with its own message.

Each case is one rule: a valid snippet, the one edit that breaks the rule, and the message the
rejection must carry. The valid snippet must verify and the edited one must be refused with that
message, so a test fails both when a verifier is missing and when it refuses valid IR. Snippets
are the body of a function whose arguments are named in `HEADER`; a case marked ``ParseError``
is refused while parsing (layouts, ownerships, MMA plans).
"""

import re

import pytest
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError, VerifyException

from tylo.passes.universe import make_context

HEADER = (
    "func.func @k(%p: !tylo.ptr<bf16, global>, %fp: !tylo.ptr<f32, global>, %i: i32, "
    "%v: bf16, %z: f32, %h: f16) {\n"
)

CTX = make_context()


def verify(body: str) -> None:
    module = Parser(CTX, HEADER + body + "\n  func.return\n}").parse_module()
    module.verify()


# Types, layouts and ownerships used below.
DYN = "!tylo.tile<bf16, global, (?,?):(?,1)>"  # a root tile with runtime extents and row stride
DYN_W = "!tylo.tile<bf16, global, (?,?):(?,1), [16,16]>"
MAKE_DYN = f"%t = tylo.make_tile %p [%i, %i, %i] : !tylo.ptr<bf16, global> -> {DYN}\n"
STAT = "!tylo.tile<bf16, global, (32,64):(64,1)>"
MAKE_STAT = f"%s = tylo.make_tile %p : !tylo.ptr<bf16, global> -> {STAT}\n"
WINDOW = MAKE_DYN + f"%w = tylo.window %t [%i, %i] : {DYN} -> {DYN_W}"
CT = "!tylo.tile<f32, global, (16,8):(8,1)>"
MAKE_CT = f"%ct = tylo.make_tile %fp : !tylo.ptr<f32, global> -> {CT}\n"

OA = "#tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>"  # m16n8k16 A, B, C
OB = "#tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>"
OC = "#tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>"
FA, FB, FC = f"!tylo.fragment<bf16, {OA}>", f"!tylo.fragment<bf16, {OB}>", f"!tylo.fragment<f32, {OC}>"


def static_window(shape: str) -> str:
    return f"!tylo.tile<bf16, global, (32,64):(64,1), [{shape}]>"


def own(attr: str) -> str:
    """An ownership as messages print it: the attribute without ``#tylo.ownership<...>``."""
    return attr.removeprefix("#tylo.ownership<").removesuffix(">")


SPLAT_C = f"%c = tylo.splat %z : f32 -> {FC}\n"
PLAN = "<m16n8k16, bf16, bf16, f32, warps = (1,1), repeat = (1,1), k = 16>"
SPLAT_ABC = f"%a = tylo.splat %v : bf16 -> {FA}\n%b = tylo.splat %v : bf16 -> {FB}\n" + SPLAT_C
MMA = SPLAT_ABC + f"%d = tylo.mma {PLAN} %a, %b, %c : {FA}, {FB}, {FC} -> {FC}"
MMA_SYNC = (
    f"%d0, %d1, %d2, %d3 = tylo.mma_sync {PLAN}(%v, %v, %v, %v, %v, %v, %v, %v), "
    "(%v, %v, %v, %v), (%z, %z, %z, %z) : (bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16), "
    "(bf16, bf16, bf16, bf16), (f32, f32, f32, f32) -> (f32, f32, f32, f32)"
)
STORE_C = SPLAT_C + MAKE_CT + f"tylo.store_fragment %c, %ct, %i : {FC}, {CT}"
MAP = SPLAT_C + f"%m = tylo.map %c : ({FC}) -> {FC} {{\n^bb0(%x: f32):\n  tylo.yield %x : f32\n}}"


def case(rule, good, old, new, message, error=VerifyException):
    """`good` verifies; `good` with every `old` replaced by `new` is refused with `message`.

    `old` and `new` may be tuples of strings for a change in several places."""
    olds, news = (old, new) if isinstance(old, tuple) else ((old,), (new,))
    bad = good
    for o, n in zip(olds, news, strict=True):
        assert o in bad, f"{rule}: {o!r} is not in the snippet"
        bad = bad.replace(o, n)
    return pytest.param(good, bad, message, error, id=rule)


CASES = [
    # -- thread and block indices ---------------------------------------------------------------
    case("thread_idx-dim", '%t = tylo.thread_idx "x" : i32', '"x"', '"w"',
         "dimension 'w' must be x, y or z"),
    case("block_idx-dim", '%t = tylo.block_idx "y" : i32', '"y"', '"X"',
         "dimension 'X' must be x, y or z"),
    case("block_dim-dim", '%t = tylo.block_dim "z" : i32', '"z"', '"xy"',
         "dimension 'xy' must be x, y or z"),
    case("grid_dim-dim", '%t = tylo.grid_dim "x" : i32', '"x"', '""',
         "dimension '' must be x, y or z"),
    # -- shared_alloc ------------------------------------------------------------------------------
    case("shared_alloc-align-not-pow2", "%s = tylo.shared_alloc 256, align 16 : !tylo.ptr<bf16, shared>",
         "align 16", "align 12", "alignment 12 must be a power of two"),
    case("shared_alloc-align-zero", "%s = tylo.shared_alloc 256, align 16 : !tylo.ptr<bf16, shared>",
         "align 16", "align 0", "alignment 0 must be a power of two"),
    case("shared_alloc-zero-count", "%s = tylo.shared_alloc 256, align 16 : !tylo.ptr<bf16, shared>",
         "256", "0", "shared_alloc needs a positive element count"),
    case("shared_alloc-negative-count", "%s = tylo.shared_alloc 256, align 16 : !tylo.ptr<bf16, shared>",
         "256", "-4", "shared_alloc needs a positive element count"),
    case("shared_alloc-global", "%s = tylo.shared_alloc 256, align 16 : !tylo.ptr<bf16, shared>",
         "shared>", "global>", "shared_alloc must return a shared pointer"),
    # -- load / store through a pointer --------------------------------------------------------
    case("load-result", "%l = tylo.load %p : !tylo.ptr<bf16, global> -> bf16", "-> bf16", "-> f32",
         "load of !tylo.ptr<bf16, global> must produce bf16, not f32"),
    case("store-value", "tylo.store %v, %p : bf16, !tylo.ptr<bf16, global>", "%v, %p : bf16",
         "%z, %p : f32", "store of f32 through !tylo.ptr<bf16, global>: element types differ"),
    # -- make_tile -----------------------------------------------------------------------------
    case("make_tile-too-few-leaves", MAKE_DYN, "[%i, %i, %i]", "[%i, %i]",
         "layout (?,?):(?,1) has 3 runtime leaves but 2 values were given"),
    case("make_tile-leaves-on-static", MAKE_STAT, "%p :", "%p [%i] :",
         "layout (32,64):(64,1) has 0 runtime leaves but 1 values were given"),
    case("make_tile-swizzled-leaves",
         "%s = tylo.make_tile %p [%i] : !tylo.ptr<bf16, global> -> "
         "!tylo.tile<bf16, global, Sw<3,3,3> o (?,64):(64,1)>",
         "[%i] ", "", "layout Sw<3,3,3> o (?,64):(64,1) has 1 runtime leaves but 0 values were given"),
    case("make_tile-element", MAKE_STAT, "-> !tylo.tile<bf16", "-> !tylo.tile<f32",
         "tile !tylo.tile<f32, global, (32,64):(64,1)> does not match pointer !tylo.ptr<bf16, global>"),
    case("make_tile-space", MAKE_STAT, "-> !tylo.tile<bf16, global", "-> !tylo.tile<bf16, shared",
         "tile !tylo.tile<bf16, shared, (32,64):(64,1)> does not match pointer !tylo.ptr<bf16, global>"),
    case("make_tile-window", MAKE_STAT, "(64,1)>", "(64,1), [16,16]>",
         "make_tile makes a root tile; use tylo.window for a window"),
    # -- window ----------------------------------------------------------------------------------
    case("window-origin-count", WINDOW,
         "[%i, %i] :", "[%i] :", "window of rank 2 needs 2 origin coordinates, got 1"),
    case("window-rank", WINDOW,
         "[16,16]", "[16]", "window shape [16] has rank 1, the layout (?,?):(?,1) has rank 2"),
    case("window-no-shape", WINDOW,
         ", [16,16]", "", "window result must carry a window shape"),
    case("window-zero-extent", WINDOW,
         "[16,16]", "[16,0]", "window extents must be positive"),
    case("window-exceeds-parent",
         MAKE_STAT + f"%w = tylo.window %s [%i, %i] : {STAT} -> {static_window('32,64')}",
         "[32,64]", "[32,128]", "window extent 128 exceeds extent 64 of axis 1"),
    case("window-exceeds-window",
         MAKE_STAT + f"%w = tylo.window %s [%i, %i] : {STAT} -> {static_window('16,16')}\n"
         f"%w2 = tylo.window %w [%i, %i] : {static_window('16,16')} -> {static_window('8,16')}",
         "[8,16]>", "[17,16]>", "window extent 17 exceeds extent 16 of axis 0"),
    case("window-element", WINDOW,
         DYN_W, DYN_W.replace("bf16", "f32"),
         "must keep the element type, space and layout of !tylo.tile<bf16, global, (?,?):(?,1)>"),
    case("window-layout", WINDOW,
         "(?,1), [16,16]", "(1,?), [16,16]",
         "window !tylo.tile<bf16, global, (?,?):(1,?), [16,16]> must keep the element type"),
    # -- element access --------------------------------------------------------------------------
    case("load_element-coords", MAKE_STAT + f"%e = tylo.load_element %s [%i, %i] : {STAT} -> bf16",
         "[%i, %i]", "[%i]", "tile of rank 2 needs 2 coordinates, got 1"),
    case("load_element-result", MAKE_STAT + f"%e = tylo.load_element %s [%i, %i] : {STAT} -> bf16",
         "-> bf16", "-> f32", "load_element result must be the tile's element type"),
    case("store_element-coords", MAKE_STAT + f"tylo.store_element %v, %s [%i, %i] : bf16, {STAT}",
         "[%i, %i]", "[%i, %i, %i]", "tile of rank 2 needs 2 coordinates, got 3"),
    case("store_element-value", MAKE_STAT + f"tylo.store_element %v, %s [%i, %i] : bf16, {STAT}",
         "%v, %s [%i, %i] : bf16", "%z, %s [%i, %i] : f32", "store_element of f32 into a tile of bf16"),
    # -- fragment access -----------------------------------------------------------------------
    case("load_fragment-element", MAKE_CT + f"%c = tylo.load_fragment %ct, %i : {CT} -> {FC}",
         "-> !tylo.fragment<f32", "-> !tylo.fragment<bf16",
         "fragment of bf16 and tile of f32: element types differ"),
    case("load_fragment-runtime-shape", MAKE_CT + f"%c = tylo.load_fragment %ct, %i : {CT} -> {FC}",
         ("%fp :", "(16,8):(8,1)>"), ("%fp [%i] :", "(?,8):(8,1)>"),
         "tile !tylo.tile<f32, global, (?,8):(8,1)> has a runtime shape; take a static window"),
    case("load_fragment-shape", MAKE_CT + f"%c = tylo.load_fragment %ct, %i : {CT} -> {FC}",
         "#tylo.ownership<(16,8)", "#tylo.ownership<(8,16)",
         "ownership covers a 8x16 tile but the tile is 16x8"),
    case("load_fragment-rank-1", MAKE_CT + f"%c = tylo.load_fragment %ct, %i : {CT} -> {FC}",
         "(16,8):(8,1)>", "128:1>", "ownership covers a 16x8 tile but the tile is 128"),
    case("store_fragment-element", STORE_C, ("%fp : !tylo.ptr<f32, global>", CT),
         ("%p : !tylo.ptr<bf16, global>", CT.replace("f32", "bf16")),
         "fragment of f32 and tile of bf16: element types differ"),
    case("store_fragment-runtime-shape", STORE_C, ("%fp :", "(16,8):(8,1)>"), ("%fp [%i] :", "(?,8):(8,1)>"),
         "tile !tylo.tile<f32, global, (?,8):(8,1)> has a runtime shape"),
    case("store_fragment-shape", STORE_C,
         "(16,8):(8,1)>", "(16,16):(16,1)>", "ownership covers a 16x8 tile but the tile is 16x16"),
    # -- splat and map ---------------------------------------------------------------------------
    case("splat-type", SPLAT_C, "%z : f32", "%v : bf16", "splat of bf16 into a fragment of f32"),
    case("slot-range", SPLAT_C + f"%e = tylo.slot %c[3] : {FC} -> f32", "%c[3]", "%c[4]",
         "slot 4 is outside the fragment's 4 slots"),
    case("slot-type", SPLAT_C + f"%e = tylo.slot %c[0] : {FC} -> f32", "-> f32", "-> bf16",
         "slot result must be the fragment's element type"),
    case("map-input-ownership", MAP, (f"-> {FC}\n", f"({FC})"),
         (f"-> !tylo.fragment<f32, {OB}>\n", f"(!tylo.fragment<f32, {OB}>)"),
         f"map input ownership {own(OB)} differs from the result's {own(OC)}"),
    case("map-arg-type", MAP, ("%x: f32", "yield %x"), ("%x: bf16", "yield %z"),
         "map body takes [BFloat16Type()], the inputs' element types are [Float32Type()]"),
    case("map-arg-count", MAP, "(%x: f32)", "(%x: f32, %y: f32)",
         "map body takes [Float32Type(), Float32Type()], the inputs' element types are [Float32Type()]"),
    case("map-no-yield", MAP, "tylo.yield %x : f32", "cf.br ^bb0(%x : f32)",
         "map body must end with tylo.yield"),
    case("map-yield-type", MAP, "tylo.yield %x : f32", "tylo.yield %v : bf16",
         "map body yields bf16, the result holds f32"),
    # -- mma -------------------------------------------------------------------------------------
    case("mma-ownership-A", MMA, (f"%v : bf16 -> {FA}", f"{FA}, {FB}"),
         (f"%v : bf16 -> {FB}", f"{FB}, {FB}"),
         f"operand A has ownership {own(OB)}; the plan needs {own(OA)}"),
    case("mma-ownership-B", MMA, (f"%v : bf16 -> {FB}", f"{FA}, {FB}"),
         (f"%v : bf16 -> {FA}", f"{FA}, {FA}"),
         f"operand B has ownership {own(OA)}; the plan needs {own(OB)}"),
    case("mma-ownership-C", MMA, FC, f"!tylo.fragment<f32, {OB}>",
         f"operand C has ownership {own(OB)}; the plan needs {own(OC)}"),
    case("mma-ownership-warps", MMA, "warps = (1,1)", "warps = (2,1)",
         f"operand A has ownership {own(OA)}; the plan needs (32,16)"),
    case("mma-element-A", MMA, ("%a = tylo.splat %v : bf16", FA),
         ("%a = tylo.splat %h : f16", FA.replace("bf16", "f16")),
         "operand A holds f16; the atom takes BFloat16"),
    case("mma-element-B", MMA, ("%b = tylo.splat %v : bf16", FB),
         ("%b = tylo.splat %h : f16", FB.replace("bf16", "f16")),
         "operand B holds f16; the atom takes BFloat16"),
    case("mma-element-C", MMA, ("%c = tylo.splat %z : f32", FC),
         ("%c = tylo.splat %v : bf16", FC.replace("f32", "bf16")),
         "operand C holds bf16; the atom takes Float32"),
    case("mma-result-type", MMA, f"{FC} -> {FC}", f"{FC} -> !tylo.fragment<f32, {OB}>",
         "mma result must have the accumulator's type"),
    # -- mma_sync ----------------------------------------------------------------------------------
    case("mma_sync-A-count", MMA_SYNC, ("(%v, %v, %v, %v, %v, %v, %v, %v)", "(bf16, bf16, bf16, bf16, bf16, "),
         ("(%v, %v, %v, %v, %v, %v, %v)", "(bf16, bf16, bf16, bf16, "),
         "mma_sync m16n8k16, bf16, bf16, f32: operand A needs 8 values, got 7"),
    case("mma_sync-B-count", MMA_SYNC, ("(%v, %v, %v, %v), (%z", "(bf16, bf16, bf16, bf16), (f32"),
         ("(%v, %v, %v), (%z", "(bf16, bf16, bf16), (f32"),
         "mma_sync m16n8k16, bf16, bf16, f32: operand B needs 4 values, got 3"),
    case("mma_sync-C-count", MMA_SYNC, ("(%z, %z, %z, %z)", "(f32, f32, f32, f32) ->"),
         ("(%z, %z, %z, %z, %z)", "(f32, f32, f32, f32, f32) ->"),
         "mma_sync m16n8k16, bf16, bf16, f32: operand C needs 4 values, got 5"),
    case("mma_sync-A-element", MMA_SYNC, ("%v, %v, %v, %v, %v)", "bf16, bf16, bf16, bf16, bf16)"),
         ("%v, %v, %v, %v, %h)", "bf16, bf16, bf16, bf16, f16)"),
         "mma_sync m16n8k16, bf16, bf16, f32: operand A holds f16; the atom takes bf16"),
    case("mma_sync-C-element", MMA_SYNC, ("%z, %z, %z, %z)", "(f32, f32, f32, f32) ->"),
         ("%z, %z, %z, %i)", "(f32, f32, f32, i32) ->"),
         "mma_sync m16n8k16, bf16, bf16, f32: operand C holds i32; the atom takes f32"),
    case("mma_sync-results", MMA_SYNC, "-> (f32, f32, f32, f32)", "-> (f32, f32, f32, bf16)",
         "mma_sync results must have the accumulator's types"),
    # -- types and attributes --------------------------------------------------------------------
    case("ptr-space", "%q = tylo.ptr_add %p, %i : !tylo.ptr<bf16, global>, i32", "global>,", "texture>,",
         "memory space 'texture' is not one of ('global', 'shared')"),
    case("ptr-element", MAKE_STAT, "%p : !tylo.ptr<bf16", "%p : !tylo.ptr<index",
         "index is not an element type of Tylo"),
    case("ptr-of-ptr", MAKE_STAT, "%p : !tylo.ptr<bf16", "%p : !tylo.ptr<!tylo.ptr<bf16, global>",
         "!tylo.ptr<bf16, global> is not an element type of Tylo"),
    case("tile-space", MAKE_STAT, "-> !tylo.tile<bf16, global", "-> !tylo.tile<bf16, local",
         "memory space 'local' is not one of ('global', 'shared')"),
    case("tile-element", MAKE_STAT, "-> !tylo.tile<bf16", "-> !tylo.tile<index",
         "index is not an element type of Tylo"),
    case("fragment-element", SPLAT_C, "-> !tylo.fragment<f32", "-> !tylo.fragment<index",
         "index is not an element type of Tylo"),
    case("fragment-not-ownership", SPLAT_C, OC, "#tylo.layout<(4,8):(1,4)>",
         "should be of base attribute tylo.ownership"),
    case("layout-not-congruent", MAKE_STAT, "(64,1)>", "(64)>",
         "Layout((32,64), (64)): shape and stride are not congruent", ParseError),
    case("swizzle-overlap", "%s = tylo.make_tile %p : !tylo.ptr<bf16, global> -> "
         "!tylo.tile<bf16, global, Sw<3,3,3> o (8,64):(64,1)>", "Sw<3,3,3>", "Sw<3,3,2>",
         "Swizzle(3, 3, 2): |shift| = 2 < bits = 3: the source and target fields overlap", ParseError),
    case("swizzle-negative", "%s = tylo.make_tile %p : !tylo.ptr<bf16, global> -> "
         "!tylo.tile<bf16, global, Sw<3,3,3> o (8,64):(64,1)>", "Sw<3,3,3>", "Sw<-1,3,3>",
         "Swizzle(-1, 3, 3): bits and base must be non-negative", ParseError),
    case("ownership-outside-tile", SPLAT_C, "(16,8))>", "(16,9))>",
         "Ownership: layout ((4,8),(2,2)):((32,1),(16,9)) reaches index 128, outside the 16x8 tile",
         ParseError),
    case("ownership-runtime", SPLAT_C, "((32,1),(16,8))>", "((32,?),(16,8))>",
         "Ownership: layout ((4,8),(2,2)):((32,?),(16,8)) must be a static Layout", ParseError),
    case("ownership-swizzled", SPLAT_C, "(16,8), ((4,8)", "(16,8), Sw<1,3,3> o ((4,8)",
         "must be a static Layout", ParseError),
    case("tiled_mma-no-instruction", MMA, "%d = tylo.mma <m16n8k16, bf16, bf16, f32",
         "%d = tylo.mma <m16n8k16, f32, f32, f32",
         "invalid tiled_mma: MMAAtom((16, 8, 16), Float32, Float32, b=Float32): no mma.sync "
         "instruction has this shape and these element types", ParseError),
    case("tiled_mma-k", MMA, "k = 16>", "k = 24>",
         "invalid tiled_mma: TiledMMA: K = 24 must be a positive multiple of the atom's k = 16",
         ParseError),
    case("tiled_mma-warps", MMA, "warps = (1,1)", "warps = (0,1)",
         "invalid tiled_mma: TiledMMA: warps (0, 1) must be two positive static integers", ParseError),
    case("tiled_mma-shape", MMA, "<m16n8k16,", "<m16n8,",
         "invalid tiled_mma: expected an mMnNkK shape, got m16n8", ParseError),
]


@pytest.mark.parametrize("good, bad, message, error", CASES)
def test_valid_snippet_verifies(good, bad, message, error):
    verify(good)


@pytest.mark.parametrize("good, bad, message, error", CASES)
def test_broken_snippet_is_refused_with_its_message(good, bad, message, error):
    with pytest.raises(error, match=re.escape(message)):
        verify(bad)
