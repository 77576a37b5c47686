// RUN: tylo-opt %s -p tylo-lower-fragments | filecheck %s
// The tcgen05 handlers of tylo-lower-fragments (passes/fragments/tcgen05.py). tylo.tcgen05_mma
// becomes `steps` tylo.tcgen05_mma_instr: instruction s adds s * k_step / 16 to each descriptor
// (here A K-major: 32 B -> 2; B MN-major: 1024 B -> 64), or 8 s columns to A's TMEM address;
// the instruction descriptor comes from the atom and the recognised majorness (0x08090490 =
// 134808720: bf16 -> f32, M 128, N 32, A K-major, B MN-major; A from TMEM counts as K-major,
// the same word); enable-input-d is the op's accumulate for the first instruction, 1 after it.
// A fragment's TMEM load / wait / store move its slots (two values a thread here; four of a
// .16x256b transfer, whose `shape` stays on the ops).

// CHECK-LABEL: func.func @mma
// CHECK:      tylo.tcgen05_mma_instr %d, %a, %b, %acc {kind = "f16", idesc = 134808720 : i64} : i64
// CHECK-NEXT: %[[B64:.*]] = arith.constant 64 : i64
// CHECK-NEXT: %[[B1:.*]] = arith.addi %b, %[[B64]] : i64
// CHECK-NEXT: %[[A2:.*]] = arith.constant 2 : i64
// CHECK-NEXT: %[[A1:.*]] = arith.addi %a, %[[A2]] : i64
// CHECK-NEXT: tylo.tcgen05_mma_instr %d, %[[A1]], %[[B1]] {kind = "f16", idesc = 134808720 : i64, enable_imm = 1 : i64} : i64
// CHECK:      tylo.tcgen05_mma_instr %d, %t, %b {kind = "f16", idesc = 134808720 : i64, a_tmem, enable_imm = 0 : i64} : i32
// CHECK:      %[[C8:.*]] = arith.constant 8 : i32
// CHECK-NEXT: %[[T1:.*]] = arith.addi %t, %[[C8]] : i32
// CHECK:      tylo.tcgen05_mma_instr %d, %[[T1]], %[[B1b:.*]] {kind = "f16", idesc = 134808720 : i64, a_tmem, enable_imm = 1 : i64} : i32
// CHECK-NOT:  tylo.tcgen05_mma {
// CHECK:      %[[X:.*]], %[[Y:.*]] = tylo.tmem_load %t : f32, f32
// CHECK-NEXT: %[[X2:.*]], %[[Y2:.*]] = tylo.tmem_wait "ld"(%[[X]], %[[Y]]) : (f32, f32) -> (f32, f32)
// CHECK-NEXT: tylo.tmem_store %t, (%[[X2]], %[[Y2]]) : f32, f32
// CHECK:      %[[P:.*]], %[[Q:.*]], %[[R:.*]], %[[S:.*]] = tylo.tmem_load %t {shape = "16x256b"} : f32, f32, f32, f32
// CHECK-NEXT: %{{.*}} = tylo.tmem_wait "ld"(%[[P]], %[[Q]], %[[R]], %[[S]])
// CHECK-NEXT: tylo.tmem_store %t, (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {shape = "16x256b"} : f32, f32, f32, f32
func.func @mma(%pa: !tylo.ptr<bf16, shared>, %pb: !tylo.ptr<bf16, shared>, %d: i32, %t: i32, %acc: i1, %z: i32) {
  %sa = tylo.make_tile %pa : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, Sw<2,3,3> o (128,32):(32,1)>
  %sb = tylo.make_tile %pb : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, Sw<2,3,3> o (32,32):(32,1)>
  %a = tylo.tcgen05_descriptor "A" %sa[%z, %z] {fields = {swizzle = "64", major = "K", lbo = 16 : i64, sbo = 512 : i64, base_offset = 0 : i64, static = -9223301530671579136 : i64, k_step = 32 : i64}} : !tylo.tile<bf16, shared, Sw<2,3,3> o (128,32):(32,1)>
  %b = tylo.tcgen05_descriptor "B" %sb[%z, %z] {fields = {swizzle = "64", major = "MN", lbo = 2048 : i64, sbo = 512 : i64, base_offset = 0 : i64, static = -9223301530663256064 : i64, k_step = 1024 : i64}} : !tylo.tile<bf16, shared, Sw<2,3,3> o (32,32):(32,1)>
  tylo.tcgen05_mma %d, %a, %b accumulate %acc {kind = "f16", types = "Float32.BFloat16.BFloat16", m = 128 : i64, n = 32 : i64, k = 16 : i64, steps = 2 : i64} : i64
  tylo.tcgen05_mma %d, %t, %b {kind = "f16", types = "Float32.BFloat16.BFloat16", m = 128 : i64, n = 32 : i64, k = 16 : i64, steps = 2 : i64, a_tmem, zero} : i32
  %f = tylo.tmem_load %t : !tylo.fragment<f32, #tylo.ownership<(32,2), (32,2):(1,32)>>
  %g = tylo.tmem_wait "ld"(%f) : (!tylo.fragment<f32, #tylo.ownership<(32,2), (32,2):(1,32)>>) -> (!tylo.fragment<f32, #tylo.ownership<(32,2), (32,2):(1,32)>>)
  tylo.tmem_store %t, (%g) : !tylo.fragment<f32, #tylo.ownership<(32,2), (32,2):(1,32)>>
  %h = tylo.tmem_load %t {shape = "16x256b"} : !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %i = tylo.tmem_wait "ld"(%h) : (!tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>) -> (!tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>)
  tylo.tmem_store %t, (%i) {shape = "16x256b"} : !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  func.return
}

// A descriptor at a runtime origin is the tylo.tcgen05_descriptor plus the origin's offset in
// 16-byte units (%off, from tcgen05_operand): the handler finds the descriptor's fields through
// the addition and steps the sum along K.
// CHECK-LABEL: func.func @runtime_origin
// CHECK:      %[[A:.*]] = arith.addi %a, %off : i64
// CHECK-NEXT: tylo.tcgen05_mma_instr %d, %[[A]], %b {kind = "f16", idesc = 134808720 : i64, enable_imm = 0 : i64} : i64
// CHECK-NEXT: %[[B64:.*]] = arith.constant 64 : i64
// CHECK-NEXT: %[[B1:.*]] = arith.addi %b, %[[B64]] : i64
// CHECK-NEXT: %[[A2:.*]] = arith.constant 2 : i64
// CHECK-NEXT: %[[A1:.*]] = arith.addi %[[A]], %[[A2]] : i64
// CHECK-NEXT: tylo.tcgen05_mma_instr %d, %[[A1]], %[[B1]] {kind = "f16", idesc = 134808720 : i64, enable_imm = 1 : i64} : i64
func.func @runtime_origin(%pa: !tylo.ptr<bf16, shared>, %pb: !tylo.ptr<bf16, shared>, %d: i32, %z: i32, %off: i64) {
  %sa = tylo.make_tile %pa : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, Sw<2,3,3> o (128,32):(32,1)>
  %sb = tylo.make_tile %pb : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, Sw<2,3,3> o (32,32):(32,1)>
  %a = tylo.tcgen05_descriptor "A" %sa[%z, %z] {fields = {swizzle = "64", major = "K", lbo = 16 : i64, sbo = 512 : i64, base_offset = 0 : i64, static = -9223301530671579136 : i64, k_step = 32 : i64}} : !tylo.tile<bf16, shared, Sw<2,3,3> o (128,32):(32,1)>
  %b = tylo.tcgen05_descriptor "B" %sb[%z, %z] {fields = {swizzle = "64", major = "MN", lbo = 2048 : i64, sbo = 512 : i64, base_offset = 0 : i64, static = -9223301530663256064 : i64, k_step = 1024 : i64}} : !tylo.tile<bf16, shared, Sw<2,3,3> o (32,32):(32,1)>
  %ar = arith.addi %a, %off : i64
  tylo.tcgen05_mma %d, %ar, %b {kind = "f16", types = "Float32.BFloat16.BFloat16", m = 128 : i64, n = 32 : i64, k = 16 : i64, steps = 2 : i64, zero} : i64
  func.return
}
