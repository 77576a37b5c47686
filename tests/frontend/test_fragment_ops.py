"""Fragment operations while compiling: comparisons as Bool fragments, select, broadcasting of
replicated fragments, rcp, scale, permutedims, window and relayout as register maps, packing and
pack_operand_a (the PTX each becomes and the refusals). Values: tests/gpu/test_fragment_ops_gpu.py
and tests/gpu/test_packing_gpu.py."""

import pytest

import tylo
from tylo import (
    BFloat16, Float8E4M3, Float8E5M2, Float16, Float32, Float64, Int8, Int32, Layout, MMAAtom,
    Ownership, UInt8,
)
from tylo.frontend.language.packing import a_operand_slots, word_ownership

ATOM = MMAAtom((16, 8, 16), BFloat16, Float32)
C = ATOM.operand_layout("C")
ROWS = tylo.reduced_ownership(C, 1)  # (16, 1), replicated over each quad
F32_2 = tylo.Tensor(Float32, 2)


@tylo.kernel
def on_accumulator(out, x, fn: tylo.constexpr):
    t = tylo.thread_idx()
    f = tylo.load_fragment(C, tylo.window(x, (0, 0), (16, 8)), t)
    fn(f, t, out)


def ptx_of(fn, out=F32_2, arch="sm_90a") -> str:
    return on_accumulator.compile(out, F32_2, fn, block=32, arch=arch).ptx


def store_c(y, t, out):
    tylo.store(tylo.window(out, (0, 0), (16, 8)), y, t)


# -- comparisons and select -----------------------------------------------------------------------

@pytest.mark.parametrize("op, setp", [
    (lambda f: f < 0.5, "setp.lt.f32"), (lambda f: 0.5 < f, "setp.gt.f32"),
    (lambda f: f >= f * 2.0, "setp.ge.f32"), (lambda f: f == 0.0, "setp.eq.f32"),
    (lambda f: f != 0.0, "setp.neu.f32"),
])
def test_comparisons_are_bool_fragments(op, setp):
    seen = {}

    def fn(f, t, out):
        b = op(f)
        seen["b"] = b
        store_c(tylo.select(b, f, 0.0), t, out)

    ptx = ptx_of(fn)
    assert seen["b"].dtype is Bool and seen["b"].ownership == C
    assert ptx.count(setp) == 4 and ptx.count("selp.f32") == 4


Bool = tylo.Bool


def test_select_with_a_scalar_condition_and_bool_logic():
    def fn(f, t, out):
        m = (f > 0.0) & ~(f > 1.0)
        store_c(tylo.select(m, 1.0, f) + tylo.select(t < 16, f, -f), t, out)

    assert ptx_of(fn).count("selp.f32") == 8


def test_select_refusals():
    def float_condition(f, t, out):
        tylo.select(f, f, 0.0)

    with pytest.raises(tylo.TypeMismatchError, match="it must be a Bool fragment"):
        ptx_of(float_condition)

    def two_dtypes(f, t, out):
        tylo.select(f > 0.0, f, f.to(Float16))

    with pytest.raises(tylo.TypeMismatchError, match="between Float32 and Float16"):
        ptx_of(two_dtypes)


def test_a_fragment_has_no_truth_value():
    def python_max(f, t, out):
        max(f, 0.0)

    with pytest.raises(tylo.TypeMismatchError, match="instead of Python's max / min"):
        ptx_of(python_max)


# -- broadcasting ---------------------------------------------------------------------------------

def test_a_replicated_row_fragment_broadcasts_by_register_selection():
    """x - row_max: the (16, 1) fragment's 2 slots feed the 4 slots of C as [0, 0, 1, 1]: 4 sub,
    no move, no shuffle."""
    assert tylo.broadcast_slots(ROWS, C) == [0, 0, 1, 1]

    def fn(f, t, out):
        r = tylo.full(ROWS, 0.25, Float32) * 2.0
        store_c(f - r, t, out)
        store_c(r - f, t, out)

    ptx = ptx_of(fn)
    assert ptx.count("sub.rn.f32") == 8 and "shfl" not in ptx


def test_a_column_window_of_c_is_no_register_selection():
    def fn(f, t, out):  # column 0 is held by one thread of each quad only
        tylo.window(f, (0, 0), (16, 1))

    with pytest.raises(tylo.GeometryError, match="different slots"):
        ptx_of(fn)


def test_broadcast_with_a_row_vector_and_scalars():
    cols = Ownership((1, 8), Layout(((4, 8), 2), ((2, 0), 1)))  # thread t: columns 2(t%4)+{0,1}
    assert tylo.broadcast_slots(cols, C) == [0, 1, 0, 1]

    def fn(f, t, out):
        store_c(tylo.fma(f, tylo.full(cols, 2.0, Float32), tylo.full(ROWS, 1.0, Float32)), t, out)

    assert ptx_of(fn).count("fma.rn.f32") == 4


