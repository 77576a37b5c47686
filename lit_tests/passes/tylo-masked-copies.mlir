// RUN: tylo-opt %s | tylo-opt | filecheck %s --check-prefix=ROUND
// RUN: tylo-opt %s -p tylo-plan-copies | filecheck %s
// RUN: tylo-opt %s -p tylo-plan-copies,tylo-lower-fragments | filecheck %s --check-prefix=LOWER
// RUN: tylo-opt %s -p tylo-plan-copies,tylo-lower-fragments,tylo-lower-tiles,canonicalize,cse,tylo-lower-scf,tylo-lower-to-ptx -t ptx | filecheck %s --check-prefix=PTX

// Masked fragment accesses (tylo.load_fragment(..., bounds=(n, None), other=-1.0) and
// tylo.store(..., bounds=(n, None))): a bound across the vectors keeps them vectors, each one
// inside an scf.if of its row against the bound; the load's else branch yields `other`. In
// the PTX the access is behind a branch on the predicate: no address outside the bounds is read
// or written.
// ROUND-LABEL: func.func @rows
// ROUND:       tylo.load_fragment %a, %t row_bound %n {other = -1.000000e+00 : f64} :
// ROUND:       tylo.store_fragment %f, %b, %t row_bound %n :
// CHECK-LABEL: func.func @rows
// CHECK:       tylo.vector_load %a, %t row_bound %n width 16 axis 1 {other = -1.000000e+00 : f64}
// CHECK:       tylo.vector_store %f, %b, %t row_bound %n width 16 axis 1
// LOWER-LABEL: func.func @rows
// LOWER:       %[[IN:.*]] = arith.cmpi slt, %t, %n : i32
// LOWER-NEXT:  %[[OTHER:.*]] = arith.constant -1.000000e+00 : f32
// LOWER-NEXT:  %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = scf.if %[[IN]] -> (f32, f32, f32, f32) {
// LOWER-NEXT:    tylo.ld_vector %a[%t, %{{.*}}]
// LOWER:       } else {
// LOWER-NEXT:    scf.yield %[[OTHER]], %[[OTHER]], %[[OTHER]], %[[OTHER]] : f32, f32, f32, f32
// LOWER:       %[[IN2:.*]] = arith.cmpi slt, %t, %n : i32
// LOWER-NEXT:  scf.if %[[IN2]] {
// LOWER-NEXT:    tylo.st_vector
// PTX-LABEL:   .visible .entry rows(
// PTX:         setp.lt.s32 %p1, %r{{[0-9]+}}, %r{{[0-9]+}};
// PTX:         @%p1 bra
// PTX:         ld.global.v4.f32
// PTX:         @%p1 bra
// PTX:         st.global.v4.f32
func.func @rows(%x: !tylo.ptr<f32, global>, %o: !tylo.ptr<f32, global>, %n: i32) {
  %t = tylo.thread_idx "x" : i32
  %a = tylo.make_tile %x align 16 : !tylo.ptr<f32, global> -> !tylo.tile<f32, global, (32,4):(4,1)>
  %f = tylo.load_fragment %a, %t row_bound %n {other = -1.0 : f64} : !tylo.tile<f32, global, (32,4):(4,1)> -> !tylo.fragment<f32, #tylo.ownership<(32,4), (32,4):(1,32)>>
  %b = tylo.make_tile %o align 16 : !tylo.ptr<f32, global> -> !tylo.tile<f32, global, (32,4):(4,1)>
  tylo.store_fragment %f, %b, %t row_bound %n : !tylo.fragment<f32, #tylo.ownership<(32,4), (32,4):(1,32)>>, !tylo.tile<f32, global, (32,4):(4,1)>
  func.return
}

// A bound along the contiguous axis makes the load scalar (a vector could straddle it); the
// unmasked store of the same fragment is still a vector.
// CHECK-LABEL: func.func @cols
// CHECK:       tylo.load_fragment %a, %t col_bound %m {other = 7 : i64}
// CHECK:       tylo.vector_store %f, %a, %t width 8 axis 1
// LOWER-LABEL: func.func @cols
// LOWER:       arith.cmpi slt, %{{.*}}, %m : i32
// LOWER-NEXT:  %[[SEVEN:.*]] = arith.constant 7.000000e+00 : f32
// LOWER-NEXT:  scf.if %{{.*}} -> (f32) {
// LOWER-NEXT:    tylo.load_element %a[%t, %{{.*}}]
// LOWER:       } else {
// LOWER-NEXT:    scf.yield %[[SEVEN]] : f32
// PTX-LABEL:   .visible .entry cols(
// PTX:         ld.global.f32
// PTX:         ld.global.f32
// PTX:         st.global.v2.f32
func.func @cols(%x: !tylo.ptr<f32, global>, %m: i32) {
  %t = tylo.thread_idx "x" : i32
  %a = tylo.make_tile %x align 16 : !tylo.ptr<f32, global> -> !tylo.tile<f32, global, (32,2):(2,1)>
  %f = tylo.load_fragment %a, %t col_bound %m {other = 7 : i64} : !tylo.tile<f32, global, (32,2):(2,1)> -> !tylo.fragment<f32, #tylo.ownership<(32,2), (32,2):(1,32)>>
  tylo.store_fragment %f, %a, %t : !tylo.fragment<f32, #tylo.ownership<(32,2), (32,2):(1,32)>>, !tylo.tile<f32, global, (32,2):(2,1)>
  func.return
}
