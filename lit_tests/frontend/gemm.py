# RUN: %python %s | filecheck %s
# REQUIRES: ptxas
# The flagship GEMM kernel (ops/kernels/ampere_gemm.py, first config: 128 x 128 x 32 tiles, 4
# stages, 8 warps): a prologue loop of cp.async copies (plain 16-byte copies inside A and B, a
# zero-filling form at their edges), then a K loop carrying only the accumulator: wait for this
# thread's copies, barrier, issue the next copy, and per k step of 16 one load_fragment of A
# and of B from the padded shared stage and one tylo.mma. In PTX: ldmatrix.x4 for A,
# ldmatrix.x4.trans for B, 4 * 4 mma.sync per k step, two k steps per K tile.
from tylo.ops.kernels.ampere_gemm import CONFIG, compile_config

compiled = compile_config(CONFIG, "sm_90a")
print(compiled.asm["tylo"])
print(compiled.ptx)

# CHECK-LABEL: func.func @gemm(%C: !tylo.ptr<f32, global>, %C_shape0: i32, %C_shape1: i32, %C_stride0: i32, %A: !tylo.ptr<bf16, global>
# CHECK-SAME:  attributes {tylo.kernel, tylo.block = array<i32: 256, 1, 1>}
# CHECK:       scf.for
# CHECK:         tylo.copy_async %{{.*}} : !tylo.tile<bf16, shared, (128,32):(40,1)>, !tylo.tile<bf16, global, (?,?):(?,1), [128,32]>
# CHECK:         tylo.copy_async %{{.*}} bytes %{{.*}} : !tylo.tile<bf16, shared, (128,32):(40,1)>, !tylo.tile<bf16, global, (?,?):(?,1)>
# CHECK:         tylo.copy_async %{{.*}} : !tylo.tile<bf16, shared, (32,128):(136,1)>, !tylo.tile<bf16, global, (?,?):(?,1), [32,128]>
# CHECK:         tylo.commit_copies
# CHECK:       %[[ACC:.*]] = scf.for %{{.*}} iter_args(%[[X:.*]] = %{{.*}}) -> (!tylo.fragment<f32, #tylo.ownership<(128,128), {{.*}}>>)
# CHECK-NEXT:    tylo.wait_copies 2
# CHECK-NEXT:    ptx.bar_sync 0
# CHECK:         tylo.commit_copies
# CHECK:         %[[A0:.*]] = tylo.load_fragment %{{.*}} : !tylo.tile<bf16, shared, (128,32):(40,1), [128,16]> -> !tylo.fragment<bf16, #tylo.ownership<(128,16), {{.*}}>>
# CHECK:         %[[B0:.*]] = tylo.load_fragment %{{.*}} : !tylo.tile<bf16, shared, (32,128):(136,1), [16,128]> -> !tylo.fragment<bf16, #tylo.ownership<(16,128), {{.*}}>>
# CHECK-NEXT:    %[[D0:.*]] = tylo.mma <m16n8k16, bf16, bf16, f32, warps = (2,4), repeat = (4,4), k = 16> %[[A0]], %[[B0]], %[[X]]
# CHECK:         %[[A1:.*]] = tylo.load_fragment
# CHECK:         %[[B1:.*]] = tylo.load_fragment
# CHECK-NEXT:    %[[D1:.*]] = tylo.mma <m16n8k16, bf16, bf16, f32, warps = (2,4), repeat = (4,4), k = 16> %[[A1]], %[[B1]], %[[D0]]
# CHECK-NEXT:    scf.yield %[[D1]]
# CHECK:       tylo.store_fragment %[[ACC]]

# line info: the kernel's file, then a .loc (file, line, column) where the line changes
# CHECK:       .file 1 "{{.*}}ops/kernels/ampere_gemm.py"
# CHECK-LABEL: .visible .entry gemm(
# CHECK:       .reqntid 256, 1, 1
# CHECK:       cp.async.cg.shared.global [%r{{[0-9]+}}], [%rd{{[0-9]+}}], 16;
# CHECK:       cp.async.cg.shared.global [%r{{[0-9]+}}], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};
# CHECK:       cp.async.commit_group;
# CHECK:       cp.async.wait_group 2;
# CHECK-NEXT:  .loc 1 {{[0-9]+}} {{[0-9]+}}
# CHECK-NEXT:  bar.sync 0;
# CHECK:       cp.async.commit_group;
# CHECK-COUNT-4: ldmatrix.sync.aligned.m8n8.x4.shared.b16
# CHECK-COUNT-2: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
# CHECK-COUNT-16: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
# CHECK-COUNT-4: ldmatrix.sync.aligned.m8n8.x4.shared.b16
# CHECK-COUNT-2: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
# CHECK-COUNT-16: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
# CHECK-NOT:   mma.sync
# CHECK-NOT:   ldmatrix
# CHECK:       st.global.v2.f32
# CHECK:       ret;
