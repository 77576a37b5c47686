// RUN: tylo-opt %s --verify-diagnostics --split-input-file | filecheck %s
// Each chunk (split at the dashed lines) breaks one rule of a verifier of the ptx comparison,
// selection, conversion and pack/unpack ops in dialects/ptx/arithmetic.py.
// For each chunk tylo-opt prints a dashed line and then the refusal's message, so the
// CHECK / CHECK-NEXT pair binds each message to its own chunk. The valid forms are in ops.mlir.
// The first chunk is an empty module, so that every case follows a dashed line.
builtin.module {}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: setp result must be a .pred register, got .b32 (%r3)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %r2 = ptx.get_register : !ptx.reg<r2>
  %x = ptx.setp "lt" "s32" %r, %r2 : (!ptx.reg<r1>, !ptx.reg<r2>) -> !ptx.reg<r3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: setp a must be a .b32 register, got .f32 (%f1)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r2 = ptx.get_register : !ptx.reg<r2>
  %f = ptx.get_register : !ptx.reg<f1>
  %x = ptx.setp "lt" "s32" %f, %r2 : (!ptx.reg<f1>, !ptx.reg<r2>) -> !ptx.reg<p2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: selp predicate must be a .pred register, got .b32 (%r1)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %r2 = ptx.get_register : !ptx.reg<r2>
  %x = ptx.selp "b32" %r, %r2, %r : (!ptx.reg<r1>, !ptx.reg<r2>, !ptx.reg<r1>) -> !ptx.reg<r3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: selp result must be a .f32 register, got .b32 (%r3)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %f = ptx.get_register : !ptx.reg<f1>
  %p = ptx.get_register : !ptx.reg<p1>
  %x = ptx.selp "f32" %f, %f, %p : (!ptx.reg<f1>, !ptx.reg<f1>, !ptx.reg<p1>) -> !ptx.reg<r3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: cvt source must be a .b32 register, got .f32 (%f1)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %f = ptx.get_register : !ptx.reg<f1>
  %x = ptx.cvt "rn" "f32" "s32" %f : !ptx.reg<f1> -> !ptx.reg<f2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: cvt result must be a .b16 register, got .b32 (%r3)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %f = ptx.get_register : !ptx.reg<f1>
  %x = ptx.cvt "rn" "bf16" "f32" %f : !ptx.reg<f1> -> !ptx.reg<r3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: cvt has no scalar .e4m3 form: it converts .e4m3 only in pairs, as .e4m3x2
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %f = ptx.get_register : !ptx.reg<f1>
  %x = ptx.cvt "rn" "e4m3" "f32" %f : !ptx.reg<f1> -> !ptx.reg<rs2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: cvt has no scalar .e5m2 form
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %rs = ptx.get_register : !ptx.reg<rs1>
  %x = ptx.cvt "rn" "f16" "e5m2" %rs : !ptx.reg<rs1> -> !ptx.reg<rs2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: cvt_pair writes a packed pair
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %f = ptx.get_register : !ptx.reg<f1>
  %x = ptx.cvt_pair "rn.satfinite" "e4m3" "f32" %f, %f : (!ptx.reg<f1>, !ptx.reg<f1>) -> !ptx.reg<rs2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: cvt_pair converts from .f32, not .f16
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %f = ptx.get_register : !ptx.reg<f1>
  %x = ptx.cvt_pair "rn.satfinite" "e4m3x2" "f16" %f, %f : (!ptx.reg<f1>, !ptx.reg<f1>) -> !ptx.reg<rs2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: cvt_pair lo must be a .f32 register, got .b32 (%r1)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %f = ptx.get_register : !ptx.reg<f1>
  %x = ptx.cvt_pair "rn.satfinite" "e4m3x2" "f32" %f, %r : (!ptx.reg<f1>, !ptx.reg<r1>) -> !ptx.reg<rs2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: cvt_pair result must be a .b16 register, got .b32 (%r3)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %f = ptx.get_register : !ptx.reg<f1>
  %x = ptx.cvt_pair "rn.satfinite" "e4m3x2" "f32" %f, %f : (!ptx.reg<f1>, !ptx.reg<f1>) -> !ptx.reg<r3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: pack of ['b16', 'b16'] into .b64: parts must be bit registers filling the result
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %rs = ptx.get_register : !ptx.reg<rs1>
  %x = ptx.pack %rs, %rs : (!ptx.reg<rs1>, !ptx.reg<rs1>) -> !ptx.reg<rd3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: pack of ['b32', 'b32'] into .b32: parts must be bit registers filling the result
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %r2 = ptx.get_register : !ptx.reg<r2>
  %x = ptx.pack %r, %r2 : (!ptx.reg<r1>, !ptx.reg<r2>) -> !ptx.reg<r3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: pack of ['b32'] into .b32: parts must be bit registers filling the result
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %x = ptx.pack %r : (!ptx.reg<r1>) -> !ptx.reg<r4>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: pack of ['b16', 'b16', 'b32'] into .b64: parts must be bit registers filling the result
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %rs = ptx.get_register : !ptx.reg<rs1>
  %x = ptx.pack %rs, %rs, %r : (!ptx.reg<rs1>, !ptx.reg<rs1>, !ptx.reg<r1>) -> !ptx.reg<rd3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: pack of ['f32', 'f32'] into .b64: parts must be bit registers filling the result
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %f = ptx.get_register : !ptx.reg<f1>
  %x = ptx.pack %f, %f : (!ptx.reg<f1>, !ptx.reg<f1>) -> !ptx.reg<rd3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: unpack of .b64 into ['b16', 'b16']: parts must be bit registers
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %rd = ptx.get_register : !ptx.reg<rd1>
  %x, %y = ptx.unpack %rd : !ptx.reg<rd1> -> (!ptx.reg<rs2>, !ptx.reg<rs3>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: unpack of .pred into ['pred']: parts must be bit registers filling the source
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %p = ptx.get_register : !ptx.reg<p1>
  %x = ptx.unpack %p : !ptx.reg<p1> -> (!ptx.reg<p2>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: unpack of .b64 into ['f32', 'f32']: parts must be bit registers filling the source
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %rd = ptx.get_register : !ptx.reg<rd1>
  %x, %y = ptx.unpack %rd : !ptx.reg<rd1> -> (!ptx.reg<f2>, !ptx.reg<f3>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: setp.nan compares floats, not .s32
ptx.entry "k" ["u64"] {
  %r = ptx.get_register : !ptx.reg<r1>
  %x = ptx.setp "nan" "s32" %r, %r : (!ptx.reg<r1>, !ptx.reg<r1>) -> !ptx.reg<p2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: setp.lo compares unsigned integers, not .f32
ptx.entry "k" ["u64"] {
  %f = ptx.get_register : !ptx.reg<f1>
  %x = ptx.setp "lo" "f32" %f, %f : (!ptx.reg<f1>, !ptx.reg<f1>) -> !ptx.reg<p2>
  ptx.ret
}
