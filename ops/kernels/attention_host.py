"""The host side of Hopper attention's forward (the kernel: ops/kernels/attention.py): the TMA
bindings of Q, K, V, O (torch CUDA tensors, or numpy arrays for the emulator) in the three
layouts, the runner `Attention` (bindings made once, then launches), the sliding window's and
the softcap's arguments (`band`, `check_softcap`), compiling without a GPU (`precompile` into
the disk cache, `compile_for_sm90a`), and the `reference` the tests compare to.
"""

from __future__ import annotations

import functools
import math
import struct
from dataclasses import replace

import tylo

from .attention import attention
from .attention_tiles import (Q_BOX, Config, config, grid, k_tiling, kv_box, lpt_default,
                              lpt_heads, q_tiling, vt_box)


#: The (B, H, S, D) shapes its benchmarks time (bench/hopper_attention.py, bench/attention_layouts.py).
BENCH_SHAPES = [(4, 16, 4096, 128), (4, 16, 4096, 64), (16, 16, 1024, 128), (1, 16, 16384, 128),
                (16, 16, 1024, 64), (1, 16, 16384, 64)]


def _view(x, shape):
    """`x` (torch or numpy) seen with `shape`, never a copy (ArgumentError when the strides do
    not allow it)."""
    if hasattr(x, "data_ptr"):
        try:
            return x.view(shape)
        except RuntimeError:
            pass
    else:
        v = x.view()
        try:
            v.shape = shape
            return v
        except AttributeError:
            pass
    raise tylo.ArgumentError("q/k/v/out", f"an array of shape {tuple(x.shape)} and strides "
                                          f"{tuple(x.strides if not hasattr(x, 'stride') else x.stride())} "
                                          f"cannot be seen as {shape} without a copy")


def _heads_first(x):
    """(rows, H, D) seen as (H, rows, D) (a permuted view: strides (D, H D, 1))."""
    return x.permute(1, 0, 2) if hasattr(x, "permute") else x.transpose(1, 0, 2)


#: kv_box made once per tile width for the host's bindings (an op call binds K and V; the kernel
#: itself calls kv_box, whose source is its disk-cache token).
_host_kv_box = functools.lru_cache(maxsize=None)(kv_box)


def bindings(Q, K, V, O, seq_q: int, seq_k: int, cfg: Config, layout: str = "bhsd",
             kv_layout: str | None = None):
    """The TMA bindings of Q, K, V (and O in the "bhsd" layout; in the packed layouts O is
    written by the kernel's masked stores and this returns O seen (rows, Hq D)); torch CUDA
    tensors, or numpy for the emulator. Keep them alive while the kernel may run: they own the
    descriptors.
    "bhsd": Q, O (B, Hq, S, D), K, V (B, Hkv, Sk, D): views (B H, S, D) bounded at seq_q / seq_k
    rows of each (batch, head) matrix. "bshd": (B, S, H, D), and "varlen": (rows, H, D): views
    (H, rows, D) over all rows (the kernel bounds each sequence itself). `kv_layout` (default
    `layout`): K's and V's, "bhsd" or "bshd", when it differs from Q's, or "paged": K, V
    (num_pages, page_size, Hkv, D) caches seen (Hkv, num_pages page_size, D), in boxes of
    gcd(BN, page_size) keys (the kernel's `load_kv_paged`).
    cfg.fp8: Q, K e4m3 in the e4m3 boxes (`q_tiling`, `k_tiling`), V is V^T (B, Hkv, D,
    Sk_pad) e4m3 (attention_fp8.transpose_v) seen (B Hkv, D, Sk_pad) in `vt_box`es, O bf16."""
    D = Q.shape[-1]
    kv_layout = kv_layout or layout

    def rows(plan, X, order, seq):
        if order == "bhsd":
            B, H, S, _ = X.shape
            return tylo.prepare_tma(plan, _view(X, (B * H, S, D)), (seq, D, B * H))
        if order == "bshd":
            X = _view(X, (X.shape[0] * X.shape[1], X.shape[2], D))
        return tylo.prepare_tma(plan, _heads_first(X))

    if cfg.fp8:
        B, H = V.shape[:2]
        maps = (rows(q_tiling(D, True)[1], Q, layout, seq_q),
                rows(k_tiling(D, cfg.BN, True)[1], K, kv_layout, seq_k),
                tylo.prepare_tma(vt_box(D), _view(V, (B * H, D, V.shape[3]))))
    else:
        if kv_layout == "paged":  # (num_pages, page_size, Hkv, D) caches: (Hkv, rows, D) views
            box = _host_kv_box(math.gcd(cfg.BN, K.shape[1]))
            K, V = (_view(X, (X.shape[0] * X.shape[1], X.shape[2], D)) for X in (K, V))
            kv_layout = "varlen"
        else:
            box = _host_kv_box(cfg.BN)
        maps = (rows(Q_BOX, Q, layout, seq_q), rows(box, K, kv_layout, seq_k),
                rows(box, V, kv_layout, seq_k))
    if layout == "bhsd":
        return maps + (rows(Q_BOX, O, layout, seq_q),)
    if layout == "bshd":
        O = _view(O, (O.shape[0] * O.shape[1], O.shape[2], D))
    return maps + (_view(O, (O.shape[0], O.shape[1] * D)),)


