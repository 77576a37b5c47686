"""tylo.ops.kernels.projection: the fused gate/up decode projection on the CPU emulator (fresh
random inputs, out poisoned, against numpy's float64; the Stream-K counters back to 0 after
every call), its plain variant (out = x W^T, `Linear`) likewise, its schedule's arithmetic, its argument errors, and its SASS (HGMMA, UTMALDG,
UTMASTG, no spills, no wgmma serialization in ptxas's log; ptxas and nvdisasm, no GPU)."""

from __future__ import annotations

import pytest

import tylo
from tylo import BFloat16, Float16, testing
from tylo.ops.kernels import projection as proj


def run(M: int, R: int, K: int, ctas: int | None = None, stages: int = proj.STAGES,
        calls: int = 2, torch=None) -> bool:
    """Fresh random inputs, new x at each of `calls` launches, out poisoned before each; on the
    emulator (without `torch`) against numpy in float64, else against torch in float32 and
    then a CUDA graph of three calls (so that the counters' reset is exercised); the Stream-K
    counters must be back to 0 after every call."""
    arrays = testing.arrays(torch)
    Wg, Wu = (arrays.randn((R, K), BFloat16, scale=K ** -0.5) for _ in range(2))
    x = arrays.randn((M, K), BFloat16)
    out = arrays.poisoned((M, R), BFloat16)
    p = proj.Projection(x, Wg, Wu, out, ctas, stages, emulate=torch is None)
    runs = [p] * calls + ([testing.graphed(torch, p, 3)] if torch is not None else [])
    good = True
    for call in runs:
        x[...] = arrays.randn((M, K), BFloat16)
        out[...] = float("nan")
        call()
        arrays.synchronize()
        good &= testing.report(f"M={M} R={R} K={K} ({p.ctas} CTAs, {p.stages} stages)", out,
                               proj.reference(x, Wg, Wu))
        good &= not testing.to_numpy(p.counts).any()
    return good


def ptxas_serialization(compiled) -> list[str]:
    """The causes ptxas gives for serializing the compiled kernel's wgmma.mma_async
    (`tylo.runtime.ptxas.serialized_wgmma`; its PTX assembled again: the compiled kernel keeps
    only the resource report)."""
    from tylo.runtime.ptxas import assemble, serialized_wgmma

    return serialized_wgmma(assemble(compiled.ptx, compiled.arch, compiled.name).log)


@pytest.mark.parametrize("M, R, K, ctas, stages", [
    (1, 128, 256, 3, 8),     # n = 8, 7 rows zero-filled; ranges [0,2) [2,5) [5,8) cut both units
    (16, 128, 256, 1, 2),    # one CTA: both units whole (no counter), the 2-stage ring wraps
    (64, 128, 256, 5, 3),    # n = 64, one partial; ranges of 1-2 steps: a unit over 3 CTAs
    (5, 192, 200, 8, 2),     # a K tail (200 = 3 x 64 + 8); 12 steps over 8 CTAs
])
def test_projection_emulated(M, R, K, ctas, stages):
    assert run(M, R, K, ctas, stages, calls=2 if M < 64 else 1)


def test_schedule_at_the_llama_shape():
    """224 units x 64 steps over 132 CTAs: 108 or 109 steps each, 96 units whole, 128 cut."""
    steps, whole, cut = proj.schedule(224, 64, 132)
    assert (min(steps), max(steps), sum(steps)) == (108, 109, 224 * 64)
    assert (whole, cut) == (96, 128)


