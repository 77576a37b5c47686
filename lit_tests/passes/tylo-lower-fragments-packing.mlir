// RUN: tylo-opt %s -p tylo-lower-fragments | filecheck %s

// tylo.take_slots renames slots (no op is emitted: slot v of the result is slot slots[v] of the
// sources laid end to end); tylo.pack is one tylo.pack_word per 32-bit word of consecutive
// slots, low slot first; tylo.unpack one tylo.unpack_word per word.
// CHECK-LABEL: func.func @maps
// CHECK:      %[[V0:.*]] = tylo.load_element %tx[%{{.*}}, %{{.*}}] : !tylo.tile<f32, global, (16,8):(8,1)> -> f32
// CHECK-NEXT: %[[V1:.*]] = tylo.load_element
// CHECK-NEXT: %[[V2:.*]] = tylo.load_element
// CHECK-NEXT: %[[V3:.*]] = tylo.load_element
// CHECK-NEXT: %[[W0:.*]] = tylo.pack_word %[[V0]], %[[V2]] {to = "BFloat16", convert} : f32, f32 -> i32
// CHECK-NEXT: %[[W1:.*]] = tylo.pack_word %[[V1]], %[[V3]] {to = "BFloat16", convert} : f32, f32 -> i32
// CHECK-NEXT: %[[E0:.*]], %{{.*}} = tylo.unpack_word %[[W0]] {dtype = "BFloat16"} : i32 -> bf16, bf16
// CHECK-NEXT: %{{.*}}, %[[E3:.*]] = tylo.unpack_word %[[W1]] {dtype = "BFloat16"} : i32 -> bf16, bf16
// CHECK-NEXT: arith.addf %[[E3]], %[[E0]] : bf16
// CHECK-NOT:  tylo.take_slots
// CHECK-NOT:  tylo.fragment
func.func @maps(%x: !tylo.ptr<f32, global>) {
  %t = tylo.thread_idx "x" : i32
  %tx = tylo.make_tile %x : !tylo.ptr<f32, global> -> !tylo.tile<f32, global, (16,8):(8,1)>
  %f = tylo.load_fragment %tx, %t : !tylo.tile<f32, global, (16,8):(8,1)> -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %g = tylo.take_slots %f {slots = array<i64: 0, 2, 1, 3>} : !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(8,16))>>
  %p = tylo.pack %g {to = "BFloat16", convert} : !tylo.fragment<f32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(8,16))>> -> !tylo.fragment<i32, #tylo.ownership<(16,8), ((4,8),2):((32,1),16)>>
  %u = tylo.unpack %p {dtype = "BFloat16"} : !tylo.fragment<i32, #tylo.ownership<(16,8), ((4,8),2):((32,1),16)>> -> !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(8,16))>>
  %y = tylo.take_slots %u, %u {slots = array<i64: 7, 0>} : !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(8,16))>>, !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(8,16))>> -> !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),2):((32,1),16)>>
  %a = tylo.slot %y[0] : !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),2):((32,1),16)>> -> bf16
  %b = tylo.slot %y[1] : !tylo.fragment<bf16, #tylo.ownership<(16,8), ((4,8),2):((32,1),16)>> -> bf16
  %sum = arith.addf %a, %b : bf16
  func.return
}
