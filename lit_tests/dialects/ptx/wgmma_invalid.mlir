// RUN: tylo-opt %s --verify-diagnostics --split-input-file | filecheck %s
// Each chunk (split at the dashed lines) breaks one rule of a verifier of the wgmma ops
// (dialects/ptx/wgmma.py); tylo-opt prints a dashed line and the refusal's message per chunk.
// The valid forms are in wgmma.mlir. The first chunk is an empty module.
builtin.module {}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: wgmma.mma_async .m64n12k16.f32.bf16.bf16: N must be 8..256 in steps of 8
ptx.entry "k" [] reqntid [128, 1, 1] {
  %a = ptx.get_register : !ptx.reg<rd1>
  %b = ptx.get_register : !ptx.reg<rd2>
  %p = ptx.get_register : !ptx.reg<p1>
  %c0 = ptx.get_register : !ptx.reg<f1>
  %c1 = ptx.get_register : !ptx.reg<f2>
  %c2 = ptx.get_register : !ptx.reg<f3>
  %c3 = ptx.get_register : !ptx.reg<f4>
  %r = ptx.get_register : !ptx.reg<r1>
  %d0, %d1, %d2, %d3 = ptx.wgmma_mma_async 12 "f32.bf16.bf16"(%c0, %c1, %c2, %c3), %a, %b {scale_a = 1 : i64, scale_b = 1 : i64, tnsp_a = 0 : i64, tnsp_b = 0 : i64, scale_d_imm = 1 : i64} : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>), !ptx.reg<rd1>, !ptx.reg<rd2> -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: wgmma.mma_async .m64n16k16.f32 needs 8 accumulator registers, got 4
ptx.entry "k" [] reqntid [128, 1, 1] {
  %a = ptx.get_register : !ptx.reg<rd1>
  %b = ptx.get_register : !ptx.reg<rd2>
  %p = ptx.get_register : !ptx.reg<p1>
  %c0 = ptx.get_register : !ptx.reg<f1>
  %c1 = ptx.get_register : !ptx.reg<f2>
  %c2 = ptx.get_register : !ptx.reg<f3>
  %c3 = ptx.get_register : !ptx.reg<f4>
  %r = ptx.get_register : !ptx.reg<r1>
  %d0, %d1, %d2, %d3 = ptx.wgmma_mma_async 16 "f32.bf16.bf16"(%c0, %c1, %c2, %c3), %a, %b {scale_a = 1 : i64, scale_b = 1 : i64, tnsp_a = 0 : i64, tnsp_b = 0 : i64, scale_d_imm = 1 : i64} : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>), !ptx.reg<rd1>, !ptx.reg<rd2> -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: wgmma.mma_async types 'f32.bf16.f16' are not in the wgmma table (D.A.B: f32.bf16.bf16, f32.f16.f16, f32.e4m3.e4m3, f32.e4m3.e5m2, f32.e5m2.e4m3, f32.e5m2.e5m2, s32.s8.s8, s32.s8.u8, s32.u8.s8, s32.u8.u8, f32.tf32.tf32, f16.f16.f16)
ptx.entry "k" [] reqntid [128, 1, 1] {
  %a = ptx.get_register : !ptx.reg<rd1>
  %b = ptx.get_register : !ptx.reg<rd2>
  %p = ptx.get_register : !ptx.reg<p1>
  %c0 = ptx.get_register : !ptx.reg<f1>
  %c1 = ptx.get_register : !ptx.reg<f2>
  %c2 = ptx.get_register : !ptx.reg<f3>
  %c3 = ptx.get_register : !ptx.reg<f4>
  %r = ptx.get_register : !ptx.reg<r1>
  %d0, %d1, %d2, %d3 = ptx.wgmma_mma_async 8 "f32.bf16.f16"(%c0, %c1, %c2, %c3), %a, %b {scale_a = 1 : i64, scale_b = 1 : i64, tnsp_a = 0 : i64, tnsp_b = 0 : i64, scale_d_imm = 1 : i64} : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>), !ptx.reg<rd1>, !ptx.reg<rd2> -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: wgmma.mma_async: result 2 (%f7) must be accumulator register 2 (%f3): the accumulator is updated in place
