"""TiledMMA: a CTA's decomposition of a (TM x TN x K) product into warp MMA atoms.

``TiledMMA(atom, warps=(wm, wn), repeat=(rm, rn), k=K)``: wm x wn warps, warp numbering
M-fastest (warp = wm_index + wm * wn_index); each warp computes rm x rn atoms; K is a positive
multiple of the atom's k. Atoms are laid out over the warps first, then repeated (as CuTe's
TiledMMA does): atom row block ``wm_index + wm * r`` of the tile belongs to warp row wm_index.
The tile is TM = m * wm * rm rows by TN = n * wn * rn columns.

Each operand is one flat fragment whose ownership covers the CTA's 32 * wm * wn threads; the
value slots run over (atom slots, M or N repeat, K step), first fastest. No allocation and no
barrier is implied. A and B of sub-byte types (Int4, UInt4, Bit1) travel as the atoms' 32-bit
registers: `word_layout` is the ownership of those words (each at its first element's
coordinate), `word_tile_layout` the same words over the packed matrix in memory (K divided by
the elements per word), and `operand_slots` the words of one atom.
"""

from __future__ import annotations

from ..layout.dynamic import first_static_hint
from ..support.errors import PlanError
from ..layout.int_tuple import is_int
from ..hardware.launch_limits import MAX_THREADS_PER_BLOCK, threads_error
from ..layout.layout import Layout
from .mma_atom import MMAAtom, _role
from ..ownership.fit import word_ownership
from ..ownership.ownership import Ownership, restride


def _positive_pair(what: str, value) -> tuple[int, int]:
    try:
        pair = tuple(value)
    except TypeError:
        pair = ()
    if len(pair) != 2 or not all(is_int(x) and x > 0 for x in pair):
        raise PlanError(f"TiledMMA: {what} {value!r} must be two positive static integers"
                        f"{first_static_hint(value, what + ' entry {i}')}")
    return pair


def _mode(atom_part, *repeats):
    """One layout mode: the atom's part, then each (extent, stride) repeat of extent > 1."""
    parts = [atom_part] + [(e, d) for e, d in repeats if e > 1]
    if len(parts) == 1:
        return atom_part
    return tuple(p[0] for p in parts), tuple(p[1] for p in parts)