def _same_in_float32(a: float, b: float) -> bool:
    """Whether two scales round to one float32 (the softmax's precision): transformers' head_dim
    ** -0.5 and 1 / sqrt(head_dim) differ in their last float64 bit, and must not be two
    variants of the kernel."""
    return struct.pack("<f", a) == struct.pack("<f", b)


def band(window, causal: bool, unbounded: int) -> tuple[bool, tuple[int, int] | None]:
    """(causal, (left, right) or None): the kernel's form of FlashAttention's `window` (left,
    right), each an int >= 0 or -1 (unbounded), beside `causal` (which makes right 0). A window
    that bounds nothing is none, (-1, 0) is causal; otherwise causal becomes False and an
    unbounded side `unbounded` (at least every sequence's length, so that it bounds nothing).
    ArgumentError naming `window` for anything but two such ints."""
    if window is None:
        return bool(causal), None
    try:
        left, right = window
    except (TypeError, ValueError):
        raise tylo.ArgumentError("window", f"{window!r}: a sliding window is (left, right), two "
                                           "ints (-1: unbounded)") from None
    for side, n in (("left", left), ("right", right)):
        if isinstance(n, bool) or not isinstance(n, int) or n < -1:
            raise tylo.ArgumentError("window", f"{window!r}: its {side} extent {n!r} must be an "
                                               "int >= 0, or -1 (unbounded)")
    if causal:
        right = 0
    if left < 0 and right <= 0:
        return right == 0, None
    return False, (unbounded if left < 0 else left, unbounded if right < 0 else right)


def check_softcap(softcap) -> float:
    """`softcap` as a float, ArgumentError naming it unless it is a finite number > 0."""
    if isinstance(softcap, bool) or not isinstance(softcap, (int, float)) \
            or not math.isfinite(softcap) or softcap <= 0:
        raise tylo.ArgumentError("softcap", f"{softcap!r}: the logit cap must be a finite number "
                                            "> 0 (None: no cap)")
    return float(softcap)


