// RUN: tylo-opt %s -p tylo-lower-to-ptx --split-input-file | filecheck %s
// RUN: tylo-opt %s -p "tylo-lower-to-ptx{arch=sm_100a}" --split-input-file | filecheck %s --check-prefix=SM100

// The .version follows the target (compiler.hardware.ptx_types.ptx_version): 8.4 up to sm_90a, 8.7 for sm_100a.
// CHECK:  builtin.module attributes {ptx.version = "8.4", ptx.target = "sm_90a"}
// SM100:  builtin.module attributes {ptx.version = "8.7", ptx.target = "sm_100a"}

// Parameters: pointers are read with ld.param.u64 then cvta.to.global; an i1 travels as a u8.
// Shared allocations become kernel-scope .shared declarations; element offsets scale by the
// element size (mul.wide for 64-bit global addresses, mad.lo for 32-bit shared addresses).
// CHECK-LABEL: ptx.entry "k" ["u64", "s32", "f32", "u8"] reqntid [64, 1, 1] {
// CHECK-NEXT:  ptx.shared_decl "__tylo_smem_0"[256] align 16
// CHECK-NEXT:  %[[RAW:.*]] = ptx.ld_param "u64"[0] : !ptx.reg<rd1>
// CHECK-NEXT:  %[[P:.*]] = ptx.cvta "global" %[[RAW]] : !ptx.reg<rd1> -> !ptx.reg<rd2>
// CHECK-NEXT:  %[[N:.*]] = ptx.ld_param "s32"[1] : !ptx.reg<r1>
// CHECK-NEXT:  %[[S:.*]] = ptx.ld_param "f32"[2] : !ptx.reg<f1>
// CHECK-NEXT:  %[[BYTE:.*]] = ptx.ld_param "u8"[3] : !ptx.reg<rs1>
// CHECK:       %[[FLAG:.*]] = ptx.setp "ne" "u16" %[[BYTE]]
// CHECK-NEXT:  %[[T:.*]] = ptx.special "%tid.x" : !ptx.reg<r2>
// CHECK-NEXT:  ptx.special "%ctaid.y" : !ptx.reg<r3>
// CHECK:       ptx.mul "s32" "lo"
// CHECK:       ptx.div "s32"
// CHECK:       ptx.shr "u32"
// CHECK:       %[[LT:.*]] = ptx.setp "lt" "s32" %[[T]], %[[N]]
// CHECK-NEXT:  %[[OK:.*]] = ptx.and "pred" %[[LT]], %[[FLAG]]
// CHECK-NEXT:  ptx.trap if %[[OK]] : !ptx.reg<p3> {negate, reason = "in bounds"}
// CHECK-NEXT:  %[[FOUR:.*]] = ptx.const "s32"(4) : !ptx.reg<r8>
// CHECK-NEXT:  %[[WIDE:.*]] = ptx.mul "s32" "wide" %[[T]], %[[FOUR]] : (!ptx.reg<r2>, !ptx.reg<r8>) -> !ptx.reg<rd3>
// CHECK-NEXT:  %[[ADDR:.*]] = ptx.add "s64" %[[P]], %[[WIDE]]
// CHECK-NEXT:  %[[X:.*]] = ptx.ld "global" "f32"[%[[ADDR]], 0]
// CHECK-NEXT:  %[[Y:.*]] = ptx.mul "f32" "rn" %[[X]], %[[S]]
// CHECK-NEXT:  %[[HALF:.*]] = ptx.const "f32"(1056964608) : !ptx.reg<f4>
// CHECK-NEXT:  %[[GT:.*]] = ptx.setp "gt" "f32" %[[Y]], %[[HALF]]
// CHECK-NEXT:  %[[Z:.*]] = ptx.selp "f32" %[[Y]], %[[HALF]], %[[GT]]
// CHECK-NEXT:  %[[H:.*]] = ptx.cvt "rn" "bf16" "f32" %[[Z]] : !ptx.reg<f5> -> !ptx.reg<rs3>
// CHECK-NEXT:  %[[W:.*]] = ptx.cvt "f32" "bf16" %[[H]]
// CHECK-NEXT:  %[[SM:.*]] = ptx.mov_symbol "__tylo_smem_0" : !ptx.reg<r9>
// CHECK-NEXT:  %[[FOUR2:.*]] = ptx.const "s32"(4)
// CHECK-NEXT:  %[[SP:.*]] = ptx.fma "s32" %[[T]], %[[FOUR2]], %[[SM]]
// CHECK-NEXT:  ptx.st "shared" "f32"[%[[SP]], 0], %[[W]]
// CHECK-NEXT:  ptx.bar_sync 0
// CHECK-NEXT:  %[[V:.*]] = ptx.ld "shared" "f32"[%[[SP]], 0]
// CHECK-NEXT:  ptx.st "global" "f32"[%[[ADDR]], 0], %[[V]]
// CHECK-NEXT:  ptx.ret
func.func @k(%p: !tylo.ptr<f32, global>, %n: i32, %s: f32, %flag: i1) attributes {tylo.kernel, tylo.block = array<i32: 64, 1, 1>} {
  %t = tylo.thread_idx "x" : i32
  %b = tylo.block_idx "y" : i32
  %c4 = arith.constant 4 : i32
  %q = arith.muli %t, %c4 : i32
  %d = arith.divsi %q, %c4 : i32
  %e = arith.shrui %d, %c4 : i32
  %lt = arith.cmpi slt, %t, %n : i32
  %ok = arith.andi %lt, %flag : i1
  %ok_r = builtin.unrealized_conversion_cast %ok : i1 to !ptx.reg<p>
  ptx.trap if %ok_r : !ptx.reg<p> {negate, reason = "in bounds"}
  %ptr = tylo.ptr_add %p, %t : !tylo.ptr<f32, global>, i32
  %x = tylo.load %ptr : !tylo.ptr<f32, global> -> f32
  %y = arith.mulf %x, %s : f32
  %half = arith.constant 0.5 : f32
  %gt = arith.cmpf ogt, %y, %half : f32
  %z = arith.select %gt, %y, %half : f32
  %h = arith.truncf %z : f32 to bf16
  %w = arith.extf %h : bf16 to f32
  %sm = tylo.shared_alloc 64, align 16 : !tylo.ptr<f32, shared>
  %sp = tylo.ptr_add %sm, %t : !tylo.ptr<f32, shared>, i32
  tylo.store %w, %sp : f32, !tylo.ptr<f32, shared>
  ptx.bar_sync 0
  %v = tylo.load %sp : !tylo.ptr<f32, shared> -> f32
  tylo.store %v, %ptr : f32, !tylo.ptr<f32, global>
  func.return
}

