"""Packed fragments: a fragment's 16-bit or 8-bit values in 32-bit words (issue 11 part 1).

A `PackedFragment` holds the elements of a fragment of BFloat16, Float16, Float8E4M3,
Float8E5M2, Int8 or UInt8 two (16-bit) or four (8-bit) to a 32-bit word: slot ``k * n + j`` in
bits ``[j * b, (j + 1) * b)`` of word k, the low element first, as PTX packs ``.bf16x2`` and
``.e4m3x2`` values and MMA operand registers (PTX ISA 9.7.9.21, 9.7.14.5.8). Its `words` are a
fragment of UInt32, one slot per word, whose ownership is that of each word's first element.

* ``tylo.pack(f)`` keeps the bits of a fragment of a packed dtype; ``tylo.pack(f, dtype)``
  converts on the way (the conversions `tylo.passes.select.fragment_ops` lists:
  ``cvt.rn.bf16x2.f32``, ``cvt.rn.satfinite.e4m3x2.f32`` ...). ``tylo.unpack(p)`` gives the
  fragment back (``tylo.unpack(p, dtype)`` then converts with ``.to``).
* ``tylo.pack_operand_a(atom, left, right)``: two adjacent 16x8 FP32 accumulators of an m16n8k16
  atom (columns 0-7 and 8-15) as the atom's 16x16 A operand, packed, rounded to nearest even,
  with no lane communication (FlashAttention-2's reuse of the score accumulator as the A of the
  next MMA); the ownerships are checked to line up (`a_operand_slots`).
* ``tylo.accumulator_as_a(plan, f)``: a finished WGMMA accumulator of width k (columns [c, c + k)
  of attention's scores) as a WGMMA64 plan's register A operand, packed, with no lane
  communication: 16-bit plans take the columns as they are, 8-bit plans permute them within
  each K = 32 slice (`WGMMA64.accumulator_as_a`; B's rows must then be permuted the same way).
* ``tylo.store(pointer, packed, index)``: the packed payload store, this thread's words to
  consecutive addresses (`store_packed`).
* MMA operands of Int4, UInt4 and Bit1 (eight 4-bit or thirty-two 1-bit values to a word, the
  lowest K in the low bits, PTX ISA 9.7.14.5.4-13) exist only packed: ``tylo.load_a`` /
  ``load_b`` of such an atom read the packed matrix as a tile of 32-bit words
  (`load_packed_operand`) and ``tylo.mma`` takes the words as they are (`packed_operand`); a
  sub-byte packed fragment does not unpack (no kernel value is 4 or 1 bits wide).
"""

from __future__ import annotations

from ...compiler.hardware import dtypes
from ...compiler.support.errors import GeometryError, PlanError, TypeMismatchError, UnsupportedError
from ...compiler.support.lazy_modules import np
from ...compiler.atoms.mma_atom import MMAAtom
from ...compiler.ownership.ownership import Ownership
from ...compiler.ownership.fit import fit_ownership, word_ownership
from ...compiler.ownership.maps import check_relayout
from ...compiler.plans.wgmma import WGMMA64
from ...compiler.hardware.ptx_types import PTX_TYPES, arch_number
from ...dialects.builder import emit
from ...dialects.tylo.fragment_ops import (
    PACK_SOURCES,
    PackOp,
    StoreWordsOp,
    UnpackOp,
    elements_per_word,
)
from .fragment_ops import take_slots
from .fragments import Fragment, fragment_type
from .tiles import Pointer, Tile
from ..tracing.tracing import current


EXPORTS = (
    "pack", "unpack", "PackedFragment", "pack_operand_a", "accumulator_as_a",
)
"""Names this module adds to the `tylo` namespace (api/__init__.py finds them)."""

__all__ = ["PackedFragment", "pack", "unpack", "pack_operand_a", "a_operand_slots",
           "accumulator_as_a", "store_packed", "word_ownership", "load_packed_operand",
           "packed_operand"]


class PackedFragment:
    """A fragment's `dtype` values packed into 32-bit words (see the module docstring).

    words: a Fragment of UInt32 (one slot per word); dtype: the element dtype; ownership: the
    elements' ownership (``ownership.values == words.slots * elements_per_word``)."""

    __slots__ = ("words", "dtype", "ownership")
    __hash__ = object.__hash__

    def __init__(self, words: Fragment, dtype, ownership: Ownership):
        self.words, self.dtype, self.ownership = words, dtype, ownership

    def __repr__(self) -> str:
        return (f"<packed fragment of {self.dtype}, {self.words.slots} words, ownership "
                f"{self.ownership}>")

    @property
    def elements_per_word(self) -> int:
        return 32 // self.dtype.bits

    @property
    def slots(self) -> int:
        """Element slots (the unpacked fragment's)."""
        return self.ownership.values

    def __getitem__(self, word):
        """Word `word` (a static int) as a runtime UInt32."""
        return self.words[word]

    def _refuse(self, *_):
        raise TypeMismatchError(f"a packed fragment of {self.dtype} has no arithmetic: "
                                f"tylo.unpack(p) gives the fragment back")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = _refuse
    __lt__ = __le__ = __gt__ = __ge__ = __neg__ = _refuse

    def __bool__(self):
        raise TypeMismatchError("a packed fragment has no truth value")


