# RUN: %python %s | filecheck %s
# REQUIRES: ptxas
# FP8 conversions print PTX's paired cvt forms (PTX ISA 9.7.9.21; there is no scalar FP8 cvt):
# f32 -> e4m3 is cvt.rn.satfinite.e4m3x2.f32 with 0.0 high and the value low, e4m3 -> f32 is
# cvt.rn.f16x2.e4m3x2 then the low f16 to f32. The compile assembles the PTX with ptxas (sm_90a).
import tylo
from tylo import Float8E4M3, Float8E5M2, Float32


@tylo.kernel
def fp8_round_trip(y, x):
    i = tylo.thread_idx()
    y[i] = x[i].to(Float8E4M3).to(Float32) + x[i].to(Float8E5M2).to(Float32)


# CHECK-LABEL: .visible .entry fp8_round_trip(
# CHECK:       ld.global.f32 %[[X:f[0-9]+]]
# CHECK-NEXT:  mov.f32 %[[Z:f[0-9]+]], 0f00000000;
# CHECK-NEXT:  cvt.rn.satfinite.e4m3x2.f32 %[[A:rs[0-9]+]], %[[Z]], %[[X]];
# CHECK-NEXT:  cvt.rn.f16x2.e4m3x2 %[[A2:r[0-9]+]], %[[A]];
# CHECK-NEXT:  mov.b32 {%[[ALO:rs[0-9]+]], %{{rs[0-9]+}}}, %[[A2]];
# CHECK-NEXT:  cvt.f32.f16 %{{f[0-9]+}}, %[[ALO]];
# CHECK:       mov.f32 %[[Z2:f[0-9]+]], 0f00000000;
# CHECK-NEXT:  cvt.rn.satfinite.e5m2x2.f32 %[[B:rs[0-9]+]], %[[Z2]], %{{f[0-9]+}};
# CHECK-NEXT:  cvt.rn.f16x2.e5m2x2 %{{r[0-9]+}}, %[[B]];
# CHECK-NOT:   cvt.{{.*}}.e4m3.
# CHECK-NOT:   cvt.{{.*}}.e5m2.
print(fp8_round_trip.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1)).ptx)
