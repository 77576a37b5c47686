// RUN: tylo-opt %s -p tylo-plan-copies | tylo-opt | filecheck %s
// RUN: tylo-opt %s -p 'tylo-plan-copies{arch=sm_80}' | filecheck %s --check-prefix=SM80
// RUN: tylo-opt %s -p tylo-plan-copies,tylo-lower-fragments | filecheck %s --check-prefix=LOWER
// RUN: tylo-opt %s -p tylo-plan-copies,tylo-lower-fragments,tylo-lower-tiles,canonicalize,cse,tylo-lower-scf,tylo-lower-to-ptx -t ptx | filecheck %s --check-prefix=PTX
// (targets/ptxas.mlir assembles the PTX of the last pipeline.)

// The m16n8k16 A ownership over a row-major shared tile: four blocks, one ldmatrix.x4 along
// axis 1; lane l addresses row l % 16, column 8 (l / 16) of the tile; register j carries the
// fragment's word j (slots 2j, 2j+1).
// CHECK-LABEL: func.func @load_a
// CHECK:       %f = tylo.matrix_load %s, %t axis 1 : !tylo.tile<bf16, shared, (16,16):(16,1)> -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
// SM80-LABEL:  func.func @load_a
// SM80:        tylo.matrix_load %s, %t axis 1
// LOWER-LABEL: func.func @load_a
// LOWER:       %[[M:.*]] = arith.constant 15 : i32
// LOWER-NEXT:  %[[ROW:.*]] = arith.andi %t, %[[M]] : i32
// LOWER-NEXT:  %[[FOUR:.*]] = arith.constant 4 : i32
// LOWER-NEXT:  %[[HI:.*]] = arith.shrsi %t, %[[FOUR]] : i32
// LOWER-NEXT:  %[[EIGHT:.*]] = arith.constant 8 : i32
// LOWER-NEXT:  %[[COL:.*]] = arith.muli %[[HI]], %[[EIGHT]] : i32
// LOWER-NEXT:  %[[A0:.*]], %[[A1:.*]], %[[A2:.*]], %[[A3:.*]], %[[A4:.*]], %[[A5:.*]], %[[A6:.*]], %[[A7:.*]] = tylo.ldmatrix 4 %s[%[[ROW]], %[[COL]]] : !tylo.tile<bf16, shared, (16,16):(16,1)> -> (bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16)
// LOWER:       tylo.store_element %[[A0]],
// LOWER:       tylo.store_element %[[A1]],
// LOWER:       tylo.store_element %[[A2]],
// LOWER:       tylo.store_element %[[A7]],
// PTX-LABEL:   .visible .entry load_a(
// PTX:         ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [%r{{[0-9]+}}];
// PTX-NEXT:    mov.b32 {%rs{{[0-9]+}}, %rs{{[0-9]+}}}, %r{{[0-9]+}};
func.func @load_a(%o: !tylo.ptr<bf16, global>) {
  %t = tylo.thread_idx "x" : i32
  %p = tylo.shared_alloc 256, align 16 : !tylo.ptr<bf16, shared>
  %s = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, (16,16):(16,1)>
  %f = tylo.load_fragment %s, %t : !tylo.tile<bf16, shared, (16,16):(16,1)> -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  %g = tylo.make_tile %o : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (16,16):(16,1)>
  tylo.store_fragment %f, %g, %t : !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>, !tylo.tile<bf16, global, (16,16):(16,1)>
  func.return
}

// The same ownership over a column-major tile (axis 0 contiguous) needs .trans; a static
// window origin is fine when it keeps every row 16-byte aligned.
// CHECK-LABEL: func.func @load_trans_window
// CHECK:       tylo.matrix_load %w, %t axis 0 {trans} : !tylo.tile<bf16, shared, (32,16):(1,32), [16,16]>
// LOWER-LABEL: func.func @load_trans_window
// LOWER:       tylo.ldmatrix 4 %w[%{{.*}}, %{{.*}}] {trans} : !tylo.tile<bf16, shared, (32,16):(1,32), [16,16]>
// PTX-LABEL:   .visible .entry load_trans_window(
// PTX:         ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
func.func @load_trans_window(%o: !tylo.ptr<bf16, global>) {
  %t = tylo.thread_idx "x" : i32
  %p = tylo.shared_alloc 512, align 128 : !tylo.ptr<bf16, shared>
  %s = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, (32,16):(1,32)>
  %c16 = arith.constant 16 : i32
  %c0 = arith.constant 0 : i32
  %w = tylo.window %s[%c16, %c0] : !tylo.tile<bf16, shared, (32,16):(1,32)> -> !tylo.tile<bf16, shared, (32,16):(1,32), [16,16]>
  %f = tylo.load_fragment %w, %t : !tylo.tile<bf16, shared, (32,16):(1,32), [16,16]> -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  %g = tylo.make_tile %o : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (16,16):(16,1)>
  tylo.store_fragment %f, %g, %t : !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>, !tylo.tile<bf16, global, (16,16):(16,1)>
  func.return
}

