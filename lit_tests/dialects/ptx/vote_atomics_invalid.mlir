// RUN: tylo-opt %s --verify-diagnostics --split-input-file | filecheck %s
// Each chunk breaks one rule of a verifier of the ptx ops in dialects/ptx/vote.py and
// atomics.py (the valid forms are in targets/ptx_vote_atomics.mlir).
builtin.module {}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: member mask 0x0 must be a non-zero 32-bit lane mask
ptx.entry "k" [] {
  ptx.bar_warp_sync mask 0
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: vote.sync result must be a .b32 register, got .pred (%p2)
ptx.entry "k" [] {
  %z = ptx.const "u32"(0) : !ptx.reg<r1>
  %p = ptx.setp "eq" "u32" %z, %z : (!ptx.reg<r1>, !ptx.reg<r1>) -> !ptx.reg<p1>
  %b = ptx.vote_sync "ballot" %p mask 4294967295 : !ptx.reg<p1> -> !ptx.reg<p2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: atom.min takes .s32, .u32, .s64, .u64, not .f32 (PTX ISA 9.7.13.5 atom; ptxas 13.0)
ptx.entry "k" [] {
  %a = ptx.const "u32"(0) : !ptx.reg<r1>
  %f = ptx.const "f32"(0) : !ptx.reg<f1>
  %o = ptx.atom "min" "relaxed" "gpu" "shared" "f32" [%a, 0], %f : !ptx.reg<r1>, !ptx.reg<f1> -> !ptx.reg<f2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: red semantics 'acquire' is not one of relaxed, release (PTX ISA 9.7.13.5-6)
ptx.entry "k" [] {
  %a = ptx.const "u32"(0) : !ptx.reg<r1>
  ptx.red "add" "acquire" "gpu" "shared" "u32" [%a, 0], %a : !ptx.reg<r1>, !ptx.reg<r1>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.atom .u64 needs 64-bit registers, got .b32 (%r1)
ptx.entry "k" [] {
  %a = ptx.const "u32"(0) : !ptx.reg<r1>
  %o = ptx.atom "add" "relaxed" "gpu" "shared" "u64" [%a, 0], %a : !ptx.reg<r1>, !ptx.reg<r1> -> !ptx.reg<r2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: atom.cas takes a compared value and a new value; the other operations one value
ptx.entry "k" [] {
  %a = ptx.const "u32"(0) : !ptx.reg<r1>
  %o = ptx.atom "cas" "relaxed" "gpu" "shared" "b32" [%a, 0], %a : !ptx.reg<r1>, !ptx.reg<r1> -> !ptx.reg<r2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: red with a vector type updates .global memory only (PTX ISA 9.7.13.6), not .shared
ptx.entry "k" [] {
  %a = ptx.const "u32"(0) : !ptx.reg<r1>
  %f = ptx.const "f32"(0) : !ptx.reg<f1>
  ptx.red_vector "add" "relaxed" "gpu" "shared" "f32" [%a, 0], (%f, %f) : !ptx.reg<r1>, (!ptx.reg<f1>, !ptx.reg<f1>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: a vector of .f32 values has 2 or 4 of them (.v2, .v4), not 3
ptx.entry "k" [] {
  %a = ptx.const "u64"(0) : !ptx.reg<rd1>
  %f = ptx.const "f32"(0) : !ptx.reg<f1>
  ptx.red_vector "add" "relaxed" "gpu" "global" "f32" [%a, 0], (%f, %f, %f) : !ptx.reg<rd1>, (!ptx.reg<f1>, !ptx.reg<f1>, !ptx.reg<f1>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: a vector is added to .f32 elements only (red.global.add.v2/.v4.f32), not .f64
ptx.entry "k" [] {
  %a = ptx.const "u64"(0) : !ptx.reg<rd1>
  %d = ptx.const "f64"(0) : !ptx.reg<fd1>
  ptx.red_vector "add" "relaxed" "gpu" "global" "f64" [%a, 0], (%d, %d) : !ptx.reg<rd1>, (!ptx.reg<fd1>, !ptx.reg<fd1>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.red_vector .f32 needs 32-bit registers, got .b64 (%rd1)
ptx.entry "k" [] {
  %a = ptx.const "u64"(0) : !ptx.reg<rd1>
  ptx.red_vector "add" "relaxed" "gpu" "global" "f32" [%a, 0], (%a, %a) : !ptx.reg<rd1>, (!ptx.reg<rd1>, !ptx.reg<rd1>)
  ptx.ret
}
