// RUN: tylo-opt %s --verify-diagnostics --split-input-file | filecheck %s
// Each chunk (split at the dashed lines) breaks one rule of a verifier of the ptx ops in
// dialects/ptx/memory.py.
// For each chunk tylo-opt prints a dashed line and then the refusal's message, so the
// CHECK / CHECK-NEXT pair binds each message to its own chunk. The valid forms are in ops.mlir.
// The first chunk is an empty module, so that every case follows a dashed line.
builtin.module {}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: parameter 3 does not exist (3 parameters)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %x = ptx.ld_param "s32"[3] : !ptx.reg<r3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: parameter -1 does not exist (3 parameters)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %x = ptx.ld_param "s32"[-1] : !ptx.reg<r3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: parameter 1 is .s32, read as .u32
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %x = ptx.ld_param "u32"[1] : !ptx.reg<r3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ld.param result must be a .b64 register, got .b32 (%r3)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %x = ptx.ld_param "u64"[0] : !ptx.reg<r3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ld.param must be directly inside a ptx.entry, not func.func
func.func @k() {
  %x = ptx.ld_param "u64"[0] : !ptx.reg<rd3>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: cvta.to is only used for .global here
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %rd = ptx.get_register : !ptx.reg<rd1>
  %x = ptx.cvta "shared" %rd : !ptx.reg<rd1> -> !ptx.reg<rd2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: cvta source must be a .b64 register, got .b32 (%r1)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %x = ptx.cvta "global" %r : !ptx.reg<r1> -> !ptx.reg<rd2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: global address must be a .b64 register, got .b32 (%r1)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %x = ptx.ld "global" "f32"[%r, 4] : !ptx.reg<r1> -> !ptx.reg<f2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: shared address must be a .b32 register, got .b64
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %rd = ptx.get_register : !ptx.reg<rd1>
  %x = ptx.ld "shared" "f32"[%rd, 4] : !ptx.reg<rd1> -> !ptx.reg<f2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ld result must be a .f32 register, got .b32 (%r3)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %rd = ptx.get_register : !ptx.reg<rd1>
  %x = ptx.ld "global" "f32"[%rd, 4] : !ptx.reg<rd1> -> !ptx.reg<r3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: shared address must be a .b32 register, got .b64 (%rd1)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r2 = ptx.get_register : !ptx.reg<r2>
  %rd = ptx.get_register : !ptx.reg<rd1>
  ptx.st "shared" "b32"[%rd, 0], %r2 : !ptx.reg<rd1>, !ptx.reg<r2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: global address must be a .b64 register, got .b32
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %r2 = ptx.get_register : !ptx.reg<r2>
  ptx.st "global" "b32"[%r, 0], %r2 : !ptx.reg<r1>, !ptx.reg<r2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: st value must be a .b32 register, got .f32 (%f1)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  %f = ptx.get_register : !ptx.reg<f1>
  ptx.st "shared" "b32"[%r, 0], %f : !ptx.reg<r1>, !ptx.reg<f1>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: alignment 24 must be a power of two
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  ptx.shared_decl "buf"[64] align 24
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: shared_decl needs a positive byte count
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  ptx.shared_decl "buf"[0] align 16
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: shared address must be a .b32 register, got .b64 (%rd3)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  ptx.shared_decl "buf"[64] align 16
  %x = ptx.mov_symbol "buf" : !ptx.reg<rd3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: 'buf' is declared by no ptx.shared_decl, ptx.local_decl or ptx.global_string
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %x = ptx.mov_symbol "buf" : !ptx.reg<r3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: local address must be a .b64 register, got .b32 (%r3)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  ptx.local_decl "__local_depot0"[16] align 8
  %x = ptx.mov_symbol "__local_depot0" : !ptx.reg<r3>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: local_decl needs a positive byte count
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  ptx.local_decl "__local_depot0"[0] align 8
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: '0depot' is not a PTX identifier
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  ptx.local_decl "0depot"[16] align 8
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: cvta to generic from 'shared': only .global and .local addresses (64-bit) are converted here
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %rd = ptx.get_register : !ptx.reg<rd1>
  %x = ptx.cvta_generic "shared" %rd : !ptx.reg<rd1> -> !ptx.reg<rd2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: cvta result must be a .b64 register, got .b32 (%r2)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %rd = ptx.get_register : !ptx.reg<rd1>
  %x = ptx.cvta_generic "local" %rd : !ptx.reg<rd1> -> !ptx.reg<r2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: local address must be a .b64 register, got .b32 (%r1)
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  %r = ptx.get_register : !ptx.reg<r1>
  ptx.st "local" "b32"[%r, 0], %r : !ptx.reg<r1>, !ptx.reg<r1>
  ptx.ret
}