def test_incompatible_ownerships_name_both():
    other = Ownership((16, 1), Layout(((16, 2), 1), ((1, 0), 0)))

    def fn(f, t, out):
        f - tylo.full(other, 1.0, Float32)

    with pytest.raises(tylo.TypeMismatchError) as e:
        ptx_of(fn)
    assert str(other) in str(e.value) and str(C) in str(e.value)

    def shapes(f, t, out):
        f + tylo.zeros(ATOM.operand_layout("A"))

    with pytest.raises(tylo.TypeMismatchError, match=r"shape \(16, 8\) does not broadcast to shape \(16, 16\)"):
        ptx_of(shapes)


# -- rcp, scale -----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype, approx, want", [
    (Float32, False, ["rcp.rn.f32"]), (Float32, True, ["rcp.approx.ftz.f32"]),
    (Float64, False, ["rcp.rn.f64"]),
    (BFloat16, False, ["cvt.f32.bf16", "rcp.rn.f32", "cvt.rn.bf16.f32"]),
])
def test_rcp_forms(dtype, approx, want):
    @tylo.kernel
    def k(out, a):
        i = tylo.thread_idx()
        out[i] = tylo.rcp(a[i], approx=approx)

    t = tylo.Tensor(dtype, 1)
    ptx = k.compile(t, t).ptx
    lines = [ln.split()[0] for ln in ptx.splitlines() if ln.startswith("\t")]
    body = [x for x in lines if x.split(".")[0] in ("cvt", "rcp")]
    assert body == want


def test_rcp_static_and_refusals():
    assert tylo.rcp(4.0) == 0.25 and tylo.rcp(-0.0) == float("-inf")

    @tylo.kernel
    def k(out, a):
        out[0] = tylo.rcp(a[0], approx=True)

    with pytest.raises(tylo.UnsupportedError, match="rcp.approx is a Float32 instruction"):
        k.compile(tylo.Tensor(Float64, 1), tylo.Tensor(Float64, 1))
    with pytest.raises(tylo.TypeMismatchError, match="floats only"):
        k.compile(tylo.Tensor(Int32, 1), tylo.Tensor(Int32, 1))


def test_scale_converts_the_scalar_once():
    @tylo.kernel
    def k(out, x, alpha: tylo.Scalar[Float64]):
        t = tylo.thread_idx()
        f = tylo.load_fragment(C, tylo.window(x, (0, 0), (16, 8)), t).to(BFloat16)
        tylo.store(tylo.window(out, (0, 0), (16, 8)), tylo.scale(f, alpha), t)

    b = tylo.Tensor(BFloat16, 2)
    ptx = k.compile(b, F32_2, 2.0, block=32).ptx
    assert ptx.count("cvt.rn.bf16.f64") == 1 and ptx.count("mul.rn.bf16") == 4


# -- register maps --------------------------------------------------------------------------------

def test_register_maps_emit_no_instruction():
    def identity(f, t, out):
        store_c(f, t, out)

    def maps(f, t, out):
        y = tylo.permutedims(tylo.permutedims(f))
        swapped = Ownership((16, 8), Layout(((4, 8), (2, 2)), ((32, 1), (8, 16))))
        y = tylo.relayout(tylo.relayout(y, swapped), C)
        store_c(y, t, out)

    assert ptx_of(maps) == ptx_of(identity)


def test_permutedims_ownership_and_refusal():
    def fn(f, t, out):
        p = tylo.permutedims(f, (1, 0))
        assert p.ownership == tylo.permute_ownership(C) and p.ownership.shape == (8, 16)
        tylo.permutedims(f, (0, 0))

    with pytest.raises(tylo.GeometryError, match="not a permutation"):
        ptx_of(fn)


def test_fragment_window_selects_the_slots_of_the_rows():
    def fn(f, t, out):
        top = tylo.window(f, (0, 0), (8, 8))
        assert top.slots == 2 and top.ownership.shape == (8, 8)
        tylo.store(tylo.window(out, (0, 0), (8, 8)), top, t)

    assert ptx_of(fn).count("st.global.f32") == 2

    def uneven(f, t, out):
        tylo.window(f, (0, 0), (4, 8))

    with pytest.raises(tylo.GeometryError, match="different slots"):
        ptx_of(uneven)


def test_relayout_refusal_names_both():
    other = Ownership((16, 8), Layout((32, 4), (4, 1)))

    def fn(f, t, out):
        tylo.relayout(f, other)

    with pytest.raises(tylo.GeometryError) as e:
        ptx_of(fn)
    assert f"relayout from {C} to {other}" in str(e.value)


