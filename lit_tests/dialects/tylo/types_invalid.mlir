// RUN: tylo-opt %s --verify-diagnostics --split-input-file | filecheck %s
// Each chunk (split at the dashed lines) breaks one rule of a verifier of the tylo types
// (dialects/tylo/types.py).
// For each chunk tylo-opt prints a dashed line and then the refusal's message, so the
// CHECK / CHECK-NEXT pair binds each message to its own chunk. The valid forms are in ops.mlir.
// The first chunk is an empty module, so that every case follows a dashed line.
builtin.module {}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: memory space 'texture' is not one of ('global', 'shared', 'cluster')
func.func @k(%p: !tylo.ptr<bf16, global>, %i: i32) {
  %q = tylo.ptr_add %p, %i : !tylo.ptr<bf16, texture>, i32
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: index is not an element type of Tylo
func.func @k(%p: !tylo.ptr<bf16, global>) {
  %s = tylo.make_tile %p : !tylo.ptr<index, global> -> !tylo.tile<bf16, global, (32,64):(64,1)>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: !tylo.ptr<bf16, global> is not an element type of Tylo
func.func @k(%p: !tylo.ptr<bf16, global>) {
  %s = tylo.make_tile %p : !tylo.ptr<!tylo.ptr<bf16, global>, global> -> !tylo.tile<bf16, global, (32,64):(64,1)>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: memory space 'local' is not one of ('global', 'shared', 'cluster')
func.func @k(%p: !tylo.ptr<bf16, global>) {
  %s = tylo.make_tile %p : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, local, (32,64):(64,1)>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: index is not an element type of Tylo
func.func @k(%p: !tylo.ptr<bf16, global>) {
  %s = tylo.make_tile %p : !tylo.ptr<bf16, global> -> !tylo.tile<index, global, (32,64):(64,1)>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: index is not an element type of Tylo
func.func @k(%z: f32) {
  %c = tylo.splat %z : f32 -> !tylo.fragment<index, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: parameter 'ownership' does not verify:
// CHECK-NEXT: should be of base attribute tylo.ownership
func.func @k(%z: f32) {
  %c = tylo.splat %z : f32 -> !tylo.fragment<f32, #tylo.layout<(4,8):(1,4)>>
  func.return
}
