// RUN: tylo-opt %s --verify-diagnostics --split-input-file | filecheck %s
// Each chunk (split at the dashed lines) breaks one rule of the verifier of
// tylo.wgmma_mma_async_reg_a (dialects/tylo/wgmma_ops.py): A from registers is k/2 elements a
// thread, or, packed (i32 words: tylo.accumulator_as_a, tylo.pack), k/8 words of 8-bit
// elements and k/4 of 16-bit ones (the valid forms: lit_tests/frontend/accumulator_as_a.py).
// The first chunk is an empty module, so that every case follows a dashed line.
builtin.module {}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: A (64 x 64) packed is 8 words a thread, got 4
func.func @k(%a: !tylo.fragment<i32, #tylo.ownership<(64,32), ((4,8,4),(2,2)):((256,1,16),(8,1024))>>, %b: i64, %acc: !tylo.fragment<f32, #tylo.ownership<(64,64), ((4,8,4),(2,2,8)):((128,1,16),(64,8,512))>>) {
  %r = tylo.wgmma_mma_async_reg_a %a, %b, %acc {n = 64 : i64, k = 64 : i64, partials = 1 : i64, types = "f32.e4m3.e4m3"} : !tylo.fragment<i32, #tylo.ownership<(64,32), ((4,8,4),(2,2)):((256,1,16),(8,1024))>>, !tylo.fragment<f32, #tylo.ownership<(64,64), ((4,8,4),(2,2,8)):((128,1,16),(64,8,512))>> -> !tylo.fragment<f32, #tylo.ownership<(64,64), ((4,8,4),(2,2,8)):((128,1,16),(64,8,512))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: A (64 x 32) packed is 8 words a thread, got 4
func.func @k(%a: !tylo.fragment<i32, #tylo.ownership<(64,32), ((4,8,4),(2,2)):((256,1,16),(8,1024))>>, %b: i64, %acc: !tylo.fragment<f32, #tylo.ownership<(64,64), ((4,8,4),(2,2,8)):((128,1,16),(64,8,512))>>) {
  %r = tylo.wgmma_mma_async_reg_a %a, %b, %acc {n = 64 : i64, k = 32 : i64, partials = 1 : i64, types = "f32.bf16.bf16"} : !tylo.fragment<i32, #tylo.ownership<(64,32), ((4,8,4),(2,2)):((256,1,16),(8,1024))>>, !tylo.fragment<f32, #tylo.ownership<(64,64), ((4,8,4),(2,2,8)):((128,1,16),(64,8,512))>> -> !tylo.fragment<f32, #tylo.ownership<(64,64), ((4,8,4),(2,2,8)):((128,1,16),(64,8,512))>>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: A (64 x 64) has 32 slots a thread, got 16
func.func @k(%a: !tylo.fragment<f8E4M3FN, #tylo.ownership<(64,32), ((4,8,4),(4,2,2)):((256,1,16),(64,8,1024))>>, %b: i64, %acc: !tylo.fragment<f32, #tylo.ownership<(64,64), ((4,8,4),(2,2,8)):((128,1,16),(64,8,512))>>) {
  %r = tylo.wgmma_mma_async_reg_a %a, %b, %acc {n = 64 : i64, k = 64 : i64, partials = 1 : i64, types = "f32.e4m3.e4m3"} : !tylo.fragment<f8E4M3FN, #tylo.ownership<(64,32), ((4,8,4),(4,2,2)):((256,1,16),(64,8,1024))>>, !tylo.fragment<f32, #tylo.ownership<(64,64), ((4,8,4),(2,2,8)):((128,1,16),(64,8,512))>> -> !tylo.fragment<f32, #tylo.ownership<(64,64), ((4,8,4),(2,2,8)):((128,1,16),(64,8,512))>>
  func.return
}
