// RUN: tylo-opt %s --verify-diagnostics --split-input-file | filecheck %s
// Each chunk (split at the dashed lines) breaks one rule of the verifier of ptx.entry
// (dialects/ptx/entry.py).
// For each chunk tylo-opt prints a dashed line and then the refusal's message, so the
// CHECK / CHECK-NEXT pair binds each message to its own chunk. The valid forms are in ops.mlir.
// The first chunk is an empty module, so that every case follows a dashed line.
builtin.module {}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: '.s3' is not a kernel parameter type
ptx.entry "k" ["u64", "s3"] reqntid [32, 1, 1] {
  ptx.bar_sync 0
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: '.pred' is not a kernel parameter type
ptx.entry "k" ["pred"] reqntid [32, 1, 1] {
  ptx.bar_sync 0
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: a kernel parameter of .bf16 values is declared '.b16'
ptx.entry "k" ["bf16"] reqntid [32, 1, 1] {
  ptx.bar_sync 0
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: reqntid [32, 1] must be three positive extents of at most 1024 threads
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1] {
  ptx.bar_sync 0
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: reqntid [32, 0, 1] must be three positive extents
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 0, 1] {
  ptx.bar_sync 0
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: reqntid [-32, -1, 1] must be three positive extents
ptx.entry "k" ["u64", "s32", "f32"] reqntid [-32, -1, 1] {
  ptx.bar_sync 0
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: reqntid [32, 32, 2] must be three positive extents of at most 1024 threads
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 32, 2] {
  ptx.bar_sync 0
  ptx.ret
}
