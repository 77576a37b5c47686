# RUN: %python %s | filecheck %s
# REQUIRES: ptxas
# A tf32 WGMMA from the kernel language: WGMMA64(Float32, 64, 32) over 128-byte swizzled K-major
# Float32 tiles (32 elements a swizzle row) is four m64n64k8 .f32.tf32.tf32 instructions, the
# descriptors stepped by 32 bytes (8 four-byte elements; 2 in the start-address field), the
# first with scale-d 0, imm-scale-a/b 1 and no imm-trans operands; ptxas makes HGMMA .TF32.
import tylo
from tylo import Float32, TMATile, WGMMA64

PLAN = WGMMA64(Float32, 64, 32)
LA = tylo.shared_layout(TMATile(Float32, (64, 32), 1))
LB = tylo.shared_layout(TMATile(Float32, (32, 64), 0))


@tylo.kernel
def tf32_wgmma(out):
    t = tylo.thread_idx()
    sa = tylo.SharedTile(tylo.shared_alloc(Float32, 64 * 32, align=1024), LA)
    sb = tylo.SharedTile(tylo.shared_alloc(Float32, 32 * 64, align=1024), LB)
    a = tylo.wgmma_operand(PLAN, "A", sa)
    b = tylo.wgmma_operand(PLAN, "B", sb)
    acc = tylo.wait_mma(tylo.mma_async(PLAN, a, b, tylo.zero_accumulator(PLAN)))
    tylo.store(tylo.window(out, (0, 0), (64, 64)), tylo.finish_mma(acc, PLAN), t)


# CHECK-LABEL: .visible .entry tf32_wgmma(
# CHECK:       wgmma.fence.sync.aligned;
# CHECK:       wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {[[ACC:[^}]+]]}, %[[A0:rd[0-9]+]], %[[B0:rd[0-9]+]], 0, 1, 1;
# CHECK-NEXT:  mov.b64 %[[TWO:rd[0-9]+]], 2;
# CHECK-NEXT:  add.s64 %[[B1:rd[0-9]+]], %[[B0]], %[[TWO]];
# CHECK-NEXT:  add.s64 %[[A1:rd[0-9]+]], %[[A0]], %[[TWO]];
# CHECK-NEXT:  wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {[[ACC]]}, %[[A1]], %[[B1]], 1, 1, 1;
# CHECK:       wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {[[ACC]]}, %{{rd[0-9]+}}, %{{rd[0-9]+}}, 1, 1, 1;
# CHECK:       wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {[[ACC]]}, %{{rd[0-9]+}}, %{{rd[0-9]+}}, 1, 1, 1;
# CHECK-NEXT:  wgmma.commit_group.sync.aligned;
# CHECK:       wgmma.wait_group.sync.aligned 0;
# CHECK-LABEL: GMMA
# CHECK-NEXT:  HGMMA.64x64x8.F32.TF32
compiled = tf32_wgmma.compile(tylo.Tensor(Float32, 2), block=128, arch="sm_90a")
print(compiled.ptx)
print("GMMA")
print("\n".join(sorted(k for k in compiled.sass_counts().full if "GMMA" in k)))
