// RUN: tylo-opt %s -t ptx | filecheck %s
// (ptxas.mlir assembles this file's PTX.)

// The target prints one PTX line per op: module directives, the entry's parameters and
// .reqntid, one .reg declaration per register class used (up to the highest number), then the
// instructions; labels are not indented and ptx.get_register prints nothing.
// CHECK:      .version 8.4
// CHECK-NEXT: .target sm_90a
// CHECK-NEXT: .address_size 64
// CHECK:      .visible .entry vadd(
// CHECK-NEXT: 	.param .u64 vadd_param_0,
// CHECK-NEXT: 	.param .s32 vadd_param_1
// CHECK-NEXT: )
// CHECK-NEXT: .reqntid 128, 1, 1
// CHECK-NEXT: {
// CHECK-DAG:  	.reg .b32 	%r<4>;
// CHECK-DAG:  	.reg .b64 	%rd<5>;
// CHECK-DAG:  	.reg .f32 	%f<4>;
// CHECK-DAG:  	.reg .pred 	%p<2>;
// CHECK-DAG:  	.reg .b16 	%rs<3>;
// CHECK:      	.shared .align 16 .b8 smem[512];
// CHECK-NEXT: 	ld.param.u64 %rd1, [vadd_param_0];
// CHECK-NEXT: 	cvta.to.global.u64 %rd2, %rd1;
// CHECK-NEXT: 	ld.param.s32 %r1, [vadd_param_1];
// CHECK-NEXT: 	mov.u32 %r2, %tid.x;
// CHECK-NEXT: 	mul.wide.s32 %rd3, %r2, %r2;
// CHECK-NEXT: 	add.s64 %rd4, %rd2, %rd3;
// CHECK-NEXT: 	ld.global.f32 %f1, [%rd4+4];
// CHECK-NEXT: 	mov.f32 %f2, 0f3F800000;
// CHECK-NEXT: 	fma.rn.f32 %f3, %f1, %f2, %f1;
// CHECK-NEXT: 	cvt.rn.bf16.f32 %rs1, %f3;
// CHECK-NEXT: 	mov.b32 %r3, {%rs1, %rs1};
// CHECK-NEXT: 	mov.b32 {%rs1, %rs2}, %r3;
// CHECK-NEXT: 	st.global.f32 [%rd4], %f3;
// CHECK-NEXT: 	setp.lt.s32 %p1, %r2, %r1;
// CHECK-NEXT: 	@!%p1 bra $L__BB0_1;
// CHECK-NEXT: 	bar.sync 0;
// CHECK-NEXT: $L__BB0_1:
// CHECK-NEXT: 	@%p1 trap;
// CHECK-NEXT: 	ret;
// CHECK-NEXT: }
builtin.module attributes {ptx.version = "8.4", ptx.target = "sm_90a"} {
  ptx.entry "vadd" ["u64", "s32"] reqntid [128, 1, 1] {
    ptx.shared_decl "smem"[512] align 16
    %0 = ptx.ld_param "u64"[0] : !ptx.reg<rd1>
    %1 = ptx.cvta "global" %0 : !ptx.reg<rd1> -> !ptx.reg<rd2>
    %n = ptx.ld_param "s32"[1] : !ptx.reg<r1>
    %2 = ptx.special "%tid.x" : !ptx.reg<r2>
    %3 = ptx.mul "s32" "wide" %2, %2 : (!ptx.reg<r2>, !ptx.reg<r2>) -> !ptx.reg<rd3>
    %4 = ptx.add "s64" %1, %3 : (!ptx.reg<rd2>, !ptx.reg<rd3>) -> !ptx.reg<rd4>
    %5 = ptx.ld "global" "f32"[%4, 4] : !ptx.reg<rd4> -> !ptx.reg<f1>
    %6 = ptx.const "f32"(1065353216) : !ptx.reg<f2>
    %7 = ptx.fma "f32" %5, %6, %5 : (!ptx.reg<f1>, !ptx.reg<f2>, !ptx.reg<f1>) -> !ptx.reg<f3>
    %8 = ptx.cvt "rn" "bf16" "f32" %7 : !ptx.reg<f3> -> !ptx.reg<rs1>
    %9 = ptx.pack %8, %8 : (!ptx.reg<rs1>, !ptx.reg<rs1>) -> !ptx.reg<r3>
    %10, %11 = ptx.unpack %9 : !ptx.reg<r3> -> (!ptx.reg<rs1>, !ptx.reg<rs2>)
    ptx.st "global" "f32"[%4, 0], %7 : !ptx.reg<rd4>, !ptx.reg<f3>
    %p = ptx.setp "lt" "s32" %2, %n : (!ptx.reg<r2>, !ptx.reg<r1>) -> !ptx.reg<p1>
    ptx.bra "$L__BB0_1" if %p : !ptx.reg<p1> {negate}
    ptx.bar_sync 0
    ptx.label "$L__BB0_1"
    %12 = ptx.get_register : !ptx.reg<r1>
    ptx.trap if %p : !ptx.reg<p1>
    ptx.ret
  }
}
