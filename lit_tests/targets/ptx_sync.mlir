// RUN: tylo-opt %s -t ptx | filecheck %s
// REQUIRES: ptxas
// RUN: tylo-opt %s -t ptx > %t.ptx && %ptxas -arch=sm_90a %t.ptx -o %t.cubin
// The ops of dialects/ptx/sync.py: the dynamic window (module scope: ptxas refuses an extern
// .shared inside an entry), named barriers, elect.sync and setmaxnreg; an entry holding a
// setmaxnreg gets .minnctapersm 1 after its .reqntid, without which ptxas ignores it (C7508).
// CHECK:      .extern .shared .align 1024 .b8 tylo_dynamic_smem[];
// CHECK:      .visible .entry roles()
// CHECK-NEXT: .reqntid 384, 1, 1
// CHECK-NEXT: .minnctapersm 1
// CHECK:      	mov.u32 %r1, tylo_dynamic_smem;
// CHECK-NEXT: 	mov.u32 %r2, %dynamic_smem_size;
// CHECK-NEXT: 	st.shared.u32 [%r1], %r2;
// CHECK-NEXT: 	mov.u32 %r3, 1;
// CHECK-NEXT: 	bar.arrive %r3, 384;
// CHECK-NEXT: 	bar.sync %r3, 256;
// CHECK-NEXT: 	bar.sync %r3;
// CHECK-NEXT: 	elect.sync %r4|%p1, 0xffffffff;
// CHECK-NEXT: 	setmaxnreg.dec.sync.aligned.u32 40;
// CHECK-NEXT: 	setmaxnreg.inc.sync.aligned.u32 232;
// CHECK-NEXT: 	ret;
builtin.module attributes {ptx.version = "8.4", ptx.target = "sm_90a"} {
  ptx.extern_shared_decl "tylo_dynamic_smem" align 1024
  ptx.entry "roles" [] reqntid [384, 1, 1] {
    %base = ptx.mov_symbol "tylo_dynamic_smem" : !ptx.reg<r1>
    %size = ptx.special "%dynamic_smem_size" : !ptx.reg<r2>
    ptx.st "shared" "u32"[%base, 0], %size : !ptx.reg<r1>, !ptx.reg<r2>
    %id = ptx.const "u32"(1) : !ptx.reg<r3>
    ptx.bar "arrive" %id threads 384 : !ptx.reg<r3>
    ptx.bar "sync" %id threads 256 : !ptx.reg<r3>
    ptx.bar "sync" %id : !ptx.reg<r3>
    %lane, %leader = ptx.elect_sync : !ptx.reg<r4>, !ptx.reg<p1>
    ptx.setmaxnreg "dec" 40
    ptx.setmaxnreg "inc" 232
    ptx.ret
  }
}
