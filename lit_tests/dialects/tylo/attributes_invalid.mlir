// RUN: tylo-opt %s --parsing-diagnostics --split-input-file | filecheck %s
// Each chunk (split at the dashed lines) breaks one rule of the parser of a tylo attribute
// (dialects/tylo/attributes.py).
// For each chunk tylo-opt prints a dashed line, where the parser stopped (file:line:col)
// and the message; the CHECK lines bind each message to its chunk and line.
// The first chunk is an empty module, so that every case follows a dashed line.
builtin.module {}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: attributes_invalid.mlir:[[# @LINE + 3]]:80
// CHECK:      Layout((32,64), (64)): shape and stride are not congruent
func.func @k(%p: !tylo.ptr<bf16, global>) {
  %s = tylo.make_tile %p : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (32,64):(64)>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: attributes_invalid.mlir:[[# @LINE + 3]]:80
// CHECK:      Swizzle(3, 3, 2): |shift| = 2 < bits = 3: the source and target fields overlap
func.func @k(%p: !tylo.ptr<bf16, global>) {
  %s = tylo.make_tile %p : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, Sw<3,3,2> o (8,64):(64,1)>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: attributes_invalid.mlir:[[# @LINE + 3]]:80
// CHECK:      Swizzle(-1, 3, 3): bits and base must be non-negative
func.func @k(%p: !tylo.ptr<bf16, global>) {
  %s = tylo.make_tile %p : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, Sw<-1,3,3> o (8,64):(64,1)>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: attributes_invalid.mlir:[[# @LINE + 3]]:67
// CHECK:      Ownership: layout ((4,8),(2,2)):((32,1),(16,9)) reaches index 128, outside the 16x8 tile
func.func @k(%z: f32) {
  %c = tylo.splat %z : f32 -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,9))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: attributes_invalid.mlir:[[# @LINE + 3]]:67
// CHECK:      Ownership: layout ((4,8),(2,2)):((32,?),(16,8)) must be a static Layout
func.func @k(%z: f32) {
  %c = tylo.splat %z : f32 -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,?),(16,8))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: attributes_invalid.mlir:[[# @LINE + 3]]:67
// CHECK:      must be a static Layout
func.func @k(%z: f32) {
  %c = tylo.splat %z : f32 -> !tylo.fragment<f32, #tylo.ownership<(16,8), Sw<1,3,3> o ((4,8),(2,2)):((32,1),(16,8))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: attributes_invalid.mlir:[[# @LINE + 6]]:18
// CHECK:      invalid tiled_mma: MMAAtom((16, 8, 16), Float32, Float32, b=Float32): no mma.sync instruction has this shape and these element types
func.func @k(%v: bf16, %z: f32) {
  %a = tylo.splat %v : bf16 -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  %b = tylo.splat %v : bf16 -> !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>
  %c = tylo.splat %z : f32 -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %d = tylo.mma <m16n8k16, f32, f32, f32, warps = (1,1), repeat = (1,1), k = 16> %a, %b, %c : !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>, !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>, !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: attributes_invalid.mlir:[[# @LINE + 6]]:18
// CHECK:      invalid tiled_mma: TiledMMA: K = 24 must be a positive multiple of the atom's k = 16
func.func @k(%v: bf16, %z: f32) {
  %a = tylo.splat %v : bf16 -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  %b = tylo.splat %v : bf16 -> !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>
  %c = tylo.splat %z : f32 -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %d = tylo.mma <m16n8k16, bf16, bf16, f32, warps = (1,1), repeat = (1,1), k = 24> %a, %b, %c : !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>, !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>, !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: attributes_invalid.mlir:[[# @LINE + 6]]:18
// CHECK:      invalid tiled_mma: TiledMMA: warps (0, 1) must be two positive static integers
func.func @k(%v: bf16, %z: f32) {
  %a = tylo.splat %v : bf16 -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  %b = tylo.splat %v : bf16 -> !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>
  %c = tylo.splat %z : f32 -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %d = tylo.mma <m16n8k16, bf16, bf16, f32, warps = (0,1), repeat = (1,1), k = 16> %a, %b, %c : !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>, !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>, !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: attributes_invalid.mlir:[[# @LINE + 6]]:18
// CHECK:      invalid tiled_mma: expected an mMnNkK shape, got m16n8
func.func @k(%v: bf16, %z: f32) {
  %a = tylo.splat %v : bf16 -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  %b = tylo.splat %v : bf16 -> !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>
  %c = tylo.splat %z : f32 -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %d = tylo.mma <m16n8, bf16, bf16, f32, warps = (1,1), repeat = (1,1), k = 16> %a, %b, %c : !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>, !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>, !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: attributes_invalid.mlir:[[# @LINE + 3]]:29
// CHECK:      invalid tiled_mma: unknown atom modifier 'saturate' (satfinite, and.popc, xor.popc)
func.func @k(%w: i32) {
  %x0, %x1 = tylo.mma_sync <m8n8k32, s4, s4, s32, saturate, warps = (1,1), repeat = (1,1), k = 32>(%w), (%w), (%w, %w) : (i32), (i32), (i32, i32) -> (i32, i32)
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: attributes_invalid.mlir:[[# @LINE + 3]]:29
// CHECK:      invalid tiled_mma: MMAAtom((8, 8, 128), Bit1, Int32, b=Bit1): a Bit1 mma.sync needs bit_op='and' or 'xor' (got 'nand')
func.func @k(%w: i32) {
  %x0, %x1 = tylo.mma_sync <m8n8k128, b1, b1, s32, nand.popc, warps = (1,1), repeat = (1,1), k = 128>(%w), (%w), (%w, %w) : (i32), (i32), (i32, i32) -> (i32, i32)
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: attributes_invalid.mlir:[[# @LINE + 3]]:29
// CHECK:      invalid tiled_mma: MMAAtom((8, 8, 4), Float64, Float64, b=Float64): satfinite=True, but only integer mma.sync
func.func @k(%z: f64) {
  %x0, %x1 = tylo.mma_sync <m8n8k4, f64, f64, f64, satfinite, warps = (1,1), repeat = (1,1), k = 4>(%z), (%z), (%z, %z) : (f64), (f64), (f64, f64) -> (f64, f64)
  func.return
}
