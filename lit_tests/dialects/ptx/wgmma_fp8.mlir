// RUN: tylo-opt %s | tylo-opt | filecheck %s
// RUN: tylo-opt %s -t ptx | filecheck %s --check-prefix=PTX
// (ptxas.mlir assembles this file's PTX.) The 8-bit float forms of wgmma.mma_async (PTX ISA
// 9.7.15.5.2): shape m64nNk32, .e4m3/.e5m2 A and B in any pairing, and no imm-trans-a/b
// operands: the line ends at imm-scale-b, for both the descriptor and the register-A form.

// CHECK:      %d0, %d1, %d2, %d3 = ptx.wgmma_mma_async 8 "f32.e4m3.e4m3"(%c0, %c1, %c2, %c3), %a, %b
// CHECK:      %e0, %e1, %e2, %e3 = ptx.wgmma_mma_async 8 "f32.e4m3.e5m2"(%d0, %d1, %d2, %d3), %a, %b, %p
// CHECK:      %g0, %g1, %g2, %g3 = ptx.wgmma_mma_async_reg_a 8 "f32.e5m2.e4m3"(%e0, %e1, %e2, %e3), (%r, %r, %r, %r), %b
// CHECK:      %h0, %h1, %h2, %h3 = ptx.wgmma_mma_async_reg_a 8 "f32.e5m2.e5m2"(%g0, %g1, %g2, %g3), (%r, %r, %r, %r), %b

// PTX:      wgmma.fence.sync.aligned;
// PTX-NEXT: wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3 {%f1, %f2, %f3, %f4}, %rd1, %rd2, 0, 1, 1;
// PTX-NEXT: wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e5m2 {%f1, %f2, %f3, %f4}, %rd1, %rd2, %p1, -1, 1;
// PTX-NEXT: wgmma.mma_async.sync.aligned.m64n8k32.f32.e5m2.e4m3 {%f1, %f2, %f3, %f4}, {%r1, %r1, %r1, %r1}, %rd2, 1, 1, -1;
// PTX-NEXT: wgmma.mma_async.sync.aligned.m64n8k32.f32.e5m2.e5m2 {%f1, %f2, %f3, %f4}, {%r1, %r1, %r1, %r1}, %rd2, 1, 1, 1;
// PTX-NEXT: wgmma.commit_group.sync.aligned;
// PTX-NEXT: wgmma.wait_group.sync.aligned 0;
// PTX-NOT:  .e4m3{{.*}}, 0, 0;
// PTX-NOT:  mma_async.sp
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
  %d0, %d1, %d2, %d3 = ptx.wgmma_mma_async 8 "f32.e4m3.e4m3" (%c0, %c1, %c2, %c3), %a, %b {scale_a = 1 : i64, scale_b = 1 : i64, tnsp_a = 0 : i64, tnsp_b = 0 : i64, scale_d_imm = 0 : i64} : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>), !ptx.reg<rd1>, !ptx.reg<rd2> -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
  %e0, %e1, %e2, %e3 = ptx.wgmma_mma_async 8 "f32.e4m3.e5m2" (%d0, %d1, %d2, %d3), %a, %b, %p {scale_a = -1 : i64, scale_b = 1 : i64, tnsp_a = 0 : i64, tnsp_b = 0 : i64} : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>), !ptx.reg<rd1>, !ptx.reg<rd2>, !ptx.reg<p1> -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
  %g0, %g1, %g2, %g3 = ptx.wgmma_mma_async_reg_a 8 "f32.e5m2.e4m3" (%e0, %e1, %e2, %e3), (%r, %r, %r, %r), %b {scale_a = 1 : i64, scale_b = -1 : i64, tnsp_b = 0 : i64, scale_d_imm = 1 : i64} : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>), (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>), !ptx.reg<rd2> -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
  %h0, %h1, %h2, %h3 = ptx.wgmma_mma_async_reg_a 8 "f32.e5m2.e5m2" (%g0, %g1, %g2, %g3), (%r, %r, %r, %r), %b {scale_a = 1 : i64, scale_b = 1 : i64, tnsp_b = 0 : i64, scale_d_imm = 1 : i64} : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>), (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>), !ptx.reg<rd2> -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
  ptx.wgmma_commit_group
  %w0, %w1, %w2, %w3 = ptx.wgmma_wait_group 0 (%h0, %h1, %h2, %h3) : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>) -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
  ptx.ret
}
