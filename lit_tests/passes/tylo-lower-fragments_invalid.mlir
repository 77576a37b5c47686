// RUN: tylo-opt %s -p tylo-lower-fragments --verify-diagnostics --split-input-file | filecheck %s
// Each chunk (split at the dashed lines) is IR that tylo-lower-fragments refuses: a fragment
// becomes one scalar per slot, which only the tylo and scf ops it knows can take. For each chunk
// tylo-opt prints a dashed line and then the pass's message; the CHECK / CHECK-NEXT pair binds
// each message to its own chunk.
// The first chunk is an empty module, so that every case follows a dashed line.
builtin.module {}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: func.return on fragments is not supported
func.func @k(%z: f32) -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> {
  %c = tylo.splat %z : f32 -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  func.return %c : !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: func.call on fragments is not supported
func.func private @use(!tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>)
func.func @k(%z: f32) {
  %c = tylo.splat %z : f32 -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  func.call @use(%c) : (!tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>) -> ()
  func.return
}
