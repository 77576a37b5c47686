"""tylo.ops.kernels.attention: emulated against numpy in float64 (fresh random inputs, O and
lse poisoned first; causal and not, sequences that are not multiples of the tiles, a padded
batch, head dims 64, 128 and 256), the proof that P reaches WGMMA as its register A operand
with no lane exchange, and the SASS of the kernels (HGMMA, UTMALDG, UTMASTG, no spills); on a
GPU, checks against torch."""

from __future__ import annotations

import pytest

from tylo import WGMMA64, BFloat16, Float32, testing, window_plan
from tylo.ops.kernels import attention_host as host
from tylo.ops.kernels import attention_tiles as tiles


def run(B: int, H: int, S: int, D: int, causal: bool, seq: int | None = None, cfg=None,
        torch=None) -> bool:
    """Fresh random inputs, O and lse poisoned first; on the emulator (without `torch`) against
    numpy in float64, else against torch in float32. With seq < S the arrays are padded and the
    rows past seq must stay poisoned (nothing written there)."""
    seq = S if seq is None else seq
    arrays = testing.arrays(torch)
    Q, K, V = (arrays.randn((B, H, S, D), BFloat16) for _ in range(3))
    O = arrays.poisoned((B, H, S, D), BFloat16)
    lse = arrays.poisoned((B, H, S), Float32)
    host.Attention(Q, K, V, O, lse, causal, seq, cfg, emulate=torch is None)()
    arrays.synchronize()
    name = f"{B}x{H}x{S}x{D}{' causal' if causal else ''} seq {seq}"
    return testing.report_attention(name, O, lse, *host.reference(Q, K, V, causal, seq), seq)


def register_a_is_accumulator(D: int, BN: int) -> bool:
    """True when, for every PV chunk (k0, plan) of `pv_chunks`, each thread holds in its score
    accumulator slots the very coordinates the plan's register A operand wants of it: thread t's
    slots of columns [k0, k0 + k) of the (64, BN) accumulator, in slot order, are at (row, col
    - k0) = register_a_ownership(plan)(t, v) for each v. Then P reaches WGMMA as A with no lane
    exchange (tylo.window is a register selection; `window_plan` refuses anything else)."""
    from tylo.frontend.language.wgmma import register_a_ownership

    C = WGMMA64(BFloat16, BN, tiles.ROW).operand_layout("C")
    for k0, plan in tiles.pv_chunks(D, BN):
        want = register_a_ownership(plan)
        selected = window_plan(C, (0, k0), (64, plan.k))
        if selected is None or selected.ownership != want:
            return False
        for thread in range(C.threads):
            mine = [C(thread, v) for v in selected.slots]
            if [(r, c - k0) for r, c in mine] != [want(thread, v) for v in range(want.values)]:
                return False
    return True


@pytest.mark.parametrize("B, H, S, D, causal, seq", [
    (1, 2, 200, 64, True, None),     # two query blocks, a diagonal and a ragged last key tile
    (2, 1, 256, 128, False, 190),    # a padded batch: rows >= 190 of each matrix untouched
    (1, 1, 144, 256, True, None),    # D 256 (BN 80): PV chunks of k 64 and 16
])
def test_emulated_against_numpy(B, H, S, D, causal, seq):
    assert run(B, H, S, D, causal, seq)


def test_emulated_three_consumers_and_a_wide_key_tile():
    """W = 3 consumer warpgroups (BM 192, setmaxnreg 32/160, the turn passed round three) and
    BN 176 (PV chunks 64, 64, 32, 16), three stages, over more key tiles than stages."""
    assert run(1, 1, 400, 64, False, None, tiles.Config(64, 176, 3, 3))


@pytest.mark.parametrize("kw", [dict(overlap=False, pingpong=False), dict(pingpong=False),
                                dict(chain=False), dict(pin_wait=False)],
                         ids=["serial", "no-pingpong", "unchained", "unpinned-wait"])
def test_emulated_schedules_of_the_ablation(kw):
    """The serial schedule (Q K^T, softmax, P V, each GEMM chained and waited), the overlapped
    one without turns, the default without chains (a wait between a GEMM's groups) and with
    P V's wait left to ptxas (not pinned), which bench/hopper_attention.py's ablation times
    beside the default."""
    cfg = tiles.Config(128, 128, 2, 2, **kw)
    assert run(1, 1, 320, 128, True, None, cfg)


@pytest.mark.parametrize("D, BN", [(64, 128), (128, 128), (256, 80), (64, 176), (64, 192)])
def test_p_is_the_register_a_operand_without_lane_exchange(D, BN):
    assert register_a_is_accumulator(D, BN)


def _isa_register_a(thread: int, slot: int) -> tuple[int, int]:
    """The (row, col) of slot `slot` of `thread` in WGMMA's register A fragment, from the PTX
    ISA's figure of the m64nNk16 A fragment (9.7.15.5.1.1; CuTe's ALayout_64x16), k16 slices
    of 8 slots side by side: thread T = 32 w + 4 g + t."""
    w, g, t = thread // 32, thread % 32 // 4, thread % 4
    i, j = slot % 8, slot // 8
    return 16 * w + g + 8 * ((i >> 1) & 1), 16 * j + 2 * t + (i & 1) + 8 * (i >> 2)


