// RUN: tylo-opt %s --verify-diagnostics --split-input-file | filecheck %s
// Each chunk (split at the dashed lines) breaks one rule of a verifier of the ptx arithmetic ops in
// dialects/ptx/arithmetic.py (comparison and conversion: conversion_invalid.mlir).
// For each chunk tylo-opt prints a dashed line and then the refusal's message, so the
// CHECK / CHECK-NEXT pair binds each message to its own chunk. The valid forms are in ops.mlir.
// The first chunk is an empty module, so that every case follows a dashed line.
builtin.module {}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.add result must be a .b32 register, got .f32 (%f3)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %x = ptx.add "b32" %r, %r : (!ptx.reg<r1>, !ptx.reg<r1>) -> !ptx.reg<f3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.sub result must be a .b32 register, got .f32 (%f3)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %x = ptx.sub "b32" %r, %r : (!ptx.reg<r1>, !ptx.reg<r1>) -> !ptx.reg<f3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.mul result must be a .b32 register, got .f32 (%f3)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %x = ptx.mul "b32" %r, %r : (!ptx.reg<r1>, !ptx.reg<r1>) -> !ptx.reg<f3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.div result must be a .b32 register, got .f32 (%f3)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %x = ptx.div "b32" %r, %r : (!ptx.reg<r1>, !ptx.reg<r1>) -> !ptx.reg<f3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.rem result must be a .b32 register, got .f32 (%f3)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %x = ptx.rem "b32" %r, %r : (!ptx.reg<r1>, !ptx.reg<r1>) -> !ptx.reg<f3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.min result must be a .b32 register, got .f32 (%f3)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %x = ptx.min "b32" %r, %r : (!ptx.reg<r1>, !ptx.reg<r1>) -> !ptx.reg<f3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.max result must be a .b32 register, got .f32 (%f3)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %x = ptx.max "b32" %r, %r : (!ptx.reg<r1>, !ptx.reg<r1>) -> !ptx.reg<f3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.and result must be a .b32 register, got .f32 (%f3)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %x = ptx.and "b32" %r, %r : (!ptx.reg<r1>, !ptx.reg<r1>) -> !ptx.reg<f3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.or result must be a .b32 register, got .f32 (%f3)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %x = ptx.or "b32" %r, %r : (!ptx.reg<r1>, !ptx.reg<r1>) -> !ptx.reg<f3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.xor result must be a .b32 register, got .f32 (%f3)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %x = ptx.xor "b32" %r, %r : (!ptx.reg<r1>, !ptx.reg<r1>) -> !ptx.reg<f3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.shl result must be a .b32 register, got .f32 (%f3)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %x = ptx.shl "b32" %r, %r : (!ptx.reg<r1>, !ptx.reg<r1>) -> !ptx.reg<f3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.shr result must be a .b32 register, got .f32 (%f3)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %x = ptx.shr "b32" %r, %r : (!ptx.reg<r1>, !ptx.reg<r1>) -> !ptx.reg<f3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.add operand a must be a .b32 register, got .f32 (%f1)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %f = ptx.get_register : !ptx.reg<f1>
  %x = ptx.add "s32" %f, %r : (!ptx.reg<f1>, !ptx.reg<r1>) -> !ptx.reg<r3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.add operand b must be a .b32 register, got .f32 (%f1)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %f = ptx.get_register : !ptx.reg<f1>
  %x = ptx.add "s32" %r, %f : (!ptx.reg<r1>, !ptx.reg<f1>) -> !ptx.reg<r3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.add result must be a .f64 register, got .b64 (%rd2)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %fd = ptx.get_register : !ptx.reg<fd1>
  %x = ptx.add "f64" %fd, %fd : (!ptx.reg<fd1>, !ptx.reg<fd1>) -> !ptx.reg<rd2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.mul result must be a .b64 register, got .b32 (%r3)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %x = ptx.mul "s32" "wide" %r, %r : (!ptx.reg<r1>, !ptx.reg<r1>) -> !ptx.reg<r3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.mul result must be a .b32 register, got .b16 (%rs3)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %rs = ptx.get_register : !ptx.reg<rs1>
  %x = ptx.mul "u16" "wide" %rs, %rs : (!ptx.reg<rs1>, !ptx.reg<rs1>) -> !ptx.reg<rs3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.mul mode wide needs a 16- or 32-bit integer type, got .s64
