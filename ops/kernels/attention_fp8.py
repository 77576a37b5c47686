"""The FP8 (e4m3) attention forward on Hopper: O = softmax(scale dq dk Q K^T) (dv V) with e4m3 Q,
K, V and float32 descale factors (FlashAttention-3's descale_q, descale_k, descale_v: (B, Hkv),
per KV head, or any tensor expanded to that shape: per tensor), f32 softmax, bf16 O and
float32 lse (of the dequantized logits).

The kernel is attention.py's with `Config.fp8` (`attention_tiles.FP8_CONFIGS`: D 64 and 128,
BN 128, two consumer warpgroups), FlashAttention-3's arrangement (arXiv 2407.08608 section 3.3):

* S = Q K^T by m64nNk32 e4m3 WGMMA from shared memory, Q and K K-major as bf16's (D
  contiguous; swizzle rows of min(D, 128) bytes), twice bf16's rate;
* P V: 8-bit WGMMA operands must be K-major (PTX ISA 9.7.15.5.2: no imm-trans for .e4m3), so V
  is read as V^T (B, Hkv, D, keys), the keys contiguous: `transpose_v` makes that copy before
  the kernel (`v_transposed`, a Tylo kernel: 2 bytes of traffic a V element; counted in
  bench/attention_fp8.py's times); FlashAttention-3 transposes in the producer instead
  (LDSM/STSM), which is not done here yet;
* P reaches the PV WGMMA as its register A with no lane exchange: the f32 accumulator of S and
  the e4m3 A fragment give a thread different keys of each 32-key slice (accumulator columns
  2t, 2t + 1, 8 + 2t, ...; A columns 4t .. 4t + 3, 16 + 4t ..), so the A operand takes each
  thread's keys in another order (`tylo.accumulator_as_a`: column a of A is P's column
  columns[a], `WGMMA64.accumulator_as_a`, derived from the two ownerships) and `transpose_v`
  stores V^T's key tile with the same order: row a of the 128-key tile is key columns[a], so the
  product contracts the same pairs. Each thread's 64 weights become 16 words by 32
  cvt.rn.satfinite.e4m3x2.f32 and 16 mov.b32, right after its softmax (P carried packed);
* scales: scale dq[b, hk] dk[b, hk] is the softmax's runtime scale (one multiplication per CTA,
  folded into the exponent's FMA as FlashAttention-3's softmax_scale_log2), dv[b, hk] multiplies
  O once in the epilogue;
* P's rounding: the weights are computed 256 times larger (`tylo.SoftmaxState`'s weight_scale,
  FlashAttention-3's Max_offset 8: P in [0, 256], folded into the exponent's per-row offset: no
  instruction more), so that e4m3's 3 fraction bits and its smallest subnormal 2^-9 flush only
  weights below 2^-17 of a row's largest instead of 2^-10; the total carries the same factor,
  so O / total is unchanged and lse subtracts log 256. Measured (numpy model of the kernel's
  arithmetic, float64 reference of the dequantized inputs, B 1 S 4096 D 128): random inputs,
  both give 1.7-2.5% RMS relative error of O (P's e4m3 rounding itself); a row with one
  dominant key and a long tail of small weights (an attention sink: tail mass 1-2x the sink's)
  0.08% with the offset and 1.7% without (0.01% vs 0.35% with tail mass 0.2x).

O is written bf16: "bhsd" through a shared tile of its own (the e4m3 Q tile is half O's size)
and a TMA store, "bshd" by masked stores from registers. Not served (the op refuses them):
varlen sequences, a paged KV cache, a sliding window, a softcap, D 256, the backward.
"""

from __future__ import annotations

import functools
import math

import tylo

from . import attention_host as host
from .attention import attention
from .attention_tiles import VT_KEYS, fp8_pv_plan

#: The head dims the FP8 forward serves.
HEAD_DIMS = (64, 128)


@functools.lru_cache(maxsize=None)
def key_order(D: int) -> tuple[int, ...]:
    """Position a of a 128-key tile of V^T holds the tile's key key_order(D)[a]: the columns
    `tylo.accumulator_as_a` gives the PV plan's register A (`WGMMA64.accumulator_as_a`)."""
    return fp8_pv_plan(D).accumulator_as_a()[0]


@functools.lru_cache(maxsize=None)
def key_bits(D: int) -> tuple[int, ...] | None:
    """The key order as a permutation of the 7 bits of a position in a 128-key tile: bit i of
    the position is bit key_bits(D)[i] of the key (so a layout of shape (2, ..., 2) with strides
    2^key_bits(D)[i] reads a tile's keys in that order: `v_transposed`), or None when the order
    is no such permutation."""
    order = key_order(D)
    bits = []
    for i in range(7):
        source = order[1 << i]
        if source & (source - 1) or not source:
            return None
        bits.append(source.bit_length() - 1)
    for a in range(VT_KEYS):
        if order[a] != sum(1 << bits[i] for i in range(7) if a >> i & 1):
            return None
    return tuple(bits)


