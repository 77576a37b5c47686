# RUN: %python %s | filecheck %s
# REQUIRES: ptxas
# tylo.print: Python's format syntax, static values formatted while compiling, runtime values
# promoted as C's varargs are and passed to vprintf in one buffer (a C struct: nine values,
# 56 bytes); ptxas assembles the kernel (its report is printed last), with prints in a runtime
# if and in a runtime loop.
import tylo
from tylo import BFloat16, Float32, Int8, Int32, Int64, UInt16


@tylo.kernel
def show(i32, f32, bf16, i64, i8, u16, n, label: tylo.constexpr):
    t = tylo.thread_idx()
    if t < n:
        tylo.print("{} t={:>4} i32={:+d} hex={:08x} f32={:.3f} bf16={:e} i64={} i8={} i8x={:02x} "
                   "u16={} 100%", label, t, i32[t], i32[t], f32[t], bf16[t], i64[t], i8[t], i8[t],
                   u16[t])
    for k in range(n):
        tylo.print("k={} {{braces}}", k, end="")
    tylo.print("{!r} {:.2f}", "static", 1.0 / 3.0)


# The format is C's, each conversion chosen from the dtype; floats are widened to f64 (bf16
# through f32), Int8 to i32 (masked to its 8 bits for hex), UInt16 to i32 (masked, printed %u).
# CHECK-LABEL: func.func @show
# CHECK:       scf.if
# CHECK:         %[[F:.*]] = arith.extf %{{.*}} : f32 to f64
# CHECK:         %[[B32:.*]] = arith.extf %{{.*}} : bf16 to f32
# CHECK-NEXT:    %[[B:.*]] = arith.extf %[[B32]] : f32 to f64
# CHECK:         %[[C:.*]] = arith.extsi %{{.*}} : i8 to i32
# CHECK:         %[[M:.*]] = arith.andi %{{.*}}, %{{.*}} : i32
# CHECK:         arith.extui %{{.*}} : i16 to i32
# CHECK:         %[[U:.*]] = arith.andi %{{.*}}, %{{.*}} : i32
# CHECK-NEXT:    tylo.print "lbl t=%4d i32=%+d hex=%08x f32=%.3f bf16=%e i64=%lld i8=%d i8x=%02x u16=%u 100%%\0A" %{{.*}}, %{{.*}}, %{{.*}}, %[[F]], %[[B]], %{{.*}}, %[[C]], %[[M]], %[[U]] : i32, i32, i32, f64, f64, i64, i32, i32, i32
# CHECK:       scf.for
# CHECK-NEXT:    tylo.print "k=%d {braces}" %{{.*}} : i32
# CHECK:       tylo.print "'static' 0.33\0A"
compiled = show.compile(tylo.Tensor(Int32, 1), tylo.Tensor(Float32, 1), tylo.Tensor(BFloat16, 1),
                        tylo.Tensor(Int64, 1), tylo.Tensor(Int8, 1), tylo.Tensor(UInt16, 1), 8,
                        "lbl", block=32)
print(compiled.asm["tylo"])

# CHECK:       .extern .func (.param .b32 func_retval0) vprintf(.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);
# CHECK-NEXT:  .global .align 1 .b8 $str0[
# CHECK-NEXT:  .global .align 1 .b8 $str1[
# CHECK-NEXT:  .global .align 1 .b8 $str2[
# CHECK:       .local .align 8 .b8 __local_depot0[56];
# CHECK-COUNT-3: call.uni (retval0), vprintf, (param0, param1);
print(compiled.ptx)
# CHECK:       show: {{[0-9]+}} registers, 0 bytes smem, {{[0-9]+}} bytes stack
print(compiled.report)