// -----

// Each cf block becomes a ptx block, with its label; block arguments get registers of their own;
// a branch copies into them through temporaries (the swap of %a and %b must not clobber), and
// the target block reads them back. The cond_br to the next block ^body falls into an
// unlabelled block that jumps to ^exit.
// CHECK-LABEL: ptx.entry "swap" ["s32"] {
// CHECK:       ptx.bra ^[[HEAD:bb[0-9]+]]
// CHECK-NEXT:  ^[[HEAD]]:
// CHECK-NEXT:  ptx.label "$L__BB1"
// CHECK-NEXT:  %[[I:.*]] = ptx.get_register : !ptx.reg<r1>
// CHECK-NEXT:  %[[A:.*]] = ptx.get_register : !ptx.reg<r2>
// CHECK-NEXT:  %[[B:.*]] = ptx.get_register : !ptx.reg<r3>
// CHECK:       ptx.cond_bra %{{.*}} : !ptx.reg<p1>, ^[[BODY:bb[0-9]+]], ^[[FALL:bb[0-9]+]]
// CHECK-NEXT:  ^[[FALL]]:
// CHECK-NEXT:  ptx.bra ^[[EXIT:bb[0-9]+]]
// CHECK-NEXT:  ^[[BODY]]:
// CHECK-NEXT:  ptx.label "$L__BB2"
// CHECK-NEXT:  %[[NEXT:.*]] = ptx.add "s32" %[[I]]
// CHECK-NEXT:  %[[T0:.*]] = ptx.mov "b32" %[[NEXT]] : !ptx.reg<r7> -> !ptx.reg<r8>
// CHECK-NEXT:  %[[T1:.*]] = ptx.mov "b32" %[[B]] : !ptx.reg<r3> -> !ptx.reg<r9>
// CHECK-NEXT:  %[[T2:.*]] = ptx.mov "b32" %[[A]] : !ptx.reg<r2> -> !ptx.reg<r10>
// CHECK-NEXT:  ptx.mov "b32" %[[T0]] : !ptx.reg<r8> -> !ptx.reg<r1>
// CHECK-NEXT:  ptx.mov "b32" %[[T1]] : !ptx.reg<r9> -> !ptx.reg<r2>
// CHECK-NEXT:  ptx.mov "b32" %[[T2]] : !ptx.reg<r10> -> !ptx.reg<r3>
// CHECK-NEXT:  ptx.bra ^[[HEAD]]
// CHECK-NEXT:  ^[[EXIT]]:
// CHECK-NEXT:  ptx.label "$L__BB3"
// CHECK-NEXT:  ptx.ret
func.func @swap(%n: i32) attributes {tylo.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  cf.br ^head(%c0, %c1, %c0 : i32, i32, i32)
^head(%i: i32, %a: i32, %b: i32):
  %more = arith.cmpi slt, %i, %n : i32
  cf.cond_br %more, ^body, ^exit
^body:
  %next = arith.addi %i, %c1 : i32
  cf.br ^head(%next, %b, %a : i32, i32, i32)
^exit:
  func.return
}

