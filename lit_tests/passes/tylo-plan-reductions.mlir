// RUN: tylo-opt %s -p tylo-plan-reductions | tylo-opt | filecheck %s
// RUN: tylo-opt %s -p tylo-plan-reductions,tylo-lower-fragments,tylo-lower-tiles,canonicalize,cse,tylo-lower-scf,tylo-lower-to-ptx -t ptx | filecheck %s --check-prefix=PTX
// REQUIRES: ptxas
// RUN: tylo-opt %s -p tylo-plan-reductions,tylo-lower-fragments,tylo-lower-tiles,canonicalize,cse,tylo-lower-scf,tylo-lower-to-ptx -t ptx > %t.ptx && %ptxas -arch=sm_90a %t.ptx -o %t.cubin

// Row sums of the m16n8 accumulator: lane l holds rows l / 4 (slots 0, 1) and l / 4 + 8
// (slots 2, 3); a row lives in lanes 4g..4g+3, so each row is its two slots added, then
// butterflies over lane bits 0 and 1. The result, slot g = group g, is the replicated (16, 1)
// ownership that broadcast_slots maps back onto the accumulator as [0, 0, 1, 1].
// CHECK-LABEL: func.func @row_sum
// CHECK:       %[[S0:.*]] = tylo.slot %f[0]
// CHECK-NEXT:  %[[S1:.*]] = tylo.slot %f[1]
// CHECK-NEXT:  %[[S2:.*]] = tylo.slot %f[2]
// CHECK-NEXT:  %[[S3:.*]] = tylo.slot %f[3]
// CHECK-NEXT:  %[[T0:.*]] = arith.addf %[[S0]], %[[S1]] : f32
// CHECK-NEXT:  %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT:  %[[X0:.*]] = tylo.shuffle "bfly" %[[T0]], %[[ONE]] width 32 : f32 -> f32
// CHECK-NEXT:  %[[A0:.*]] = arith.addf %[[T0]], %[[X0]] : f32
// CHECK-NEXT:  %[[TWO:.*]] = arith.constant 2 : i32
// CHECK-NEXT:  %[[X1:.*]] = tylo.shuffle "bfly" %[[A0]], %[[TWO]] width 32 : f32 -> f32
// CHECK-NEXT:  %[[R0:.*]] = arith.addf %[[A0]], %[[X1]] : f32
// CHECK-NEXT:  %[[T1:.*]] = arith.addf %[[S2]], %[[S3]] : f32
// CHECK-NEXT:  arith.constant 1 : i32
// CHECK-NEXT:  %[[Y0:.*]] = tylo.shuffle "bfly" %[[T1]], %{{.*}} width 32 : f32 -> f32
// CHECK-NEXT:  %[[B0:.*]] = arith.addf %[[T1]], %[[Y0]] : f32
// CHECK-NEXT:  arith.constant 2 : i32
// CHECK-NEXT:  %[[Y1:.*]] = tylo.shuffle "bfly" %[[B0]], %{{.*}} width 32 : f32 -> f32
// CHECK-NEXT:  %[[R1:.*]] = arith.addf %[[B0]], %[[Y1]] : f32
// CHECK-NEXT:  %{{.*}} = tylo.from_slots %[[R0]], %[[R1]] : (f32, f32) -> !tylo.fragment<f32, #tylo.ownership<(16,1), ((4,8),2):((0,1),8)>>
// CHECK-NOT:   tylo.reduce
// PTX-LABEL:   .visible .entry row_sum(
// PTX:         add.rn.f32 %f[[T:[0-9]+]], %f{{[0-9]+}}, %f{{[0-9]+}};
// PTX-NEXT:    mov.b32 %r[[C:[0-9]+]], 31;
// PTX-NEXT:    shfl.sync.bfly.b32 %f[[X:[0-9]+]], %f[[T]], %r{{[0-9]+}}, %r[[C]], 0xffffffff;
// PTX-NEXT:    add.rn.f32 %f{{[0-9]+}}, %f[[T]], %f[[X]];
// PTX-COUNT-3: shfl.sync.bfly.b32
// PTX-NOT:     shfl.sync
// PTX:         ret;
func.func @row_sum(%o: !tylo.ptr<f32, global>, %x: !tylo.ptr<f32, global>) attributes {tylo.kernel, tylo.block = array<i32: 32, 1, 1>} {
  %t = tylo.thread_idx "x" : i32
  %g = tylo.make_tile %x : !tylo.ptr<f32, global> -> !tylo.tile<f32, global, (16,8):(8,1)>
  %f = tylo.load_fragment %g, %t : !tylo.tile<f32, global, (16,8):(8,1)> -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %r = tylo.reduce "sum" %f dims [1] : !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> !tylo.fragment<f32, #tylo.ownership<(16,1), ((4,8),2):((0,1),8)>>
  %h = tylo.make_tile %o : !tylo.ptr<f32, global> -> !tylo.tile<f32, global, (16,1):(1,1)>
  tylo.store_fragment %r, %h, %t : !tylo.fragment<f32, #tylo.ownership<(16,1), ((4,8),2):((0,1),8)>>, !tylo.tile<f32, global, (16,1):(1,1)>
  func.return
}

