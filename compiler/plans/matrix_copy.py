"""Matrix copy plans: cover a warp's ownership with ``ldmatrix``/``stmatrix`` 8x8 blocks.

`matrix_copy_plan(ownership, dtype, axis)` decomposes a 32-lane ownership of 8- or 16-bit
elements into `CopyAtom` blocks, given the logical axis that shared memory stores contiguously.
All indices are zero-based (Julia Tylo's slots, words and blocks are 1-based); axis 0 is rows,
axis 1 columns (Julia Tylo's axes 1 and 2).

Terms. A *unit* is 16 bits: one 16-bit element, or ``per_unit = 2`` adjacent 8-bit elements
along `axis` starting at an even coordinate (low byte first). A *word* of a thread's fragment is
the ``2 * per_unit`` consecutive slots ``[w * 2 * per_unit, (w + 1) * 2 * per_unit)``, lowest
slot in the low bits (the packing of a PackedFragment). Memory coordinates of a unit are
(across, along // per_unit): across is the logical coordinate on the other axis (the memory row),
along the coordinate on `axis`. A *block* is an 8x8-unit matrix of memory coordinates aligned to
multiples of 8: the matrix of one ldmatrix/stmatrix register (PTX ISA 9.7.14.5.15/16, facts
section 2.3). ``.trans`` moves whole 16-bit units: 8-bit data is never transposed byte by byte
(fp8 B of m16n8k32 with N contiguous has no plan: its byte pairs run along K), but an 8-bit
ownership whose byte pairs lie along `axis` and follow the transposed unit pattern does use it.

A plan exists when every fragment word w lands in one block b(w), the same for every lane, its
two units at the places the atom's register pattern gives lane l (plain: (l//4, 2(l%4)+v);
transposed: (2(l%4)+v, l//4)), all words of all lanes following the same pattern, the map
w -> b(w) is one-to-one and the blocks form a full grid: every pair of a touched block row and a
touched block column is a block (rows and columns need not be adjacent, so a warp of a TiledMMA
with repeats qualifies). Blocks are numbered in word order (block w moves word w), so the
registers of each ``.x4`` are four consecutive words: an MMA atom's A operand (m16n8k16: 4
words) or two atoms' B operands land in the registers mma.sync takes, with no moves between
the ldmatrix and the mma (a column-major numbering over the grid made ptxas shuffle them).

Ownerships over more than 32 threads (a TiledMMA's CTA ownership) are handled per warp: thread
t is lane t % 32 of warp t // 32. Every warp must have the same plan up to a translation of the
whole block grid; the plan describes warp 0 and `warp_offsets[w]` the logical translation of warp
w (for A of a TiledMMA with several N warps several warps share an offset). Otherwise no plan.
"""

from __future__ import annotations

from dataclasses import dataclass


from ..support.lazy_modules import np
from ..atoms.copy_atom import CopyAtom, address_lane
from ..hardware.dtypes import DType
from ..support.errors import PlanError
from ..layout.int_tuple import require_axis
from ..ownership.ownership import Ownership



@dataclass(frozen=True)
class MatrixCopyPlan:
    """The decomposition of a 32-lane ownership into 8x8 CopyAtom blocks (see module docstring).

    trans: use the ``.trans`` instruction. axis: the logical axis memory stores contiguously.
    per_unit: elements per 16-bit unit (1 for 16-bit, 2 for 8-bit types). grid: block counts
    along memory rows and memory columns. words[b]: the zero-based fragment word block b
    transfers (b itself: blocks are numbered in word order). origins[b]: logical (row, col) of the
    block's unit (0, 0). instructions: consecutive block ranges (first_block, count), count 4, 2
    or 1, each one ``.x{count}`` instruction whose register j carries block first_block + j.
    warp_offsets[w]: logical (row, col) added to every coordinate for warp w ((0, 0) for warp 0).
    """

    trans: bool
    axis: int
    per_unit: int
    grid: tuple[int, int]
    words: tuple[int, ...]
    origins: tuple[tuple[int, int], ...]
    instructions: tuple[tuple[int, int], ...]
    warp_offsets: tuple[tuple[int, int], ...] = ((0, 0),)

    @property
    def elements_per_word(self) -> int:
        return 2 * self.per_unit

    @property
    def blocks(self) -> int:
        return len(self.words)

    def atom(self, op: str) -> CopyAtom:
        """The atom of this plan for op ``"load"`` (ldmatrix) or ``"store"`` (stmatrix)."""
        return CopyAtom(op, self.trans)

    def word_slots(self, word: int) -> tuple[int, ...]:
        """Fragment slots packed in `word`, low bits first: 2 for 16-bit, 4 for 8-bit."""
        n = self.elements_per_word
        return tuple(range(word * n, (word + 1) * n))

    def register_words(self, instruction: int) -> tuple[int, ...]:
        """Fragment word of each register of instruction `instruction`, in register order: the
        permutation from the instruction's result registers to the fragment's words."""
        first, count = self.instructions[instruction]
        return self.words[first:first + count]

    def register_slots(self, instruction: int) -> tuple[tuple[int, ...], ...]:
        """Per register of `instruction`, the fragment slots it holds, low bits first."""
        return tuple(self.word_slots(w) for w in self.register_words(instruction))

    def row_coordinate(self, block: int, lane: int, warp: int = 0) -> tuple[int, int]:
        """Logical (row, col) of the first element of memory row lane % 8 of `block` (the row
        start lane `lane` addresses when its instruction moves `block`), for warp `warp`."""
        r, c = self.origins[block]
        dr, dc = self.warp_offsets[warp]
        step = lane % 8
        if self.axis == 1:
            return r + dr + step, c + dc
        return r + dr, c + dc + step

    def address_coordinate(self, instruction: int, lane: int, warp: int = 0) -> tuple[int, int]:
        """Logical (row, col) of the row start that `lane` supplies to `instruction`: row
        lane % 8 of matrix (lane // 8) % count (copy_atom.address_lane)."""
        first, count = self.instructions[instruction]
        matrix, _ = address_lane(lane, count)
        return self.row_coordinate(first + matrix, lane, warp)


