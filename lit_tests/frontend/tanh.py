# RUN: %python %s | filecheck %s
# REQUIRES: ptxas
# tylo.tanh is one instruction, tanh.approx.f32 (PTX ISA 9.7.3.22, sm_75+), recorded by the
# frontend as ptx.tanh on unallocated registers (dialects/direct.py) and numbered by selection
# in order with the registers around it, at the tylo.tanh call's line and column (its .loc);
# on a fragment, once per slot. The compile assembles the PTX with ptxas for sm_75.
import tylo
from tylo import BFloat16, Float32, MMAAtom

C = MMAAtom((16, 8, 16), BFloat16, Float32).operand_layout("C")


@tylo.kernel
def scalar_tanh(y, x):
    i = tylo.thread_idx()
    y[i] = tylo.tanh(x[i]) * 2.0


@tylo.kernel
def fragment_tanh(out, A):
    t = tylo.thread_idx()
    f = tylo.load_fragment(C, tylo.window(A, (0, 0), (16, 8)), t)
    tylo.store(tylo.window(out, (0, 0), (16, 8)), tylo.tanh(f), t)


# CHECK-LABEL: .visible .entry scalar_tanh(
# CHECK:       ld.global.f32 %[[X:f[0-9]+]]
# CHECK-NEXT:  .loc {{[0-9]+}} 16 12
# CHECK-NEXT:  tanh.approx.f32 %[[T:f[0-9]+]], %[[X]];
# CHECK-NEXT:  mov.f32 %[[TWO:f[0-9]+]], 0f40000000;
# CHECK-NEXT:  mul.rn.f32 %{{f[0-9]+}}, %[[T]], %[[TWO]];
print(scalar_tanh.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1), arch="sm_75").ptx)

# CHECK-LABEL: .visible .entry fragment_tanh(
# CHECK-COUNT-4: tanh.approx.f32 %f{{[0-9]+}}, %f{{[0-9]+}};
# CHECK-NOT:   tanh
print(fragment_tanh.compile(tylo.Tensor(Float32, 2), tylo.Tensor(Float32, 2), arch="sm_75").ptx)
