# RUN: %python %s | filecheck %s
# REQUIRES: ptxas
# An int8 WGMMA from the kernel language: WGMMA64(Int8, 24, 128, b_dtype=UInt8, satfinite=True)
# over 128-byte swizzled K-major tiles is four m64n24k32 .satfinite.s32.s8.u8 instructions on
# twelve .b32 accumulator registers, the descriptors stepped by 32 bytes (2 in the
# start-address field), the first with scale-d 0 (zero accumulator), no imm-scale and no
# imm-trans operands; one commit, one wait; the finished s32 accumulator stored as it is (st.global.b32). The
# register-A form (u8 x u8, wrapping) packs sixteen bytes into four .b32 words before the fence.
# The compile assembles the PTX with ptxas (sm_90a); ptxas makes IGMMA instructions, .SAT for
# the saturating plan.
import tylo
from tylo import Int8, Int32, TMATile, UInt8, WGMMA64
from tylo.frontend.language.wgmma import register_a_ownership

PLAN = WGMMA64(Int8, 24, 128, b_dtype=UInt8, satfinite=True)
LA = tylo.shared_layout(TMATile(Int8, (64, 128), 1))
LB = tylo.shared_layout(TMATile(UInt8, (128, 24), 0))
REG = WGMMA64(UInt8, 8, 32)
LR = tylo.shared_layout(TMATile(UInt8, (32, 8), 0, 32))


@tylo.kernel
def int8_wgmma(out):
    t = tylo.thread_idx()
    sa = tylo.SharedTile(tylo.shared_alloc(Int8, 64 * 128, align=1024), LA)
    sb = tylo.SharedTile(tylo.shared_alloc(UInt8, 128 * 24, align=1024), LB)
    a = tylo.wgmma_operand(PLAN, "A", sa)
    b = tylo.wgmma_operand(PLAN, "B", sb)
    acc = tylo.wait_mma(tylo.mma_async(PLAN, a, b, tylo.zero_accumulator(PLAN)))
    tylo.store(tylo.window(out, (0, 0), (64, 24)), tylo.finish_mma(acc, PLAN), t)


@tylo.kernel
def int8_register_a(out, A):
    t = tylo.thread_idx()
    sb = tylo.SharedTile(tylo.shared_alloc(UInt8, 32 * 8, align=256), LR)
    fa = tylo.load_fragment(register_a_ownership(REG), tylo.window(A, (0, 0), (64, 32)), t)
    acc = tylo.wait_mma(tylo.mma_async(REG, tylo.wgmma_operand(REG, "A", fa),
                                       tylo.wgmma_operand(REG, "B", sb),
                                       tylo.zero_accumulator(REG)))
    tylo.store(tylo.window(out, (0, 0), (64, 8)), tylo.finish_mma(acc, REG), t)


# CHECK-LABEL: .visible .entry int8_wgmma(
# CHECK:       wgmma.fence.sync.aligned;
# CHECK:       wgmma.mma_async.sync.aligned.m64n24k32.satfinite.s32.s8.u8 {[[ACC:%r[0-9]+(, %r[0-9]+){11}]]}, %[[A0:rd[0-9]+]], %[[B0:rd[0-9]+]], 0;
# CHECK-NEXT:  mov.b64 %[[TWO:rd[0-9]+]], 2;
# CHECK-NEXT:  add.s64 %[[B1:rd[0-9]+]], %[[B0]], %[[TWO]];
# CHECK-NEXT:  add.s64 %[[A1:rd[0-9]+]], %[[A0]], %[[TWO]];
# CHECK-NEXT:  wgmma.mma_async.sync.aligned.m64n24k32.satfinite.s32.s8.u8 {[[ACC]]}, %[[A1]], %[[B1]], 1;
# CHECK:       wgmma.mma_async.sync.aligned.m64n24k32.satfinite.s32.s8.u8 {[[ACC]]}, %{{rd[0-9]+}}, %{{rd[0-9]+}}, 1;
# CHECK:       wgmma.mma_async.sync.aligned.m64n24k32.satfinite.s32.s8.u8 {[[ACC]]}, %{{rd[0-9]+}}, %{{rd[0-9]+}}, 1;
# CHECK-NEXT:  wgmma.commit_group.sync.aligned;
# CHECK:       wgmma.wait_group.sync.aligned 0;
# CHECK-NOT:   wgmma.mma_async
# CHECK:       st.global.b32
# CHECK-LABEL: IGMMA
# CHECK:       IGMMA.64x24x32.S8.U8.SAT
compiled = int8_wgmma.compile(tylo.Tensor(Int32, 2), block=128, arch="sm_90a")
print(compiled.ptx)
print("IGMMA")
print("\n".join(sorted(k for k in compiled.sass_counts().full if "GMMA" in k)))

# CHECK-LABEL: .visible .entry int8_register_a(
# CHECK:       or.b32
# CHECK:       wgmma.fence.sync.aligned;
# CHECK:       wgmma.mma_async.sync.aligned.m64n8k32.s32.u8.u8 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, 0;
# CHECK-NEXT:  wgmma.commit_group.sync.aligned;
print(int8_register_a.compile(tylo.Tensor(Int32, 2), tylo.Tensor(UInt8, 2), block=128,
                              arch="sm_90a").ptx)