ptx.entry "k" ["u64", "s64", "f32"] reqntid [32, 1, 1] {
  %rd = ptx.get_register : !ptx.reg<rd1>
  %x = ptx.mul "s64" "wide" %rd, %rd : (!ptx.reg<rd1>, !ptx.reg<rd1>) -> !ptx.reg<rd2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.mul mode wide needs a 16- or 32-bit integer type, got .f32
ptx.entry "k" ["u64", "f32", "f32"] reqntid [32, 1, 1] {
  %f = ptx.get_register : !ptx.reg<f1>
  %x = ptx.mul "f32" "wide" %f, %f : (!ptx.reg<f1>, !ptx.reg<f1>) -> !ptx.reg<rd2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.shl operand b must be a .b32 register, got .b64
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %rd = ptx.get_register : !ptx.reg<rd1>
  %x = ptx.shl "b64" %rd, %rd : (!ptx.reg<rd1>, !ptx.reg<rd1>) -> !ptx.reg<rd2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.shr operand b must be a .b32 register, got .b16
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %rs = ptx.get_register : !ptx.reg<rs1>
  %x = ptx.shr "s16" %rs, %rs : (!ptx.reg<rs1>, !ptx.reg<rs1>) -> !ptx.reg<rs2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: fma c must be a .f32 register, got .b32 (%r1)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %f = ptx.get_register : !ptx.reg<f1>
  %x = ptx.fma "f32" %f, %f, %r : (!ptx.reg<f1>, !ptx.reg<f1>, !ptx.reg<r1>) -> !ptx.reg<f2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: fma result must be a .b32 register, got .f32 (%f3)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %x = ptx.fma "s32" %r, %r, %r : (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>) -> !ptx.reg<f3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.mov result must be a .b64 register, got .b32 (%r3)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %rd = ptx.get_register : !ptx.reg<rd1>
  %x = ptx.mov "b64" %rd : !ptx.reg<rd1> -> !ptx.reg<r3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.neg source must be a .f32 register, got .b32 (%r1)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %x = ptx.neg "f32" %r : !ptx.reg<r1> -> !ptx.reg<f2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.not result must be a .pred register, got .b32 (%r3)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %p = ptx.get_register : !ptx.reg<p1>
  %x = ptx.not "pred" %p : !ptx.reg<p1> -> !ptx.reg<r3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: const result must be a .f32 register, got .b32 (%r3)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %x = ptx.const "f32"(1065353216) : !ptx.reg<r3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: '%tid.w' is not a special register Tylo reads
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %x = ptx.special "%tid.w" : !ptx.reg<r3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: '%clock' is not a special register Tylo reads
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %x = ptx.special "%clock" : !ptx.reg<r3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: special register copy must be a .b32 register, got .b64 (%rd3)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %x = ptx.special "%ctaid.y" : !ptx.reg<rd3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.add takes .rn, .rz, .rm, .rp, .ftz, .sat, not .lo
ptx.entry "k" ["u64"] {
  %r = ptx.get_register : !ptx.reg<r1>
  %x = ptx.add "s32" "lo" %r, %r : (!ptx.reg<r1>, !ptx.reg<r1>) -> !ptx.reg<r3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.and takes no modifier, not .rn
ptx.entry "k" ["u64"] {
  %r = ptx.get_register : !ptx.reg<r1>
  %x = ptx.and "b32" "rn" %r, %r : (!ptx.reg<r1>, !ptx.reg<r1>) -> !ptx.reg<r3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.mul.lo takes integer types, not .f32
ptx.entry "k" ["u64"] {
  %f = ptx.get_register : !ptx.reg<f1>
  %x = ptx.mul "f32" "lo" %f, %f : (!ptx.reg<f1>, !ptx.reg<f1>) -> !ptx.reg<f3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.div.rn takes floating-point types, not .s32
ptx.entry "k" ["u64"] {
  %r = ptx.get_register : !ptx.reg<r1>
  %x = ptx.div "s32" "rn" %r, %r : (!ptx.reg<r1>, !ptx.reg<r1>) -> !ptx.reg<r3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.min.NaN takes floating-point types, not .s32
ptx.entry "k" ["u64"] {
  %r = ptx.get_register : !ptx.reg<r1>
  %x = ptx.min "s32" "NaN" %r, %r : (!ptx.reg<r1>, !ptx.reg<r1>) -> !ptx.reg<r3>
  ptx.ret
}
