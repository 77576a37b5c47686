"""Catalogue entries of the WGMMA builtins (frontend/language/wgmma.py) and tylo.fence_proxy_async; added
to `mistakes.MISTAKES` (see mistakes.py for the format)."""

from __future__ import annotations

from mistakes_base import Mistake

P = "copy, TMA, WGMMA and tcgen05 plans"

_SETUP = """
plan = WGMMA64(BFloat16, 64, 64)
la = shared_layout(TMATile(BFloat16, (64, 64), 1))
lb = shared_layout(TMATile(BFloat16, (64, 64), 0))
"""

_TILES = """
    sa = tylo.SharedTile(tylo.shared_alloc(BFloat16, 4096, align=1024), la)
    sb = tylo.SharedTile(tylo.shared_alloc(BFloat16, 4096, align=1024), lb)
    a, b = tylo.wgmma_operand(plan, "A", sa), tylo.wgmma_operand(plan, "B", sb)
"""

_COMPILE = 'k.compile(tylo.Tensor(Float32, 2), block=128, arch="sm_90a")\n'

WGMMA: list[Mistake] = [
    Mistake("wgmma-stage-overwritten", P,
            "a store into a shared operand while the WGMMA that reads it is pending", _SETUP + """
@tylo.kernel
def k(out, x):""" + _TILES + """    pending = tylo.mma_async(plan, a, b, tylo.zero_accumulator(plan))
    sa[1, 0] = x[0, 0]  # <-
    acc = tylo.wait_mma(pending)
k.compile(tylo.Tensor(Float32, 2), tylo.Tensor(BFloat16, 2), block=128, arch="sm_90a")
""", "CompileError", "the stage is overwritten while the WGMMA may be reading it"),
    Mistake("wgmma-pending-read", P, "computing with mma_async's pending result before wait_mma",
            _SETUP + """
@tylo.kernel
def k(out):""" + _TILES + """    pending = tylo.mma_async(plan, a, b, tylo.zero_accumulator(plan))
    x = pending * 2.0  # <-
""" + _COMPILE, "TypeMismatchError", "acc = tylo.wait_mma(pending) first"),
    Mistake("wgmma-accumulator-after-mma-async", P,
            "reading the accumulator passed to mma_async (instead of wait_mma's result)",
            _SETUP + """
@tylo.kernel
def k(out):""" + _TILES + """    acc = tylo.zero_accumulator(plan)
    pending = tylo.mma_async(plan, a, b, acc)
    tylo.store(tylo.window(out, (0, 0), (64, 64)), acc, tylo.thread_idx())  # <-
    tylo.wait_mma(pending)
""" + _COMPILE, "TypeMismatchError", "this accumulator was passed to tylo.mma_async"),
    Mistake("wgmma-operand-role", P, "a WGMMA operand of role 'C'", _SETUP + """
@tylo.kernel
def k(out):
    sa = tylo.SharedTile(tylo.shared_alloc(BFloat16, 4096, align=1024), la)
    tylo.wgmma_operand(plan, "C", sa)  # <-
""" + _COMPILE, "PlanError", "must be 'A' or 'B'"),
    Mistake("wgmma-operand-layout", P, "a WGMMA operand in a plain row-major shared tile",
            _SETUP + """
@tylo.kernel
def k(out):
    sa = tylo.SharedTile(tylo.shared_alloc(BFloat16, 4096, align=1024), Layout((64, 64), (64, 1)))
    tylo.wgmma_operand(plan, "A", sa)  # <-
""" + _COMPILE, "GeometryError", "not a canonical swizzled encoding"),
    Mistake("wgmma-register-a-ownership", P,
            "register A with an ownership other than the WGMMA A ownership", _SETUP + """
mma = TiledMMA(MMAAtom((16, 8, 16), BFloat16, Float32), warps=(4, 1), repeat=(1, 1), k=64)
@tylo.kernel
def k(out, A):
    fa = tylo.load_fragment(mma.operand_layout("A"), tylo.window(A, (0, 0), (64, 64)), tylo.thread_idx())
    tylo.wgmma_operand(plan, "A", fa)  # <-
k.compile(tylo.Tensor(Float32, 2), tylo.Tensor(BFloat16, 2), block=128, arch="sm_90a")
""", "GeometryError", "must have the WGMMA A ownership"),
    Mistake("wgmma-warpgroups", P, "a WGMMA plan over more warpgroups than a block holds", """
WGMMA64(BFloat16, 64, 64, warpgroups=9)  # <-
""", "PlanError", "warpgroups = 9 must be 1..8", located=False),
    Mistake("wgmma-fp8-mn-major", P, "an FP8 WGMMA operand stored MN-major (N contiguous)", """
plan = WGMMA64(Float8E4M3, 128, 128)
la = shared_layout(TMATile(Float8E4M3, (64, 128), 1))
lb = shared_layout(TMATile(Float8E4M3, (128, 128), 1))  # B (k, n) with n contiguous: MN-major
@tylo.kernel
def k(out):
    sa = tylo.SharedTile(tylo.shared_alloc(Float8E4M3, 8192, align=1024), la)
    sb = tylo.SharedTile(tylo.shared_alloc(Float8E4M3, 16384, align=1024), lb)
    a = tylo.wgmma_operand(plan, "A", sa)
    b = tylo.wgmma_operand(plan, "B", sb)  # <-
""" + _COMPILE, "GeometryError", "the ISA has no transpose for 8-bit operands"),
    Mistake("wgmma-fp8-k", P, "an FP8 WGMMA k other than 32, 64 or 128", """
WGMMA64(Float8E4M3, 64, 16)  # <-
""", "GeometryError", "k = 16 must be 32, 64 or 128 for Float8E4M3 inputs", located=False),
    Mistake("wgmma-type-pair", P, "WGMMA inputs of two types the ISA does not pair", """
WGMMA64(BFloat16, 64, 64, b_dtype=Float8E4M3)  # <-
""", "PlanError", "no BFloat16 x Float8E4M3 inputs", located=False),
    Mistake("wgmma-integer-n", P, "an integer WGMMA of n = 40 (the .s32 forms step N by 16 "
            "above 32)", """
WGMMA64(Int8, 40, 128)  # <-
""", "GeometryError", "n = 40 must be 8..32 in steps of 8, then 48..256 in steps of 16",
            located=False),
    Mistake("wgmma-accumulator-type", P, "an f16 accumulator for bf16 inputs (the ISA has .f16 "
            "destinations for .f16 inputs only)", """
WGMMA64(BFloat16, 64, 64, accumulator=Float16)  # <-
""", "PlanError", "no BFloat16 x BFloat16 inputs with Float16 accumulation", located=False),
    Mistake("wgmma-satfinite-float", P, "satfinite=True on a float WGMMA plan", """
WGMMA64(Float8E4M3, 64, 128, satfinite=True)  # <-
""", "PlanError", "satfinite=True is for integer inputs", located=False),
    Mistake("wgmma-satfinite-partials", P, "a saturating integer plan with partials (their sum "
            "would wrap)", """
WGMMA64(Int8, 64, 128, partials=2, satfinite=True)  # <-
""", "PlanError", "satfinite=True with partials = 2", located=False),
    Mistake("wgmma-satfinite-value", P, "satfinite given something other than True or False", """
WGMMA64(Int8, 64, 128, satfinite="yes")  # <-
""", "PlanError", "satfinite = 'yes' must be True or False", located=False),
    Mistake("wgmma-accumulator-dtype", P, "a Float32 fragment as the accumulator of an int8 plan",
            """
plan = WGMMA64(Int8, 64, 128)
la = shared_layout(TMATile(Int8, (64, 128), 1))
lb = shared_layout(TMATile(Int8, (128, 64), 0))
@tylo.kernel
def k(out):
    sa = tylo.SharedTile(tylo.shared_alloc(Int8, 8192, align=1024), la)
    sb = tylo.SharedTile(tylo.shared_alloc(Int8, 8192, align=1024), lb)
    a, b = tylo.wgmma_operand(plan, "A", sa), tylo.wgmma_operand(plan, "B", sb)
    acc = tylo.zeros(plan.operand_layout("C"), Float32)
    tylo.mma_async(plan, a, b, acc)  # <-
k.compile(tylo.Tensor(Int32, 2), block=128, arch="sm_90a")
""", "TypeMismatchError", "the accumulator must be a fragment of Int32 with"),
    Mistake("wgmma-tf32-mn-major", P, "a tf32 WGMMA operand stored MN-major (N contiguous)", """
plan = WGMMA64(Float32, 32, 32)
lb = shared_layout(TMATile(Float32, (32, 32), 1))  # B (k, n) with n contiguous: MN-major
@tylo.kernel
def k(out):
    sb = tylo.SharedTile(tylo.shared_alloc(Float32, 1024, align=1024), lb)
    b = tylo.wgmma_operand(plan, "B", sb)  # <-
""" + _COMPILE, "GeometryError", "the ISA has no transpose for 32-bit operands"),
    Mistake("wgmma-tf32-register-a", P, "A of a tf32 WGMMA from registers", """
plan = WGMMA64(Float32, 32, 32)
own = WGMMA64(BFloat16, 32, 32).operand_layout("C")
@tylo.kernel
def k(out, A):
    fa = tylo.load_fragment(own, tylo.window(A, (0, 0), (64, 32)), tylo.thread_idx())
    tylo.wgmma_operand(plan, "A", fa)  # <-
k.compile(tylo.Tensor(Float32, 2), tylo.Tensor(Float32, 2), block=128, arch="sm_90a")
""", "UnsupportedError", "takes A from a shared tile only"),
    Mistake("accumulator-as-a-width", P,
            "tylo.accumulator_as_a of a whole (64, 128) score accumulator for a k = 32 plan",
            """
plan = WGMMA64(Float8E4M3, 64, 32)
@tylo.kernel
def k(out):
    s = tylo.zeros(WGMMA64(Float8E4M3, 128, 128).operand_layout("C"))
    a = tylo.accumulator_as_a(plan, s)  # <-
""" + _COMPILE, "TypeMismatchError", "accumulator ownership at width k = 32"),
    Mistake("register-a-packed-dtype", P,
            "a packed register A of another dtype than the plan's (bf16 words, an e4m3 plan)",
            """
plan = WGMMA64(Float8E4M3, 64, 32)
@tylo.kernel
def k(out):
    s = tylo.zeros(WGMMA64(BFloat16, 32, 32).operand_layout("C"))
    a = tylo.wgmma_operand(plan, "A", tylo.accumulator_as_a(WGMMA64(BFloat16, 64, 32), s))  # <-
""" + _COMPILE, "TypeMismatchError", "pack it as Float8E4M3"),
    Mistake("fence-proxy-async-below-sm90", P, "tylo.fence_proxy_async compiled for sm_80", """
@tylo.kernel
def k(out):
    tylo.fence_proxy_async()  # <-
k.compile(tylo.Tensor(Float32, 1), block=128, arch="sm_80")
""", "CompileError", "fence.proxy.async needs sm_90"),
]
