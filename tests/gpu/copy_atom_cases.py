"""The ldmatrix/stmatrix cases the copy-atom tests share, their kernels, and the host model.

Each case is an ownership over a shared tile layout that yields exactly one instruction of one
CopyAtom variant: plain copies read a row-major tile (axis 1 contiguous), transposed ones the
same ownership over a column-major tile (axis 0 contiguous). `predicted_table` is the host
model: what each (lane, slot) receives, derived from the CopyAtom's registers ownership and the
MatrixCopyPlan alone (not from the target ownership), so a test that compares it with the
ownership table checks the plan, and one that compares it with the GPU checks the hardware.
Zero-based throughout: axis 0 rows, axis 1 columns; slots, words, blocks from 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import tylo
from tylo.compiler.atoms.copy_atom import CopyAtom
from tylo.compiler.hardware.dtypes import BFloat16, DType, Float8E4M3, Int8
from tylo.compiler.layout.layout import Layout
from tylo.compiler.atoms.mma_atom import MMAAtom
from tylo.compiler.ownership.ownership import Ownership
from tylo.compiler.plans.matrix_copy import MatrixCopyPlan, matrix_copy_plan
from tylo.compiler.layout.swizzle import ComposedLayout, Swizzle
from tylo.compiler.atoms.tiled_mma import TiledMMA

_BF16 = MMAAtom((16, 8, 16), BFloat16)
_I8 = MMAAtom((16, 8, 32), Int8, tylo.Int32)
_TILED = TiledMMA(_BF16, warps=(2, 2), repeat=(1, 2), k=16)

OWNERSHIPS = {
    1: CopyAtom("load").operand_layout("registers"),  # one 8x8 block: .x1
    2: _BF16.operand_layout("C"),  # 16x8, blocks along rows: .x2
    4: _BF16.operand_layout("A"),  # 16x16: .x4
}


def row_major(shape) -> Layout:
    return Layout(tuple(shape), (shape[1], 1))


def column_major(shape) -> Layout:
    return Layout(tuple(shape), (1, shape[0]))


@dataclass(frozen=True)
class Case:
    op: str  # "load" (ldmatrix) or "store" (stmatrix)
    trans: bool
    nums: tuple[int, ...]  # matrices of each instruction, in order
    ownership: Ownership
    layout: object  # the shared tile's layout
    dtype: DType = BFloat16

    @property
    def axis(self) -> int:
        inner = getattr(self.layout, "layout", self.layout)
        return 1 if inner.stride[1] == 1 else 0

    @property
    def plan(self) -> MatrixCopyPlan:
        plan = matrix_copy_plan(self.ownership, self.dtype, self.axis)
        assert plan is not None, f"{self}: no matrix copy plan"
        return plan

    @property
    def mnemonics(self) -> list[str]:
        """The instructions the kernel must issue, in order (from the table, not the plan)."""
        return [CopyAtom(self.op, self.trans).mnemonic(n) for n in self.nums]

    @property
    def threads(self) -> int:
        return self.ownership.threads

    def __str__(self) -> str:
        extra = "" if self.dtype is BFloat16 else f"-{self.dtype.ptx}"
        if isinstance(self.layout, ComposedLayout):
            extra += "-swizzled"
        if self.threads > 32:
            extra += f"-{self.threads // 32}warps-{self.ownership.shape[0]}x{self.ownership.shape[1]}"
        counts = "+".join(f"x{n}" for n in self.nums)
        return f"{self.op}{'-trans' if self.trans else ''}-{counts}{extra}"


#: Six blocks in a 3x2 grid: an .x4 whose blocks (0,0), (8,0), (16,0), (0,8) are not affine in
#: the lane bits (row addresses by selects), then an .x2.
_GRID_3X2 = Ownership((24, 16), Layout(((4, 8), (2, 3, 2)), ((48, 1), (24, 8, 192))))

CASES = [
    Case(op, trans, (num,), own, (column_major if trans else row_major)(own.shape))
    for op in ("load", "store")
    for trans in (False, True)
    for num, own in OWNERSHIPS.items()
] + [
    # Rows of 32 bytes whose two 16-byte halves swap every 4 rows (Sw<1,3,3> on element offsets).
    Case("load", False, (4,), OWNERSHIPS[4], ComposedLayout(Swizzle(1, 3, 3), row_major((16, 16)))),
    Case("load", False, (4, 2), _GRID_3X2, row_major((24, 16))),
    Case("store", False, (4, 2), _GRID_3X2, row_major((24, 16))),
    # Four warps (a 2x2 TiledMMA): each warp's blocks are warp 0's, translated.
    Case("load", False, (4,), _TILED.operand_layout("A"), row_major((32, 16))),
    Case("load", True, (4,), _TILED.operand_layout("B"), row_major((16, 32))),
    Case("store", True, (4,), _TILED.operand_layout("B"), row_major((16, 32))),
    # 8-bit: a unit is two adjacent bytes (A of m16n8k32, 16x32, 16 slots); s8 sign-extends
    # its bytes in registers, e4m3 zero-extends them.
    Case("load", False, (4,), _I8.operand_layout("A"), row_major((16, 32)), Int8),
    Case("store", False, (4,), _I8.operand_layout("A"), row_major((16, 32)), Int8),
    Case("load", False, (4,), _I8.operand_layout("A"), row_major((16, 32)), Float8E4M3),
    Case("store", False, (4,), _I8.operand_layout("A"), row_major((16, 32)), Float8E4M3),
]


def predicted_table(case: Case) -> list[list[tuple[int, int]]]:
    """table[thread][slot]: the logical (row, col) the instructions of `case.plan` move for that
    thread (lane t % 32 of warp t // 32) and slot, from the CopyAtom registers ownership:
    register j of instruction i carries block b = first + j, whose word words[b] packs slots
    word_slots(words[b]), low first; unit v of the register is unit (mr, mc) of the block, i.e.
    logical origin + (mr, mc * per_unit) for axis 1 or origin + (mc * per_unit, mr) for axis 0,
    plus the element within the unit, plus the warp's offset."""
    plan = case.plan
    regs = CopyAtom(case.op, plan.trans).operand_layout("registers")
    pu = plan.per_unit
    table = [[None] * case.ownership.values for _ in range(case.threads)]
    for first, count in plan.instructions:
        for b in range(first, first + count):
            slots = plan.word_slots(plan.words[b])
            for t in range(case.threads):
                r0, c0 = plan.origins[b]
                dr, dc = plan.warp_offsets[t // 32]
                for v in range(2):
                    mr, mc = regs(t % 32, v)
                    for e in range(pu):
                        if plan.axis == 1:
                            rc = (r0 + dr + mr, c0 + dc + mc * pu + e)
                        else:
                            rc = (r0 + dr + mc * pu + e, c0 + dc + mr)
                        table[t][slots[v * pu + e]] = rc
    return table


# Kernels (see test_copy_atoms_gpu.py): `out` gets the matrix copy's result, `ref` the scalar path's.


@tylo.kernel
def load_through_shared(out, ref, X, own: tylo.constexpr, layout: tylo.constexpr):
    t = tylo.thread_idx()
    R, C = own.shape
    N = own.threads
    S = tylo.SharedTile(tylo.shared_alloc(X.dtype, R * C), layout)
    for i in tylo.static_range(R * C // N):
        idx = t + N * i
        S[idx % R, idx // R] = X[idx % R, idx // R]
    tylo.barrier()
    f = tylo.load_fragment(own, S, t)  # ldmatrix
    g = tylo.load_fragment(own, tylo.window(X, (0, 0), (R, C)), t)  # scalar loads
    for v in tylo.static_range(own.values):
        out[t, v] = f[v]
        ref[t, v] = g[v]


@tylo.kernel
def store_through_shared(out, ref, V, P, own: tylo.constexpr, layout: tylo.constexpr):
    t = tylo.thread_idx()
    R, C = own.shape
    N = own.threads
    S = tylo.SharedTile(tylo.shared_alloc(V.dtype, R * C), layout)
    for i in tylo.static_range(R * C // N):
        idx = t + N * i
        S[idx % R, idx // R] = P[idx % R, idx // R]  # poison the shared tile
    tylo.barrier()
    f = tylo.load_fragment(own, tylo.window(V, (0, 0), (R, C)), t)  # f[v] = code(t, v)
    tylo.store(S, f, t)  # stmatrix
    tylo.store(tylo.window(ref, (0, 0), (R, C)), f, t)  # scalar stores
    tylo.barrier()
    for i in tylo.static_range(R * C // N):
        idx = t + N * i
        out[idx % R, idx // R] = S[idx % R, idx // R]