// A runtime window origin across rows (a pipeline stage, say) keeps every row whole and
// aligned when the row stride is a multiple of 16 bytes: planned; the row offset is added at
// run time.
// CHECK-LABEL: func.func @load_runtime_rows
// CHECK:       tylo.matrix_load %w, %t axis 1 : !tylo.tile<bf16, shared, (64,16):(16,1), [16,16]>
// PTX-LABEL:   .visible .entry load_runtime_rows(
// PTX:         ldmatrix.sync.aligned.m8n8.x4.shared.b16
func.func @load_runtime_rows(%o: !tylo.ptr<bf16, global>, %stage: i32) {
  %t = tylo.thread_idx "x" : i32
  %p = tylo.shared_alloc 1024, align 16 : !tylo.ptr<bf16, shared>
  %s = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, (64,16):(16,1)>
  %c0 = arith.constant 0 : i32
  %w = tylo.window %s[%stage, %c0] : !tylo.tile<bf16, shared, (64,16):(16,1)> -> !tylo.tile<bf16, shared, (64,16):(16,1), [16,16]>
  %f = tylo.load_fragment %w, %t : !tylo.tile<bf16, shared, (64,16):(16,1), [16,16]> -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  %g = tylo.make_tile %o : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (16,16):(16,1)>
  tylo.store_fragment %f, %g, %t : !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>, !tylo.tile<bf16, global, (16,16):(16,1)>
  func.return
}

// stmatrix (sm_90+) for the accumulator-shaped 16x8 ownership: two blocks, one .x2 whose
// registers pack slots (0, 1) and (2, 3). Below sm_90 (no stmatrix) each lane's adjacent pair
// becomes one 4-byte vector store (a packed .b32 word).
// CHECK-LABEL: func.func @store_c
// CHECK:       tylo.matrix_store %f, %s, %t axis 1 : !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>, !tylo.tile<bf16, shared, (16,8):(8,1)>
// SM80-LABEL:  func.func @store_c
// SM80:        tylo.vector_store %f, %s, %t width 4 axis 1
// LOWER-LABEL: func.func @store_c
// LOWER:       %[[X0:.*]] = tylo.load_element
// LOWER:       %[[X1:.*]] = tylo.load_element
// LOWER:       %[[X2:.*]] = tylo.load_element
// LOWER:       %[[X3:.*]] = tylo.load_element
// LOWER:       tylo.stmatrix 2(%[[X0]], %[[X1]], %[[X2]], %[[X3]]), %s[%{{.*}}, %{{.*}}] : (bf16, bf16, bf16, bf16), !tylo.tile<bf16, shared, (16,8):(8,1)>
// PTX-LABEL:   .visible .entry store_c(
// PTX:         mov.b32 %r[[W0:[0-9]+]], {%rs{{[0-9]+}}, %rs{{[0-9]+}}};
// PTX-NEXT:    mov.b32 %r[[W1:[0-9]+]], {%rs{{[0-9]+}}, %rs{{[0-9]+}}};
// PTX-NEXT:    stmatrix.sync.aligned.m8n8.x2.shared.b16 [%r{{[0-9]+}}], {%r[[W0]], %r[[W1]]};
func.func @store_c(%i: !tylo.ptr<bf16, global>) {
  %t = tylo.thread_idx "x" : i32
  %g = tylo.make_tile %i : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (16,8):(8,1)>
  %f = tylo.load_fragment %g, %t : !tylo.tile<bf16, global, (16,8):(8,1)> -> !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %p = tylo.shared_alloc 128, align 16 : !tylo.ptr<bf16, shared>
  %s = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, (16,8):(8,1)>
  tylo.store_fragment %f, %s, %t : !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>, !tylo.tile<bf16, shared, (16,8):(8,1)>
  func.return
}

