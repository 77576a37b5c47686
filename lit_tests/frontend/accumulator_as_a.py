# RUN: %python %s | filecheck %s
# REQUIRES: ptxas
# tylo.accumulator_as_a: an FP32 accumulator of width 32 as the register A of an FP8 WGMMA
# (m64n64k32 .e4m3.e4m3). Each thread's 16 slots become four words, each two
# cvt.rn.satfinite.e4m3x2.f32 joined by one mov.b32 (no byte shifts, no shuffle: the register
# map is a renaming); the words go to the instruction as they are. The slots pair as
# `WGMMA64.accumulator_as_a` says: A slots (0, 1, 2, 3) are accumulator slots (0, 1, 4, 5) (the
# high element of each pair is cvt's first source). The compile assembles with ptxas (sm_90a).
import tylo
from tylo import Float8E4M3, Float32, TMATile, WGMMA64

PLAN = WGMMA64(Float8E4M3, 64, 32)
LB = tylo.shared_layout(TMATile(Float8E4M3, (32, 64), 0, 32))


@tylo.kernel
def p_times_v(out, S):
    t = tylo.thread_idx()
    sb = tylo.SharedTile(tylo.shared_alloc(Float8E4M3, 32 * 64, align=1024), LB)
    own = tylo.Ownership((64, 32), PLAN.instruction.c_layout(32))
    s = tylo.load_fragment(own, tylo.window(S, (0, 0), (64, 32)), t)
    a = tylo.wgmma_operand(PLAN, "A", tylo.accumulator_as_a(PLAN, s))
    acc = tylo.wait_mma(tylo.mma_async(PLAN, a, tylo.wgmma_operand(PLAN, "B", sb),
                                       tylo.zero_accumulator(PLAN)))
    tylo.store(tylo.window(out, (0, 0), (64, 64)), tylo.finish_mma(acc, PLAN), t)


# CHECK-LABEL: .visible .entry p_times_v(
# CHECK:       ld.global.f32 %[[S0:f[0-9]+]],
# CHECK:       ld.global.f32 %[[S1:f[0-9]+]],
# CHECK:       ld.global.f32 %[[S2:f[0-9]+]],
# CHECK:       ld.global.f32 %[[S3:f[0-9]+]],
# CHECK:       ld.global.f32 %[[S4:f[0-9]+]],
# CHECK:       ld.global.f32 %[[S5:f[0-9]+]],
# CHECK:       cvt.rn.satfinite.e4m3x2.f32 %[[LO:rs[0-9]+]], %[[S1]], %[[S0]];
# CHECK-NEXT:  cvt.rn.satfinite.e4m3x2.f32 %[[HI:rs[0-9]+]], %[[S5]], %[[S4]];
# CHECK-NEXT:  mov.b32 %[[W0:r[0-9]+]], {%[[LO]], %[[HI]]};
# CHECK-COUNT-3: mov.b32 %r{{[0-9]+}}, {%rs{{[0-9]+}}, %rs{{[0-9]+}}};
# CHECK-NOT:   shl.b32
# CHECK:       wgmma.fence.sync.aligned;
# CHECK:       wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {{{[^}]+}}}, {%[[W0]], %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, 0, 1, 1;
# CHECK-NOT:   shfl
print(p_times_v.compile(tylo.Tensor(Float32, 2), tylo.Tensor(Float32, 2), block=128,
                        arch="sm_90a").ptx)
