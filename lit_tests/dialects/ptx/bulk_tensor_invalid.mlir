// RUN: tylo-opt %s --verify-diagnostics --split-input-file | filecheck %s
// Each chunk breaks one rule of a verifier of the ptx ops in dialects/ptx/bulk_tensor.py (the
// valid forms are in targets/bulk_tensor.mlir).
builtin.module {}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.bulk_tensor_reduce: redOp .sub is not one of .add, .min, .max, .inc, .dec, .and, .or, .xor
ptx.entry "k" [] {
  %tile = ptx.const "b32"(1024) : !ptx.reg<r1>
  %map = ptx.const "b64"(64) : !ptx.reg<rd1>
  %c0 = ptx.const "b32"(0) : !ptx.reg<r3>
  ptx.bulk_tensor_reduce "sub" %map[%c0, %c0], %tile : !ptx.reg<rd1>[!ptx.reg<r3>, !ptx.reg<r3>], !ptx.reg<r1>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.bulk_tensor_reduce: 4 coordinates; the copies take rank 2 or 3
ptx.entry "k" [] {
  %tile = ptx.const "b32"(1024) : !ptx.reg<r1>
  %map = ptx.const "b64"(64) : !ptx.reg<rd1>
  %c0 = ptx.const "b32"(0) : !ptx.reg<r3>
  ptx.bulk_tensor_reduce "add" %map[%c0, %c0, %c0, %c0], %tile : !ptx.reg<rd1>[!ptx.reg<r3>, !ptx.reg<r3>, !ptx.reg<r3>, !ptx.reg<r3>], !ptx.reg<r1>
  ptx.ret
}
