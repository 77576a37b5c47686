// RUN: tylo-opt %s --verify-diagnostics --split-input-file | filecheck %s
// The f16-accumulator mma.sync's refusals (dialects/ptx/control.py MmaSyncOp): its C and D are
// two .b32 registers of .f16x2, not four .b16 ones. The first chunk is an empty module.
builtin.module {}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: mma C needs 2 registers, got 4
ptx.entry "k" [] reqntid [32, 1, 1] {
  %a = ptx.get_register : !ptx.reg<r1>
  %h = ptx.get_register : !ptx.reg<rs1>
  %d0, %d1 = ptx.mma_sync "m16n8k16" "f16.f16.f16.f16"(%a, %a, %a, %a), (%a, %a), (%h, %h, %h, %h) : (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<rs1>, !ptx.reg<rs1>, !ptx.reg<rs1>, !ptx.reg<rs1>) -> (!ptx.reg<r4>, !ptx.reg<r5>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: mma D register must be a .b32 register, got .b16 (%rs2)
ptx.entry "k" [] reqntid [32, 1, 1] {
  %a = ptx.get_register : !ptx.reg<r1>
  %d0, %d1 = ptx.mma_sync "m16n8k16" "f16.f16.f16.f16"(%a, %a, %a, %a), (%a, %a), (%a, %a) : (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<r1>, !ptx.reg<r1>) -> (!ptx.reg<r4>, !ptx.reg<rs2>)
  ptx.ret
}
