// RUN: tylo-opt %s | tylo-opt | filecheck %s
// RUN: tylo-opt %s -t ptx | filecheck %s --check-prefix=PTX
// (ptxas.mlir assembles this file's PTX.) The integer, tf32 and f16-accumulator forms of
// wgmma.mma_async (PTX ISA 9.7.15.5.2): m64nNk32 .s32 with .s8/.u8 A and B in any pairing
// (.b32 accumulator registers, .satfinite after the shape, no imm-scale and no imm-trans
// operands: the line ends at scale-d, for the descriptor and the register-A form); m64nNk8
// .f32.tf32.tf32 (imm-scale-a/b, no imm-trans); m64nNk16 .f16.f16.f16 (N/4 .b32 registers of
// two f16, every operand of the .f32 form).

// CHECK:      %d0, %d1, %d2, %d3 = ptx.wgmma_mma_async 8 "s32.s8.s8"(%i0, %i1, %i2, %i3), %a, %b
// CHECK:      %e0, %e1, %e2, %e3 = ptx.wgmma_mma_async 8 "s32.s8.u8"(%d0, %d1, %d2, %d3), %a, %b, %p {{.*}}satfinite
// CHECK:      %g0, %g1, %g2, %g3 = ptx.wgmma_mma_async_reg_a 8 "s32.u8.s8"(%e0, %e1, %e2, %e3), (%r, %r, %r, %r), %b
// CHECK:      %h0, %h1, %h2, %h3 = ptx.wgmma_mma_async_reg_a 8 "s32.u8.u8"(%g0, %g1, %g2, %g3), (%r, %r, %r, %r), %b {{.*}}satfinite
// CHECK:      %t0, %t1, %t2, %t3 = ptx.wgmma_mma_async 8 "f32.tf32.tf32"(%c0, %c1, %c2, %c3), %a, %b, %p
// CHECK:      %u0, %u1 = ptx.wgmma_mma_async 8 "f16.f16.f16"(%j0, %j1), %a, %b
// CHECK:      %v0, %v1 = ptx.wgmma_mma_async_reg_a 8 "f16.f16.f16"(%u0, %u1), (%r, %r, %r, %r), %b