def _instructions(blocks: int) -> tuple[tuple[int, int], ...]:
    """Consecutive block ranges, each one instruction of up to four matrices (.x4, .x2, .x1)."""
    out, first = [], 0
    for count in (4, 2, 1):
        while blocks - first >= count:
            out.append((first, count))
            first += count
    return tuple(out)


def _warp_plan(coords: np.ndarray, axis: int, pu: int):
    """(trans, grid, words, origins) for one warp's coordinate table [32, V, 2], or None."""
    words = coords.shape[1] // (2 * pu)
    c = coords.reshape(32, words, 2, pu, 2)  # lane, word, unit in word, element in unit, (r, c)
    along, across = c[..., axis], c[..., 1 - axis]
    first = along[..., :1]
    if not (np.all(across == across[..., :1]) and np.all(along == first + np.arange(pu))
            and np.all(first % pu == 0)):
        return None
    mrow, mcol = across[..., 0], along[..., 0] // pu  # [32, words, 2] unit coordinates
    brow, bcol = mrow // 8, mcol // 8
    if not (np.all(brow == brow[:1, :, :1]) and np.all(bcol == bcol[:1, :, :1])):
        return None
    r, q = mrow % 8, mcol % 8
    v, lane = np.arange(2), np.arange(32)[:, None, None]
    for trans in (False, True):
        pair, group = 2 * (lane % 4) + v, lane // 4
        want_r, want_c = (pair, group) if trans else (group, pair)
        if np.all(r == want_r) and np.all(q == want_c):
            break
    else:
        return None
    block_of_word = list(zip(brow[0, :, 0].tolist(), bcol[0, :, 0].tolist()))
    if len(set(block_of_word)) != words:
        return None
    rows = sorted({b[0] for b in block_of_word})
    cols = sorted({b[1] for b in block_of_word})
    if len(rows) * len(cols) != words:
        return None
    origins = []
    for br, bc in block_of_word:  # block w moves word w
        across0, along0 = 8 * br, 8 * pu * bc
        origins.append((across0, along0) if axis == 1 else (along0, across0))
    return trans, (len(rows), len(cols)), tuple(range(words)), tuple(origins)


def matrix_copy_plan(ownership: Ownership, dtype: DType, axis: int) -> MatrixCopyPlan | None:
    """Cover an ownership of `dtype` elements with 8x8 ldmatrix/stmatrix blocks, memory storing
    logical `axis` (0 or 1) contiguously, or None when no plan exists (scalar accesses remain
    the correct route): threads not a multiple of 32, a type other than 8 or 16 bits, slots not
    a whole number of words, or any condition of the module docstring failing.

    Raises PlanError when `ownership` is not an Ownership, `dtype` not a DType or `axis` not
    0 or 1. Hardware facts: PTX ISA 9.7.14.5.15 ldmatrix / 9.7.14.5.16 stmatrix (facts 2.2-2.5).
    """
    if not isinstance(ownership, Ownership):
        raise PlanError(f"matrix_copy_plan: ownership {ownership!r} is not an Ownership")
    if not isinstance(dtype, DType):
        raise PlanError(f"matrix_copy_plan: dtype {dtype!r} is not a DType")
    axis = require_axis(axis, "matrix_copy_plan", PlanError)
    if dtype.bits not in (8, 16) or ownership.threads % 32:
        return None
    pu = 16 // dtype.bits
    if ownership.values % (2 * pu):
        return None
    coords = ownership._coords
    plans = [_warp_plan(coords[32 * w:32 * (w + 1)], axis, pu)
             for w in range(ownership.threads // 32)]
    if any(p is None for p in plans):
        return None
    trans, grid, words, origins = plans[0]
    offsets = []
    for p in plans:
        if p[:3] != (trans, grid, words):
            return None
        delta = np.array(p[3]) - np.array(origins)
        if not np.all(delta == delta[0]):
            return None
        offsets.append((int(delta[0, 0]), int(delta[0, 1])))
    return MatrixCopyPlan(trans, axis, pu, grid, words, origins, _instructions(len(words)),
                          tuple(offsets))