// -----

// A cond_br with then-arguments (a while loop's) branches, negated, to the stub block
// "$L__BB<i>_else" that copies the else-arguments; the block it falls into copies the
// then-arguments and jumps to the then-block. A cond_br to the next block without copies is
// one ptx.cond_bra.
// CHECK-LABEL: ptx.entry "carried" ["s32"] {
// CHECK:       ptx.label "$L__BB1"
// CHECK-NEXT:  %[[X:.*]] = ptx.get_register : !ptx.reg<r1>
// CHECK-NEXT:  %[[C:.*]] = ptx.setp "gt" "s32" %[[X]]
// CHECK-NEXT:  ptx.cond_bra %[[C]] : !ptx.reg<p1>, ^[[STUB:bb[0-9]+]], ^[[FALL:bb[0-9]+]] {negate}
// CHECK-NEXT:  ^[[FALL]]:
// CHECK-NEXT:  ptx.mov "b32" %[[X]] : !ptx.reg<r1> -> !ptx.reg<r2>
// CHECK-NEXT:  ptx.bra ^[[AFTER:bb[0-9]+]]
// CHECK-NEXT:  ^[[STUB]]:
// CHECK-NEXT:  ptx.label "$L__BB1_else"
// CHECK-NEXT:  ptx.mov "b32" %[[X]] : !ptx.reg<r1> -> !ptx.reg<r3>
// CHECK-NEXT:  ptx.bra ^[[END:bb[0-9]+]]
// CHECK-NEXT:  ^[[AFTER]]:
// CHECK-NEXT:  ptx.label "$L__BB2"
// CHECK:       ^[[END]]:
// CHECK-NEXT:  ptx.label "$L__BB3"
// CHECK-NEXT:  %[[R:.*]] = ptx.get_register : !ptx.reg<r3>
// CHECK-NEXT:  %[[Z:.*]] = ptx.setp "eq" "s32" %[[R]]
// CHECK-NEXT:  ptx.cond_bra %[[Z]] : !ptx.reg<p2>, ^[[DONE:bb[0-9]+]], ^[[DONE]]
// CHECK-NEXT:  ^[[DONE]]:
// CHECK-NEXT:  ptx.label "$L__BB4"
// CHECK-NEXT:  ptx.ret
func.func @carried(%n: i32) attributes {tylo.kernel} {
  %c1 = arith.constant 1 : i32
  cf.br ^before(%n : i32)
^before(%x: i32):
  %more = arith.cmpi sgt, %x, %c1 : i32
  cf.cond_br %more, ^after(%x : i32), ^end(%x : i32)
^after(%y: i32):
  %half = arith.shrsi %y, %c1 : i32
  cf.br ^before(%half : i32)
^end(%r: i32):
  %zero = arith.cmpi eq, %r, %c1 : i32
  cf.cond_br %zero, ^done, ^done
^done:
  func.return
}

