// RUN: tylo-opt %s -p tylo-lower-scf | filecheck %s

// scf.for (xDSL's lowering): a header block tests the induction variable.
// CHECK-LABEL: func.func @loop
// CHECK:       cf.br ^[[HEAD:.*]](%lb, %init : i32, f32)
// CHECK:       ^[[HEAD]](%[[IV:.*]]: i32, %[[ACC:.*]]: f32):
// CHECK-NEXT:  %[[C:.*]] = arith.cmpi slt, %[[IV]], %ub : i32
// CHECK-NEXT:  cf.cond_br %[[C]], ^[[BODY:.*]], ^[[EXIT:.*]]
// CHECK:       ^[[BODY]]:
// CHECK:       cf.br ^[[HEAD]]
// CHECK:       ^[[EXIT]]:
// CHECK-NEXT:  func.return %[[ACC]] : f32
func.func @loop(%lb: i32, %ub: i32, %step: i32, %init: f32) -> f32 {
  %r = scf.for %i = %lb to %ub step %step iter_args(%acc = %init) -> (f32) : i32 {
    %n = arith.addf %acc, %acc : f32
    scf.yield %n : f32
  }
  func.return %r : f32
}

// scf.while (Tylo's own pattern): the before block branches to the body or past the loop with
// the forwarded values; the body branches back.
// CHECK-LABEL: func.func @while
// CHECK:       cf.br ^[[BEFORE:.*]](%x : i32)
// CHECK:       ^[[BEFORE]](%[[A:.*]]: i32):
// CHECK-NEXT:  %[[C:.*]] = arith.cmpi slt, %[[A]], %n : i32
// CHECK-NEXT:  cf.cond_br %[[C]], ^[[AFTER:.*]](%[[A]] : i32), ^[[END:.*]](%[[A]] : i32)
// CHECK:       ^[[AFTER]](%[[B:.*]]: i32):
// CHECK-NEXT:  %[[NEXT:.*]] = arith.addi %[[B]], %[[B]] : i32
// CHECK-NEXT:  cf.br ^[[BEFORE]](%[[NEXT]] : i32)
// CHECK:       ^[[END]](%[[R:.*]]: i32):
// CHECK-NEXT:  func.return %[[R]] : i32
func.func @while(%x: i32, %n: i32) -> i32 {
  %r = scf.while (%a = %x) : (i32) -> i32 {
    %c = arith.cmpi slt, %a, %n : i32
    scf.condition(%c) %a : i32
  } do {
  ^bb0(%b: i32):
    %next = arith.addi %b, %b : i32
    scf.yield %next : i32
  }
  func.return %r : i32
}

// scf.if with a result: both branches feed the continuation block's argument.
// CHECK-LABEL: func.func @select
// CHECK:       cf.cond_br %c, ^[[T:.*]], ^[[F:.*]]
// CHECK:       ^[[T]]:
// CHECK-NEXT:  cf.br ^[[JOIN:.*]](%x : i32)
// CHECK:       ^[[F]]:
// CHECK-NEXT:  cf.br ^[[JOIN]](%y : i32)
// CHECK:       ^[[JOIN]](%[[J:.*]]: i32):
// CHECK:       func.return %[[J]] : i32
func.func @select(%c: i1, %x: i32, %y: i32) -> i32 {
  %r = scf.if %c -> (i32) {
    scf.yield %x : i32
  } else {
    scf.yield %y : i32
  }
  func.return %r : i32
}
