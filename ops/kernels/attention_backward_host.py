"""The host side of the attention backward (`attention_backward`'s kernels: preprocess, the
main kernel or, at D 256, `attention_backward_d256`'s, postprocess): `AttentionBackward`, the
three launches for one set of arrays (torch CUDA tensors, or numpy arrays on the emulator),
with its float32 workspace and tensor maps; `compile_for_sm90a`, `host_launches` and
`precompile` (the kernels compiled from host stand-ins, no GPU: ptxas reports and the disk
cache of ``tylo.ops.warmup``)."""

from __future__ import annotations

import tylo

from .attention_backward import (DQ_BOX, ROWS_PER_CTA, Config, config, postprocess,
                                 preprocess)
from .attention_backward_tiles import BM
from .attention_backward_tiles import grid as main_grid
from .attention_backward_tiles import lpt_chunk
from .attention_host import _heads_first, _view
from .attention_tiles import Q_BOX


def _workspace(like, shape, dtype: str = "float32"):
    """An array of `shape` and `dtype` (a numpy/torch name) beside `like` (a torch tensor on
    its device, or numpy)."""
    if hasattr(like, "new_empty"):
        import torch

        return like.new_empty(shape, dtype=getattr(torch, dtype))
    import numpy as np

    return np.empty(shape, dtype)


def _swap_sh(x):
    """(B, H, S, D) seen as (B, S, H, D) and back (a view, torch or numpy)."""
    return x.transpose(1, 2) if hasattr(x, "data_ptr") else x.transpose(0, 2, 1, 3)


def rows_map(x):
    """(the TMA binding of Q_BOX over x, packed) for x logical (B, H, S, D): its (B H, S, D)
    view bounded at S rows per matrix when the memory is (B, H, S, D) (packed False), else its
    (H, B S, D) view over all rows when the memory is (B, S, H, D) (packed True: the kernel
    offsets sequence b by b S rows). ArgumentError when the rows are neither."""
    B, H, S, D = x.shape
    try:
        return tylo.prepare_tma(Q_BOX, _view(x, (B * H, S, D)), (S, D, B * H)), False
    except tylo.ArgumentError:
        pass
    rows = _view(_swap_sh(x), (B * S, H, D))  # (ArgumentError: neither memory order)
    return tylo.prepare_tma(Q_BOX, _heads_first(rows)), True


