// RUN: tylo-opt %s --parsing-diagnostics --split-input-file | filecheck %s
// Each chunk (split at the dashed lines) writes a modifier outside its table, which the parser of
// the typed modifier attributes refuses (dialects/ptx/attributes.py): a PTX type, a state space,
// a setp comparison, an instruction or cvt modifier, in the custom and the generic syntax.
// For each chunk tylo-opt prints a dashed line, where the parser stopped (file:line:col) and the
// message; the CHECK lines bind each message to its chunk and line. Which modifiers an op takes
// (a valid modifier on the wrong op) is the ops' verifiers', in the other *_invalid.mlir files.
// The first chunk is an empty module, so that every case follows a dashed line.
builtin.module {}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: attributes_invalid.mlir:[[# @LINE + 4]]:
// CHECK:      '.s33' is not a PTX type
ptx.entry "k" ["u64"] {
  %r = ptx.get_register : !ptx.reg<r1>
  %x = ptx.add "s33" %r, %r : (!ptx.reg<r1>, !ptx.reg<r1>) -> !ptx.reg<r3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: attributes_invalid.mlir:[[# @LINE + 3]]:
// CHECK:      '.f31' is not a PTX type
ptx.entry "k" ["u64"] {
  %x = ptx.const "f31"(1065353216) : !ptx.reg<f2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: attributes_invalid.mlir:[[# @LINE + 4]]:
// CHECK:      '.f33' is not a PTX type
ptx.entry "k" ["u64"] {
  %rd = ptx.get_register : !ptx.reg<rd1>
  %x = ptx.ld "global" "f33"[%rd, 4] : !ptx.reg<rd1> -> !ptx.reg<f2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: attributes_invalid.mlir:[[# @LINE + 4]]:
// CHECK:      state space 'tex' is not one of ('global', 'shared', 'param', 'local', 'shared::cluster')
ptx.entry "k" ["u64"] {
  %rd = ptx.get_register : !ptx.reg<rd1>
  %x = ptx.ld "tex" "f32"[%rd, 4] : !ptx.reg<rd1> -> !ptx.reg<f2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: attributes_invalid.mlir:[[# @LINE + 5]]:
// CHECK:      state space 'const' is not one of
ptx.entry "k" ["u64"] {
  %r = ptx.get_register : !ptx.reg<r1>
  %r2 = ptx.get_register : !ptx.reg<r2>
  ptx.st "const" "b32"[%r, 0], %r2 : !ptx.reg<r1>, !ptx.reg<r2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: attributes_invalid.mlir:[[# @LINE + 5]]:
// CHECK:      'less' is not a setp comparison
ptx.entry "k" ["u64"] {
  %r = ptx.get_register : !ptx.reg<r1>
  %r2 = ptx.get_register : !ptx.reg<r2>
  %x = ptx.setp "less" "s32" %r, %r2 : (!ptx.reg<r1>, !ptx.reg<r2>) -> !ptx.reg<p2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: attributes_invalid.mlir:[[# @LINE + 4]]:
// CHECK:      'lo.u' is not a setp comparison
ptx.entry "k" ["u64"] {
  %f = ptx.get_register : !ptx.reg<f1>
  %x = ptx.setp "lo.u" "f32" %f, %f : (!ptx.reg<f1>, !ptx.reg<f1>) -> !ptx.reg<p2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: attributes_invalid.mlir:[[# @LINE + 4]]:
// CHECK:      '.bf8' is not a PTX type
ptx.entry "k" ["u64"] {
  %f = ptx.get_register : !ptx.reg<f1>
  %x = ptx.cvt "rn" "bf8" "f32" %f : !ptx.reg<f1> -> !ptx.reg<rs2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: attributes_invalid.mlir:[[# @LINE + 4]]:
// CHECK:      '.rnx' is not a cvt modifier: {rn|rz|rm|rp|rni|rzi|rmi|rpi|rna}{.ftz}{.sat}
ptx.entry "k" ["u64"] {
  %r = ptx.get_register : !ptx.reg<r1>
  %x = ptx.cvt "rnx" "f32" "s32" %r : !ptx.reg<r1> -> !ptx.reg<f2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: attributes_invalid.mlir:[[# @LINE + 4]]:
// CHECK:      '.approx' is not a cvt modifier
ptx.entry "k" ["u64"] {
  %f = ptx.get_register : !ptx.reg<f1>
  %x = ptx.cvt_pair "approx" "bf16x2" "f32" %f, %f : (!ptx.reg<f1>, !ptx.reg<f1>) -> !ptx.reg<r2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: attributes_invalid.mlir:[[# @LINE + 4]]:
// CHECK:      cvt needs its destination and source types (string literals)
ptx.entry "k" ["u64"] {
  %r = ptx.get_register : !ptx.reg<r1>
  %x = ptx.cvt "f32" %r : !ptx.reg<r1> -> !ptx.reg<f2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: attributes_invalid.mlir:[[# @LINE + 4]]:
// CHECK:      '.rni' is not an instruction modifier: one of lo, hi, wide, or {rn|rz|rm|rp|approx|full}{.ftz}{.sat|.NaN}
ptx.entry "k" ["u64"] {
  %f = ptx.get_register : !ptx.reg<f1>
  %x = ptx.sqrt "f32" "rni" %f : !ptx.reg<f1> -> !ptx.reg<f2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: attributes_invalid.mlir:[[# @LINE + 4]]:
// CHECK:      '.low' is not an instruction modifier
ptx.entry "k" ["u64"] {
  %r = ptx.get_register : !ptx.reg<r1>
  %x = ptx.mul "s32" "low" %r, %r : (!ptx.reg<r1>, !ptx.reg<r1>) -> !ptx.reg<r3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: attributes_invalid.mlir:[[# @LINE + 4]]:
// CHECK:      '.s33' is not a PTX type
ptx.entry "k" ["u64"] {
  %r = ptx.get_register : !ptx.reg<r1>
  %x = "ptx.add"(%r, %r) <{type = #ptx<type "s33">}> : (!ptx.reg<r1>, !ptx.reg<r1>) -> !ptx.reg<r3>
  ptx.ret
}
