// RUN: tylo-opt %s --verify-diagnostics --split-input-file | filecheck %s
// Each chunk breaks one rule of the verifiers of dialects/tylo/reduce_ops.py and
// dialects/tylo/shuffle_ops.py (the valid forms are in passes/tylo-plan-reductions.mlir).
builtin.module {}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: reduction kind 'mean' is not one of ('sum', 'max', 'min')
func.func @k(%f: !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>) {
  %r = tylo.reduce "mean" %f dims [1] : !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> !tylo.fragment<f32, #tylo.ownership<(16,1), ((4,8),2):((0,1),8)>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: reduction dims [2] must be distinct axes 0 (rows) or 1 (columns), at least one
func.func @k(%f: !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>) {
  %r = tylo.reduce "sum" %f dims [2] : !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> !tylo.fragment<f32, #tylo.ownership<(16,1), ((4,8),2):((0,1),8)>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: reducing dims [0] of a (16, 8) fragment gives shape (1, 8), not (16, 1)
func.func @k(%f: !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>) {
  %r = tylo.reduce "sum" %f dims [0] : !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> !tylo.fragment<f32, #tylo.ownership<(16,1), ((4,8),2):((0,1),8)>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: a reduction of f32 values gives f32, not f16
func.func @k(%f: !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>) {
  %r = tylo.reduce "sum" %f dims [1] : !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> !tylo.fragment<f16, #tylo.ownership<(16,1), ((4,8),2):((0,1),8)>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: from_slots gives 1 values to a fragment of 2 slots
func.func @k(%v: f32) {
  %r = tylo.from_slots %v : (f32) -> !tylo.fragment<f32, #tylo.ownership<(16,1), ((4,8),2):((0,1),8)>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: shuffle width 12 must be a power of two in 1..32
func.func @k(%v: f32, %l: i32) {
  %r = tylo.shuffle "bfly" %v, %l width 12 : f32 -> f32
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: shuffle mode 'rot' is not one of ('idx', 'up', 'down', 'bfly')
func.func @k(%v: f32, %l: i32) {
  %r = tylo.shuffle "rot" %v, %l width 32 : f32 -> f32
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: a shuffle moves 8- to 64-bit values, not i1 (use a vote)
func.func @k(%v: i1, %l: i32) {
  %r = tylo.shuffle "idx" %v, %l width 32 : i1 -> i1
  func.return
}
