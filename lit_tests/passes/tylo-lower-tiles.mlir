// RUN: tylo-opt %s -p tylo-lower-tiles | filecheck %s
// RUN: tylo-opt %s -p 'tylo-lower-tiles{arch=sm_80}' | filecheck %s

// A window's origin adds to the coordinate, per mode; the root layout's runtime stride (%ld)
// comes from tylo.make_tile; the offset is in elements; tiles disappear.
// CHECK-LABEL: func.func @window
// CHECK-NEXT:  %[[ROW:.*]] = arith.addi %i, %r : i32
// CHECK-NEXT:  %[[COL:.*]] = arith.addi %j, %c : i32
// CHECK-NEXT:  %[[SCALED:.*]] = arith.muli %[[ROW]], %ld : i32
// CHECK-NEXT:  %[[OFF:.*]] = arith.addi %[[SCALED]], %[[COL]] : i32
// CHECK-NEXT:  %[[PTR:.*]] = tylo.ptr_add %p, %[[OFF]] : !tylo.ptr<bf16, global>, i32
// CHECK-NEXT:  %x = tylo.load %[[PTR]] : !tylo.ptr<bf16, global> -> bf16
// CHECK:       %[[PTR2:.*]] = tylo.ptr_add %p, %{{.*}} : !tylo.ptr<bf16, global>, i32
// CHECK-NEXT:  tylo.store %v, %[[PTR2]] : bf16, !tylo.ptr<bf16, global>
// CHECK-NOT:   tylo.tile
func.func @window(%p: !tylo.ptr<bf16, global>, %m: i32, %n: i32, %ld: i32, %r: i32, %c: i32, %i: i32, %j: i32, %v: bf16) {
  %tile = tylo.make_tile %p[%m, %n, %ld] : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (?,?):(?,1)>
  %w = tylo.window %tile[%r, %c] : !tylo.tile<bf16, global, (?,?):(?,1)> -> !tylo.tile<bf16, global, (?,?):(?,1), [16,16]>
  %x = tylo.load_element %w[%i, %j] : !tylo.tile<bf16, global, (?,?):(?,1), [16,16]> -> bf16
  tylo.store_element %v, %w[%j, %i] : bf16, !tylo.tile<bf16, global, (?,?):(?,1), [16,16]>
  func.return
}

// A swizzle applies to the whole offset: Sw<3,3,3> xors bits 6..8 into bits 3..5 (mask 448).
// CHECK-LABEL: func.func @swizzled
// CHECK:       %[[LIN:.*]] = arith.addi %{{.*}}, %j : i32
// CHECK-NEXT:  %[[MASK:.*]] = arith.constant 448 : i32
// CHECK-NEXT:  %[[HI:.*]] = arith.andi %[[LIN]], %[[MASK]] : i32
// CHECK-NEXT:  %[[THREE:.*]] = arith.constant 3 : i32
// CHECK-NEXT:  %[[SH:.*]] = arith.shrsi %[[HI]], %[[THREE]] : i32
// CHECK-NEXT:  %[[SW:.*]] = arith.xori %[[LIN]], %[[SH]] : i32
// CHECK-NEXT:  tylo.ptr_add %p, %[[SW]] : !tylo.ptr<bf16, shared>, i32
func.func @swizzled(%p: !tylo.ptr<bf16, shared>, %i: i32, %j: i32) {
  %tile = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, Sw<3,3,3> o (8,64):(64,1)>
  %x = tylo.load_element %tile[%i, %j] : !tylo.tile<bf16, shared, Sw<3,3,3> o (8,64):(64,1)> -> bf16
  func.return
}

// Hierarchical modes: a row index decomposes over (8,2):(1,64) (first mode fastest); the
// coordinate is in range, so non-negative, and // 8 and % 8 are a shift and a mask.
// CHECK-LABEL: func.func @tiled
// CHECK:       arith.andi %i
// CHECK:       arith.shrsi %i
// CHECK:       tylo.ptr_add %p
func.func @tiled(%p: !tylo.ptr<f32, global>, %i: i32, %j: i32) {
  %tile = tylo.make_tile %p : !tylo.ptr<f32, global> -> !tylo.tile<f32, global, ((8,2),8):((1,64),8)>
  %x = tylo.load_element %tile[%i, %j] : !tylo.tile<f32, global, ((8,2),8):((1,64),8)> -> f32
  func.return
}

// Scalar ops the pass does not lower (here tylo.print, in a region) stay as they are, reading
// the loads that replace the element loads.
// CHECK-LABEL: func.func @printed
// CHECK:       %[[X:.*]] = tylo.load %{{.*}} : !tylo.ptr<f32, global> -> f32
// CHECK:       scf.if %c {
// CHECK-NEXT:    %[[D:.*]] = arith.extf %[[X]] : f32 to f64
// CHECK-NEXT:    tylo.print "x=%f\0A" %[[D]] : f64
// CHECK-NEXT:  }
func.func @printed(%p: !tylo.ptr<f32, global>, %i: i32, %c: i1) {
  %tile = tylo.make_tile %p : !tylo.ptr<f32, global> -> !tylo.tile<f32, global, (32):(1)>
  %x = tylo.load_element %tile[%i] : !tylo.tile<f32, global, (32):(1)> -> f32
  scf.if %c {
    %d = arith.extf %x : f32 to f64
    tylo.print "x=%f\0A" %d : f64
  }
  func.return
}

// Math ops on loaded elements pass through unchanged, between the loads and stores they use.
// CHECK-LABEL: func.func @math
// CHECK:       %[[X:.*]] = tylo.load %{{.*}} : !tylo.ptr<bf16, global> -> bf16
// CHECK-NEXT:  %[[S:.*]] = math.sqrt %[[X]] : bf16
// CHECK-NEXT:  %[[A:.*]] = math.absf %[[S]] : bf16
// CHECK:       tylo.store %[[A]], %{{.*}} : bf16, !tylo.ptr<bf16, global>
func.func @math(%p: !tylo.ptr<bf16, global>, %i: i32) {
  %tile = tylo.make_tile %p : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (32):(1)>
  %x = tylo.load_element %tile[%i] : !tylo.tile<bf16, global, (32):(1)> -> bf16
  %s = math.sqrt %x : bf16
  %a = math.absf %s : bf16
  tylo.store_element %a, %tile[%i] : bf16, !tylo.tile<bf16, global, (32):(1)>
  func.return
}

// A tcgen05 operand's descriptor becomes tylo.wgmma_encode of the pointer at its origin, with
// the recognised static word: the start-address field (bits 0-13, address >> 4) is encoded as
// Hopper's (PTX ISA 9.7.16.4.1 Table 40); the other fields are the tcgen05 ones.
// CHECK-LABEL: func.func @tcgen05_descriptor
// CHECK:       %[[PTR:.*]] = tylo.ptr_add %p, %{{.*}} : !tylo.ptr<bf16, shared>, i32
// CHECK-NEXT:  %d = tylo.wgmma_encode %[[PTR]], 4611756662049538048 : !tylo.ptr<bf16, shared>
func.func @tcgen05_descriptor(%p: !tylo.ptr<bf16, shared>, %z: i32, %k: i32) {
  %s = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, Sw<3,3,3> o (128,64):(64,1)>
  %d = tylo.tcgen05_descriptor "A" %s[%z, %k] {fields = {swizzle = "128", major = "K", lbo = 16 : i64, sbo = 1024 : i64, base_offset = 0 : i64, static = 4611756662049538048 : i64, k_step = 32 : i64}} : !tylo.tile<bf16, shared, Sw<3,3,3> o (128,64):(64,1)>
  func.return
}
