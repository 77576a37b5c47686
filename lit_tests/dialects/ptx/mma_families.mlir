// RUN: tylo-opt %s | tylo-opt | filecheck %s
// RUN: tylo-opt %s -t ptx | filecheck %s --check-prefix=PTX
// (ptxas.mlir assembles this file's PTX.) The FP64, 4-bit and single-bit forms of ptx.mma_sync
// (dialects/ptx/control.py, PTX ISA 9.7.14.5.14) round-trip and print one PTX line each: FP64
// reads and writes .f64 registers in every operand; .satfinite (a unit property) prints after
// .row.col, the .b1 bit operation (a string property, "and" or "xor") as .and.popc / .xor.popc
// after the types.

// CHECK:      ptx.entry "k" [] reqntid [32, 1, 1] {
// CHECK:        %d0, %d1 = ptx.mma_sync "m8n8k4" "f64.f64.f64.f64"(%fa), (%fb), (%fc, %fc) : (!ptx.reg<fd1>), (!ptx.reg<fd2>), (!ptx.reg<fd3>, !ptx.reg<fd3>) -> (!ptx.reg<fd4>, !ptx.reg<fd5>)
// CHECK-NEXT:   %e0, %e1, %e2, %e3 = ptx.mma_sync "m16n8k16" "f64.f64.f64.f64"(%fa, %fa, %fa, %fa, %fa, %fa, %fa, %fa), (%fb, %fb, %fb, %fb), (%fc, %fc, %fc, %fc) : (!ptx.reg<fd1>, !ptx.reg<fd1>, !ptx.reg<fd1>, !ptx.reg<fd1>, !ptx.reg<fd1>, !ptx.reg<fd1>, !ptx.reg<fd1>, !ptx.reg<fd1>), (!ptx.reg<fd2>, !ptx.reg<fd2>, !ptx.reg<fd2>, !ptx.reg<fd2>), (!ptx.reg<fd3>, !ptx.reg<fd3>, !ptx.reg<fd3>, !ptx.reg<fd3>) -> (!ptx.reg<fd6>, !ptx.reg<fd7>, !ptx.reg<fd8>, !ptx.reg<fd9>)
// CHECK-NEXT:   %s0, %s1, %s2, %s3 = ptx.mma_sync "m16n8k64" "s32.s4.u4.s32"(%w, %w, %w, %w), (%w, %w), (%i, %i, %i, %i) {satfinite} : (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<r2>, !ptx.reg<r2>, !ptx.reg<r2>, !ptx.reg<r2>) -> (!ptx.reg<r3>, !ptx.reg<r4>, !ptx.reg<r5>, !ptx.reg<r6>)
// CHECK-NEXT:   %t0, %t1 = ptx.mma_sync "m8n8k32" "s32.u4.u4.s32"(%w), (%w), (%i, %i) : (!ptx.reg<r1>), (!ptx.reg<r1>), (!ptx.reg<r2>, !ptx.reg<r2>) -> (!ptx.reg<r7>, !ptx.reg<r8>)
// CHECK-NEXT:   %x0, %x1 = ptx.mma_sync "m8n8k128" "s32.b1.b1.s32"(%w), (%w), (%i, %i) {bit_op = "xor"} : (!ptx.reg<r1>), (!ptx.reg<r1>), (!ptx.reg<r2>, !ptx.reg<r2>) -> (!ptx.reg<r9>, !ptx.reg<r10>)
// CHECK-NEXT:   %y0, %y1, %y2, %y3 = ptx.mma_sync "m16n8k256" "s32.b1.b1.s32"(%w, %w, %w, %w), (%w, %w), (%i, %i, %i, %i) {bit_op = "and"} : (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<r2>, !ptx.reg<r2>, !ptx.reg<r2>, !ptx.reg<r2>) -> (!ptx.reg<r11>, !ptx.reg<r12>, !ptx.reg<r13>, !ptx.reg<r14>)
// CHECK-NEXT:   ptx.ret

