// REQUIRES: ptxas
// ptxas accepts the PTX that the ptx target prints: for ptx.mlir (every op the target prints),
// for dialects/ptx/wgmma.mlir, wgmma_fp8.mlir and wgmma_int_tf32.mlir (the wgmma forms),
// dialects/ptx/mma_families.mlir (the FP64, 4-bit and single-bit mma.sync forms) and
// mma_f16.mlir (mma.sync with f16 accumulators), and for the whole pipeline of
// passes/tylo-plan-copies.mlir (ldmatrix/stmatrix copies).
// RUN: tylo-opt %S/ptx.mlir -t ptx > %t.target.ptx && %ptxas -arch=sm_90a %t.target.ptx -o %t.target.cubin
// RUN: tylo-opt %S/../dialects/ptx/wgmma.mlir -t ptx > %t.wgmma.ptx && %ptxas -arch=sm_90a %t.wgmma.ptx -o %t.wgmma.cubin
// RUN: tylo-opt %S/../dialects/ptx/wgmma_fp8.mlir -t ptx > %t.wgmma8.ptx && %ptxas -arch=sm_90a %t.wgmma8.ptx -o %t.wgmma8.cubin
// RUN: tylo-opt %S/../dialects/ptx/wgmma_int_tf32.mlir -t ptx > %t.wgmmai.ptx && %ptxas -arch=sm_90a %t.wgmmai.ptx -o %t.wgmmai.cubin
// RUN: tylo-opt %S/../dialects/ptx/mma_f16.mlir -t ptx > %t.mmaf16.ptx && %ptxas -arch=sm_90a %t.mmaf16.ptx -o %t.mmaf16.cubin
// RUN: tylo-opt %S/../dialects/ptx/mma_families.mlir -t ptx > %t.mma.ptx && %ptxas -arch=sm_90a %t.mma.ptx -o %t.mma.cubin
// RUN: tylo-opt %S/../passes/tylo-plan-copies.mlir -p tylo-plan-copies,tylo-lower-fragments,tylo-lower-tiles,canonicalize,cse,tylo-lower-scf,tylo-lower-to-ptx -t ptx > %t.copies.ptx && %ptxas -arch=sm_90a %t.copies.ptx -o %t.copies.cubin