class Attention:
    """O, lse = attention(Q, K, V) for one set of arrays: the bindings, made once, and the
    launch. `emulate=True` runs on the CPU emulator (numpy arrays). Layouts (`bindings`):
    "bhsd": Q, O (B, Hq, S, D), K, V (B, Hkv, Sk, D) bf16, lse (B, Hq, S) f32, over the first
    `seq` rows of Q (default S; also of K when Sk == S, else all Sk);
    "bshd": Q, O (B, S, Hq, D), K, V (B, Sk, Hkv, D), lse (B, Hq, S);
    "varlen": Q, O (rows_q, Hq, D), K, V (rows_k, Hkv, D), lse (Hq, rows_q), with cu_seqlens_q /
    cu_seqlens_k (int32, B + 1 row offsets) and max_seqlen_q (the grid's extent);
    `kv_layout` ("bhsd" or "bshd", default `layout`): K's and V's, when they lie otherwise than Q.
    Hq must be a multiple of Hkv (grouped-query attention; Hkv = 1: multi-query). `scale`: the
    softmax's scale (default 1 / sqrt(D); another value, unless equal to it in float32, compiles
    another variant). `window` (left, right): FlashAttention's sliding window (`band`; -1 is
    unbounded; causal makes right 0); one compiled variant serves every window. `softcap`
    (> 0): the logits are softcap tanh(scale q k / softcap) (FlashAttention's; each cap
    compiles a variant). `lpt`: the grid in chunks of heads whose K and V fit in L2, each
    chunk's query blocks slowest, causal the longest first (`attention_tiles.grid`,
    `lpt_heads`; another variant; None: `attention_tiles.lpt_default`, and a given `cfg`'s own
    order); every layout and window takes it.
    A paged KV cache (vLLM's layout; `block_table` and `seqused_k` given, `layout` "bshd" or
    "varlen", `kv_layout` ignored): K, V (num_pages, page_size, Hkv, D), page_size a multiple
    of 16 (a compile-time constant: one variant per page size), block_table (B, max_pages)
    int32 page ids of each sequence's keys in order, seqused_k (B,) int32 its key count (read
    on the device); causal aligns sequence b's n_q queries to its last keys (bottom right).
    The FP8 forward (`descale`: float32 (3, N) rows of Q's, K's and V's descale factors, column
    b Hkv + hk, `attention_fp8.descales`): Q, K e4m3 as above ("bhsd" or "bshd"), V given as V^T
    (B, Hkv, D, Sk_pad) e4m3 (`attention_fp8.transpose_v`), O bf16; no window, softcap or paged
    cache."""

    def __init__(self, Q, K, V, O, lse, causal: bool, seq: int | None = None,
                 cfg: Config | None = None, emulate: bool = False, layout: str = "bhsd",
                 cu_seqlens_q=None, cu_seqlens_k=None, max_seqlen_q: int | None = None,
                 scale: float | None = None, kv_layout: str | None = None, window=None,
                 softcap: float | None = None, lpt: bool | None = None, block_table=None,
                 seqused_k=None, descale=None):
        D = Q.shape[-1]
        paged = block_table is not None
        fp8 = descale is not None
        if fp8 and (paged or window is not None or softcap is not None or layout == "varlen"):
            raise tylo.ArgumentError("descale", "the FP8 forward takes no paged cache, window, "
                                                "softcap or packed varlen sequences")
        kv_layout = "paged" if paged else kv_layout or layout
        if paged and (layout not in ("bshd", "varlen") or seqused_k is None):
            raise tylo.ArgumentError("block_table", "a paged cache takes Q in the 'bshd' or "
                                                    "'varlen' layout and seqused_k")
        if not paged and kv_layout != layout and "varlen" in (layout, kv_layout):
            raise tylo.ArgumentError("kv_layout", f"{kv_layout!r} beside {layout!r}: packed "
                                                  "sequences take packed K and V")
        causal, window = band(window, causal, max(Q.shape[-3], K.shape[-3], Q.shape[-2],
                                                  K.shape[-2], Q.shape[0], K.shape[0],
                                                  K.shape[0] * K.shape[1] if paged else 0))
        self.cfg = cfg or config(D, causal or window is not None,
                                 layout != "bhsd" or kv_layout != "bhsd", window is not None,
                                 lpt_default(causal) if lpt is None else lpt, fp8)
        if lpt is not None and bool(lpt) != self.cfg.lpt:
            self.cfg = replace(self.cfg, lpt=bool(lpt))
        if scale is not None and not _same_in_float32(scale, self.cfg.softmax_scale):
            self.cfg = replace(self.cfg, scale=float(scale))
        if softcap is not None:
            self.cfg = replace(self.cfg, softcap=check_softcap(softcap))
        self.causal = bool(causal)
        if layout in ("bhsd", "bshd"):
            B, Hq, S = (Q.shape[0], Q.shape[1], Q.shape[2]) if layout == "bhsd" else \
                (Q.shape[0], Q.shape[2], Q.shape[1])
            Hkv, Sk = (K.shape[1], K.shape[2]) if kv_layout == "bhsd" else (K.shape[2], K.shape[1])
            if fp8 and (tuple(V.shape[:3]) != (B, Hkv, D) or V.shape[3] < Sk):
                raise tylo.ArgumentError("v", f"the FP8 forward takes V^T (B, Hkv, D, Sk_pad) = "
                                              f"({B}, {Hkv}, {D}, >= {Sk}), got {tuple(V.shape)}")
            if paged:
                Hkv, Sk = K.shape[2], 0
            seq_q = S if seq is None else seq
            seq_k = seq_q if Sk == S else Sk
            lse = _view(lse, (B * Hq, S))
        elif layout == "varlen":
            B, Hq, Hkv = len(cu_seqlens_q) - 1, Q.shape[1], K.shape[2 if paged else 1]
            seq_q = seq_k = 0
        else:
            raise tylo.ArgumentError("layout", f"{layout!r} is not 'bhsd', 'bshd' or 'varlen'")
        if Hq % Hkv:
            raise tylo.ArgumentError("k", f"{Hkv} key/value heads do not divide {Hq} query heads")
        self.maps = bindings(Q, K, V, O, seq_q, seq_k, self.cfg, layout, kv_layout)
        self.args = (lse, seq_q, seq_k, cu_seqlens_q, cu_seqlens_k, Hq, Hkv, self.cfg,
                     self.causal, layout != "bhsd", kv_layout != "bhsd",
                     *(window or (None, None)))
        if paged:
            self.args += (block_table, seqused_k, K.shape[1])
        if fp8:
            self.args += (None, None, None, descale)
        rows = max_seqlen_q if layout == "varlen" else seq_q
        chunk = 0
        if self.cfg.lpt:  # K/V heads per chunk by a sequence's keys (varlen: on average)
            keys = -(-K.shape[0] // max(B, 1)) if layout == "varlen" else seq_k
            if paged:
                keys = -(-K.shape[0] * K.shape[1] // max(B, 1))
            chunk = lpt_heads(Hq // Hkv, keys, D)
        self.grid = grid(-(-rows // self.cfg.BM), B * Hq, self.cfg.lpt, chunk, Hq // Hkv)
        self.block = 128 * (self.cfg.W + 1)
        kernel = attention.emulate if emulate else attention
        self.launch = kernel[self.grid, self.block]

    def __call__(self):
        self.launch(*self.maps, *self.args)


def host_bindings(cfg: Config, S: int = 256):
    """Bindings of host arrays (numpy; never given to the driver) of the kernel's argument
    kinds, and the lse array: what compiling without a GPU needs."""
    import ml_dtypes
    import numpy as np

    Q = np.zeros((1, 1, S, cfg.D), ml_dtypes.bfloat16)
    return bindings(Q, Q, Q, Q, S, S, cfg) + (np.zeros((1, S), np.float32),)


def compile_for_sm90a(D: int = 128, causal: bool = False, cfg: Config | None = None,
                      window: bool = False, lpt: bool = False):
    """The kernel compiled for sm_90a from host bindings (`host_bindings`); `window`: the
    sliding-window variant (its extents are runtime values; `causal` is then ignored); `lpt`:
    the grid's `lpt` order (unless `cfg` is given)."""
    c = cfg or config(D, causal or window, window=window, lpt=lpt)
    band = (64, 0) if window else (None, None)
    return attention.compile(*host_bindings(c), 256, 256, None, None, 1, 1, c,
                             causal and not window, False, False, *band,
                             block=128 * (c.W + 1), arch="sm_90a")


#: The memory orders of (Q, K and V) a call takes (`Attention`'s layout and kv_layout).
LAYOUTS = (("bhsd", "bhsd"), ("bshd", "bshd"), ("bshd", "bhsd"), ("bhsd", "bshd"),
           ("varlen", "varlen"))


def precompile(D: int, causal: bool, heads: int = 1, kv_heads: int = 1, layout: str = "bhsd",
               kv_layout: str | None = None, scale: float | None = None, arch: str = "sm_90a",
               emulator: bool = False, window: bool = False, softcap: float | None = None,
               lpt: bool | None = None, page_size: int | None = None):
    """Compile the variant a call of `Attention` with these choices launches (head dim D, causal,
    Hq = `heads` and Hkv = `kv_heads`, both compile-time, the layouts, the softmax scale, the
    softcap, the grid's order `lpt` (None: the default); `window`: the sliding-window variant,
    which serves every window and both causalities) into
    the disk cache, for `arch` and (`emulator`) for the CPU emulator; no GPU needed. With a
    `page_size`, the variant over a paged KV cache of that many tokens a page (`Attention`'s
    block_table; `layout` "bshd" or "varlen", `kv_layout` ignored). Batch and
    sequence lengths are launch arguments: one variant serves them all when lse's rows are 16-byte
    aligned (`tylo.ops.attention` allocates them so; a caller of `Attention` whose lse rows are
    not, a length not a multiple of 4, launches another variant). Returns the `CompiledKernel`;
    ArgumentError as `Attention`."""
    import ml_dtypes
    import numpy as np

    S, bf = 128, ml_dtypes.bfloat16
    kv_layout = kv_layout or layout

    def array(order, h):
        shape = {"bhsd": (1, h, S, D), "bshd": (1, S, h, D), "varlen": (S, h, D)}[order]
        return np.zeros(shape, bf)

    Q, O = array(layout, heads), array(layout, heads)
    K, V = array(kv_layout, kv_heads), array(kv_layout, kv_heads)
    packed = {}
    if page_size is not None:
        K, V = (np.zeros((2, page_size, kv_heads, D), bf) for _ in range(2))
        packed = dict(block_table=np.zeros((2, 2), np.int32),
                      seqused_k=np.full(2, page_size, np.int32))
    if layout == "varlen":
        cu = np.array([0, S // 2, S], np.int32)
        packed.update(cu_seqlens_q=cu, max_seqlen_q=S // 2)
        if page_size is None:
            packed.update(cu_seqlens_k=cu)
    lse = np.zeros((heads, S) if layout == "varlen" else (1, heads, S), np.float32)
    run = Attention(Q, K, V, O, lse, causal, emulate=True, layout=layout, kv_layout=kv_layout,
                    scale=scale, window=(S, 0) if window else None, softcap=softcap, lpt=lpt,
                    **packed)
    return attention.precompile(*run.maps, *run.args, block=run.block, arch=arch,
                                emulator=emulator)


def reference(Q, K, V, causal: bool, seq: int | None = None):
    """O and lse of the "bhsd" layout over the first `seq` rows of Q (default all; of K too when
    K has as many rows as Q, else all of K's): in float32 on the arrays' device (torch tensors
    (B, Hq, Sq, D), K, V (B, Hkv, Sk, D)) or in float64 (numpy arrays). Grouped-query heads and
    FlashAttention's bottom-right causal alignment; a row that sees no key: O 0, lse -inf."""
    torch_arrays = type(Q).__module__.startswith("torch")
    sq = Q.shape[2] if seq is None else seq
    sk = sq if K.shape[2] == Q.shape[2] else K.shape[2]
    group = Q.shape[1] // K.shape[1]
    q, k, v = Q[:, :, :sq], K[:, :, :sk], V[:, :, :sk]
    if torch_arrays:
        import torch

        q, k, v = (x.float() for x in (q, k, v))
        k, v = (x.repeat_interleave(group, dim=1) for x in (k, v))
        z = q @ k.transpose(-1, -2) / math.sqrt(Q.shape[-1])
        if causal:
            hidden = (torch.arange(sk, device=z.device)[None, :]
                      > torch.arange(sq, device=z.device)[:, None] + (sk - sq))
            z = z.masked_fill(hidden, -math.inf)
        return torch.softmax(z, dim=-1).nan_to_num(0.0) @ v, torch.logsumexp(z, dim=-1)
    import numpy as np

    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    k, v = (np.repeat(x, group, axis=1) for x in (k, v))
    z = q @ k.swapaxes(-1, -2) / math.sqrt(Q.shape[-1])
    if causal:
        z = np.where(np.arange(sk)[None, :] > np.arange(sq)[:, None] + (sk - sq), -np.inf, z)
    top = z.max(-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    total = np.exp(z - top).sum(-1)
    with np.errstate(divide="ignore"):
        lse = np.log(total) + top[..., 0]
    o = (np.exp(z - top) @ v) / np.where(total > 0, total, 1.0)[..., None]
    return o, lse
