// RUN: tylo-opt %s -p tylo-lower-to-ptx -t ptx | filecheck %s
// RUN: tylo-opt %s -p tylo-lower-to-ptx{arch=sm_80} --verify-diagnostics 2>&1 | filecheck %s --check-prefix=OLD

// Selection of the mbarrier ops (passes/select/mbarrier.py): a barrier is its 32-bit shared
// address (also where a cast hands it to ptx.mbarrier_init / arrive_expect_tx, which the
// frontend builds directly); tylo.mbarrier_wait becomes the try_wait loop as its own labelled block, which the
// code before falls into and which falls through when the phase has completed.
// CHECK:      	mov.u32 %r4, __tylo_smem_0;
// CHECK:      	mbarrier.init.shared::cta.b64 [%r4], %r1;
// CHECK-NEXT: 	fence.mbarrier_init.release.cluster;
// CHECK-NEXT: 	mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r4], %r2;
// CHECK-NEXT: 	mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r4], %r3;
// CHECK-NEXT: $L__wait0:
// CHECK-NEXT: 	mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r4], %r3;
// CHECK-NEXT: 	@!%p2 bra $L__wait0;
// CHECK-NEXT: 	fence.proxy.async.shared::cta;
// CHECK-NEXT: 	ret;
// OLD: fence.mbarrier_init needs sm_90 or later; the target is sm_80
func.func @k(%count: i32, %tx: i32, %parity: i32) attributes {tylo.kernel} {
  %bar = tylo.shared_alloc 2, align 8 : !tylo.ptr<i64, shared>
  %bar_r = builtin.unrealized_conversion_cast %bar : !tylo.ptr<i64, shared> to !ptx.reg<r>
  %count_r = builtin.unrealized_conversion_cast %count : i32 to !ptx.reg<r>
  %tx_r = builtin.unrealized_conversion_cast %tx : i32 to !ptx.reg<r>
  ptx.mbarrier_init %bar_r, %count_r : !ptx.reg<r>, !ptx.reg<r>
  tylo.fence "mbarrier_init"
  ptx.mbarrier_arrive_expect_tx %bar_r, %tx_r : !ptx.reg<r>, !ptx.reg<r>
  %done = tylo.mbarrier_try_wait %bar, %parity : !tylo.ptr<i64, shared>
  tylo.mbarrier_wait %bar, %parity : !tylo.ptr<i64, shared>
  tylo.fence "proxy_async"
  func.return
}
