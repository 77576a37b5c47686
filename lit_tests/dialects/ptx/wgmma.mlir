// RUN: tylo-opt %s | tylo-opt | filecheck %s
// RUN: tylo-opt %s -t ptx | filecheck %s --check-prefix=PTX
// (ptxas.mlir assembles this file's PTX.) The wgmma ops of dialects/ptx/wgmma.py round-trip,
// and print one PTX line each: the accumulator is one register list, read and written in place
// (the results are the operands' registers), scale-d a predicate or an immediate, then
// imm-scale-a, imm-scale-b, imm-tnsp-a (descriptor A only), imm-tnsp-b. The wait's register
// operands and results carry the dependency only: its PTX line names none.

// CHECK:      ptx.entry "k" [] reqntid [128, 1, 1] {
// CHECK-NEXT:   %a = ptx.get_register : !ptx.reg<rd1>
// CHECK-NEXT:   %b = ptx.get_register : !ptx.reg<rd2>
// CHECK-NEXT:   %p = ptx.get_register : !ptx.reg<p1>
// CHECK-NEXT:   %c0 = ptx.get_register : !ptx.reg<f1>
// CHECK-NEXT:   %c1 = ptx.get_register : !ptx.reg<f2>
// CHECK-NEXT:   %c2 = ptx.get_register : !ptx.reg<f3>
// CHECK-NEXT:   %c3 = ptx.get_register : !ptx.reg<f4>
// CHECK-NEXT:   %r = ptx.get_register : !ptx.reg<r1>
// CHECK-NEXT:   ptx.wgmma_fence
// CHECK-NEXT:   %d0, %d1, %d2, %d3 = ptx.wgmma_mma_async 8 "f32.bf16.bf16"(%c0, %c1, %c2, %c3), %a, %b {scale_a = 1 : i64, scale_b = 1 : i64, tnsp_a = 0 : i64, tnsp_b = 0 : i64, scale_d_imm = 0 : i64} : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>), !ptx.reg<rd1>, !ptx.reg<rd2> -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
// CHECK-NEXT:   %e0, %e1, %e2, %e3 = ptx.wgmma_mma_async 8 "f32.f16.f16"(%d0, %d1, %d2, %d3), %a, %b, %p {scale_a = -1 : i64, scale_b = 1 : i64, tnsp_a = 1 : i64, tnsp_b = 1 : i64} : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>), !ptx.reg<rd1>, !ptx.reg<rd2>, !ptx.reg<p1> -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
// CHECK-NEXT:   %g0, %g1, %g2, %g3 = ptx.wgmma_mma_async_reg_a 8 "f32.bf16.bf16"(%e0, %e1, %e2, %e3), (%r, %r, %r, %r), %b {scale_a = 1 : i64, scale_b = -1 : i64, tnsp_b = 1 : i64, scale_d_imm = 1 : i64} : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>), (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>), !ptx.reg<rd2> -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
// CHECK-NEXT:   ptx.wgmma_commit_group
// CHECK-NEXT:   %w0, %w1, %w2, %w3 = ptx.wgmma_wait_group 0(%g0, %g1, %g2, %g3) : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>) -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
// CHECK-NEXT:   ptx.wgmma_wait_group 1() : () -> ()
// CHECK-NEXT:   ptx.ret
// CHECK-NEXT: }

// PTX:      .reqntid 128, 1, 1
// PTX:      wgmma.fence.sync.aligned;
// PTX-NEXT: wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, 0, 1, 1, 0, 0;
// PTX-NEXT: wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, %p1, -1, 1, 1, 1;
// PTX-NEXT: wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f1, %f2, %f3, %f4}, {%r1, %r1, %r1, %r1}, %rd2, 1, 1, -1, 1;
// PTX-NEXT: wgmma.commit_group.sync.aligned;
// PTX-NEXT: wgmma.wait_group.sync.aligned 0;
// PTX-NEXT: wgmma.wait_group.sync.aligned 1;
// PTX-NEXT: ret;
ptx.entry "k" [] reqntid [128, 1, 1] {
  %a = ptx.get_register : !ptx.reg<rd1>
  %b = ptx.get_register : !ptx.reg<rd2>
  %p = ptx.get_register : !ptx.reg<p1>
  %c0 = ptx.get_register : !ptx.reg<f1>
  %c1 = ptx.get_register : !ptx.reg<f2>
  %c2 = ptx.get_register : !ptx.reg<f3>
  %c3 = ptx.get_register : !ptx.reg<f4>
  %r = ptx.get_register : !ptx.reg<r1>
  ptx.wgmma_fence
  %d0, %d1, %d2, %d3 = ptx.wgmma_mma_async 8 "f32.bf16.bf16" (%c0, %c1, %c2, %c3), %a, %b {scale_a = 1 : i64, scale_b = 1 : i64, tnsp_a = 0 : i64, tnsp_b = 0 : i64, scale_d_imm = 0 : i64} : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>), !ptx.reg<rd1>, !ptx.reg<rd2> -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
  %e0, %e1, %e2, %e3 = ptx.wgmma_mma_async 8 "f32.f16.f16" (%d0, %d1, %d2, %d3), %a, %b, %p {scale_a = -1 : i64, scale_b = 1 : i64, tnsp_a = 1 : i64, tnsp_b = 1 : i64} : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>), !ptx.reg<rd1>, !ptx.reg<rd2>, !ptx.reg<p1> -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
  %g0, %g1, %g2, %g3 = ptx.wgmma_mma_async_reg_a 8 "f32.bf16.bf16" (%e0, %e1, %e2, %e3), (%r, %r, %r, %r), %b {scale_a = 1 : i64, scale_b = -1 : i64, tnsp_b = 1 : i64, scale_d_imm = 1 : i64} : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>), (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>), !ptx.reg<rd2> -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
  ptx.wgmma_commit_group
  %w0, %w1, %w2, %w3 = ptx.wgmma_wait_group 0 (%g0, %g1, %g2, %g3) : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>) -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
  ptx.wgmma_wait_group 1 () : () -> ()
  ptx.ret
}
