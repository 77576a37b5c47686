// RUN: tylo-opt %s -p tylo-lower-to-ptx --verify-diagnostics --split-input-file | filecheck %s
// Each chunk (split at the dashed lines) is IR that tylo-lower-to-ptx refuses. For each chunk
// tylo-opt prints a dashed line and then the pass's message, so the CHECK / CHECK-NEXT pair binds
// each message to its own chunk. Refusals that depend on the target: *_target_invalid.mlir.
// The first chunk is an empty module, so that every case follows a dashed line.
builtin.module {}

// -----
// Kernel pointer parameters are ld.param.u64 + cvta.to.global: a shared pointer cannot be one.
// CHECK:      {{^// -+$}}
// CHECK-NEXT: kernel pointer parameters are global
func.func @k(%p: !tylo.ptr<f32, shared>) {
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: arith.addi on i1
func.func @k(%a: i1, %b: i1) {
  %c = arith.addi %a, %b : i1
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ordered comparison of i1
func.func @k(%a: i1, %b: i1) {
  %c = arith.cmpi slt, %a, %b : i1
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: constant float comparisons are not lowered
func.func @k(%x: f32) {
  %c = arith.cmpf false, %x, %x : f32
  func.return
}

// -----
// cvt writes FP8 pairs only from .f32; f64 -> f32 -> e4m3 would round twice.
// CHECK:      {{^// -+$}}
// CHECK-NEXT: no f64 -> e4m3 conversion
func.func @k(%x: f64) {
  %y = arith.truncf %x : f64 to f8E4M3FN
  func.return
}

// -----
// Tiles must be lowered first (tylo-lower-tiles).
// CHECK:      {{^// -+$}}
// CHECK-NEXT: no PTX lowering for tylo.make_tile
func.func @k(%p: !tylo.ptr<f32, global>) {
  %t = tylo.make_tile %p : !tylo.ptr<f32, global> -> !tylo.tile<f32, global, (16,8):(8,1)>
  func.return
}

// -----
// Blocks lower in the order they are written: ^bb2 uses %y before ^bb1, which defines it.
// CHECK:      {{^// -+$}}
// CHECK-NEXT: used before it is defined
func.func @k(%x: i32) {
  cf.br ^bb1
^bb2:
  %z = arith.addi %y, %y : i32
  func.return
^bb1:
  %y = arith.addi %x, %x : i32
  cf.br ^bb2
}

// -----
// PTX has ex2/lg2.approx for .f32 only (passes/select/math.py): no double-precision exp2.
// CHECK:      {{^// -+$}}
// CHECK-NEXT: math.exp2 of f64: PTX computes it approximately for .f32 only
func.func @k(%x: f64) {
  %y = math.exp2 %x : f64
  func.return
}

// -----
// The flushing form neither: tylo.exp2_ftz of f64 is refused alike.
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tylo.exp2_ftz of f64: PTX computes it approximately for .f32 only
func.func @k(%x: f64) {
  %y = tylo.exp2_ftz %x : f64 -> f64
  func.return
}

// -----
// rsqrt.approx.f64 exists, but the ISA states no error bound for it.
// CHECK:      {{^// -+$}}
// CHECK-NEXT: math.rsqrt of f64: PTX computes it approximately for .f32 only
func.func @k(%x: f64) {
  %y = math.rsqrt %x : f64
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: math.log of f64: PTX computes it approximately for .f32 only
func.func @k(%x: f64) {
  %y = math.log %x : f64
  func.return
}

// -----
// FP8 has no arithmetic in PTX (convert to f32 first).
// CHECK:      {{^// -+$}}
// CHECK-NEXT: math.sqrt of .e4m3 is not lowered (f16, bf16, f32 and f64 are)
func.func @k(%x: f8E4M3FN) {
  %y = math.sqrt %x : f8E4M3FN
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: math.absf of .e5m2: PTX has no abs of it
func.func @k(%x: f8E5M2) {
  %y = math.absf %x : f8E5M2
  func.return
}
