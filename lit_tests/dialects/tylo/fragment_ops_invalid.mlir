// RUN: tylo-opt %s --verify-diagnostics --split-input-file | filecheck %s
// Each chunk (split at the dashed lines) breaks one rule of a verifier of the fragment ops
// (load/store_fragment, splat, slot, map, mma, mma_sync) in dialects/tylo/ops.py.
// For each chunk tylo-opt prints a dashed line and then the refusal's message, so the
// CHECK / CHECK-NEXT pair binds each message to its own chunk. The valid forms are in ops.mlir.
// The first chunk is an empty module, so that every case follows a dashed line.
builtin.module {}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: fragment of bf16 and tile of f32: element types differ
func.func @k(%fp: !tylo.ptr<f32, global>, %i: i32) {
  %ct = tylo.make_tile %fp : !tylo.ptr<f32, global> -> !tylo.tile<f32, global, (16,8):(8,1)>
  %c = tylo.load_fragment %ct, %i : !tylo.tile<f32, global, (16,8):(8,1)> -> !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tile !tylo.tile<f32, global, (?,8):(8,1)> has a runtime shape; take a static window
func.func @k(%fp: !tylo.ptr<f32, global>, %i: i32) {
  %ct = tylo.make_tile %fp [%i] : !tylo.ptr<f32, global> -> !tylo.tile<f32, global, (?,8):(8,1)>
  %c = tylo.load_fragment %ct, %i : !tylo.tile<f32, global, (?,8):(8,1)> -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ownership covers a 8x16 tile but the tile is 16x8
func.func @k(%fp: !tylo.ptr<f32, global>, %i: i32) {
  %ct = tylo.make_tile %fp : !tylo.ptr<f32, global> -> !tylo.tile<f32, global, (16,8):(8,1)>
  %c = tylo.load_fragment %ct, %i : !tylo.tile<f32, global, (16,8):(8,1)> -> !tylo.fragment<f32, #tylo.ownership<(8,16), ((4,8),(2,2)):((32,1),(16,8))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ownership covers a 16x8 tile but the tile is 128
func.func @k(%fp: !tylo.ptr<f32, global>, %i: i32) {
  %ct = tylo.make_tile %fp : !tylo.ptr<f32, global> -> !tylo.tile<f32, global, 128:1>
  %c = tylo.load_fragment %ct, %i : !tylo.tile<f32, global, 128:1> -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: fragment of f32 and tile of bf16: element types differ
func.func @k(%p: !tylo.ptr<bf16, global>, %i: i32, %z: f32) {
  %c = tylo.splat %z : f32 -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %ct = tylo.make_tile %p : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (16,8):(8,1)>
  tylo.store_fragment %c, %ct, %i : !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>, !tylo.tile<bf16, global, (16,8):(8,1)>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tile !tylo.tile<f32, global, (?,8):(8,1)> has a runtime shape
func.func @k(%fp: !tylo.ptr<f32, global>, %i: i32, %z: f32) {
  %c = tylo.splat %z : f32 -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %ct = tylo.make_tile %fp [%i] : !tylo.ptr<f32, global> -> !tylo.tile<f32, global, (?,8):(8,1)>
  tylo.store_fragment %c, %ct, %i : !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>, !tylo.tile<f32, global, (?,8):(8,1)>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: ownership covers a 16x8 tile but the tile is 16x16
func.func @k(%fp: !tylo.ptr<f32, global>, %i: i32, %z: f32) {
  %c = tylo.splat %z : f32 -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %ct = tylo.make_tile %fp : !tylo.ptr<f32, global> -> !tylo.tile<f32, global, (16,16):(16,1)>
  tylo.store_fragment %c, %ct, %i : !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>, !tylo.tile<f32, global, (16,16):(16,1)>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: splat of bf16 into a fragment of f32
func.func @k(%v: bf16) {
  %c = tylo.splat %v : bf16 -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: slot 4 is outside the fragment's 4 slots
func.func @k(%z: f32) {
  %c = tylo.splat %z : f32 -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %e = tylo.slot %c[4] : !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> f32
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: slot result must be the fragment's element type
func.func @k(%z: f32) {
  %c = tylo.splat %z : f32 -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %e = tylo.slot %c[0] : !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> bf16
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: map input ownership (16,8), ((4,8),(2,2)):((2,16),(1,8)) differs from the result's (16,8), ((4,8),(2,2)):((32,1),(16,8))
func.func @k(%z: f32) {
  %c = tylo.splat %z : f32 -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>
  %m = tylo.map %c : (!tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>) -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> {
  ^bb0(%x: f32):
    tylo.yield %x : f32
  }
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: map body takes [BFloat16Type()], the inputs' element types are [Float32Type()]
func.func @k(%z: f32) {
  %c = tylo.splat %z : f32 -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %m = tylo.map %c : (!tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>) -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> {
  ^bb0(%x: bf16):
    tylo.yield %z : f32
  }
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: map body takes [Float32Type(), Float32Type()], the inputs' element types are [Float32Type()]
func.func @k(%z: f32) {
  %c = tylo.splat %z : f32 -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %m = tylo.map %c : (!tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>) -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> {
  ^bb0(%x: f32, %y: f32):
    tylo.yield %x : f32
  }
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: map body must end with tylo.yield
func.func @k(%z: f32) {
  %c = tylo.splat %z : f32 -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %m = tylo.map %c : (!tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>) -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> {
  ^bb0(%x: f32):
    cf.br ^bb0(%x : f32)
  }
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: map body yields bf16, the result holds f32
func.func @k(%v: bf16, %z: f32) {
  %c = tylo.splat %z : f32 -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %m = tylo.map %c : (!tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>) -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> {
  ^bb0(%x: f32):
    tylo.yield %v : bf16
  }
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: operand A has ownership (16,8), ((4,8),(2,2)):((2,16),(1,8)); the plan needs (16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))
func.func @k(%v: bf16, %z: f32) {
  %a = tylo.splat %v : bf16 -> !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>
  %b = tylo.splat %v : bf16 -> !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>
  %c = tylo.splat %z : f32 -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %d = tylo.mma <m16n8k16, bf16, bf16, f32, warps = (1,1), repeat = (1,1), k = 16> %a, %b, %c : !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>, !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>, !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: operand B has ownership (16,16), ((4,8),(2,2,2)):((32,1),(16,8,128)); the plan needs (16,8), ((4,8),(2,2)):((2,16),(1,8))
func.func @k(%v: bf16, %z: f32) {
  %a = tylo.splat %v : bf16 -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  %b = tylo.splat %v : bf16 -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  %c = tylo.splat %z : f32 -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %d = tylo.mma <m16n8k16, bf16, bf16, f32, warps = (1,1), repeat = (1,1), k = 16> %a, %b, %c : !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>, !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>, !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: operand C has ownership (16,8), ((4,8),(2,2)):((2,16),(1,8)); the plan needs (16,8), ((4,8),(2,2)):((32,1),(16,8))
func.func @k(%v: bf16, %z: f32) {
  %a = tylo.splat %v : bf16 -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  %b = tylo.splat %v : bf16 -> !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>
  %c = tylo.splat %z : f32 -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>
  %d = tylo.mma <m16n8k16, bf16, bf16, f32, warps = (1,1), repeat = (1,1), k = 16> %a, %b, %c : !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>, !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>, !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>> -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: operand A has ownership (16,16), ((4,8),(2,2,2)):((32,1),(16,8,128)); the plan needs (32,16)
func.func @k(%v: bf16, %z: f32) {
  %a = tylo.splat %v : bf16 -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  %b = tylo.splat %v : bf16 -> !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>
  %c = tylo.splat %z : f32 -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %d = tylo.mma <m16n8k16, bf16, bf16, f32, warps = (2,1), repeat = (1,1), k = 16> %a, %b, %c : !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>, !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>, !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: operand A holds f16; the atom takes BFloat16
func.func @k(%v: bf16, %z: f32, %h: f16) {
  %a = tylo.splat %h : f16 -> !tylo.fragment<f16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  %b = tylo.splat %v : bf16 -> !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>
  %c = tylo.splat %z : f32 -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %d = tylo.mma <m16n8k16, bf16, bf16, f32, warps = (1,1), repeat = (1,1), k = 16> %a, %b, %c : !tylo.fragment<f16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>, !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>, !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: operand B holds f16; the atom takes BFloat16
func.func @k(%v: bf16, %z: f32, %h: f16) {
  %a = tylo.splat %v : bf16 -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  %b = tylo.splat %h : f16 -> !tylo.fragment<f16, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>
  %c = tylo.splat %z : f32 -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %d = tylo.mma <m16n8k16, bf16, bf16, f32, warps = (1,1), repeat = (1,1), k = 16> %a, %b, %c : !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>, !tylo.fragment<f16, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>, !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: operand C holds bf16; the atom takes Float32
func.func @k(%v: bf16) {
  %a = tylo.splat %v : bf16 -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  %b = tylo.splat %v : bf16 -> !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>
  %c = tylo.splat %v : bf16 -> !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %d = tylo.mma <m16n8k16, bf16, bf16, f32, warps = (1,1), repeat = (1,1), k = 16> %a, %b, %c : !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>, !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>, !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: mma result must have the accumulator's type
func.func @k(%v: bf16, %z: f32) {
  %a = tylo.splat %v : bf16 -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  %b = tylo.splat %v : bf16 -> !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>
  %c = tylo.splat %z : f32 -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %d = tylo.mma <m16n8k16, bf16, bf16, f32, warps = (1,1), repeat = (1,1), k = 16> %a, %b, %c : !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>, !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>, !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((2,16),(1,8))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: mma_sync m16n8k16, bf16, bf16, f32: operand A needs 8 values, got 7
func.func @k(%v: bf16, %z: f32) {
  %d0, %d1, %d2, %d3 = tylo.mma_sync <m16n8k16, bf16, bf16, f32, warps = (1,1), repeat = (1,1), k = 16>(%v, %v, %v, %v, %v, %v, %v), (%v, %v, %v, %v), (%z, %z, %z, %z) : (bf16, bf16, bf16, bf16, bf16, bf16, bf16), (bf16, bf16, bf16, bf16), (f32, f32, f32, f32) -> (f32, f32, f32, f32)
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: mma_sync m16n8k16, bf16, bf16, f32: operand B needs 4 values, got 3
func.func @k(%v: bf16, %z: f32) {
  %d0, %d1, %d2, %d3 = tylo.mma_sync <m16n8k16, bf16, bf16, f32, warps = (1,1), repeat = (1,1), k = 16>(%v, %v, %v, %v, %v, %v, %v, %v), (%v, %v, %v), (%z, %z, %z, %z) : (bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16), (bf16, bf16, bf16), (f32, f32, f32, f32) -> (f32, f32, f32, f32)
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: mma_sync m16n8k16, bf16, bf16, f32: operand C needs 4 values, got 5
func.func @k(%v: bf16, %z: f32) {
  %d0, %d1, %d2, %d3 = tylo.mma_sync <m16n8k16, bf16, bf16, f32, warps = (1,1), repeat = (1,1), k = 16>(%v, %v, %v, %v, %v, %v, %v, %v), (%v, %v, %v, %v), (%z, %z, %z, %z, %z) : (bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16), (bf16, bf16, bf16, bf16), (f32, f32, f32, f32, f32) -> (f32, f32, f32, f32)
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: mma_sync m16n8k16, bf16, bf16, f32: operand A holds f16; the atom takes bf16
func.func @k(%v: bf16, %z: f32, %h: f16) {
  %d0, %d1, %d2, %d3 = tylo.mma_sync <m16n8k16, bf16, bf16, f32, warps = (1,1), repeat = (1,1), k = 16>(%v, %v, %v, %v, %v, %v, %v, %h), (%v, %v, %v, %v), (%z, %z, %z, %z) : (bf16, bf16, bf16, bf16, bf16, bf16, bf16, f16), (bf16, bf16, bf16, bf16), (f32, f32, f32, f32) -> (f32, f32, f32, f32)
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: mma_sync m16n8k16, bf16, bf16, f32: operand C holds i32; the atom takes f32
func.func @k(%i: i32, %v: bf16, %z: f32) {
  %d0, %d1, %d2, %d3 = tylo.mma_sync <m16n8k16, bf16, bf16, f32, warps = (1,1), repeat = (1,1), k = 16>(%v, %v, %v, %v, %v, %v, %v, %v), (%v, %v, %v, %v), (%z, %z, %z, %i) : (bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16), (bf16, bf16, bf16, bf16), (f32, f32, f32, i32) -> (f32, f32, f32, f32)
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: mma_sync results must have the accumulator's types
func.func @k(%v: bf16, %z: f32) {
  %d0, %d1, %d2, %d3 = tylo.mma_sync <m16n8k16, bf16, bf16, f32, warps = (1,1), repeat = (1,1), k = 16>(%v, %v, %v, %v, %v, %v, %v, %v), (%v, %v, %v, %v), (%z, %z, %z, %z) : (bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16), (bf16, bf16, bf16, bf16), (f32, f32, f32, f32) -> (f32, f32, f32, bf16)
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: exp2_ftz takes and gives one float type, not i32
func.func @k(%x: i32) {
  %y = tylo.exp2_ftz %x : i32 -> i32
  func.return
}
