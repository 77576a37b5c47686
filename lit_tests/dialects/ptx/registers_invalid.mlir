// RUN: tylo-opt %s --parsing-diagnostics --split-input-file | filecheck %s
// Each chunk (split at the dashed lines) breaks one rule of the parser of !ptx.reg
// (dialects/ptx/registers.py).
// For each chunk tylo-opt prints a dashed line, where the parser stopped (file:line:col)
// and the message; the CHECK lines bind each message to its chunk and line.
// The first chunk is an empty module, so that every case follows a dashed line.
builtin.module {}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: registers_invalid.mlir:[[# @LINE + 3]]:37
// CHECK:      'q1' is not a PTX register name (e.g. r3, rd1, f2, p0)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %fd = ptx.get_register : !ptx.reg<q1>
  ptx.bar_sync 0
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: registers_invalid.mlir:[[# @LINE + 3]]:37
// CHECK:      'fd2x' is not a PTX register name
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %fd = ptx.get_register : !ptx.reg<fd2x>
  ptx.bar_sync 0
  ptx.ret
}
