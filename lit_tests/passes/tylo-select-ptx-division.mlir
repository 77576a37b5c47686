// RUN: tylo-opt %s -p tylo-lower-to-ptx -t ptx | filecheck %s

// Unsigned i32 division by a constant is a multiply-high and a shift (compiler/hardware/int_division.py;
// ptxas expands div/rem by an immediate into its slow generic sequence): d = 3 takes the 32-bit
// magic 0xAAAAAAAB = 2863311531 and a shift of 1, the remainder n - q * 3.
// CHECK-LABEL: .visible .entry thirds(
// CHECK:       mov.b32 %[[M:r[0-9]+]], 2863311531;
// CHECK-NEXT:  mul.hi.u32 %[[T:r[0-9]+]], %[[N:r[0-9]+]], %[[M]];
// CHECK-NEXT:  mov.b32 %[[S:r[0-9]+]], 1;
// CHECK-NEXT:  shr.u32 %[[Q:r[0-9]+]], %[[T]], %[[S]];
// CHECK-NEXT:  mov.b32 %[[D:r[0-9]+]], 3;
// CHECK-NEXT:  mul.lo.u32 %[[QD:r[0-9]+]], %[[Q]], %[[D]];
// CHECK-NEXT:  sub.u32 %{{r[0-9]+}}, %[[N]], %[[QD]];
// CHECK-NOT:   rem.
// CHECK-NOT:   div.
// d = 7 needs a 33-bit multiplier: t = mulhi(n, 613566757), q = (t + (n - t) / 2) >> 2.
// CHECK-LABEL: .visible .entry sevenths(
// CHECK:       mov.b32 %[[M:r[0-9]+]], 613566757;
// CHECK-NEXT:  mul.hi.u32 %[[T:r[0-9]+]], %[[N:r[0-9]+]], %[[M]];
// CHECK-NEXT:  sub.u32 %[[H:r[0-9]+]], %[[N]], %[[T]];
// CHECK-NEXT:  mov.b32 %[[ONE:r[0-9]+]], 1;
// CHECK-NEXT:  shr.u32 %[[HALF:r[0-9]+]], %[[H]], %[[ONE]];
// CHECK-NEXT:  add.u32 %[[SUM:r[0-9]+]], %[[T]], %[[HALF]];
// CHECK-NEXT:  mov.b32 %[[TWO:r[0-9]+]], 2;
// CHECK-NEXT:  shr.u32 %{{r[0-9]+}}, %[[SUM]], %[[TWO]];
// A power of two is a shift or a mask; a runtime divisor and a signed one keep div / rem.
// CHECK-LABEL: .visible .entry others(
// CHECK:       shr.u32
// CHECK:       and.b32 %{{r[0-9]+}}, %{{r[0-9]+}}, %{{r[0-9]+}};
// CHECK:       div.u32
// CHECK:       rem.s32
func.func @thirds(%n: i32, %out: !tylo.ptr<i32, global>) attributes {tylo.kernel} {
  %c3 = arith.constant 3 : i32
  %r = arith.remui %n, %c3 : i32
  tylo.store %r, %out : i32, !tylo.ptr<i32, global>
  func.return
}
func.func @sevenths(%n: i32, %out: !tylo.ptr<i32, global>) attributes {tylo.kernel} {
  %c7 = arith.constant 7 : i32
  %q = arith.divui %n, %c7 : i32
  tylo.store %q, %out : i32, !tylo.ptr<i32, global>
  func.return
}
func.func @others(%n: i32, %m: i32, %out: !tylo.ptr<i32, global>) attributes {tylo.kernel} {
  %c8 = arith.constant 8 : i32
  %c3 = arith.constant 3 : i32
  %a = arith.divui %n, %c8 : i32
  %b = arith.remui %a, %c8 : i32
  %c = arith.divui %b, %m : i32
  %d = arith.remsi %c, %c3 : i32
  tylo.store %d, %out : i32, !tylo.ptr<i32, global>
  func.return
}
