// RUN: tylo-opt %s -p tylo-lower-tiles,tylo-lower-to-ptx -t ptx | filecheck %s
// RUN: tylo-opt %s -p tylo-lower-tiles,tylo-lower-to-ptx{arch=sm_80} --verify-diagnostics 2>&1 | filecheck %s --check-prefix=OLD
// RUN: sed '/(bf16, bf16)/d' %s | tylo-opt -p tylo-lower-tiles,tylo-lower-to-ptx{arch=sm_80} --verify-diagnostics 2>&1 | filecheck %s --check-prefix=OLD-VECTOR

// Selection of syncwarp, the votes and the atomics: bar.warp.sync and vote.sync are ptx ops the
// frontend builds directly (passes/select/direct.py), on a member mask whose register holds a
// constant (printed as the immediate; its mov stays) or not (printed as the register); atomics
// (passes/select/atomics.py): cas takes the compared value first
// (d, [a], b = compared, c = new); umax is max.u32; a packed bf16 pair travels in one .b32
// register (mov.b32 {lo, hi}) and its old halves come back the same way; a shared tile's
// element becomes its 32-bit shared address (tylo-lower-tiles), and exch of f32 is .b32; two
// f32 values to a global f32 pointer are a vector reduction, red.global.add.v2.f32 (sm_90).
// CHECK:      	bar.warp.sync 0xffffffff;
// CHECK-NEXT: 	bar.warp.sync %r1;
// CHECK-NEXT: 	vote.sync.all.pred %p2, %p1, 0xffffffff;
// CHECK-NEXT: 	vote.sync.ballot.b32 %r5, %p1, 0x0000ffff;
// CHECK-NEXT: 	atom.relaxed.gpu.global.add.s32 %r6, [%rd2], %r5;
// CHECK-NEXT: 	atom.acq_rel.sys.global.cas.b32 %r7, [%rd2], %r6, %r1;
// CHECK-NEXT: 	red.release.cta.global.max.u32 [%rd2], %r7;
// CHECK-NEXT: 	mov.b32 %r8, {%rs1, %rs2};
// CHECK-NEXT: 	atom.relaxed.gpu.global.add.noftz.bf16x2 %r9, [%rd4], %r8;
// CHECK-NEXT: 	mov.b32 {%rs3, %rs4}, %r9;
// CHECK:      	mad.lo.s32 %r12, %r1, %r11, %r10;
// CHECK-NEXT: 	atom.relaxed.cta.shared::cta.exch.b32 %f2, [%r12], %f1;
// CHECK-NEXT: 	red.relaxed.gpu.global.add.v2.f32 [%rd6], {%f1, %f2};
// CHECK-NEXT: 	ret;
// OLD: atom.add.bf16x2 needs sm_90 or later; the target is sm_80
// OLD-VECTOR: red.global.add.v2.f32 needs sm_90 or later; the target is sm_80
func.func @k(%out: !tylo.ptr<i32, global>, %h: !tylo.ptr<bf16, global>, %x: i32, %lo: bf16, %hi: bf16, %f: f32, %acc: !tylo.ptr<f32, global>) attributes {tylo.kernel} {
  %full = arith.constant -1 : i32
  %low = arith.constant 65535 : i32
  %zero = arith.constant 0 : i32
  %p = arith.cmpi sgt, %x, %zero : i32
  %full_r = builtin.unrealized_conversion_cast %full : i32 to !ptx.reg<r>
  %low_r = builtin.unrealized_conversion_cast %low : i32 to !ptx.reg<r>
  %x_r = builtin.unrealized_conversion_cast %x : i32 to !ptx.reg<r>
  %p_r = builtin.unrealized_conversion_cast %p : i1 to !ptx.reg<p>
  ptx.bar_warp_sync %full_r : !ptx.reg<r>
  ptx.bar_warp_sync %x_r : !ptx.reg<r>
  %all_r = ptx.vote_sync "all" %p_r, %full_r : !ptx.reg<r> : !ptx.reg<p> -> !ptx.reg<p>
  %b_r = ptx.vote_sync "ballot" %p_r, %low_r : !ptx.reg<r> : !ptx.reg<p> -> !ptx.reg<r>
  %b = builtin.unrealized_conversion_cast %b_r : !ptx.reg<r> to i32
  %old = tylo.atomic "add" "relaxed" "gpu" %out, (%b) : !tylo.ptr<i32, global>, (i32) -> (i32)
  %got = tylo.atomic "cas" "acq_rel" "sys" %out, (%x) compare %old : i32 : !tylo.ptr<i32, global>, (i32) -> (i32)
  tylo.atomic "umax" "release" "cta" %out, (%got) : !tylo.ptr<i32, global>, (i32) -> ()
  %a, %c = tylo.atomic "add" "relaxed" "gpu" %h, (%lo, %hi) : !tylo.ptr<bf16, global>, (bf16, bf16) -> (bf16, bf16)
  %s = tylo.shared_alloc 4, align 16 : !tylo.ptr<f32, shared>
  %t = tylo.make_tile %s : !tylo.ptr<f32, shared> -> !tylo.tile<f32, shared, (4):(1)>
  %sold = tylo.atomic "exch" "relaxed" "cta" %t[%x], (%f) : !tylo.tile<f32, shared, (4):(1)>, (f32) -> (f32)
  tylo.atomic "add" "relaxed" "gpu" %acc, (%f, %sold) : !tylo.ptr<f32, global>, (f32, f32) -> ()
  func.return
}
