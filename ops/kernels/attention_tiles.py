"""The tiles of Hopper attention (ops/kernels/attention.py): the tile choices per head dim
(`Config`, `CONFIGS`, `config`), the 128-byte swizzled shared-memory layouts of Q, K and V, the
TMA boxes that fill them, the WGMMA plans of S = Q K^T and O += P V, and the grid's orders
(`grid`; the forward's `lpt` chunks of heads, `lpt_heads`). The forward's kernel, its
consumers' key loop (attention_consumer.py), its host side (attention_host.py) and the
backward (attention_backward.py) all read them from here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import tylo
from tylo import BFloat16, ComposedLayout, Float8E4M3, Layout, TMATile, WGMMA64, element_swizzle

ROW = 64  # bf16 elements of one 128-byte swizzle row: D is cut into D / ROW column blocks
SWIZZLE = element_swizzle(128, 2)
Q_BOX = TMATile(BFloat16, (64, ROW), 1)  # one consumer's 64 rows x 64 columns of Q (and of O)


@dataclass(frozen=True)
class Config:
    """Tile choices: head dim D, BN keys per tile, STAGES of the K and V rings, W consumer
    warpgroups (BM = 64 W query rows per CTA), the producer's and consumers' setmaxnreg."""

    D: int
    BN: int
    STAGES: int = 2
    W: int = 2
    overlap: bool = True    # S_{j+1} = Q K^T issued with P_j V_j, softmax under the last group
    pingpong: bool = True   # the consumers issue their GEMMs in turns (named barriers)
    ftz: bool = True        # the softmax's exp2 as ex2.approx.ftz.f32 (False: ex2.approx.f32)
    chain: bool = True      # a GEMM's groups chained on the pending accumulator, one wait each
    pin_wait: bool = True   # a bar.arrive before P V's wait, so ptxas sinks the wait (module text)
    carry_bf16: bool = False  # P rounded to bf16 right after its softmax, not before P V
    scale: float | None = None  # the softmax's scale; None: 1 / sqrt(D)
    softcap: float | None = None  # logits capped to softcap tanh(scale s / softcap); None: not
    lpt: bool = False       # the grid in chunks of heads, query blocks slower (`grid`)
    fp8: bool = False       # e4m3 Q, K and V^T (FP8 forward: attention_fp8.py), bf16 O
    weight_scale: int = 256  # fp8: P in [0, weight_scale] before its e4m3 rounding (a power of 2)

    @property
    def softmax_scale(self) -> float:
        return 1.0 / math.sqrt(self.D) if self.scale is None else self.scale

    @property
    def exponent_scale(self) -> float:
        """The factor the online softmax folds into its exponent (`tylo.SoftmaxState`'s
        scale): the softmax scale, or with a softcap the cap (the scores are then tanh(scale s
        / softcap) and the logits softcap times those: FlashAttention-2's arrangement)."""
        return self.softmax_scale if self.softcap is None else self.softcap

    @property
    def BM(self) -> int:
        return 64 * self.W

    @property
    def dtype(self):
        """The element type of Q, K and V in shared memory: BFloat16, or Float8E4M3 (`fp8`)."""
        return Float8E4M3 if self.fp8 else BFloat16

    @property
    def registers(self) -> tuple[int, int]:
        """(producer, consumer) registers per thread: FA3's 24/240 for two consumer
        warpgroups, 32/160 for three, 56/256 for one (sum * 128 <= 65536)."""
        return {1: (56, 256), 2: (24, 240), 3: (32, 160)}[self.W]


#: (D, causal) -> tiles. FA3's bf16 BlockM x BlockN (its hopper/tile_size.h) is
#: 128 x 128 (causal) / 128 x 176 at D 128, 128 x 80 at D 256, 192 x 128/192 (three consumers)
#: at D 64; here BN 176 spills, so BN is 128 (80 at D 256, where shared memory runs out),
#: BlockM 128 at D 128 and 256, and 192 (three consumers, 160 registers) at D 64 with P carried
#: between tiles as bf16 (in f32 it spills there; at D 128 f32 is 2-5% faster: H200 run 39,
#: where three consumers at D 64 ran 1.03-1.07x two).
CONFIGS = {
    (64, False): Config(64, 128, 4, W=3, carry_bf16=True),
    (64, True): Config(64, 128, 4, W=3, carry_bf16=True),
    (128, False): Config(128, 128, 2), (128, True): Config(128, 128, 2),
    (256, False): Config(256, 80, 2), (256, True): Config(256, 80, 2),
}


def q_layout(D: int) -> ComposedLayout:
    """One consumer's Q (64, D) in shared memory: D / 64 blocks of 64 columns, each a 64 x 64
    box of 128-byte swizzled rows, 4096 elements apart (the A operand, K-major)."""
    return ComposedLayout(SWIZZLE, Layout((64, (ROW, D // ROW)), (ROW, (1, 64 * ROW))))


def k_layout(D: int, BN: int) -> ComposedLayout:
    """A K stage seen as the B operand (D, BN) of S = Q K^T: K-major (D contiguous), one
    (BN, 64) box per 64 columns of D, BN * 64 elements apart."""
    return ComposedLayout(SWIZZLE, Layout(((ROW, D // ROW), BN), ((1, BN * ROW), ROW)))


def v_layout(D: int, BN: int) -> ComposedLayout:
    """A V stage seen as the B operand (BN, D) of O += P V: MN-major (D, the N axis, is
    contiguous), the same boxes as a K stage."""
    return ComposedLayout(SWIZZLE, Layout((BN, (ROW, D // ROW)), (ROW, (1, BN * ROW))))


def kv_box(BN: int) -> TMATile:
    """The TMA box of K and V: BN keys x 64 columns of D."""
    return TMATile(BFloat16, (BN, ROW), 1)


def pv_chunks(D: int, BN: int) -> list[tuple[int, WGMMA64]]:
    """(first key, plan) of each PV product: BN keys in k = 64 groups, the rest in 32 and 16."""
    chunks, k0 = [], 0
    for k in (64, 32, 16):
        while BN - k0 >= k:
            chunks.append((k0, WGMMA64(BFloat16, D, k)))
            k0 += k
    if k0 != BN:
        raise tylo.GeometryError(f"attention: BN = {BN} must be a multiple of 16")
    return chunks


def qk_plan(BN: int) -> WGMMA64:
    """S (64, BN) = Q K^T, one k = 64 group per 64 columns of D."""
    return WGMMA64(BFloat16, BN, ROW)


# The FP8 forward's tiles (Config.fp8; ops/kernels/attention_fp8.py): e4m3 Q and K K-major with
# D contiguous, as bf16's, in swizzle rows of min(D, 128) bytes (128-byte rows of 128 elements,
# 64-byte rows at D 64), and V as V^T (D, keys) K-major with keys contiguous (the 8-bit WGMMA
# has no transposed operands, PTX ISA 9.7.15.5.2): one (D, 128) box per 128 keys.
VT_KEYS = 128  # keys of one V^T box: a 128-byte swizzle row of e4m3


def fp8_row(D: int) -> int:
    """e4m3 elements of one swizzle row of Q and K: min(D, 128)."""
    return min(D, 128)


def _fp8_swizzle(D: int):
    return element_swizzle(fp8_row(D), 1)


def q_tiling(D: int, fp8: bool):
    """(layout, TMA box, row elements) of one consumer's Q (64, D): bf16's `q_layout` and
    `Q_BOX` in rows of 64, or e4m3's in rows of `fp8_row(D)` (a box per row block)."""
    if not fp8:
        return q_layout(D), Q_BOX, ROW
    r = fp8_row(D)
    return (ComposedLayout(_fp8_swizzle(D), Layout((64, (r, D // r)), (r, (1, 64 * r)))),
            TMATile(Float8E4M3, (64, r), 1, r), r)


def k_tiling(D: int, BN: int, fp8: bool):
    """(layout, TMA box, row elements) of a K stage (the B operand (D, BN) of Q K^T): bf16's
    `k_layout` and `kv_box`, or e4m3's in rows of `fp8_row(D)`."""
    if not fp8:
        return k_layout(D, BN), kv_box(BN), ROW
    r = fp8_row(D)
    return (ComposedLayout(_fp8_swizzle(D), Layout(((r, D // r), BN), ((1, BN * r), r))),
            TMATile(Float8E4M3, (BN, r), 1, r), r)


def vt_layout(D: int, BN: int) -> ComposedLayout:
    """A V^T stage seen as the B operand (BN, D) of O += P V: K-major (the keys contiguous),
    BN / 128 boxes of (D, 128 keys), one 128-byte swizzled row per column of D."""
    return ComposedLayout(element_swizzle(VT_KEYS, 1),
                          Layout(((VT_KEYS, BN // VT_KEYS), D), ((1, VT_KEYS * D), VT_KEYS)))


def vt_box(D: int) -> TMATile:
    """The TMA box of V^T ((B Hkv, D, keys) viewed): D rows of 128 keys."""
    return TMATile(Float8E4M3, (D, VT_KEYS), 1)


def fp8_qk_plan(D: int, BN: int) -> WGMMA64:
    """S (64, BN) = Q K^T of e4m3: one group of k = `fp8_row(D)` per row block of D."""
    return WGMMA64(Float8E4M3, BN, fp8_row(D))


def fp8_pv_plan(D: int) -> WGMMA64:
    """O (64, D) += P V of e4m3, one group per 128 keys (P: `tylo.accumulator_as_a`)."""
    return WGMMA64(Float8E4M3, D, VT_KEYS)


def plans(cfg: Config) -> tuple[WGMMA64, WGMMA64]:
    """(S's plan, O's plan: the first PV chunk's) of a config."""
    if cfg.fp8:
        return fp8_qk_plan(cfg.D, cfg.BN), fp8_pv_plan(cfg.D)
    return qk_plan(cfg.BN), pv_chunks(cfg.D, cfg.BN)[0][1]


#: The packed layouts' tiles where they differ: three consumers at D 64 spill there (168
#: bytes, ptxas 13.0: the sequence geometry adds live registers to a 160-register consumer).
PACKED_CONFIGS = {(64, False): Config(64, 128, 4), (64, True): Config(64, 128, 4)}

#: A sliding window's tiles where they differ: at D 64 three consumers spill 200 bytes (ptxas
#: 13.0: the band's extents stay live through the key loops), two do not.
WINDOW_CONFIGS = {64: Config(64, 128, 4)}


#: The FP8 forward's tiles (ops/kernels/attention_fp8.py), D -> Config: BN 128 (one V^T box;
#: FlashAttention-3's e4m3 tiles are 192 x 160 at D 64 and 128 x 224 at D 128; BN 256 spills at
#: D 128, ptxas 13.0), BlockM 192 (three consumers, 160 registers, no spills in either layout)
#: at D 64 and 128 at D 128, P packed to e4m3 right after its softmax (`carry_bf16`: 16 words a
#: thread carried to the next tile's P V instead of 64 floats). Not yet timed on a GPU:
#: bench/attention_fp8.py --ablation times the alternatives.
FP8_CONFIGS = {64: Config(64, 128, 4, W=3, carry_bf16=True, fp8=True),
               128: Config(128, 128, 2, carry_bf16=True, fp8=True)}


def config(D: int, causal: bool, packed: bool = False, window: bool = False,
           lpt: bool = False, fp8: bool = False) -> Config:
    """The tile choice for head dim D (64, 128, 256) in the (B, H, S, D) layout, or (`packed`)
    in the packed ones, or (`window`) with a sliding window, the grid in `lpt` order or not
    (`grid`); with `fp8` the FP8 forward's (D 64 or 128; `FP8_CONFIGS`). ArgumentError for
    another D."""
    key = (D, bool(causal))
    try:
        if fp8:
            cfg = FP8_CONFIGS[D]
        else:
            cfg = ((WINDOW_CONFIGS.get(D) if window else None)
                   or (PACKED_CONFIGS.get(key) if packed else None) or CONFIGS[key])
    except KeyError:
        served = ", ".join(map(str, FP8_CONFIGS)) if fp8 else "64, 128, 256"
        raise tylo.ArgumentError("D", f"head dim {D} is not one of {served}"
                                      f"{' (FP8)' if fp8 else ''}") from None
    return replace(cfg, lpt=True) if lpt else cfg


def lpt_default(causal: bool) -> bool:
    """Whether the forward's grid is in `lpt` order when the caller does not say (`grid`): not
    yet, causal or not, until an H100 has timed both orders at the benchmark's shapes
    (bench/hopper_attention.py --shapes --lpt both). The backward's is when causal
    (attention_backward.lpt_default)."""
    return False


def grid(blocks: int, heads: int, lpt: bool, chunk: int = 0, group: int = 1) -> tuple[int, ...]:
    """The grid of `blocks` blocks for each of `heads` heads: the forward's query blocks of B Hq
    (batch, query head) pairs (`attention.cta_block`), the backward's key blocks of B Hkv
    (`attention_backward_tiles.cta_geometry`). (blocks, heads), heads slowest; or with `lpt`
    (c, blocks, heads / c), chunks of c heads, blocks slower than heads within a chunk (block 0
    of every head of the chunk first: causal, the longest CTAs), c the largest multiple of
    `group` (heads that share what the chunk's L2 budget counts, a GQA group's K and V) that
    divides `heads` and is at most `chunk` (0: every head in one chunk), and at least
    `group`."""
    if not lpt:
        return blocks, heads
    most = max(chunk or heads, group)
    c = max(d for d in range(group, heads + 1, group) if heads % d == 0 and d <= most)
    return c, blocks, heads // c


#: The L2 bytes (of an H100's 50 MB) that the K and V rows of one `lpt` chunk of the forward may
#: fill: every CTA of a head reads its head's K and V (causal: up to its diagonal), so a chunk
#: whose K and V stay in L2 reads them from memory about once. Half of L2: it is two 25 MB
#: partitions, and a line that SMs on both sides read (a head's CTAs run on every SM) may be
#: held in both; Q and O pass through once each. The backward's budget for its Q and dO is this
#: one (attention_backward_tiles.LPT_L2_BYTES).
LPT_L2_BYTES = 24 << 20


def lpt_heads(group: int, seq_k: int, D: int) -> int:
    """Query heads per `lpt` chunk of the forward (`grid`'s `chunk`): `group` (Hq / Hkv) times
    as many key/value heads as keep their K and V rows (2 seq_k D bf16 each) within
    `LPT_L2_BYTES`, at least one."""
    return group * max(1, LPT_L2_BYTES // max(1, seq_k * D * 2 * 2))
