// RUN: tylo-opt %s -p tylo-lower-fragments --split-input-file | filecheck %s
// RUN: tylo-opt %s -p 'tylo-lower-fragments{arch=sm_80}' --split-input-file | filecheck %s

// A single m16n8k16 atom: 8 A slots, 4 B slots, one mma_sync, 4 stores; slot coordinates come
// from the thread's base coordinate (row g = t // 4 = t >> 2, col 2(t % 4)) plus static offsets.
// CHECK-LABEL: func.func @atom
// CHECK:      %[[T:.*]] = tylo.thread_idx "x"
// CHECK:      %[[TWO:.*]] = arith.constant 2 : i32
// CHECK-NEXT: %[[G:.*]] = arith.shrsi %[[T]], %[[TWO]] : i32
// CHECK-COUNT-8: tylo.load_element %{{.*}} : !tylo.tile<bf16, global, (16,16):(16,1)> -> bf16
// CHECK-COUNT-4: tylo.load_element %{{.*}} : !tylo.tile<bf16, global, (16,8):(8,1)> -> bf16
// CHECK:      %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[D0:.*]], %[[D1:.*]], %[[D2:.*]], %[[D3:.*]] = tylo.mma_sync <m16n8k16, bf16, bf16, f32, warps = (1,1), repeat = (1,1), k = 16>({{.*}}), ({{.*}}), (%[[Z]], %[[Z]], %[[Z]], %[[Z]])
// CHECK:      tylo.store_element %[[D0]], %{{.*}} : f32, !tylo.tile<f32, global, (16,8):(8,1)>
// CHECK-NEXT: tylo.store_element %[[D1]], %{{.*}} : f32, !tylo.tile<f32, global, (16,8):(8,1)>
// CHECK-NEXT: tylo.store_element %[[D2]], %{{.*}} : f32, !tylo.tile<f32, global, (16,8):(8,1)>
// CHECK-NEXT: tylo.store_element %[[D3]], %{{.*}} : f32, !tylo.tile<f32, global, (16,8):(8,1)>
// CHECK-NOT:  tylo.fragment
func.func @atom(%a: !tylo.ptr<bf16, global>, %b: !tylo.ptr<bf16, global>, %c: !tylo.ptr<f32, global>) {
  %t = tylo.thread_idx "x" : i32
  %ta = tylo.make_tile %a : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (16,16):(16,1)>
  %tb = tylo.make_tile %b : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (16,8):(8,1)>
  %tc = tylo.make_tile %c : !tylo.ptr<f32, global> -> !tylo.tile<f32, global, (16,8):(8,1)>
  %fa = tylo.load_fragment %ta, %t : !tylo.tile<bf16, global, (16,16):(16,1)> -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  %fb = tylo.load_fragment %tb, %t : !tylo.tile<bf16, global, (16,8):(8,1)> -> !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>
  %z = arith.constant 0.0 : f32
  %acc = tylo.splat %z : f32 -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %d = tylo.mma <m16n8k16, bf16, bf16, f32, warps = (1,1), repeat = (1,1), k = 16> %fa, %fb, %acc : !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>, !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>, !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  tylo.store_fragment %d, %tc, %t : !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>, !tylo.tile<f32, global, (16,8):(8,1)>
  func.return
}

// -----

// A loop-carried fragment becomes its slots: two slots, two iter_args; tylo.map clones its body
// per slot.
// CHECK-LABEL: func.func @carried
// CHECK:      %[[INIT:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:      %[[R0:.*]], %[[R1:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[X0:.*]] = %[[INIT]], %[[X1:.*]] = %[[INIT]]) -> (f32, f32) : i32 {
// CHECK-NEXT:   %[[Y0:.*]] = arith.mulf %[[X0]], %[[X0]] : f32
// CHECK-NEXT:   %[[Y1:.*]] = arith.mulf %[[X1]], %[[X1]] : f32
// CHECK-NEXT:   scf.yield %[[Y0]], %[[Y1]] : f32, f32
// CHECK:      tylo.store_element %[[R0]]
// CHECK:      tylo.store_element %[[R1]]
func.func @carried(%p: !tylo.ptr<f32, global>, %n: i32) {
  %t = tylo.thread_idx "x" : i32
  %tile = tylo.make_tile %p : !tylo.ptr<f32, global> -> !tylo.tile<f32, global, (32,2):(2,1)>
  %one = arith.constant 1.0 : f32
  %f = tylo.splat %one : f32 -> !tylo.fragment<f32, #tylo.ownership<(32,2), (32,2):(1,32)>>
  %lb = arith.constant 0 : i32
  %st = arith.constant 1 : i32
  %r = scf.for %i = %lb to %n step %st iter_args(%x = %f) -> (!tylo.fragment<f32, #tylo.ownership<(32,2), (32,2):(1,32)>>) : i32 {
    %y = tylo.map %x : (!tylo.fragment<f32, #tylo.ownership<(32,2), (32,2):(1,32)>>) -> !tylo.fragment<f32, #tylo.ownership<(32,2), (32,2):(1,32)>> {
    ^bb0(%e: f32):
      %sq = arith.mulf %e, %e : f32
      tylo.yield %sq : f32
    }
    scf.yield %y : !tylo.fragment<f32, #tylo.ownership<(32,2), (32,2):(1,32)>>
  }
  tylo.store_fragment %r, %tile, %t : !tylo.fragment<f32, #tylo.ownership<(32,2), (32,2):(1,32)>>, !tylo.tile<f32, global, (32,2):(2,1)>
  func.return
}