# -- packing --------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype, cvt", [
    (BFloat16, "cvt.rn.bf16x2.f32"), (Float16, "cvt.rn.f16x2.f32"),
    (Float8E4M3, "cvt.rn.satfinite.e4m3x2.f32"), (Float8E5M2, "cvt.rn.satfinite.e5m2x2.f32"),
    (Int8, "cvt.rni.s8.f32"), (UInt8, "cvt.rni.u8.f32"),
])
def test_pack_converts_with_the_paired_cvt(dtype, cvt):
    def fn(f, t, out):
        p = tylo.pack(f, dtype)
        assert p.words.slots == 4 // (32 // dtype.bits) and p.ownership == C
        tylo.store(out.ptr, p, t)

    ptx = ptx_of(fn, out=tylo.Tensor(dtype, 1))
    assert ptx.count(cvt) == (2 if dtype.bits == 16 else 4 if dtype.is_int else 2)
    assert ptx.count("st.global.b32") == 4 // (32 // dtype.bits)


def test_pack_of_int32_saturates_and_bits_are_kept():
    @tylo.kernel
    def k(out, x):
        t = tylo.thread_idx()
        f = tylo.load_fragment(C, tylo.window(x, (0, 0), (16, 8)), t)
        p = tylo.pack(tylo.unpack(tylo.pack(f, Int8)))
        tylo.store(out.ptr, p, t)

    ptx = k.compile(tylo.Tensor(Int8, 1), tylo.Tensor(Int32, 2), block=32).ptx
    assert ptx.count("cvt.sat.s8.s32") == 4


def test_pack_refusals():
    def f16_to_fp8(f, t, out):
        tylo.pack(f.to(Float16), Float8E4M3)

    with pytest.raises(tylo.TypeMismatchError, match="converts Float32, not a fragment of Float16"):
        ptx_of(f16_to_fp8)

    def fp32(f, t, out):
        tylo.pack(f)

    with pytest.raises(tylo.TypeMismatchError, match="Float32 does not pack"):
        ptx_of(fp32)

    def odd(f, t, out):
        tylo.pack(tylo.window(f, (0, 0), (8, 8)).to(Int8))

    with pytest.raises(tylo.GeometryError, match="does not pack 4 to a"):
        ptx_of(odd)

    with pytest.raises(tylo.UnsupportedError, match="sm_89 or later"):
        ptx_of(lambda f, t, out: tylo.pack(f, Float8E4M3), arch="sm_80")

    def arithmetic(f, t, out):
        tylo.pack(f, BFloat16) + 1.0

    with pytest.raises(tylo.TypeMismatchError, match="tylo.unpack"):
        ptx_of(arithmetic)


def test_word_ownership_is_that_of_each_first_element():
    words = word_ownership(C, 2)
    assert words.values == 2
    assert [words(t, k) for t in (0, 5) for k in range(2)] == \
        [C(t, 2 * k) for t in (0, 5) for k in range(2)]


@pytest.mark.parametrize("dtype", [BFloat16, Float16])
def test_pack_operand_a_lines_up_without_communication(dtype):
    """The proof of the FA2 trick: two m16n8 accumulators side by side hold, in every thread,
    exactly the coordinates of the m16n8k16 A operand, slot for slot (identity)."""
    atom = MMAAtom((16, 8, 16), dtype, Float32)
    assert a_operand_slots(atom) == list(range(8))

    @tylo.kernel
    def k(out, s, v):
        t = tylo.thread_idx()
        left = tylo.load_fragment(atom.operand_layout("C"), tylo.window(s, (0, 0), (16, 8)), t)
        right = tylo.load_fragment(atom.operand_layout("C"), tylo.window(s, (0, 8), (16, 8)), t)
        a = tylo.pack_operand_a(atom, left, right)
        assert a.ownership == atom.operand_layout("A") and a.dtype is dtype
        b = tylo.load_b(atom, tylo.window(v, (0, 0), (16, 8)), t)
        tylo.store(tylo.window(out, (0, 0), (16, 8)), tylo.mma(atom, a, b, tylo.accumulator(atom)), t)

    ptx = k.compile(F32_2, F32_2, tylo.Tensor(dtype, 2), block=32).ptx
    assert ptx.count(f"cvt.rn.{dtype.ptx}x2.f32") == 4 and "shfl" not in ptx


def test_pack_operand_a_refusals():
    with pytest.raises(tylo.PlanError, match="not an m16n8k16 atom"):
        a_operand_slots(MMAAtom((16, 8, 8), BFloat16, Float32))

    def wrong(f, t, out):
        tylo.pack_operand_a(ATOM, f, f.to(BFloat16))

    with pytest.raises(tylo.TypeMismatchError, match="it must be an FP32 accumulator"):
        ptx_of(wrong)


def test_packed_store_needs_a_known_alignment():
    def fn(f, t, out):
        tylo.store(out.ptr + 1, tylo.pack(f, BFloat16), t)

    with pytest.raises(tylo.GeometryError, match="each 32-bit word needs 4"):
        ptx_of(fn, out=tylo.Tensor(BFloat16, 1))

    def wrong_dtype(f, t, out):
        tylo.store(out.ptr, tylo.pack(f, BFloat16), t)

    with pytest.raises(tylo.TypeMismatchError, match="through a pointer to Float16"):
        ptx_of(wrong_dtype, out=tylo.Tensor(Float16, 1))
