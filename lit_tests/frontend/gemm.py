# RUN: %python %s | filecheck %s
# REQUIRES: ptxas
# The flagship GEMM kernel: fragments stay single values through the frontend's IR (one
# load_fragment per operand, one tylo.mma, one loop-carried accumulator), and lowering issues
# repeat_m * repeat_n * K/k = 4 * 4 * 1 = 16 mma.sync per K step.
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples", "ampere"))
from gemm import PLAN, gemm  # noqa: E402

import tylo  # noqa: E402
from tylo import BFloat16, Float32  # noqa: E402

compiled = gemm.compile(tylo.Tensor(Float32, 2), tylo.Tensor(BFloat16, 2), tylo.Tensor(BFloat16, 2),
                        PLAN, block=PLAN.threads)
print(compiled.asm["tylo"])
print(compiled.ptx)

# CHECK-LABEL: func.func @gemm(%C: !tylo.ptr<f32, global>, %C_shape0: i32, %C_shape1: i32, %C_stride0: i32, %A: !tylo.ptr<bf16, global>
# CHECK-SAME:  attributes {tylo.kernel, tylo.block = array<i32: 256, 1, 1>}
# CHECK:       %[[ACC0:.*]] = tylo.splat %{{.*}} : f32 -> !tylo.fragment<f32, #tylo.ownership<(128,128), {{.*}}>>
# CHECK:       %[[ACC:.*]] = scf.for %{{.*}} iter_args(%[[X:.*]] = %[[ACC0]]) -> (!tylo.fragment<f32
# CHECK:         tylo.check %{{.*}}, "window axis 0 in bounds"
# CHECK:         %[[AW:.*]] = tylo.window %{{.*}} -> !tylo.tile<bf16, global, (?,?):(?,1), [128,16]>
# CHECK-NEXT:    %[[A:.*]] = tylo.load_fragment %[[AW]], %{{.*}} -> !tylo.fragment<bf16, #tylo.ownership<(128,16), {{.*}}>>
# CHECK:         %[[BW:.*]] = tylo.window %{{.*}} -> !tylo.tile<bf16, global, (?,?):(?,1), [16,128]>
# CHECK-NEXT:    %[[B:.*]] = tylo.load_fragment %[[BW]], %{{.*}} -> !tylo.fragment<bf16, #tylo.ownership<(16,128), {{.*}}>>
# CHECK-NEXT:    %[[D:.*]] = tylo.mma <m16n8k16, bf16, bf16, f32, warps = (2,4), repeat = (4,4), k = 16> %[[A]], %[[B]], %[[X]]
# CHECK-NEXT:    scf.yield %[[D]]
# CHECK:       tylo.store_fragment %[[ACC]]

# CHECK-LABEL: .visible .entry gemm(
# CHECK:       .reqntid 256, 1, 1
# CHECK-COUNT-16: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
# CHECK-NOT:   mma.sync
# CHECK:       ret;
