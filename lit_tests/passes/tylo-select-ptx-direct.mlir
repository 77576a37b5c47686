// RUN: tylo-opt %s -p tylo-lower-to-ptx -t ptx | filecheck %s
// RUN: tylo-opt %s -p tylo-lower-to-ptx | filecheck %s --check-prefix=IR

// A ptx op the frontend built directly (dialects/direct.py, passes/select/direct.py): its
// unallocated registers (!ptx.reg<f>) are numbered where selection meets them, after %f1 of the
// parameter, and the casts around it emit nothing; its properties (approx, ftz) are kept. An op
// with no register at all (setmaxnreg) is copied as it is.
// CHECK:      	ld.param.f32 %f1, [k_param_0];
// CHECK-NEXT: 	ex2.approx.ftz.f32 %f2, %f1;
// CHECK-NEXT: 	add.rn.f32 %f3, %f2, %f1;
// CHECK-NEXT: 	setmaxnreg.dec.sync.aligned.u32 40;
// CHECK-NEXT: 	ret;
// IR:     ptx.ex2 "f32" "approx" %{{.*}} {ftz} : !ptx.reg<f1> -> !ptx.reg<f2>
// IR-NOT: unrealized_conversion_cast
func.func @k(%x: f32) attributes {tylo.kernel} {
  %r = builtin.unrealized_conversion_cast %x : f32 to !ptx.reg<f>
  %e = ptx.ex2 "f32" "approx" %r {ftz} : !ptx.reg<f> -> !ptx.reg<f>
  %y = builtin.unrealized_conversion_cast %e : !ptx.reg<f> to f32
  %z = arith.addf %y, %x : f32
  ptx.setmaxnreg "dec" 40
  func.return
}
