// RUN: tylo-opt %s | tylo-opt | filecheck %s
// Every tylo op, attribute and type round-trips through print and parse.

// CHECK:      func.func @k(%p: !tylo.ptr<bf16, global>, %m: i32, %ld: i32, %fp: !tylo.ptr<f32, global>) {
// CHECK-NEXT:   %t = tylo.thread_idx "x" : i32
// CHECK-NEXT:   %tile = tylo.make_tile %p[%m, %m, %ld] : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (?,?):(?,1)>
// CHECK-NEXT:   %w = tylo.window %tile[%t, %t] : !tylo.tile<bf16, global, (?,?):(?,1)> -> !tylo.tile<bf16, global, (?,?):(?,1), [16,16]>
// CHECK-NEXT:   %a = tylo.load_fragment %w, %t : !tylo.tile<bf16, global, (?,?):(?,1), [16,16]> -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
// CHECK-NEXT:   %e = tylo.load_element %w[%t, %t] : !tylo.tile<bf16, global, (?,?):(?,1), [16,16]> -> bf16
// CHECK-NEXT:   %f = tylo.map %a : (!tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>) -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>> {
// CHECK-NEXT:   ^bb0(%x: bf16):
// CHECK-NEXT:     %y = arith.addf %x, %e : bf16
// CHECK-NEXT:     tylo.yield %y : bf16
// CHECK-NEXT:   }
// CHECK-NEXT:   %z = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:   %c = tylo.splat %z : f32 -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
// CHECK-NEXT:   %c3 = tylo.slot %c[3] : !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> f32
// CHECK-NEXT:   %s = tylo.shared_alloc 256, align 16 : !tylo.ptr<bf16, shared>
// CHECK-NEXT:   %st = tylo.make_tile %s : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, Sw<3,3,3> o (8,64):(64,1)>
// CHECK-NEXT:   %q = tylo.ptr_add %p, %t : !tylo.ptr<bf16, global>, i32
// CHECK-NEXT:   %v = tylo.load %q : !tylo.ptr<bf16, global> -> bf16
// CHECK-NEXT:   tylo.store %v, %q : bf16, !tylo.ptr<bf16, global>
// CHECK-NEXT:   %b = tylo.block_idx "y" : i32
// CHECK-NEXT:   %bd = tylo.block_dim "x" : i32
// CHECK-NEXT:   %gd = tylo.grid_dim "z" : i32
// CHECK-NEXT:   tylo.store_element %v, %w[%t, %b] : bf16, !tylo.tile<bf16, global, (?,?):(?,1), [16,16]>
// CHECK-NEXT:   %cp = tylo.ptr_add %s, %t : !tylo.ptr<bf16, shared>, i32
// CHECK-NEXT:   %cf = tylo.make_tile %fp : !tylo.ptr<f32, global> -> !tylo.tile<f32, global, (16,8):(8,1)>
// CHECK-NEXT:   tylo.store_fragment %c, %cf, %t : !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>, !tylo.tile<f32, global, (16,8):(8,1)>
// CHECK-NEXT:   %bt = tylo.make_tile %p
// CHECK-NEXT:   %bf = tylo.load_fragment %bt, %t
// CHECK-NEXT:   %d = tylo.mma <m16n8k16, bf16, bf16, f32, warps = (1,1), repeat = (1,1), k = 16> %a, %bf, %c :
// CHECK-NEXT:   %d0, %d1, %d2, %d3 = tylo.mma_sync <m16n8k16, bf16, bf16, f32, warps = (1,1), repeat = (1,1), k = 16>(%v, %v, %v, %v, %v, %v, %v, %v), (%v, %v, %v, %v), (%z, %z, %z, %z)
// CHECK-NEXT:   func.return
func.func @k(%p: !tylo.ptr<bf16, global>, %m: i32, %ld: i32, %fp: !tylo.ptr<f32, global>) {
  %t = tylo.thread_idx "x" : i32
  %tile = tylo.make_tile %p [%m, %m, %ld] : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (?,?):(?,1)>
  %w = tylo.window %tile [%t, %t] : !tylo.tile<bf16, global, (?,?):(?,1)> -> !tylo.tile<bf16, global, (?,?):(?,1), [16,16]>
  %a = tylo.load_fragment %w, %t : !tylo.tile<bf16, global, (?,?):(?,1), [16,16]> -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  %e = tylo.load_element %w [%t, %t] : !tylo.tile<bf16, global, (?,?):(?,1), [16,16]> -> bf16
  %f = tylo.map %a : (!tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>) -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>> {
  ^bb0(%x: bf16):
    %y = arith.addf %x, %e : bf16
    tylo.yield %y : bf16
  }
  %z = arith.constant 0.0 : f32
  %c = tylo.splat %z : f32 -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %c3 = tylo.slot %c[3] : !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> f32
  %s = tylo.shared_alloc 256, align 16 : !tylo.ptr<bf16, shared>
  %st = tylo.make_tile %s : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, Sw<3,3,3> o (8,64):(64,1)>
  %q = tylo.ptr_add %p, %t : !tylo.ptr<bf16, global>, i32
  %v = tylo.load %q : !tylo.ptr<bf16, global> -> bf16
  tylo.store %v, %q : bf16, !tylo.ptr<bf16, global>
  %b = tylo.block_idx "y" : i32
  %bd = tylo.block_dim "x" : i32
  %gd = tylo.grid_dim "z" : i32
  tylo.store_element %v, %w[%t, %b] : bf16, !tylo.tile<bf16, global, (?,?):(?,1), [16,16]>
  %cp = tylo.ptr_add %s, %t : !tylo.ptr<bf16, shared>, i32
  %cf = tylo.make_tile %fp : !tylo.ptr<f32, global> -> !tylo.tile<f32, global, (16,8):(8,1)>
  tylo.store_fragment %c, %cf, %t : !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>, !tylo.tile<f32, global, (16,8):(8,1)>
  %bt = tylo.make_tile %p : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (16,8):(8,1)>
  %bf = tylo.load_fragment %bt, %t : !tylo.tile<bf16, global, (16,8):(8,1)> -> !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>
  %d = tylo.mma <m16n8k16, bf16, bf16, f32, warps = (1,1), repeat = (1,1), k = 16> %a, %bf, %c : !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>, !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>, !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %d0, %d1, %d2, %d3 = tylo.mma_sync <m16n8k16, bf16, bf16, f32, warps = (1,1), repeat = (1,1), k = 16>(%v, %v, %v, %v, %v, %v, %v, %v), (%v, %v, %v, %v), (%z, %z, %z, %z) : (bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16), (bf16, bf16, bf16, bf16), (f32, f32, f32, f32) -> (f32, f32, f32, f32)
  func.return
}