ptx.entry "k" [] reqntid [128, 1, 1] {
  %a = ptx.get_register : !ptx.reg<rd1>
  %b = ptx.get_register : !ptx.reg<rd2>
  %p = ptx.get_register : !ptx.reg<p1>
  %c0 = ptx.get_register : !ptx.reg<f1>
  %c1 = ptx.get_register : !ptx.reg<f2>
  %c2 = ptx.get_register : !ptx.reg<f3>
  %c3 = ptx.get_register : !ptx.reg<f4>
  %r = ptx.get_register : !ptx.reg<r1>
  %d0, %d1, %d2, %d3 = ptx.wgmma_mma_async 8 "f32.bf16.bf16"(%c0, %c1, %c2, %c3), %a, %b {scale_a = 1 : i64, scale_b = 1 : i64, tnsp_a = 0 : i64, tnsp_b = 0 : i64, scale_d_imm = 1 : i64} : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>), !ptx.reg<rd1>, !ptx.reg<rd2> -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f7>, !ptx.reg<f4>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: wgmma.mma_async a-desc must be a .b64 register, got .b32 (%r1)
ptx.entry "k" [] reqntid [128, 1, 1] {
  %a = ptx.get_register : !ptx.reg<rd1>
  %b = ptx.get_register : !ptx.reg<rd2>
  %p = ptx.get_register : !ptx.reg<p1>
  %c0 = ptx.get_register : !ptx.reg<f1>
  %c1 = ptx.get_register : !ptx.reg<f2>
  %c2 = ptx.get_register : !ptx.reg<f3>
  %c3 = ptx.get_register : !ptx.reg<f4>
  %r = ptx.get_register : !ptx.reg<r1>
  %d0, %d1, %d2, %d3 = ptx.wgmma_mma_async 8 "f32.bf16.bf16"(%c0, %c1, %c2, %c3), %r, %b {scale_a = 1 : i64, scale_b = 1 : i64, tnsp_a = 0 : i64, tnsp_b = 0 : i64, scale_d_imm = 1 : i64} : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>), !ptx.reg<r1>, !ptx.reg<rd2> -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: wgmma.mma_async imm-scale-a must be 1 or -1, got 2
ptx.entry "k" [] reqntid [128, 1, 1] {
  %a = ptx.get_register : !ptx.reg<rd1>
  %b = ptx.get_register : !ptx.reg<rd2>
  %p = ptx.get_register : !ptx.reg<p1>
  %c0 = ptx.get_register : !ptx.reg<f1>
  %c1 = ptx.get_register : !ptx.reg<f2>
  %c2 = ptx.get_register : !ptx.reg<f3>
  %c3 = ptx.get_register : !ptx.reg<f4>
  %r = ptx.get_register : !ptx.reg<r1>
  %d0, %d1, %d2, %d3 = ptx.wgmma_mma_async 8 "f32.bf16.bf16"(%c0, %c1, %c2, %c3), %a, %b {scale_a = 2 : i64, scale_b = 1 : i64, tnsp_a = 0 : i64, tnsp_b = 0 : i64, scale_d_imm = 1 : i64} : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>), !ptx.reg<rd1>, !ptx.reg<rd2> -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: wgmma.mma_async imm-tnsp-a must be 0 or 1, got 3
ptx.entry "k" [] reqntid [128, 1, 1] {
  %a = ptx.get_register : !ptx.reg<rd1>
  %b = ptx.get_register : !ptx.reg<rd2>
  %p = ptx.get_register : !ptx.reg<p1>
  %c0 = ptx.get_register : !ptx.reg<f1>
  %c1 = ptx.get_register : !ptx.reg<f2>
  %c2 = ptx.get_register : !ptx.reg<f3>
  %c3 = ptx.get_register : !ptx.reg<f4>
  %r = ptx.get_register : !ptx.reg<r1>
  %d0, %d1, %d2, %d3 = ptx.wgmma_mma_async 8 "f32.bf16.bf16"(%c0, %c1, %c2, %c3), %a, %b {scale_a = 1 : i64, scale_b = 1 : i64, tnsp_a = 3 : i64, tnsp_b = 0 : i64, scale_d_imm = 1 : i64} : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>), !ptx.reg<rd1>, !ptx.reg<rd2> -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: wgmma.mma_async takes scale-d either as a predicate operand or as the immediate scale_d_imm, exactly one
