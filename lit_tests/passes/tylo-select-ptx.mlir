// RUN: tylo-opt %s -p tylo-select-ptx | filecheck %s
// RUN: tylo-opt %s -p tylo-select-ptx,tylo-ptx-linearize | filecheck %s --check-prefix=LINEAR
// RUN: tylo-opt %s -p tylo-select-ptx -t ptx | filecheck %s --check-prefix=PTX
// RUN: tylo-opt %s -p tylo-lower-to-ptx -t ptx | filecheck %s --check-prefix=PTX

// Selection does not look at the block layout: the cond_br's ptx.cond_bra falls into a block of
// its own that jumps to the else-block ^more, although ^more comes next; tylo-ptx-linearize
// folds that block (LINEAR), tylo-lower-to-ptx runs both, and the PTX text is the same.
// CHECK:       builtin.module attributes {ptx.version = "8.4", ptx.target = "sm_90a"}
// CHECK-LABEL: ptx.entry "pick" ["s32"] {
// CHECK:       %[[NEG:.*]] = ptx.setp "lt" "s32"
// CHECK-NEXT:  ptx.cond_bra %[[NEG]] : !ptx.reg<p1>, ^[[DONE:bb[0-9]+]], ^[[HOP:bb[0-9]+]]
// CHECK-NEXT:  ^[[HOP]]:
// CHECK-NEXT:  ptx.bra ^[[MORE:bb[0-9]+]]
// CHECK-NEXT:  ^[[MORE]]:
// CHECK-NEXT:  ptx.label "$L__BB1"
// CHECK-NEXT:  ptx.bar_sync 0
// CHECK-NEXT:  ptx.bra ^[[DONE]]
// CHECK-NEXT:  ^[[DONE]]:
// CHECK-NEXT:  ptx.label "$L__BB2"
// CHECK-NEXT:  ptx.ret

// LINEAR-LABEL: ptx.entry "pick" ["s32"] {
// LINEAR:       ptx.cond_bra %{{.*}} : !ptx.reg<p1>, ^[[DONE:bb[0-9]+]], ^[[MORE:bb[0-9]+]]
// LINEAR-NEXT:  ^[[MORE]]:
// LINEAR-NEXT:  ptx.label "$L__BB1"

// PTX:      	setp.lt.s32 %p1, %r1, %r2;
// PTX-NEXT: 	@%p1 bra $L__BB2;
// PTX-NEXT: $L__BB1:
// PTX-NEXT: 	bar.sync 0;
// PTX-NEXT: $L__BB2:
// PTX-NEXT: 	ret;
func.func @pick(%n: i32) attributes {tylo.kernel} {
  %c0 = arith.constant 0 : i32
  %neg = arith.cmpi slt, %n, %c0 : i32
  cf.cond_br %neg, ^done, ^more
^more:
  ptx.bar_sync 0
  cf.br ^done
^done:
  func.return
}
