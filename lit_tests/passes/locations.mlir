// RUN: tylo-opt %s --print-debuginfo | filecheck %s --check-prefix=ROUND
// RUN: tylo-opt %s -p tylo-lower-tiles --print-debuginfo | filecheck %s
// RUN: tylo-opt %s -p tylo-lower-tiles | filecheck %s --check-prefix=PLAIN
// Locations (tylo.dialects.locations): an op written with loc("file":line:col) keeps it through
// the parser and printer (--print-debuginfo prints them; without it the IR prints as before),
// and what a pass makes in an op's place takes the op's location: here tylo-lower-tiles's
// address arithmetic, pointer and wgmma_encode for a tcgen05 operand traced at k.py:3:9.

// ROUND:      %s = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, Sw<3,3,3> o (128,64):(64,1)> loc("k.py":2:9)
// ROUND-NEXT: %d = tylo.tcgen05_descriptor "A" %s[%z, %k] {{.*}} loc("k.py":3:9)

// CHECK-LABEL: func.func @descriptor
// CHECK-NOT:   loc("k.py":2:9)
// CHECK:       arith.muli %z, %{{.*}} : i32 loc("k.py":3:9)
// CHECK:       %[[PTR:.*]] = tylo.ptr_add %p, %{{.*}} : !tylo.ptr<bf16, shared>, i32 loc("k.py":3:9)
// CHECK-NEXT:  %d = tylo.wgmma_encode %[[PTR]], 4611756662049538048 : !tylo.ptr<bf16, shared> loc("k.py":3:9)

// PLAIN-NOT:   loc(
func.func @descriptor(%p: !tylo.ptr<bf16, shared>, %z: i32, %k: i32) {
  %s = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, Sw<3,3,3> o (128,64):(64,1)> loc("k.py":2:9)
  %d = tylo.tcgen05_descriptor "A" %s[%z, %k] {fields = {swizzle = "128", major = "K", lbo = 16 : i64, sbo = 1024 : i64, base_offset = 0 : i64, static = 4611756662049538048 : i64, k_step = 32 : i64}} : !tylo.tile<bf16, shared, Sw<3,3,3> o (128,64):(64,1)> loc("k.py":3:9)
  func.return
}
