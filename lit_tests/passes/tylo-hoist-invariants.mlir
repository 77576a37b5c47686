// RUN: tylo-opt %s -p tylo-hoist-invariants | filecheck %s

// Invariant address arithmetic (what computes a tylo.ptr_add's operands) moves in front of the
// loop, in order, also out of scf.if (speculation: it is pure and speculatable); the add chain
// is split so that its invariant part moves, and the address becomes an invariant base pointer
// plus the variant offset. The division by a constant (speculatable) moves; the one by a
// runtime value, the invariant %q2 that only a check reads (not an address: hoisting it would
// only lengthen its live range) and the check stay.
// CHECK-LABEL: func.func @copies
// CHECK:       %[[SH:.*]] = arith.shrsi %t, %c3 : i32
// CHECK-NEXT:  %[[ROW:.*]] = arith.muli %[[SH]], %stride : i32
// CHECK-NEXT:  %[[C:.*]] = arith.andi %t, %c7 : i32
// CHECK-NEXT:  %[[Q:.*]] = arith.divui %t, %c3 : i32
// CHECK-NEXT:  %[[DST:.*]] = tylo.ptr_add %s, %[[Q]] : !tylo.ptr<bf16, shared>, i32
// CHECK-NEXT:  %[[INV:.*]] = arith.addi %[[ROW]], %[[C]] : i32
// CHECK-NEXT:  %[[BASE:.*]] = tylo.ptr_add %p, %[[INV]] : !tylo.ptr<bf16, global>, i32
// CHECK-NEXT:  scf.for %[[I:.*]] = %lb to %ub step %one : i32 {
// CHECK-NEXT:    %[[K:.*]] = arith.muli %[[I]], %c64 : i32
// CHECK-NEXT:    %[[IN:.*]] = arith.cmpi slt, %[[K]], %n : i32
// CHECK-NEXT:    scf.if %[[IN]] {
// CHECK-NEXT:      %[[A:.*]] = tylo.ptr_add %[[BASE]], %[[K]] : !tylo.ptr<bf16, global>, i32
// CHECK-NEXT:      tylo.copy_async %[[DST]], %[[A]]
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[D:.*]] = arith.divsi %t, %n : i32
// CHECK-NEXT:      %[[Q2:.*]] = arith.divui %t, %c3 : i32
// CHECK-NEXT:      %[[OK:.*]] = arith.cmpi sge, %[[D]], %[[Q2]] : i32
// CHECK-NEXT:      %[[OK_R:.*]] = builtin.unrealized_conversion_cast %[[OK]] : i1 to !ptx.reg<p>
// CHECK-NEXT:      ptx.trap if %[[OK_R]] : !ptx.reg<p> {negate, reason = "ok"}
// CHECK-NEXT:    }
func.func @copies(%p: !tylo.ptr<bf16, global>, %s: !tylo.ptr<bf16, shared>, %t: i32, %stride: i32,
                  %n: i32, %lb: i32, %ub: i32) {
  %one = arith.constant 1 : i32
  %c3 = arith.constant 3 : i32
  %c7 = arith.constant 7 : i32
  %c64 = arith.constant 64 : i32
  scf.for %i = %lb to %ub step %one : i32 {
    %k = arith.muli %i, %c64 : i32
    %in = arith.cmpi slt, %k, %n : i32
    scf.if %in {
      %sh = arith.shrsi %t, %c3 : i32
      %row = arith.muli %sh, %stride : i32
      %col = arith.andi %t, %c7 : i32
      %ck = arith.addi %col, %k : i32
      %off = arith.addi %row, %ck : i32
      %a = tylo.ptr_add %p, %off : !tylo.ptr<bf16, global>, i32
      %q = arith.divui %t, %c3 : i32
      %dst = tylo.ptr_add %s, %q : !tylo.ptr<bf16, shared>, i32
      tylo.copy_async %dst, %a : !tylo.ptr<bf16, shared>, !tylo.ptr<bf16, global>
    } else {
      %d = arith.divsi %t, %n : i32
      %q2 = arith.divui %t, %c3 : i32
      %ok = arith.cmpi sge, %d, %q2 : i32
      %ok_r = builtin.unrealized_conversion_cast %ok : i1 to !ptx.reg<p>
      ptx.trap if %ok_r : !ptx.reg<p> {negate, reason = "ok"}
    }
  }
  func.return
}

// A nest hoists level by level: %x (invariant in both loops) leaves both; the address of
// %y (the outer induction variable) + %j becomes a base the inner loop does not change; what
// reads the inner variable or memory stays.
// CHECK-LABEL: func.func @nest
// CHECK:       %[[X:.*]] = arith.muli %a, %a : i32
// CHECK-NEXT:  scf.for %[[I:.*]] = %lb to %ub step %one : i32 {
// CHECK-NEXT:    %[[Y:.*]] = arith.muli %[[I]], %[[X]] : i32
// CHECK-NEXT:    %[[B:.*]] = tylo.ptr_add %s, %[[Y]] : !tylo.ptr<f32, shared>, i32
// CHECK-NEXT:    scf.for %[[J:.*]] = %lb to %ub step %one : i32 {
// CHECK-NEXT:      %[[P:.*]] = tylo.ptr_add %[[B]], %[[J]] : !tylo.ptr<f32, shared>, i32
// CHECK-NEXT:      %[[V:.*]] = tylo.load %[[P]] : !tylo.ptr<f32, shared> -> f32
// CHECK-NEXT:      tylo.store %[[V]], %[[P]] : f32, !tylo.ptr<f32, shared>
func.func @nest(%s: !tylo.ptr<f32, shared>, %a: i32, %lb: i32, %ub: i32) {
  %one = arith.constant 1 : i32
  scf.for %i = %lb to %ub step %one : i32 {
    scf.for %j = %lb to %ub step %one : i32 {
      %x = arith.muli %a, %a : i32
      %y = arith.muli %i, %x : i32
      %z = arith.addi %y, %j : i32
      %p = tylo.ptr_add %s, %z : !tylo.ptr<f32, shared>, i32
      %v = tylo.load %p : !tylo.ptr<f32, shared> -> f32
      tylo.store %v, %p : f32, !tylo.ptr<f32, shared>
    }
  }
  func.return
}