ptx.entry "k" [] reqntid [128, 1, 1] {
  %a = ptx.get_register : !ptx.reg<rd1>
  %b = ptx.get_register : !ptx.reg<rd2>
  %p = ptx.get_register : !ptx.reg<p1>
  %c0 = ptx.get_register : !ptx.reg<f1>
  %c1 = ptx.get_register : !ptx.reg<f2>
  %c2 = ptx.get_register : !ptx.reg<f3>
  %c3 = ptx.get_register : !ptx.reg<f4>
  %r = ptx.get_register : !ptx.reg<r1>
  %d0, %d1, %d2, %d3 = ptx.wgmma_mma_async 8 "f32.bf16.bf16"(%c0, %c1, %c2, %c3), %a, %b, %p {scale_a = 1 : i64, scale_b = 1 : i64, tnsp_a = 0 : i64, tnsp_b = 0 : i64, scale_d_imm = 1 : i64} : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>), !ptx.reg<rd1>, !ptx.reg<rd2>, !ptx.reg<p1> -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: wgmma.mma_async takes scale-d either as a predicate operand or as the immediate scale_d_imm, exactly one
ptx.entry "k" [] reqntid [128, 1, 1] {
  %a = ptx.get_register : !ptx.reg<rd1>
  %b = ptx.get_register : !ptx.reg<rd2>
  %p = ptx.get_register : !ptx.reg<p1>
  %c0 = ptx.get_register : !ptx.reg<f1>
  %c1 = ptx.get_register : !ptx.reg<f2>
  %c2 = ptx.get_register : !ptx.reg<f3>
  %c3 = ptx.get_register : !ptx.reg<f4>
  %r = ptx.get_register : !ptx.reg<r1>
  %d0, %d1, %d2, %d3 = ptx.wgmma_mma_async 8 "f32.bf16.bf16"(%c0, %c1, %c2, %c3), %a, %b {scale_a = 1 : i64, scale_b = 1 : i64, tnsp_a = 0 : i64, tnsp_b = 0 : i64} : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>), !ptx.reg<rd1>, !ptx.reg<rd2> -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: wgmma.mma_async immediate scale-d must be 0 or 1, got 2
ptx.entry "k" [] reqntid [128, 1, 1] {
  %a = ptx.get_register : !ptx.reg<rd1>
  %b = ptx.get_register : !ptx.reg<rd2>
  %p = ptx.get_register : !ptx.reg<p1>
  %c0 = ptx.get_register : !ptx.reg<f1>
  %c1 = ptx.get_register : !ptx.reg<f2>
  %c2 = ptx.get_register : !ptx.reg<f3>
  %c3 = ptx.get_register : !ptx.reg<f4>
  %r = ptx.get_register : !ptx.reg<r1>
  %d0, %d1, %d2, %d3 = ptx.wgmma_mma_async 8 "f32.bf16.bf16"(%c0, %c1, %c2, %c3), %a, %b {scale_a = 1 : i64, scale_b = 1 : i64, tnsp_a = 0 : i64, tnsp_b = 0 : i64, scale_d_imm = 2 : i64} : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>), !ptx.reg<rd1>, !ptx.reg<rd2> -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: wgmma.mma_async scale-d must be a .pred register, got .b32 (%r1)
ptx.entry "k" [] reqntid [128, 1, 1] {
  %a = ptx.get_register : !ptx.reg<rd1>
  %b = ptx.get_register : !ptx.reg<rd2>
  %p = ptx.get_register : !ptx.reg<p1>
  %c0 = ptx.get_register : !ptx.reg<f1>
  %c1 = ptx.get_register : !ptx.reg<f2>
  %c2 = ptx.get_register : !ptx.reg<f3>
  %c3 = ptx.get_register : !ptx.reg<f4>
  %r = ptx.get_register : !ptx.reg<r1>
  %d0, %d1, %d2, %d3 = ptx.wgmma_mma_async 8 "f32.bf16.bf16"(%c0, %c1, %c2, %c3), %a, %b, %r {scale_a = 1 : i64, scale_b = 1 : i64, tnsp_a = 0 : i64, tnsp_b = 0 : i64} : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>), !ptx.reg<rd1>, !ptx.reg<rd2>, !ptx.reg<r1> -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: wgmma.mma_async register A needs 4 .b32 registers, got 2
