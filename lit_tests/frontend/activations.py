# RUN: %python %s | filecheck %s
# REQUIRES: ptxas
# tylo.sigmoid, silu, gelu (both forms) and erf are sequences of existing instructions
# (frontend/language/activations.py): ex2.approx.f32 is the only approximate one, the rest are correctly
# rounded (mul.rn, add.rn, sub.rn, fma.rn, rcp.rn: ptxas contracts none of them), abs, neg, setp
# and selp. Constants are the double values rounded to f32: -log2 e = 0fBFB8AA3B; gelu tanh's
# c0 = -2 sqrt(2/pi) log2 e = 0fC0135761, c1 = c0 * 0.044715 = 0fBDD2D3E8; erf's series starts at
# 2/sqrt(pi) = 0f3F906EBB, Abramowitz and Stegun 7.1.26's p = 0.3275911 = 0f3EA7BA05.
# BFloat16 is computed in f32 and rounded once; on a fragment, once per slot. The compile
# assembles the PTX with ptxas (sm_90a).
import tylo
from tylo import BFloat16, Float32, MMAAtom

C = MMAAtom((16, 8, 16), BFloat16, Float32).operand_layout("C")
F32 = tylo.Tensor(Float32, 1)


@tylo.kernel
def unary(y, x, fn: tylo.constexpr):
    i = tylo.thread_idx()
    y[i] = fn(x[i])


def gelu_tanh(x):
    return tylo.gelu(x, approximate="tanh")


@tylo.kernel
def fragment_gelu_tanh(out, A):
    t = tylo.thread_idx()
    f = tylo.load_fragment(C, tylo.window(A, (0, 0), (16, 8)), t)
    tylo.store(tylo.window(out, (0, 0), (16, 8)), tylo.gelu(f, approximate="tanh"), t)


def show(name, fn, t=F32):
    print(f"// ---- {name}")
    print(unary.compile(t, t, fn, arch="sm_90a").ptx)


# CHECK-LABEL: // ---- sigmoid
# CHECK:       ld.global.f32 %[[X:f[0-9]+]]
# CHECK:       mov.f32 %[[L:f[0-9]+]], 0fBFB8AA3B;
# CHECK-NEXT:  mul.rn.f32 %[[Z:f[0-9]+]], %[[X]], %[[L]];
# CHECK-NEXT:  ex2.approx.f32 %[[E:f[0-9]+]], %[[Z]];
# CHECK-NEXT:  mov.f32 %[[ONE:f[0-9]+]], 0f3F800000;
# CHECK-NEXT:  add.rn.f32 %[[D:f[0-9]+]], %[[ONE]], %[[E]];
# CHECK-NEXT:  rcp.rn.f32 %[[S:f[0-9]+]], %[[D]];
# CHECK:       st.global.f32 [%{{rd[0-9]+}}], %[[S]];
show("sigmoid", tylo.sigmoid)

# CHECK-LABEL: // ---- silu
# CHECK:       ld.global.f32 %[[X:f[0-9]+]]
# CHECK:       mov.f32 %[[L:f[0-9]+]], 0fBFB8AA3B;
# CHECK-NEXT:  mul.rn.f32 %[[Z:f[0-9]+]], %[[X]], %[[L]];
# CHECK-NEXT:  ex2.approx.f32 %[[E:f[0-9]+]], %[[Z]];
# CHECK-NEXT:  mov.f32 %[[ONE:f[0-9]+]], 0f3F800000;
# CHECK-NEXT:  add.rn.f32 %[[D:f[0-9]+]], %[[ONE]], %[[E]];
# CHECK-NEXT:  rcp.rn.f32 %[[S:f[0-9]+]], %[[D]];
# CHECK-NEXT:  mul.rn.f32 %[[Y:f[0-9]+]], %[[X]], %[[S]];
# CHECK:       st.global.f32 [%{{rd[0-9]+}}], %[[Y]];
show("silu", tylo.silu)

