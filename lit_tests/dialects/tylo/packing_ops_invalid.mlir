// RUN: tylo-opt %s --verify-diagnostics --split-input-file | filecheck %s
// Each chunk breaks one rule of a verifier of dialects/tylo/fragment_ops.py (take_slots, pack,
// unpack, pack_word); the valid forms are in lit_tests/passes/tylo-lower-fragments-packing.mlir.
builtin.module {}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: take_slots: slot 4 is outside the sources' 4
func.func @k(%f: !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>) {
  %g = tylo.take_slots %f {slots = array<i64: 0, 1, 2, 4>} : !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(8,16))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: pack of 4 slots into 1 words of 2 BFloat16 elements
func.func @k(%f: !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>) {
  %p = tylo.pack %f {to = "BFloat16", convert} : !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> !tylo.fragment<i32, #tylo.ownership<(16,8), ((4,8),1):((32,1),0)>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: pack to BFloat16 without conversion takes bf16 values
func.func @k(%f: !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>) {
  %p = tylo.pack %f {to = "BFloat16"} : !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> !tylo.fragment<i32, #tylo.ownership<(16,8), ((4,8),2):((32,1),16)>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: pack to Float8E4M3 converts Float32, not Int32
func.func @k(%a: i32) {
  %w = tylo.pack_word %a, %a, %a, %a {to = "Float8E4M3", convert} : i32, i32, i32, i32 -> i32
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: Float32 does not pack into 32-bit words
func.func @k(%w: i32) {
  %a, %b = tylo.unpack_word %w {dtype = "Float32"} : i32 -> f32, f32
  func.return
}
