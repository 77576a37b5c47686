// RUN: tylo-opt %s --verify-diagnostics --split-input-file | filecheck %s
// Each chunk (split at the dashed lines) breaks one rule of a verifier of the tylo ops in
// dialects/tylo/ops.py (fragment ops: fragment_ops_invalid.mlir).
// For each chunk tylo-opt prints a dashed line and then the refusal's message, so the
// CHECK / CHECK-NEXT pair binds each message to its own chunk. The valid forms are in ops.mlir.
// The first chunk is an empty module, so that every case follows a dashed line.
builtin.module {}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: dimension 'w' must be x, y or z
func.func @k() {
  %t = tylo.thread_idx "w" : i32
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: dimension 'X' must be x, y or z
func.func @k() {
  %t = tylo.block_idx "X" : i32
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: dimension 'xy' must be x, y or z
func.func @k() {
  %t = tylo.block_dim "xy" : i32
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: dimension '' must be x, y or z
func.func @k() {
  %t = tylo.grid_dim "" : i32
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: alignment 12 must be a power of two
func.func @k() {
  %s = tylo.shared_alloc 256, align 12 : !tylo.ptr<bf16, shared>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: alignment 0 must be a power of two
func.func @k() {
  %s = tylo.shared_alloc 256, align 0 : !tylo.ptr<bf16, shared>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: shared_alloc needs a positive element count
func.func @k() {
  %s = tylo.shared_alloc 0, align 16 : !tylo.ptr<bf16, shared>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: shared_alloc needs a positive element count
func.func @k() {
  %s = tylo.shared_alloc -4, align 16 : !tylo.ptr<bf16, shared>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: shared_alloc must return a shared pointer
func.func @k() {
  %s = tylo.shared_alloc 256, align 16 : !tylo.ptr<bf16, global>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: load of !tylo.ptr<bf16, global> must produce bf16, not f32
func.func @k(%p: !tylo.ptr<bf16, global>) {
  %l = tylo.load %p : !tylo.ptr<bf16, global> -> f32
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: store of f32 through !tylo.ptr<bf16, global>: element types differ
func.func @k(%p: !tylo.ptr<bf16, global>, %z: f32) {
  tylo.store %z, %p : f32, !tylo.ptr<bf16, global>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: layout (?,?):(?,1) has 3 runtime leaves but 2 values were given
func.func @k(%p: !tylo.ptr<bf16, global>, %i: i32) {
  %t = tylo.make_tile %p [%i, %i] : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (?,?):(?,1)>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: layout (32,64):(64,1) has 0 runtime leaves but 1 values were given
func.func @k(%p: !tylo.ptr<bf16, global>, %i: i32) {
  %s = tylo.make_tile %p [%i] : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (32,64):(64,1)>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: layout Sw<3,3,3> o (?,64):(64,1) has 1 runtime leaves but 0 values were given
func.func @k(%p: !tylo.ptr<bf16, global>) {
  %s = tylo.make_tile %p : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, Sw<3,3,3> o (?,64):(64,1)>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tile !tylo.tile<f32, global, (32,64):(64,1)> does not match pointer !tylo.ptr<bf16, global>
func.func @k(%p: !tylo.ptr<bf16, global>) {
  %s = tylo.make_tile %p : !tylo.ptr<bf16, global> -> !tylo.tile<f32, global, (32,64):(64,1)>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tile !tylo.tile<bf16, shared, (32,64):(64,1)> does not match pointer !tylo.ptr<bf16, global>
func.func @k(%p: !tylo.ptr<bf16, global>) {
  %s = tylo.make_tile %p : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, shared, (32,64):(64,1)>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: make_tile makes a root tile; use tylo.window for a window
func.func @k(%p: !tylo.ptr<bf16, global>) {
  %s = tylo.make_tile %p : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (32,64):(64,1), [16,16]>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: window of rank 2 needs 2 origin coordinates, got 1
func.func @k(%p: !tylo.ptr<bf16, global>, %i: i32) {
  %t = tylo.make_tile %p [%i, %i, %i] : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (?,?):(?,1)>
  %w = tylo.window %t [%i] : !tylo.tile<bf16, global, (?,?):(?,1)> -> !tylo.tile<bf16, global, (?,?):(?,1), [16,16]>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: window shape [16] has rank 1, the layout (?,?):(?,1) has rank 2
func.func @k(%p: !tylo.ptr<bf16, global>, %i: i32) {
  %t = tylo.make_tile %p [%i, %i, %i] : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (?,?):(?,1)>
  %w = tylo.window %t [%i, %i] : !tylo.tile<bf16, global, (?,?):(?,1)> -> !tylo.tile<bf16, global, (?,?):(?,1), [16]>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: window result must carry a window shape
func.func @k(%p: !tylo.ptr<bf16, global>, %i: i32) {
  %t = tylo.make_tile %p [%i, %i, %i] : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (?,?):(?,1)>
  %w = tylo.window %t [%i, %i] : !tylo.tile<bf16, global, (?,?):(?,1)> -> !tylo.tile<bf16, global, (?,?):(?,1)>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: window extents must be positive
func.func @k(%p: !tylo.ptr<bf16, global>, %i: i32) {
  %t = tylo.make_tile %p [%i, %i, %i] : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (?,?):(?,1)>
  %w = tylo.window %t [%i, %i] : !tylo.tile<bf16, global, (?,?):(?,1)> -> !tylo.tile<bf16, global, (?,?):(?,1), [16,0]>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: window extent 128 exceeds extent 64 of axis 1
func.func @k(%p: !tylo.ptr<bf16, global>, %i: i32) {
  %s = tylo.make_tile %p : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (32,64):(64,1)>
  %w = tylo.window %s [%i, %i] : !tylo.tile<bf16, global, (32,64):(64,1)> -> !tylo.tile<bf16, global, (32,64):(64,1), [32,128]>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: window extent 17 exceeds extent 16 of axis 0
func.func @k(%p: !tylo.ptr<bf16, global>, %i: i32) {
  %s = tylo.make_tile %p : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (32,64):(64,1)>
  %w = tylo.window %s [%i, %i] : !tylo.tile<bf16, global, (32,64):(64,1)> -> !tylo.tile<bf16, global, (32,64):(64,1), [16,16]>
  %w2 = tylo.window %w [%i, %i] : !tylo.tile<bf16, global, (32,64):(64,1), [16,16]> -> !tylo.tile<bf16, global, (32,64):(64,1), [17,16]>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: must keep the element type, space and layout of !tylo.tile<bf16, global, (?,?):(?,1)>
func.func @k(%p: !tylo.ptr<bf16, global>, %i: i32) {
  %t = tylo.make_tile %p [%i, %i, %i] : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (?,?):(?,1)>
  %w = tylo.window %t [%i, %i] : !tylo.tile<bf16, global, (?,?):(?,1)> -> !tylo.tile<f32, global, (?,?):(?,1), [16,16]>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: window !tylo.tile<bf16, global, (?,?):(1,?), [16,16]> must keep the element type
func.func @k(%p: !tylo.ptr<bf16, global>, %i: i32) {
  %t = tylo.make_tile %p [%i, %i, %i] : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (?,?):(?,1)>
  %w = tylo.window %t [%i, %i] : !tylo.tile<bf16, global, (?,?):(?,1)> -> !tylo.tile<bf16, global, (?,?):(1,?), [16,16]>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tile of rank 2 needs 2 coordinates, got 1
func.func @k(%p: !tylo.ptr<bf16, global>, %i: i32) {
  %s = tylo.make_tile %p : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (32,64):(64,1)>
  %e = tylo.load_element %s [%i] : !tylo.tile<bf16, global, (32,64):(64,1)> -> bf16
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: load_element result must be the tile's element type
func.func @k(%p: !tylo.ptr<bf16, global>, %i: i32) {
  %s = tylo.make_tile %p : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (32,64):(64,1)>
  %e = tylo.load_element %s [%i, %i] : !tylo.tile<bf16, global, (32,64):(64,1)> -> f32
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tile of rank 2 needs 2 coordinates, got 3
func.func @k(%p: !tylo.ptr<bf16, global>, %i: i32, %v: bf16) {
  %s = tylo.make_tile %p : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (32,64):(64,1)>
  tylo.store_element %v, %s [%i, %i, %i] : bf16, !tylo.tile<bf16, global, (32,64):(64,1)>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: store_element of f32 into a tile of bf16
func.func @k(%p: !tylo.ptr<bf16, global>, %i: i32, %z: f32) {
  %s = tylo.make_tile %p : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (32,64):(64,1)>
  tylo.store_element %z, %s [%i, %i] : f32, !tylo.tile<bf16, global, (32,64):(64,1)>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: operand A has ownership (16,64), ((4,8),(8,2,2)):((128,1),(16,8,512)); the plan needs (16,64), ((4,8),(2,2)):((128,1),(8,512)) (its packed words)
func.func @k(%w: i32) {
  %a = tylo.splat %w : i32 -> !tylo.fragment<i32, #tylo.ownership<(16,64), ((4,8),(8,2,2)):((128,1),(16,8,512))>>
  %b = tylo.splat %w : i32 -> !tylo.fragment<i32, #tylo.ownership<(64,8), ((4,8),2):((8,64),32)>>
  %c = tylo.splat %w : i32 -> !tylo.fragment<i32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %d = tylo.mma <m16n8k64, s4, s4, s32, warps = (1,1), repeat = (1,1), k = 64> %a, %b, %c : !tylo.fragment<i32, #tylo.ownership<(16,64), ((4,8),(8,2,2)):((128,1),(16,8,512))>>, !tylo.fragment<i32, #tylo.ownership<(64,8), ((4,8),2):((8,64),32)>>, !tylo.fragment<i32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> !tylo.fragment<i32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: operand B holds i8; the atom takes Int4 packed in i32 words
func.func @k(%w: i32, %v: i8) {
  %a = tylo.splat %w : i32 -> !tylo.fragment<i32, #tylo.ownership<(16,64), ((4,8),(2,2)):((128,1),(8,512))>>
  %b = tylo.splat %v : i8 -> !tylo.fragment<i8, #tylo.ownership<(64,8), ((4,8),2):((8,64),32)>>
  %c = tylo.splat %w : i32 -> !tylo.fragment<i32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %d = tylo.mma <m16n8k64, s4, s4, s32, warps = (1,1), repeat = (1,1), k = 64> %a, %b, %c : !tylo.fragment<i32, #tylo.ownership<(16,64), ((4,8),(2,2)):((128,1),(8,512))>>, !tylo.fragment<i8, #tylo.ownership<(64,8), ((4,8),2):((8,64),32)>>, !tylo.fragment<i32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> !tylo.fragment<i32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: mma_sync m8n8k128, b1, b1, s32, and.popc: operand A needs 1 values, got 32
func.func @k(%w: i32) {
  %x0, %x1 = tylo.mma_sync <m8n8k128, b1, b1, s32, and.popc, warps = (1,1), repeat = (1,1), k = 128>(%w, %w, %w, %w, %w, %w, %w, %w, %w, %w, %w, %w, %w, %w, %w, %w, %w, %w, %w, %w, %w, %w, %w, %w, %w, %w, %w, %w, %w, %w, %w, %w), (%w), (%w, %w) : (i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32), (i32), (i32, i32) -> (i32, i32)
  func.return
}