// No matrix copy (the vector planning then takes what its alignment proves, below): a runtime
// window origin along the contiguous axis (alignment unknown: scalar), a
// pointer of unknown alignment, a row that is not 16-byte aligned, f32 elements, a thread
// operand that is not the thread index, and a load under a thread-dependent branch.
// CHECK-LABEL: func.func @scalar
// CHECK-NOT:   tylo.matrix_
// CHECK:       %a = tylo.load_fragment %w, %t
// CHECK:       %b = tylo.vector_load %u, %t width 4 axis 1
// CHECK:       %c = tylo.vector_load %w4, %t width 4 axis 1
// CHECK:       %d = tylo.vector_load %v, %t width 8 axis 1
// CHECK:       func.return
// PTX-LABEL:   .visible .entry scalar(
// PTX-NOT:     ldmatrix
// PTX:         ret;
func.func @scalar(%n: i32, %lane: i32) {
  %t = tylo.thread_idx "x" : i32
  %p = tylo.shared_alloc 512, align 16 : !tylo.ptr<bf16, shared>
  %s = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, (16,32):(32,1)>
  %c0 = arith.constant 0 : i32
  %c4 = arith.constant 4 : i32
  %w = tylo.window %s[%c0, %n] : !tylo.tile<bf16, shared, (16,32):(32,1)> -> !tylo.tile<bf16, shared, (16,32):(32,1), [16,16]>
  %a = tylo.load_fragment %w, %t : !tylo.tile<bf16, shared, (16,32):(32,1), [16,16]> -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  %odd = tylo.ptr_add %p, %c4 : !tylo.ptr<bf16, shared>, i32
  %u = tylo.make_tile %odd : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, (16,16):(16,1)>
  %b = tylo.load_fragment %u, %t : !tylo.tile<bf16, shared, (16,16):(16,1)> -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  %w4 = tylo.window %s[%c0, %c4] : !tylo.tile<bf16, shared, (16,32):(32,1)> -> !tylo.tile<bf16, shared, (16,32):(32,1), [16,16]>
  %c = tylo.load_fragment %w4, %t : !tylo.tile<bf16, shared, (16,32):(32,1), [16,16]> -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  %q = tylo.shared_alloc 256, align 16 : !tylo.ptr<f32, shared>
  %v = tylo.make_tile %q : !tylo.ptr<f32, shared> -> !tylo.tile<f32, shared, (16,16):(16,1)>
  %d = tylo.load_fragment %v, %t : !tylo.tile<f32, shared, (16,16):(16,1)> -> !tylo.fragment<f32, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  %e = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, (16,16):(16,1)>
  %x = tylo.load_fragment %e, %lane : !tylo.tile<bf16, shared, (16,16):(16,1)> -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
  %c16 = arith.constant 16 : i32
  %low = arith.cmpi slt, %t, %c16 : i32
  scf.if %low {
    %y = tylo.load_fragment %e, %t : !tylo.tile<bf16, shared, (16,16):(16,1)> -> !tylo.fragment<bf16, #tylo.ownership<(16,16), ((4,8),(2,2,2)):((32,1),(16,8,128))>>
    scf.yield
  }
  func.return
}