// PTX:      .reqntid 32, 1, 1
// PTX:      mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%fd4, %fd5}, {%fd1}, {%fd2}, {%fd3, %fd3};
// PTX-NEXT: mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%fd6, %fd7, %fd8, %fd9}, {%fd1, %fd1, %fd1, %fd1, %fd1, %fd1, %fd1, %fd1}, {%fd2, %fd2, %fd2, %fd2}, {%fd3, %fd3, %fd3, %fd3};
// PTX-NEXT: mma.sync.aligned.m16n8k64.row.col.satfinite.s32.s4.u4.s32 {%r3, %r4, %r5, %r6}, {%r1, %r1, %r1, %r1}, {%r1, %r1}, {%r2, %r2, %r2, %r2};
// PTX-NEXT: mma.sync.aligned.m8n8k32.row.col.s32.u4.u4.s32 {%r7, %r8}, {%r1}, {%r1}, {%r2, %r2};
// PTX-NEXT: mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.xor.popc {%r9, %r10}, {%r1}, {%r1}, {%r2, %r2};
// PTX-NEXT: mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc {%r11, %r12, %r13, %r14}, {%r1, %r1, %r1, %r1}, {%r1, %r1}, {%r2, %r2, %r2, %r2};
// PTX-NEXT: ret;
ptx.entry "k" [] reqntid [32, 1, 1] {
  %fa = ptx.get_register : !ptx.reg<fd1>
  %fb = ptx.get_register : !ptx.reg<fd2>
  %fc = ptx.get_register : !ptx.reg<fd3>
  %w = ptx.get_register : !ptx.reg<r1>
  %i = ptx.get_register : !ptx.reg<r2>
  %d0, %d1 = ptx.mma_sync "m8n8k4" "f64.f64.f64.f64"(%fa), (%fb), (%fc, %fc) : (!ptx.reg<fd1>), (!ptx.reg<fd2>), (!ptx.reg<fd3>, !ptx.reg<fd3>) -> (!ptx.reg<fd4>, !ptx.reg<fd5>)
  %e0, %e1, %e2, %e3 = ptx.mma_sync "m16n8k16" "f64.f64.f64.f64"(%fa, %fa, %fa, %fa, %fa, %fa, %fa, %fa), (%fb, %fb, %fb, %fb), (%fc, %fc, %fc, %fc) : (!ptx.reg<fd1>, !ptx.reg<fd1>, !ptx.reg<fd1>, !ptx.reg<fd1>, !ptx.reg<fd1>, !ptx.reg<fd1>, !ptx.reg<fd1>, !ptx.reg<fd1>), (!ptx.reg<fd2>, !ptx.reg<fd2>, !ptx.reg<fd2>, !ptx.reg<fd2>), (!ptx.reg<fd3>, !ptx.reg<fd3>, !ptx.reg<fd3>, !ptx.reg<fd3>) -> (!ptx.reg<fd6>, !ptx.reg<fd7>, !ptx.reg<fd8>, !ptx.reg<fd9>)
  %s0, %s1, %s2, %s3 = ptx.mma_sync "m16n8k64" "s32.s4.u4.s32"(%w, %w, %w, %w), (%w, %w), (%i, %i, %i, %i) {satfinite} : (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<r2>, !ptx.reg<r2>, !ptx.reg<r2>, !ptx.reg<r2>) -> (!ptx.reg<r3>, !ptx.reg<r4>, !ptx.reg<r5>, !ptx.reg<r6>)
  %t0, %t1 = ptx.mma_sync "m8n8k32" "s32.u4.u4.s32"(%w), (%w), (%i, %i) : (!ptx.reg<r1>), (!ptx.reg<r1>), (!ptx.reg<r2>, !ptx.reg<r2>) -> (!ptx.reg<r7>, !ptx.reg<r8>)
  %x0, %x1 = ptx.mma_sync "m8n8k128" "s32.b1.b1.s32"(%w), (%w), (%i, %i) {bit_op = "xor"} : (!ptx.reg<r1>), (!ptx.reg<r1>), (!ptx.reg<r2>, !ptx.reg<r2>) -> (!ptx.reg<r9>, !ptx.reg<r10>)
  %y0, %y1, %y2, %y3 = ptx.mma_sync "m16n8k256" "s32.b1.b1.s32"(%w, %w, %w, %w), (%w, %w), (%i, %i, %i, %i) {bit_op = "and"} : (!ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<r1>, !ptx.reg<r1>), (!ptx.reg<r2>, !ptx.reg<r2>, !ptx.reg<r2>, !ptx.reg<r2>) -> (!ptx.reg<r11>, !ptx.reg<r12>, !ptx.reg<r13>, !ptx.reg<r14>)
  ptx.ret
}
