# RUN: %python %s | filecheck %s
# REQUIRES: ptxas
# An FP8 WGMMA from the kernel language: WGMMA64(Float8E4M3, 64, 128, b_dtype=Float8E5M2) over
# 128-byte swizzled K-major tiles is four m64n64k32 .e4m3.e5m2 instructions, the descriptors
# stepped by 32 bytes (2 in the start-address field) along K inside the swizzle row, the first
# with scale-d 0 (zero accumulator), no imm-trans operands; one commit, one wait. The compile
# assembles the PTX with ptxas (sm_90a).
import tylo
from tylo import Float8E4M3, Float8E5M2, Float32, TMATile, WGMMA64

PLAN = WGMMA64(Float8E4M3, 64, 128, b_dtype=Float8E5M2)
LA = tylo.shared_layout(TMATile(Float8E4M3, (64, 128), 1))
LB = tylo.shared_layout(TMATile(Float8E5M2, (128, 64), 0))


@tylo.kernel
def fp8_wgmma(out):
    t = tylo.thread_idx()
    sa = tylo.SharedTile(tylo.shared_alloc(Float8E4M3, 64 * 128, align=1024), LA)
    sb = tylo.SharedTile(tylo.shared_alloc(Float8E5M2, 128 * 64, align=1024), LB)
    a = tylo.wgmma_operand(PLAN, "A", sa)
    b = tylo.wgmma_operand(PLAN, "B", sb)
    acc = tylo.wait_mma(tylo.mma_async(PLAN, a, b, tylo.zero_accumulator(PLAN)))
    tylo.store(tylo.window(out, (0, 0), (64, 64)), tylo.finish_mma(acc, PLAN), t)


# CHECK-LABEL: .visible .entry fp8_wgmma(
# CHECK:       wgmma.fence.sync.aligned;
# CHECK:       wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e5m2 {[[ACC:[^}]+]]}, %[[A0:rd[0-9]+]], %[[B0:rd[0-9]+]], 0, 1, 1;
# CHECK-NEXT:  mov.b64 %[[TWO:rd[0-9]+]], 2;
# CHECK-NEXT:  add.s64 %[[B1:rd[0-9]+]], %[[B0]], %[[TWO]];
# CHECK-NEXT:  add.s64 %[[A1:rd[0-9]+]], %[[A0]], %[[TWO]];
# CHECK-NEXT:  wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e5m2 {[[ACC]]}, %[[A1]], %[[B1]], 1, 1, 1;
# CHECK:       wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e5m2 {[[ACC]]}, %{{rd[0-9]+}}, %{{rd[0-9]+}}, 1, 1, 1;
# CHECK:       wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e5m2 {[[ACC]]}, %{{rd[0-9]+}}, %{{rd[0-9]+}}, 1, 1, 1;
# CHECK-NEXT:  wgmma.commit_group.sync.aligned;
# the wait is tylo.wait_mma's, at line 23, column 11 of this file (PTX line info)
# CHECK-NEXT:  .loc 1 23 11
# CHECK-NEXT:  wgmma.wait_group.sync.aligned 0;
# CHECK-NOT:   wgmma.mma_async
print(fp8_wgmma.compile(tylo.Tensor(Float32, 2), block=128, arch="sm_90a").ptx)
