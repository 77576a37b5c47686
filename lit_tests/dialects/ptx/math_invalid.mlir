// RUN: tylo-opt %s --verify-diagnostics --split-input-file | filecheck %s
// Each chunk (split at the dashed lines) breaks one rule of a verifier of the ptx math ops in
// dialects/ptx/math.py. For each chunk tylo-opt prints a dashed line and then the refusal's
// message, so the CHECK / CHECK-NEXT pair binds each message to its own chunk. The valid forms
// are in ops.mlir. The first chunk is an empty module, so that every case follows a dashed line.
builtin.module {}

// -----
// ex2 is .f32 only (PTX ISA 9.7.3.21; the 16-bit forms are not modelled).
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.ex2 takes .f32, not .f64
ptx.entry "k" [] {
  %d = ptx.get_register : !ptx.reg<fd1>
  %x = ptx.ex2 "f64" "approx" %d : !ptx.reg<fd1> -> !ptx.reg<fd2>
  ptx.ret
}

// -----
// ex2 and lg2 exist only as .approx.
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.lg2 modifier missing: it takes .approx
ptx.entry "k" [] {
  %f = ptx.get_register : !ptx.reg<f1>
  %x = ptx.lg2 "f32" %f : !ptx.reg<f1> -> !ptx.reg<f2>
  ptx.ret
}

// -----
// sqrt.approx is .f32 only.
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.sqrt.approx takes only .f32
ptx.entry "k" [] {
  %d = ptx.get_register : !ptx.reg<fd1>
  %x = ptx.sqrt "f64" "approx" %d : !ptx.reg<fd1> -> !ptx.reg<fd2>
  ptx.ret
}

// -----
// rsqrt.approx.f64 takes no .ftz.
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.rsqrt: .ftz applies to .f32 only
ptx.entry "k" [] {
  %d = ptx.get_register : !ptx.reg<fd1>
  %x = ptx.rsqrt "f64" "approx" %d {ftz} : !ptx.reg<fd1> -> !ptx.reg<fd2>
  ptx.ret
}

// -----
// abs takes signed integers only (PTX ISA 9.7.1.10).
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.abs takes .s16, .s32, .s64, .f16, .bf16, .f32, .f64, not .u32
ptx.entry "k" [] {
  %r = ptx.get_register : !ptx.reg<r1>
  %x = ptx.abs "u32" %r : !ptx.reg<r1> -> !ptx.reg<r2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.abs modifier .rn: it takes no modifier
ptx.entry "k" [] {
  %f = ptx.get_register : !ptx.reg<f1>
  %x = ptx.abs "f32" "rn" %f : !ptx.reg<f1> -> !ptx.reg<f2>
  ptx.ret
}

// -----
// abs.bf16 has no .ftz (only .f32 and .f16 do).
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.abs: .ftz applies to .f32, .f16 only
ptx.entry "k" [] {
  %h = ptx.get_register : !ptx.reg<rs1>
  %x = ptx.abs "bf16" %h {ftz} : !ptx.reg<rs1> -> !ptx.reg<rs2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.rsqrt result must be a .f32 register, got .b32 (%r1)
ptx.entry "k" [] {
  %f = ptx.get_register : !ptx.reg<f1>
  %x = ptx.rsqrt "f32" "approx" %f : !ptx.reg<f1> -> !ptx.reg<r1>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.ex2 source must be a .f32 register, got .b32 (%r1)
ptx.entry "k" [] {
  %r = ptx.get_register : !ptx.reg<r1>
  %x = ptx.ex2 "f32" "approx" %r : !ptx.reg<r1> -> !ptx.reg<f1>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ptx.sqrt modifier .lo: it takes .approx or .rn or .rz or .rm or .rp
ptx.entry "k" ["u64"] {
  %f = ptx.get_register : !ptx.reg<f1>
  %x = ptx.sqrt "f32" "lo" %f : !ptx.reg<f1> -> !ptx.reg<f2>
  ptx.ret
}
