"""Tcgen05MMA: one single-thread ``tcgen05.mma.cta_group::1`` instruction, by shape and types.

``Tcgen05MMA((m, n, k), a, c=Float32, b=None)``. The element types choose the MMA kind
(PTX ISA section 9.7.16.10 "TensorCore 5th Generation Matrix Multiply and accumulate
Operations"; kinds and shapes: section 9.7.16.2.1 "Matrix Shape", Table 39, anchor
#tcgen05-kind-shapes):

* ``.kind::f16``: BFloat16 or Float16 A = B; Float32 accumulator, or Float16 with Float16 inputs.
* ``.kind::tf32``: Float32 A = B (read as TF32), Float32 accumulator.
* ``.kind::f8f6f4``: Float8E4M3 / Float8E5M2 A and B (may differ), Float32 or Float16 accumulator.
* ``.kind::i8``: Int8 / UInt8 A and B (may differ), Int32 accumulator (sm_100a only).

Shape rules (dense, cta_group::1; Table 39 lists M = 64 and M = 128 with N = 8 .. 256 in
steps of 8 for .kind::f16, .kind::tf32 and .kind::f8f6f4):

* m = 128: n a multiple of 16 from 16 to 256, Julia Tylo's stricter rule (CuTe's SM100 atoms
  take steps of 16 at m = 128, PTX Table 50 requires them for 8-bit MN-major B).
* m = 64: n a multiple of 8 from 8 to 256; for .kind::i8, 8 or a multiple of 16 from 16 to
  256 (CUTLASS's SM100_MMA_S8_SS rule; Tylo does not take N = 24 there). With 8-bit MN-major
  B, n must be a multiple of 16 (`tcgen05_operand` refuses it).
* k is fixed: 256 bits of each operand row (16 for 16-bit types, 8 for TF32, 32 for 8-bit).

The accumulator (`operand_layout` with "C", `accumulator`) follows the data path layout of
PTX 9.7.16.10.5 "Data Path Layout Organization": M = 128 is Layout D (row r in TMEM lane r,
the whole data path); M = 64 is Layout F, half the data path: rows 16 w .. 16 w + 15 lie in
lanes 32 w .. 32 w + 15 of warp band w (w = 0..3), lanes 32 w + 16 .. + 31 are not written.
Column j is TMEM column j (from the accumulator's address) in both.

The atom's operands are not thread-owned. A and B are shared-memory encodings (see
`tcgen05_operand`); the accumulator is a `TmemTile` whose layout is ``operand_layout(atom,
"C")`` (the data path layout above).

`tcgen05_operand` is the host geometry of a shared-memory A (M, K) or B (K, N) operand: the
canonical swizzled structure of its storage, the descriptor of the tile's base and, per K step,
the descriptor whose canonical walk (PTX "Canonical Layouts", see
`encodings.tcgen05_smem_descriptor`) is checked to reach exactly the tile's elements.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any


from ..support.lazy_modules import np
from ..hardware import dtypes
from ..encodings.matrix_descriptor import base_offset
from ..encodings.tcgen05_instruction import KINDS, kind_of
from ..encodings.tcgen05_smem_descriptor import (
    decode_tcgen05_smem_descriptor, tcgen05_smem_descriptor,
)
from ..support.errors import GeometryError, PlanError
from ..layout.int_tuple import is_int
from ..layout.layout import Layout
from ..atoms.mma_atom import ShapedAtom, _role
from ..layout.offsets import offset_grid
from ..hardware.tmem import LANE_BAND, TMEM_LANES, TmemTile, positions_per_column, split_tmem_address
from .swizzled_structure import SwizzledStructure, contiguous_axis, swizzled_structure

#: Bits of one operand row that one instruction consumes along K (Table 39: K = 256 / bits).
K_BITS = 256
M_SIZES = (64, 128)
N_MAX = 256
DATAPATH_ROWS = 16  # M = 64 (Layout F): rows per 32-lane band


def _n_rule(m: int, kind: str, n) -> str | None:
    """None when n is a valid N of an m-row atom of `kind`, else the rule (module docstring)."""
    if m == 128:
        ok, rule = n % 16 == 0 and 16 <= n, "a multiple of 16 from 16 to 256 at m = 128"
    elif kind == "i8":
        ok = n == 8 or (n % 16 == 0 and 16 <= n)
        rule = "8 or a multiple of 16 from 16 to 256 for .kind::i8 at m = 64"
    else:
        ok, rule = n % 8 == 0 and 8 <= n, "a multiple of 8 from 8 to 256 at m = 64"
    return None if ok and n <= N_MAX else rule


def accumulator_lanes(m: int):
    """The TMEM lane (counted from the accumulator's base lane) of each of the m rows an
    M = m cta_group::1 tcgen05.mma writes, an int array (m,): row r for M = 128 (Layout D),
    32 (r // 16) + r % 16 for M = 64 (Layout F), PTX 9.7.16.10.5. Raises PlanError for
    another m."""
    if m == 128:
        return np.arange(128)
    if m == 64:
        r = np.arange(64)
        return LANE_BAND * (r // DATAPATH_ROWS) + r % DATAPATH_ROWS
    raise PlanError(f"accumulator_lanes: m = {m}: the data path layouts of cta_group::1 "
                    "are M = 64 and M = 128")


def _kinds_text() -> str:
    return "; ".join(f".{row.ptx}: {', '.join(map(str, row.ab_codes))}" for row in KINDS.values())


class Tcgen05MMA(ShapedAtom):
    """A dense ``tcgen05.mma.cta_group::1`` atom (see the module docstring for the rules).

    shape: (m, n, k). a: A element type (and B's unless ``b`` is given). c: accumulator type.
    Raises PlanError when no tcgen05 kind takes these types or the shape breaks a rule, with
    the rule in the message; TypeMismatchError for a value that is not an element type.
    """

    def __init__(self, shape, a, c=dtypes.Float32, *, b=None):
        given = shape
        shape = tuple(shape) if isinstance(shape, (tuple, list)) else ()
        if len(shape) != 3 or not all(is_int(s) for s in shape):
            raise PlanError(f"Tcgen05MMA: shape {given!r} must be three static integers (m, n, k)")
        a = dtypes.as_dtype(a, "Tcgen05MMA A type")
        b = a if b is None else dtypes.as_dtype(b, "Tcgen05MMA B type")
        c = dtypes.as_dtype(c, "Tcgen05MMA accumulator type")
        name = f"Tcgen05MMA({shape}, {a}, {c}, b={b})"
        kind = kind_of(a)
        if kind is None:
            raise PlanError(f"{name}: A type {a} has no tcgen05 kind ({_kinds_text()})")
        row = KINDS[kind]
        if b not in row.ab_codes:
            raise PlanError(f"{name}: B type {b} is not a .{row.ptx} input like A "
                            f"({', '.join(map(str, row.ab_codes))})")
        if kind in ("f16", "tf32") and a != b:
            raise PlanError(f"{name}: .{row.ptx} needs A and B of one type")
        if c not in row.d_codes:
            raise PlanError(f"{name}: accumulator {c}: .{row.ptx} accumulates in "
                            f"{', '.join(map(str, row.d_codes))}")
        if kind == "f16" and c == dtypes.Float16 and a != dtypes.Float16:
            raise PlanError(f"{name}: a Float16 accumulator needs Float16 inputs (PTX Table 39)")
        m, n, k = shape
        if m not in M_SIZES:
            raise PlanError(f"{name}: m = {m}: cta_group::1 atoms have m = 64 or 128 "
                            "(PTX Table 39; cta_group::2 and .ws are not built)")
        why = _n_rule(m, kind, n)
        if why:
            raise PlanError(f"{name}: n = {n} must be {why}")
        if k != K_BITS // a.bits:
            raise PlanError(f"{name}: k = {k}: one instruction consumes {K_BITS} bits of each "
                            f"operand row, k = {K_BITS // a.bits} for {a}")
        self.shape = shape
        self.a, self.b, self.c = a, b, c
        self.kind = kind

    @property
    def ptx_kind(self) -> str:
        """The PTX qualifier, e.g. ``kind::f16``."""
        return KINDS[self.kind].ptx

    def operand_layout(self, role: str) -> Layout:
        """The accumulator's layout over (m, n) in `TmemTile` slot offsets of type ``c``.

        m = 128 (Layout D): row r is lane r, offset ``r + 128 * j * p`` for column j, where p
        is the typed positions per column. m = 64 (Layout F): row r = r0 + 16 r1 (r0 < 16) is
        lane r0 + 32 r1, the layout ``((16, 4), n) : ((1, 32), 128 p)``. A 16-bit accumulator
        is not packed (PTX 9.7.16.10.4.1 "Packing format for matrix D in Tensor Memory": one
        element in the low 16 bits of each word), so Float16 has p = 2. Data path layouts:
        PTX 9.7.16.10.5. Raises PlanError for A and B, which are shared-memory encodings
        without thread ownership, and for unknown roles.
        """
        role = _role(role)
        if role != "C":
            raise PlanError(f"{self}: operand {role} is not thread-owned: A and B are "
                            "shared-memory encodings, described by tcgen05_operand")
        column = TMEM_LANES * positions_per_column(self.c)
        if self.m == 64:
            return Layout(((DATAPATH_ROWS, self.m // DATAPATH_ROWS), self.n),
                          ((1, LANE_BAND), column))
        return Layout((self.m, self.n), (1, column))

    def accumulator(self, address) -> TmemTile:
        """The accumulator as a `TmemTile` at TMEM ``address`` (see `operand_layout`).
        Raises GeometryError for a static address outside 128 lanes x 512 columns, or whose
        lane field is not 0 (the data path layouts start at lane 0)."""
        if is_int(address):
            lane, _ = split_tmem_address(address)
            if lane:
                raise GeometryError(f"accumulator({self}, {address:#010x}): lane field {lane}: "
                                    "an accumulator starts at lane 0 (PTX 9.7.16.10.5 data "
                                    "path layouts)")
        return TmemTile(self.c, address, self.operand_layout("C"))

    def k_steps(self, K: int) -> int:
        """Instructions along a logical K: K // k. Raises PlanError unless K is a positive
        multiple of k."""
        if not is_int(K) or K <= 0 or K % self.k:
            raise PlanError(f"{self}: K = {K!r} must be a positive multiple of k = {self.k}")
        return K // self.k

    def __str__(self) -> str:
        m, n, k = self.shape
        return f"tcgen05.mma m{m}n{n}k{k} .{self.ptx_kind} {self.a}x{self.b}->{self.c}"


def accumulator(atom: Tcgen05MMA, address) -> TmemTile:
    """The atom's accumulator as a TmemTile at ``address``: column j in column j; row r in lane
    r for m = 128, in lane 32 (r // 16) + r % 16 for m = 64 (`Tcgen05MMA.operand_layout`).
    The caller owns the allocation; the first mma with accumulate=False initializes it.
    Raises GeometryError for a static address outside 128 lanes x 512 columns (PTX ISA
    9.7.16.1.1 "Tensor Memory Addressing") or with a nonzero lane field."""
    return atom.accumulator(address)


# ---------------------------------------------------------------------------------------------
# Shared-memory operands

_KAXIS = {"A": 1, "B": 0}  # zero-based logical axis of K: A is (M, K), B is (K, N)


def _canonical_bytes(major: str, row: int, e: int, lbo: int, sbo: int, mn, kk):
    """Byte offset the hardware gives (mn, kk) from the start address, before the swizzle
    (PTX canonical layouts; row = swizzle row bytes, e = element bytes, T = 16 / e)."""
    t = 16 // e
    if major == "K":
        if row == 16:
            return (mn % 8) * 16 + (mn // 8) * sbo + (kk % t) * e + (kk // t) * lbo
        return (mn % 8) * row + (mn // 8) * sbo + kk * e
    if row == 16:
        return (mn % t) * e + (mn // t) * sbo + (kk % 8) * 16 + (kk // 8) * lbo
    r = row // e
    return (mn % r) * e + (mn // r) * lbo + (kk % 8) * row + (kk // 8) * sbo


@dataclass(frozen=True)
class Tcgen05Operand:
    """A shared-memory A or B operand of a `Tcgen05MMA` (construct with `tcgen05_operand`).

    layout: the tile's static shared layout, element offsets from the allocation root at
    shared byte address ``base_address``; origin: the zero-based logical (axis 0, axis 1)
    origin of the operand; structure: its `SwizzledStructure`; descriptor: the 64-bit
    descriptor of the tile's base (start address = ``base_address``).
    """

    atom: Tcgen05MMA
    role: str
    layout: Any
    origin: tuple[int, int]
    base_address: int
    structure: SwizzledStructure
    descriptor: int

    @property
    def kaxis(self) -> int:
        return _KAXIS[self.role]

    @property
    def major(self) -> str:
        """"K" or "MN": the majorness the instruction descriptor encodes for this operand."""
        return self.structure.major

    @property
    def shape(self) -> tuple[int, int]:
        """The whole tile's logical shape."""
        return tuple(m.size() for m in self.layout.inner.modes())

    def at(self, origin) -> "Tcgen05Operand":
        """The same tile at another logical origin, without recomputing the descriptor."""
        return replace(self, origin=_check_origin(self.atom, self.role, self.shape, origin,
                                                  self.structure))

    def k_step_descriptors(self, K: int) -> tuple[int, ...]:
        """The descriptor of each of the K // k instructions covering logical K from the origin.

        Step s starts at the origin moved s * k along K; its start address is the tile's
        unswizzled byte offset there. Raises PlanError unless K is a positive multiple of k,
        GeometryError when K runs past the tile or the descriptor's canonical walk (with its
        LBO, SBO and swizzle) misses an element of the step's (M or N) x k block.
        """
        steps = self.atom.k_steps(K)
        ka = self.kaxis
        if self.origin[ka] + K > self.shape[ka]:
            raise GeometryError(f"{self}: K = {K} from origin {self.origin[ka]} along axis {ka} "
                                f"runs past the tile's extent {self.shape[ka]}")
        e = (self.atom.a if self.role == "A" else self.atom.b).bytes
        fields = decode_tcgen05_smem_descriptor(self.descriptor)
        plain, full = offset_grid(self.layout, swizzled=False), offset_grid(self.layout)
        rows, cols = self.atom.operand_shape(self.role)
        i0, i1 = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
        mn, kk = (i0, i1) if ka == 1 else (i1, i0)
        walk = _canonical_bytes(self.major, fields.swizzle_bytes, e, fields.lbo_bytes,
                                fields.sbo_bytes, mn, kk)
        hardware_swizzle = self.structure.mode.swizzle(1)  # over byte offsets
        phase = base_offset(self.structure.mode, self.base_address)  # 0: the root is aligned
        out = []
        for s in range(steps):
            o = list(self.origin)
            o[ka] += s * self.atom.k
            start = int(plain[o[0], o[1]]) * e
            hw = hardware_swizzle(start + walk)
            tile = full[o[0]:o[0] + rows, o[1]:o[1] + cols] * e
            bad = np.argwhere(hw != tile)
            if len(bad):
                i, j = (int(x) for x in bad[0])
                raise GeometryError(
                    f"{self}: K step {s}: the descriptor walk from byte {start} reaches byte "
                    f"{int(hw[i, j])} for element ({o[0] + i}, {o[1] + j}), which the tile "
                    f"stores at byte {int(tile[i, j])}")
            out.append(tcgen05_smem_descriptor(self.structure, self.base_address + start, phase))
        return tuple(out)

    def __str__(self) -> str:
        return f"tcgen05_operand({self.role}, {self.layout}, origin={self.origin})"


def _check_origin(atom: Tcgen05MMA, role: str, shape, origin,
                  structure: SwizzledStructure) -> tuple[int, int]:
    o = tuple(origin) if isinstance(origin, (tuple, list)) else ()
    if len(o) != 2 or not all(is_int(x) and x >= 0 and x % 8 == 0 for x in o):
        raise GeometryError(f"tcgen05_operand {role}: origin {origin!r} must be two static "
                            "non-negative multiples of 8")
    # The descriptor's start address counts 16-byte units (PTX 9.7.16.4.1, Table 40): along the
    # contiguous axis the origin must start a 16-byte chunk (8 elements of 8 bits are not one).
    a = contiguous_axis(structure, _KAXIS[role])
    e = structure.element_bytes
    if o[a] * e % 16:
        raise GeometryError(
            f"tcgen05_operand {role}: origin coordinate {a} = {o[a]} along the contiguous axis "
            f"is {o[a] * e} bytes into a row, not the start of a 16-byte chunk (a multiple of "
            f"{16 // e} elements of {e} bytes)")
    other = 1 - _KAXIS[role]
    need = atom.m if role == "A" else atom.n
    if o[other] + need > shape[other]:
        raise GeometryError(
            f"tcgen05_operand {role}: the non-K extent from origin {o[other]} along axis {other} "
            f"is {shape[other] - o[other]}, less than the atom's {'M' if role == 'A' else 'N'} "
            f"= {need}")
    if o[1 - other] >= shape[1 - other]:
        raise GeometryError(f"tcgen05_operand {role}: K origin {o[1 - other]} is outside the "
                            f"tile's extent {shape[1 - other]}")
    return o


def tcgen05_operand(atom: Tcgen05MMA, role: str, layout, origin=(0, 0),
                    base_address: int = 0) -> Tcgen05Operand:
    """Borrow an A (M, K) or B (K, N) operand of ``atom`` from a canonical swizzled shared tile.

    layout: the tile's static shared layout (element offsets from the allocation root, e.g.
        ``shared_layout(TMATile(...))``), recognized by `swizzled_structure`.
    origin: zero-based logical (axis 0, axis 1) coordinates, multiples of 8 (and, along the
        contiguous axis, of a 16-byte chunk: 16 elements of 8-bit types); the non-K extent
        from the origin covers the atom's M (A) or N (B).
    base_address: shared byte address of the allocation root, aligned to eight swizzle rows
        (1024 bytes for 128-byte rows, 128 without swizzle).

    Raises PlanError for a role other than "A"/"B"; GeometryError when the layout is not a
    canonical encoding of the operand's element type, a Float32 (tf32) operand is MN-major
    (PTX 9.7.16.10.1: tf32 transposes only with the 128-byte swizzle of 32-byte atomicity,
    which canonical Tylo storage never uses), the root is misaligned, or the origin breaks a
    rule, or B is 8-bit MN-major storage for an n that is not a multiple of 16; descriptor
    errors as `tcgen05_smem_descriptor`.
    """
    if not isinstance(atom, Tcgen05MMA):
        raise PlanError(f"tcgen05_operand: {atom!r} is not a Tcgen05MMA")
    if role not in _KAXIS:
        raise PlanError(f"tcgen05_operand: role {role!r} must be 'A' or 'B' (the accumulator "
                        "lives in TMEM: accumulator(atom, address))")
    dtype = atom.a if role == "A" else atom.b
    structure = swizzled_structure(layout, dtype, _KAXIS[role])
    if structure is None:
        raise GeometryError(f"tcgen05_operand {role}: {layout} is not a canonical swizzled "
                            f"encoding of {dtype} (see swizzled_structure)")
    if atom.kind == "tf32" and structure.major == "MN":
        raise GeometryError(f"tcgen05_operand {role}: MN-major {dtype} storage: .kind::tf32 "
                            "transposes only with the 128B swizzle of 32B atomicity")
    if role == "B" and structure.major == "MN" and structure.element_bytes == 1 and atom.n % 16:
        raise GeometryError(f"tcgen05_operand B: MN-major {dtype} storage with n = {atom.n}: "
                            "8-bit MN-major B needs n a multiple of 16 (PTX Table 50)")
    period = structure.period_bytes
    if not is_int(base_address) or base_address < 0 or base_address % period:
        raise GeometryError(f"tcgen05_operand {role}: base_address {base_address!r} must be a "
                            f"non-negative multiple of {period} bytes (eight swizzle rows)")
    shape = tuple(m.size() for m in layout.inner.modes())
    o = _check_origin(atom, role, shape, origin, structure)
    return Tcgen05Operand(atom, role, layout, o, base_address, structure,
                          tcgen05_smem_descriptor(structure, base_address,
                                                  base_offset(structure.mode, base_address)))


def tcgen05_k_step_bytes(structure: SwizzledStructure) -> int:
    """Bytes the start address of an operand's descriptor advances per instruction, which
    consumes 256 bits (32 bytes) of each operand row along K (`K_BITS`).

    K-major swizzled: 32 bytes inside a swizzle row (the hardware swizzles the address it
    forms); K-major unswizzled: two 16-byte core matrices along K, 2 * the structure's leading
    bytes; MN-major: k / 8 eight-row groups along K (k = 32 / element bytes), that many times
    the stride bytes (docs/facts/ptx_isa.md 3.1, restated for tcgen05 in PTX 9.7.16.3)."""
    row_bytes = K_BITS // 8
    if structure.major == "K":
        return row_bytes if structure.swizzled else row_bytes // 16 * structure.leading_bytes
    return row_bytes // structure.element_bytes // 8 * structure.stride_bytes