@pytest.mark.parametrize("units, ksteps, ctas", [
    (2, 4, 3), (2, 4, 1), (2, 4, 5), (3, 4, 8), (224, 64, 132), (10, 65, 132), (7, 3, 21),
])
def test_stream_k_schedule(units, ksteps, ctas):
    """The kernel's schedule run on ints (its own functions): every (unit, step) computed once;
    a unit whole in one CTA or cut, a cut unit's contributors those `owner` gives, each piece
    in its own (CTA, slot) of the workspace, the slot its finisher reads; the walk visits each
    of a CTA's units once, its last first."""
    total = units * ksteps
    done, slots, pieces = set(), {}, {}
    for c in range(ctas):
        s0, s1 = c * total // ctas, (c + 1) * total // ctas
        for s in range(s0, s1):
            assert proj.owner(s, total, ctas) == c
        if s0 == s1:
            continue
        u_first = s0 // ksteps
        count = (s1 + ksteps - 1) // ksteps - u_first
        order = [proj.walk(j, u_first, count) for j in range(count)]
        assert order == [u_first + count - 1] + list(range(u_first, u_first + count - 1))
        for u in order:
            k0, k1 = proj.unit_steps(u, s0, s1, ksteps)
            assert 0 <= k0 < k1 <= ksteps
            done.update((u, k) for k in range(k0, k1))
            pieces.setdefault(u, []).append((c, k1 - k0))
            if k1 - k0 < ksteps:
                slot = 0 if u == u_first else 1
                row = proj.slot_row(c, slot, 0)
                assert row not in slots and proj.slot_row(c, slot, 1) == row + proj.ROWS
                slots[row] = u
    assert done == {(u, k) for u in range(units) for k in range(ksteps)}
    for u, by in pieces.items():
        lo, hi = proj.owner(u * ksteps, total, ctas), proj.owner((u + 1) * ksteps - 1, total, ctas)
        assert [c for c, _ in by] == list(range(lo, hi + 1))
        assert sum(n for _, n in by) == ksteps
        for c2 in range(lo, hi + 1) if hi > lo else ():
            slot2 = 0 if u == (c2 * total // ctas) // ksteps else 1
            assert slots[proj.slot_row(c2, slot2, 0)] == u
    assert len(slots) <= 2 * ctas and max(slots, default=0) < ctas * 4 * proj.ROWS


def test_argument_errors_name_the_argument():
    x, Wg, Wu, out = proj.host_arrays(65, 128, 256)
    with pytest.raises(tylo.ArgumentError, match="x.*65 rows"):
        proj.Projection(x, Wg, Wu, out, 3, emulate=True)
    x, Wg, Wu, out = proj.host_arrays(8, 128, 256)
    with pytest.raises(tylo.ArgumentError, match="W_gate"):
        proj.Projection(x, Wg[:100], Wu[:100], out[:, :100], 3, emulate=True)
    with pytest.raises(tylo.ArgumentError, match="W_up"):
        proj.Projection(x, Wg, Wu[:64], out, 3, emulate=True)
    with pytest.raises(tylo.ArgumentError, match="out"):
        proj.Projection(x, Wg, Wu, out[:, :64], 3, emulate=True)


def run_linear(M: int, N: int, K: int, ctas: int, stages: int, dtype=BFloat16,
               out_dtype=BFloat16, calls: int = 2) -> bool:
    """The plain variant (`proj.Linear`: out = x W^T) on the emulator: fresh x per call, out
    poisoned before each, against numpy's float64; the counters back to 0 after every call."""
    import numpy as np

    arrays = testing.arrays(None)
    W = arrays.randn((N, K), dtype, scale=K ** -0.5)
    x = arrays.randn((M, K), dtype)
    out = arrays.poisoned((M, N), out_dtype)
    p = proj.Linear(x, W, out, ctas, stages, emulate=True)
    good = True
    for _ in range(calls):
        x[...] = arrays.randn((M, K), dtype)
        out[...] = float("nan")
        p()
        ref = x.astype(np.float64) @ W.astype(np.float64).T
        good &= testing.report(f"plain M={M} N={N} K={K} ({p.ctas} CTAs)", out, ref)
        good &= not testing.to_numpy(p.counts).any()
    return good


@pytest.mark.parametrize("M, N, K, ctas, stages, dtype, out_dtype", [
    (1, 256, 256, 3, 8, BFloat16, BFloat16),    # 2 units x 4 steps: [0,2) [2,5) [5,8), both cut
    (8, 64, 128, 2, 2, BFloat16, BFloat16),     # one unit, its second half wholly past N
    (16, 200, 200, 5, 3, Float16, Float16),     # N tail 72 (second unit, half clipped), K tail
    (64, 128, 192, 4, 2, BFloat16, Float16),    # n = 64; bf16 in, f16 out; a unit over 4 CTAs
])
def test_linear_emulated(M, N, K, ctas, stages, dtype, out_dtype):
    assert run_linear(M, N, K, ctas, stages, dtype, out_dtype, calls=2 if M < 64 else 1)


def test_linear_argument_errors_name_the_argument():
    x, W, _, out = proj.host_arrays(8, 128, 256)
    with pytest.raises(tylo.ArgumentError, match="x.*65 rows"):
        proj.Linear(proj.host_arrays(65, 128, 256)[0], W, out, emulate=True)
    with pytest.raises(tylo.ArgumentError, match="W.*K = 256"):
        proj.Linear(x, W[:, :128], out, emulate=True)
    with pytest.raises(tylo.ArgumentError, match="out"):
        proj.Linear(x, W, out[:, :64], emulate=True)
    with pytest.raises(tylo.ArgumentError, match="W.*float16, x is bfloat16"):
        proj.Linear(x, W.astype("float16"), out, emulate=True)


@pytest.mark.parametrize("n", [8, 64])
def test_linear_sass(n):
    """The plain variant: 8 HGMMA per step (two halves), two TMA stores, the counter, no
    spills, no wgmma serialization."""
    pytest.importorskip("tylo.runtime.ptxas")
    compiled = proj.compile_for_sm90a(n, plain=True)
    counts = compiled.sass_counts()
    assert counts.opcodes["HGMMA"] >= 8
    assert counts.opcodes["UTMALDG"] >= 3 and counts.opcodes["UTMASTG"] >= 2
    assert counts.opcodes["ATOMG"] >= 1
    assert counts.spill_store_bytes == 0 and counts.spill_load_bytes == 0
    assert ptxas_serialization(compiled) == []


@pytest.mark.parametrize("n", [8, 16, 64])
def test_projection_sass(n):
    pytest.importorskip("tylo.runtime.ptxas")
    compiled = proj.compile_for_sm90a(n)
    counts = compiled.sass_counts()
    assert counts.opcodes["HGMMA"] >= 8        # gate and up: 4 m64nNk16 each per K step of 64
    assert counts.opcodes["UTMALDG"] >= 3 and counts.opcodes["UTMASTG"] >= 1
    assert counts.opcodes["ATOMG"] >= 1        # the Stream-K counter
    assert counts.spill_store_bytes == 0 and counts.spill_load_bytes == 0
    assert compiled.report.stack_frame_bytes == 0
    assert ptxas_serialization(compiled) == []


def test_max_stages_is_what_fits_in_shared_memory():
    """At n = 64 (the largest stage): max_stages compiles within sm_90's 232448 bytes, one more
    is refused when it compiles."""
    pytest.importorskip("tylo.runtime.ptxas")
    n = 64
    p = proj.Projection(*proj.host_arrays(n, 128, 256), ctas=3, stages=99, emulate=True)
    assert p.stages == proj.max_stages(n) == 9

    def build(stages):
        return proj.projection.compile(*p.maps, p.ws, p.counts, p.R, p.K, p.n, stages,
                                       block=proj.THREADS, arch="sm_90a")

    assert build(p.stages).shared_bytes <= 232448
    with pytest.raises(tylo.CompileError, match="shared"):
        build(p.stages + 1)


@pytest.mark.gpu
@pytest.mark.parametrize("M, R, K", [(1, 512, 320), (8, 1024, 1000), (16, 640, 4104),
                                     (64, 512, 320)])
def test_projection_on_the_gpu(M, R, K):
    """The GPU check (sm_90a) at small sizes: two launches with new x, a CUDA graph of three,
    against torch in float32; the counters back to 0."""
    torch = testing.cuda_torch()
    if torch is None or torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("needs sm_90a (Hopper) and torch with CUDA")
    assert run(M, R, K, torch=torch)
