// RUN: tylo-opt %s -p "tylo-lower-to-ptx{arch=sm_75}" --verify-diagnostics --split-input-file | filecheck %s
// RUN: not tylo-opt %s -p "tylo-lower-to-ptx{arch=sm_7}" 2>&1 | filecheck %s --check-prefix=ARCH
// ARCH: tylo-opt: error: UnsupportedError: target 'sm_7' is not a target Tylo compiles for: sm_75, sm_80
// Each chunk (split at the dashed lines) uses an instruction that sm_75 does not run, which
// tylo-lower-to-ptx refuses (ptxas would, without the op's location). sm_75 is the oldest
// target ptxas 13 has, and it runs ldmatrix; an unknown target is refused when the pass is made. For each chunk tylo-opt
// prints a dashed line and then the pass's message; the CHECK / CHECK-NEXT pair binds them.
// The first chunk is an empty module, so that every case follows a dashed line.
builtin.module {}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: mma.sync m16n8k16, bf16, bf16, f32 needs sm_80 or later; the target is sm_75
func.func @k(%v: bf16, %z: f32) {
  %d0, %d1, %d2, %d3 = tylo.mma_sync <m16n8k16, bf16, bf16, f32, warps = (1,1), repeat = (1,1), k = 16>(%v, %v, %v, %v, %v, %v, %v, %v), (%v, %v, %v, %v), (%z, %z, %z, %z) : (bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16), (bf16, bf16, bf16, bf16), (f32, f32, f32, f32) -> (f32, f32, f32, f32)
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: stmatrix needs sm_90 or later; the target is sm_75
func.func @k(%v: bf16) {
  %s = tylo.shared_alloc 256, align 16 : !tylo.ptr<bf16, shared>
  tylo.stmatrix 1(%v, %v), %s : (bf16, bf16), !tylo.ptr<bf16, shared>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: cvt of .e4m3 values needs sm_89 or later; the target is sm_75
func.func @k(%x: f32) {
  %y = arith.truncf %x : f32 to f8E4M3FN
  func.return
}

// -----
// fma.rn.bf16 needs sm_80 (PTX ISA 9.7.4.4); f32 fma followed by a rounding to bf16 would round
// twice, so there is no fallback.
// CHECK:      {{^// -+$}}
// CHECK-NEXT: fma.rn.bf16 needs sm_80 or later; the target is sm_75
func.func @k(%x: bf16) {
  %y = math.fma %x, %x, %x : bf16
  func.return
}