def _require_arch(dtype, what: str) -> None:
    need = PTX_TYPES[dtype.ptx].min_sm
    arch = current().arch
    if arch_number(arch) < need:
        raise UnsupportedError(f"{what}: {dtype} values need sm_{need} or later (PTX ISA "
                               f"9.7.9.21 cvt); this kernel compiles for {arch}")


def pack(fragment: Fragment, dtype=None) -> PackedFragment:
    """Pack `fragment`'s values into 32-bit words (see the module docstring).

    dtype None (or the fragment's own): keep the bits of a fragment of BFloat16, Float16,
    Float8E4M3, Float8E5M2, Int8 or UInt8. Otherwise convert: Float32 to BFloat16 / Float16
    (``cvt.rn.{bf16,f16}x2.f32``: round to nearest even; bf16 from sm_80), Float32 to
    Float8E4M3 / Float8E5M2 (``cvt.rn.satfinite.{e4m3,e5m2}x2.f32``, sm_89+: round to nearest
    even, magnitudes past the largest finite value and infinities to +-448 / +-57344, NaN
    stays NaN), Float32 to Int8 / UInt8 (``cvt.rni``: round to nearest even, clamped to the
    range, NaN to 0) or Int32 to Int8 / UInt8 (``cvt.sat``: clamped). The slot count must be a
    multiple of 2 (16-bit) or 4 (8-bit). Raises TypeMismatchError for another dtype pair,
    GeometryError for the slot count, UnsupportedError for a target without the cvt.
    """
    if not isinstance(fragment, Fragment):
        raise TypeMismatchError(f"tylo.pack: {fragment!r} is not a fragment")
    to = fragment.dtype if dtype is None else dtypes.as_dtype(dtype)
    if to.name not in PACK_SOURCES:
        raise TypeMismatchError(f"tylo.pack: {to} does not pack into 32-bit words; the packed "
                                f"dtypes are {', '.join(PACK_SOURCES)}")
    convert = to is not fragment.dtype
    if convert and fragment.dtype.name not in PACK_SOURCES[to.name]:
        raise TypeMismatchError(
            f"tylo.pack to {to} converts {' or '.join(PACK_SOURCES[to.name])}, not a fragment of "
            f"{fragment.dtype}; convert it with .to(Float32) first")
    _require_arch(to, f"tylo.pack to {to}")
    n = elements_per_word(to.name)
    words = word_ownership(fragment.ownership, n)
    op = PackOp(fragment.value, to.name, convert, fragment_type(dtypes.UInt32, words))
    return PackedFragment(Fragment(emit(op).results[0], dtypes.UInt32, words), to,
                          fragment.ownership)


def unpack(packed: PackedFragment, dtype=None) -> Fragment:
    """The fragment of `packed` (bits kept: `packed.dtype` in `packed.ownership`); with `dtype`,
    then converted with ``.to(dtype)``."""
    if not isinstance(packed, PackedFragment):
        raise TypeMismatchError(f"tylo.unpack: {packed!r} is not a packed fragment")
    if packed.dtype.sub_byte:
        raise TypeMismatchError(
            f"tylo.unpack: a packed fragment of {packed.dtype} does not unpack: no kernel value is "
            f"{packed.dtype.bits} bit{'s' * (packed.dtype.bits > 1)} wide; pass it to tylo.mma as "
            f"it is, or read its words (packed.words)")
    op = UnpackOp(packed.words.value, packed.dtype.name,
                  fragment_type(packed.dtype, packed.ownership))
    out = Fragment(emit(op).results[0], packed.dtype, packed.ownership)
    return out if dtype is None else out.to(dtype)


