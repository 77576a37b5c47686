// RUN: tylo-opt %s | tylo-opt | filecheck %s
// Every ptx op round-trips through print and parse.

// CHECK:      ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
// CHECK-NEXT:   ptx.shared_decl "buf"[64] align 16
// CHECK-NEXT:   %p = ptx.ld_param "u64"[0] : !ptx.reg<rd1>
// CHECK-NEXT:   %g = ptx.cvta "global" %p : !ptx.reg<rd1> -> !ptx.reg<rd2>
// CHECK-NEXT:   %n = ptx.ld_param "s32"[1] : !ptx.reg<r1>
// CHECK-NEXT:   %x = ptx.ld_param "f32"[2] : !ptx.reg<f1>
// CHECK-NEXT:   %t = ptx.special "%laneid" : !ptx.reg<r2>
// CHECK-NEXT:   %c = ptx.const "b32"(7) : !ptx.reg<r3>
// CHECK-NEXT:   %a = ptx.add "s32" %t, %c : (!ptx.reg<r2>, !ptx.reg<r3>) -> !ptx.reg<r4>
// CHECK-NEXT:   %s = ptx.sub "s32" %a, %c : (!ptx.reg<r4>, !ptx.reg<r3>) -> !ptx.reg<r5>
// CHECK-NEXT:   %m = ptx.mul "s32" "hi" %a, %s : (!ptx.reg<r4>, !ptx.reg<r5>) -> !ptx.reg<r6>
// CHECK-NEXT:   %d = ptx.div "u32" %m, %c : (!ptx.reg<r6>, !ptx.reg<r3>) -> !ptx.reg<r7>
// CHECK-NEXT:   %r = ptx.rem "u32" %m, %c : (!ptx.reg<r6>, !ptx.reg<r3>) -> !ptx.reg<r8>
// CHECK-NEXT:   %mn = ptx.min "s32" %d, %r : (!ptx.reg<r7>, !ptx.reg<r8>) -> !ptx.reg<r9>
// CHECK-NEXT:   %mx = ptx.max "s32" %d, %r : (!ptx.reg<r7>, !ptx.reg<r8>) -> !ptx.reg<r10>
// CHECK-NEXT:   %an = ptx.and "b32" %mn, %mx : (!ptx.reg<r9>, !ptx.reg<r10>) -> !ptx.reg<r11>
// CHECK-NEXT:   %o = ptx.or "b32" %an, %mx : (!ptx.reg<r11>, !ptx.reg<r10>) -> !ptx.reg<r12>
// CHECK-NEXT:   %xo = ptx.xor "b32" %o, %mx : (!ptx.reg<r12>, !ptx.reg<r10>) -> !ptx.reg<r13>
// CHECK-NEXT:   %sl = ptx.shl "b32" %xo, %c : (!ptx.reg<r13>, !ptx.reg<r3>) -> !ptx.reg<r14>
// CHECK-NEXT:   %sr = ptx.shr "s32" %sl, %c : (!ptx.reg<r14>, !ptx.reg<r3>) -> !ptx.reg<r15>
// CHECK-NEXT:   %f = ptx.fma "s32" %sr, %c, %a : (!ptx.reg<r15>, !ptx.reg<r3>, !ptx.reg<r4>) -> !ptx.reg<r16>
// CHECK-NEXT:   %mv = ptx.mov "b32" %f : !ptx.reg<r16> -> !ptx.reg<r17>
// CHECK-NEXT:   %ng = ptx.neg "f32" %x : !ptx.reg<f1> -> !ptx.reg<f2>
// CHECK-NEXT:   %nt = ptx.not "b32" %mv : !ptx.reg<r17> -> !ptx.reg<r18>
// CHECK-NEXT:   %pr = ptx.setp "ge" "s32" %nt, %n : (!ptx.reg<r18>, !ptx.reg<r1>) -> !ptx.reg<p1>
// CHECK-NEXT:   %sel = ptx.selp "b32" %nt, %n, %pr : (!ptx.reg<r18>, !ptx.reg<r1>, !ptx.reg<p1>) -> !ptx.reg<r19>
// CHECK-NEXT:   %cv = ptx.cvt "rn" "f32" "s32" %sel : !ptx.reg<r19> -> !ptx.reg<f3>
// CHECK-NEXT:   %h = ptx.cvt "rn" "bf16" "f32" %cv : !ptx.reg<f3> -> !ptx.reg<rs1>
// CHECK-NEXT:   %e8 = ptx.cvt_pair "rn.satfinite" "e4m3x2" "f32" %cv, %x : (!ptx.reg<f3>, !ptx.reg<f1>) -> !ptx.reg<rs9>
// CHECK-NEXT:   %pk = ptx.pack %h, %h : (!ptx.reg<rs1>, !ptx.reg<rs1>) -> !ptx.reg<r20>
// CHECK-NEXT:   %lo, %hi = ptx.unpack %pk : !ptx.reg<r20> -> (!ptx.reg<rs2>, !ptx.reg<rs3>)
// CHECK-NEXT:   %sm = ptx.mov_symbol "buf" : !ptx.reg<r21>
// CHECK-NEXT:   ptx.st "shared" "f32"[%sm, 4], %cv : !ptx.reg<r21>, !ptx.reg<f3>
// CHECK-NEXT:   %ld = ptx.ld "global" "b16"[%g, 2] : !ptx.reg<rd2> -> !ptx.reg<rs4>
// CHECK-NEXT:   %m0, %m1 = ptx.ldmatrix 2[%sm] {trans} : !ptx.reg<r21> -> (!ptx.reg<r22>, !ptx.reg<r23>)
// CHECK-NEXT:   %m2 = ptx.ldmatrix 1[%sm] : !ptx.reg<r21> -> (!ptx.reg<r24>)
// CHECK-NEXT:   ptx.stmatrix 4[%sm], %m0, %m1, %m2, %pk : !ptx.reg<r21>, (!ptx.reg<r22>, !ptx.reg<r23>, !ptx.reg<r24>, !ptx.reg<r20>)
// CHECK-NEXT:   ptx.stmatrix 1[%sm], %m2 {trans} : !ptx.reg<r21>, (!ptx.reg<r24>)
// CHECK-NEXT:   ptx.bar_sync 1
// CHECK-NEXT:   %d0, %d1, %d2, %d3 = ptx.mma_sync "m16n8k16" "f32.bf16.bf16.f32"(%pk, %pk, %pk, %pk), (%pk, %pk), (%cv, %cv, %cv, %cv) : (!ptx.reg<r20>, !ptx.reg<r20>, !ptx.reg<r20>, !ptx.reg<r20>), (!ptx.reg<r20>, !ptx.reg<r20>), (!ptx.reg<f3>, !ptx.reg<f3>, !ptx.reg<f3>, !ptx.reg<f3>) -> (!ptx.reg<f4>, !ptx.reg<f5>, !ptx.reg<f6>, !ptx.reg<f7>)
// CHECK-NEXT:   ptx.cond_bra %pr : !ptx.reg<p1>, ^l, ^m {negate}
// CHECK-NEXT: ^m:
// CHECK-NEXT:   ptx.label "M"
// CHECK-NEXT:   ptx.bra ^l
// CHECK-NEXT: ^l:
// CHECK-NEXT:   ptx.label "L"
// CHECK-NEXT:   %gr = ptx.get_register : !ptx.reg<r1>
// CHECK-NEXT:   ptx.trap if %pr : !ptx.reg<p1>
// CHECK-NEXT:   ptx.trap
// CHECK-NEXT:   ptx.ret
// CHECK-NEXT: }
ptx.entry "k" ["u64", "s32", "f32"] reqntid [32, 1, 1] {
  ptx.shared_decl "buf"[64] align 16
  %p = ptx.ld_param "u64"[0] : !ptx.reg<rd1>
  %g = ptx.cvta "global" %p : !ptx.reg<rd1> -> !ptx.reg<rd2>
  %n = ptx.ld_param "s32"[1] : !ptx.reg<r1>
  %x = ptx.ld_param "f32"[2] : !ptx.reg<f1>
  %t = ptx.special "%laneid" : !ptx.reg<r2>
  %c = ptx.const "b32"(7) : !ptx.reg<r3>
  %a = ptx.add "s32" %t, %c : (!ptx.reg<r2>, !ptx.reg<r3>) -> !ptx.reg<r4>
  %s = ptx.sub "s32" %a, %c : (!ptx.reg<r4>, !ptx.reg<r3>) -> !ptx.reg<r5>
  %m = ptx.mul "s32" "hi" %a, %s : (!ptx.reg<r4>, !ptx.reg<r5>) -> !ptx.reg<r6>
  %d = ptx.div "u32" %m, %c : (!ptx.reg<r6>, !ptx.reg<r3>) -> !ptx.reg<r7>
  %r = ptx.rem "u32" %m, %c : (!ptx.reg<r6>, !ptx.reg<r3>) -> !ptx.reg<r8>
  %mn = ptx.min "s32" %d, %r : (!ptx.reg<r7>, !ptx.reg<r8>) -> !ptx.reg<r9>
  %mx = ptx.max "s32" %d, %r : (!ptx.reg<r7>, !ptx.reg<r8>) -> !ptx.reg<r10>
  %an = ptx.and "b32" %mn, %mx : (!ptx.reg<r9>, !ptx.reg<r10>) -> !ptx.reg<r11>
  %o = ptx.or "b32" %an, %mx : (!ptx.reg<r11>, !ptx.reg<r10>) -> !ptx.reg<r12>
  %xo = ptx.xor "b32" %o, %mx : (!ptx.reg<r12>, !ptx.reg<r10>) -> !ptx.reg<r13>
  %sl = ptx.shl "b32" %xo, %c : (!ptx.reg<r13>, !ptx.reg<r3>) -> !ptx.reg<r14>
  %sr = ptx.shr "s32" %sl, %c : (!ptx.reg<r14>, !ptx.reg<r3>) -> !ptx.reg<r15>
  %f = ptx.fma "s32" %sr, %c, %a : (!ptx.reg<r15>, !ptx.reg<r3>, !ptx.reg<r4>) -> !ptx.reg<r16>
  %mv = ptx.mov "b32" %f : !ptx.reg<r16> -> !ptx.reg<r17>
  %ng = ptx.neg "f32" %x : !ptx.reg<f1> -> !ptx.reg<f2>
  %nt = ptx.not "b32" %mv : !ptx.reg<r17> -> !ptx.reg<r18>
  %pr = ptx.setp "ge" "s32" %nt, %n : (!ptx.reg<r18>, !ptx.reg<r1>) -> !ptx.reg<p1>
  %sel = ptx.selp "b32" %nt, %n, %pr : (!ptx.reg<r18>, !ptx.reg<r1>, !ptx.reg<p1>) -> !ptx.reg<r19>
  %cv = ptx.cvt "rn" "f32" "s32" %sel : !ptx.reg<r19> -> !ptx.reg<f3>
  %h = ptx.cvt "rn" "bf16" "f32" %cv : !ptx.reg<f3> -> !ptx.reg<rs1>
  %e8 = ptx.cvt_pair "rn.satfinite" "e4m3x2" "f32" %cv, %x : (!ptx.reg<f3>, !ptx.reg<f1>) -> !ptx.reg<rs9>
  %pk = ptx.pack %h, %h : (!ptx.reg<rs1>, !ptx.reg<rs1>) -> !ptx.reg<r20>
  %lo, %hi = ptx.unpack %pk : !ptx.reg<r20> -> (!ptx.reg<rs2>, !ptx.reg<rs3>)
  %sm = ptx.mov_symbol "buf" : !ptx.reg<r21>
  ptx.st "shared" "f32"[%sm, 4], %cv : !ptx.reg<r21>, !ptx.reg<f3>
  %ld = ptx.ld "global" "b16"[%g, 2] : !ptx.reg<rd2> -> !ptx.reg<rs4>
  %m0, %m1 = ptx.ldmatrix 2[%sm] {trans} : !ptx.reg<r21> -> (!ptx.reg<r22>, !ptx.reg<r23>)
  %m2 = ptx.ldmatrix 1[%sm] : !ptx.reg<r21> -> (!ptx.reg<r24>)
  ptx.stmatrix 4[%sm], %m0, %m1, %m2, %pk : !ptx.reg<r21>, (!ptx.reg<r22>, !ptx.reg<r23>, !ptx.reg<r24>, !ptx.reg<r20>)
  ptx.stmatrix 1[%sm], %m2 {trans} : !ptx.reg<r21>, (!ptx.reg<r24>)
  ptx.bar_sync 1
  %d0, %d1, %d2, %d3 = ptx.mma_sync "m16n8k16" "f32.bf16.bf16.f32"(%pk, %pk, %pk, %pk), (%pk, %pk), (%cv, %cv, %cv, %cv) : (!ptx.reg<r20>, !ptx.reg<r20>, !ptx.reg<r20>, !ptx.reg<r20>), (!ptx.reg<r20>, !ptx.reg<r20>), (!ptx.reg<f3>, !ptx.reg<f3>, !ptx.reg<f3>, !ptx.reg<f3>) -> (!ptx.reg<f4>, !ptx.reg<f5>, !ptx.reg<f6>, !ptx.reg<f7>)
  ptx.cond_bra %pr : !ptx.reg<p1>, ^l, ^m {negate}
^m:
  ptx.label "M"
  ptx.bra ^l
^l:
  ptx.label "L"
  %gr = ptx.get_register : !ptx.reg<r1>
  ptx.trap if %pr : !ptx.reg<p1>
  ptx.trap
  ptx.ret
}

