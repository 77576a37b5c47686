// RUN: tylo-opt %s --verify-diagnostics --split-input-file | filecheck %s
// Each chunk breaks one rule of a verifier of the ptx ops in dialects/ptx/sync.py (the valid
// forms are in targets/ptx_sync.mlir).
builtin.module {}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: bar.arrive needs a thread count (PTX ISA 9.7.13.1)
ptx.entry "k" [] reqntid [64, 1, 1] {
  %id = ptx.const "u32"(1) : !ptx.reg<r1>
  ptx.bar "arrive" %id : !ptx.reg<r1>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: barrier thread count 48 must be a positive multiple of 32 (the hardware counts whole warps), at most 1024 (PTX ISA 9.7.13.1 bar)
ptx.entry "k" [] reqntid [64, 1, 1] {
  %id = ptx.const "u32"(1) : !ptx.reg<r1>
  ptx.bar "sync" %id threads 48 : !ptx.reg<r1>
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: setmaxnreg count 260 must be a multiple of 8 in 24..256 (PTX ISA 9.7.19 setmaxnreg)
ptx.entry "k" [] reqntid [128, 1, 1] {
  ptx.setmaxnreg "inc" 260
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: elect.sync predicate must be a .pred register, got .b32 (%r2)
ptx.entry "k" [] reqntid [32, 1, 1] {
  %lane, %leader = ptx.elect_sync : !ptx.reg<r1>, !ptx.reg<r2>
  ptx.ret
}
