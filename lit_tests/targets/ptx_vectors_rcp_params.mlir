// RUN: tylo-opt %s -t ptx | filecheck %s
// REQUIRES: ptxas
// RUN: tylo-opt %s -t ptx > %t.ptx && %ptxas -arch=sm_90a %t.ptx -o %t.cubin
// Ops whose printed lines no other lit test checked (tests/test_instruction_coverage.py):
// vector loads and stores (PTX ISA 9.7.9.8 ld / 9.7.9.10 st with .v2/.v4, a byte offset in the
// address), rcp in its two forms (9.7.3 rcp: .rn, and .approx with .ftz), and a tensor-map
// parameter's generic address (mov.b64 of the parameter's name, then cvta.param).
// CHECK:      	.param .align 64 .b8 k_param_1[128]
// CHECK:      	ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd2+16];
// CHECK-NEXT: 	rcp.rn.f32 %f5, %f1;
// CHECK-NEXT: 	rcp.approx.ftz.f32 %f6, %f2;
// CHECK-NEXT: 	st.global.v2.f32 [%rd2], {%f5, %f6};
// CHECK-NEXT: 	mov.b64 %rd3, k_param_1;
// CHECK-NEXT: 	cvta.param.u64 %rd4, %rd3;
// CHECK-NEXT: 	ret;
builtin.module attributes {ptx.version = "8.4", ptx.target = "sm_90a"} {
  ptx.entry "k" ["u64", "align 64 b8[128]"] reqntid [32, 1, 1] {
    %0 = ptx.ld_param "u64"[0] : !ptx.reg<rd1>
    %1 = ptx.cvta "global" %0 : !ptx.reg<rd1> -> !ptx.reg<rd2>
    %2, %3, %4, %5 = ptx.ld_vector "global" "f32"[%1, 16] : !ptx.reg<rd2> -> (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f3>, !ptx.reg<f4>)
    %6 = ptx.rcp "f32" "rn" %2 : !ptx.reg<f1> -> !ptx.reg<f5>
    %7 = ptx.rcp "f32" "approx" %3 {ftz} : !ptx.reg<f2> -> !ptx.reg<f6>
    ptx.st_vector "global" "f32"[%1, 0], (%6, %7) : !ptx.reg<rd2>, (!ptx.reg<f5>, !ptx.reg<f6>)
    %8 = ptx.param_address[1] : !ptx.reg<rd3>
    %9 = ptx.cvta_param %8 : !ptx.reg<rd3> -> !ptx.reg<rd4>
    ptx.ret
  }
}
