// RUN: tylo-opt %s -t ptx | filecheck %s
// REQUIRES: ptxas
// RUN: tylo-opt %s -t ptx > %t.ptx && %ptxas -arch=sm_90a %t.ptx -o %t.cubin
// RUN: sed -e 's/sm_90a/sm_80/' -e '/bf16x2/d' -e '/red_vector/d' %s | tylo-opt -t ptx > %t80.ptx && %ptxas -arch=sm_80 %t80.ptx -o %t80.cubin
// The ops of dialects/ptx/vote.py and atomics.py as ptxas 13.0 takes them (sm_90a; sm_80 but
// the bf16x2 add and the vector reductions): bar.warp.sync and vote.sync with an immediate or
// register mask, atom with its semantics, scope and space (shared prints as .shared::cta),
// .noftz for the half types, cas with two values, red, and red with a vector type
// (red.global.add.v2/.v4.f32: its values brace-enclosed, sm_90, PTX ISA 8.1).
// CHECK:      	bar.warp.sync 0xffffffff;
// CHECK-NEXT: 	bar.warp.sync %r1;
// CHECK:      	vote.sync.all.pred %p2, %p1, 0xffffffff;
// CHECK-NEXT: 	vote.sync.ballot.b32 %r3, %p1, %r1;
// CHECK-NEXT: 	vote.sync.uni.pred %p3, %p1, 0x0000ffff;
// CHECK-NEXT: 	atom.relaxed.gpu.global.add.u32 %r4, [%rd2+4], %r1;
// CHECK:      	atom.acq_rel.sys.global.cas.b32 %f2, [%rd2], %f1, %f1;
// CHECK:      	atom.relaxed.gpu.global.add.f64 %fd2, [%rd2+8], %fd1;
// CHECK:      	atom.acquire.cta.shared::cta.min.s64 %rd4, [%r2], %rd3;
// CHECK-NEXT: 	red.relaxed.gpu.global.add.noftz.f16x2 [%rd2], %r1;
// CHECK-NEXT: 	red.release.cta.shared::cta.add.noftz.bf16x2 [%r2], %r1;
// CHECK-NEXT: 	red.relaxed.gpu.global.add.v2.f32 [%rd2+8], {%f1, %f2};
// CHECK-NEXT: 	red.release.sys.global.add.v4.f32 [%rd2+16], {%f1, %f2, %f1, %f2};
// CHECK-NEXT: 	ret;
builtin.module attributes {ptx.version = "8.4", ptx.target = "sm_90a"} {
  ptx.entry "warp" ["u64"] {
    %raw = ptx.ld_param "u64" [0] : !ptx.reg<rd1>
    %g = ptx.cvta "global" %raw : !ptx.reg<rd1> -> !ptx.reg<rd2>
    %m = ptx.const "b32"(65535) : !ptx.reg<r1>
    ptx.bar_warp_sync mask 4294967295
    ptx.bar_warp_sync %m : !ptx.reg<r1>
    %zero = ptx.const "u32"(0) : !ptx.reg<r2>
    %p = ptx.setp "eq" "u32" %m, %zero : (!ptx.reg<r1>, !ptx.reg<r2>) -> !ptx.reg<p1>
    %a = ptx.vote_sync "all" %p mask 4294967295 : !ptx.reg<p1> -> !ptx.reg<p2>
    %b = ptx.vote_sync "ballot" %p, %m : !ptx.reg<r1> : !ptx.reg<p1> -> !ptx.reg<r3>
    %u = ptx.vote_sync "uni" %p mask 65535 : !ptx.reg<p1> -> !ptx.reg<p3>
    %old = ptx.atom "add" "relaxed" "gpu" "global" "u32" [%g, 4], %m : !ptx.reg<rd2>, !ptx.reg<r1> -> !ptx.reg<r4>
    %f = ptx.const "f32"(0) : !ptx.reg<f1>
    %c = ptx.atom "cas" "acq_rel" "sys" "global" "b32" [%g, 0], %f, %f : !ptx.reg<f1> : !ptx.reg<rd2>, !ptx.reg<f1> -> !ptx.reg<f2>
    %d = ptx.const "f64"(0) : !ptx.reg<fd1>
    %e = ptx.atom "add" "relaxed" "gpu" "global" "f64" [%g, 8], %d : !ptx.reg<rd2>, !ptx.reg<fd1> -> !ptx.reg<fd2>
    %l = ptx.const "s64"(0) : !ptx.reg<rd3>
    %n = ptx.atom "min" "acquire" "cta" "shared" "s64" [%zero, 0], %l : !ptx.reg<r2>, !ptx.reg<rd3> -> !ptx.reg<rd4>
    ptx.red "add" "relaxed" "gpu" "global" "f16x2" [%g, 0], %m : !ptx.reg<rd2>, !ptx.reg<r1>
    ptx.red "add" "release" "cta" "shared" "bf16x2" [%zero, 0], %m : !ptx.reg<r2>, !ptx.reg<r1>
    ptx.red_vector "add" "relaxed" "gpu" "global" "f32" [%g, 8], (%f, %c) : !ptx.reg<rd2>, (!ptx.reg<f1>, !ptx.reg<f2>)
    ptx.red_vector "add" "release" "sys" "global" "f32" [%g, 16], (%f, %c, %f, %c) : !ptx.reg<rd2>, (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f1>, !ptx.reg<f2>)
    ptx.ret
  }
}
