# RUN: %python %s | filecheck %s
# REQUIRES: ptxas
# An f16-accumulating WGMMA from the kernel language: WGMMA64(Float16, 24, 32,
# accumulator=Float16) in a K loop is two m64n24k16 .f16.f16.f16 instructions per step on six
# .b32 registers (two f16 each). The accumulator's f16 slots are packed in pairs (mov.b32
# {lo, hi}) BEFORE the wgmma.fence, and unpacked (mov.b32 {lo, hi}, r) after the
# wgmma.wait_group; ptxas makes HGMMA .F16 (and keeps the packs and unpacks as PRMT
# instructions in the loop, 16 a step here: the cost of the f16 slots between steps).
import tylo
from tylo import Float16, TMATile, WGMMA64

PLAN = WGMMA64(Float16, 24, 32, accumulator=Float16)
LA = tylo.shared_layout(TMATile(Float16, (64, 32), 1, 64))
LB = tylo.shared_layout(TMATile(Float16, (32, 24), 0, 64))


@tylo.kernel
def f16_accumulator(out, steps):
    t = tylo.thread_idx()
    sa = tylo.SharedTile(tylo.shared_alloc(Float16, 64 * 32, align=512), LA)
    sb = tylo.SharedTile(tylo.shared_alloc(Float16, 32 * 24, align=512), LB)
    acc = tylo.zero_accumulator(PLAN)
    for _ in range(steps):
        acc = tylo.wait_mma(tylo.mma_async(PLAN, tylo.wgmma_operand(PLAN, "A", sa),
                                           tylo.wgmma_operand(PLAN, "B", sb), acc))
    tylo.store(tylo.window(out, (0, 0), (64, 24)), tylo.finish_mma(acc, PLAN), t)


# CHECK-LABEL: .visible .entry f16_accumulator(
# CHECK:       mov.b32 %[[W0:r[0-9]+]], {%rs{{[0-9]+}}, %rs{{[0-9]+}}};
# CHECK-NEXT:  mov.b32 %[[W1:r[0-9]+]], {%rs{{[0-9]+}}, %rs{{[0-9]+}}};
# CHECK-NEXT:  mov.b32 %[[W2:r[0-9]+]], {%rs{{[0-9]+}}, %rs{{[0-9]+}}};
# CHECK-NEXT:  mov.b32 %[[W3:r[0-9]+]], {%rs{{[0-9]+}}, %rs{{[0-9]+}}};
# CHECK-NEXT:  mov.b32 %[[W4:r[0-9]+]], {%rs{{[0-9]+}}, %rs{{[0-9]+}}};
# CHECK-NEXT:  mov.b32 %[[W5:r[0-9]+]], {%rs{{[0-9]+}}, %rs{{[0-9]+}}};
# CHECK:       wgmma.fence.sync.aligned;
# CHECK-NEXT:  wgmma.mma_async.sync.aligned.m64n24k16.f16.f16.f16 {%[[W0]], %[[W1]], %[[W2]], %[[W3]], %[[W4]], %[[W5]]}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, 1, 1, 1, 0, 0;
# CHECK:       wgmma.mma_async.sync.aligned.m64n24k16.f16.f16.f16 {%[[W0]], %[[W1]], %[[W2]], %[[W3]], %[[W4]], %[[W5]]}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, 1, 1, 1, 0, 0;
# CHECK-NEXT:  wgmma.commit_group.sync.aligned;
# CHECK:       wgmma.wait_group.sync.aligned 0;
# CHECK-NEXT:  mov.b32 {%rs{{[0-9]+}}, %rs{{[0-9]+}}}, %[[W0]];
# CHECK:       mov.b32 {%rs{{[0-9]+}}, %rs{{[0-9]+}}}, %[[W5]];
# CHECK-LABEL: GMMA
# CHECK-NEXT:  HGMMA.64x24x16.F16
compiled = f16_accumulator.compile(tylo.Tensor(Float16, 2), 4, block=128, arch="sm_90a")
print(compiled.ptx)
print("GMMA")
print("\n".join(sorted(k for k in compiled.sass_counts().full if "GMMA" in k)))
