// RUN: tylo-opt %s -t ptx | filecheck %s
// RUN: tylo-opt %s | tylo-opt | filecheck %s --check-prefix=IR
// REQUIRES: ptxas
// RUN: tylo-opt %s -t ptx > %t.ptx && %ptxas -arch=sm_90a %t.ptx -o %t.cubin
// The cluster ops of dialects/ptx/cluster.py, the cluster special registers, ld/st on
// .shared::cluster, the .acquire.cluster try_wait, the multicast TMA load and the entry's
// .reqnctapercluster (PTX ISA 9.7.9.20, 9.7.13.2, 9.7.13.15, 9.7.9.27.1.2, 11.7.1) print one
// line each, round-trip through print and parse, and ptxas assembles them for sm_90a.
// CHECK:      .reqntid 128, 1, 1
// CHECK-NEXT: .reqnctapercluster 2, 1, 1
// CHECK:      	mov.u32 %r2, %cluster_ctarank;
// CHECK-NEXT: 	mov.u32 %r3, %cluster_nctarank;
// CHECK-NEXT: 	mov.u32 %r4, %clusterid.x;
// CHECK-NEXT: 	mov.u32 %r5, %nclusterid.y;
// CHECK-NEXT: 	mov.u32 %r6, %cluster_ctaid.x;
// CHECK-NEXT: 	mapa.shared::cluster.u32 %r7, %r1, %r2;
// CHECK-NEXT: 	ld.shared::cluster.b32 %r8, [%r7];
// CHECK-NEXT: 	st.shared::cluster.b32 [%r7], %r8;
// CHECK-NEXT: 	barrier.cluster.arrive.release;
// CHECK-NEXT: 	barrier.cluster.wait.acquire;
// CHECK-NEXT: 	mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r7];
// CHECK-NEXT: 	mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 %p1, [%r1], %r3;
// CHECK:      	cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%r9], [%rd1, {%r4, %r5}], [%r1], %rs1;
// CHECK-NEXT: 	ret;
// IR: ptx.entry "k" [] reqntid [128, 1, 1] reqnctapercluster [2, 1, 1]
// IR: ptx.mapa %bar, %rank : !ptx.reg<r1>, !ptx.reg<r2> -> !ptx.reg<r7>
// IR: ptx.barrier_cluster "arrive"
// IR: ptx.mbarrier_try_wait %bar, %n {scope = "cluster"}
// IR: ptx.bulk_tensor_load %tile, %map[%cid, %ny], %bar multicast %mask
builtin.module attributes {ptx.version = "8.4", ptx.target = "sm_90a"} {
  ptx.entry "k" [] reqntid [128, 1, 1] reqnctapercluster [2, 1, 1] {
    ptx.shared_decl "bars"[1024] align 1024
    %bar = ptx.mov_symbol "bars" : !ptx.reg<r1>
    %rank = ptx.special "%cluster_ctarank" : !ptx.reg<r2>
    %n = ptx.special "%cluster_nctarank" : !ptx.reg<r3>
    %cid = ptx.special "%clusterid.x" : !ptx.reg<r4>
    %ny = ptx.special "%nclusterid.y" : !ptx.reg<r5>
    %cx = ptx.special "%cluster_ctaid.x" : !ptx.reg<r6>
    %remote = ptx.mapa %bar, %rank : !ptx.reg<r1>, !ptx.reg<r2> -> !ptx.reg<r7>
    %v = ptx.ld "shared::cluster" "b32"[%remote, 0] : !ptx.reg<r7> -> !ptx.reg<r8>
    ptx.st "shared::cluster" "b32"[%remote, 0], %v : !ptx.reg<r7>, !ptx.reg<r8>
    ptx.barrier_cluster "arrive"
    ptx.barrier_cluster "wait"
    ptx.mbarrier_arrive_cluster %remote : !ptx.reg<r7>
    %done = ptx.mbarrier_try_wait %bar, %n {scope = "cluster"} : !ptx.reg<r1>, !ptx.reg<r3> -> !ptx.reg<p1>
    %map = ptx.const "b64"(64) : !ptx.reg<rd1>
    %tile = ptx.const "b32"(0) : !ptx.reg<r9>
    %mask = ptx.const "b16"(3) : !ptx.reg<rs1>
    ptx.bulk_tensor_load %tile, %map[%cid, %ny], %bar multicast %mask : !ptx.reg<r9>, !ptx.reg<rd1>[!ptx.reg<r4>, !ptx.reg<r5>], !ptx.reg<r1>, !ptx.reg<rs1>
    ptx.ret
  }
}