// -----

// mma_sync packs two bf16 elements per .b32 register, low element first.
// CHECK-LABEL: ptx.entry "mma"
// CHECK:       %[[A01:.*]] = ptx.pack %a0, %a1 : (!ptx.reg<rs{{.*}}>, !ptx.reg<rs{{.*}}>) -> !ptx.reg<r1>
// CHECK:       %[[B01:.*]] = ptx.pack %b0, %b1
// CHECK:       %d0, %d1, %d2, %d3 = ptx.mma_sync "m16n8k16" "f32.bf16.bf16.f32"(%[[A01]], %{{.*}}, %{{.*}}, %{{.*}}), (%[[B01]], %{{.*}}), (%c0, %c1, %c2, %c3)
func.func @mma(%a0: bf16, %a1: bf16, %a2: bf16, %a3: bf16, %a4: bf16, %a5: bf16, %a6: bf16, %a7: bf16, %b0: bf16, %b1: bf16, %b2: bf16, %b3: bf16, %c0: f32, %c1: f32, %c2: f32, %c3: f32) attributes {tylo.kernel} {
  %d0, %d1, %d2, %d3 = tylo.mma_sync <m16n8k16, bf16, bf16, f32, warps = (1,1), repeat = (1,1), k = 16>(%a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7), (%b0, %b1, %b2, %b3), (%c0, %c1, %c2, %c3) : (bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16), (bf16, bf16, bf16, bf16), (f32, f32, f32, f32) -> (f32, f32, f32, f32)
  func.return
}

// -----