// Vector accesses (tylo-plan-copies after ldmatrix/stmatrix): the widest grouping that the
// tile's alignment proves. A global tile declared align 16 whose lanes hold 8 consecutive bf16
// (LocalOwnership(8, 1)): one 16-byte .v4.b32 per lane, both ways; declared align 8: .v2.b32;
// no declaration (a kernel argument's alignment is unknown): scalar. A shared tile with rows
// of 40 bytes (pitch 20 bf16): 8-byte vectors of 4 bf16. f32 pairs at align 8: .v2.f32.
// CHECK-LABEL: func.func @vectors
// CHECK:       %f = tylo.vector_load %g, %t width 16 axis 1
// CHECK:       tylo.vector_store %f, %h, %t width 16 axis 1
// CHECK:       %f8 = tylo.vector_load %g8, %t width 8 axis 1
// CHECK:       %f0 = tylo.load_fragment %g0, %t
// CHECK:       %fs = tylo.vector_load %s, %t width 8 axis 1
// CHECK:       %ff = tylo.vector_load %gf, %t width 8 axis 1
// LOWER-LABEL: func.func @vectors
// LOWER:       tylo.ld_vector %g[%{{.*}}, %{{.*}}] : !tylo.tile<bf16, global, (32,8):(8,1)> -> (bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16)
// PTX-LABEL:   .visible .entry vectors(
// PTX:         ld.global.v4.b32 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [%rd{{[0-9]+}}];
// PTX:         st.global.v4.b32 [%rd{{[0-9]+}}], {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}};
// PTX:         ld.global.v2.b32 {%r{{[0-9]+}}, %r{{[0-9]+}}}, [%rd{{[0-9]+}}];
// PTX:         ld.global.b16 %rs{{[0-9]+}}, [%rd{{[0-9]+}}];
// PTX:         ld.shared.v2.b32 {%r{{[0-9]+}}, %r{{[0-9]+}}}, [%r{{[0-9]+}}];
// PTX:         ld.global.v2.f32 {%f{{[0-9]+}}, %f{{[0-9]+}}}, [%rd{{[0-9]+}}];
func.func @vectors(%i: !tylo.ptr<bf16, global>, %o: !tylo.ptr<bf16, global>, %x: !tylo.ptr<f32, global>) {
  %t = tylo.thread_idx "x" : i32
  %g = tylo.make_tile %i align 16 : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (32,8):(8,1)>
  %f = tylo.load_fragment %g, %t : !tylo.tile<bf16, global, (32,8):(8,1)> -> !tylo.fragment<bf16, #tylo.ownership<(32,8), (32,8):(1,32)>>
  %h = tylo.make_tile %o align 16 : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (32,8):(8,1)>
  tylo.store_fragment %f, %h, %t : !tylo.fragment<bf16, #tylo.ownership<(32,8), (32,8):(1,32)>>, !tylo.tile<bf16, global, (32,8):(8,1)>
  %g8 = tylo.make_tile %i align 8 : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (32,8):(8,1)>
  %f8 = tylo.load_fragment %g8, %t : !tylo.tile<bf16, global, (32,8):(8,1)> -> !tylo.fragment<bf16, #tylo.ownership<(32,8), (32,8):(1,32)>>
  %g0 = tylo.make_tile %i : !tylo.ptr<bf16, global> -> !tylo.tile<bf16, global, (32,8):(8,1)>
  %f0 = tylo.load_fragment %g0, %t : !tylo.tile<bf16, global, (32,8):(8,1)> -> !tylo.fragment<bf16, #tylo.ownership<(32,8), (32,8):(1,32)>>
  %p = tylo.shared_alloc 640, align 16 : !tylo.ptr<bf16, shared>
  %s = tylo.make_tile %p : !tylo.ptr<bf16, shared> -> !tylo.tile<bf16, shared, (32,8):(20,1)>
  %fs = tylo.load_fragment %s, %t : !tylo.tile<bf16, shared, (32,8):(20,1)> -> !tylo.fragment<bf16, #tylo.ownership<(32,8), (32,8):(1,32)>>
  %gf = tylo.make_tile %x align 8 : !tylo.ptr<f32, global> -> !tylo.tile<f32, global, (32,2):(2,1)>
  %ff = tylo.load_fragment %gf, %t : !tylo.tile<f32, global, (32,2):(2,1)> -> !tylo.fragment<f32, #tylo.ownership<(32,2), (32,2):(1,32)>>
  tylo.store_fragment %f8, %h, %t : !tylo.fragment<bf16, #tylo.ownership<(32,8), (32,8):(1,32)>>, !tylo.tile<bf16, global, (32,8):(8,1)>
  tylo.store_fragment %f0, %h, %t : !tylo.fragment<bf16, #tylo.ownership<(32,8), (32,8):(1,32)>>, !tylo.tile<bf16, global, (32,8):(8,1)>
  tylo.store_fragment %fs, %h, %t : !tylo.fragment<bf16, #tylo.ownership<(32,8), (32,8):(1,32)>>, !tylo.tile<bf16, global, (32,8):(8,1)>
  tylo.store_fragment %ff, %gf, %t : !tylo.fragment<f32, #tylo.ownership<(32,2), (32,2):(1,32)>>, !tylo.tile<f32, global, (32,2):(2,1)>
  func.return
}