ptx.entry "k" [] reqntid [128, 1, 1] {
  %a = ptx.get_register : !ptx.reg<rd1>
  %b = ptx.get_register : !ptx.reg<rd2>
  %p = ptx.get_register : !ptx.reg<p1>
  %c0 = ptx.get_register : !ptx.reg<f1>
  %c1 = ptx.get_register : !ptx.reg<f2>
  %c2 = ptx.get_register : !ptx.reg<f3>
  %c3 = ptx.get_register : !ptx.reg<f4>
  %r = ptx.get_register : !ptx.reg<r1>
  %d0, %d1, %d2, %d3 = ptx.wgmma_mma_async_reg_a 8 "f32.bf16.bf16"(%c0, %c1, %c2, %c3), (%r, %r), %b {scale_a = 1 : i64, scale_b = 1 : i64, tnsp_b = 0 : i64, scale_d_imm = 1 : i64} : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>), (!ptx.reg<r1>, !ptx.reg<r1>), !ptx.reg<rd2> -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: wgmma.mma_async A register must be a .b32 register, got .b64 (%rd1)
ptx.entry "k" [] reqntid [128, 1, 1] {
  %a = ptx.get_register : !ptx.reg<rd1>
  %b = ptx.get_register : !ptx.reg<rd2>
  %p = ptx.get_register : !ptx.reg<p1>
  %c0 = ptx.get_register : !ptx.reg<f1>
  %c1 = ptx.get_register : !ptx.reg<f2>
  %c2 = ptx.get_register : !ptx.reg<f3>
  %c3 = ptx.get_register : !ptx.reg<f4>
  %r = ptx.get_register : !ptx.reg<r1>
  %d0, %d1, %d2, %d3 = ptx.wgmma_mma_async_reg_a 8 "f32.bf16.bf16"(%c0, %c1, %c2, %c3), (%r, %r, %r, %a), %b {scale_a = 1 : i64, scale_b = 1 : i64, tnsp_b = 0 : i64, scale_d_imm = 1 : i64} : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>), (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<rd1>), !ptx.reg<rd2> -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: wgmma.wait_group: result 0 (%f9) must be waited register 0 (%f1): the accumulator is updated in place