# CHECK-LABEL: // ---- gelu tanh
# CHECK:       ld.global.f32 %[[X:f[0-9]+]]
# CHECK:       mul.rn.f32 %[[X2:f[0-9]+]], %[[X]], %[[X]];
# CHECK-NEXT:  mov.f32 %[[C1:f[0-9]+]], 0fBDD2D3E8;
# CHECK-NEXT:  mov.f32 %[[C0:f[0-9]+]], 0fC0135761;
# CHECK-NEXT:  fma.rn.f32 %[[P:f[0-9]+]], %[[X2]], %[[C1]], %[[C0]];
# CHECK-NEXT:  mul.rn.f32 %[[Z:f[0-9]+]], %[[X]], %[[P]];
# CHECK-NEXT:  ex2.approx.f32 %[[E:f[0-9]+]], %[[Z]];
# CHECK-NEXT:  mov.f32 %[[ONE:f[0-9]+]], 0f3F800000;
# CHECK-NEXT:  add.rn.f32 %[[D:f[0-9]+]], %[[ONE]], %[[E]];
# CHECK-NEXT:  rcp.rn.f32 %[[S:f[0-9]+]], %[[D]];
# CHECK-NEXT:  mul.rn.f32 %[[Y:f[0-9]+]], %[[X]], %[[S]];
# CHECK:       st.global.f32 [%{{rd[0-9]+}}], %[[Y]];
# CHECK-NOT:   tanh
show("gelu tanh", gelu_tanh)

# erf: the series x * P(x^2) (eleven coefficients, ten fma.rn), then 7.1.26's tail q, 1 - q
# with the sign of x, and the selp on |x| < 1.
# CHECK-LABEL: // ---- erf
# CHECK:       ld.global.f32 %[[X:f[0-9]+]]
# CHECK:       abs.f32 %[[A:f[0-9]+]], %[[X]];
# CHECK-NEXT:  mul.rn.f32 %[[W:f[0-9]+]], %[[X]], %[[X]];
# CHECK-COUNT-9: fma.rn.f32 %{{f[0-9]+}}, %{{f[0-9]+}}, %[[W]], %{{f[0-9]+}};
# CHECK:       mov.f32 %[[B0:f[0-9]+]], 0f3F906EBB;
# CHECK-NEXT:  fma.rn.f32 %[[PW:f[0-9]+]], %{{f[0-9]+}}, %[[W]], %[[B0]];
# CHECK-NEXT:  mul.rn.f32 %[[SERIES:f[0-9]+]], %[[X]], %[[PW]];
# CHECK-NEXT:  mov.f32 %[[P:f[0-9]+]], 0f3EA7BA05;
# CHECK-NEXT:  mov.f32 %[[ONE:f[0-9]+]], 0f3F800000;
# CHECK-NEXT:  fma.rn.f32 %[[D:f[0-9]+]], %[[A]], %[[P]], %[[ONE]];
# CHECK-NEXT:  rcp.rn.f32 %[[T:f[0-9]+]], %[[D]];
# CHECK-NEXT:  mul.rn.f32 %[[A2:f[0-9]+]], %[[A]], %[[A]];
# CHECK-NEXT:  mov.f32 %[[L:f[0-9]+]], 0fBFB8AA3B;
# CHECK-NEXT:  mul.rn.f32 %[[G:f[0-9]+]], %[[A2]], %[[L]];
# CHECK-NEXT:  ex2.approx.f32 %[[GAUSS:f[0-9]+]], %[[G]];
# CHECK-COUNT-4: fma.rn.f32 %{{f[0-9]+}}, %{{f[0-9]+}}, %[[T]], %{{f[0-9]+}};
# CHECK-NEXT:  mul.rn.f32 %[[TH:f[0-9]+]], %[[T]], %{{f[0-9]+}};
# CHECK-NEXT:  mul.rn.f32 %[[Q:f[0-9]+]], %[[TH]], %[[GAUSS]];
# CHECK-NEXT:  setp.lt.f32 %[[SMALL:p[0-9]+]], %[[A]], %[[ONE]];
# CHECK-NEXT:  sub.rn.f32 %[[TAIL:f[0-9]+]], %[[ONE]], %[[Q]];
# CHECK-NEXT:  mov.f32 %[[ZERO:f[0-9]+]], 0f00000000;
# CHECK-NEXT:  setp.lt.f32 %[[NEG:p[0-9]+]], %[[X]], %[[ZERO]];
# CHECK-NEXT:  neg.f32 %[[MTAIL:f[0-9]+]], %[[TAIL]];
# CHECK-NEXT:  selp.f32 %[[SIGNED:f[0-9]+]], %[[MTAIL]], %[[TAIL]], %[[NEG]];
# CHECK-NEXT:  selp.f32 %[[Y:f[0-9]+]], %[[SERIES]], %[[SIGNED]], %[[SMALL]];
# CHECK:       st.global.f32 [%{{rd[0-9]+}}], %[[Y]];
show("erf", tylo.erf)