// FP8 has no scalar cvt (PTX ISA 9.7.9.21): f32 -> e4m3/e5m2 is the paired
// cvt.rn.satfinite.e4m3x2.f32 with 0 in the high byte and the value in the low byte; FP8 -> f32 is
// cvt.rn.f16x2.e4m3x2 (the low half is the value, exactly), then f16 -> f32. bf16, the other FP8
// format and integers go through f32; an FP8 constant is its cvt encoding (448.0 is 0x7e = 126).
// CHECK-LABEL: ptx.entry "fp8" ["f32", "s32", "u64"] {
// CHECK:       %[[X:.*]] = ptx.ld_param "f32"[0] : !ptx.reg<f1>
// CHECK:       %[[Z:.*]] = ptx.const "f32"(0) : !ptx.reg<f2>
// CHECK-NEXT:  %[[A:.*]] = ptx.cvt_pair "rn.satfinite" "e4m3x2" "f32" %[[Z]], %[[X]] : (!ptx.reg<f2>, !ptx.reg<f1>) -> !ptx.reg<rs1>
// CHECK-NEXT:  %[[Z2:.*]] = ptx.const "f32"(0)
// CHECK-NEXT:  %[[B:.*]] = ptx.cvt_pair "rn.satfinite" "e5m2x2" "f32" %[[Z2]], %[[X]]
// CHECK-NEXT:  %[[H2:.*]] = ptx.cvt "rn" "f16x2" "e4m3x2" %[[A]] : !ptx.reg<rs1> -> !ptx.reg<r2>
// CHECK-NEXT:  %[[LO:.*]], %{{.*}} = ptx.unpack %[[H2]] : !ptx.reg<r2> -> (!ptx.reg<rs{{.*}}>, !ptx.reg<rs{{.*}}>)
// CHECK-NEXT:  %[[C:.*]] = ptx.cvt "f32" "f16" %[[LO]]
// CHECK-NEXT:  %[[E2:.*]] = ptx.cvt "rn" "f16x2" "e5m2x2" %[[B]]
// CHECK-NEXT:  %d, %{{.*}} = ptx.unpack %[[E2]]
// CHECK-NEXT:  %[[H:.*]] = ptx.cvt "rn" "bf16" "f32" %[[X]]
// CHECK-NEXT:  %[[HW:.*]] = ptx.cvt "f32" "bf16" %[[H]]
// CHECK-NEXT:  %[[Z3:.*]] = ptx.const "f32"(0)
// CHECK-NEXT:  %e = ptx.cvt_pair "rn.satfinite" "e5m2x2" "f32" %[[Z3]], %[[HW]]
// CHECK-NEXT:  %[[F2:.*]] = ptx.cvt "rn" "f16x2" "e5m2x2" %[[B]]
// CHECK-NEXT:  %[[FLO:.*]], %{{.*}} = ptx.unpack %[[F2]]
// CHECK-NEXT:  %[[FW:.*]] = ptx.cvt "f32" "f16" %[[FLO]]
// CHECK-NEXT:  %[[Z4:.*]] = ptx.const "f32"(0)
// CHECK-NEXT:  %f = ptx.cvt_pair "rn.satfinite" "e4m3x2" "f32" %[[Z4]], %[[FW]]
// CHECK-NEXT:  %[[NF:.*]] = ptx.cvt "rn" "f32" "s32" %n
// CHECK-NEXT:  %[[Z5:.*]] = ptx.const "f32"(0)
// CHECK-NEXT:  %g = ptx.cvt_pair "rn.satfinite" "e4m3x2" "f32" %[[Z5]], %[[NF]]
// CHECK-NEXT:  %k = ptx.const "b16"(126) : !ptx.reg<rs{{.*}}>
// CHECK-NEXT:  ptx.st "global" "b8"[%p, 0], %k
// CHECK-NEXT:  ptx.ret
func.func @fp8(%x: f32, %n: i32, %p: !tylo.ptr<f8E4M3FN, global>) attributes {tylo.kernel} {
  %a = arith.truncf %x : f32 to f8E4M3FN
  %b = arith.truncf %x : f32 to f8E5M2
  %c = arith.extf %a : f8E4M3FN to f32
  %d = arith.extf %b : f8E5M2 to f16
  %h = arith.truncf %x : f32 to bf16
  %e = arith.truncf %h : bf16 to f8E5M2
  %f = arith.truncf %b : f8E5M2 to f8E4M3FN
  %g = arith.sitofp %n : i32 to f8E4M3FN
  %k = arith.constant 4.480000e+02 : f8E4M3FN
  tylo.store %k, %p : f8E4M3FN, !tylo.ptr<f8E4M3FN, global>
  func.return
}

// -----

