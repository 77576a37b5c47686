// RUN: tylo-opt %s --verify-diagnostics --split-input-file | filecheck %s

// A vector access with a bound along its own axis: a vector could straddle the bound, so
// tylo-plan-copies never makes one; the verifier refuses it.
// CHECK: a bound on axis 1, along which the vectors run
func.func @vector_across_its_bound(%x: !tylo.ptr<f32, global>, %m: i32) {
  %t = tylo.thread_idx "x" : i32
  %a = tylo.make_tile %x align 16 : !tylo.ptr<f32, global> -> !tylo.tile<f32, global, (32,4):(4,1)>
  %f = tylo.vector_load %a, %t col_bound %m width 16 axis 1 : !tylo.tile<f32, global, (32,4):(4,1)> -> !tylo.fragment<f32, #tylo.ownership<(32,4), (32,4):(1,32)>>
  func.return
}
