// RUN: tylo-opt %s --verify-diagnostics --split-input-file | filecheck %s
// Each chunk breaks one rule of the verifier of ptx.shfl_sync (dialects/ptx/warp.py; the valid
// forms are in targets/ptx_warp.mlir).
builtin.module {}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: shfl.sync.b32 moves a 32-bit register (.b32 or .f32), got .b64 (%rd1)
ptx.entry "k" [] reqntid [32, 1, 1] {
  %a = ptx.const "u64"(1) : !ptx.reg<rd1>
  %b = ptx.const "u32"(1) : !ptx.reg<r1>
  %c = ptx.const "u32"(31) : !ptx.reg<r2>
  %d = ptx.shfl_sync "bfly" %a, %b, %c mask 4294967295 : (!ptx.reg<rd1>, !ptx.reg<r1>, !ptx.reg<r2>) -> !ptx.reg<rd2>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: shfl.sync mode 'xor' is not one of ('up', 'down', 'bfly', 'idx')
ptx.entry "k" [] reqntid [32, 1, 1] {
  %a = ptx.const "u32"(1) : !ptx.reg<r3>
  %b = ptx.const "u32"(1) : !ptx.reg<r1>
  %c = ptx.const "u32"(31) : !ptx.reg<r2>
  %d = ptx.shfl_sync "xor" %a, %b, %c mask 4294967295 : (!ptx.reg<r3>, !ptx.reg<r1>, !ptx.reg<r2>) -> !ptx.reg<r4>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: shfl.sync predicate must be a .pred register, got .b32 (%r5)
ptx.entry "k" [] reqntid [32, 1, 1] {
  %a = ptx.const "u32"(1) : !ptx.reg<r3>
  %b = ptx.const "u32"(1) : !ptx.reg<r1>
  %c = ptx.const "u32"(31) : !ptx.reg<r2>
  %d, %p = ptx.shfl_sync "idx" %a, %b, %c mask 4294967295 : (!ptx.reg<r3>, !ptx.reg<r1>, !ptx.reg<r2>) -> !ptx.reg<r4>, !ptx.reg<r5>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: shfl.sync membermask 0x0 must be a nonzero 32-bit lane mask
ptx.entry "k" [] reqntid [32, 1, 1] {
  %a = ptx.const "u32"(1) : !ptx.reg<r3>
  %b = ptx.const "u32"(1) : !ptx.reg<r1>
  %c = ptx.const "u32"(31) : !ptx.reg<r2>
  %d = ptx.shfl_sync "idx" %a, %b, %c mask 0 : (!ptx.reg<r3>, !ptx.reg<r1>, !ptx.reg<r2>) -> !ptx.reg<r4>
  ptx.ret
}
