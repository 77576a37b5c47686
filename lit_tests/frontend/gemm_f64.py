# RUN: %python %s | filecheck %s
# REQUIRES: ptxas
# The FP64 tensor-core GEMM (ops/kernels/gemm_f64.py, first config: 64 x 64 x 16 tiles, 4 stages,
# 4 warps of 32 x 32): ampere_gemm's prologue of cp.async copies into shared stages whose rows
# are padded by 4 doubles (pitch 20 and 68 doubles), then a K loop carrying the accumulator: per
# k step of 16, each warp's A fragments (2 atoms x 8 doubles) and B fragments (4 atoms x 4
# doubles) as 32 ld.shared.f64, then its 2 x 4 mma.sync.m16n8k16 .f64; .maxnreg 255 (without
# it ptxas kept 128 registers and spilled); the epilogue stores pairs of doubles.
from tylo.ops.kernels.gemm_f64 import CONFIG, compile_config

compiled = compile_config(CONFIG, "sm_90a")
print(compiled.asm["tylo"])
print(compiled.ptx)

# CHECK-LABEL: func.func @gemm(
# CHECK:         tylo.copy_async %{{.*}} : !tylo.tile<f64, shared, (64,16):(20,1)>, !tylo.tile<f64, global, (?,?):(?,1), [64,16]>
# CHECK:         tylo.copy_async %{{.*}} : !tylo.tile<f64, shared, (16,64):(68,1)>, !tylo.tile<f64, global, (?,?):(?,1), [16,64]>
# CHECK:       scf.for
# CHECK:         tylo.mma <m16n8k16, f64, f64, f64, warps = (2,2), repeat = (2,4), k = 16>

# CHECK-LABEL: .visible .entry gemm(
# CHECK:       .reqntid 128, 1, 1
# CHECK-NEXT:  .maxnreg 255
# CHECK:       cp.async.cg.shared.global [%r{{[0-9]+}}], [%rd{{[0-9]+}}], 16;
# CHECK:       cp.async.wait_group 2;
# CHECK:       bar.sync 0;
# CHECK:       cp.async.commit_group;
# CHECK-COUNT-32: ld.shared.f64
# CHECK-NOT:   ld.shared
# CHECK-COUNT-8: mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64
# CHECK-NOT:   mma.sync
# CHECK:       st.global.v2.f64
# CHECK:       ret;
