// RUN: tylo-opt %s -p tylo-lower-tiles --verify-diagnostics --split-input-file | filecheck %s
// Each chunk (split at the dashed lines) is IR that tylo-lower-tiles refuses: tiles lower to
// address arithmetic on the pointer of their tylo.make_tile, so every tile must come from one
// and be used only by ops that lower. For each chunk tylo-opt prints a dashed line and then the
// pass's message; the CHECK / CHECK-NEXT pair binds each message to its own chunk.
// The first chunk is an empty module, so that every case follows a dashed line.
builtin.module {}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: a tile must come from tylo.make_tile or tylo.window, not
func.func @k(%t: !tylo.tile<bf16, global, (32,64):(64,1)>, %i: i32) {
  %e = tylo.load_element %t [%i, %i] : !tylo.tile<bf16, global, (32,64):(64,1)> -> bf16
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tile used by func.return, which has no lowering
func.func @k(%p: !tylo.ptr<bf16, global>) -> !tylo.tile<bf16, global, (32,64):(64,1)> {
  %s = tylo.make_tile %p : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (32,64):(64,1)>
  func.return %s : !tylo.tile<bf16, global, (32,64):(64,1)>
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: func.func still produces a tile
func.func @k(%t: !tylo.tile<bf16, global, (32,64):(64,1)>) {
  func.return
}