def a_operand_slots(atom: MMAAtom) -> list[int]:
    """For each slot of `atom`'s A ownership (16 x 16), the slot of the two C accumulators
    (16 x 8 each, columns 0-7 then 8-15) laid end to end that holds the same coordinate in the
    same thread: the proof that `pack_operand_a` needs no lane communication. Raises PlanError
    for an atom that is not m16n8k16 with 16-bit A, or when the ownerships do not line up."""
    if not isinstance(atom, MMAAtom) or atom.shape != (16, 8, 16) or atom.a.bits != 16:
        raise PlanError(f"pack_operand_a: {atom!r} is not an m16n8k16 atom with BFloat16 or "
                        f"Float16 operands (two 16x8 accumulators make one 16x16 A)")
    c, a = atom.operand_layout("C"), atom.operand_layout("A")
    coords = c._coords
    right = coords + np.array([0, c.cols])
    table = np.concatenate([coords, right], axis=1)
    joined = fit_ownership(table, (c.rows, 2 * c.cols))
    if joined is None:
        raise PlanError(f"pack_operand_a: the accumulators of {atom} side by side are no layout")
    try:
        return check_relayout(joined, a)
    except GeometryError as e:
        raise PlanError(f"pack_operand_a: the accumulators of {atom} do not line up with its A "
                        f"operand: {e}") from None


def pack_operand_a(atom: MMAAtom, left: Fragment, right: Fragment) -> PackedFragment:
    """The A operand (16 x 16, `atom`'s A ownership and A dtype, packed) made of two FP32
    accumulators of `atom` (16 x 8 each, C ownership): `left` holds columns 0-7 and `right`
    columns 8-15, converted to the A dtype rounding to nearest even (``cvt.rn.bf16x2.f32`` /
    ``.f16x2``). Each thread keeps its own values (`a_operand_slots`): no shuffle.

    Raises PlanError for another atom, TypeMismatchError for fragments of another dtype or
    ownership (naming the ownership needed)."""
    slots = a_operand_slots(atom)
    c = atom.operand_layout("C")
    for name, f in (("left", left), ("right", right)):
        if not isinstance(f, Fragment):
            raise TypeMismatchError(f"pack_operand_a: {name} {f!r} is not a fragment")
        if f.ownership != c or f.dtype is not dtypes.Float32:
            raise TypeMismatchError(
                f"pack_operand_a: {name} is a fragment of {f.dtype} with ownership "
                f"{f.ownership}; it must be an FP32 accumulator of {atom} (ownership {c})")
    joined = take_slots([left, right], slots, atom.operand_layout("A"))
    return pack(joined, atom.a)


def accumulator_as_a(plan: WGMMA64, fragment: Fragment) -> PackedFragment:
    """A finished FP32 WGMMA accumulator of width k as `plan`'s register A operand (64 W, k),
    converted to plan.dtype and packed: what ``tylo.wgmma_operand(plan, "A", ...)`` takes, with
    no lane communication and no register move (attention's P of a key tile).

    fragment: a Float32 fragment with the accumulator ownership of width ``plan.k`` (a
    finished accumulator of an n = k plan, or the window ``tylo.window(s, (0, c), (64 W, k))``
    of a wider one). The result's column a is the fragment's column ``columns[a]``
    (``columns, _ = plan.accumulator_as_a()``, derived from the two ownerships): the identity
    for 16-bit plans; for 8-bit plans a permutation within each K = 32 slice, so the product
    ``A @ B`` then contracts the permuted columns and B's row a must hold what its row
    ``columns[a]`` would (attention stores V^T with each key tile's keys permuted so). The
    conversion is `pack`'s: ``cvt.rn.satfinite.e4m3x2.f32`` / ``e5m2x2`` (round to nearest even,
    saturating to +-448 / +-57344; sm_89+) or ``cvt.rn.bf16x2.f32`` / ``f16x2``, four (two)
    slots a word. Raises TypeMismatchError for anything but a WGMMA64 plan or a Float32
    fragment of that ownership (naming it), UnsupportedError for a target without the cvt."""
    if not isinstance(plan, WGMMA64):
        raise TypeMismatchError(f"tylo.accumulator_as_a: {plan!r} is not a WGMMA64 plan")
    columns, slots = plan.accumulator_as_a()
    want = Ownership((plan.m, plan.k), plan.instruction.c_layout(plan.k, plan.warpgroups))
    if not isinstance(fragment, Fragment) or fragment.dtype is not dtypes.Float32 \
            or fragment.ownership != want:
        got = (f"a fragment of {fragment.dtype} with ownership {fragment.ownership}"
               if isinstance(fragment, Fragment) else repr(fragment))
        raise TypeMismatchError(
            f"tylo.accumulator_as_a: the accumulator must be a Float32 fragment of {plan}'s "
            f"accumulator ownership at width k = {plan.k} ({want}; a window of k columns of a "
            f"finished accumulator), got {got}")
    a = Ownership((plan.m, plan.k), plan.instruction.a_layout(plan.k, plan.warpgroups))
    return pack(take_slots(fragment, slots, a), plan.dtype)


