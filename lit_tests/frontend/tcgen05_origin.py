# RUN: %python %s | filecheck %s
# REQUIRES: ptxas
# tcgen05_operand at a runtime origin (a stage of a shared ring, a K offset in a runtime loop):
# the descriptor is formed once at the static origin, by tylo.tcgen05_descriptor, and the
# runtime origin's byte offset >> 4 is added to it (the start address field, bits 0-13, counts
# 16-byte units): A's stage is stage * 128 rows of 128 bytes (16 KiB: stage * 16384 >> 4), its
# K offset kk * 16 bf16 elements inside the one 128-byte row (kk * 32 bytes >> 4). The PTX adds
# them with add.s64 before the tcgen05.mma; ptxas accepts it for sm_100a.
import numpy as np

import tylo
from tylo import BFloat16, Int32, TMATile, shared_layout

atom = tylo.Tcgen05MMA((128, 32, 16), BFloat16)
la = shared_layout(TMATile(BFloat16, (128, 64), 1)).rebuild((256, 64), (64, 1))
lb = shared_layout(TMATile(BFloat16, (64, 32), 0))


@tylo.kernel
def ring(out, stage, k_steps):
    t, warp = tylo.thread_idx(), tylo.warp_id()
    sa = tylo.SharedTile(tylo.shared_alloc(BFloat16, 256 * 64, align=1024), la)
    sb = tylo.SharedTile(tylo.shared_alloc(BFloat16, 64 * 32, align=1024), lb)
    slot = tylo.shared_alloc(Int32, 1)
    bars = tylo.mbarriers(1)
    if warp == 0:
        tylo.tmem_allocate(32, into=slot)
    if t == 0:
        bars[0].init(1)
        tylo.fence_mbarrier_init()
    tylo.tcgen05_fence_before_thread_sync()
    tylo.barrier()
    tylo.tcgen05_fence_after_thread_sync()
    base = tylo.SharedTile(slot, tylo.Layout((1,), (1,)))[0]
    d = tylo.accumulator(atom, base)
    if t == 0:
        a = tylo.tcgen05_operand(atom, "A", sa, (stage * 128, 0))
        b = tylo.tcgen05_operand(atom, "B", sb)
        for kk in range(k_steps):
            tylo.mma(atom, d, tylo.tcgen05_operand(a, (stage * 128, kk * 16)),
                     tylo.tcgen05_operand(b, (kk * 16, 0)), k=16, accumulate=kk > 0)
        tylo.commit_mma(bars[0])
    bars[0].wait(0)
    tylo.tcgen05_fence_before_thread_sync()
    tylo.barrier()
    if warp == 0:
        tylo.tcgen05_fence_after_thread_sync()
        tylo.tmem_deallocate(base, 32)
    out[t] = t


compiled = ring.compile(np.zeros(128, np.int32), 1, 1, block=128, arch="sm_100a")
print(compiled.asm["tylo"])
print(compiled.ptx)
print(compiled.report)

# CHECK-LABEL: func.func @ring(
# CHECK:       %[[ROWS:.*]] = arith.muli %stage, %{{.*}} : i32
# CHECK-NEXT:  %[[C128:.*]] = arith.constant 128 : i32
# CHECK-NEXT:  %[[BYTES:.*]] = arith.muli %[[ROWS]], %[[C128]] : i32
# CHECK:       ptx.trap if %{{.*}} : !ptx.reg<p> {negate, reason = "tcgen05_operand A origin axis 0: a multiple of 8 with the operand inside the tile"}
# CHECK:       %[[DA:.*]] = tylo.tcgen05_descriptor "A"
# CHECK-NEXT:  %[[C4:.*]] = arith.constant 4 : i32
# CHECK-NEXT:  %[[U:.*]] = arith.shrsi %[[BYTES]], %[[C4]] : i32
# CHECK-NEXT:  %[[U64:.*]] = arith.extsi %[[U]] : i32 to i64
# CHECK-NEXT:  %{{.*}} = arith.addi %[[DA]], %[[U64]] : i64
# CHECK:       %[[DB:.*]] = tylo.tcgen05_descriptor "B"
# CHECK:       scf.for
# CHECK-NOT:   tylo.tcgen05_descriptor
# CHECK:       ptx.trap if %{{.*}} : !ptx.reg<p> {negate, reason = "tcgen05_operand A origin axis 1: a multiple of 16 with the operand inside the tile"}
# CHECK:       %[[A:.*]] = arith.addi %[[DA]], %{{.*}} : i64
# CHECK:       %[[B:.*]] = arith.addi %[[DB]], %{{.*}} : i64
# CHECK-NOT:   tylo.tcgen05_descriptor
# CHECK:       tylo.tcgen05_mma %{{.*}}, %[[A]], %[[B]] accumulate

# CHECK-LABEL: .visible .entry ring(
# CHECK:       add.s64 %[[RA:rd[0-9]+]], %rd{{[0-9]+}}, %rd{{[0-9]+}};
# CHECK:       add.s64 %[[RB:rd[0-9]+]], %rd{{[0-9]+}}, %rd{{[0-9]+}};
# CHECK:       tcgen05.mma.cta_group::1.kind::f16 [%r{{[0-9]+}}], %[[RA]], %[[RB]], %r{{[0-9]+}}, %p{{[0-9]+}};
# CHECK:       ring: {{[0-9]+}} registers
