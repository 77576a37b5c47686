// RUN: tylo-opt %s --verify-diagnostics --split-input-file | filecheck %s
// Each chunk (split at the dashed lines) breaks one rule of the verifier of ptx.entry
// (dialects/ptx/entry.py): its parameters, reqntid, and its blocks (terminators, labels).
// For each chunk tylo-opt prints a dashed line and then the refusal's message, so the
// CHECK / CHECK-NEXT pair binds each message to its own chunk. The valid forms are in ops.mlir.
// The first chunk is an empty module, so that every case follows a dashed line.
builtin.module {}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: '.s3' is not a kernel parameter type
ptx.entry "k" ["u64", "s3"] reqntid [32, 1, 1] {
  ptx.bar_sync 0
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: '.pred' is not a kernel parameter type
ptx.entry "k" ["pred"] reqntid [32, 1, 1] {
  ptx.bar_sync 0
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: a kernel parameter of .bf16 values is declared '.b16'
ptx.entry "k" ["bf16"] reqntid [32, 1, 1] {
  ptx.bar_sync 0
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: reqntid [32, 1] must be three positive extents of at most 1024 threads
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1] {
  ptx.bar_sync 0
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: reqntid [32, 0, 1] must be three positive extents
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 0, 1] {
  ptx.bar_sync 0
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: reqntid [-32, -1, 1] must be three positive extents
ptx.entry "k" ["u64", "s32", "f32"] reqntid [-32, -1, 1] {
  ptx.bar_sync 0
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: reqntid [32, 32, 2] must be three positive extents of at most 1024 threads
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 32, 2] {
  ptx.bar_sync 0
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: Operation ptx.bar_sync terminates block in single-block region but is not a terminator
ptx.entry "k" [] {
  ptx.bar_sync 0
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: Operation ptx.bar_sync terminates block in multi-block region but is not a terminator
ptx.entry "k" [] {
  ptx.bra ^l
^l:
  ptx.label "L"
  ptx.bar_sync 0
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: block 1 of ptx.entry 'k' does not end in a terminator (ptx.bra, ptx.cond_bra, ptx.ret)
ptx.entry "k" [] {
  ptx.bra ^l
^empty:
^l:
  ptx.label "L"
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: block 1 of ptx.entry 'k' is a branch target but has no ptx.label
ptx.entry "k" [] {
  ptx.bra ^l
^l:
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: block 2 of ptx.entry 'k' has no ptx.label and is not the fallthrough of the ptx.cond_bra before it
ptx.entry "k" [] {
  ptx.bra ^l
^l:
  ptx.label "L"
  ptx.ret
^unreached:
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: block 1 of ptx.entry 'k' is a branch target but has no ptx.label
ptx.entry "k" [] {
  %p = ptx.get_register : !ptx.reg<p1>
  ptx.cond_bra %p : !ptx.reg<p1>, ^l, ^fall
^fall:
  ptx.ret
^l:
  ptx.label "L"
  ptx.bra ^fall
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: label 'L' is defined twice in ptx.entry 'k'
ptx.entry "k" [] {
  ptx.bra ^a
^a:
  ptx.label "L"
  ptx.bra ^b
^b:
  ptx.label "L"
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: the first block of ptx.entry 'k' is the kernel's start: it has no label and no branch targets it
ptx.entry "k" [] {
  ptx.label "L"
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: block 1 of ptx.entry 'k' has arguments; ptx blocks have none (registers are types)
ptx.entry "k" [] {
  %r = ptx.get_register : !ptx.reg<r1>
  ptx.bra ^l
^l(%x: !ptx.reg<r1>):
  ptx.label "L"
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: maxnreg 0 must be positive
ptx.entry "k" [] reqntid [32, 1, 1] maxnreg 0 {
  ptx.bar_sync 0
  ptx.ret
}
