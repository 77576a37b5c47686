// RUN: tylo-opt %s --verify-diagnostics --split-input-file | filecheck %s
// Each chunk (split at the dashed lines) breaks one rule of a verifier of the ptx ops in
// dialects/ptx/control.py.
// For each chunk tylo-opt prints a dashed line and then the refusal's message, so the
// CHECK / CHECK-NEXT pair binds each message to its own chunk. The valid forms are in ops.mlir.
// The first chunk is an empty module, so that every case follows a dashed line.
builtin.module {}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: barrier 16 must be in 0..15
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  ptx.bar_sync 16
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: mma A register must be a .b32 register, got .f32 (%f1)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %f = ptx.get_register : !ptx.reg<f1>
  %d0, %d1, %d2, %d3 = ptx.mma_sync "m16n8k16" "f32.bf16.bf16.f32"(%r, %r, %r, %f), (%r, %r), (%f, %f, %f, %f) : (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<f1>), (!ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<f1>, !ptx.reg<f1>, !ptx.reg<f1>, !ptx.reg<f1>) -> (!ptx.reg<f4>, !ptx.reg<f5>, !ptx.reg<f6>, !ptx.reg<f7>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: mma B register must be a .b32 register, got .b64 (%rd1)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %rd = ptx.get_register : !ptx.reg<rd1>
  %f = ptx.get_register : !ptx.reg<f1>
  %d0, %d1, %d2, %d3 = ptx.mma_sync "m16n8k16" "f32.bf16.bf16.f32"(%r, %r, %r, %r), (%r, %rd), (%f, %f, %f, %f) : (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<r1>, !ptx.reg<rd1>), (!ptx.reg<f1>, !ptx.reg<f1>, !ptx.reg<f1>, !ptx.reg<f1>) -> (!ptx.reg<f4>, !ptx.reg<f5>, !ptx.reg<f6>, !ptx.reg<f7>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: mma C register must be a .f32 register, got .b32 (%r1)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %f = ptx.get_register : !ptx.reg<f1>
  %d0, %d1, %d2, %d3 = ptx.mma_sync "m16n8k16" "f32.bf16.bf16.f32"(%r, %r, %r, %r), (%r, %r), (%f, %f, %f, %r) : (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<f1>, !ptx.reg<f1>, !ptx.reg<f1>, !ptx.reg<r1>) -> (!ptx.reg<f4>, !ptx.reg<f5>, !ptx.reg<f6>, !ptx.reg<f7>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: mma D register must be a .f32 register, got .b32 (%r7)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %f = ptx.get_register : !ptx.reg<f1>
  %d0, %d1, %d2, %d3 = ptx.mma_sync "m16n8k16" "f32.bf16.bf16.f32"(%r, %r, %r, %r), (%r, %r), (%f, %f, %f, %f) : (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<f1>, !ptx.reg<f1>, !ptx.reg<f1>, !ptx.reg<f1>) -> (!ptx.reg<f4>, !ptx.reg<f5>, !ptx.reg<f6>, !ptx.reg<r7>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: mma A needs 4 registers, got 3
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %f = ptx.get_register : !ptx.reg<f1>
  %d0, %d1, %d2, %d3 = ptx.mma_sync "m16n8k16" "f32.bf16.bf16.f32"(%r, %r, %r), (%r, %r), (%f, %f, %f, %f) : (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<f1>, !ptx.reg<f1>, !ptx.reg<f1>, !ptx.reg<f1>) -> (!ptx.reg<f4>, !ptx.reg<f5>, !ptx.reg<f6>, !ptx.reg<f7>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: mma D needs 4 registers, got 3
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %f = ptx.get_register : !ptx.reg<f1>
  %d0, %d1, %d2 = ptx.mma_sync "m16n8k16" "f32.bf16.bf16.f32"(%r, %r, %r, %r), (%r, %r), (%f, %f, %f, %f) : (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<f1>, !ptx.reg<f1>, !ptx.reg<f1>, !ptx.reg<f1>) -> (!ptx.reg<f4>, !ptx.reg<f5>, !ptx.reg<f6>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: mma.sync.m16n8k16 with types 'f32.bf16' is not an instruction of the MMA table
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %f = ptx.get_register : !ptx.reg<f1>
  %d0, %d1, %d2, %d3 = ptx.mma_sync "m16n8k16" "f32.bf16"(%r, %r, %r, %r), (%r, %r), (%f, %f, %f, %f) : (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<f1>, !ptx.reg<f1>, !ptx.reg<f1>, !ptx.reg<f1>) -> (!ptx.reg<f4>, !ptx.reg<f5>, !ptx.reg<f6>, !ptx.reg<f7>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: mma.sync.m16n8k16 with types 'f32.bf16.f16.f32' is not an instruction of the MMA table
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %f = ptx.get_register : !ptx.reg<f1>
  %d0, %d1, %d2, %d3 = ptx.mma_sync "m16n8k16" "f32.bf16.f16.f32"(%r, %r, %r, %r), (%r, %r), (%f, %f, %f, %f) : (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<f1>, !ptx.reg<f1>, !ptx.reg<f1>, !ptx.reg<f1>) -> (!ptx.reg<f4>, !ptx.reg<f5>, !ptx.reg<f6>, !ptx.reg<f7>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: mma.sync.m16n8k32 with types 'f32.bf16.bf16.f32' is not an instruction of the MMA table
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %f = ptx.get_register : !ptx.reg<f1>
  %d0, %d1, %d2, %d3 = ptx.mma_sync "m16n8k32" "f32.bf16.bf16.f32"(%r, %r, %r, %r), (%r, %r), (%f, %f, %f, %f) : (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<f1>, !ptx.reg<f1>, !ptx.reg<f1>, !ptx.reg<f1>) -> (!ptx.reg<f4>, !ptx.reg<f5>, !ptx.reg<f6>, !ptx.reg<f7>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: mma.sync.m16n8k16.f64.f64.f64.f64 takes no .satfinite (integer operands only)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %a = ptx.get_register : !ptx.reg<fd1>
  %d0, %d1, %d2, %d3 = ptx.mma_sync "m16n8k16" "f64.f64.f64.f64"(%a, %a, %a, %a, %a, %a, %a, %a), (%a, %a, %a, %a), (%a, %a, %a, %a) {satfinite} : (!ptx.reg<fd1>, !ptx.reg<fd1>, !ptx.reg<fd1>, !ptx.reg<fd1>, !ptx.reg<fd1>, !ptx.reg<fd1>, !ptx.reg<fd1>, !ptx.reg<fd1>), (!ptx.reg<fd1>, !ptx.reg<fd1>, !ptx.reg<fd1>, !ptx.reg<fd1>), (!ptx.reg<fd1>, !ptx.reg<fd1>, !ptx.reg<fd1>, !ptx.reg<fd1>) -> (!ptx.reg<fd4>, !ptx.reg<fd5>, !ptx.reg<fd6>, !ptx.reg<fd7>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: mma A register must be a .f64 register, got .b32 (%r1)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %a = ptx.get_register : !ptx.reg<fd1>
  %d0, %d1 = ptx.mma_sync "m8n8k4" "f64.f64.f64.f64"(%r), (%a), (%a, %a) : (!ptx.reg<r1>), (!ptx.reg<fd1>), (!ptx.reg<fd1>, !ptx.reg<fd1>) -> (!ptx.reg<fd4>, !ptx.reg<fd5>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: mma.sync.m16n8k256.s32.b1.b1.s32: a .b1 mma needs bit_op 'and' or 'xor', got None
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %d0, %d1, %d2, %d3 = ptx.mma_sync "m16n8k256" "s32.b1.b1.s32"(%r, %r, %r, %r), (%r, %r), (%r, %r, %r, %r) : (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>) -> (!ptx.reg<r4>, !ptx.reg<r5>, !ptx.reg<r6>, !ptx.reg<r7>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: mma.sync.m16n8k256.s32.b1.b1.s32: a .b1 mma needs bit_op 'and' or 'xor', got 'or'
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %d0, %d1, %d2, %d3 = ptx.mma_sync "m16n8k256" "s32.b1.b1.s32"(%r, %r, %r, %r), (%r, %r), (%r, %r, %r, %r) {bit_op = "or"} : (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>) -> (!ptx.reg<r4>, !ptx.reg<r5>, !ptx.reg<r6>, !ptx.reg<r7>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: mma.sync.m16n8k64.s32.s4.s4.s32: bit_op 'xor' is for .b1 operands only
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %d0, %d1, %d2, %d3 = ptx.mma_sync "m16n8k64" "s32.s4.s4.s32"(%r, %r, %r, %r), (%r, %r), (%r, %r, %r, %r) {bit_op = "xor"} : (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>) -> (!ptx.reg<r4>, !ptx.reg<r5>, !ptx.reg<r6>, !ptx.reg<r7>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: mma A needs 4 registers, got 8
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %d0, %d1, %d2, %d3 = ptx.mma_sync "m16n8k64" "s32.s4.s4.s32"(%r, %r, %r, %r, %r, %r, %r, %r), (%r, %r), (%r, %r, %r, %r) : (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>) -> (!ptx.reg<r4>, !ptx.reg<r5>, !ptx.reg<r6>, !ptx.reg<r7>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: branch predicate must be a .pred register, got .b32 (%r1)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  ptx.cond_bra %r : !ptx.reg<r1>, ^l, ^next
^next:
  ptx.label "N"
  ptx.ret
^l:
  ptx.label "L"
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.cond_bra must fall through to the next block
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %p = ptx.get_register : !ptx.reg<p1>
  ptx.cond_bra %p : !ptx.reg<p1>, ^next, ^l
^next:
  ptx.label "N"
  ptx.ret
^l:
  ptx.label "L"
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.label 'L' must be the first op of its block
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  ptx.bra ^l
^l:
  ptx.bar_sync 0
  ptx.label "L"
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: 'ptx.ret' must be the last operation in its parent block
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  ptx.ret
  ptx.bar_sync 0
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: negate needs a predicate
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  ptx.trap {negate}
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: trap predicate must be a .pred register, got .b32 (%r1)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  ptx.trap if %r : !ptx.reg<r1>
  ptx.ret
}