@pytest.mark.parametrize("D, BN", [(64, 128), (256, 80), (64, 176)])
def test_register_a_matches_the_isa_fragment(D, BN):
    """Independently of Tylo's layouts: the slots tylo.window selects for each PV chunk hold,
    in every thread, the coordinates the ISA's A fragment assigns to that thread's registers."""
    C = WGMMA64(BFloat16, BN, 64).operand_layout("C")
    for k0, plan in tiles.pv_chunks(D, BN):
        slots = window_plan(C, (0, k0), (64, plan.k)).slots
        assert len(slots) == plan.k // 2
        for thread in range(128):
            got = [C(thread, v) for v in slots]
            assert [(r, c - k0) for r, c in got] == [_isa_register_a(thread, v)
                                                     for v in range(len(slots))]


def test_a_misaligned_chunk_is_refused():
    """The selection is refused where it would need communication: columns [4, 20) lie in
    different slots of different threads."""
    C = WGMMA64(BFloat16, 128, 64).operand_layout("C")
    assert window_plan(C, (0, 4), (64, 16)) is None


@pytest.fixture(scope="module")
def compiled():
    pytest.importorskip("tylo.runtime.ptxas")
    return {(D, causal): host.compile_for_sm90a(D, causal) for D in (64, 128) for causal in (False, True)}


@pytest.mark.parametrize("D", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_sass(compiled, D, causal):
    c = compiled[(D, causal)]
    counts = c.sass_counts()
    cfg = tiles.config(D, causal)
    qk = (D // 64) * 4                       # m64nBNk16 per 16 of D
    pv = cfg.BN // 16                        # m64nDk16 per 16 keys
    # tile 0's Q K^T, the unmasked and the masked loop (each Q K^T and P V), the last P V
    assert counts.opcodes["HGMMA"] == qk + 2 * (qk + pv) + pv
    assert counts.opcodes["UTMALDG"] >= 2 * (D // 64) + 1 and counts.opcodes["UTMASTG"] >= D // 64
    assert counts.spill_store_bytes == 0 and counts.spill_load_bytes == 0
    assert c.report.stack_frame_bytes == 0
    producer, consumer = cfg.registers           # 24/240 for two consumers, 32/160 for three
    assert f"setmaxnreg.inc.sync.aligned.u32 {consumer};" in c.ptx
    assert f"setmaxnreg.dec.sync.aligned.u32 {producer};" in c.ptx
    # the softmax's exp2 is ex2.approx.ftz.f32: one MUFU.EX2 each, no FSETP + 2 FMUL fix-up
    assert "ex2.approx.ftz.f32" in c.ptx and "ex2.approx.f32" not in c.ptx
    # a GEMM's groups are chained, one wait per GEMM: tile 0's S, S (O in flight) and O in
    # each of the two loops, the last P V (unchained: one per group, 12 at D 128); the masked
    # loop of a non-causal row (its ragged last tile) waits group by group
    masked = 2 if causal else D // 64 + len(tiles.pv_chunks(D, cfg.BN))
    assert c.ptx.count("wgmma.wait_group") == 1 + 2 + masked + 1
    assert 4 * counts.opcodes.get("FSETP", 0) < counts.opcodes["MUFU"]  # (IEEE: FSETP > MUFU)


def _exponentials_under_p_v(sass: str) -> int:
    """The MUFU.EX2 between each wait for S (WARPGROUP.DEPBAR.LE gsb0, N > 0: P V's groups
    still in flight) and the next wait for everything (0x0): the softmax that runs under P V."""
    n, inside = 0, False
    for line in sass.splitlines():
        if "WARPGROUP.DEPBAR.LE" in line:
            inside = not line.rstrip(" ;").endswith("0x0")
        elif inside and "MUFU.EX2" in line:
            n += 1
    return n


def test_pinned_wait_lets_the_softmax_run_under_p_v(compiled):
    """Left alone, ptxas hoists P V's wait above the unmasked loop's softmax (almost none of
    its 66 exponentials after S's wait runs before P V's); the default's bar.arrive
    (pin_wait) keeps it behind most of them (ptxas 13, D 64, three consumers: 52 of the
    unmasked loop's 66 non-causal, 81 of both loops' 132 causal; unpinned 0 and 9)."""
    from dataclasses import replace

    for causal in (False, True):
        base = tiles.config(64, causal)
        unpinned = host.compile_for_sm90a(64, causal, replace(base, pin_wait=False))
        assert _exponentials_under_p_v(unpinned.asm["sass"]) < 16
        loops = 2 if causal else 1                 # non-causal: the masked tile waits per group
        assert _exponentials_under_p_v(compiled[(64, causal)].asm["sass"]) > loops * 66 // 2


def test_only_the_row_reductions_shuffle(compiled):
    """The row maximum and sum of each tile are two butterflies per row over the four lanes of
    a row, two rows per thread (8 shuffles, in each of the three copies of the softmax: tile 0,
    the unmasked and the masked loop); broadcasting them back, the rescale, the mask and P as
    WGMMA's A operand move nothing between lanes."""
    ptx = compiled[(128, True)].ptx
    assert ptx.count("shfl.sync.bfly.b32") == 3 * 8
    assert ptx.count("shfl.sync") == 3 * 8


@pytest.mark.gpu
@pytest.mark.parametrize("B, H, S, D, causal, seq", [
    (2, 4, 1024, 128, False, None), (2, 4, 1024, 128, True, None),
    (1, 3, 777, 64, True, None), (1, 3, 1000, 64, False, None),
    (2, 2, 333, 256, True, None), (2, 3, 1024, 128, True, 900),
])
def test_gpu_against_torch(B, H, S, D, causal, seq):
    torch = testing.cuda_torch()
    if torch is None or torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("needs sm_90a (Hopper) and torch with CUDA")
    assert run(B, H, S, D, causal, seq, torch=torch)