class TiledMMA:
    """A CTA-level MMA plan over `atom` (see module docstring). Raises PlanError on bad geometry,
    including more than 1024 threads (32 * wm * wn; `launch_limits.MAX_THREADS_PER_BLOCK`)."""

    def __init__(self, atom: MMAAtom, warps=(1, 1), repeat=(1, 1), k: int | None = None):
        if not isinstance(atom, MMAAtom):
            raise PlanError(f"TiledMMA: {atom!r} is not an MMAAtom")
        self.atom = atom
        self.warps = _positive_pair("warps", warps)
        if 32 * self.warps[0] * self.warps[1] > MAX_THREADS_PER_BLOCK:
            raise PlanError("TiledMMA: " + threads_error(
                f"warps={self.warps} (32 threads each)", 32 * self.warps[0] * self.warps[1]))
        self.repeat = _positive_pair("repeat", repeat)
        k = atom.k if k is None else k
        if not isinstance(k, int) or k <= 0 or k % atom.k:
            raise PlanError(
                f"TiledMMA: K = {k!r} must be a positive multiple of the atom's k = {atom.k}"
            )
        self.k = k
        self._ownerships: dict[str, Ownership] = {}

    @classmethod
    def of(cls, plan) -> "TiledMMA":
        """A TiledMMA as is, or the single-warp, single-atom plan of an MMAAtom."""
        return plan if isinstance(plan, TiledMMA) else cls(plan)

    # -- geometry -------------------------------------------------------------------------------
    @property
    def k_steps(self) -> int:
        """Atom instructions along K per (M, N) atom: K / the atom's k."""
        return self.k // self.atom.k

    @property
    def threads(self) -> int:
        """Threads of the plan: 32 per warp, 32 * wm * wn."""
        return 32 * self.warps[0] * self.warps[1]

    @property
    def tile_shape(self) -> tuple[int, int, int]:
        """(TM, TN, K)."""
        m, n, _ = self.atom.shape
        return (m * self.warps[0] * self.repeat[0], n * self.warps[1] * self.repeat[1], self.k)

    def operand_shape(self, role: str) -> tuple[int, int]:
        """(rows, cols) in elements: A (TM, K), B (K, TN), C (TM, TN). Raises PlanError for an
        unknown role."""
        tm, tn, k = self.tile_shape
        return {"A": (tm, k), "B": (k, tn), "C": (tm, tn)}[_role(role)]

    # -- ownership ------------------------------------------------------------------------------
    def operand_layout(self, role: str) -> Ownership:
        """The CTA-wide ownership of operand `role` ("A", "B" or "C"): thread t = lane + 32 *
        warp (warps M-fastest) and slot s over `operand_shape(role)`; slots run over (atom
        element, M or N repeat, K step), first fastest (`atom_slots`). A is replicated over the
        N warps, B over the M warps. Raises PlanError for an unknown role."""
        r = _role(role)
        if r not in self._ownerships:
            self._ownerships[r] = self._operand_layout(r)
        return self._ownerships[r]

    def _operand_layout(self, r: str) -> Ownership:
        atom = self.atom.operand_layout(r)
        m, n, ka = self.atom.shape
        wm, wn = self.warps
        rm, rn = self.repeat
        tm, tn, k = self.tile_shape
        rows, cols = self.operand_shape(r)
        inner = restride(atom.layout, atom.rows, rows)
        lane_shape, lane_stride = inner.shape[0], inner.stride[0]
        slot_shape, slot_stride = inner.shape[1], inner.stride[1]
        kk = self.k_steps
        if r == "A":  # (TM, K): warp rows move m, warp columns replicate
            threads = _mode((lane_shape, lane_stride), (wm, m), (wn, 0))
            values = _mode((slot_shape, slot_stride), (rm, m * wm), (kk, rows * ka))
        elif r == "B":  # (K, TN): warp columns move n, warp rows replicate
            threads = _mode((lane_shape, lane_stride), (wm, 0), (wn, rows * n))
            values = _mode((slot_shape, slot_stride), (rn, rows * n * wn), (kk, ka))
        else:  # (TM, TN)
            threads = _mode((lane_shape, lane_stride), (wm, m), (wn, rows * n))
            values = _mode((slot_shape, slot_stride), (rm, m * wm), (rn, rows * n * wn))
        layout = Layout((threads[0], values[0]), (threads[1], values[1]))
        return Ownership((rows, cols), layout)

    def packs(self, role: str) -> bool:
        """Whether operand `role` travels as 32-bit words of sub-byte elements (Int4, UInt4,
        Bit1 A and B: `MMAInstruction.packs`)."""
        return self.atom.instruction.packs(_role(role))

    def word_layout(self, role: str) -> Ownership:
        """The ownership of the 32-bit words of a packed operand (`packs`): word k of a thread
        holds its slots ``k * e .. k * e + e - 1`` (e = elements per register, low bits first)
        and sits at the coordinate of slot ``k * e``, over `operand_shape(role)`. Raises
        PlanError for an operand that is not packed."""
        r = self._packed_role(role)
        return word_ownership(self.operand_layout(r), self.atom.instruction.register_elements(r))

    def word_tile_layout(self, role: str) -> Ownership:
        """`word_layout` in word coordinates: the ownership of the packed operand's words over
        the matrix of words in memory, A (TM, K / e) with word (m, w) holding k = e w .. e w +
        e - 1 of row m, B (K / e, TN) with word (w, n) holding those k of column n; the low
        bits hold the lowest k. Raises PlanError for an operand that is not packed."""
        r = self._packed_role(role)
        axis = 1 if r == "A" else 0
        return word_ownership(self.operand_layout(r), self.atom.instruction.register_elements(r),
                              axis)

    def _packed_role(self, role: str) -> str:
        r = _role(role)
        if not self.packs(r):
            held = {"A": self.atom.a, "B": self.atom.b, "C": self.atom.c}[r]
            raise PlanError(f"TiledMMA: operand {role} of {self.atom} holds {held} elements, not "
                            f"packed words (only Int4, UInt4 and Bit1 A and B are)")
        return r

    def operand_slots(self, role: str, i: int, j: int) -> list[int]:
        """The slots of one atom's operand in the fragment `tylo.mma` takes: `atom_slots`, or
        for a packed operand (`packs`) the slots of its words, in register order."""
        slots = self.atom_slots(role, i, j)
        r = _role(role)
        if not self.packs(r):
            return slots
        e = self.atom.instruction.register_elements(r)
        return [s // e for s in slots[::e]]

    def atom_slots(self, role: str, i: int, j: int) -> list[int]:
        """Fragment slots of one atom's operand, in the atom's element order.

        For A, (i, j) = (M repeat, K step); for B, (N repeat, K step); for C, (M repeat, N repeat).
        Raises PlanError for an unknown role, or when i or j is not a static int in the range of
        its repeat or K step.
        """
        r = _role(role)
        per_atom = self.atom.operand_layout(r).values
        rm, rn = self.repeat
        names = {"A": ("M repeat", "K step"), "B": ("N repeat", "K step"),
                 "C": ("M repeat", "N repeat")}[r]
        counts = {"A": (rm, self.k_steps), "B": (rn, self.k_steps), "C": (rm, rn)}[r]
        for arg, x, name, count in zip("ij", (i, j), names, counts):
            if not (is_int(x) and 0 <= x < count):
                raise PlanError(f"TiledMMA.atom_slots({role!r}): {arg} = {x!r} ({name}) must be "
                                f"an int in [0, {count})")
        first = counts[0]
        base = per_atom * (i + first * j)
        return list(range(base, base + per_atom))

    def atoms(self):
        """The atom instructions one thread issues, as (m repeat, n repeat, k step), k outermost."""
        for kk in range(self.k_steps):
            for j in range(self.repeat[1]):
                for i in range(self.repeat[0]):
                    yield i, j, kk

    # -- identity -------------------------------------------------------------------------------
    def _key(self):
        return (self.atom, self.warps, self.repeat, self.k)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TiledMMA) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        return (
            f"{self.atom}, warps = ({self.warps[0]},{self.warps[1]}), "
            f"repeat = ({self.repeat[0]},{self.repeat[1]}), k = {self.k}"
        )

    def __repr__(self) -> str:
        return f"TiledMMA({self})"
