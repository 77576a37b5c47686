// RUN: tylo-opt %s -p tylo-ptx-linearize | filecheck %s
// RUN: tylo-opt %s -t ptx | filecheck %s --check-prefix=PTX
// RUN: tylo-opt %s -p tylo-ptx-linearize -t ptx | filecheck %s --check-prefix=PTX

// A ptx.cond_bra's unlabelled fallthrough block that only jumps to the block after it goes
// away: the branch falls through to that block (^a). One that copies first (^copy), one that
// jumps elsewhere (^far) and a labelled one (^named, a name other branches may use) stay.
// The PTX text is the same before and after (PTX).
// CHECK-LABEL: ptx.entry "k" ["s32"] {
// CHECK:       ptx.cond_bra %p : !ptx.reg<p1>, ^[[END:[a-z0-9]+]], ^[[A:[a-z0-9]+]]
// CHECK-NEXT:  ^[[A]]:
// CHECK-NEXT:  ptx.label "A"
// CHECK-NEXT:  ptx.cond_bra %p : !ptx.reg<p1>, ^[[END]], ^[[COPY:[a-z0-9]+]]
// CHECK-NEXT:  ^[[COPY]]:
// CHECK-NEXT:  ptx.mov "b32" %n
// CHECK-NEXT:  ptx.bra ^[[B:[a-z0-9]+]]
// CHECK-NEXT:  ^[[B]]:
// CHECK-NEXT:  ptx.label "B"
// CHECK-NEXT:  ptx.cond_bra %p : !ptx.reg<p1>, ^[[A]], ^[[FAR:[a-z0-9]+]]
// CHECK-NEXT:  ^[[FAR]]:
// CHECK-NEXT:  ptx.bra ^[[END]]
// CHECK-NEXT:  ^[[C:[a-z0-9]+]]:
// CHECK-NEXT:  ptx.label "C"
// CHECK-NEXT:  ptx.cond_bra %p : !ptx.reg<p1>, ^[[END]], ^[[NAMED:[a-z0-9]+]]
// CHECK-NEXT:  ^[[NAMED]]:
// CHECK-NEXT:  ptx.label "N"
// CHECK-NEXT:  ptx.bra ^[[END]]
// CHECK-NEXT:  ^[[END]]:
// CHECK-NEXT:  ptx.label "END"
// CHECK-NEXT:  ptx.ret

// PTX:      	setp.ne.s32 %p1, %r1, %r1;
// PTX-NEXT: 	@%p1 bra END;
// PTX-NEXT: A:
// PTX-NEXT: 	@%p1 bra END;
// PTX-NEXT: 	mov.b32 %r2, %r1;
// PTX-NEXT: B:
// PTX-NEXT: 	@%p1 bra A;
// PTX-NEXT: 	bra.uni END;
// PTX-NEXT: C:
// PTX-NEXT: 	@%p1 bra END;
// PTX-NEXT: N:
// PTX-NEXT: END:
// PTX-NEXT: 	ret;
builtin.module {
  ptx.entry "k" ["s32"] {
    %n = ptx.ld_param "s32"[0] : !ptx.reg<r1>
    %p = ptx.setp "ne" "s32" %n, %n : (!ptx.reg<r1>, !ptx.reg<r1>) -> !ptx.reg<p1>
    ptx.cond_bra %p : !ptx.reg<p1>, ^end, ^hop
  ^hop:
    ptx.bra ^a
  ^a:
    ptx.label "A"
    ptx.cond_bra %p : !ptx.reg<p1>, ^end, ^copy
  ^copy:
    %m = ptx.mov "b32" %n : !ptx.reg<r1> -> !ptx.reg<r2>
    ptx.bra ^b
  ^b:
    ptx.label "B"
    ptx.cond_bra %p : !ptx.reg<p1>, ^a, ^far
  ^far:
    ptx.bra ^end
  ^c:
    ptx.label "C"
    ptx.cond_bra %p : !ptx.reg<p1>, ^end, ^named
  ^named:
    ptx.label "N"
    ptx.bra ^end
  ^end:
    ptx.label "END"
    ptx.ret
  }
}
