// RUN: tylo-opt %s -t ptx | filecheck %s
// RUN: tylo-opt %s | tylo-opt | filecheck %s --check-prefix=IR
// The TMA ops of dialects/ptx/bulk_tensor.py print one PTX line each (PTX ISA 9.7.9.25-27,
// 9.7.9.27.1.3 cp.reduce.async.bulk.tensor:
// coordinates inner first, the tensor map a .b64 generic address, tiles and barriers .b32
// shared addresses) and round-trip through print and parse.
// CHECK:      	cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r3, %r4}], [%r2];
// CHECK-NEXT: 	cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r3, %r4, %r5}], [%r2];
// CHECK-NEXT: 	cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd1, {%r3, %r4}], [%r1];
// CHECK-NEXT: 	cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%rd1, {%r3, %r4, %r5}], [%r1];
// CHECK-NEXT: 	cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%rd1, {%r3, %r4}], [%r1];
// CHECK-NEXT: 	cp.reduce.async.bulk.tensor.3d.global.shared::cta.xor.tile.bulk_group [%rd1, {%r3, %r4, %r5}], [%r1];
// CHECK-NEXT: 	cp.async.bulk.commit_group;
// CHECK-NEXT: 	cp.async.bulk.wait_group.read 1;
// CHECK-NEXT: 	cp.async.bulk.wait_group 0;
// CHECK-NEXT: 	ret;
// IR: ptx.bulk_tensor_load %tile, %map[%c0, %c1], %bar : !ptx.reg<r1>, !ptx.reg<rd1>[!ptx.reg<r3>, !ptx.reg<r4>], !ptx.reg<r2>
// IR: ptx.bulk_tensor_reduce "add" %map[%c0, %c1], %tile : !ptx.reg<rd1>[!ptx.reg<r3>, !ptx.reg<r4>], !ptx.reg<r1>
// IR: ptx.bulk_wait_group 1 {read}
builtin.module attributes {ptx.version = "8.4", ptx.target = "sm_90a"} {
  ptx.entry "k" [] {
    %tile = ptx.const "b32"(1024) : !ptx.reg<r1>
    %bar = ptx.const "b32"(8) : !ptx.reg<r2>
    %map = ptx.const "b64"(64) : !ptx.reg<rd1>
    %c0 = ptx.const "b32"(0) : !ptx.reg<r3>
    %c1 = ptx.const "b32"(3) : !ptx.reg<r4>
    %c2 = ptx.const "b32"(1) : !ptx.reg<r5>
    ptx.bulk_tensor_load %tile, %map[%c0, %c1], %bar : !ptx.reg<r1>, !ptx.reg<rd1>[!ptx.reg<r3>, !ptx.reg<r4>], !ptx.reg<r2>
    ptx.bulk_tensor_load %tile, %map[%c0, %c1, %c2], %bar : !ptx.reg<r1>, !ptx.reg<rd1>[!ptx.reg<r3>, !ptx.reg<r4>, !ptx.reg<r5>], !ptx.reg<r2>
    ptx.bulk_tensor_store %map[%c0, %c1], %tile : !ptx.reg<rd1>[!ptx.reg<r3>, !ptx.reg<r4>], !ptx.reg<r1>
    ptx.bulk_tensor_store %map[%c0, %c1, %c2], %tile : !ptx.reg<rd1>[!ptx.reg<r3>, !ptx.reg<r4>, !ptx.reg<r5>], !ptx.reg<r1>
    ptx.bulk_tensor_reduce "add" %map[%c0, %c1], %tile : !ptx.reg<rd1>[!ptx.reg<r3>, !ptx.reg<r4>], !ptx.reg<r1>
    ptx.bulk_tensor_reduce "xor" %map[%c0, %c1, %c2], %tile : !ptx.reg<rd1>[!ptx.reg<r3>, !ptx.reg<r4>, !ptx.reg<r5>], !ptx.reg<r1>
    ptx.bulk_commit_group
    ptx.bulk_wait_group 1 {read}
    ptx.bulk_wait_group 0
    ptx.ret
  }
}