// tylo.print becomes a vprintf call (passes/select/printf.py): vprintf is declared once and each
// distinct format is one .global string, in front of the entries; each kernel gets one
// .local buffer as large as its largest print's arguments, which are stored at their C struct
// offsets (an i32 at 0, then 8-aligned f64 and i64); a print without values passes 0.
// CHECK:       ptx.extern_func "vprintf" ["b64", "b64"] -> ["b32"]
// CHECK-NEXT:  ptx.global_string "$str0" = "t=%d x=%f l=%lld\0A"
// CHECK-NEXT:  ptx.global_string "$str1" = "done\0A"
// CHECK-NEXT:  ptx.global_string "$str2" = "%d\0A"
// CHECK-NEXT:  ptx.global_string "$str3" = "%d %lld\0A"
// CHECK-NEXT:  ptx.entry "show" ["s32", "f64", "s64"] {
// CHECK-NEXT:  ptx.local_decl "__local_depot0"[24] align 8
// CHECK:       %[[B:.*]] = ptx.mov_symbol "__local_depot0" : !ptx.reg<rd{{.*}}>
// CHECK-NEXT:  ptx.st "local" "b32"[%[[B]], 0], %t
// CHECK-NEXT:  ptx.st "local" "f64"[%[[B]], 8], %x
// CHECK-NEXT:  ptx.st "local" "b64"[%[[B]], 16], %l
// CHECK-NEXT:  %[[A:.*]] = ptx.cvta_generic "local" %[[B]]
// CHECK-NEXT:  %[[S:.*]] = ptx.mov_symbol "$str0"
// CHECK-NEXT:  %[[F:.*]] = ptx.cvta_generic "global" %[[S]]
// CHECK-NEXT:  ptx.call_uni @vprintf(%[[F]], %[[A]])
// CHECK-NEXT:  %[[Z:.*]] = ptx.const "b64"(0)
// CHECK-NEXT:  %[[S1:.*]] = ptx.mov_symbol "$str1"
// CHECK-NEXT:  %[[F1:.*]] = ptx.cvta_generic "global" %[[S1]]
// CHECK-NEXT:  ptx.call_uni @vprintf(%[[F1]], %[[Z]])
// CHECK-NEXT:  ptx.ret
// CHECK:       ptx.entry "again" ["s32", "s64"] {
// CHECK-NEXT:  ptx.local_decl "__local_depot1"[16] align 8
// CHECK:       ptx.mov_symbol "$str1"
// CHECK:       ptx.st "local" "b64"[%{{.*}}, 8], %l
// CHECK-NOT:   ptx.global_string
func.func @show(%t: i32, %x: f64, %l: i64) attributes {tylo.kernel} {
  tylo.print "t=%d x=%f l=%lld\0A" %t, %x, %l : i32, f64, i64
  tylo.print "done\0A"
  func.return
}
func.func @again(%t: i32, %l: i64) attributes {tylo.kernel} {
  tylo.print "%d\0A" %t : i32
  tylo.print "done\0A"
  tylo.print "%d %lld\0A" %t, %l : i32, i64
  func.return
}

// -----

