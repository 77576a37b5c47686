// RUN: tylo-opt %s --verify-diagnostics --split-input-file | filecheck %s
// Each chunk (split at the dashed lines) breaks one rule of the verifiers of tcgen05.ld / st
// (dialects/ptx/tcgen05.py): the shape is one Tylo builds, and the registers are the shape's
// registers a repetition (.16x256b four, .16x128b two) times a .num that is a power of two with
// at most 128 registers. The valid forms are in passes/tylo-select-ptx-tcgen05.mlir. The first
// chunk is an empty module.
builtin.module {}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tcgen05.ld.16x256b: 2 registers; 4 a repetition, .num one of (1, 2, 4, 8, 16, 32)
ptx.entry "k" [] reqntid [128, 1, 1] {
  %t = ptx.get_register : !ptx.reg<r1>
  %a, %b = ptx.tcgen05_ld %t {shape = "16x256b"} : !ptx.reg<r1> -> (!ptx.reg<f1>, !ptx.reg<f2>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tcgen05.st.16x128b: 6 registers; 2 a repetition, .num one of (1, 2, 4, 8, 16, 32, 64)
ptx.entry "k" [] reqntid [128, 1, 1] {
  %t = ptx.get_register : !ptx.reg<r1>
  %a = ptx.get_register : !ptx.reg<f1>
  ptx.tcgen05_st %t, (%a, %a, %a, %a, %a, %a) {shape = "16x128b"} : !ptx.reg<r1>, (!ptx.reg<f1>, !ptx.reg<f1>, !ptx.reg<f1>, !ptx.reg<f1>, !ptx.reg<f1>, !ptx.reg<f1>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tcgen05.ld: shape '16x32bx2': one of ['32x32b', '16x64b', '16x128b', '16x256b']
ptx.entry "k" [] reqntid [128, 1, 1] {
  %t = ptx.get_register : !ptx.reg<r1>
  %a = ptx.tcgen05_ld %t {shape = "16x32bx2"} : !ptx.reg<r1> -> (!ptx.reg<f1>)
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tcgen05.ld.32x32b: 3 registers; 1 a repetition, .num one of (1, 2, 4, 8, 16, 32, 64, 128)
ptx.entry "k" [] reqntid [128, 1, 1] {
  %t = ptx.get_register : !ptx.reg<r1>
  %a, %b, %c = ptx.tcgen05_ld %t : !ptx.reg<r1> -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>)
  ptx.ret
}
