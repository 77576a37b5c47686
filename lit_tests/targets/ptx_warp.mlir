// RUN: tylo-opt %s -t ptx | filecheck %s
// REQUIRES: ptxas
// RUN: tylo-opt %s -t ptx > %t.ptx && %ptxas -arch=sm_90a %t.ptx -o %t.cubin
// The shuffles of dialects/ptx/warp.py: every mode, a .f32 source (a .b32 instruction takes
// any 32-bit register), the optional predicate, the c operand of width 8 segments
// ((32 - 8) << 8 | 31 = 0x181f) and of .up (clamp 0), and 16/64-bit values through mov packs.
// CHECK:      	shfl.sync.idx.b32 %r4, %r1, %r2, %r3, 0xffffffff;
// CHECK:      	shfl.sync.up.b32 %r6|%p1, %r1, %r2, %r5, 0xffffffff;
// CHECK:      	shfl.sync.down.b32 %f2, %f1, %r2, %r3, 0x0000ffff;
// CHECK-NEXT: 	shfl.sync.bfly.b32 %f3, %f1, %r2, %r3, 0xffffffff;
// CHECK:      	mov.b64 {%r7, %r8}, %fd1;
// CHECK-NEXT: 	shfl.sync.bfly.b32 %r9, %r7, %r2, %r3, 0xffffffff;
// CHECK-NEXT: 	shfl.sync.bfly.b32 %r10, %r8, %r2, %r3, 0xffffffff;
// CHECK-NEXT: 	mov.b64 %fd2, {%r9, %r10};
builtin.module attributes {ptx.version = "8.4", ptx.target = "sm_90a"} {
  ptx.entry "shuffles" [] reqntid [32, 1, 1] {
    %a = ptx.special "%laneid" : !ptx.reg<r1>
    %b = ptx.const "u32"(3) : !ptx.reg<r2>
    %c = ptx.const "u32"(6175) : !ptx.reg<r3>
    %d = ptx.shfl_sync "idx" %a, %b, %c mask 4294967295 : (!ptx.reg<r1>, !ptx.reg<r2>, !ptx.reg<r3>) -> !ptx.reg<r4>
    %cu = ptx.const "u32"(6144) : !ptx.reg<r5>
    %e, %p = ptx.shfl_sync "up" %a, %b, %cu mask 4294967295 : (!ptx.reg<r1>, !ptx.reg<r2>, !ptx.reg<r5>) -> !ptx.reg<r6>, !ptx.reg<p1>
    %f = ptx.const "f32"(1065353216) : !ptx.reg<f1>
    %g = ptx.shfl_sync "down" %f, %b, %c mask 65535 : (!ptx.reg<f1>, !ptx.reg<r2>, !ptx.reg<r3>) -> !ptx.reg<f2>
    %h = ptx.shfl_sync "bfly" %f, %b, %c mask 4294967295 : (!ptx.reg<f1>, !ptx.reg<r2>, !ptx.reg<r3>) -> !ptx.reg<f3>
    %w = ptx.const "f64"(4607182418800017408) : !ptx.reg<fd1>
    %lo, %hi = ptx.unpack %w : !ptx.reg<fd1> -> (!ptx.reg<r7>, !ptx.reg<r8>)
    %lo2 = ptx.shfl_sync "bfly" %lo, %b, %c mask 4294967295 : (!ptx.reg<r7>, !ptx.reg<r2>, !ptx.reg<r3>) -> !ptx.reg<r9>
    %hi2 = ptx.shfl_sync "bfly" %hi, %b, %c mask 4294967295 : (!ptx.reg<r8>, !ptx.reg<r2>, !ptx.reg<r3>) -> !ptx.reg<r10>
    %w2 = ptx.pack %lo2, %hi2 : (!ptx.reg<r9>, !ptx.reg<r10>) -> !ptx.reg<fd2>
    ptx.ret
  }
}
