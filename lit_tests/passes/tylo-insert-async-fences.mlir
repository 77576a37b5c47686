// RUN: tylo-opt %s -p tylo-insert-async-fences | filecheck %s
// Where tylo-insert-async-fences puts wgmma.fence and fence.proxy.async. The wgmma ops are the
// scalar form tylo-lower-fragments makes of one mma_async (m64n8k16: four f32 accumulator
// registers per thread); descriptors come from tylo.wgmma_encode of a shared pointer.

// A first wgmma whose accumulator is constants (other code wrote it): a fence at the group.
// Shared stores feeding that wgmma: a proxy fence after the stores, before the barrier.
// CHECK-LABEL: func.func @first
// CHECK:       tylo.store
// CHECK-NEXT:  tylo.fence "proxy_async"
// CHECK-NEXT:  ptx.bar_sync 0
// CHECK:       tylo.wgmma_fence
// CHECK-NEXT:  tylo.wgmma_instr
// CHECK-NEXT:  tylo.wgmma_commit
func.func @first(%v: bf16, %i: i32) {
  %s = tylo.shared_alloc 512, align 1024 : !tylo.ptr<bf16, shared>
  %p = tylo.ptr_add %s, %i : !tylo.ptr<bf16, shared>, i32
  tylo.store %v, %p : bf16, !tylo.ptr<bf16, shared>
  ptx.bar_sync 0
  %z = arith.constant 0.000000e+00 : f32
  %d = tylo.wgmma_encode %s, 4611686293305360384 : !tylo.ptr<bf16, shared>
  %r:4 = tylo.wgmma_instr(%z, %z, %z, %z), %d, %d {n = 8 : i64, types = "f32.bf16.bf16", tnsp_a = 0 : i64, tnsp_b = 0 : i64, scale_d_imm = 0 : i64} : (f32, f32, f32, f32) -> (f32, f32, f32, f32)
  tylo.wgmma_commit
  %w:4 = tylo.wgmma_wait 0 (%r#0, %r#1, %r#2, %r#3) : (f32, f32, f32, f32) -> (f32, f32, f32, f32)
  func.return
}

// A K loop carrying the accumulator from wait to the next mma_async: one fence, before the
// loop (the value entering it was written by other code), none inside.
// CHECK-LABEL: func.func @loop
// CHECK:       tylo.wgmma_fence
// CHECK-NEXT:  scf.for
// CHECK-NOT:   tylo.wgmma_fence
// CHECK:       scf.yield
func.func @loop(%n: i32) {
  %s = tylo.shared_alloc 512, align 1024 : !tylo.ptr<bf16, shared>
  %z = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %d = tylo.wgmma_encode %s, 4611686293305360384 : !tylo.ptr<bf16, shared>
  %o:4 = scf.for %k = %c0 to %n step %c1 iter_args(%a0 = %z, %a1 = %z, %a2 = %z, %a3 = %z) -> (f32, f32, f32, f32) : i32 {
    %r:4 = tylo.wgmma_instr(%a0, %a1, %a2, %a3), %d, %d {n = 8 : i64, types = "f32.bf16.bf16", tnsp_a = 0 : i64, tnsp_b = 0 : i64, scale_d_imm = 1 : i64} : (f32, f32, f32, f32) -> (f32, f32, f32, f32)
    tylo.wgmma_commit
    %w:4 = tylo.wgmma_wait 0 (%r#0, %r#1, %r#2, %r#3) : (f32, f32, f32, f32) -> (f32, f32, f32, f32)
    scf.yield %w#0, %w#1, %w#2, %w#3 : f32, f32, f32, f32
  }
  func.return
}

// The loop body rescales the accumulator between the wait and the next mma_async (as
// attention does): other code touched the registers, so the fence is at the group, every
// iteration.
// CHECK-LABEL: func.func @rescaled
// CHECK-NOT:   tylo.wgmma_fence
// CHECK:       scf.for
// CHECK:       arith.mulf
// CHECK:       tylo.wgmma_fence
// CHECK-NEXT:  tylo.wgmma_instr
func.func @rescaled(%n: i32, %f: f32) {
  %s = tylo.shared_alloc 512, align 1024 : !tylo.ptr<bf16, shared>
  %z = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %d = tylo.wgmma_encode %s, 4611686293305360384 : !tylo.ptr<bf16, shared>
  %o:4 = scf.for %k = %c0 to %n step %c1 iter_args(%a0 = %z, %a1 = %z, %a2 = %z, %a3 = %z) -> (f32, f32, f32, f32) : i32 {
    %m0 = arith.mulf %a0, %f : f32
    %r:4 = tylo.wgmma_instr(%m0, %a1, %a2, %a3), %d, %d {n = 8 : i64, types = "f32.bf16.bf16", tnsp_a = 0 : i64, tnsp_b = 0 : i64, scale_d_imm = 1 : i64} : (f32, f32, f32, f32) -> (f32, f32, f32, f32)
    tylo.wgmma_commit
    %w:4 = tylo.wgmma_wait 0 (%r#0, %r#1, %r#2, %r#3) : (f32, f32, f32, f32) -> (f32, f32, f32, f32)
    scf.yield %w#0, %w#1, %w#2, %w#3 : f32, f32, f32, f32
  }
  func.return
}

// Stores inside a loop whose trip count is only known at run time (it may run zero times):
// one fence after the loop, not one per iteration; it runs on every path, and with no stores
// it is harmless. The stores after the loop share it (before the barrier).
// CHECK-LABEL: func.func @every_path
// CHECK:       scf.for
// CHECK-NOT:     tylo.fence
// CHECK:       }
// CHECK-NEXT:  tylo.store
// CHECK-NEXT:  tylo.fence "proxy_async"
// CHECK-NEXT:  ptx.bar_sync 0
// CHECK-NOT:   tylo.fence "proxy_async"
func.func @every_path(%v: bf16, %n: i32) {
  %s = tylo.shared_alloc 512, align 1024 : !tylo.ptr<bf16, shared>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  scf.for %k = %c0 to %n step %c1 : i32 {
    %p = tylo.ptr_add %s, %k : !tylo.ptr<bf16, shared>, i32
    tylo.store %v, %p : bf16, !tylo.ptr<bf16, shared>
    scf.yield
  }
  tylo.store %v, %s : bf16, !tylo.ptr<bf16, shared>
  ptx.bar_sync 0
  %z = arith.constant 0.000000e+00 : f32
  %d = tylo.wgmma_encode %s, 4611686293305360384 : !tylo.ptr<bf16, shared>
  %r:4 = tylo.wgmma_instr(%z, %z, %z, %z), %d, %d {n = 8 : i64, types = "f32.bf16.bf16", tnsp_a = 0 : i64, tnsp_b = 0 : i64, scale_d_imm = 0 : i64} : (f32, f32, f32, f32) -> (f32, f32, f32, f32)
  tylo.wgmma_commit
  %w:4 = tylo.wgmma_wait 0 (%r#0, %r#1, %r#2, %r#3) : (f32, f32, f32, f32) -> (f32, f32, f32, f32)
  func.return
}

// A loop body that reads through the async proxy and then stores (the next iteration's
// wgmma reads the stores around the back edge): the fence is at the end of the body.
// Stores in one branch of an scf.if: the fence follows the scf.if.
// CHECK-LABEL: func.func @back_edge
// CHECK:       scf.for
// CHECK:         tylo.wgmma_commit
// CHECK:         tylo.store
// CHECK-NEXT:    tylo.fence "proxy_async"
// CHECK-NEXT:    scf.yield
// CHECK:       scf.if
// CHECK:         tylo.store
// CHECK-NOT:     tylo.fence
// CHECK:       }
// CHECK-NEXT:  tylo.fence "proxy_async"
// CHECK-NEXT:  ptx.bar_sync 0
func.func @back_edge(%v: bf16, %n: i32, %c: i1) {
  %s = tylo.shared_alloc 512, align 1024 : !tylo.ptr<bf16, shared>
  %z = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %d = tylo.wgmma_encode %s, 4611686293305360384 : !tylo.ptr<bf16, shared>
  %o:4 = scf.for %k = %c0 to %n step %c1 iter_args(%a0 = %z, %a1 = %z, %a2 = %z, %a3 = %z) -> (f32, f32, f32, f32) : i32 {
    %r:4 = tylo.wgmma_instr(%a0, %a1, %a2, %a3), %d, %d {n = 8 : i64, types = "f32.bf16.bf16", tnsp_a = 0 : i64, tnsp_b = 0 : i64, scale_d_imm = 1 : i64} : (f32, f32, f32, f32) -> (f32, f32, f32, f32)
    tylo.wgmma_commit
    %w:4 = tylo.wgmma_wait 0 (%r#0, %r#1, %r#2, %r#3) : (f32, f32, f32, f32) -> (f32, f32, f32, f32)
    tylo.store %v, %s : bf16, !tylo.ptr<bf16, shared>
    scf.yield %w#0, %w#1, %w#2, %w#3 : f32, f32, f32, f32
  }
  scf.if %c {
    tylo.store %v, %s : bf16, !tylo.ptr<bf16, shared>
    scf.yield
  }
  ptx.bar_sync 0
  func.return
}

// Stores to an allocation no async-proxy operation reads need no fence.
// CHECK-LABEL: func.func @generic_only
// CHECK-NOT:   tylo.fence
// CHECK:       func.return
func.func @generic_only(%v: bf16) {
  %s = tylo.shared_alloc 512, align 1024 : !tylo.ptr<bf16, shared>
  %t = tylo.shared_alloc 512, align 1024 : !tylo.ptr<bf16, shared>
  tylo.store %v, %t : bf16, !tylo.ptr<bf16, shared>
  ptx.bar_sync 0
  %z = arith.constant 0.000000e+00 : f32
  %d = tylo.wgmma_encode %s, 4611686293305360384 : !tylo.ptr<bf16, shared>
  %r:4 = tylo.wgmma_instr(%z, %z, %z, %z), %d, %d {n = 8 : i64, types = "f32.bf16.bf16", tnsp_a = 0 : i64, tnsp_b = 0 : i64, scale_d_imm = 0 : i64} : (f32, f32, f32, f32) -> (f32, f32, f32, f32)
  tylo.wgmma_commit
  %w:4 = tylo.wgmma_wait 0 (%r#0, %r#1, %r#2, %r#3) : (f32, f32, f32, f32) -> (f32, f32, f32, f32)
  func.return
}

// cp.async writes are generic-proxy writes that land at the wait_copies: the fence follows the
// wait (not the copy), before the barrier that hands the stage to the warpgroup's wgmma.
// CHECK-LABEL: func.func @copied_stage
// CHECK:       tylo.copy_async
// CHECK-NEXT:  tylo.commit_copies
// CHECK-NEXT:  tylo.wait_copies 0
// CHECK-NEXT:  tylo.fence "proxy_async"
// CHECK-NEXT:  ptx.bar_sync 0
func.func @copied_stage(%g: !tylo.ptr<bf16, global>) {
  %s = tylo.shared_alloc 512, align 1024 : !tylo.ptr<bf16, shared>
  tylo.copy_async %s, %g : !tylo.ptr<bf16, shared>, !tylo.ptr<bf16, global>
  tylo.commit_copies
  tylo.wait_copies 0
  ptx.bar_sync 0
  %z = arith.constant 0.000000e+00 : f32
  %d = tylo.wgmma_encode %s, 4611686293305360384 : !tylo.ptr<bf16, shared>
  %r:4 = tylo.wgmma_instr(%z, %z, %z, %z), %d, %d {n = 8 : i64, types = "f32.bf16.bf16", tnsp_a = 0 : i64, tnsp_b = 0 : i64, scale_d_imm = 0 : i64} : (f32, f32, f32, f32) -> (f32, f32, f32, f32)
  tylo.wgmma_commit
  %w:4 = tylo.wgmma_wait 0 (%r#0, %r#1, %r#2, %r#3) : (f32, f32, f32, f32) -> (f32, f32, f32, f32)
  func.return
}

// A vector store into a stage the wgmma reads is a generic store like any other.
// CHECK-LABEL: func.func @vector_stored_stage
// CHECK:       tylo.st_vector
// CHECK-NEXT:  tylo.fence "proxy_async"
// CHECK-NEXT:  ptx.bar_sync 0
func.func @vector_stored_stage(%v: bf16) {
  %s = tylo.shared_alloc 512, align 1024 : !tylo.ptr<bf16, shared>
  tylo.st_vector(%v, %v, %v, %v, %v, %v, %v, %v), %s : (bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16), !tylo.ptr<bf16, shared>
  ptx.bar_sync 0
  %z = arith.constant 0.000000e+00 : f32
  %d = tylo.wgmma_encode %s, 4611686293305360384 : !tylo.ptr<bf16, shared>
  %r:4 = tylo.wgmma_instr(%z, %z, %z, %z), %d, %d {n = 8 : i64, types = "f32.bf16.bf16", tnsp_a = 0 : i64, tnsp_b = 0 : i64, scale_d_imm = 0 : i64} : (f32, f32, f32, f32) -> (f32, f32, f32, f32)
  tylo.wgmma_commit
  %w:4 = tylo.wgmma_wait 0 (%r#0, %r#1, %r#2, %r#3) : (f32, f32, f32, f32) -> (f32, f32, f32, f32)
  func.return
}

// A tcgen05.mma reads its shared operands through the async proxy too (B always, A unless it
// is in TMEM): stores into them are fenced before the barrier; a stage only a TMEM-A MMA's A
// would be (%u) needs none.
// CHECK-LABEL: func.func @tcgen05_operands
// CHECK:       tylo.store %v, %s
// CHECK-NEXT:  tylo.fence "proxy_async"
// CHECK-NEXT:  ptx.bar_sync 0
// CHECK-NOT:   tylo.fence "proxy_async"
// CHECK:       func.return
func.func @tcgen05_operands(%v: bf16, %t: i32) {
  %s = tylo.shared_alloc 512, align 1024 : !tylo.ptr<bf16, shared>
  %u = tylo.shared_alloc 512, align 1024 : !tylo.ptr<bf16, shared>
  tylo.store %v, %s : bf16, !tylo.ptr<bf16, shared>
  ptx.bar_sync 0
  tylo.store %v, %u : bf16, !tylo.ptr<bf16, shared>
  ptx.bar_sync 0
  %d = tylo.wgmma_encode %s, 4611756662049538048 : !tylo.ptr<bf16, shared>
  tylo.tcgen05_mma_instr %t, %t, %d {kind = "f16", idesc = 135267472 : i64, a_tmem, enable_imm = 0 : i64} : i32
  func.return
}

// A descriptor moved to a runtime origin (the encoding plus a runtime offset, %o) still names
// the stage it reads: the store into it is fenced.
// CHECK-LABEL: func.func @tcgen05_runtime_origin
// CHECK:       tylo.store %v, %s
// CHECK-NEXT:  tylo.fence "proxy_async"
// CHECK-NEXT:  ptx.bar_sync 0
func.func @tcgen05_runtime_origin(%v: bf16, %t: i32, %o: i64) {
  %s = tylo.shared_alloc 512, align 1024 : !tylo.ptr<bf16, shared>
  tylo.store %v, %s : bf16, !tylo.ptr<bf16, shared>
  ptx.bar_sync 0
  %d = tylo.wgmma_encode %s, 4611756662049538048 : !tylo.ptr<bf16, shared>
  %e = arith.addi %d, %o : i64
  tylo.tcgen05_mma_instr %t, %t, %e {kind = "f16", idesc = 135267472 : i64, a_tmem, enable_imm = 0 : i64} : i32
  func.return
}
