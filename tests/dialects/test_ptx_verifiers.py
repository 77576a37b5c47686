"""Every verifier of the ptx dialect rejects bad IR with its own message.

Each case is one rule: a valid kernel, the one edit that breaks the rule, and the message the
rejection must carry. The valid kernel must verify and the edited one must be refused with that
message, so a test fails both when a verifier is missing and when it refuses valid IR. Kernels
start from `PRELUDE`, which holds one register of each class; a bad register name is refused
while parsing (``ParseError``).
"""

import re

import pytest
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError, VerifyException

from tylo.dialects.ptx import RegisterType
from tylo.passes.universe import make_context

CTX = make_context()

PRELUDE = """\
  %r = ptx.get_register : !ptx.reg<r1>
  %r2 = ptx.get_register : !ptx.reg<r2>
  %rd = ptx.get_register : !ptx.reg<rd1>
  %rs = ptx.get_register : !ptx.reg<rs1>
  %f = ptx.get_register : !ptx.reg<f1>
  %fd = ptx.get_register : !ptx.reg<fd1>
  %p = ptx.get_register : !ptx.reg<p1>
"""


def kernel(body: str) -> str:
    """`body` in an entry with parameters (.u64, .s32, .f32) and a 32-thread block."""
    return f'ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {{\n{PRELUDE}  {body}\n  ptx.ret\n}}'


def verify(text: str) -> None:
    Parser(CTX, text).parse_module().verify()


def case(rule, body, old, new, message, error=VerifyException):
    """`kernel(body)` verifies; with every `old` replaced by `new` it is refused with `message`.

    `old` and `new` may be tuples of strings for a change in several places."""
    good = kernel(body)
    olds, news = (old, new) if isinstance(old, tuple) else ((old,), (new,))
    bad = good
    for o, n in zip(olds, news, strict=True):
        assert o in bad, f"{rule}: {o!r} is not in the kernel"
        bad = bad.replace(o, n)
    return pytest.param(good, bad, message, error, id=rule)


R, RD, RS, F, P = "!ptx.reg<r1>", "!ptx.reg<rd1>", "!ptx.reg<rs1>", "!ptx.reg<f1>", "!ptx.reg<p1>"
PAIR = f'%x = ptx.cvt_pair "rn.satfinite" "e4m3x2" "f32" %f, %f : ({F}, {F}) -> !ptx.reg<rs2>'
BINARY = ("add", "sub", "mul", "div", "rem", "min", "max", "and", "or", "xor", "shl", "shr")
MMA = (
    'ptx.mma_sync "m16n8k16" "f32.bf16.bf16.f32"(%r, %r, %r, %r), (%r, %r), (%f, %f, %f, %f) : '
    f"({R}, {R}, {R}, {R}), ({R}, {R}), ({F}, {F}, {F}, {F}) -> "
    "(!ptx.reg<f4>, !ptx.reg<f5>, !ptx.reg<f6>, !ptx.reg<f7>)"
)
MMA_D = "%d0, %d1, %d2, %d3 = " + MMA
LD = f'%x = ptx.ld "global" "f32"[%rd, 4] : {RD} -> !ptx.reg<f2>'
ST = f'ptx.st "shared" "b32"[%r, 0], %r2 : {R}, !ptx.reg<r2>'