// The other valid forms whose edits the *_invalid.mlir files refuse: 64- and 16-bit operands,
// wide multiplies, a modifier in the generic syntax (#ptx<mode "lo">), a cvt without modifier,
// float and predicate variants, packed conversions, a predicated branch whose
// fallthrough block has no label (no branch names it), a predicated trap, an entry without
// reqntid.

// CHECK:      ptx.entry "forms" ["u64", "b16"] {
// CHECK-NEXT:   %g = ptx.ld_param "u64"[0] : !ptx.reg<rd1>
// CHECK-NEXT:   %h = ptx.ld_param "b16"[1] : !ptx.reg<rs1>
// CHECK-NEXT:   %t = ptx.special "%tid.x" : !ptx.reg<r1>
// CHECK-NEXT:   %w = ptx.special "%warpid" : !ptx.reg<r2>
// CHECK-NEXT:   %cy = ptx.special "%ctaid.y" : !ptx.reg<r3>
// CHECK-NEXT:   %fd = ptx.get_register : !ptx.reg<fd1>
// CHECK-NEXT:   %sum = ptx.add "f64" %fd, %fd : (!ptx.reg<fd1>, !ptx.reg<fd1>) -> !ptx.reg<fd2>
// CHECK-NEXT:   %wide = ptx.mul "s32" "wide" %t, %w : (!ptx.reg<r1>, !ptx.reg<r2>) -> !ptx.reg<rd2>
// CHECK-NEXT:   %wide16 = ptx.mul "u16" "wide" %h, %h : (!ptx.reg<rs1>, !ptx.reg<rs1>) -> !ptx.reg<r4>
// CHECK-NEXT:   %sl = ptx.shl "b64" %g, %t : (!ptx.reg<rd1>, !ptx.reg<r1>) -> !ptx.reg<rd3>
// CHECK-NEXT:   %sr = ptx.shr "s16" %h, %t : (!ptx.reg<rs1>, !ptx.reg<r1>) -> !ptx.reg<rs2>
// CHECK-NEXT:   %low = ptx.mul "s32" "lo" %t, %w : (!ptx.reg<r1>, !ptx.reg<r2>) -> !ptx.reg<r8>
// CHECK-NEXT:   %hf = ptx.cvt "f32" "bf16" %h : !ptx.reg<rs1> -> !ptx.reg<f5>
// CHECK-NEXT:   %mv = ptx.mov "b64" %sl : !ptx.reg<rd3> -> !ptx.reg<rd4>
// CHECK-NEXT:   %one = ptx.const "f32"(1065353216) : !ptx.reg<f1>
// CHECK-NEXT:   %fm = ptx.fma "f32" %one, %one, %one : (!ptx.reg<f1>, !ptx.reg<f1>, !ptx.reg<f1>) -> !ptx.reg<f2>
// CHECK-NEXT:   %nan = ptx.setp "nan" "f32" %fm, %one : (!ptx.reg<f2>, !ptx.reg<f1>) -> !ptx.reg<p1>
// CHECK-NEXT:   %num = ptx.not "pred" %nan : !ptx.reg<p1> -> !ptx.reg<p2>
// CHECK-NEXT:   %sel = ptx.selp "f32" %fm, %one, %num : (!ptx.reg<f2>, !ptx.reg<f1>, !ptx.reg<p2>) -> !ptx.reg<f3>
// CHECK-NEXT:   %x2 = ptx.cvt "rn" "f16x2" "e5m2x2" %h : !ptx.reg<rs1> -> !ptx.reg<r5>
// CHECK-NEXT:   %pair = ptx.pack %t, %w : (!ptx.reg<r1>, !ptx.reg<r2>) -> !ptx.reg<rd5>
// CHECK-NEXT:   %quad = ptx.pack %h, %h, %h, %sr : (!ptx.reg<rs1>, !ptx.reg<rs1>, !ptx.reg<rs1>, !ptx.reg<rs2>) -> !ptx.reg<rd6>
// CHECK-NEXT:   %lo, %hi = ptx.unpack %quad : !ptx.reg<rd6> -> (!ptx.reg<r6>, !ptx.reg<r7>)
// CHECK-NEXT:   %ld = ptx.ld "global" "f32"[%g, 4] : !ptx.reg<rd1> -> !ptx.reg<f4>
// CHECK-NEXT:   ptx.st "global" "f32"[%g, 8], %sel : !ptx.reg<rd1>, !ptx.reg<f3>
// CHECK-NEXT:   ptx.st "shared" "b32"[%t, 0], %w : !ptx.reg<r1>, !ptx.reg<r2>
// CHECK-NEXT:   ptx.bar_sync 15
// CHECK-NEXT:   ptx.cond_bra %nan : !ptx.reg<p1>, ^done, ^check
// CHECK-NEXT: ^check:
// CHECK-NEXT:   ptx.trap if %nan : !ptx.reg<p1> {negate}
// CHECK-NEXT:   ptx.bra ^done
// CHECK-NEXT: ^done:
// CHECK-NEXT:   ptx.label "done"
// CHECK-NEXT:   ptx.ret
// CHECK-NEXT: }
ptx.entry "forms" ["u64", "b16"] {
  %g = ptx.ld_param "u64"[0] : !ptx.reg<rd1>
  %h = ptx.ld_param "b16"[1] : !ptx.reg<rs1>
  %t = ptx.special "%tid.x" : !ptx.reg<r1>
  %w = ptx.special "%warpid" : !ptx.reg<r2>
  %cy = ptx.special "%ctaid.y" : !ptx.reg<r3>
  %fd = ptx.get_register : !ptx.reg<fd1>
  %sum = ptx.add "f64" %fd, %fd : (!ptx.reg<fd1>, !ptx.reg<fd1>) -> !ptx.reg<fd2>
  %wide = ptx.mul "s32" "wide" %t, %w : (!ptx.reg<r1>, !ptx.reg<r2>) -> !ptx.reg<rd2>
  %wide16 = ptx.mul "u16" "wide" %h, %h : (!ptx.reg<rs1>, !ptx.reg<rs1>) -> !ptx.reg<r4>
  %sl = ptx.shl "b64" %g, %t : (!ptx.reg<rd1>, !ptx.reg<r1>) -> !ptx.reg<rd3>
  %sr = ptx.shr "s16" %h, %t : (!ptx.reg<rs1>, !ptx.reg<r1>) -> !ptx.reg<rs2>
  %low = "ptx.mul"(%t, %w) <{type = #ptx<type "s32">, mode = #ptx<mode "lo">}> : (!ptx.reg<r1>, !ptx.reg<r2>) -> !ptx.reg<r8>
  %hf = ptx.cvt "f32" "bf16" %h : !ptx.reg<rs1> -> !ptx.reg<f5>
  %mv = ptx.mov "b64" %sl : !ptx.reg<rd3> -> !ptx.reg<rd4>
  %one = ptx.const "f32"(1065353216) : !ptx.reg<f1>
  %fm = ptx.fma "f32" %one, %one, %one : (!ptx.reg<f1>, !ptx.reg<f1>, !ptx.reg<f1>) -> !ptx.reg<f2>
  %nan = ptx.setp "nan" "f32" %fm, %one : (!ptx.reg<f2>, !ptx.reg<f1>) -> !ptx.reg<p1>
  %num = ptx.not "pred" %nan : !ptx.reg<p1> -> !ptx.reg<p2>
  %sel = ptx.selp "f32" %fm, %one, %num : (!ptx.reg<f2>, !ptx.reg<f1>, !ptx.reg<p2>) -> !ptx.reg<f3>
  %x2 = ptx.cvt "rn" "f16x2" "e5m2x2" %h : !ptx.reg<rs1> -> !ptx.reg<r5>
  %pair = ptx.pack %t, %w : (!ptx.reg<r1>, !ptx.reg<r2>) -> !ptx.reg<rd5>
  %quad = ptx.pack %h, %h, %h, %sr : (!ptx.reg<rs1>, !ptx.reg<rs1>, !ptx.reg<rs1>, !ptx.reg<rs2>) -> !ptx.reg<rd6>
  %lo, %hi = ptx.unpack %quad : !ptx.reg<rd6> -> (!ptx.reg<r6>, !ptx.reg<r7>)
  %ld = ptx.ld "global" "f32"[%g, 4] : !ptx.reg<rd1> -> !ptx.reg<f4>
  ptx.st "global" "f32"[%g, 8], %sel : !ptx.reg<rd1>, !ptx.reg<f3>
  ptx.st "shared" "b32"[%t, 0], %w : !ptx.reg<r1>, !ptx.reg<r2>
  ptx.bar_sync 15
  ptx.cond_bra %nan : !ptx.reg<p1>, ^done, ^check
^check:
  ptx.trap if %nan : !ptx.reg<p1> {negate}
  ptx.bra ^done
^done:
  ptx.label "done"
  ptx.ret
}

// A device printf (dialects/ptx/calls.py): the module-scope vprintf declaration and format
// string, a local argument buffer, st.local, 64-bit symbol addresses, generic addresses and
// the call.

// CHECK:      ptx.extern_func "vprintf" ["b64", "b64"] -> ["b32"]
// CHECK-NEXT: ptx.global_string "$str0" = "x = %d, %f\0A"
// CHECK-NEXT: ptx.global_string "$str1" = "\CE\B1 = 100%%\0A"
// CHECK-NEXT: ptx.extern_func "nothing" [] -> []
// CHECK:      ptx.entry "printer" [] {
// CHECK-NEXT:   ptx.local_decl "__local_depot0"[16] align 8
// CHECK-NEXT:   %t = ptx.special "%tid.x" : !ptx.reg<r1>
// CHECK-NEXT:   %fd = ptx.get_register : !ptx.reg<fd1>
// CHECK-NEXT:   %buf = ptx.mov_symbol "__local_depot0" : !ptx.reg<rd1>
// CHECK-NEXT:   ptx.st "local" "b32"[%buf, 0], %t : !ptx.reg<rd1>, !ptx.reg<r1>
// CHECK-NEXT:   ptx.st "local" "f64"[%buf, 8], %fd : !ptx.reg<rd1>, !ptx.reg<fd1>
// CHECK-NEXT:   %args = ptx.cvta_generic "local" %buf : !ptx.reg<rd1> -> !ptx.reg<rd2>
// CHECK-NEXT:   %s = ptx.mov_symbol "$str0" : !ptx.reg<rd3>
// CHECK-NEXT:   %fmt = ptx.cvta_generic "global" %s : !ptx.reg<rd3> -> !ptx.reg<rd4>
// CHECK-NEXT:   ptx.call_uni @vprintf(%fmt, %args) : (!ptx.reg<rd4>, !ptx.reg<rd2>)
// CHECK-NEXT:   ptx.call_uni @nothing() : ()
// CHECK-NEXT:   ptx.ret
// CHECK-NEXT: }
ptx.extern_func "vprintf" ["b64", "b64"] -> ["b32"]
ptx.global_string "$str0" = "x = %d, %f\0A"
ptx.global_string "$str1" = "\CE\B1 = 100%%\0A"
ptx.extern_func "nothing" [] -> []
ptx.entry "printer" [] {
  ptx.local_decl "__local_depot0"[16] align 8
  %t = ptx.special "%tid.x" : !ptx.reg<r1>
  %fd = ptx.get_register : !ptx.reg<fd1>
  %buf = ptx.mov_symbol "__local_depot0" : !ptx.reg<rd1>
  ptx.st "local" "b32"[%buf, 0], %t : !ptx.reg<rd1>, !ptx.reg<r1>
  ptx.st "local" "f64"[%buf, 8], %fd : !ptx.reg<rd1>, !ptx.reg<fd1>
  %args = ptx.cvta_generic "local" %buf : !ptx.reg<rd1> -> !ptx.reg<rd2>
  %s = ptx.mov_symbol "$str0" : !ptx.reg<rd3>
  %fmt = ptx.cvta_generic "global" %s : !ptx.reg<rd3> -> !ptx.reg<rd4>
  ptx.call_uni @vprintf(%fmt, %args) : (!ptx.reg<rd4>, !ptx.reg<rd2>)
  ptx.call_uni @nothing() : ()
  ptx.ret
}

// The math instructions (dialects/ptx/math.py): approximate ex2/lg2/rsqrt with and without
// .ftz, sqrt's rounding modes, abs of integers and floats.

// CHECK:      ptx.entry "math" ["f32", "f64"] {
// CHECK-NEXT:   %x = ptx.ld_param "f32"[0] : !ptx.reg<f1>
// CHECK-NEXT:   %d = ptx.ld_param "f64"[1] : !ptx.reg<fd1>
// CHECK-NEXT:   %e = ptx.ex2 "f32" "approx" %x : !ptx.reg<f1> -> !ptx.reg<f2>
// CHECK-NEXT:   %ef = ptx.ex2 "f32" "approx" %x {ftz} : !ptx.reg<f1> -> !ptx.reg<f3>
// CHECK-NEXT:   %l = ptx.lg2 "f32" "approx" %x : !ptx.reg<f1> -> !ptx.reg<f4>
// CHECK-NEXT:   %r = ptx.rsqrt "f32" "approx" %x {ftz} : !ptx.reg<f1> -> !ptx.reg<f5>
// CHECK-NEXT:   %rd = ptx.rsqrt "f64" "approx" %d : !ptx.reg<fd1> -> !ptx.reg<fd2>
// CHECK-NEXT:   %s = ptx.sqrt "f32" "rn" %x : !ptx.reg<f1> -> !ptx.reg<f6>
// CHECK-NEXT:   %sa = ptx.sqrt "f32" "approx" %x : !ptx.reg<f1> -> !ptx.reg<f7>
// CHECK-NEXT:   %sd = ptx.sqrt "f64" "rz" %d : !ptx.reg<fd1> -> !ptx.reg<fd3>
// CHECK-NEXT:   %a = ptx.abs "f32" %x {ftz} : !ptx.reg<f1> -> !ptx.reg<f8>
// CHECK-NEXT:   %ad = ptx.abs "f64" %d : !ptx.reg<fd1> -> !ptx.reg<fd4>
// CHECK-NEXT:   %h = ptx.get_register : !ptx.reg<rs1>
// CHECK-NEXT:   %ah = ptx.abs "bf16" %h : !ptx.reg<rs1> -> !ptx.reg<rs2>
// CHECK-NEXT:   %i = ptx.get_register : !ptx.reg<r1>
// CHECK-NEXT:   %ai = ptx.abs "s32" %i : !ptx.reg<r1> -> !ptx.reg<r2>
// CHECK-NEXT:   %fh = ptx.fma "bf16" %h, %h, %h : (!ptx.reg<rs1>, !ptx.reg<rs1>, !ptx.reg<rs1>) -> !ptx.reg<rs3>
// CHECK-NEXT:   ptx.ret
// CHECK-NEXT: }
ptx.entry "math" ["f32", "f64"] {
  %x = ptx.ld_param "f32"[0] : !ptx.reg<f1>
  %d = ptx.ld_param "f64"[1] : !ptx.reg<fd1>
  %e = ptx.ex2 "f32" "approx" %x : !ptx.reg<f1> -> !ptx.reg<f2>
  %ef = ptx.ex2 "f32" "approx" %x {ftz} : !ptx.reg<f1> -> !ptx.reg<f3>
  %l = ptx.lg2 "f32" "approx" %x : !ptx.reg<f1> -> !ptx.reg<f4>
  %r = ptx.rsqrt "f32" "approx" %x {ftz} : !ptx.reg<f1> -> !ptx.reg<f5>
  %rd = ptx.rsqrt "f64" "approx" %d : !ptx.reg<fd1> -> !ptx.reg<fd2>
  %s = ptx.sqrt "f32" "rn" %x : !ptx.reg<f1> -> !ptx.reg<f6>
  %sa = ptx.sqrt "f32" "approx" %x : !ptx.reg<f1> -> !ptx.reg<f7>
  %sd = ptx.sqrt "f64" "rz" %d : !ptx.reg<fd1> -> !ptx.reg<fd3>
  %a = ptx.abs "f32" %x {ftz} : !ptx.reg<f1> -> !ptx.reg<f8>
  %ad = ptx.abs "f64" %d : !ptx.reg<fd1> -> !ptx.reg<fd4>
  %h = ptx.get_register : !ptx.reg<rs1>
  %ah = ptx.abs "bf16" %h : !ptx.reg<rs1> -> !ptx.reg<rs2>
  %i = ptx.get_register : !ptx.reg<r1>
  %ai = ptx.abs "s32" %i : !ptx.reg<r1> -> !ptx.reg<r2>
  %fh = ptx.fma "bf16" %h, %h, %h : (!ptx.reg<rs1>, !ptx.reg<rs1>, !ptx.reg<rs1>) -> !ptx.reg<rs3>
  ptx.ret
}