def padded_keys(seq_k: int) -> int:
    """V^T's key extent: seq_k rounded up to whole 128-key tiles."""
    return -(-seq_k // VT_KEYS) * VT_KEYS


@functools.lru_cache(maxsize=None)
def tile_rows(D: int) -> tylo.Ownership:
    """A key tile as `v_transposed` copies it, (128 positions, D) logical: thread 32 c + q holds
    positions 4 q .. 4 q + 3 of columns [c D / 4, (c + 1) D / 4), so that each of its loads reads
    16 contiguous bytes of a key's row and each store writes 4 consecutive positions of a row of
    V^T (a warp: 128 contiguous bytes)."""
    return tylo.Ownership((VT_KEYS, D), tylo.Layout(((32, 4), (4, D // 4)),
                                                    ((4, VT_KEYS * D // 4), (1, VT_KEYS))))


@tylo.kernel
def v_transposed(vt, v, seq_k, heads: tylo.constexpr, D: tylo.constexpr,
                 bits: tylo.constexpr):
    """V^T (`transpose_v`): vt uint8 (B, Hkv, D, Sk_pad) contiguous from v uint8 (B, Hkv, Sk,
    D) logical (the e4m3 bytes, any strides with rows of D contiguous bytes 16 bytes apart, a
    16-byte aligned start). One CTA of 128 threads per key tile j and (b, h) (grid (Sk_pad /
    128, B Hkv)): position 128 j + a of vt takes key 128 j + sum_i bit i of a << bits[i]
    (`key_bits`); a whole tile through a bit-permuted layout of its keys, each thread's share
    (`tile_rows`) read as 16-byte vectors and written 4 bytes at a time; the last, partial tile
    byte by byte (thread t: position t), zeros past seq_k."""
    t = tylo.thread_idx()
    j = tylo.block_idx(0)
    bh = tylo.block_idx(1)
    b = bh // heads
    h = bh - b * heads
    key0 = j * VT_KEYS
    pitch = vt.stride[2]
    out = tylo.GlobalTile(vt.ptr + bh * D * pitch + key0, tylo.Layout((VT_KEYS, D), (1, pitch)),
                          align=4)
    base = v.ptr + b * v.stride[0] + h * v.stride[1] + key0 * v.stride[2]
    if key0 + VT_KEYS <= seq_k:
        rows = tylo.GlobalTile(base, tylo.Layout(((2,) * 7, D), (tuple(
            v.stride[2] * (1 << bits[i]) for i in range(7)), 1)), align=16)
        tylo.store(out, tylo.load_fragment(tile_rows(D), rows, t), t)
    else:
        key = key0
        for i in tylo.static_range(7):
            key = key + (((t >> i) & 1) << bits[i])
        inside = key < seq_k
        row = tylo.minimum(key, seq_k - 1)
        for d in tylo.static_range(D):
            x = v[b, h, row, d]
            out[t, d] = tylo.select(inside, x, x - x)


def transpose_v(V, layout: str = "bhsd"):
    """V^T for the FP8 kernel: V (B, Hkv, Sk, D) ("bhsd") or (B, Sk, Hkv, D) ("bshd"), e4m3
    (a torch tensor, or a numpy array of ml_dtypes.float8_e4m3fn), as a new contiguous (B, Hkv,
    D, padded_keys(Sk)) e4m3 array whose 128-key tile j holds at position a key 128 j +
    key_order(D)[a], and zeros past Sk (finite: the kernel's P is 0 there). torch: the
    `v_transposed` kernel (`transpose_launch`; CPU tensors on the emulator); numpy: one gather
    (the reference the kernel is tested against)."""
    if not hasattr(V, "data_ptr"):
        import numpy as np

        Vb = V if layout == "bhsd" else V.transpose(0, 2, 1, 3)
        B, H, Sk, D = Vb.shape
        n = padded_keys(Sk)
        full = np.zeros((B, H, n, D), Vb.dtype)
        full[:, :, :Sk] = Vb
        order = np.array(key_order(D))
        keys = (np.arange(n) // VT_KEYS) * VT_KEYS + order[np.arange(n) % VT_KEYS]
        return np.ascontiguousarray(full[:, :, keys].transpose(0, 1, 3, 2))
    vt, grid, args = transpose_launch(V, layout)
    if grid[0]:
        (v_transposed if V.is_cuda else v_transposed.emulate)[grid, VT_KEYS](*args)
    return vt


def transpose_launch(V, layout: str):
    """(vt, grid, args) of `v_transposed` for torch V (`transpose_v`): vt the new e4m3 V^T,
    uninitialized until the launch `v_transposed[grid, 128](*args)`. A V whose rows are not 16
    bytes apart or whose data is not 16-byte aligned is copied contiguous first."""
    import torch

    Vb = V if layout == "bhsd" else V.transpose(1, 2)
    B, H, Sk, D = Vb.shape
    if V.stride(-1) != 1 or any(s % 16 for s in Vb.stride()[:3]) or V.data_ptr() % 16:
        Vb = Vb.clone(memory_format=torch.contiguous_format)  # (a new, aligned allocation)
    bits = key_bits(D)
    if bits is None:
        raise tylo.PlanError(f"FP8 attention: the key order of D {D} is no permutation of a "
                             "key's bits")
    vt = torch.empty((B, H, D, padded_keys(Sk)), dtype=torch.uint8, device=V.device)
    grid = (padded_keys(Sk) // VT_KEYS, B * H)
    return (vt.view(torch.float8_e4m3fn), grid,
            (vt, Vb.view(torch.uint8), Sk, H, D, bits))


def descale_factors(q_descale, k_descale, v_descale, B: int, Hkv: int, like):
    """The three descales as float32 (B, Hkv) arrays (torch views: a one-element tensor
    expanded, per tensor), None as 1.0. Each: None, a one-element array (0-d, (1,), (1, 1)) or
    (B, Hkv) (FlashAttention-3's descale_q/k/v), float32, torch (on `like`'s device) or numpy
    as `like`. ArgumentError naming the argument for another shape, dtype or device."""
    out = []
    for name, d in (("q_descale", q_descale), ("k_descale", k_descale), ("v_descale", v_descale)):
        if d is None:
            d = _ones(like)
        if str(d.dtype) not in ("torch.float32", "float32"):
            raise tylo.ArgumentError(name, f"is {d.dtype}; descale factors are float32")
        if hasattr(like, "data_ptr") and (not hasattr(d, "data_ptr") or d.device != like.device):
            where = getattr(d, "device", type(d).__name__)
            raise tylo.ArgumentError(name, f"is on {where}, q on {like.device}: descale "
                                           "factors are torch tensors on q's device")
        shape = tuple(d.shape)
        if math.prod(shape) == 1 and len(shape) <= 2:
            d = d.reshape(1, 1)
            d = d.expand(B, Hkv) if hasattr(d, "expand") else d.repeat(B, 0).repeat(Hkv, 1)
        elif shape != (B, Hkv):
            raise tylo.ArgumentError(name, f"has shape {shape}: descale factors are one float32 "
                                           f"(per tensor) or (B, Hkv) = ({B}, {Hkv}) (per KV "
                                           "head, FlashAttention-3's)")
        out.append(d)
    return tuple(out)


def descales(q_descale, k_descale, v_descale, B: int, Hkv: int, like):
    """The kernel's `descale` argument: float32 (3, N), rows Q's, K's and V's factors
    (`descale_factors`), column b Hkv + hk, N = B Hkv rounded up to a multiple of 4 (at least
    4: one compiled variant for every B Hkv, rows 16-byte aligned). One stack and one copy."""
    factors = descale_factors(q_descale, k_descale, v_descale, B, Hkv, like)
    n = max(4, -(-B * Hkv // 4) * 4)
    if hasattr(like, "data_ptr"):
        import torch

        out = torch.ones((3, n), dtype=torch.float32, device=like.device)
        out[:, :B * Hkv] = torch.stack(factors).reshape(3, B * Hkv)
        return out
    import numpy as np

    out = np.ones((3, n), np.float32)
    out[:, :B * Hkv] = np.stack(factors).reshape(3, B * Hkv)
    return out


def _ones(like):
    if hasattr(like, "data_ptr"):
        import torch

        return torch.ones((), dtype=torch.float32, device=like.device)
    import numpy as np

    return np.ones((), np.float32)


def dequantized(Q, K, V, dq, dk, dv, layout: str = "bhsd"):
    """(Q, K, V) as float64 numpy arrays (B, H, S, D) (numpy inputs) or float32 torch tensors,
    each head times its descale (query head h: its KV head's, h // (Hq / Hkv))."""
    if layout == "bshd":
        Q, K, V = (x.transpose(1, 2) if hasattr(x, "data_ptr") else x.transpose(0, 2, 1, 3)
                   for x in (Q, K, V))
    group = Q.shape[1] // K.shape[1]
    if hasattr(Q, "data_ptr"):
        def wide(x, d):
            return x.float() * d.float().repeat_interleave(group if x is Q else 1, 1)[..., None,
                                                                                      None]
    else:
        import numpy as np

        def wide(x, d):
            d = np.repeat(np.asarray(d, np.float64), group if x is Q else 1, 1)
            return x.astype(np.float64) * d[..., None, None]
    return wide(Q, dq), wide(K, dk), wide(V, dv)


def reference(Q, K, V, dq, dk, dv, causal: bool, scale: float | None = None,
              layout: str = "bhsd"):
    """O and lse (B, Hq, Sq, D), (B, Hq, Sq) of the dequantized inputs (`dequantized`): float64
    for numpy arrays, float32 for torch tensors (`attention_host.reference`, FlashAttention's
    bottom-right causal alignment), the softmax scale `scale` (default 1 / sqrt(D))."""
    q, k, v = dequantized(Q, K, V, dq, dk, dv, layout)
    D = Q.shape[-1]
    if scale is not None:
        q = q * (scale * math.sqrt(D))
    return host.reference(q, k, v, causal)


def run(Q, K, V, O, lse, causal: bool, q_descale=None, k_descale=None, v_descale=None,
        layout: str = "bhsd", scale: float | None = None, emulate: bool = False,
        lpt: bool | None = None):
    """O (bf16), lse (float32) = the FP8 forward of e4m3 Q, K, V in `layout` ("bhsd": Q, O (B,
    Hq, S, D), K, V (B, Hkv, Sk, D); "bshd": (B, S, H, D)), lse (B, Hq, S): `transpose_v`, then
    the kernel (`attention_host.Attention` with descale). `emulate`: the CPU emulator (numpy
    arrays or torch CPU tensors). Returns the runner (keep it alive while the kernel may run)."""
    B = Q.shape[0]
    Hkv = K.shape[1] if layout == "bhsd" else K.shape[2]
    vt = transpose_v(V, layout)
    d = descales(q_descale, k_descale, v_descale, B, Hkv, Q)
    runner = host.Attention(Q, K, vt, O, lse, causal, emulate=emulate, layout=layout,
                            scale=scale, descale=d, lpt=lpt)
    runner.descale = d
    runner()
    runner.vt = vt
    return runner


def host_arrays(B: int, Hq: int, Hkv: int, S: int, D: int, rng=None, layout: str = "bhsd",
                Sk: int | None = None, std: float = 4.0):
    """(Q, K, V, O, lse) numpy arrays: e4m3 Q, K, V (standard normal times `std`, rounded; zeros
    without `rng`), O bf16 and lse float32 poisoned with NaN; K, V with Sk keys (default S)."""
    import ml_dtypes
    import numpy as np

    Sk = S if Sk is None else Sk

    def shape(h, s):
        return (B, h, s, D) if layout == "bhsd" else (B, s, h, D)

    def e4m3(sh):
        x = np.zeros(sh, np.float32) if rng is None else rng.standard_normal(sh) * std
        return x.astype(np.float32).astype(ml_dtypes.float8_e4m3fn)

    O = np.full(shape(Hq, S), np.nan, ml_dtypes.bfloat16)
    return (e4m3(shape(Hq, S)), e4m3(shape(Hkv, Sk)), e4m3(shape(Hkv, Sk)), O,
            np.full((B, Hq, S), np.nan, np.float32))


def compile_for_sm90a(D: int = 128, causal: bool = False, layout: str = "bhsd"):
    """The FP8 kernel compiled for sm_90a from host bindings (no GPU needed)."""
    Q, K, V, O, lse = host_arrays(1, 1, 1, 256, D, layout=layout)
    d = descales(None, None, None, 1, 1, Q)
    run_ = host.Attention(Q, K, transpose_v(V, layout), O, lse, causal, emulate=True,
                          layout=layout, descale=d)
    return attention.compile(*run_.maps, *run_.args, block=run_.block, arch="sm_90a")


def precompile(D: int, causal: bool, heads: int = 1, kv_heads: int = 1, layout: str = "bhsd",
               kv_layout: str | None = None, scale: float | None = None, arch: str = "sm_90a",
               emulator: bool = False):
    """Compile the FP8 variant `tylo.ops.attention` launches for these choices (head dim D,
    causal, Hq and Hkv, the memory orders of Q and of K (V^T is always (B, Hkv, D, keys)), the
    softmax scale) into the disk cache, for `arch` and (`emulator`) for the CPU emulator.
    Returns the `CompiledKernel`."""
    S = 128
    kv_layout = kv_layout or layout
    Q, _, _, O, lse = host_arrays(1, heads, kv_heads, S, D, layout=layout)
    _, K, V, _, _ = host_arrays(1, heads, kv_heads, S, D, layout=kv_layout)
    d = descales(None, None, None, 1, kv_heads, Q)
    run_ = host.Attention(Q, K, transpose_v(V, kv_layout), O, lse, causal, emulate=True,
                          layout=layout, kv_layout=kv_layout, scale=scale, descale=d)
    return attention.precompile(*run_.maps, *run_.args, block=run_.block, arch=arch,
                                emulator=emulator)
