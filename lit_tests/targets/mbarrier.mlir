// RUN: tylo-opt %s -t ptx | filecheck %s
// RUN: tylo-opt %s | tylo-opt | filecheck %s --check-prefix=IR
// The mbarrier and fence ops of dialects/ptx/mbarrier.py print one PTX line each (sm_90
// forms, PTX ISA 9.7.13.15, 9.7.13.4) and round-trip through print and parse.
// CHECK:      	mbarrier.init.shared::cta.b64 [%r1], %r2;
// CHECK-NEXT: 	fence.mbarrier_init.release.cluster;
// CHECK-NEXT: 	mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r1], %r3;
// CHECK-NEXT: 	mbarrier.expect_tx.shared::cta.b64 [%r1], %r3;
// CHECK-NEXT: 	mbarrier.arrive.shared::cta.b64 _, [%r1];
// CHECK-NEXT: $L__wait0:
// CHECK-NEXT: 	mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %r4;
// CHECK-NEXT: 	@!%p1 bra $L__wait0;
// CHECK-NEXT: 	fence.proxy.async.shared::cta;
// CHECK-NEXT: 	fence.proxy.async.global;
// CHECK-NEXT: 	ret;
// IR: ptx.mbarrier_init %bar, %count : !ptx.reg<r1>, !ptx.reg<r2>
// IR: ptx.mbarrier_try_wait %bar, %parity : !ptx.reg<r1>, !ptx.reg<r4> -> !ptx.reg<p1>
// IR: ptx.fence "proxy_async"
// IR: ptx.fence "proxy_async_global"
builtin.module attributes {ptx.version = "8.4", ptx.target = "sm_90a"} {
  ptx.entry "k" [] {
    ptx.shared_decl "bars"[16] align 8
    %bar = ptx.mov_symbol "bars" : !ptx.reg<r1>
    %count = ptx.const "b32"(1) : !ptx.reg<r2>
    %tx = ptx.const "b32"(16384) : !ptx.reg<r3>
    %parity = ptx.const "b32"(0) : !ptx.reg<r4>
    ptx.mbarrier_init %bar, %count : !ptx.reg<r1>, !ptx.reg<r2>
    ptx.fence "mbarrier_init"
    ptx.mbarrier_arrive_expect_tx %bar, %tx : !ptx.reg<r1>, !ptx.reg<r3>
    ptx.mbarrier_expect_tx %bar, %tx : !ptx.reg<r1>, !ptx.reg<r3>
    ptx.mbarrier_arrive %bar : !ptx.reg<r1>
    ptx.bra ^wait
  ^wait:
    ptx.label "$L__wait0"
    %done = ptx.mbarrier_try_wait %bar, %parity : !ptx.reg<r1>, !ptx.reg<r4> -> !ptx.reg<p1>
    ptx.cond_bra %done : !ptx.reg<p1>, ^wait, ^rest {negate}
  ^rest:
    ptx.fence "proxy_async"
    ptx.fence "proxy_async_global"
    ptx.ret
  }
}
