// RUN: tylo-opt %s -p tylo-lower-to-ptx -t ptx | filecheck %s
// RUN: tylo-opt %s -p tylo-lower-to-ptx{arch=sm_80} --verify-diagnostics 2>&1 | filecheck %s --check-prefix=OLD

// Selection of the TMA ops (passes/select/tma.py): the tile and the barrier are 32-bit shared
// addresses, the tensor map the .b64 generic address of its .param (mov.b64 + cvta.param.u64),
// the coordinates .b32 registers in the op's (driver) order.
// CHECK:      	cvta.param.u64 %rd[[MAP:[0-9]+]], %rd{{[0-9]+}};
// CHECK:      	cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r[[TILE:[0-9]+]]], [%rd[[MAP]], {%r1, %r2}], [%r{{[0-9]+}}];
// CHECK-NEXT: 	cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd[[MAP]], {%r1, %r2}], [%r[[TILE]]];
// CHECK-NEXT: 	cp.reduce.async.bulk.tensor.2d.global.shared::cta.min.tile.bulk_group [%rd[[MAP]], {%r1, %r2}], [%r[[TILE]]];
// CHECK-NEXT: 	cp.async.bulk.commit_group;
// CHECK-NEXT: 	cp.async.bulk.wait_group.read 0;
// CHECK-NEXT: 	cp.async.bulk.wait_group 1;
// CHECK-NEXT: 	ret;
// OLD: tylo.tma_load needs sm_90 or later; the target is sm_80
func.func @k(%map: !tylo.tensor_map<bf16, [16,64], axis 1, swizzle 128, rank 2>, %c0: i32, %c1: i32) attributes {tylo.kernel} {
  %tile = tylo.shared_alloc 1024, align 1024 : !tylo.ptr<bf16, shared>
  %bar = tylo.shared_alloc 1, align 8 : !tylo.ptr<i64, shared>
  tylo.tma_load %tile, %map[%c0, %c1], %bar : !tylo.ptr<bf16, shared>, !tylo.tensor_map<bf16, [16,64], axis 1, swizzle 128, rank 2>, !tylo.ptr<i64, shared>
  tylo.tma_store %map[%c0, %c1], %tile : !tylo.tensor_map<bf16, [16,64], axis 1, swizzle 128, rank 2>, !tylo.ptr<bf16, shared>
  tylo.tma_reduce "min" %map[%c0, %c1], %tile : !tylo.tensor_map<bf16, [16,64], axis 1, swizzle 128, rank 2>, !tylo.ptr<bf16, shared>
  tylo.tma_commit
  tylo.tma_wait 0 {read}
  tylo.tma_wait 1
  func.return
}
