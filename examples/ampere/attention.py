"""Streaming attention forward (FlashAttention-2's algorithm) with warp MMA atoms.

    python examples/ampere/attention.py            # check on the GPU (without one: compile, emulate)
    python examples/ampere/attention.py --bench    # also time it beside torch SDPA's flash backend
    python examples/ampere/attention.py --emulate  # run small problems on the CPU emulator

O = softmax(Q K^T / sqrt(d)) V for bf16 Q, K, V of shape (B, H, S, d), d 64 or 128, causal
(query i sees keys 0..i, torch's ``is_causal=True``) or not; O is bf16 (B, H, S, d) and the
optional log-sum-exp L float32 (B, H, S), natural log, of the scaled scores.

One CTA per (query tile, head, batch): `Config.block_m` query rows split over the warps, each
warp 16 rows per m16n8k16 row block (`Config.row_blocks` blocks per warp), FA2's layout. The
CTA streams the keys in tiles of `Config.block_n` rows: K and V tiles go to shared memory with
cp.async (two stages: tile j + 1 loads while tile j is used; the tail tile's rows past S are
zero-filled), Q once at the start. Rows are padded by 8 elements (16 bytes) in shared memory so
that the 8 row addresses of an ldmatrix fall in distinct banks. Per key tile and row block:
S = Q K^T with `tylo.mma` (Q's A fragments held in registers, or at d 128 read from shared
memory by ldmatrix at each use as FA2 does: `Config.q_in_registers`; K^T by ldmatrix), keys past S
and (causal) past the query masked to -inf, the online softmax (`tylo.softmax_update`: one FMA
and one ex2 per score), the running O rescaled, and O += P V with P packed straight from the
score registers into the A operand (`tylo.pack_operand_a`, no shared round trip) and V's B
operand by ldmatrix.trans. At the end O is normalized (`tylo.softmax_normalize`, one rcp per
row), converted to bf16 and stored; rows past S are not written.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from functools import cached_property

import tylo
from tylo import testing
from tylo import BFloat16, CopyPlan, Float32, Layout, MMAAtom, TiledMMA

ATOM = MMAAtom((16, 8, 16), BFloat16, Float32)
PAD = 8  # elements after each shared row: 16 bytes, so ldmatrix rows spread over the banks


@dataclass(frozen=True)
class Config:
    """A tiling: `block_m` query rows over `warps` warps, key tiles of `block_n` rows, head
    dimension `head_dim` (a multiple of 16). block_m must be a multiple of 16 * warps. `ftz`:
    the softmax's exp2 as ex2.approx.ftz.f32 (FA2's form), False: ex2.approx.f32 (IEEE
    subnormals, an FSETP and two FMULs more per exponential)."""

    head_dim: int
    block_m: int = 128
    block_n: int = 64
    warps: int = 8
    ftz: bool = True
    q_in_registers: bool = True  # False: Q's A fragments ldmatrix'ed from shared at each use

    def __post_init__(self):
        if self.head_dim % 16 or self.block_n % 16 or self.block_m % (16 * self.warps):
            raise ValueError(f"{self}: head_dim and block_n must be multiples of 16, block_m "
                             f"of 16 * warps")

    @property
    def threads(self) -> int:
        return 32 * self.warps

    @property
    def row_blocks(self) -> int:
        """16-row blocks per warp."""
        return self.block_m // (16 * self.warps)

    @cached_property
    def qk(self) -> TiledMMA:
        """One warp's S (16 x block_n) += Q (16 x 16) @ K^T (16 x block_n), one k step of d."""
        return TiledMMA(ATOM, warps=(1, 1), repeat=(1, self.block_n // 8), k=16)

    @cached_property
    def pv(self) -> TiledMMA:
        """One warp's O (16 x d) += P (16 x 16) @ V (16 x d), one k step of 16 keys."""
        return TiledMMA(ATOM, warps=(1, 1), repeat=(1, self.head_dim // 8), k=16)

    @property
    def pitch(self) -> int:
        return self.head_dim + PAD

    @cached_property
    def q_layout(self) -> Layout:
        return Layout((self.block_m, self.head_dim), (self.pitch, 1))

    @cached_property
    def kv_layout(self) -> Layout:
        """A K or V tile, row-major (key, d)."""
        return Layout((self.block_n, self.head_dim), (self.pitch, 1))

    @cached_property
    def kt_layout(self) -> Layout:
        """The same K tile seen as K^T (d, key): QK^T's B operand, contiguous along K (d)."""
        return Layout((self.head_dim, self.block_n), (1, self.pitch))

    @cached_property
    def q_copy(self) -> CopyPlan:
        return CopyPlan((self.block_m, self.head_dim), self.threads, 1, BFloat16)

    @cached_property
    def kv_copy(self) -> CopyPlan:
        return CopyPlan((self.block_n, self.head_dim), self.threads, 1, BFloat16)


# The defaults: FA2's warp tile (4 warps x 32 query rows, so that each K and V fragment feeds
# two MMAs); at d 128 Q's fragments do not fit in registers beside O and S and come from shared
# memory (FA2's Is_Q_in_regs = false). H200 run 43, in one run: d 128 0.857 / 0.834 of SDPA
# flash (full / causal) against 0.745 / 0.798 for 8 warps x 16 rows with Q in registers; d 64
# 0.944 / 0.984 against 0.919 / 0.775.
CONFIGS = {64: Config(64, 128, 64, 4),
           128: Config(128, 128, 32, 4, q_in_registers=False)}
# What --bench also times, in the same interleaved rounds (ptxas 13.0, sm_90a: none spills but
# d 128's 128 x 64 with 4 warps, 12 bytes), the default with IEEE exp2 (no .ftz) last
ALTERNATIVES = {64: [Config(64, 128, 64, 8), Config(64, 128, 64, 4, q_in_registers=False),
                     Config(64, 128, 64, 4, ftz=False)],
                128: [Config(128, 128, 64, 8), Config(128, 128, 64, 4, q_in_registers=False),
                      Config(128, 128, 32, 4, q_in_registers=False, ftz=False)]}


def head(x, b, h, rows):
    """The (rows, d) matrix of batch b, head h of a (B, H, S, d) tensor, 16-byte aligned."""
    ptr = x.ptr + b * x.stride[0] + h * x.stride[1]
    return tylo.GlobalTile(ptr, Layout((rows, x.shape[3]), (x.stride[2], 1)), align=16)


@tylo.func
def masked(s, n0, row0, seq, causal):
    """Scores of keys past the sequence, or (causal) past the query, -inf: the key of slot v
    is n0 + its column, the query row0 + its row (coordinates formed here, where they are used,
    so that no register holds them through the unmasked tiles)."""
    rows, cols = tylo.coordinates(s.ownership, tylo.lane_id())
    key = cols + n0
    out = key >= seq
    if causal:
        out = out | (key > rows + row0)
    return tylo.select(out, -math.inf, s)


@tylo.func
def key_tile(j, tiles, cfg, states, accs, qa, k_s, v_s, Kg, Vg, masks):
    """One key tile j: prefetch tile j + 1, then S = Q K^T, the online softmax and O += P V for
    each row block; `masks` is None (a tile wholly inside the sequence and the causal bound) or
    (row0, seq, causal). Returns the new states and accumulators."""
    D, BN, R = cfg.head_dim, cfg.block_n, cfg.row_blocks
    t = tylo.thread_idx()
    lane = tylo.lane_id()
    stage = j % 2
    if j + 1 < tiles:  # the next tile loads while this one is used
        tylo.copy_async(cfg.kv_copy, k_s[1 - stage], Kg, t, origin=((j + 1) * BN, 0))
        tylo.copy_async(cfg.kv_copy, v_s[1 - stage], Vg, t, origin=((j + 1) * BN, 0))
    tylo.commit_copies()
    tylo.wait_copies(1)
    tylo.barrier()
    kt = tylo.SharedTile(k_s.pointer(stage), cfg.kt_layout)
    scores = [tylo.accumulator(cfg.qk) for r in tylo.static_range(R)]
    for kk in tylo.static_range(D // 16):
        kb = tylo.load_b(cfg.qk, tylo.window(kt, (16 * kk, 0), (16, BN)), lane)
        for r in tylo.static_range(R):
            a = qa[r][kk] if cfg.q_in_registers else tylo.load_a(cfg.qk, qa[r][kk], lane)
            scores[r] = tylo.mma(cfg.qk, a, kb, scores[r])
    probs = []
    for r in tylo.static_range(R):
        s = scores[r]
        if masks is not None:
            row0, seq, causal = masks
            s = masked(s, j * BN, row0[r], seq, causal)
        states[r], p, rescale = tylo.softmax_update(states[r], s, ftz=cfg.ftz)
        accs[r] = tylo.scale(accs[r], rescale)
        probs.append(p)
    v_tile = v_s[stage]
    for kk in tylo.static_range(BN // 16):
        vb = tylo.load_b(cfg.pv, tylo.window(v_tile, (16 * kk, 0), (16, D)), lane)
        for r in tylo.static_range(R):
            a = tylo.pack_operand_a(ATOM, tylo.window(probs[r], (0, 16 * kk), (16, 8)),
                                    tylo.window(probs[r], (0, 16 * kk + 8), (16, 8)))
            accs[r] = tylo.mma(cfg.pv, a, vb, accs[r])
    tylo.barrier()  # every warp is done with this stage before the next copy into it
    return states, accs


@tylo.kernel
def attention(O, L, Q, K, V, cfg: tylo.constexpr, causal: tylo.constexpr,
              with_lse: tylo.constexpr):
    """O (and L when with_lse) of one (query tile, head, batch): see the module docstring."""
    D, BM, BN, R = cfg.head_dim, cfg.block_m, cfg.block_n, cfg.row_blocks
    seq = Q.shape[2]
    t = tylo.thread_idx()
    lane = tylo.lane_id()
    warp = tylo.warp_id()
    q0 = tylo.block_idx(0) * BM
    h = tylo.block_idx(1)
    b = tylo.block_idx(2)
    Qg, Kg, Vg, Og = head(Q, b, h, seq), head(K, b, h, seq), head(V, b, h, seq), head(O, b, h, seq)
    q_s = tylo.shared_tile(cfg.q_layout, BFloat16, dynamic=True)
    k_s = tylo.shared_tiles(cfg.kv_layout, 2, BFloat16, dynamic=True)
    v_s = tylo.shared_tiles(cfg.kv_layout, 2, BFloat16, dynamic=True)

    tylo.copy_async(cfg.q_copy, q_s, Qg, t, origin=(q0, 0))
    tylo.copy_async(cfg.kv_copy, k_s[0], Kg, t, origin=(0, 0))
    tylo.copy_async(cfg.kv_copy, v_s[0], Vg, t, origin=(0, 0))
    tylo.commit_copies()
    if causal:  # tiles up to the CTA's last query; the first `full` need no mask
        tiles = (tylo.minimum(seq, q0 + BM) + BN - 1) // BN
        full = tylo.minimum(seq // BN, (q0 + 1) // BN)
    else:
        tiles = (seq + BN - 1) // BN
        full = seq // BN

    scores_own = cfg.qk.operand_layout("C")
    row0 = [q0 + (warp * R + r) * 16 for r in tylo.static_range(R)]
    states = [tylo.SoftmaxState(tylo.zeros(scores_own), dims=1, scale=1.0 / math.sqrt(D))
              for r in tylo.static_range(R)]
    accs = [tylo.accumulator(cfg.pv) for r in tylo.static_range(R)]
    tylo.wait_copies(0)
    tylo.barrier()
    qw = [[tylo.window(q_s, (row0[r] - q0, 16 * kk), (16, 16)) for kk in tylo.static_range(D // 16)]
          for r in tylo.static_range(R)]
    qa = [[tylo.load_a(cfg.qk, w, lane) for w in ws] for ws in qw] if cfg.q_in_registers else qw

    for j in range(full):
        states, accs = key_tile(j, tiles, cfg, states, accs, qa, k_s, v_s, Kg, Vg, None)
    for j in range(full, tiles):
        states, accs = key_tile(j, tiles, cfg, states, accs, qa, k_s, v_s, Kg, Vg,
                                (row0, seq, causal))

    for r in tylo.static_range(R):
        out = tylo.softmax_normalize(states[r], accs[r]).to(BFloat16)
        lse = tylo.softmax_logsumexp(states[r])
        for half in tylo.static_range(2):
            row = row0[r] + 8 * half + lane // 4
            if row < seq:
                rows_half = tylo.window(out, (8 * half, 0), (8, D))
                tylo.store(tylo.window(Og, (row0[r] + 8 * half, 0), (8, D), inbounds=True),
                           rows_half, lane)
                if with_lse:
                    if lane % 4 == 0:
                        L[b, h, row] = lse[half]


def launch(O, L, Q, K, V, causal: bool, cfg: Config | None = None) -> None:
    """O (and L, unless it is None) = attention(Q, K, V) on the GPU; shapes (B, H, S, d)."""
    batch, heads, seq, d = Q.shape
    cfg = cfg or CONFIGS[d]
    grid = (-(-seq // cfg.block_m), heads, batch)
    lse = L if L is not None else O  # (an unused argument of the right kind when with_lse is off)
    attention[grid, cfg.threads](O, lse, Q, K, V, cfg, causal, L is not None)


def check(torch, batch: int, heads: int, seq: int, d: int, causal: bool) -> float:
    """Relative Frobenius error of O against torch's SDPA in float32 on fresh random inputs
    (outputs poisoned with NaN), and of L against torch.logsumexp of the scaled scores."""
    F = torch.nn.functional
    q, k, v = (torch.randn(batch, heads, seq, d, device="cuda", dtype=torch.bfloat16)
               for _ in range(3))
    out = torch.full_like(q, float("nan"))
    lse = torch.full((batch, heads, seq), float("nan"), device="cuda")
    launch(out, lse, q, k, v, causal)
    torch.cuda.synchronize()
    ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
    err = ((out.float() - ref).norm() / ref.norm()).item()
    z = (q.float() @ k.float().transpose(-1, -2)) / math.sqrt(d)
    if causal:
        z = z.masked_fill(torch.ones(seq, seq, device="cuda", dtype=torch.bool).triu(1), -math.inf)
    lse_err = (lse - torch.logsumexp(z, -1)).abs().max().item()
    written = not torch.isnan(out).any().item() and not torch.isnan(lse).any().item()
    ok = written and err < 1e-2 and lse_err < 1e-3
    print(f"check B{batch} H{heads} S{seq} d{d} {'causal' if causal else 'full'}: relative "
          f"Frobenius error {err:.2e}, lse max abs error {lse_err:.1e} (all outputs written: "
          f"{written}) {'ok' if ok else 'FAILED'}")
    return err if ok else float("inf")


def bench(torch, batch: int, heads: int, seq: int, d: int, causal: bool) -> None:
    """Median times (CUDA events, interleaved rounds: `tylo.testing.interleaved_ms`) of this kernel
    (without L) in its default and alternative tilings and of torch SDPA's flash backend, on the
    same inputs; TFLOP/s counts 4 B H S^2 d (half of it when causal)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    F = torch.nn.functional
    q, k, v = (torch.randn(batch, heads, seq, d, device="cuda", dtype=torch.bfloat16)
               for _ in range(3))
    out = torch.empty_like(q)

    def flash():
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    def name(cfg: Config) -> str:
        return (f"{cfg.block_m}x{cfg.block_n}/{cfg.warps}w" + ("" if cfg.q_in_registers else
                " Q from smem") + ("" if cfg.ftz else " IEEE exp2"))

    cases = {name(cfg): (lambda cfg=cfg: launch(out, None, q, k, v, causal, cfg))
             for cfg in [CONFIGS[d], *ALTERNATIVES[d]]}
    ms = testing.interleaved_ms(torch, {**cases, "flash": flash})
    flops = 4 * batch * heads * seq * seq * d / (2 if causal else 1)
    tf = {case: flops / t / 1e9 for case, t in ms.items()}
    tylo_part = " | ".join(f"tylo {case} {ms[case]:.3f} ms = {tf[case]:.1f} TFLOP/s "
                           f"(ratio {tf[case] / tf['flash']:.3f})" for case in cases)
    print(f"bench B{batch} H{heads} S{seq} d{d} {'causal' if causal else 'full'}: {tylo_part} "
          f"| SDPA flash {ms['flash']:.3f} ms = {tf['flash']:.1f} TFLOP/s")


def emulated_check(batch: int, heads: int, seq: int, cfg: Config, causal: bool) -> float:
    """Run the kernel on the CPU emulator on fresh random bf16 inputs (outputs poisoned); print
    and return the relative Frobenius error of O against numpy's float64 attention of the same
    values (inf when an output was not written or L is off by more than 1e-4)."""
    import time

    import numpy as np

    bf16 = BFloat16.numpy
    d = cfg.head_dim
    rng = np.random.default_rng()
    q, k, v = (rng.standard_normal((batch, heads, seq, d)).astype(bf16) for _ in range(3))
    out = np.full((batch, heads, seq, d), np.nan, bf16)
    lse = np.full((batch, heads, seq), np.nan, np.float32)
    grid = (-(-seq // cfg.block_m), heads, batch)
    t0 = time.perf_counter()
    attention.emulate[grid, cfg.threads](out, lse, q, k, v, cfg, causal, True)
    seconds = time.perf_counter() - t0
    z = q.astype(np.float64) @ k.astype(np.float64).transpose(0, 1, 3, 2) / math.sqrt(d)
    if causal:
        z = np.where(np.triu(np.ones((seq, seq), bool), 1), -np.inf, z)
    m = z.max(-1, keepdims=True)
    e = np.exp(z - m)
    ref = (e / e.sum(-1, keepdims=True)) @ v.astype(np.float64)
    ref_lse = (np.log(e.sum(-1)) + m[..., 0])
    got = out.astype(np.float64)
    written = not np.isnan(got).any() and not np.isnan(lse).any()
    err = float(np.linalg.norm(got - ref) / np.linalg.norm(ref)) if written else float("inf")
    lse_err = float(np.abs(lse - ref_lse).max()) if written else float("inf")
    ok = err < 1e-2 and lse_err < 1e-4
    print(f"emulated B{batch} H{heads} S{seq} d{d} {'causal' if causal else 'full'}, tile "
          f"{cfg.block_m}x{cfg.block_n} ({cfg.warps} warps): relative Frobenius error vs numpy "
          f"float64 {err:.2e}, lse max abs error {lse_err:.1e} (all outputs written: {written}) "
          f"in {seconds:.2f} s {'ok' if ok else 'FAILED'}")
    return err if ok else float("inf")


def compile_kernel(cfg: Config, causal: bool, arch: str | None = None):
    """The compiled kernel for `cfg` (bf16 tensors of rank 4, L float32 rank 3)."""
    desc = tylo.Tensor
    bf = desc(BFloat16, 4)
    options = {} if arch is None else {"arch": arch}
    return attention.compile(bf, desc(Float32, 3), bf, bf, bf, cfg, causal, True,
                             block=cfg.threads, **options)


def compile_only() -> None:
    """Without a GPU: compile each configuration for sm_90a and sm_80, print the ptxas reports."""
    for arch in ("sm_90a", "sm_80"):
        for d, cfg in CONFIGS.items():
            for causal in (False, True):
                c = compile_kernel(cfg, causal, arch)
                counts = c.sass_counts()
                print(f"d{d} {'causal' if causal else 'full'} {cfg.block_m}x{cfg.block_n} "
                      f"{cfg.warps} warps, {c.arch}: ptxas: {c.report}; dynamic shared "
                      f"{c.dynamic_shared_bytes} bytes; SASS HMMA "
                      f"{counts['HMMA']}, LDSM {counts['LDSM']}, LDGSTS {counts['LDGSTS']}")


SMALL = Config(64, 32, 32, 2)  # the emulated problems: two warps, 32 x 32 tiles


def main() -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--bench", action="store_true", help="time beside torch SDPA flash")
    parser.add_argument("--emulate", action="store_true",
                        help="run small problems on the CPU emulator, against numpy")
    args = parser.parse_args()
    if args.emulate:
        errors = [emulated_check(1, 2, seq, SMALL, causal) for seq in (64, 40)
                  for causal in (False, True)]
        return 0 if all(e < 1e-2 for e in errors) else 1
    torch = testing.cuda_torch()
    if torch is None:
        print("no GPU (or no torch with CUDA): compiling for sm_90a and sm_80, then running a "
              "small problem on the CPU emulator instead")
        compile_only()
        return 0 if emulated_check(1, 1, 40, SMALL, True) < 1e-2 else 1
    errors = [check(torch, b, h, s, d, causal)
              for b, h, s in ((2, 4, 1024), (1, 3, 1000), (2, 2, 77))
              for d in (64, 128) for causal in (False, True)]
    if args.bench:
        for d in (128, 64):
            for causal in (False, True):
                bench(torch, 4, 16, 4096, d, causal)
    return 0 if all(e < 1e-2 for e in errors) else 1


if __name__ == "__main__":
    sys.exit(main())
