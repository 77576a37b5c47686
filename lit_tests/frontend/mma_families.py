# RUN: %python %s | filecheck %s
# REQUIRES: ptxas
# The FP64, 4-bit and single-bit mma.sync atoms (PTX ISA 9.7.14.5.14), each through load_a /
# load_b / mma / store of one warp, assembled by ptxas for sm_90a (m8n8k4 .f64 also for sm_80).
# FP64: .f64 registers in every operand (9.7.14.5.2/6/7/8: 1, 2, 4, 8 A registers; 1, 1, 2, 4 B;
# 2 or 4 C and D), loaded by ld.global.f64. 4-bit and .b1: the operands are the packed words
# read from a UInt32 tile (one ld.global.b32 per .b32 register, no repacking), with
# .satfinite after .row.col and .and.popc / .xor.popc after the types.
import tylo
from tylo import Bit1, Float64, Int4, Int32, MMAAtom, Tensor, TiledMMA, UInt4, UInt32


@tylo.kernel
def tile(C, A, B, plan: tylo.constexpr, kw: tylo.constexpr):
    """C = A @ B over one warp; kw: K in A's and B's tile elements (K, or K / e for words)."""
    M, N, K = plan.tile_shape
    t = tylo.thread_idx()
    a = tylo.load_a(plan, tylo.window(A, (0, 0), (M, kw)), t)
    b = tylo.load_b(plan, tylo.window(B, (0, 0), (kw, N)), t)
    tylo.store(tylo.window(C, (0, 0), (M, N)), tylo.mma(plan, a, b, tylo.accumulator(plan)), t)


def ptx(atom, arch="sm_90a"):
    plan = TiledMMA(atom)
    e = atom.instruction.register_elements("A")
    ab = Tensor(UInt32 if atom.a.sub_byte else atom.a, 2)
    return tile.compile(Tensor(atom.c, 2), ab, ab, plan, plan.tile_shape[2] // e, block=32,
                        arch=arch).ptx


F64 = (Float64, Float64)
for shape in ((8, 8, 4), (16, 8, 4), (16, 8, 8), (16, 8, 16)):
    print(ptx(MMAAtom(shape, *F64)))
print(ptx(MMAAtom((8, 8, 4), *F64), "sm_80"))
print(ptx(MMAAtom((8, 8, 32), Int4, Int32, b=UInt4)))
print(ptx(MMAAtom((16, 8, 64), UInt4, Int32, satfinite=True)))
print(ptx(MMAAtom((8, 8, 128), Bit1, Int32, bit_op="xor")))
print(ptx(MMAAtom((16, 8, 256), Bit1, Int32, bit_op="and")))

# CHECK-LABEL: .visible .entry tile(
# CHECK-COUNT-2: ld.global.f64
# CHECK-NOT:   ld.global
# CHECK:       mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%fd{{[0-9]+}}, %fd{{[0-9]+}}}, {%fd{{[0-9]+}}}, {%fd{{[0-9]+}}}, {%fd{{[0-9]+}}, %fd{{[0-9]+}}};
# CHECK-COUNT-2: st.global.f64
# CHECK-LABEL: .visible .entry tile(
# CHECK:       mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%fd{{[0-9]+}}, %fd{{[0-9]+}}, %fd{{[0-9]+}}, %fd{{[0-9]+}}}, {%fd{{[0-9]+}}, %fd{{[0-9]+}}}, {%fd{{[0-9]+}}}, {%fd{{[0-9]+}}, %fd{{[0-9]+}}, %fd{{[0-9]+}}, %fd{{[0-9]+}}};
# CHECK-LABEL: .visible .entry tile(
# CHECK:       mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%fd{{[0-9]+}}, %fd{{[0-9]+}}, %fd{{[0-9]+}}, %fd{{[0-9]+}}}, {%fd{{[0-9]+}}, %fd{{[0-9]+}}, %fd{{[0-9]+}}, %fd{{[0-9]+}}}, {%fd{{[0-9]+}}, %fd{{[0-9]+}}}, {%fd{{[0-9]+}}, %fd{{[0-9]+}}, %fd{{[0-9]+}}, %fd{{[0-9]+}}};
# CHECK-LABEL: .visible .entry tile(
# CHECK:       mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%fd{{[0-9]+}}, %fd{{[0-9]+}}, %fd{{[0-9]+}}, %fd{{[0-9]+}}}, {%fd{{[0-9]+}}, %fd{{[0-9]+}}, %fd{{[0-9]+}}, %fd{{[0-9]+}}, %fd{{[0-9]+}}, %fd{{[0-9]+}}, %fd{{[0-9]+}}, %fd{{[0-9]+}}}, {%fd{{[0-9]+}}, %fd{{[0-9]+}}, %fd{{[0-9]+}}, %fd{{[0-9]+}}}, {%fd{{[0-9]+}}, %fd{{[0-9]+}}, %fd{{[0-9]+}}, %fd{{[0-9]+}}};
# CHECK:       .target sm_80
# CHECK-LABEL: .visible .entry tile(
# CHECK:       mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64

# 4-bit: one word each of A and B at m8n8k32, .s4 A and .u4 B
# CHECK-LABEL: .visible .entry tile(
# CHECK-COUNT-2: ld.global.b32
# CHECK-NOT:   ld.global
# CHECK-NOT:   shl.b32
# CHECK:       mma.sync.aligned.m8n8k32.row.col.s32.s4.u4.s32 {%r{{[0-9]+}}, %r{{[0-9]+}}}, {%r{{[0-9]+}}}, {%r{{[0-9]+}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}};
# CHECK-COUNT-2: st.global.b32
# m16n8k64: four A words, two B words
# CHECK-LABEL: .visible .entry tile(
# CHECK-COUNT-6: ld.global.b32
# CHECK-NOT:   ld.global
# CHECK:       mma.sync.aligned.m16n8k64.row.col.satfinite.s32.u4.u4.s32 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}};
# CHECK-LABEL: .visible .entry tile(
# CHECK:       mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.xor.popc {%r{{[0-9]+}}, %r{{[0-9]+}}}, {%r{{[0-9]+}}}, {%r{{[0-9]+}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}};
# CHECK-LABEL: .visible .entry tile(
# CHECK-COUNT-6: ld.global.b32
# CHECK:       mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}};
