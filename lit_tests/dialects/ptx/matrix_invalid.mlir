// RUN: tylo-opt %s --verify-diagnostics --split-input-file | filecheck %s
// Each chunk (split at the dashed lines) breaks one rule of a verifier of ptx.ldmatrix /
// ptx.stmatrix (dialects/ptx/matrix.py).
// For each chunk tylo-opt prints a dashed line and then the refusal's message, so the
// CHECK / CHECK-NEXT pair binds each message to its own chunk. The valid forms are in ops.mlir.
// The first chunk is an empty module, so that every case follows a dashed line.
builtin.module {}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ldmatrix .x3: the number of matrices must be 1, 2 or 4
ptx.entry "k" [] reqntid [32, 1, 1] {
  %a = ptx.get_register : !ptx.reg<r1>
  %x, %y = ptx.ldmatrix 3[%a] {trans} : !ptx.reg<r1> -> (!ptx.reg<r3>, !ptx.reg<r4>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ldmatrix .x2 needs 2 destination registers, got 1
ptx.entry "k" [] reqntid [32, 1, 1] {
  %a = ptx.get_register : !ptx.reg<r1>
  %x = ptx.ldmatrix 2[%a] {trans} : !ptx.reg<r1> -> (!ptx.reg<r3>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ldmatrix destination register must be a .b32 register, got .f32 (%f4)
ptx.entry "k" [] reqntid [32, 1, 1] {
  %a = ptx.get_register : !ptx.reg<r1>
  %x, %y = ptx.ldmatrix 2[%a] {trans} : !ptx.reg<r1> -> (!ptx.reg<r3>, !ptx.reg<f4>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ldmatrix shared address must be a .b32 register, got .b64 (%rd1)
ptx.entry "k" [] reqntid [32, 1, 1] {
  %rd = ptx.get_register : !ptx.reg<rd1>
  %x, %y = ptx.ldmatrix 2[%rd] {trans} : !ptx.reg<rd1> -> (!ptx.reg<r3>, !ptx.reg<r4>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: stmatrix .x2 needs 2 source registers, got 1
ptx.entry "k" [] reqntid [32, 1, 1] {
  %a = ptx.get_register : !ptx.reg<r1>
  %b = ptx.get_register : !ptx.reg<r2>
  ptx.stmatrix 2[%a], %b : !ptx.reg<r1>, (!ptx.reg<r2>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: stmatrix source register must be a .b32 register, got .f32 (%f1)
ptx.entry "k" [] reqntid [32, 1, 1] {
  %a = ptx.get_register : !ptx.reg<r1>
  %b = ptx.get_register : !ptx.reg<r2>
  %f = ptx.get_register : !ptx.reg<f1>
  ptx.stmatrix 2[%a], %b, %f : !ptx.reg<r1>, (!ptx.reg<r2>, !ptx.reg<f1>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: stmatrix .x8: the number of matrices must be 1, 2 or 4
ptx.entry "k" [] reqntid [32, 1, 1] {
  %a = ptx.get_register : !ptx.reg<r1>
  %b = ptx.get_register : !ptx.reg<r2>
  ptx.stmatrix 8[%a], %b, %b : !ptx.reg<r1>, (!ptx.reg<r2>, !ptx.reg<r2>)
  ptx.ret
}
