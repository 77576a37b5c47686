// RUN: tylo-opt %s -p tylo-insert-async-fences --verify-diagnostics --split-input-file | filecheck %s
// What tylo-insert-async-fences refuses: no fence can order these. Each chunk prints a dashed
// line and then the pass's message. The first chunk is an empty module.
builtin.module {}

// -----
// A pending accumulator read before its wait.
// CHECK:      {{^// -+$}}
// CHECK-NEXT: arith.mulf reads a pending WGMMA accumulator
func.func @k(%f: f32) {
  %s = tylo.shared_alloc 512, align 1024 : !tylo.ptr<bf16, shared>
  %z = arith.constant 0.000000e+00 : f32
  %d = tylo.wgmma_encode %s, 4611686293305360384 : !tylo.ptr<bf16, shared>
  %r:4 = tylo.wgmma_instr(%z, %z, %z, %z), %d, %d {n = 8 : i64, types = "f32.bf16.bf16", tnsp_a = 0 : i64, tnsp_b = 0 : i64, scale_d_imm = 0 : i64} : (f32, f32, f32, f32) -> (f32, f32, f32, f32)
  tylo.wgmma_commit
  %x = arith.mulf %r#0, %f : f32
  func.return
}

// -----
// A shared stage overwritten while a WGMMA that reads it may be pending; the message names
// the user's line of the operand (the encode op's location, from tylo.wgmma_operand).
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tylo.store writes shared bytes 64.. of an allocation whose bytes 0..8191 a committed WGMMA group reads (the WGMMA operand of kernel.py:12), and no wait_mma has completed
func.func @k(%v: bf16) {
  %s = tylo.shared_alloc 512, align 1024 : !tylo.ptr<bf16, shared>
  %z = arith.constant 0.000000e+00 : f32
  %d = tylo.wgmma_encode %s, 4611686293305360384 : !tylo.ptr<bf16, shared> loc("kernel.py":12:8)
  %r:4 = tylo.wgmma_instr(%z, %z, %z, %z), %d, %d {n = 8 : i64, types = "f32.bf16.bf16", tnsp_a = 0 : i64, tnsp_b = 0 : i64, scale_d_imm = 0 : i64} : (f32, f32, f32, f32) -> (f32, f32, f32, f32)
  tylo.wgmma_commit
  %c32 = arith.constant 32 : i32
  %p = tylo.ptr_add %s, %c32 : !tylo.ptr<bf16, shared>, i32
  tylo.store %v, %p : bf16, !tylo.ptr<bf16, shared>
  %w:4 = tylo.wgmma_wait 0 (%r#0, %r#1, %r#2, %r#3) : (f32, f32, f32, f32) -> (f32, f32, f32, f32)
  func.return
}