def store_packed(pointer: Pointer, packed: PackedFragment, index) -> None:
    """Store this thread's words of `packed` to consecutive addresses: elements
    ``[index * s, (index + 1) * s)`` of `pointer` (s = `packed.slots`), word k at element
    ``index * s + k * n``, its low element first (the packed payload, in register order).

    pointer: a global or shared pointer to `packed.dtype` elements whose alignment is known to
    be at least 4 bytes (a kernel's array argument specialized as 16-byte aligned, a shared
    allocation; `Pointer.align`), so that every word's address is a multiple of 4 (the payload
    is whole words); index: an int or runtime integer, usually the thread's index. Each word is
    one ``st.b32`` (vector stores are not emitted yet). Raises TypeMismatchError for another
    pointer dtype, GeometryError when the pointer's 4-byte alignment is not known.
    """
    if not isinstance(packed, PackedFragment):
        raise TypeMismatchError(f"store: {packed!r} is not a packed fragment")
    if not isinstance(pointer, Pointer):
        raise TypeMismatchError(f"store of a packed fragment: {pointer!r} is not a pointer "
                                f"(the payload goes to consecutive addresses from one)")
    if pointer.dtype is not packed.dtype:
        raise TypeMismatchError(f"store of a packed fragment of {packed.dtype} through a "
                                f"pointer to {pointer.dtype}")
    align = pointer.align
    if align is None or align < 4:
        raise GeometryError(
            f"store of a packed fragment: the pointer's alignment is "
            f"{'unknown' if align is None else f'{align} bytes'}, and each 32-bit word needs 4: "
            f"pass the array's own pointer (x.ptr, 16-byte aligned) and the payload index")
    target = pointer + index * packed.slots
    emit(StoreWordsOp(target.value, [packed.words[k].value for k in range(packed.words.slots)]))


def load_packed_operand(plan, role: str, tile: Tile, thread, what: str, load) -> PackedFragment:
    """The A or B operand of `plan` (a TiledMMA whose atom takes Int4, UInt4 or Bit1 there),
    loaded from `tile`, the packed matrix as a tile of 32-bit words (UInt32 or Int32): for A
    (TM, K / e) with word (m, w) holding A[m, e w .. e w + e - 1], for B (K / e, TN) with word
    (w, n) holding B[e w .. e w + e - 1, n], the lowest k in the low bits (e = 8 for 4-bit, 32
    for Bit1: the mma's registers, `TiledMMA.word_tile_layout`), by `load` (`tylo.load_fragment`).
    Returns a PackedFragment of the atom's type whose words are those registers. Raises
    TypeMismatchError for a tile of another dtype, GeometryError for a tile of another shape."""
    dtype = plan.atom.a if role == "A" else plan.atom.b
    e = plan.atom.instruction.register_elements(role)
    if isinstance(tile, Tile) and tile.dtype not in (dtypes.UInt32, dtypes.Int32):
        raise TypeMismatchError(
            f"{what}: the atom's {role} is {dtype}, read packed {e} to a 32-bit word: the tile "
            f"must hold UInt32 or Int32 words (the packed matrix, lowest k in the low bits), "
            f"not {tile.dtype}")
    words = load(plan.word_tile_layout(role), tile, thread, what)
    renamed = take_slots(words, range(words.slots), plan.word_layout(role))
    return PackedFragment(Fragment(renamed.value, dtypes.UInt32, renamed.ownership), dtype,
                          plan.operand_layout(role))


def packed_operand(plan, role: str, x) -> Fragment:
    """The words `tylo.mma` passes for operand `role` of `plan` (an Int4, UInt4 or Bit1 A or
    B): those of `x`, a PackedFragment of the atom's type in the plan's ownership. Raises
    TypeMismatchError otherwise, saying how to load one."""
    dtype = plan.atom.a if role == "A" else plan.atom.b
    e = plan.atom.instruction.register_elements(role)
    if not isinstance(x, PackedFragment):
        raise TypeMismatchError(
            f"mma operand {role}: {plan.atom} takes {dtype} values packed {e} to a 32-bit word; "
            f"got {x!r}: load the packed matrix with tylo.load_{role.lower()}(plan, words, t) "
            f"from a tile of UInt32 words (a PackedFragment)")
    if x.dtype is not dtype:
        raise TypeMismatchError(f"mma operand {role} holds packed {x.dtype}; the atom takes {dtype}")
    want = plan.operand_layout(role)
    if x.ownership != want or x.words.ownership != plan.word_layout(role):
        raise TypeMismatchError(f"mma operand {role} has ownership {x.ownership}; the plan needs "
                                f"{want}")
    return x.words
