// RUN: tylo-opt %s --verify-diagnostics --split-input-file | filecheck %s
// Each chunk (split at the dashed lines) breaks one rule of a verifier of the matrix-copy ops in
// dialects/tylo/matrix_ops.py.
// For each chunk tylo-opt prints a dashed line and then the refusal's message, so the
// CHECK / CHECK-NEXT pair binds each message to its own chunk. The valid forms are in ops.mlir.
// The first chunk is an empty module, so that every case follows a dashed line.
builtin.module {}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tylo.matrix_load needs a shared tile, got a global one
func.func @k(%g: !tylo.ptr<bf16, global>, %i: i32) {
  %s = tylo.make_tile %g : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (16,16):(16,1)>
  %f = tylo.matrix_load %s, %i axis 1 : !tylo.tile<bf16, global, (16,16):(16,1)> -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tylo.matrix_load moves 8- or 16-bit elements, not f32
func.func @k(%i: i32) {
  %q = tylo.shared_alloc 256, align 16 : !tylo.ptr<f32, shared>
  %s = tylo.make_tile %q : !tylo.ptr<f32, shared> -> !tylo.tile<f32, shared, (16,16):(16,1)>
  %f = tylo.matrix_load %s, %i axis 1 : !tylo.tile<f32, shared, (16,16):(16,1)> -> !tylo.fragment<f32, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tylo.matrix_load: axis 2 must be 0 (rows) or 1 (columns)
func.func @k(%i: i32) {
  %p = tylo.shared_alloc 256, align 16 : !tylo.ptr<bf16, shared>
  %s = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, (16,16):(16,1)>
  %f = tylo.matrix_load %s, %i axis 2 : !tylo.tile<bf16, shared, (16,16):(16,1)> -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tylo.matrix_load: axis 0 is not the unit-stride axis of layout (16,16):(16,1) (axis 1 is)
func.func @k(%i: i32) {
  %p = tylo.shared_alloc 256, align 16 : !tylo.ptr<bf16, shared>
  %s = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, (16,16):(16,1)>
  %f = tylo.matrix_load %s, %i axis 0 {trans} : !tylo.tile<bf16, shared, (16,16):(16,1)> -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tylo.matrix_load: axis 1 is not the unit-stride axis of layout (16,16):(16,2)
func.func @k(%i: i32) {
  %p = tylo.shared_alloc 256, align 16 : !tylo.ptr<bf16, shared>
  %s = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, (16,16):(16,2)>
  %f = tylo.matrix_load %s, %i axis 1 : !tylo.tile<bf16, shared, (16,16):(16,2)> -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tylo.matrix_load: ownership (16,16), ((4,8),(2,2,2)):((32,1),(8,16,128)) of bf16 has no matrix copy plan along axis 1
func.func @k(%i: i32) {
  %p = tylo.shared_alloc 256, align 16 : !tylo.ptr<bf16, shared>
  %s = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, (16,16):(16,1)>
  %f = tylo.matrix_load %s, %i axis 1 : !tylo.tile<bf16, shared, (16,16):(16,1)> -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(8,16,128))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tylo.matrix_load: the plan along axis 1 must not have trans
func.func @k(%i: i32) {
  %p = tylo.shared_alloc 256, align 16 : !tylo.ptr<bf16, shared>
  %s = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, (16,16):(16,1)>
  %f = tylo.matrix_load %s, %i axis 1 {trans} : !tylo.tile<bf16, shared, (16,16):(16,1)> -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tylo.matrix_load: the plan along axis 0 needs trans
func.func @k(%i: i32) {
  %p = tylo.shared_alloc 256, align 16 : !tylo.ptr<bf16, shared>
  %c = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, (16,16):(1,16)>
  %f = tylo.matrix_load %c, %i axis 0 : !tylo.tile<bf16, shared, (16,16):(1,16)> -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ownership covers a 16x32 tile but the tile is 16x16
func.func @k(%i: i32) {
  %p = tylo.shared_alloc 256, align 16 : !tylo.ptr<bf16, shared>
  %s = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, (16,16):(16,1)>
  %f = tylo.matrix_load %s, %i axis 1 : !tylo.tile<bf16, shared, (16,16):(16,1)> -> !tylo.fragment<bf16, #tylo.ownership<(16,32), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: fragment of f16 and tile of bf16: element types differ
func.func @k(%i: i32, %h: f16) {
  %p = tylo.shared_alloc 256, align 16 : !tylo.ptr<bf16, shared>
  %s = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, (16,16):(16,1)>
  %a = tylo.splat %h : f16 -> !tylo.fragment<f16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  tylo.matrix_store %a, %s, %i axis 1 : !tylo.fragment<f16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>, !tylo.tile<bf16, shared, (16,16):(16,1)>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tylo.matrix_store: the plan along axis 1 must not have trans
func.func @k(%i: i32, %v: bf16) {
  %p = tylo.shared_alloc 256, align 16 : !tylo.ptr<bf16, shared>
  %s = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, (16,16):(16,1)>
  %a = tylo.splat %v : bf16 -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  tylo.matrix_store %a, %s, %i axis 1 {trans} : !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>, !tylo.tile<bf16, shared, (16,16):(16,1)>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tylo.ldmatrix: the number of matrices 3 must be 1, 2 or 4
func.func @k() {
  %p = tylo.shared_alloc 256, align 16 : !tylo.ptr<bf16, shared>
  %e0, %e1, %e2, %e3 = tylo.ldmatrix 3 %p {trans} : !tylo.ptr<bf16, shared> -> (bf16, bf16, bf16, bf16)
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tylo.ldmatrix of 2 matrices of bf16 needs 4 results, got 3
func.func @k() {
  %p = tylo.shared_alloc 256, align 16 : !tylo.ptr<bf16, shared>
  %e0, %e1, %e2 = tylo.ldmatrix 2 %p {trans} : !tylo.ptr<bf16, shared> -> (bf16, bf16, bf16)
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tylo.ldmatrix: results must be bf16, got f16
func.func @k() {
  %p = tylo.shared_alloc 256, align 16 : !tylo.ptr<bf16, shared>
  %e0, %e1, %e2, %e3 = tylo.ldmatrix 2 %p {trans} : !tylo.ptr<bf16, shared> -> (bf16, bf16, f16, bf16)
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tylo.ldmatrix addresses shared memory, not global
func.func @k(%g: !tylo.ptr<bf16, global>) {
  %e0, %e1, %e2, %e3 = tylo.ldmatrix 2 %g {trans} : !tylo.ptr<bf16, global> -> (bf16, bf16, bf16, bf16)
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tylo.ldmatrix through a pointer takes no coordinates
func.func @k(%i: i32) {
  %p = tylo.shared_alloc 256, align 16 : !tylo.ptr<bf16, shared>
  %e0, %e1, %e2, %e3 = tylo.ldmatrix 2 %p[%i] {trans} : !tylo.ptr<bf16, shared> -> (bf16, bf16, bf16, bf16)
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tile of rank 2 needs 2 coordinates, got 1
func.func @k(%i: i32) {
  %p = tylo.shared_alloc 256, align 16 : !tylo.ptr<bf16, shared>
  %s = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, (16,16):(16,1)>
  %e0, %e1 = tylo.ldmatrix 1 %s[%i] : !tylo.tile<bf16, shared, (16,16):(16,1)> -> (bf16, bf16)
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tylo.ldmatrix moves 8- or 16-bit elements, not f32
func.func @k(%i: i32) {
  %q = tylo.shared_alloc 256, align 16 : !tylo.ptr<f32, shared>
  %s = tylo.make_tile %q : !tylo.ptr<f32, shared> -> !tylo.tile<f32, shared, (16,16):(16,1)>
  %e0, %e1 = tylo.ldmatrix 1 %s[%i, %i] : !tylo.tile<f32, shared, (16,16):(16,1)> -> (f32, f32)
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tylo.stmatrix of 1 matrices of bf16 needs 2 operands, got 1
func.func @k(%v: bf16) {
  %p = tylo.shared_alloc 256, align 16 : !tylo.ptr<bf16, shared>
  tylo.stmatrix 1(%v), %p : (bf16), !tylo.ptr<bf16, shared>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tylo.stmatrix: operands must be bf16, got f16
func.func @k(%v: bf16, %h: f16) {
  %p = tylo.shared_alloc 256, align 16 : !tylo.ptr<bf16, shared>
  tylo.stmatrix 1(%v, %h), %p : (bf16, f16), !tylo.ptr<bf16, shared>
  func.return
}
