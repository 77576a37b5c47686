# RUN: %python %s | filecheck %s
# REQUIRES: ptxas
# tylo.red_add of a tuple of 2 or 4 Float32 values is one red.global.add.v2.f32 / .v4.f32 (PTX
# ISA 9.7.13.6, red with vector type; sm_90, PTX ISA 8.1): its values brace-enclosed, the
# address of the first element, with the scalar form's .relaxed.gpu qualifiers (or the sem and
# scope asked). An mma accumulator's slots 2i, 2i + 1 are adjacent columns, so a fragment adds
# as pairs: 2 vector reductions for its 4 slots. The compile assembles the PTX with ptxas for
# sm_90a; the scalar form prints as before.
import tylo
from tylo import BFloat16, Float32, MMAAtom

C = MMAAtom((16, 8, 16), BFloat16, Float32).operand_layout("C")


@tylo.kernel
def vectors(out, x):
    i = tylo.thread_idx()
    tylo.red_add(out, 2 * i, (x[2 * i], x[2 * i + 1]))
    tylo.red_add(out.ptr + 4 * i, 0, (x[0], x[1], x[2], x[3]), sem="release", scope="sys")
    tylo.red_add(out, i, x[i])


@tylo.kernel
def fragment_pairs(out, A):
    t = tylo.thread_idx()
    f = tylo.load_fragment(C, tylo.window(A, (0, 0), (16, 8)), t)
    rows, cols = tylo.coordinates(C, t)
    for v in tylo.static_range(0, C.values, 2):
        tylo.red_add(out.ptr, rows[v] * 8 + cols[v], (f[v], f[v + 1]))


# CHECK-LABEL: .visible .entry vectors(
# CHECK:       red.relaxed.gpu.global.add.v2.f32 [%rd{{[0-9]+}}], {%f{{[0-9]+}}, %f{{[0-9]+}}};
# CHECK:       red.release.sys.global.add.v4.f32 [%rd{{[0-9]+}}], {%f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}}};
# CHECK:       red.relaxed.gpu.global.add.f32 [%rd{{[0-9]+}}], %f{{[0-9]+}};
print(vectors.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1), arch="sm_90a").ptx)

# CHECK-LABEL: .visible .entry fragment_pairs(
# CHECK-COUNT-2: red.relaxed.gpu.global.add.v2.f32 [%rd{{[0-9]+}}], {%f{{[0-9]+}}, %f{{[0-9]+}}};
# CHECK-NOT:   red.
print(fragment_pairs.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 2), arch="sm_90a").ptx)
