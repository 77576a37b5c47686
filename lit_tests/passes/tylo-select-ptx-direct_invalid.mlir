// RUN: tylo-opt %s -p tylo-lower-to-ptx --verify-diagnostics 2>&1 | filecheck %s

// A ptx op on numbered registers was not built by the frontend: selection refuses it.
// CHECK: no PTX lowering for ptx.ex2
func.func @numbered(%x: f32) attributes {tylo.kernel} {
  %r = builtin.unrealized_conversion_cast %x : f32 to !ptx.reg<f1>
  %e = ptx.ex2 "f32" "approx" %r : !ptx.reg<f1> -> !ptx.reg<f2>
  func.return
}