// Math (passes/select/math.py): exp is ex2.approx(x * log2 e) and log is lg2.approx(x) * ln 2
// (mul.rn, so that ptxas keeps the rounding),
// with the f32 constants 0x3FB8AA3B (1069066811) and 0x3F317218 (1060205080); no .ftz; sqrt is
// sqrt.rn; bf16 goes through f32 with one cvt.rn back, except abs and fma, which bf16 has
// natively from sm_80; f64 has sqrt.rn, abs and fma.rn; integers abs.s32 (i8: abs.s16).
// CHECK-LABEL: ptx.entry "math" ["f32", "b16", "f64", "s32", "s16"] {
// CHECK:       %[[X:.*]] = ptx.ld_param "f32"[0] : !ptx.reg<f1>
// CHECK:       %[[H:.*]] = ptx.ld_param "b16"[1]
// CHECK:       %[[D:.*]] = ptx.ld_param "f64"[2]
// CHECK:       %[[I:.*]] = ptx.ld_param "s32"[3]
// CHECK:       %[[B:.*]] = ptx.ld_param "s16"[4]
// CHECK-NEXT:  %[[L2E:.*]] = ptx.const "f32"(1069066811)
// CHECK-NEXT:  %[[T:.*]] = ptx.mul "f32" "rn" %[[X]], %[[L2E]]
// CHECK-NEXT:  %e = ptx.ex2 "f32" "approx" %[[T]]
// CHECK-NEXT:  %e2 = ptx.ex2 "f32" "approx" %[[X]]
// CHECK-NEXT:  %[[LG:.*]] = ptx.lg2 "f32" "approx" %[[X]]
// CHECK-NEXT:  %[[LN2:.*]] = ptx.const "f32"(1060205080)
// CHECK-NEXT:  %l = ptx.mul "f32" "rn" %[[LG]], %[[LN2]]
// CHECK-NEXT:  %l2 = ptx.lg2 "f32" "approx" %[[X]]
// CHECK-NEXT:  %s = ptx.sqrt "f32" "rn" %[[X]]
// CHECK-NEXT:  %r = ptx.rsqrt "f32" "approx" %[[X]]
// CHECK-NEXT:  %a = ptx.abs "f32" %[[X]]
// CHECK-NEXT:  %f = ptx.fma "f32" %[[X]], %[[X]], %[[X]]
// CHECK-NEXT:  %[[HW:.*]] = ptx.cvt "f32" "bf16" %[[H]] : !ptx.reg<rs{{.*}}> -> !ptx.reg<f{{.*}}>
// CHECK-NEXT:  %[[HE:.*]] = ptx.ex2 "f32" "approx" %[[HW]]
// CHECK-NEXT:  %he = ptx.cvt "rn" "bf16" "f32" %[[HE]] : !ptx.reg<f{{.*}}> -> !ptx.reg<rs{{.*}}>
// CHECK-NEXT:  %[[HW2:.*]] = ptx.cvt "f32" "bf16" %[[H]]
// CHECK-NEXT:  %[[HS:.*]] = ptx.sqrt "f32" "rn" %[[HW2]]
// CHECK-NEXT:  %hs = ptx.cvt "rn" "bf16" "f32" %[[HS]]
// CHECK-NEXT:  %ha = ptx.abs "bf16" %[[H]] : !ptx.reg<rs{{.*}}> -> !ptx.reg<rs{{.*}}>
// CHECK-NEXT:  %hf = ptx.fma "bf16" %[[H]], %[[H]], %[[H]]
// CHECK-NEXT:  %ds = ptx.sqrt "f64" "rn" %[[D]] : !ptx.reg<fd1> -> !ptx.reg<fd2>
// CHECK-NEXT:  %da = ptx.abs "f64" %[[D]]
// CHECK-NEXT:  %df = ptx.fma "f64" %[[D]], %[[D]], %[[D]]
// CHECK-NEXT:  %ia = ptx.abs "s32" %[[I]] : !ptx.reg<r{{.*}}> -> !ptx.reg<r{{.*}}>
// CHECK-NEXT:  %ba = ptx.abs "s16" %[[B]] : !ptx.reg<rs{{.*}}> -> !ptx.reg<rs{{.*}}>
func.func @math(%x: f32, %h: bf16, %d: f64, %i: i32, %b: i8) attributes {tylo.kernel} {
  %e = math.exp %x : f32
  %e2 = math.exp2 %x : f32
  %l = math.log %x : f32
  %l2 = math.log2 %x : f32
  %s = math.sqrt %x : f32
  %r = math.rsqrt %x : f32
  %a = math.absf %x : f32
  %f = math.fma %x, %x, %x : f32
  %he = math.exp2 %h : bf16
  %hs = math.sqrt %h : bf16
  %ha = math.absf %h : bf16
  %hf = math.fma %h, %h, %h : bf16
  %ds = math.sqrt %d : f64
  %da = math.absf %d : f64
  %df = math.fma %d, %d, %d : f64
  %ia = math.absi %i : i32
  %ba = math.absi %b : i8
  func.return
}

// -----

// tylo.exp2_ftz (dialects/tylo/fragment_ops.py, passes/select/math.py) is ex2.approx.ftz.f32:
// the one form with .ftz (math.exp2 above keeps IEEE subnormals); bf16 through f32 and back.
// CHECK-LABEL: ptx.entry "exp2_ftz" ["f32", "b16"] {
// CHECK:       %[[X:.*]] = ptx.ld_param "f32"[0] : !ptx.reg<f1>
// CHECK:       %[[H:.*]] = ptx.ld_param "b16"[1]
// CHECK-NEXT:  %e = ptx.ex2 "f32" "approx" %[[X]] {ftz} : !ptx.reg<f1> -> !ptx.reg<f{{.*}}>
// CHECK-NEXT:  %[[HW:.*]] = ptx.cvt "f32" "bf16" %[[H]] : !ptx.reg<rs{{.*}}> -> !ptx.reg<f{{.*}}>
// CHECK-NEXT:  %[[HE:.*]] = ptx.ex2 "f32" "approx" %[[HW]] {ftz}
// CHECK-NEXT:  %he = ptx.cvt "rn" "bf16" "f32" %[[HE]] : !ptx.reg<f{{.*}}> -> !ptx.reg<rs{{.*}}>
func.func @exp2_ftz(%x: f32, %h: bf16) attributes {tylo.kernel} {
  %e = tylo.exp2_ftz %x : f32 -> f32
  %he = tylo.exp2_ftz %h : bf16 -> bf16
  func.return
}