ptx.entry "k" [] reqntid [128, 1, 1] {
  %a = ptx.get_register : !ptx.reg<rd1>
  %b = ptx.get_register : !ptx.reg<rd2>
  %p = ptx.get_register : !ptx.reg<p1>
  %c0 = ptx.get_register : !ptx.reg<f1>
  %c1 = ptx.get_register : !ptx.reg<f2>
  %c2 = ptx.get_register : !ptx.reg<f3>
  %c3 = ptx.get_register : !ptx.reg<f4>
  %r = ptx.get_register : !ptx.reg<r1>
  %w0 = ptx.wgmma_wait_group 0(%c0) : (!ptx.reg<f1>) -> (!ptx.reg<f9>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: wgmma.wait_group: 2 waited registers but 1 results; the results are those registers
ptx.entry "k" [] reqntid [128, 1, 1] {
  %a = ptx.get_register : !ptx.reg<rd1>
  %b = ptx.get_register : !ptx.reg<rd2>
  %p = ptx.get_register : !ptx.reg<p1>
  %c0 = ptx.get_register : !ptx.reg<f1>
  %c1 = ptx.get_register : !ptx.reg<f2>
  %c2 = ptx.get_register : !ptx.reg<f3>
  %c3 = ptx.get_register : !ptx.reg<f4>
  %r = ptx.get_register : !ptx.reg<r1>
  %w0 = ptx.wgmma_wait_group 0(%c0, %c1) : (!ptx.reg<f1>, !ptx.reg<f2>) -> (!ptx.reg<f1>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: wgmma.wait_group -1: N must be >= 0
ptx.entry "k" [] reqntid [128, 1, 1] {
  %a = ptx.get_register : !ptx.reg<rd1>
  %b = ptx.get_register : !ptx.reg<rd2>
  %p = ptx.get_register : !ptx.reg<p1>
  %c0 = ptx.get_register : !ptx.reg<f1>
  %c1 = ptx.get_register : !ptx.reg<f2>
  %c2 = ptx.get_register : !ptx.reg<f3>
  %c3 = ptx.get_register : !ptx.reg<f4>
  %r = ptx.get_register : !ptx.reg<r1>
  ptx.wgmma_wait_group -1() : () -> ()
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: wgmma.mma_async .f32.e4m3.e5m2: 8-bit operands have no imm-trans (K-major only, PTX ISA 9.7.15.5.2)
ptx.entry "k" [] reqntid [128, 1, 1] {
  %a = ptx.get_register : !ptx.reg<rd1>
  %b = ptx.get_register : !ptx.reg<rd2>
  %c0 = ptx.get_register : !ptx.reg<f1>
  %c1 = ptx.get_register : !ptx.reg<f2>
  %c2 = ptx.get_register : !ptx.reg<f3>
  %c3 = ptx.get_register : !ptx.reg<f4>
  %d0, %d1, %d2, %d3 = ptx.wgmma_mma_async 8 "f32.e4m3.e5m2"(%c0, %c1, %c2, %c3), %a, %b {scale_a = 1 : i64, scale_b = 1 : i64, tnsp_a = 0 : i64, tnsp_b = 1 : i64, scale_d_imm = 1 : i64} : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>), !ptx.reg<rd1>, !ptx.reg<rd2> -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: wgmma.mma_async .s32.s8.s8: the integer forms have no imm-scale-a/b (no negation, PTX ISA 9.7.15.5.2): both must be 1
ptx.entry "k" [] reqntid [128, 1, 1] {
  %a = ptx.get_register : !ptx.reg<rd1>
  %b = ptx.get_register : !ptx.reg<rd2>
  %r = ptx.get_register : !ptx.reg<r1>
  %c0 = ptx.get_register : !ptx.reg<r1>
  %c1 = ptx.get_register : !ptx.reg<r2>
  %c2 = ptx.get_register : !ptx.reg<r3>
  %c3 = ptx.get_register : !ptx.reg<r4>
  %d0, %d1, %d2, %d3 = ptx.wgmma_mma_async 8 "s32.s8.s8" (%c0, %c1, %c2, %c3), %a, %b {scale_a = -1 : i64, scale_b = 1 : i64, tnsp_a = 0 : i64, tnsp_b = 0 : i64, scale_d_imm = 1 : i64} : (!ptx.reg<r1>, !ptx.reg<r2>, !ptx.reg<r3>, !ptx.reg<r4>), !ptx.reg<rd1>, !ptx.reg<rd2> -> (!ptx.reg<r1>, !ptx.reg<r2>, !ptx.reg<r3>, !ptx.reg<r4>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: wgmma.mma_async .f32.bf16.bf16: .satfinite is for the integer (.s32) forms only
ptx.entry "k" [] reqntid [128, 1, 1] {
  %a = ptx.get_register : !ptx.reg<rd1>
  %b = ptx.get_register : !ptx.reg<rd2>
  %r = ptx.get_register : !ptx.reg<r1>
  %c0 = ptx.get_register : !ptx.reg<f1>
  %c1 = ptx.get_register : !ptx.reg<f2>
  %c2 = ptx.get_register : !ptx.reg<f3>
  %c3 = ptx.get_register : !ptx.reg<f4>
  %d0, %d1, %d2, %d3 = ptx.wgmma_mma_async 8 "f32.bf16.bf16" (%c0, %c1, %c2, %c3), %a, %b {scale_a = 1 : i64, scale_b = 1 : i64, tnsp_a = 0 : i64, tnsp_b = 0 : i64, scale_d_imm = 1 : i64, satfinite} : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>), !ptx.reg<rd1>, !ptx.reg<rd2> -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: wgmma.mma_async accumulator register must be a .b32 register, got .f32 (%f1)
ptx.entry "k" [] reqntid [128, 1, 1] {
  %a = ptx.get_register : !ptx.reg<rd1>
  %b = ptx.get_register : !ptx.reg<rd2>
  %r = ptx.get_register : !ptx.reg<r1>
  %c0 = ptx.get_register : !ptx.reg<f1>
  %c1 = ptx.get_register : !ptx.reg<f2>
  %c2 = ptx.get_register : !ptx.reg<f3>
  %c3 = ptx.get_register : !ptx.reg<f4>
  %d0, %d1, %d2, %d3 = ptx.wgmma_mma_async 8 "s32.u8.u8" (%c0, %c1, %c2, %c3), %a, %b {scale_a = 1 : i64, scale_b = 1 : i64, tnsp_a = 0 : i64, tnsp_b = 0 : i64, scale_d_imm = 1 : i64} : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>), !ptx.reg<rd1>, !ptx.reg<rd2> -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: wgmma.mma_async .m64n40k32.s32.s8.s8: N must be 8..32 in steps of 8, then 48..256 in steps of 16
ptx.entry "k" [] reqntid [128, 1, 1] {
  %a = ptx.get_register : !ptx.reg<rd1>
  %b = ptx.get_register : !ptx.reg<rd2>
  %r = ptx.get_register : !ptx.reg<r1>
  %c0 = ptx.get_register : !ptx.reg<r1>
  %c1 = ptx.get_register : !ptx.reg<r2>
  %c2 = ptx.get_register : !ptx.reg<r3>
  %c3 = ptx.get_register : !ptx.reg<r4>
  %d0, %d1, %d2, %d3 = ptx.wgmma_mma_async 40 "s32.s8.s8" (%c0, %c1, %c2, %c3), %a, %b {scale_a = 1 : i64, scale_b = 1 : i64, tnsp_a = 0 : i64, tnsp_b = 0 : i64, scale_d_imm = 1 : i64} : (!ptx.reg<r1>, !ptx.reg<r2>, !ptx.reg<r3>, !ptx.reg<r4>), !ptx.reg<rd1>, !ptx.reg<rd2> -> (!ptx.reg<r1>, !ptx.reg<r2>, !ptx.reg<r3>, !ptx.reg<r4>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: wgmma.mma_async .m64n8k16.f16 needs 2 accumulator registers, got 4
ptx.entry "k" [] reqntid [128, 1, 1] {
  %a = ptx.get_register : !ptx.reg<rd1>
  %b = ptx.get_register : !ptx.reg<rd2>
  %r = ptx.get_register : !ptx.reg<r1>
  %c0 = ptx.get_register : !ptx.reg<r1>
  %c1 = ptx.get_register : !ptx.reg<r2>
  %c2 = ptx.get_register : !ptx.reg<r3>
  %c3 = ptx.get_register : !ptx.reg<r4>
  %d0, %d1, %d2, %d3 = ptx.wgmma_mma_async 8 "f16.f16.f16" (%c0, %c1, %c2, %c3), %a, %b {scale_a = 1 : i64, scale_b = 1 : i64, tnsp_a = 0 : i64, tnsp_b = 0 : i64, scale_d_imm = 1 : i64} : (!ptx.reg<r1>, !ptx.reg<r2>, !ptx.reg<r3>, !ptx.reg<r4>), !ptx.reg<rd1>, !ptx.reg<rd2> -> (!ptx.reg<r1>, !ptx.reg<r2>, !ptx.reg<r3>, !ptx.reg<r4>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: wgmma.mma_async .f32.tf32.tf32: 32-bit operands have no imm-trans (K-major only, PTX ISA 9.7.15.5.2)
ptx.entry "k" [] reqntid [128, 1, 1] {
  %a = ptx.get_register : !ptx.reg<rd1>
  %b = ptx.get_register : !ptx.reg<rd2>
  %r = ptx.get_register : !ptx.reg<r1>
  %c0 = ptx.get_register : !ptx.reg<f1>
  %c1 = ptx.get_register : !ptx.reg<f2>
  %c2 = ptx.get_register : !ptx.reg<f3>
  %c3 = ptx.get_register : !ptx.reg<f4>
  %d0, %d1, %d2, %d3 = ptx.wgmma_mma_async 8 "f32.tf32.tf32" (%c0, %c1, %c2, %c3), %a, %b {scale_a = 1 : i64, scale_b = 1 : i64, tnsp_a = 1 : i64, tnsp_b = 0 : i64, scale_d_imm = 1 : i64} : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>), !ptx.reg<rd1>, !ptx.reg<rd2> -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: wgmma.mma_async .f32.tf32.tf32: Tylo issues no register-A form for these types (no A fragment table)
ptx.entry "k" [] reqntid [128, 1, 1] {
  %a = ptx.get_register : !ptx.reg<rd1>
  %b = ptx.get_register : !ptx.reg<rd2>
  %r = ptx.get_register : !ptx.reg<r1>
  %c0 = ptx.get_register : !ptx.reg<f1>
  %c1 = ptx.get_register : !ptx.reg<f2>
  %c2 = ptx.get_register : !ptx.reg<f3>
  %c3 = ptx.get_register : !ptx.reg<f4>
  %d0, %d1, %d2, %d3 = ptx.wgmma_mma_async_reg_a 8 "f32.tf32.tf32" (%c0, %c1, %c2, %c3), (%r, %r, %r, %r), %b {scale_a = 1 : i64, scale_b = 1 : i64, tnsp_b = 0 : i64, scale_d_imm = 1 : i64} : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>), (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>), !ptx.reg<rd2> -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
  ptx.ret
}
