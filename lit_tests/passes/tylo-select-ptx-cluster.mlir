// RUN: tylo-opt %s -p tylo-lower-to-ptx -t ptx | filecheck %s
// RUN: tylo-opt %s -p tylo-lower-to-ptx{arch=sm_80} --verify-diagnostics 2>&1 | filecheck %s --check-prefix=OLD

// Selection of the cluster ops (passes/select/cluster.py) and the cluster forms of the mbarrier
// and TMA ops: the kernel's tylo.cluster shape becomes .reqnctapercluster; a cluster register
// (a ptx.special the frontend builds directly) and barrier.cluster are numbered and copied as
// they are (passes/select/direct.py); tylo.mapa the mapa of the shared address, whose loads are ld.shared::cluster;
// a remote arrive mapa + mbarrier.arrive.release.cluster.shared::cluster; a cluster-scope wait
// the .acquire.cluster try_wait loop; a multicast tma_load the ctaMask moved into a .b16.
// CHECK:      .reqnctapercluster 2, 1, 1
// CHECK:      	mov.u32 %r3, %cluster_ctarank;
// CHECK:      	mapa.shared::cluster.u32 %r{{[0-9]+}}, %r{{[0-9]+}}, %r3;
// CHECK-NEXT: 	ld.shared::cluster.b32 %r{{[0-9]+}}, [%r{{[0-9]+}}];
// CHECK:      	barrier.cluster.arrive.release;
// CHECK-NEXT: 	barrier.cluster.wait.acquire;
// CHECK:      	mapa.shared::cluster.u32 [[REMOTE:%r[0-9]+]], [[BAR:%r[0-9]+]], %r3;
// CHECK-NEXT: 	mbarrier.arrive.release.cluster.shared::cluster.b64 _, [[[REMOTE]]];
// CHECK:      $L__wait0:
// CHECK-NEXT: 	mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 %p1, [[[BAR]]], %r2;
// CHECK:      	mov.b16 [[MASK:%rs[0-9]+]], 3;
// CHECK-NEXT: 	cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%r{{[0-9]+}}], [%rd{{[0-9]+}}, {%r1, %r1}], [[[BAR]]], [[MASK]];
// OLD: tylo-lower-to-ptx: mapa (distributed shared memory) needs sm_90 or later; the target is sm_80
func.func @k(%c: i32, %parity: i32, %map: !tylo.tensor_map<bf16, [64,64], axis 1, swizzle 128, rank 2>) attributes {tylo.kernel, tylo.cluster = array<i32: 2, 1, 1>} {
  %ctarank = ptx.special "%cluster_ctarank" : !ptx.reg<r>
  %rank = builtin.unrealized_conversion_cast %ctarank : !ptx.reg<r> to i32
  %s = tylo.shared_alloc 64, align 16 : !tylo.ptr<i32, shared>
  %peer = tylo.mapa %s, %rank : !tylo.ptr<i32, shared> -> !tylo.ptr<i32, cluster>
  %v = tylo.load %peer : !tylo.ptr<i32, cluster> -> i32
  ptx.barrier_cluster "arrive"
  ptx.barrier_cluster "wait"
  %bar = tylo.shared_alloc 1, align 8 : !tylo.ptr<i64, shared>
  tylo.mbarrier_arrive_cluster %bar, %rank : !tylo.ptr<i64, shared>
  tylo.mbarrier_wait %bar, %parity {scope = "cluster"} : !tylo.ptr<i64, shared>
  %tile = tylo.shared_alloc 4096, align 1024 : !tylo.ptr<bf16, shared>
  tylo.tma_load %tile, %map[%c, %c], %bar {multicast = 3 : i64} : !tylo.ptr<bf16, shared>, !tylo.tensor_map<bf16, [64,64], axis 1, swizzle 128, rank 2>, !tylo.ptr<i64, shared>
  func.return
}