// -----

// tylo.slot reads one slot: after lowering it is that slot's value itself.
// CHECK-LABEL: func.func @slot
// CHECK:       %[[X:.*]] = tylo.load_element %{{.*}} : !tylo.tile<f32, global, (32,2):(2,1)> -> f32
// CHECK-NEXT:  %[[Y:.*]] = tylo.load_element %{{.*}} : !tylo.tile<f32, global, (32,2):(2,1)> -> f32
// CHECK-NEXT:  func.return %[[Y]] : f32
func.func @slot(%p: !tylo.ptr<f32, global>) -> f32 {
  %t = tylo.thread_idx "x" : i32
  %tile = tylo.make_tile %p : !tylo.ptr<f32, global> -> !tylo.tile<f32, global, (32,2):(2,1)>
  %f = tylo.load_fragment %tile, %t : !tylo.tile<f32, global, (32,2):(2,1)> -> !tylo.fragment<f32, #tylo.ownership<(32,2), (32,2):(1,32)>>
  %s = tylo.slot %f[1] : !tylo.fragment<f32, #tylo.ownership<(32,2), (32,2):(1,32)>> -> f32
  func.return %s : f32
}

// -----

// Scalar ops the pass does not lower (here tylo.print of a slot, in a loop) stay as they
// are, reading the slot's scalar.
// CHECK-LABEL: func.func @printed
// CHECK:       scf.for
// CHECK:         tylo.load_element
// CHECK-NEXT:    %[[Y:.*]] = tylo.load_element %{{.*}} : !tylo.tile<f32, global, (32,2):(2,1)> -> f32
// CHECK-NEXT:    %[[D:.*]] = arith.extf %[[Y]] : f32 to f64
// CHECK-NEXT:    tylo.print "slot 1 = %f\0A" %[[D]] : f64
// CHECK-NOT:   tylo.fragment
func.func @printed(%p: !tylo.ptr<f32, global>, %n: i32) {
  %t = tylo.thread_idx "x" : i32
  %lb = arith.constant 0 : i32
  %st = arith.constant 1 : i32
  %tile = tylo.make_tile %p : !tylo.ptr<f32, global> -> !tylo.tile<f32, global, (32,2):(2,1)>
  scf.for %k = %lb to %n step %st : i32 {
    %f = tylo.load_fragment %tile, %t : !tylo.tile<f32, global, (32,2):(2,1)> -> !tylo.fragment<f32, #tylo.ownership<(32,2), (32,2):(1,32)>>
    %s = tylo.slot %f[1] : !tylo.fragment<f32, #tylo.ownership<(32,2), (32,2):(1,32)>> -> f32
    %d = arith.extf %s : f32 to f64
    tylo.print "slot 1 = %f\0A" %d : f64
  }
  func.return
}

// -----

// Math ops in a tylo.map body are cloned per slot like arith ops (tylo.maximum(tylo.exp(f), 0.0)
// and tylo.fma(f, f, f) of a two-slot fragment).
// CHECK-LABEL: func.func @math
// CHECK:       %[[X0:.*]] = tylo.load_element %{{.*}} -> f32
// CHECK-NEXT:  %[[X1:.*]] = tylo.load_element %{{.*}} -> f32
// CHECK-NEXT:  %[[E0:.*]] = math.exp %[[X0]] : f32
// CHECK-NEXT:  %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:  %[[M0:.*]] = arith.maximumf %[[E0]], %[[Z]] : f32
// CHECK-NEXT:  %[[F0:.*]] = math.fma %[[M0]], %[[M0]], %[[X0]] : f32
// CHECK-NEXT:  %[[E1:.*]] = math.exp %[[X1]] : f32
// CHECK-NEXT:  %[[Z1:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:  %[[M1:.*]] = arith.maximumf %[[E1]], %[[Z1]] : f32
// CHECK-NEXT:  %[[F1:.*]] = math.fma %[[M1]], %[[M1]], %[[X1]] : f32
// CHECK:       tylo.store_element %[[F0]]
// CHECK:       tylo.store_element %[[F1]]
func.func @math(%p: !tylo.ptr<f32, global>) {
  %t = tylo.thread_idx "x" : i32
  %tile = tylo.make_tile %p : !tylo.ptr<f32, global> -> !tylo.tile<f32, global, (32,2):(2,1)>
  %f = tylo.load_fragment %tile, %t : !tylo.tile<f32, global, (32,2):(2,1)> -> !tylo.fragment<f32, #tylo.ownership<(32,2), (32,2):(1,32)>>
  %g = tylo.map %f : (!tylo.fragment<f32, #tylo.ownership<(32,2), (32,2):(1,32)>>) -> !tylo.fragment<f32, #tylo.ownership<(32,2), (32,2):(1,32)>> {
  ^bb0(%e: f32):
    %x = math.exp %e : f32
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %x, %z : f32
    %r = math.fma %m, %m, %e : f32
    tylo.yield %r : f32
  }
  tylo.store_fragment %g, %tile, %t : !tylo.fragment<f32, #tylo.ownership<(32,2), (32,2):(1,32)>>, !tylo.tile<f32, global, (32,2):(2,1)>
  func.return
}