// The other valid forms whose edits the *_invalid.mlir files refuse: a swizzled layout with a
// runtime leaf, windows of a static tile and of a window, and the matrix-copy ops.

// CHECK:      func.func @forms(%p: !tylo.ptr<bf16, global>, %i: i32) {
// CHECK-NEXT:   %sw = tylo.make_tile %p[%i] : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, Sw<3,3,3> o (?,64):(64,1)>
// CHECK-NEXT:   %s = tylo.make_tile %p : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (32,64):(64,1)>
// CHECK-NEXT:   %whole = tylo.window %s[%i, %i] : !tylo.tile<bf16, global, (32,64):(64,1)> -> !tylo.tile<bf16, global, (32,64):(64,1), [32,64]>
// CHECK-NEXT:   %w = tylo.window %s[%i, %i] : !tylo.tile<bf16, global, (32,64):(64,1)> -> !tylo.tile<bf16, global, (32,64):(64,1), [16,16]>
// CHECK-NEXT:   %w2 = tylo.window %w[%i, %i] : !tylo.tile<bf16, global, (32,64):(64,1), [16,16]> -> !tylo.tile<bf16, global, (32,64):(64,1), [8,16]>
// CHECK-NEXT:   %sh = tylo.shared_alloc 256, align 16 : !tylo.ptr<bf16, shared>
// CHECK-NEXT:   %row = tylo.make_tile %sh : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, (16,16):(16,1)>
// CHECK-NEXT:   %col = tylo.make_tile %sh : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, (16,16):(1,16)>
// CHECK-NEXT:   %a = tylo.matrix_load %row, %i axis 1 : !tylo.tile<bf16, shared, (16,16):(16,1)> -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
// CHECK-NEXT:   %at = tylo.matrix_load %col, %i axis 0 {trans} : !tylo.tile<bf16, shared, (16,16):(1,16)> -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
// CHECK-NEXT:   tylo.matrix_store %a, %row, %i axis 1 : !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>, !tylo.tile<bf16, shared, (16,16):(16,1)>
// CHECK-NEXT:   %e0, %e1 = tylo.ldmatrix 1 %row[%i, %i] : !tylo.tile<bf16, shared, (16,16):(16,1)> -> (bf16, bf16)
// CHECK-NEXT:   %e2, %e3, %e4, %e5 = tylo.ldmatrix 2 %sh {trans} : !tylo.ptr<bf16, shared> -> (bf16, bf16, bf16, bf16)
// CHECK-NEXT:   tylo.stmatrix 1(%e0, %e1), %sh : (bf16, bf16), !tylo.ptr<bf16, shared>
// CHECK-NEXT:   tylo.stmatrix 2(%e2, %e3, %e4, %e5), %sh {trans} : (bf16, bf16, bf16, bf16), !tylo.ptr<bf16, shared>
// CHECK-NEXT:   func.return
// CHECK-NEXT: }
func.func @forms(%p: !tylo.ptr<bf16, global>, %i: i32) {
  %sw = tylo.make_tile %p [%i] : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, Sw<3,3,3> o (?,64):(64,1)>
  %s = tylo.make_tile %p : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (32,64):(64,1)>
  %whole = tylo.window %s [%i, %i] : !tylo.tile<bf16, global, (32,64):(64,1)> -> !tylo.tile<bf16, global, (32,64):(64,1), [32,64]>
  %w = tylo.window %s [%i, %i] : !tylo.tile<bf16, global, (32,64):(64,1)> -> !tylo.tile<bf16, global, (32,64):(64,1), [16,16]>
  %w2 = tylo.window %w [%i, %i] : !tylo.tile<bf16, global, (32,64):(64,1), [16,16]> -> !tylo.tile<bf16, global, (32,64):(64,1), [8,16]>
  %sh = tylo.shared_alloc 256, align 16 : !tylo.ptr<bf16, shared>
  %row = tylo.make_tile %sh : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, (16,16):(16,1)>
  %col = tylo.make_tile %sh : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, (16,16):(1,16)>
  %a = tylo.matrix_load %row, %i axis 1 : !tylo.tile<bf16, shared, (16,16):(16,1)> -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  %at = tylo.matrix_load %col, %i axis 0 {trans} : !tylo.tile<bf16, shared, (16,16):(1,16)> -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  tylo.matrix_store %a, %row, %i axis 1 : !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>, !tylo.tile<bf16, shared, (16,16):(16,1)>
  %e0, %e1 = tylo.ldmatrix 1 %row[%i, %i] : !tylo.tile<bf16, shared, (16,16):(16,1)> -> (bf16, bf16)
  %e2, %e3, %e4, %e5 = tylo.ldmatrix 2 %sh {trans} : !tylo.ptr<bf16, shared> -> (bf16, bf16, bf16, bf16)
  tylo.stmatrix 1(%e0, %e1), %sh : (bf16, bf16), !tylo.ptr<bf16, shared>
  tylo.stmatrix 2(%e2, %e3, %e4, %e5), %sh {trans} : (bf16, bf16, bf16, bf16), !tylo.ptr<bf16, shared>
  func.return
}

// tylo.print (dialects/tylo/printing.py): a C format whose conversions read the operands'
// promoted types, and a print with no values.

// CHECK:      func.func @prints(%i: i32, %l: i64, %d: f64) {
// CHECK-NEXT:   tylo.print "i=%d u=%u x=%08x l=%lld lx=%llx d=%.3f e=%e g=%g 100%%\0A" %i, %i, %i, %l, %l, %d, %d, %d : i32, i32, i32, i64, i64, f64, f64, f64
// CHECK-NEXT:   tylo.print "\CE\B1\0A"
// CHECK-NEXT:   func.return
// CHECK-NEXT: }
func.func @prints(%i: i32, %l: i64, %d: f64) {
  tylo.print "i=%d u=%u x=%08x l=%lld lx=%llx d=%.3f e=%e g=%g 100%%\0A" %i, %i, %i, %l, %l, %d, %d, %d : i32, i32, i32, i64, i64, f64, f64, f64
  tylo.print "\CE\B1\0A"
  func.return
}
