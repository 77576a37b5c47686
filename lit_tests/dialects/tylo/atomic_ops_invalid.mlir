// RUN: tylo-opt %s --verify-diagnostics --split-input-file | filecheck %s
// Each chunk breaks one rule of the verifier of tylo.atomic (dialects/tylo/atomic_ops.py): a
// vector of f32 values (red.global.add.v2/.v4.f32) goes to global memory, returns nothing and
// has 2 or 4 values; only add takes several values. The valid forms are in
// passes/tylo-select-ptx-warp.mlir.
builtin.module {}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: a vector atomic adds 2 or 4 f32 values to global memory and returns nothing (red.global.add.v2/.v4.f32)
func.func @k(%p: !tylo.ptr<f32, shared>, %f: f32) {
  tylo.atomic "add" "relaxed" "cta" %p, (%f, %f) : !tylo.ptr<f32, shared>, (f32, f32) -> ()
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: a vector atomic adds 2 or 4 f32 values to global memory and returns nothing (red.global.add.v2/.v4.f32)
func.func @k(%p: !tylo.ptr<f32, global>, %f: f32) {
  %a, %b = tylo.atomic "add" "relaxed" "gpu" %p, (%f, %f) : !tylo.ptr<f32, global>, (f32, f32) -> (f32, f32)
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: an atomic takes one value, or a pair of halves or a vector of 2 or 4 f32 values to add
func.func @k(%p: !tylo.ptr<f32, global>, %f: f32) {
  tylo.atomic "add" "relaxed" "gpu" %p, (%f, %f, %f) : !tylo.ptr<f32, global>, (f32, f32, f32) -> ()
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: an atomic takes one value, or a pair of halves or a vector of 2 or 4 f32 values to add
func.func @k(%p: !tylo.ptr<f32, global>, %f: f32) {
  tylo.atomic "max" "relaxed" "gpu" %p, (%f, %f) : !tylo.ptr<f32, global>, (f32, f32) -> ()
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: a vector atomic adds 2 or 4 f32 values to global memory and returns nothing (red.global.add.v2/.v4.f32)
func.func @k(%p: !tylo.ptr<f16, global>, %h: f16) {
  tylo.atomic "add" "relaxed" "gpu" %p, (%h, %h, %h, %h) : !tylo.ptr<f16, global>, (f16, f16, f16, f16) -> ()
  func.return
}
