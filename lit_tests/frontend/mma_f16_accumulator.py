# RUN: %python %s | filecheck %s
# REQUIRES: ptxas
# mma.sync with f16 accumulators: MMAAtom((16, 8, 16), Float16, Float16) is
# mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 on two .b32 registers of C and of D (two
# f16 each, low half first): the four f16 slots of the accumulator are packed in pairs
# (mov.b32 {lo, hi}) before it and D's registers unpacked after it; ptxas makes HMMA.16816.F16.
import tylo
from tylo import Float16, MMAAtom, TiledMMA

PLAN = TiledMMA(MMAAtom((16, 8, 16), Float16, Float16))


@tylo.kernel
def f16_mma(C, A, B):
    t = tylo.thread_idx()
    a = tylo.load_a(PLAN, tylo.window(A, (0, 0), (16, 16)), t)
    b = tylo.load_b(PLAN, tylo.window(B, (0, 0), (16, 8)), t)
    c = tylo.mma(PLAN, a, b, tylo.accumulator(PLAN))
    tylo.store(tylo.window(C, (0, 0), (16, 8)), c, t)


# CHECK-LABEL: .visible .entry f16_mma(
# the zero accumulator's slots (one register of 0) packed in pairs:
# CHECK:       mov.b32 %[[C0:r[0-9]+]], {%rs[[Z:[0-9]+]], %rs[[Z]]};
# CHECK-NEXT:  mov.b32 %[[C1:r[0-9]+]], {%rs[[Z]], %rs[[Z]]};
# CHECK-NEXT:  mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%[[D0:r[0-9]+]], %[[D1:r[0-9]+]]}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}}, {%[[C0]], %[[C1]]};
# CHECK-NEXT:  mov.b32 {%rs{{[0-9]+}}, %rs{{[0-9]+}}}, %[[D0]];
# CHECK-NEXT:  mov.b32 {%rs{{[0-9]+}}, %rs{{[0-9]+}}}, %[[D1]];
# CHECK-LABEL: MMA
# CHECK-NEXT:  HMMA.16816.F16
compiled = f16_mma.compile(tylo.Tensor(Float16, 2), tylo.Tensor(Float16, 2),
                           tylo.Tensor(Float16, 2), block=32, arch="sm_80")
print(compiled.ptx)
print("MMA")
print("\n".join(sorted(k for k in compiled.sass_counts().full if "MMA" in k)))
