// RUN: tylo-opt %s --verify-diagnostics --split-input-file | filecheck %s
// Each chunk breaks one rule of the verifier of tylo.tma_reduce (dialects/tylo/tma_ops.py; the
// valid form is in passes/tylo-select-ptx-tma.mlir): the redOp/element-type pairs of PTX ISA
// 9.7.9.27.1.3 (integers are signless in the IR, so a width either signedness takes passes).
builtin.module {}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tylo.tma_reduce: redOp .mul is not one of .add, .min, .max, .inc, .dec, .and, .or, .xor
func.func @k(%map: !tylo.tensor_map<f32, [8,32], axis 1, swizzle 128, rank 2>, %c: i32) {
  %tile = tylo.shared_alloc 256, align 1024 : !tylo.ptr<f32, shared>
  tylo.tma_reduce "mul" %map[%c, %c], %tile : !tylo.tensor_map<f32, [8,32], axis 1, swizzle 128, rank 2>, !tylo.ptr<f32, shared>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tylo.tma_reduce: .max takes elements .u32, .s32, .u64, .s64, .f16, .bf16, not .f32 (PTX ISA 9.7.9.27.1.3 cp.reduce.async.bulk.tensor)
func.func @k(%map: !tylo.tensor_map<f32, [8,32], axis 1, swizzle 128, rank 2>, %c: i32) {
  %tile = tylo.shared_alloc 256, align 1024 : !tylo.ptr<f32, shared>
  tylo.tma_reduce "max" %map[%c, %c], %tile : !tylo.tensor_map<f32, [8,32], axis 1, swizzle 128, rank 2>, !tylo.ptr<f32, shared>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tylo.tma_reduce: .xor takes elements .b32, .b64, not .bf16 (PTX ISA 9.7.9.27.1.3 cp.reduce.async.bulk.tensor)
func.func @k(%map: !tylo.tensor_map<bf16, [16,64], axis 1, swizzle 128, rank 2>, %c: i32) {
  %tile = tylo.shared_alloc 1024, align 1024 : !tylo.ptr<bf16, shared>
  tylo.tma_reduce "xor" %map[%c, %c], %tile : !tylo.tensor_map<bf16, [16,64], axis 1, swizzle 128, rank 2>, !tylo.ptr<bf16, shared>
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: tylo.tma_reduce: a tile of Float32 for a tensor map of BFloat16
func.func @k(%map: !tylo.tensor_map<bf16, [16,64], axis 1, swizzle 128, rank 2>, %c: i32) {
  %tile = tylo.shared_alloc 512, align 1024 : !tylo.ptr<f32, shared>
  tylo.tma_reduce "add" %map[%c, %c], %tile : !tylo.tensor_map<bf16, [16,64], axis 1, swizzle 128, rank 2>, !tylo.ptr<f32, shared>
  func.return
}