// PTX:      wgmma.fence.sync.aligned;
// PTX-NEXT: wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8 {%r2, %r3, %r4, %r5}, %rd1, %rd2, 0;
// PTX-NEXT: wgmma.mma_async.sync.aligned.m64n8k32.satfinite.s32.s8.u8 {%r2, %r3, %r4, %r5}, %rd1, %rd2, %p1;
// PTX-NEXT: wgmma.mma_async.sync.aligned.m64n8k32.s32.u8.s8 {%r2, %r3, %r4, %r5}, {%r1, %r1, %r1, %r1}, %rd2, 1;
// PTX-NEXT: wgmma.mma_async.sync.aligned.m64n8k32.satfinite.s32.u8.u8 {%r2, %r3, %r4, %r5}, {%r1, %r1, %r1, %r1}, %rd2, 1;
// PTX-NEXT: wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {%f1, %f2, %f3, %f4}, %rd1, %rd2, %p1, -1, 1;
// PTX-NEXT: wgmma.mma_async.sync.aligned.m64n8k16.f16.f16.f16 {%r6, %r7}, %rd1, %rd2, 0, 1, 1, 0, 1;
// PTX-NEXT: wgmma.mma_async.sync.aligned.m64n8k16.f16.f16.f16 {%r6, %r7}, {%r1, %r1, %r1, %r1}, %rd2, 1, 1, -1, 0;
// PTX-NEXT: wgmma.commit_group.sync.aligned;
// PTX-NEXT: wgmma.wait_group.sync.aligned 0;
ptx.entry "k" [] reqntid [128, 1, 1] {
  %a = ptx.get_register : !ptx.reg<rd1>
  %b = ptx.get_register : !ptx.reg<rd2>
  %p = ptx.get_register : !ptx.reg<p1>
  %r = ptx.get_register : !ptx.reg<r1>
  %i0 = ptx.get_register : !ptx.reg<r2>
  %i1 = ptx.get_register : !ptx.reg<r3>
  %i2 = ptx.get_register : !ptx.reg<r4>
  %i3 = ptx.get_register : !ptx.reg<r5>
  %c0 = ptx.get_register : !ptx.reg<f1>
  %c1 = ptx.get_register : !ptx.reg<f2>
  %c2 = ptx.get_register : !ptx.reg<f3>
  %c3 = ptx.get_register : !ptx.reg<f4>
  %j0 = ptx.get_register : !ptx.reg<r6>
  %j1 = ptx.get_register : !ptx.reg<r7>
  ptx.wgmma_fence
  %d0, %d1, %d2, %d3 = ptx.wgmma_mma_async 8 "s32.s8.s8" (%i0, %i1, %i2, %i3), %a, %b {scale_a = 1 : i64, scale_b = 1 : i64, tnsp_a = 0 : i64, tnsp_b = 0 : i64, scale_d_imm = 0 : i64} : (!ptx.reg<r2>, !ptx.reg<r3>, !ptx.reg<r4>, !ptx.reg<r5>), !ptx.reg<rd1>, !ptx.reg<rd2> -> (!ptx.reg<r2>, !ptx.reg<r3>, !ptx.reg<r4>, !ptx.reg<r5>)
  %e0, %e1, %e2, %e3 = ptx.wgmma_mma_async 8 "s32.s8.u8" (%d0, %d1, %d2, %d3), %a, %b, %p {scale_a = 1 : i64, scale_b = 1 : i64, tnsp_a = 0 : i64, tnsp_b = 0 : i64, satfinite} : (!ptx.reg<r2>, !ptx.reg<r3>, !ptx.reg<r4>, !ptx.reg<r5>), !ptx.reg<rd1>, !ptx.reg<rd2>, !ptx.reg<p1> -> (!ptx.reg<r2>, !ptx.reg<r3>, !ptx.reg<r4>, !ptx.reg<r5>)
  %g0, %g1, %g2, %g3 = ptx.wgmma_mma_async_reg_a 8 "s32.u8.s8" (%e0, %e1, %e2, %e3), (%r, %r, %r, %r), %b {scale_a = 1 : i64, scale_b = 1 : i64, tnsp_b = 0 : i64, scale_d_imm = 1 : i64} : (!ptx.reg<r2>, !ptx.reg<r3>, !ptx.reg<r4>, !ptx.reg<r5>), (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>), !ptx.reg<rd2> -> (!ptx.reg<r2>, !ptx.reg<r3>, !ptx.reg<r4>, !ptx.reg<r5>)
  %h0, %h1, %h2, %h3 = ptx.wgmma_mma_async_reg_a 8 "s32.u8.u8" (%g0, %g1, %g2, %g3), (%r, %r, %r, %r), %b {scale_a = 1 : i64, scale_b = 1 : i64, tnsp_b = 0 : i64, scale_d_imm = 1 : i64, satfinite} : (!ptx.reg<r2>, !ptx.reg<r3>, !ptx.reg<r4>, !ptx.reg<r5>), (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>), !ptx.reg<rd2> -> (!ptx.reg<r2>, !ptx.reg<r3>, !ptx.reg<r4>, !ptx.reg<r5>)
  %t0, %t1, %t2, %t3 = ptx.wgmma_mma_async 8 "f32.tf32.tf32" (%c0, %c1, %c2, %c3), %a, %b, %p {scale_a = -1 : i64, scale_b = 1 : i64, tnsp_a = 0 : i64, tnsp_b = 0 : i64} : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>), !ptx.reg<rd1>, !ptx.reg<rd2>, !ptx.reg<p1> -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
  %u0, %u1 = ptx.wgmma_mma_async 8 "f16.f16.f16" (%j0, %j1), %a, %b {scale_a = 1 : i64, scale_b = 1 : i64, tnsp_a = 0 : i64, tnsp_b = 1 : i64, scale_d_imm = 0 : i64} : (!ptx.reg<r6>, !ptx.reg<r7>), !ptx.reg<rd1>, !ptx.reg<rd2> -> (!ptx.reg<r6>, !ptx.reg<r7>)
  %v0, %v1 = ptx.wgmma_mma_async_reg_a 8 "f16.f16.f16" (%u0, %u1), (%r, %r, %r, %r), %b {scale_a = 1 : i64, scale_b = -1 : i64, tnsp_b = 0 : i64, scale_d_imm = 1 : i64} : (!ptx.reg<r6>, !ptx.reg<r7>), (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>), !ptx.reg<rd2> -> (!ptx.reg<r6>, !ptx.reg<r7>)
  ptx.wgmma_commit_group
  %w0, %w1, %w2, %w3, %w4, %w5 = ptx.wgmma_wait_group 0 (%h0, %h1, %h2, %h3, %v0, %v1) : (!ptx.reg<r2>, !ptx.reg<r3>, !ptx.reg<r4>, !ptx.reg<r5>, !ptx.reg<r6>, !ptx.reg<r7>) -> (!ptx.reg<r2>, !ptx.reg<r3>, !ptx.reg<r4>, !ptx.reg<r5>, !ptx.reg<r6>, !ptx.reg<r7>)
  ptx.ret
}