# gelu: erf's two branches on x * (1 / sqrt 2) (0f3F3504F3); 1 + erf is 1 + the series, q, or
# 2 - q; then (x * 0.5) times it.
# CHECK-LABEL: // ---- gelu
# CHECK:       ld.global.f32 %[[X:f[0-9]+]]
# CHECK:       mov.f32 %[[R:f[0-9]+]], 0f3F3504F3;
# CHECK-NEXT:  mul.rn.f32 %[[U:f[0-9]+]], %[[X]], %[[R]];
# CHECK-NEXT:  abs.f32 %{{f[0-9]+}}, %[[U]];
# CHECK:       ex2.approx.f32 %[[GAUSS:f[0-9]+]],
# CHECK-COUNT-4: fma.rn.f32
# CHECK-NEXT:  mul.rn.f32 %[[TH:f[0-9]+]],
# CHECK-NEXT:  mul.rn.f32 %[[Q:f[0-9]+]], %[[TH]], %[[GAUSS]];
# CHECK-NEXT:  setp.lt.f32 %[[SMALL:p[0-9]+]], %{{f[0-9]+}}, %[[ONE:f[0-9]+]];
# CHECK-NEXT:  add.rn.f32 %[[ONEPLUS:f[0-9]+]], %[[ONE]], %{{f[0-9]+}};
# CHECK-NEXT:  mov.f32 %[[ZERO:f[0-9]+]], 0f00000000;
# CHECK-NEXT:  setp.lt.f32 %[[NEG:p[0-9]+]], %[[X]], %[[ZERO]];
# CHECK-NEXT:  mov.f32 %[[TWO:f[0-9]+]], 0f40000000;
# CHECK-NEXT:  sub.rn.f32 %[[UPPER:f[0-9]+]], %[[TWO]], %[[Q]];
# CHECK-NEXT:  selp.f32 %[[TAIL:f[0-9]+]], %[[Q]], %[[UPPER]], %[[NEG]];
# CHECK-NEXT:  selp.f32 %[[PHI:f[0-9]+]], %[[ONEPLUS]], %[[TAIL]], %[[SMALL]];
# CHECK-NEXT:  mov.f32 %[[HALF:f[0-9]+]], 0f3F000000;
# CHECK-NEXT:  mul.rn.f32 %[[HX:f[0-9]+]], %[[X]], %[[HALF]];
# CHECK-NEXT:  mul.rn.f32 %[[Y:f[0-9]+]], %[[HX]], %[[PHI]];
# CHECK:       st.global.f32 [%{{rd[0-9]+}}], %[[Y]];
show("gelu", tylo.gelu)

# BFloat16: converted to f32 exactly, computed there, rounded once.
# CHECK-LABEL: // ---- sigmoid bf16
# CHECK:       ld.global.b16 %[[H:rs[0-9]+]]
# CHECK:       cvt.f32.bf16 %[[X:f[0-9]+]], %[[H]];
# CHECK:       rcp.rn.f32 %[[S:f[0-9]+]],
# CHECK-NEXT:  cvt.rn.bf16.f32 %[[Y:rs[0-9]+]], %[[S]];
# CHECK:       st.global.b16 [%{{rd[0-9]+}}], %[[Y]];
show("sigmoid bf16", tylo.sigmoid, tylo.Tensor(BFloat16, 1))

# CHECK-LABEL: .visible .entry fragment_gelu_tanh(
# CHECK-COUNT-4: ex2.approx.f32 %f{{[0-9]+}}, %f{{[0-9]+}};
# CHECK-NOT:   ex2
F2 = tylo.Tensor(Float32, 2)
print(fragment_gelu_tanh.compile(F2, F2, arch="sm_90a").ptx)
