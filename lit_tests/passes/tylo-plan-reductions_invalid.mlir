// RUN: tylo-opt %s -p tylo-plan-reductions --verify-diagnostics --split-input-file | filecheck %s
// Each chunk (split at the dashed lines) is a tylo.reduce that tylo-plan-reductions refuses; for
// each chunk tylo-opt prints a dashed line and then the pass's message.
// The first chunk is an empty module, so that every case follows a dashed line.
builtin.module {}

// -----
// One row per warp (warp w holds row w, two columns per lane): a column's values are in four
// warps, and xor shuffles stay inside a warp.
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tylo-plan-reductions: reduction of axis 0 of ownership (4,64), ((32,4),2):((8,1),4): no recipe: the reduced axis spans warps: thread 0 (warp 0) needs coordinate (1, 0), which only other warps hold; xor shuffles stay inside a warp
func.func @k(%x: !tylo.ptr<f32, global>) {
  %t = tylo.thread_idx "x" : i32
  %g = tylo.make_tile %x : !tylo.ptr<f32, global> -> !tylo.tile<f32, global, (4,64):(64,1)>
  %f = tylo.load_fragment %g, %t : !tylo.tile<f32, global, (4,64):(64,1)> -> !tylo.fragment<f32, #tylo.ownership<(4,64), ((32,4),2):((8,1),4)>>
  %r = tylo.reduce "max" %f dims [0] : !tylo.fragment<f32, #tylo.ownership<(4,64), ((32,4),2):((8,1),4)>> -> !tylo.fragment<f32, #tylo.ownership<(1,64), ((32,4),2):((2,0),1)>>
  func.return
}

// -----
// The result type must carry the plan's replicated ownership.
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tylo-plan-reductions: reducing dims [1] of ownership (16,8), ((4,8),(2,2)):((32,1),(16,8)) gives ownership (16,1), ((4,8),2):((0,1),8), but the result type says (16,1), ((4,8),2):((0,2),1)
func.func @k(%x: !tylo.ptr<f32, global>) {
  %t = tylo.thread_idx "x" : i32
  %g = tylo.make_tile %x : !tylo.ptr<f32, global> -> !tylo.tile<f32, global, (16,8):(8,1)>
  %f = tylo.load_fragment %g, %t : !tylo.tile<f32, global, (16,8):(8,1)> -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %r = tylo.reduce "sum" %f dims [1] : !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> !tylo.fragment<f32, #tylo.ownership<(16,1), ((4,8),2):((0,2),1)>>
  func.return
}

// -----
// An ownership that does not hold the whole line (column 1 is nobody's).
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tylo-plan-reductions: reduction of axis 1 of ownership (32,2), (32,2):(1,0): no recipe: coordinate (0, 1) of the reduced line is held by no thread
func.func @k(%x: !tylo.ptr<f32, global>) {
  %t = tylo.thread_idx "x" : i32
  %g = tylo.make_tile %x : !tylo.ptr<f32, global> -> !tylo.tile<f32, global, (32,2):(2,1)>
  %f = tylo.load_fragment %g, %t : !tylo.tile<f32, global, (32,2):(2,1)> -> !tylo.fragment<f32, #tylo.ownership<(32,2), (32,2):(1,0)>>
  %r = tylo.reduce "sum" %f dims [1] : !tylo.fragment<f32, #tylo.ownership<(32,2), (32,2):(1,0)>> -> !tylo.fragment<f32, #tylo.ownership<(32,1), (32,1):(1,0)>>
  func.return
}
