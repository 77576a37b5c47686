// RUN: tylo-opt %s -p "tylo-lower-to-ptx{arch=sm_100a}" -t ptx | filecheck %s
// RUN: tylo-opt %s -p "tylo-lower-to-ptx{arch=sm_100a}" | tylo-opt | filecheck %s --check-prefix=IR
// RUN: tylo-opt %s -p "tylo-lower-to-ptx{arch=sm_90a}" --verify-diagnostics 2>&1 | filecheck %s --check-prefix=HOPPER
// RUN: tylo-opt %s -p "tylo-lower-to-ptx{arch=sm_120a}" --verify-diagnostics 2>&1 | filecheck %s --check-prefix=CONSUMER

// Selection of the tcgen05 ops (passes/select/tcgen05.py, dialects/ptx/tcgen05.py): a TMEM
// address and an mbarrier are .b32 registers, a descriptor .b64; the instruction descriptor is a
// .b32 constant (0x08100490 = 135267472: D f32, A = B bf16, K-major, M 128, N 64); an immediate
// enable-input-d becomes a predicate (tcgen05.mma takes a .pred only); A from TMEM prints in
// brackets; the loaded registers are tied through tcgen05.wait::ld; a `shape` selects .16x256b
// (four registers a repetition), .16x128b (two) or .16x64b (one). On sm_90a and sm_120a the
// first tcgen05 instruction is refused, naming it and the target (never a ptxas message).
// tcgen05.relinquish_alloc_permit and tcgen05.dealloc are ptx ops the frontend builds directly
// (passes/select/direct.py copies them; the frontend refuses their targets).
// CHECK:      .version 8.7
// CHECK-NEXT: .target sm_100a
// CHECK:      	mov.u32 %r[[SLOT:[0-9]+]], __tylo_smem_0;
// CHECK:      	tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r[[SLOT]]], 64;
// CHECK-NEXT: 	tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
// CHECK-NEXT: 	tcgen05.fence::before_thread_sync;
// CHECK-NEXT: 	tcgen05.fence::after_thread_sync;
// CHECK-NEXT: 	mov.b32 %r[[IDESC:[0-9]+]], 135267472;
// CHECK-NEXT: 	tcgen05.mma.cta_group::1.kind::f16 [%r[[T:[0-9]+]]], %rd1, %rd2, %r[[IDESC]], %p1;
// CHECK-NEXT: 	mov.b32 %r[[IDESC2:[0-9]+]], 135267472;
// CHECK-NEXT: 	mov.u32 %r[[ONE:[0-9]+]], 1;
// CHECK-NEXT: 	mov.u32 %r[[ZERO:[0-9]+]], 0;
// CHECK-NEXT: 	setp.ne.u32 %p[[EN:[0-9]+]], %r[[ONE]], %r[[ZERO]];
// CHECK-NEXT: 	tcgen05.mma.cta_group::1.kind::f16 [%r[[T]]], [%r[[T]]], %rd2, %r[[IDESC2]], %p[[EN]];
// CHECK-NEXT: 	tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r{{[0-9]+}}];
// CHECK-NEXT: 	tcgen05.ld.sync.aligned.32x32b.x2.b32 {%f[[X:[0-9]+]], %f[[Y:[0-9]+]]}, [%r[[T]]];
// CHECK-NEXT: 	tcgen05.wait::ld.sync.aligned;
// CHECK-NEXT: 	tcgen05.st.sync.aligned.32x32b.x2.b32 [%r[[T]]], {%f[[X]], %f[[Y]]};
// CHECK-NEXT: 	tcgen05.wait::st.sync.aligned;
// CHECK-NEXT: 	tcgen05.ld.sync.aligned.16x256b.x1.b32 {%f[[L0:[0-9]+]], %f{{[0-9]+}}, %f{{[0-9]+}}, %f[[L3:[0-9]+]]}, [%r[[T]]];
// CHECK-NEXT: 	tcgen05.wait::ld.sync.aligned;
// CHECK-NEXT: 	tcgen05.st.sync.aligned.16x128b.x2.b32 [%r[[T]]], {%f[[L0]], %f{{[0-9]+}}, %f{{[0-9]+}}, %f[[L3]]};
// CHECK-NEXT: 	tcgen05.st.sync.aligned.16x64b.x4.b32 [%r[[T]]], {%f[[L0]], %f{{[0-9]+}}, %f{{[0-9]+}}, %f[[L3]]};
// CHECK-NEXT: 	tcgen05.ld.sync.aligned.16x64b.x1.b32 {%r{{[0-9]+}}}, [%r[[T]]];
// CHECK-NEXT: 	tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r[[T]], 64;
// IR: ptx.tcgen05_mma "f16" %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {a_tmem = 0 : i64}
// IR: ptx.tcgen05_mma "f16" %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {a_tmem = 1 : i64}
// IR: ptx.tcgen05_wait "ld"(%x, %y) : (!ptx.reg<f1>, !ptx.reg<f2>) -> (!ptx.reg<f1>, !ptx.reg<f2>)
// IR: ptx.tcgen05_ld %{{.*}} {shape = "16x256b"} : !ptx.reg<r{{[0-9]+}}> -> (
// IR: ptx.tcgen05_st %{{.*}}, (%{{.*}}) {shape = "16x128b"} : !ptx.reg<r{{[0-9]+}}>, (
// HOPPER: tcgen05.alloc needs a datacenter Blackwell target (sm_100a, sm_103a, sm_110a, or their 'f' family forms); the target is sm_90a
// CONSUMER: tcgen05.alloc needs a datacenter Blackwell target {{.*}}; the target is sm_120a
func.func @k(%t: i32, %a: i64, %b: i64, %acc: i1) attributes {tylo.kernel} {
  %slot = tylo.shared_alloc 1, align 4 : !tylo.ptr<i32, shared>
  %bar = tylo.shared_alloc 1, align 8 : !tylo.ptr<i64, shared>
  tylo.tmem_alloc %slot, 64 : !tylo.ptr<i32, shared>
  ptx.tcgen05_relinquish
  tylo.fence "tcgen05_before"
  tylo.fence "tcgen05_after"
  tylo.tcgen05_mma_instr %t, %a, %b, %acc {kind = "f16", idesc = 135267472 : i64} : i64
  tylo.tcgen05_mma_instr %t, %t, %b {kind = "f16", idesc = 135267472 : i64, a_tmem, enable_imm = 1 : i64} : i32
  tylo.tcgen05_commit %bar : !tylo.ptr<i64, shared>
  %x, %y = tylo.tmem_load %t : f32, f32
  %x2, %y2 = tylo.tmem_wait "ld" (%x, %y) : (f32, f32) -> (f32, f32)
  tylo.tmem_store %t, (%x2, %y2) : f32, f32
  tylo.tmem_wait "st" () : () -> ()
  %q0, %q1, %q2, %q3 = tylo.tmem_load %t {shape = "16x256b"} : f32, f32, f32, f32
  %r0, %r1, %r2, %r3 = tylo.tmem_wait "ld" (%q0, %q1, %q2, %q3) : (f32, f32, f32, f32) -> (f32, f32, f32, f32)
  tylo.tmem_store %t, (%r0, %r1, %r2, %r3) {shape = "16x128b"} : f32, f32, f32, f32
  tylo.tmem_store %t, (%r0, %r1, %r2, %r3) {shape = "16x64b"} : f32, f32, f32, f32
  %u = tylo.tmem_load %t {shape = "16x64b"} : i32
  %taddr = builtin.unrealized_conversion_cast %t : i32 to !ptx.reg<r>
  ptx.tcgen05_dealloc %taddr, 64 : !ptx.reg<r>
  func.return
}
