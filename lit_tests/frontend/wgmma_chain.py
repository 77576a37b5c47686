# RUN: %python %s | filecheck %s
# REQUIRES: ptxas
# mma_async on a pending accumulator: two groups of k = 64 over one (64, 64) accumulator, the
# second issued on the first's pending value. In the tylo IR the second tylo.wgmma_mma_async
# takes the first's result (no tylo.wgmma_wait between); in PTX one wgmma.fence before the
# first group, the eight instructions on the same registers, two commits, one wait at the end.
import numpy as np

import tylo
from tylo import BFloat16
from tylo.compiler.plans.tma_tile import TMATile, shared_layout

plan = tylo.WGMMA64(BFloat16, 64, 64)
la = shared_layout(TMATile(BFloat16, (64, 64), 1, 128))
lb = shared_layout(TMATile(BFloat16, (64, 64), 0, 128))


@tylo.kernel
def chained(out: tylo.Tensor):
    t = tylo.thread_idx()
    acc = tylo.zero_accumulator(plan)
    for h in tylo.static_range(2):  # noqa: B007
        sa = tylo.SharedTile(tylo.shared_alloc(BFloat16, 4096, align=1024), la)
        sb = tylo.SharedTile(tylo.shared_alloc(BFloat16, 4096, align=1024), lb)
        acc = tylo.mma_async(plan, tylo.wgmma_operand(plan, "A", sa),
                             tylo.wgmma_operand(plan, "B", sb), acc)
    acc = tylo.wait_mma(acc)
    tylo.store(tylo.window(out, (0, 0), (64, 64)), tylo.finish_mma(acc), t)


compiled = chained.compile(np.zeros((64, 64), np.float32), block=128, arch="sm_90a")
print(compiled.asm["tylo"])
print(compiled.ptx)

# CHECK-LABEL: func.func @chained(
# CHECK:       %[[P0:.*]] = tylo.wgmma_mma_async %{{.*}}, %{{.*}}, %{{.*}} {{.*}}zero
# CHECK-NOT:   tylo.wgmma_wait
# CHECK:       %[[P1:.*]] = tylo.wgmma_mma_async %{{.*}}, %{{.*}}, %[[P0]]
# CHECK-NEXT:  %{{.*}} = tylo.wgmma_wait 0(%[[P1]])

# CHECK-LABEL: .visible .entry chained(
# CHECK:       wgmma.fence.sync.aligned;
# CHECK:       wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {[[REGS:.*]]}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, 0, 1, 1, 0, 0;
# CHECK-COUNT-3: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {[[REGS]]}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, 1, 1, 1, 0, 0;
# CHECK-NOT:   wgmma.wait_group
# CHECK-NOT:   wgmma.fence
# CHECK:       wgmma.commit_group.sync.aligned;
# CHECK-NOT:   wgmma.wait_group
# CHECK-NOT:   wgmma.fence
# CHECK:       wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {[[REGS]]}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, 1, 1, 1, 0, 0;
# CHECK-COUNT-3: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {[[REGS]]}
# CHECK-NEXT:  wgmma.commit_group.sync.aligned;
# the wait is tylo.wait_mma's, at line 27, column 11 of this file (PTX line info)
# CHECK-NEXT:  .loc 1 27 11
# CHECK-NEXT:  wgmma.wait_group.sync.aligned 0;
