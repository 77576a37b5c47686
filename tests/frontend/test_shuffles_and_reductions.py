"""What tylo.shfl_* and the fragment reductions compile to (the PTX forms, the result
ownership, the order of the pass) and what they refuse; their values are checked in
tests/gpu/test_shuffles_gpu.py and tests/gpu/test_reductions_gpu.py."""

import re

import numpy as np
import pytest

import tylo
from tylo import BFloat16, Float16, Float32, Float64, Int8, Int64, MMAAtom, operand_layout
from tylo.compiler.ownership.maps import broadcast_slots
from tylo.passes.pipeline import pipeline

C = operand_layout(MMAAtom((16, 8, 16), BFloat16, Float32), "C")


@tylo.kernel
def one_shuffle(out, x, mode: tylo.constexpr, W: tylo.constexpr):
    i = tylo.thread_idx()
    if mode == "idx":
        out[i] = tylo.shfl_idx(x[i], 5, W)
    elif mode == "up":
        out[i] = tylo.shfl_up(x[i], 1, W)
    elif mode == "down":
        out[i] = tylo.shfl_down(x[i], 1, W)
    else:
        out[i] = tylo.shfl_xor(x[i], 1, W)


def _ptx(mode, width, dtype=Float32):
    return one_shuffle.compile(tylo.Tensor(dtype, 1), tylo.Tensor(dtype, 1), mode, width).ptx


@pytest.mark.parametrize("mode, width, c", [("idx", 32, 31), ("up", 32, 0), ("down", 16, 0x101f),
                                            ("xor", 8, 0x181f), ("up", 4, 0x1c00)])
def test_c_packs_segment_mask_and_clamp(mode, width, c):
    ptx = _ptx(mode, width)
    ptx_mode = "bfly" if mode == "xor" else mode
    m = re.search(rf"shfl\.sync\.{ptx_mode}\.b32 %f\d+, %f\d+, %r\d+, %r(\d+), 0xffffffff;", ptx)
    assert m, ptx
    assert re.search(rf"mov\.b32 %r{m.group(1)}, {c};", ptx)


@pytest.mark.parametrize("dtype, shuffles, forms", [
    (Float16, 1, [r"mov\.b32 %r\d+, \{%rs(\d+), %rs\1\};", r"mov\.b32 \{%rs\d+, %rs\d+\}, %r"]),
    (BFloat16, 1, [r"mov\.b32 %r\d+, \{%rs(\d+), %rs\1\};"]),
    (Int8, 1, [r"mov\.b32 %r\d+, \{%rs(\d+), %rs\1\};"]),
    (Float64, 2, [r"mov\.b64 \{%r\d+, %r\d+\}, %fd", r"mov\.b64 %fd\d+, \{%r"]),
    (Int64, 2, [r"mov\.b64 \{%r\d+, %r\d+\}, %rd", r"mov\.b64 %rd\d+, \{%r"])], ids=str)
def test_other_widths_move_in_32_bit_words(dtype, shuffles, forms):
    ptx = _ptx("xor", 32, dtype)
    assert ptx.count("shfl.sync.bfly.b32") == shuffles
    for form in forms:
        assert re.search(form, ptx), (form, ptx)


def test_the_pass_runs_before_lower_fragments():
    names = [p.name for p in pipeline("sm_90a")]
    assert names.index("tylo-plan-reductions") == names.index("tylo-lower-fragments") - 1


@tylo.kernel
def row_max(out, x):
    t = tylo.thread_idx()
    f = tylo.load_fragment(C, tylo.window(x, (0, 0), (16, 8)), t)
    m = tylo.maximum(f, dims=1)
    tylo.store(tylo.window(out, (0, 0), (16, 1)), m, t)


def test_row_max_is_two_trees_and_four_shuffles():
    c = row_max.compile(tylo.Tensor(Float32, 2), tylo.Tensor(Float32, 2))
    assert c.ptx.count("shfl.sync.bfly.b32") == 4 and c.ptx.count("max.NaN.f32") == 6
    assert c.sass_counts().full["SHFL.BFLY"] == 4
    reduced = tylo.reduced_ownership(C, 1)
    assert f"#tylo.ownership<{reduced}>" in c.asm["tylo"].replace("Ownership(", "")
    assert broadcast_slots(reduced, C) == [0, 0, 1, 1]  # x - max(x) needs no more shuffles


def test_sum_stays_out_of_star_import():
    assert "sum" not in tylo.__all__ and tylo.sum.__module__ == "tylo.frontend.language.reductions"
    assert sum([1, 2]) == 3  # (this module's builtins, untouched)


@pytest.mark.parametrize("call, error, message", [
    (lambda f: tylo.sum(f, (1, 1)), tylo.GeometryError, "tuple of distinct axes"),
    (lambda f: tylo.sum(3.0, 1), tylo.TypeMismatchError, "reduces a fragment"),
    (lambda f: tylo.minimum(f), tylo.TypeMismatchError, "one fragment and dims="),
    (lambda f: tylo.sum(f.to(tylo.Float8E4M3), 1), tylo.UnsupportedError, "no FP8 arithmetic"),
])
def test_refusals(call, error, message):
    @tylo.kernel
    def k(out, x):
        t = tylo.thread_idx()
        f = tylo.load_fragment(C, tylo.window(x, (0, 0), (16, 8)), t)
        r = call(f)  # noqa: F841
        out[0] = 0.0

    with pytest.raises(error, match=re.escape(message)) as info:
        k.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 2))
    assert info.value.location is not None


@tylo.kernel
def half_warp_shuffle(out, x):
    t = tylo.thread_idx()
    if t < 16:
        out[t] = tylo.shfl_xor(x[t], 1)


def test_the_emulator_refuses_a_shuffle_part_of_a_warp_reaches():
    x = np.random.default_rng().standard_normal(32).astype(np.float32)
    with pytest.raises(tylo.EmulationError, match="warp-collective instruction executed by part"):
        half_warp_shuffle.emulate[1, 32](np.zeros(32, np.float32), x)