CASES = [
    # -- arithmetic: every binary instruction checks its result's class -----------------------
    *(
        case(f"{op}-result", f'%x = ptx.{op} "b32" %r, %r : ({R}, {R}) -> !ptx.reg<r3>', "<r3>", "<f3>",
             f"ptx.{op} result must be a .b32 register, got .f32 (%f3)")
        for op in BINARY
    ),
    case("add-operand-a", f'%x = ptx.add "s32" %r, %r : ({R}, {R}) -> !ptx.reg<r3>',
         f"%r, %r : ({R},", f"%f, %r : ({F},", "ptx.add operand a must be a .b32 register, got .f32 (%f1)"),
    case("add-operand-b", f'%x = ptx.add "s32" %r, %r : ({R}, {R}) -> !ptx.reg<r3>',
         f"%r : ({R}, {R})", f"%f : ({R}, {F})", "ptx.add operand b must be a .b32 register, got .f32 (%f1)"),
    case("add-f64", '%x = ptx.add "f64" %fd, %fd : (!ptx.reg<fd1>, !ptx.reg<fd1>) -> !ptx.reg<fd2>',
         "<fd2>", "<rd2>", "ptx.add result must be a .f64 register, got .b64 (%rd2)"),
    case("add-unknown-type", f'%x = ptx.add "s32" %r, %r : ({R}, {R}) -> !ptx.reg<r3>', '"s32"', '"s33"',
         "'.s33' is not a PTX type"),
    case("mul-wide-result", f'%x = ptx.mul "s32" "wide" %r, %r : ({R}, {R}) -> !ptx.reg<rd2>',
         "<rd2>", "<r3>", "ptx.mul result must be a .b64 register, got .b32 (%r3)"),
    case("mul-wide-16", f'%x = ptx.mul "u16" "wide" %rs, %rs : ({RS}, {RS}) -> !ptx.reg<r3>',
         "<r3>", "<rs3>", "ptx.mul result must be a .b32 register, got .b16 (%rs3)"),
    case("mul-wide-64", f'%x = ptx.mul "s32" "wide" %r, %r : ({R}, {R}) -> !ptx.reg<rd2>',
         ('"s32"', f"%r, %r : ({R}, {R})"), ('"s64"', f"%rd, %rd : ({RD}, {RD})"),
         "ptx.mul mode wide needs a 16- or 32-bit integer type, got .s64"),
    case("mul-wide-float", f'%x = ptx.mul "s32" "wide" %r, %r : ({R}, {R}) -> !ptx.reg<rd2>',
         ('"s32"', f"%r, %r : ({R}, {R})"), ('"f32"', f"%f, %f : ({F}, {F})"),
         "ptx.mul mode wide needs a 16- or 32-bit integer type, got .f32"),
    case("shl-amount", f'%x = ptx.shl "b64" %rd, %r : ({RD}, {R}) -> !ptx.reg<rd2>',
         f"%r : ({RD}, {R})", f"%rd : ({RD}, {RD})", "ptx.shl operand b must be a .b32 register, got .b64"),
    case("shr-amount", f'%x = ptx.shr "s16" %rs, %r : ({RS}, {R}) -> !ptx.reg<rs2>',
         f"%r : ({RS}, {R})", f"%rs : ({RS}, {RS})", "ptx.shr operand b must be a .b32 register, got .b16"),
    case("fma-c", f'%x = ptx.fma "f32" %f, %f, %f : ({F}, {F}, {F}) -> !ptx.reg<f2>',
         f"%f, %f, %f : ({F}, {F}, {F})", f"%f, %f, %r : ({F}, {F}, {R})",
         "fma c must be a .f32 register, got .b32 (%r1)"),
    case("fma-result", f'%x = ptx.fma "s32" %r, %r, %r : ({R}, {R}, {R}) -> !ptx.reg<r3>', "<r3>", "<f3>",
         "fma result must be a .b32 register, got .f32 (%f3)"),
    case("mov-result", f'%x = ptx.mov "b64" %rd : {RD} -> !ptx.reg<rd2>', "<rd2>", "<r3>",
         "ptx.mov result must be a .b64 register, got .b32 (%r3)"),
    case("neg-source", f'%x = ptx.neg "f32" %f : {F} -> !ptx.reg<f2>', f"%f : {F}", f"%r : {R}",
         "ptx.neg source must be a .f32 register, got .b32 (%r1)"),
    case("not-pred", f'%x = ptx.not "pred" %p : {P} -> !ptx.reg<p2>', "<p2>", "<r3>",
         "ptx.not result must be a .pred register, got .b32 (%r3)"),
    case("const-result", '%x = ptx.const "f32"(1065353216) : !ptx.reg<f2>', "<f2>", "<r3>",
         "const result must be a .f32 register, got .b32 (%r3)"),
    case("const-type", '%x = ptx.const "f32"(1065353216) : !ptx.reg<f2>', '"f32"', '"f31"',
         "'.f31' is not a PTX type"),
    case("special-unknown", '%x = ptx.special "%tid.x" : !ptx.reg<r3>', "%tid.x", "%tid.w",
         "'%tid.w' is not a special register Tylo reads"),
    case("special-clock", '%x = ptx.special "%warpid" : !ptx.reg<r3>', "%warpid", "%clock",
         "'%clock' is not a special register Tylo reads"),
    case("special-result", '%x = ptx.special "%ctaid.y" : !ptx.reg<r3>', "<r3>", "<rd3>",
         "special register copy must be a .b32 register, got .b64 (%rd3)"),
    # -- comparison, selection, conversion ------------------------------------------------------
    case("setp-result", f'%x = ptx.setp "lt" "s32" %r, %r2 : ({R}, !ptx.reg<r2>) -> !ptx.reg<p2>',
         "<p2>", "<r3>", "setp result must be a .pred register, got .b32 (%r3)"),
    case("setp-operand", f'%x = ptx.setp "lt" "s32" %r, %r2 : ({R}, !ptx.reg<r2>) -> !ptx.reg<p2>',
         f"%r, %r2 : ({R},", f"%f, %r2 : ({F},", "setp a must be a .b32 register, got .f32 (%f1)"),
    case("setp-cmp", f'%x = ptx.setp "lt" "s32" %r, %r2 : ({R}, !ptx.reg<r2>) -> !ptx.reg<p2>',
         '"lt"', '"less"', "'less' is not a setp comparison"),
    case("setp-float-cmp", f'%x = ptx.setp "nan" "f32" %f, %f : ({F}, {F}) -> !ptx.reg<p2>',
         '"nan"', '"lo.u"', "'lo.u' is not a setp comparison"),
    case("selp-predicate", f'%x = ptx.selp "b32" %r, %r2, %p : ({R}, !ptx.reg<r2>, {P}) -> !ptx.reg<r3>',
         f"%p : ({R}, !ptx.reg<r2>, {P})", f"%r : ({R}, !ptx.reg<r2>, {R})",
         "selp predicate must be a .pred register, got .b32 (%r1)"),
    case("selp-result", f'%x = ptx.selp "f32" %f, %f, %p : ({F}, {F}, {P}) -> !ptx.reg<f2>',
         "<f2>", "<r3>", "selp result must be a .f32 register, got .b32 (%r3)"),
    case("cvt-source", f'%x = ptx.cvt "rn" "f32" "s32" %r : {R} -> !ptx.reg<f2>', f"%r : {R}", f"%f : {F}",
         "cvt source must be a .b32 register, got .f32 (%f1)"),
    case("cvt-result", f'%x = ptx.cvt "rn" "bf16" "f32" %f : {F} -> !ptx.reg<rs2>', "<rs2>", "<r3>",
         "cvt result must be a .b16 register, got .b32 (%r3)"),
    case("cvt-type", f'%x = ptx.cvt "rn" "bf16" "f32" %f : {F} -> !ptx.reg<rs2>', '"bf16"', '"bf8"',
         "'.bf8' is not a PTX type"),
    case("cvt-fp8-scalar", f'%x = ptx.cvt "rn" "bf16" "f32" %f : {F} -> !ptx.reg<rs2>', '"bf16"', '"e4m3"',
         "cvt has no scalar .e4m3 form: it converts .e4m3 only in pairs, as .e4m3x2"),
    case("cvt-fp8-scalar-source", f'%x = ptx.cvt "rn" "f16x2" "e5m2x2" %rs : {RS} -> !ptx.reg<r3>',
         ('"f16x2" "e5m2x2"', "<r3>"), ('"f16" "e5m2"', "<rs2>"),
         "cvt has no scalar .e5m2 form"),
    case("cvt-pair-type", PAIR, '"e4m3x2"', '"e4m3"', "cvt_pair writes a packed pair"),
    case("cvt-pair-from", PAIR, '"f32" %f', '"f16" %f', "cvt_pair converts from .f32, not .f16"),
    case("cvt-pair-source", PAIR, f"%f, %f : ({F}, {F})", f"%f, %r : ({F}, {R})",
         "cvt_pair lo must be a .f32 register, got .b32 (%r1)"),
    case("cvt-pair-result", PAIR, "<rs2>", "<r3>", "cvt_pair result must be a .b16 register, got .b32 (%r3)"),
    # -- pack and unpack ------------------------------------------------------------------------
    case("pack-width", f"%x = ptx.pack %rs, %rs : ({RS}, {RS}) -> !ptx.reg<r3>", "<r3>", "<rd3>",
         "pack of ['b16', 'b16'] into .b64: parts must be bit registers filling the result"),
    case("pack-b32-into-b32", f"%x = ptx.pack %r, %r2 : ({R}, !ptx.reg<r2>) -> !ptx.reg<rd3>",
         "<rd3>", "<r3>",
         "pack of ['b32', 'b32'] into .b32: parts must be bit registers filling the result"),
    case("pack-one-part", f"%x = ptx.pack %rs, %rs : ({RS}, {RS}) -> !ptx.reg<r3>",
         (f"%rs, %rs : ({RS}, {RS})", "<r3>"), (f"%r : ({R})", "<r4>"),
         "pack of ['b32'] into .b32: parts must be bit registers filling the result"),
    case("pack-mixed", f"%x = ptx.pack %rs, %rs, %rs, %rs : ({RS}, {RS}, {RS}, {RS}) -> !ptx.reg<rd3>",
         (f"%rs, %rs, %rs, %rs : ({RS}, {RS}, {RS}, {RS})"), (f"%rs, %rs, %r : ({RS}, {RS}, {R})"),
         "pack of ['b16', 'b16', 'b32'] into .b64: parts must be bit registers filling the result"),
    case("pack-float", f"%x = ptx.pack %r, %r : ({R}, {R}) -> !ptx.reg<rd3>",
         f"%r, %r : ({R}, {R})", f"%f, %f : ({F}, {F})",
         "pack of ['f32', 'f32'] into .b64: parts must be bit registers filling the result"),
    case("unpack-width", f"%x, %y = ptx.unpack %r : {R} -> (!ptx.reg<rs2>, !ptx.reg<rs3>)",
         f"%r : {R}", f"%rd : {RD}", "unpack of .b64 into ['b16', 'b16']: parts must be bit registers"),
    case("unpack-pred", f"%x, %y = ptx.unpack %r : {R} -> (!ptx.reg<rs2>, !ptx.reg<rs3>)",
         ("%x, %y", f"%r : {R} -> (!ptx.reg<rs2>, !ptx.reg<rs3>)"), ("%x", f"%p : {P} -> (!ptx.reg<p2>)"),
         "unpack of .pred into ['pred']: parts must be bit registers filling the source"),
    case("unpack-float", f"%x, %y = ptx.unpack %rd : {RD} -> (!ptx.reg<r2>, !ptx.reg<r3>)",
         "(!ptx.reg<r2>, !ptx.reg<r3>)", "(!ptx.reg<f2>, !ptx.reg<f3>)",
         "unpack of .b64 into ['f32', 'f32']: parts must be bit registers filling the source"),
    # -- memory ------------------------------------------------------------------------------------
    case("ld_param-index", '%x = ptx.ld_param "s32"[1] : !ptx.reg<r3>', "[1]", "[3]",
         "parameter 3 does not exist (3 parameters)"),
    case("ld_param-negative", '%x = ptx.ld_param "s32"[1] : !ptx.reg<r3>', "[1]", "[-1]",
         "parameter -1 does not exist (3 parameters)"),
    case("ld_param-type", '%x = ptx.ld_param "s32"[1] : !ptx.reg<r3>', '"s32"[1]', '"u32"[1]',
         "parameter 1 is .s32, read as .u32"),
    case("ld_param-result", '%x = ptx.ld_param "u64"[0] : !ptx.reg<rd3>', "<rd3>", "<r3>",
         "ld.param result must be a .b64 register, got .b32 (%r3)"),
    case("ld_param-outside-entry", '%x = ptx.ld_param "u64"[0] : !ptx.reg<rd3>',
         ('ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {', "ptx.ret\n"),
         ("func.func @k() {", "func.return\n"),
         "ld.param must be directly inside a ptx.entry, not func.func"),
    case("cvta-space", f'%x = ptx.cvta "global" %rd : {RD} -> !ptx.reg<rd2>', '"global"', '"shared"',
         "cvta.to is only used for .global here"),
    case("cvta-source", f'%x = ptx.cvta "global" %rd : {RD} -> !ptx.reg<rd2>', f"%rd : {RD}", f"%r : {R}",
         "cvta source must be a .b64 register, got .b32 (%r1)"),
    case("ld-global-address", LD, f"%rd, 4] : {RD}", f"%r, 4] : {R}",
         "global address must be a .b64 register, got .b32 (%r1)"),
    case("ld-shared-address", LD, '"global"', '"shared"', "shared address must be a .b32 register, got .b64"),
    case("ld-space", LD, '"global"', '"local"',
         "state space 'local' is not one of ('global', 'shared', 'param')"),
    case("ld-type", LD, '"f32"', '"f33"', "'.f33' is not a PTX type"),
    case("ld-result", LD, "<f2>", "<r3>", "ld result must be a .f32 register, got .b32 (%r3)"),
    case("st-shared-address", ST, f"%r, 0], %r2 : {R}", f"%rd, 0], %r2 : {RD}",
         "shared address must be a .b32 register, got .b64 (%rd1)"),
    case("st-global-address", ST, '"shared"', '"global"', "global address must be a .b64 register, got .b32"),
    case("st-value", ST, "%r2 : !ptx.reg<r1>, !ptx.reg<r2>", f"%f : {R}, {F}",
         "st value must be a .b32 register, got .f32 (%f1)"),
    case("st-space", ST, '"shared"', '"const"', "state space 'const' is not one of"),
    case("shared_decl-align", 'ptx.shared_decl "buf"[64] align 16', "align 16", "align 24",
         "alignment 24 must be a power of two"),
    case("shared_decl-bytes", 'ptx.shared_decl "buf"[64] align 16', "[64]", "[0]",
         "shared_decl needs a positive byte count"),
    case("mov_symbol-result", '%x = ptx.mov_symbol "buf" : !ptx.reg<r3>', "<r3>", "<rd3>",
         "shared address must be a .b32 register, got .b64 (%rd3)"),
    # -- synchronization, MMA, control flow -------------------------------------------------------
    case("bar_sync-id", "ptx.bar_sync 15", "15", "16", "barrier 16 must be in 0..15"),
    case("mma-A-class", MMA_D, ("(%r, %r, %r, %r), (%r", f"({R}, {R}, {R}, {R}), ({R}"),
         ("(%r, %r, %r, %f), (%r", f"({R}, {R}, {R}, {F}), ({R}"),
         "mma A register must be a .b32 register, got .f32 (%f1)"),
    case("mma-B-class", MMA_D, f"(%r, %r), (%f, %f, %f, %f) : ({R}, {R}, {R}, {R}), ({R}, {R})",
         f"(%r, %rd), (%f, %f, %f, %f) : ({R}, {R}, {R}, {R}), ({R}, {RD})",
         "mma B register must be a .b32 register, got .b64 (%rd1)"),
    case("mma-C-class", MMA_D, ("(%f, %f, %f, %f) :", f"({F}, {F}, {F}, {F})"),
         ("(%f, %f, %f, %r) :", f"({F}, {F}, {F}, {R})"),
         "mma C register must be a .f32 register, got .b32 (%r1)"),
    case("mma-D-class", MMA_D, "!ptx.reg<f7>)", "!ptx.reg<r7>)",
         "mma D register must be a .f32 register, got .b32 (%r7)"),
    case("mma-A-count", MMA_D, ("(%r, %r, %r, %r), (%r", f"({R}, {R}, {R}, {R}), ({R}"),
         ("(%r, %r, %r), (%r", f"({R}, {R}, {R}), ({R}"), "mma A needs 4 registers, got 3"),
    case("mma-D-count", MMA_D, ("%d0, %d1, %d2, %d3", ", !ptx.reg<f7>)"), ("%d0, %d1, %d2", ")"),
         "mma D needs 4 registers, got 3"),
    case("mma-types", MMA_D, '"f32.bf16.bf16.f32"', '"f32.bf16"',
         "mma.sync.m16n8k16 with types 'f32.bf16' is not an instruction of the MMA table"),
    case("mma-mixed-types", MMA_D, '"f32.bf16.bf16.f32"', '"f32.bf16.f16.f32"',
         "mma.sync.m16n8k16 with types 'f32.bf16.f16.f32' is not an instruction of the MMA table"),
    case("mma-shape", MMA_D, '"m16n8k16"', '"m16n8k32"',
         "mma.sync.m16n8k32 with types 'f32.bf16.bf16.f32' is not an instruction of the MMA table"),
    case("bra-negate", f'ptx.bra "L" if %p : {P} {{negate}}\n  ptx.label "L"', f" if %p : {P}", "",
         "negate needs a predicate"),
    case("bra-predicate", f'ptx.bra "L" if %p : {P}\n  ptx.label "L"', f"%p : {P}", f"%r : {R}",
         "branch predicate must be a .pred register, got .b32 (%r1)"),
    case("trap-negate", f"ptx.trap if %p : {P} {{negate}}", f" if %p : {P}", "", "negate needs a predicate"),
    case("trap-predicate", f"ptx.trap if %p : {P}", f"%p : {P}", f"%r : {R}",
         "trap predicate must be a .pred register, got .b32 (%r1)"),
    # -- entry and register types ----------------------------------------------------------------
    case("entry-param-type", "ptx.bar_sync 0", '["u64", "s32", "f32"]', '["u64", "s3"]',
         "'.s3' is not a kernel parameter type"),
    case("entry-param-pred", "ptx.bar_sync 0", '["u64", "s32", "f32"]', '["pred"]',
         "'.pred' is not a kernel parameter type"),
    case("entry-param-bf16", "ptx.bar_sync 0", '["u64", "s32", "f32"]', '["bf16"]',
         "a kernel parameter of .bf16 values is declared '.b16'"),
    case("reqntid-rank", "ptx.bar_sync 0", "[32, 1, 1]", "[32, 1]",
         "reqntid [32, 1] must be three positive extents of at most 1024 threads"),
    case("reqntid-zero", "ptx.bar_sync 0", "[32, 1, 1]", "[32, 0, 1]",
         "reqntid [32, 0, 1] must be three positive extents"),
    case("reqntid-negative", "ptx.bar_sync 0", "[32, 1, 1]", "[-32, -1, 1]",
         "reqntid [-32, -1, 1] must be three positive extents"),
    case("reqntid-too-many", "ptx.bar_sync 0", "[32, 1, 1]", "[32, 32, 2]",
         "reqntid [32, 32, 2] must be three positive extents of at most 1024 threads"),
    case("register-name", "ptx.bar_sync 0", "<fd1>", "<q1>",
         "'q1' is not a PTX register name (e.g. r3, rd1, f2, p0)", ParseError),
    case("register-prefix-only", "ptx.bar_sync 0", "<fd1>", "<fd>",
         "'fd' is not a PTX register name", ParseError),
]


@pytest.mark.parametrize("good, bad, message, error", CASES)
def test_valid_kernel_verifies(good, bad, message, error):
    verify(good)


@pytest.mark.parametrize("good, bad, message, error", CASES)
def test_broken_kernel_is_refused_with_its_message(good, bad, message, error):
    with pytest.raises(error, match=re.escape(message)):
        verify(bad)


@pytest.mark.parametrize(
    "reg_class, index, message",
    [
        ("b8", 1, "unknown PTX register class 'b8'"),
        ("u32", 1, "unknown PTX register class 'u32'"),
        ("b32", -1, "register numbers are non-negative"),
    ],
)
def test_register_type_is_refused(reg_class, index, message):
    with pytest.raises(VerifyException, match=re.escape(message)):
        RegisterType(reg_class, index)


@pytest.mark.parametrize(
    "reg_class, index, name", [("b32", 0, "%r0"), ("b64", 7, "%rd7"), ("pred", 2, "%p2")]
)
def test_register_type_is_accepted(reg_class, index, name):
    assert RegisterType(reg_class, index).register_name == name
