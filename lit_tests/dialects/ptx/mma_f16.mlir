// RUN: tylo-opt %s | tylo-opt | filecheck %s
// RUN: tylo-opt %s -t ptx | filecheck %s --check-prefix=PTX
// mma.sync with f16 accumulators (PTX ISA 9.7.14.5.14; fragments 9.7.14.5.8): m16n8k16
// .f16.f16.f16.f16 takes C and gives D as two .b32 registers of two f16 each (.f16x2, low
// half first), A and B as the f32-accumulating form's. (ptxas.mlir assembles this file's PTX.)

// CHECK: %d0, %d1 = ptx.mma_sync "m16n8k16" "f16.f16.f16.f16"(%a, %a, %a, %a), (%a, %a), (%c0, %c1)
// PTX:   mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%r4, %r5}, {%r1, %r1, %r1, %r1}, {%r1, %r1}, {%r2, %r3};
ptx.entry "k" [] reqntid [32, 1, 1] {
  %a = ptx.get_register : !ptx.reg<r1>
  %c0 = ptx.get_register : !ptx.reg<r2>
  %c1 = ptx.get_register : !ptx.reg<r3>
  %d0, %d1 = ptx.mma_sync "m16n8k16" "f16.f16.f16.f16"(%a, %a, %a, %a), (%a, %a), (%c0, %c1) : (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<r2>, !ptx.reg<r3>) -> (!ptx.reg<r4>, !ptx.reg<r5>)
  ptx.ret
}
