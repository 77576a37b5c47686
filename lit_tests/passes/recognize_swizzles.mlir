// RUN: tylo-opt %s -p tylo-recognize-swizzles --split-input-file --verify-diagnostics | filecheck %s
// tylo-recognize-swizzles (passes/recognize_swizzles.py) puts each WGMMA operand's descriptor
// fields on its tylo.wgmma_descriptor: swizzle (bytes, 0 = none), major, LBO and SBO (bytes),
// base offset, the static descriptor word (start address 0; i64, so the 64B and 32B modes'
// top bits print negative) and the K step. The static words are those of facts ptx_isa.md 3.1:
// K-major bf16 SW128 (LBO 16, SBO 1024) = 0x4000004000010000 = 4611686293305360384;
// non-swizzled K-major with LBO 2048, SBO 128 = 0x800800000 = 34368126976.

// CHECK-LABEL: func.func @sw128_k_major
// CHECK: tylo.wgmma_descriptor "A" %{{.*}} {{.*}}fields = {swizzle = "128", major = "K", lbo = 16 : i64, sbo = 1024 : i64, base_offset = 0 : i64, static = 4611686293305360384 : i64, k_step = 32 : i64}
func.func @sw128_k_major(%p: !tylo.ptr<bf16, shared>, %z: i32) {
  %s = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, Sw<3,3,3> o (64,64):(64,1)>
  %d = tylo.wgmma_descriptor "A" %s[%z, %z] : !tylo.tile<bf16, shared, Sw<3,3,3> o (64,64):(64,1)>
  func.return
}

// -----

// 64B rows, B (k, n) K-major (K = axis 0 contiguous): SBO = 8 rows of 64 B; code 2 in bits 62-63.
// CHECK-LABEL: func.func @sw64_k_major_b
// CHECK: tylo.wgmma_descriptor "B" %{{.*}} {{.*}}fields = {swizzle = "64", major = "K", lbo = 16 : i64, sbo = 512 : i64, base_offset = 0 : i64, static = -9223371899415756800 : i64, k_step = 32 : i64}
func.func @sw64_k_major_b(%p: !tylo.ptr<bf16, shared>, %z: i32) {
  %s = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, Sw<2,3,3> o (32,64):(1,32)>
  %d = tylo.wgmma_descriptor "B" %s[%z, %z] : !tylo.tile<bf16, shared, Sw<2,3,3> o (32,64):(1,32)>
  func.return
}

// -----

// 32B rows: SBO = 8 rows of 32 B, code 3.
// CHECK-LABEL: func.func @sw32_k_major
// CHECK: tylo.wgmma_descriptor "A" %{{.*}} {{.*}}fields = {swizzle = "32", major = "K", lbo = 16 : i64, sbo = 256 : i64, base_offset = 0 : i64, static = -4611685949707845632 : i64, k_step = 32 : i64}
func.func @sw32_k_major(%p: !tylo.ptr<bf16, shared>, %z: i32) {
  %s = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, Sw<1,3,3> o (64,16):(16,1)>
  %d = tylo.wgmma_descriptor "A" %s[%z, %z] : !tylo.tile<bf16, shared, Sw<1,3,3> o (64,16):(16,1)>
  func.return
}

// -----

// No swizzle, K-major: 8-row x 16-byte core matrices, the 16 along M packed (SBO 128 B), the
// two along K 2048 B apart (LBO); the K step is two core matrices along K (2 LBO).
// CHECK-LABEL: func.func @none_k_major
// CHECK: tylo.wgmma_descriptor "A" %{{.*}} {{.*}}fields = {swizzle = "0", major = "K", lbo = 2048 : i64, sbo = 128 : i64, base_offset = 0 : i64, static = 34368126976 : i64, k_step = 4096 : i64}
func.func @none_k_major(%p: !tylo.ptr<bf16, shared>, %z: i32) {
  %s = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, ((8,16),(8,2)):((8,64),(1,1024))>
  %d = tylo.wgmma_descriptor "A" %s[%z, %z] : !tylo.tile<bf16, shared, ((8,16),(8,2)):((8,64),(1,1024))>
  func.return
}

// -----

// MN-major B (k, n), 128B rows along N, two row groups 2048 B apart, 8-row K groups 1024 B.
// CHECK-LABEL: func.func @sw128_mn_major_b
// CHECK: tylo.wgmma_descriptor "B" %{{.*}} {{.*}}fields = {swizzle = "128", major = "MN", lbo = 2048 : i64, sbo = 1024 : i64, base_offset = 0 : i64, static = 4611686293313683456 : i64, k_step = 2048 : i64}
func.func @sw128_mn_major_b(%p: !tylo.ptr<bf16, shared>, %z: i32) {
  %s = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, Sw<3,3,3> o ((8,2),(64,2)):((64,512),(1,1024))>
  %d = tylo.wgmma_descriptor "B" %s[%z, %z] : !tylo.tile<bf16, shared, Sw<3,3,3> o ((8,2),(64,2)):((64,512),(1,1024))>
  func.return
}

// -----

// A tcgen05 operand (tylo.tcgen05_descriptor) gets the same fields with the tcgen05 encoding
// (PTX ISA 9.7.16.4.1, Table 40): version 0b001 in bits 46-48, swizzle code 2 (128B) in bits
// 61-63: K-major bf16 SW128 (LBO 16, SBO 1024) = 0x4000404000010000 = 4611756662049538048; the
// K step is one instruction's 256 bits of K, 32 bytes.
// CHECK-LABEL: func.func @tcgen05_sw128_k_major
// CHECK: tylo.tcgen05_descriptor "A" %{{.*}} {{.*}}fields = {swizzle = "128", major = "K", lbo = 16 : i64, sbo = 1024 : i64, base_offset = 0 : i64, static = 4611756662049538048 : i64, k_step = 32 : i64}
func.func @tcgen05_sw128_k_major(%p: !tylo.ptr<bf16, shared>, %z: i32) {
  %s = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, Sw<3,3,3> o (128,64):(64,1)>
  %d = tylo.tcgen05_descriptor "A" %s[%z, %z] : !tylo.tile<bf16, shared, Sw<3,3,3> o (128,64):(64,1)>
  func.return
}

// -----

// A row-major tile refused for a tcgen05 operand names it so.
// CHECK-LABEL: {{^// -+$}}
// CHECK-NEXT: tylo-recognize-swizzles: tcgen05 operand B at kernel.py:9: layout (64,64):(64,1) of BFloat16 is not a canonical swizzled encoding
func.func @tcgen05_row_major_refused(%p: !tylo.ptr<bf16, shared>, %z: i32) {
  %s = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, (64,64):(64,1)>
  %d = tylo.tcgen05_descriptor "B" %s[%z, %z] : !tylo.tile<bf16, shared, (64,64):(64,1)> loc("kernel.py":9:5)
  func.return
}

// -----

// A plain row-major tile (rows of 128 B, no swizzle) is no canonical encoding: refused,
// naming the operand, the user's line (the op's location) and the layout.
// CHECK-LABEL: {{^// -+$}}
// CHECK-NEXT: tylo-recognize-swizzles: WGMMA operand A at kernel.py:7: layout (64,64):(64,1) of BFloat16 is not a canonical swizzled encoding
func.func @row_major_refused(%p: !tylo.ptr<bf16, shared>, %z: i32) {
  %s = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, (64,64):(64,1)>
  %d = tylo.wgmma_descriptor "A" %s[%z, %z] : !tylo.tile<bf16, shared, (64,64):(64,1)> loc("kernel.py":7:5)
  func.return
}