class Geometry:
    """What the three launches of one geometry take besides the arrays: the `Config`, each
    launch's kernel, grid and block, the scalars, and the float32 workspace's shapes (`rows`:
    delta's and lse2's, (B Hq, S_pad); `accumulator`: dQ's, (B Hq, S_pad, D); S_pad = S rounded
    up to 64; `turns`: the deterministic mode's int32 counters, (B Hq, S_pad / 64), or None).
    B, Hq, Hkv, S (Sq, or with varlen max_seqlen_q), Sk (max_seqlen_k with varlen), D; seq_q,
    seq_k the kernels' sequence lengths (0 with varlen: cu_seqlens give them). `lpt`: the
    main kernel's grid with key blocks slowest (`config`; None: when causal); `dq_vector`:
    float32 elements per red.global.add of the "red" dQ mode; `deterministic`: dQ added in a
    fixed order; `dq_writer`: the "tma" reductions issued by a producer warp (`config`). ArgumentError for a head dim other than 64, 128 or 256, Hkv not
    dividing Hq, or another dq mode or dq_vector (`config`)."""

    __slots__ = ("cfg", "heads", "kv_heads", "D", "seq_q", "seq_k", "causal", "rows",
                 "accumulator", "turns", "kernels", "lse_rows")

    def __init__(self, B: int, Hq: int, Hkv: int, S: int, Sk: int, D: int, seq_q: int,
                 seq_k: int, causal: bool, scale: float | None, dq: str | None,
                 lpt: bool | None = None, dq_vector: int = 2, deterministic: bool = False,
                 dq_writer: bool | None = None):
        if Hq % Hkv:
            raise tylo.ArgumentError("k", f"{Hkv} key/value heads do not divide {Hq} query heads")
        self.cfg = cfg = config(D, causal, scale, dq, lpt, dq_vector, deterministic, dq_writer)
        pad = -(-S // BM) * BM
        self.heads, self.kv_heads, self.D = Hq, Hkv, D
        self.seq_q, self.seq_k, self.causal = seq_q, seq_k, bool(causal)
        self.rows, self.accumulator = (B * Hq, pad), (B * Hq, pad, D)
        self.turns = (B * Hq, pad // BM) if cfg.deterministic else None
        self.lse_rows = (B * Hq, S)  # lse's and dlse's (B Hq, S) view (not with varlen)
        rows = (pad // ROWS_PER_CTA, B * Hq)
        #: (kernel, grid, block) of the three launches, in order
        self.kernels = (
            (preprocess, rows, 128),
            (cfg.kernel, main_grid(-(-Sk // cfg.BN), B * Hkv, cfg.lpt, lpt_chunk(Hq // Hkv, S, D)),
             128 * (cfg.W + 1)),
            (postprocess, rows, 128))

    def arguments(self, maps, packed: bool, kv_packed: bool, O, dO, lse, dlse, dQ, dK, dV,
                  delta, lse2, dq_acc, dq_to, cu_q=None, cu_k=None, turns=None) -> tuple:
        """The arguments of the three launches: `maps` Q's, K's, V's and dO's tensor maps
        (`rows_map`; `packed`, `kv_packed` whether Q's and K's are packed rows), lse and dlse
        as the kernels read them ((B Hq, S) views, or (Hq, rows) with varlen), the workspace
        (delta, lse2, dQ's accumulator dq_acc, dq_to: the main kernel's view of it, its
        tensor map in the "tma" mode, and `turns`: the deterministic mode's counters, of shape
        `self.turns`, else None) and cu_seqlens (varlen)."""
        cfg, Hq, D, seq_q = self.cfg, self.heads, self.D, self.seq_q
        return ((O, dO, lse, dlse, delta, lse2, dq_acc, turns, seq_q, cu_q, Hq, D),
                (*maps, dK, dV, lse2, delta, dq_to, turns, seq_q, self.seq_k, cu_q, cu_k, Hq,
                 self.kv_heads, cfg, self.causal, packed, kv_packed),
                (dQ, dq_acc, seq_q, cu_q, Hq, cfg.softmax_scale, D))


class AttentionBackward:
    """dQ, dK, dV of O = softmax(scale Q K^T) V for one set of arrays, each given logical
    (B, H, S, D) (SDPA's): Q, O, dO, dQ (B, Hq, S, D) bf16, K, V, dK, dV (B, Hkv, Sk, D) bf16,
    lse (B, Hq, S) float32 (the forward's, natural log); Hq a multiple of Hkv; torch CUDA
    tensors, or numpy arrays with `emulate=True` (the CPU emulator). Q and dO are read in
    place from (B, H, S, D) or (B, S, H, D) memory (both the same), K and V likewise (a
    transposed view of (B, S, H, D) memory is FlashAttention's layout); O, dQ, dK, dV may have
    any strides with D contiguous. `dlse` (B, Hq, S) float32, optional: the gradient of lse
    (when the loss reads it). `scale` the softmax's (default 1 / sqrt(D)); causal is
    bottom-right aligned when Sq != Sk. Allocates the float32 workspace (delta, lse2, dQ's
    accumulator: 4 B Hq S_pad (D + 2) bytes, S_pad = S rounded up to 64). Packed sequences
    (FlashAttention's varlen): Q, O, dO, dQ (rows_q, Hq, D), K, V, dK, dV (rows_k, Hkv, D),
    lse, dlse (Hq, rows_q), with cu_seqlens_q / cu_seqlens_k (int32, B + 1 row offsets) and
    max_seqlen_q / max_seqlen_k (the grids' extents: at least the longest sequence). `dq`: how
    the main kernel adds dQ (`DQ_MODES`: "red" per element from registers, "tma" by TMA
    reductions of the CTA's sum staged in shared memory; None: `DQ_MODE`; at D 256 "red"
    only); `dq_vector` float32 elements per red.global.add of the "red" mode (2, the default,
    or 4: `config`). `lpt`: the main kernel's grid with key blocks slowest (`config`; None:
    when causal). `deterministic`: dQ's float32 additions in one fixed order, key block by key
    block (the same dQ bits on every run; an int32 counter per query block of 64 rows more
    workspace; `config`: not with dq "red" at D 64/128). `dq_writer`: the "tma" mode's
    reductions issued by a warp of the producer warpgroup (`config`). `geometry` (the `Geometry`) and
    `packed` (whether Q's and K's rows are packed) serve later calls of the same shapes and
    strides (``tylo.ops.attention``'s prepared
    launches). ArgumentError for a head dim other than 64, 128 or 256, Hkv not dividing Hq,
    rows in neither memory order, or another dq mode or dq_vector."""

    def __init__(self, Q, K, V, O, dO, lse, dQ, dK, dV, causal: bool, scale: float | None = None,
                 emulate: bool = False, dlse=None, cu_seqlens_q=None, cu_seqlens_k=None,
                 max_seqlen_q: int | None = None, max_seqlen_k: int | None = None,
                 dq: str | None = None, lpt: bool | None = None, dq_vector: int = 2,
                 deterministic: bool = False, dq_writer: bool | None = None):
        varlen = cu_seqlens_q is not None
        if varlen:  # (rows, H, D), lse (Hq, rows)
            B, (Hq, D), Hkv = len(cu_seqlens_q) - 1, Q.shape[1:], K.shape[1]
            S, Sk, seq_q, seq_k = max_seqlen_q, max_seqlen_k, 0, 0
        else:
            B, Hq, S, D = Q.shape
            Hkv, Sk = K.shape[1], K.shape[2]
            seq_q, seq_k = S, Sk
        self.geometry = g = Geometry(B, Hq, Hkv, S, Sk, D, seq_q, seq_k, causal, scale, dq,
                                     lpt, dq_vector, deterministic, dq_writer)
        self.cfg = cfg = g.cfg
        delta, lse2 = _workspace(Q, g.rows), _workspace(Q, g.rows)
        dq_acc = _workspace(Q, g.accumulator)
        turns = None if g.turns is None else _workspace(Q, g.turns, "int32")
        # the main kernel's view of dQ's accumulator: itself, or ("tma") its TMA binding
        dq_to = tylo.prepare_tma(DQ_BOX, dq_acc) if cfg.dq == "tma" else dq_acc
        if varlen:
            self.maps = [tylo.prepare_tma(Q_BOX, _heads_first(x)) for x in (Q, K, V, dO)]
            packed = kv_packed = True
        else:
            (q_map, packed), (do_map, do_packed) = rows_map(Q), rows_map(dO)
            (k_map, kv_packed), (v_map, v_packed) = rows_map(K), rows_map(V)
            if do_packed != packed or v_packed != kv_packed:
                raise tylo.ArgumentError("dO/V", "dO must lie in Q's memory order and V in K's "
                                                 "((B, H, S, D) or (B, S, H, D))")
            self.maps = [q_map, k_map, v_map, do_map]
            lse = _view(lse, g.lse_rows)
            if dlse is not None:
                dlse = _view(dlse, g.lse_rows)
        self.packed = (packed, kv_packed)
        arguments = g.arguments(self.maps, packed, kv_packed, O, dO, lse, dlse, dQ, dK, dV,
                                delta, lse2, dq_acc, dq_to, cu_seqlens_q, cu_seqlens_k, turns)
        #: (kernel, grid, block, arguments) of the three launches, in order
        self.launches = [(*launch, args) for launch, args in zip(g.kernels, arguments)]
        self.emulate = emulate
        self.workspace = (delta, lse2, dq_acc) + (() if turns is None else (turns,))

    def __call__(self):
        for kernel, grid, block, args in self.launches:
            (kernel.emulate if self.emulate else kernel)[grid, block](*args)


def compile_for_sm90a(D: int = 128, causal: bool = False, heads: int = 1, kv_heads: int = 1,
                      cfg: Config | None = None, packed: bool = False, dq: str | None = None,
                      dq_vector: int = 2, deterministic: bool = False):
    """The main kernel compiled for sm_90a from host bindings (numpy; no GPU needed); `packed`:
    Q, dO, K, V in (B, S, H, D) memory; `dq` the dQ mode, `dq_vector` its elements per
    red.global.add and `deterministic` (`config`) when cfg is None."""
    import ml_dtypes
    import numpy as np

    c = cfg or config(D, causal, dq=dq, dq_vector=dq_vector, deterministic=deterministic)
    S, bf = 256, ml_dtypes.bfloat16

    def array(h):
        return _swap_sh(np.zeros((1, S, h, D), bf)) if packed else np.zeros((1, h, S, D), bf)

    x, kv = array(heads), array(kv_heads)
    maps = [rows_map(a)[0] for a in (x, kv, kv, x)]
    rows = np.zeros((heads, S), np.float32)
    acc = np.zeros((heads, S, D), np.float32)
    return c.kernel.compile(*maps, kv, kv, rows, rows,
                            tylo.prepare_tma(DQ_BOX, acc) if c.dq == "tma" else acc,
                            np.zeros((heads, S // BM), np.int32) if c.deterministic else None,
                            S, S, None, None,
                            heads,
                            kv_heads, c, causal, packed, packed,
                            block=128 * (c.W + 1), arch="sm_90a")


#: The memory orders `host_launches` lays Q (with O, dO, dQ) and K (with V, dK, dV) out in.
ORDERS = ("bhsd", "bshd", "varlen")


def host_launches(D: int, causal: bool, heads: int = 1, kv_heads: int = 1,
                  layout: str = "bhsd", kv_layout: str | None = None,
                  scale: float | None = None, batch: int = 2, dq: str | None = None,
                  deterministic: bool = False) -> list:
    """The (kernel, grid, block, arguments) of the three launches of ``tylo.ops.attention``'s
    backward for these compile-time choices, on host (numpy) stand-ins with the specs the op's
    arrays have (`precompile`): Q, O, dO, dQ in `layout`'s memory and K, V, dK, dV in
    `kv_layout`'s (default `layout`): "bhsd" (B, H, S, D), "bshd" (B, S, H, D), or "varlen"
    (both: packed (rows, H, D) sequences with cu_seqlens); lse and dlse (the gradient of lse:
    autograd passes zeros when the loss does not read lse) with rows 16-byte aligned, as the
    op gives them. Sequence lengths are launch arguments: the stand-ins' (`batch` sequences of
    128, or two of 64 packed) serve every length. So is the batch, but for one case: Q (K) in
    (B, S, H, D) memory with more than one head is read as packed rows (`rows_map`) when B > 1
    and as (B H, S, D) matrices when B is 1 (that view exists then), two variants of the main
    kernel (`batch` 2 or 1). `dq`: the dQ mode, `deterministic` (`config`). ArgumentError for
    a head dim other than 64, 128 or 256, heads that do not divide, an unknown or mixed
    varlen order, or another dq mode."""
    import ml_dtypes
    import numpy as np

    kv_layout = kv_layout or layout
    if layout not in ORDERS or kv_layout not in ORDERS or ("varlen" in (layout, kv_layout)
                                                           and layout != kv_layout):
        raise tylo.ArgumentError("layout", f"{layout!r}/{kv_layout!r}: each of "
                                           f"{', '.join(ORDERS)} (varlen for both or neither)")
    S, bf = 128, ml_dtypes.bfloat16

    def array(order, h):
        if order == "varlen":
            return np.zeros((S, h, D), bf)
        return (_swap_sh(np.zeros((batch, S, h, D), bf)) if order == "bshd"
                else np.zeros((batch, h, S, D), bf))

    Q, O, dO, dQ = (array(layout, heads) for _ in range(4))
    K, V, dK, dV = (array(kv_layout, kv_heads) for _ in range(4))
    if layout == "varlen":
        cu = np.array([0, S // 2, S], np.int32)
        lse, dlse = np.zeros((heads, S), np.float32), np.zeros((heads, S), np.float32)
        packed = dict(cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=S // 2,
                      max_seqlen_k=S // 2)
    else:
        lse, dlse = (np.zeros((batch, heads, S), np.float32) for _ in range(2))
        packed = {}
    run = AttentionBackward(Q, K, V, O, dO, lse, dQ, dK, dV, causal, scale, emulate=True,
                            dlse=dlse, dq=dq, deterministic=deterministic, **packed)
    return run.launches


def precompile(D: int, causal: bool, heads: int = 1, kv_heads: int = 1, layout: str = "bhsd",
               kv_layout: str | None = None, scale: float | None = None, arch: str = "sm_90a",
               emulator: bool = False, kernels=("preprocess", "attention_backward",
                                                "postprocess"), batch: int = 2,
               dq: str | None = None, deterministic: bool = False) -> list:
    """Compile the `kernels` (by name) of ``tylo.ops.attention``'s backward for these choices
    (`host_launches`, `dq` the dQ mode, `deterministic`) into the disk cache, for `arch` and
    (`emulator`) for the CPU emulator; no GPU needed ("attention_backward" names the main
    kernel, at D 256 attention_backward_d256). Returns their `CompiledKernel`s in launch order. ArgumentError
    as `host_launches`."""
    launches = host_launches(D, causal, heads, kv_heads, layout, kv_layout, scale, batch, dq,
                             deterministic)
    return [kern.precompile(*args, block=block, arch=arch, emulator=emulator)
            for name, (kern, _, block, args) in zip(("preprocess", "attention_backward",
                                                     "postprocess"), launches)
            if name in kernels]
