// RUN: tylo-opt %s -t ptx | filecheck %s
// (ptxas.mlir assembles this file's PTX.)

// The target prints one PTX line per op: module directives, the entry's parameters and
// .reqntid, one .reg declaration per register class used (up to the highest number), then the
// blocks in order, one line per instruction; labels are not indented, ptx.get_register prints
// nothing, and so does a ptx.bra to the next block (^sync falls through to ^skip).
// CHECK:      .version 8.4
// CHECK-NEXT: .target sm_90a
// CHECK-NEXT: .address_size 64
// Module directives print before every entry, in module order (the last is declared below the
// entries in the IR):
// CHECK-EMPTY:
// CHECK-NEXT: .extern .func (.param .b32 func_retval0) vprintf(.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);
// CHECK-NEXT: .global .align 1 .b8 $str0[13] = {116, 61, 37, 100, 32, 120, 61, 37, 46, 51, 102, 10, 0};
// CHECK-NEXT: .global .align 1 .b8 $str1[10] = {206, 177, 32, 49, 48, 48, 37, 37, 10, 0};
// CHECK-EMPTY:
// CHECK-NEXT: // .globl	vadd
// CHECK-NEXT: .visible .entry vadd(
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
  ptx.extern_func "vprintf" ["b64", "b64"] -> ["b32"]
  ptx.global_string "$str0" = "t=%d x=%.3f\0A"
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
    ptx.cond_bra %p : !ptx.reg<p1>, ^skip, ^sync {negate}
  ^sync:
    ptx.bar_sync 0
    ptx.bra ^skip
  ^skip:
    ptx.label "$L__BB0_1"
    %12 = ptx.get_register : !ptx.reg<r1>
    ptx.trap if %p : !ptx.reg<p1>
    ptx.ret
  }
  // A printf (the sequence nvcc writes): a local argument buffer at C struct offsets, the
  // generic addresses of the format and the buffer, and the call scope.
  ptx.entry "printer" [] {
    ptx.local_decl "__local_depot0"[16] align 8
    %t = ptx.special "%tid.x" : !ptx.reg<r1>
    %d = ptx.const "f64"(4607182418800017408) : !ptx.reg<fd1>
    %buf = ptx.mov_symbol "__local_depot0" : !ptx.reg<rd1>
    ptx.st "local" "b32"[%buf, 0], %t : !ptx.reg<rd1>, !ptx.reg<r1>
    ptx.st "local" "f64"[%buf, 8], %d : !ptx.reg<rd1>, !ptx.reg<fd1>
    %args = ptx.cvta_generic "local" %buf : !ptx.reg<rd1> -> !ptx.reg<rd2>
    %s = ptx.mov_symbol "$str0" : !ptx.reg<rd3>
    %fmt = ptx.cvta_generic "global" %s : !ptx.reg<rd3> -> !ptx.reg<rd4>
    ptx.call_uni @vprintf(%fmt, %args) : (!ptx.reg<rd4>, !ptx.reg<rd2>)
    %s1 = ptx.mov_symbol "$str1" : !ptx.reg<rd5>
    %fmt1 = ptx.cvta_generic "global" %s1 : !ptx.reg<rd5> -> !ptx.reg<rd6>
    %none = ptx.const "b64"(0) : !ptx.reg<rd7>
    ptx.call_uni @vprintf(%fmt1, %none) : (!ptx.reg<rd6>, !ptx.reg<rd7>)
    ptx.ret
  }
  ptx.global_string "$str1" = "\CE\B1 100%%\0A"
}
// CHECK:      .visible .entry printer()
// CHECK-NEXT: {
// CHECK:      	.local .align 8 .b8 __local_depot0[16];
// CHECK-NEXT: 	mov.u32 %r1, %tid.x;
// CHECK-NEXT: 	mov.f64 %fd1, 0d3FF0000000000000;
// CHECK-NEXT: 	mov.u64 %rd1, __local_depot0;
// CHECK-NEXT: 	st.local.b32 [%rd1], %r1;
// CHECK-NEXT: 	st.local.f64 [%rd1+8], %fd1;
// CHECK-NEXT: 	cvta.local.u64 %rd2, %rd1;
// CHECK-NEXT: 	mov.u64 %rd3, $str0;
// CHECK-NEXT: 	cvta.global.u64 %rd4, %rd3;
// CHECK-NEXT: 	{
// CHECK-NEXT: 	.param .b64 param0;
// CHECK-NEXT: 	st.param.b64 [param0], %rd4;
// CHECK-NEXT: 	.param .b64 param1;
// CHECK-NEXT: 	st.param.b64 [param1], %rd2;
// CHECK-NEXT: 	.param .b32 retval0;
// CHECK-NEXT: 	call.uni (retval0), vprintf, (param0, param1);
// CHECK-NEXT: 	}
// CHECK:      	call.uni (retval0), vprintf, (param0, param1);
// CHECK:      	ret;
// CHECK-NEXT: }