// Column maxima: a column's 16 values are slots 0 and 2 (or 1 and 3) of the lanes with one
// l % 4, so the tree is max(slot 0, slot 2), then butterflies over lane bits 2, 3 and 4;
// max.NaN.f32 propagates a NaN as numpy does.
// CHECK-LABEL: func.func @column_max
// CHECK:       arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:  %[[FOUR:.*]] = arith.constant 4 : i32
// CHECK-NEXT:  tylo.shuffle "bfly" %{{.*}}, %[[FOUR]] width 32 : f32 -> f32
// CHECK:       %[[EIGHT:.*]] = arith.constant 8 : i32
// CHECK-NEXT:  tylo.shuffle "bfly" %{{.*}}, %[[EIGHT]] width 32 : f32 -> f32
// CHECK:       %[[SIXTEEN:.*]] = arith.constant 16 : i32
// CHECK-NEXT:  tylo.shuffle "bfly" %{{.*}}, %[[SIXTEEN]] width 32 : f32 -> f32
// CHECK:       tylo.from_slots {{.*}} -> !tylo.fragment<f32, #tylo.ownership<(1,8), ((4,8),2):((2,0),1)>>
// PTX-LABEL:   .visible .entry column_max(
// PTX:         max.NaN.f32
// PTX-COUNT-6: shfl.sync.bfly.b32
// PTX-NOT:     shfl.sync
// PTX:         ret;
func.func @column_max(%o: !tylo.ptr<f32, global>, %x: !tylo.ptr<f32, global>) attributes {tylo.kernel, tylo.block = array<i32: 32, 1, 1>} {
  %t = tylo.thread_idx "x" : i32
  %g = tylo.make_tile %x : !tylo.ptr<f32, global> -> !tylo.tile<f32, global, (16,8):(8,1)>
  %f = tylo.load_fragment %g, %t : !tylo.tile<f32, global, (16,8):(8,1)> -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %r = tylo.reduce "max" %f dims [0] : !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> !tylo.fragment<f32, #tylo.ownership<(1,8), ((4,8),2):((2,0),1)>>
  %h = tylo.make_tile %o : !tylo.ptr<f32, global> -> !tylo.tile<f32, global, (1,8):(8,1)>
  tylo.store_fragment %r, %h, %t : !tylo.fragment<f32, #tylo.ownership<(1,8), ((4,8),2):((2,0),1)>>, !tylo.tile<f32, global, (1,8):(8,1)>
  func.return
}

// Both axes, unsigned: the minimum of the whole tile of u32 values; dims [1, 0] reduces the
// rows first, then the (16, 1) result's column; min.u32 compares unsigned. The second step
// needs only lane bits 2, 3, 4: bits 0 and 1 meet copies of the thread's own rows.
// CHECK-LABEL: func.func @all_min_unsigned
// CHECK:       tylo.from_slots {{.*}} -> !tylo.fragment<i32, #tylo.ownership<(16,1), ((4,8),2):((0,1),8)>>
// CHECK:       tylo.from_slots {{.*}} -> !tylo.fragment<i32, #tylo.ownership<(1,1), (32,1):(0,0)>>
// PTX-LABEL:   .visible .entry all_min_unsigned(
// PTX:         min.u32
// PTX-COUNT-7: shfl.sync.bfly.b32
// PTX-NOT:     shfl.sync
// PTX:         ret;
func.func @all_min_unsigned(%o: !tylo.ptr<i32, global>, %x: !tylo.ptr<i32, global>) attributes {tylo.kernel, tylo.block = array<i32: 32, 1, 1>} {
  %t = tylo.thread_idx "x" : i32
  %g = tylo.make_tile %x : !tylo.ptr<i32, global> -> !tylo.tile<i32, global, (16,8):(8,1)>
  %f = tylo.load_fragment %g, %t : !tylo.tile<i32, global, (16,8):(8,1)> -> !tylo.fragment<i32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %r = tylo.reduce "min" %f dims [1, 0] unsigned : !tylo.fragment<i32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> !tylo.fragment<i32, #tylo.ownership<(1,1), (32,1):(0,0)>>
  %s = tylo.slot %r[0] : !tylo.fragment<i32, #tylo.ownership<(1,1), (32,1):(0,0)>> -> i32
  tylo.store %s, %o : i32, !tylo.ptr<i32, global>
  func.return
}
