"""``tylo.ops.attention``: the Hopper attention forward (`tylo.ops.kernels.attention`) as the
PyTorch custom op ``tylo::attention_forward``, in the layouts models hand over, with no copy.

    out = tylo.ops.attention(q, k, v, causal=True)                    # (B, S, H, D), FA's
    out = tylo.ops.attention(q, k, v, layout="bhsd")                  # (B, H, S, D), SDPA's
    out = tylo.ops.attention(q, k, v, causal=True, window=(4095, 0))  # sliding window
    out = tylo.ops.attention(q, k, v, causal=True, softcap=50.0)      # Gemma 2's logit cap
    out, lse = tylo.ops.attention(q, k, v, cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=n,
                                  return_lse=True)                    # packed (rows, H, D)

q: bfloat16 (B, Sq, Hq, D) ("bshd", the default), (B, Hq, Sq, D) ("bhsd") or, with cu_seqlens,
(rows_q, Hq, D); k, v: the same with Hkv heads and Sk keys (Hq a multiple of Hkv: grouped- and
multi-query attention read each K/V head in place). D is 64, 128 or 256. `scale` defaults to
1 / sqrt(D). `causal` follows FlashAttention: with Sq != Sk the diagonal is aligned to the
bottom right (query i sees key j <= i + Sk - Sq); a query that sees no key gets 0 (lse -inf).
Returns out in q's layout (bfloat16) and, with `return_lse`, the float32 log-sum-exp (natural
log): (B, Hq, Sq), or (Hq, rows_q) for packed sequences (FlashAttention's shapes), a view
whose rows lie a multiple of 4 elements apart (not contiguous when Sq or rows_q is not a
multiple of 4: one compiled variant serves every length).

FP8 (float8_e4m3fn q, k, v with FlashAttention-3's descale factors; forward only, bf16 out):
``tylo.ops.attention(q8, k8, v8, causal=True, q_descale=dq, k_descale=dk, v_descale=dv)``
(`attention_fp8`: D 64 and 128, "bshd" and "bhsd", grouped-query heads; no varlen, paged cache,
window or softcap).

A paged KV cache (prefill and chunked prefill in a serving loop, vLLM's layout):
``tylo.ops.attention(q, k_cache, v_cache, causal=True, cu_seqlens_q=cu, max_seqlen_q=n,
block_table=table, seqused_k=used)``, forward only (`attention_paged`).

Strides: the inputs are read where they lie when their rows are D-contiguous in either memory
order, (B, S, H, D) or (B, H, S, D), whichever the logical layout: a (B, H, S, D) tensor that is
a transposed (B, S, H, D) projection (what transformers hands over) is read as (B, S, H, D); Q
may lie in one order and K, V in the other (a rotated Q beside a projected V, a KV cache).
Other strides are refused (an ArgumentError naming the tensor), never copied silently.

Sliding window, `window=(left, right)` (FlashAttention's window_size; -1 is unbounded): query
i sees key j iff i + Sk - Sq - left <= j <= i + Sk - Sq + right (bottom-right aligned like
causal; per sequence with cu_seqlens); `causal=True` makes right 0 (Mistral's window is
``window=(w - 1, 0), causal=True``, or transformers' ``(w - 1, w - 1)`` with causal). left and
right reach the kernel as runtime ints: one compiled variant serves every window (a first call
with a window compiles it; (-1, -1) is no window, (-1, 0) plain causal). Each query block loads
only the key tiles its rows see (the band), masks the tiles at the band's two edges and not
those between: the work is about Sq (left + right + BM + BN) scores instead of Sq Sk (BM +
BN = 256 at D 64 and 128, 208 at D 256; a window at D 64 runs two consumer warpgroups, not
three: three spill).

Soft-capping, `softcap` > 0 (FlashAttention's and Gemma 2's convention): the logits are
``softcap * tanh(scale * q.k / softcap)``, the scale applied first, and the softmax and lse are
of these (lse = log sum exp of the capped logits). The kernel computes ``tanh(s * (scale /
softcap))`` on each score with ``tanh.approx.f32`` (relative error at most 2^-10.987, PTX ISA
9.7.3.22: a capped logit is off by at most softcap 2^-10.987, 0.025 at softcap 50;
FlashAttention-2's apply_softcap uses the same instruction, cutlass::fast_tanh) before the mask
and the row maximum, and folds softcap log2(e) into the exponent instead of scale log2(e): one
FMUL and one MUFU.TANH more per score. Each softcap value compiles its own variant (it is a
constant of the kernel). softcap 0 or None: no cap.

Cost (to be measured on an H100, ``python bench/attention_layouts.py --window``): neither
feature changes the kernels compiled without it (their PTX is the same).

CUDA tensors run on the GPU (on torch's current stream); CPU tensors on the CPU emulator (small
sizes: tests). `torch.compile(fullgraph=True)` traces the op (a fake implementation gives the
outputs' shapes and strides). ``backward()`` runs ``tylo::attention_backward``
(`attention_backward`: D 64, 128 and 256, causal or not, grouped-query heads, the scale, a
loss that reads lse, packed sequences; a window and a softcap raise `UnsupportedError` when
backward() runs; under ``torch.use_deterministic_algorithms(True)`` dq comes out the same bits
on every run). Under ``torch.autocast`` (CPU or CUDA, any autocast dtype) float32 or
float16 q, k, v are cast to bfloat16 first (differentiably: their gradients come back in their
dtype), as mixed-precision training hands them over (float32 after a rotary embedding in
float32). Refused: a window that is not two ints >= -1 and a negative or non-finite softcap
(ArgumentError naming the argument), dropout (UnsupportedError); max_seqlen_k is unused by the
forward (the kernel reads each sequence's length) and sizes the backward's grid (without it the
backward reads cu_seqlens_k on the host: a synchronization, and no torch.compile).
"""

from __future__ import annotations

import math

import torch

from tylo import ArgumentError, TyloError, UnsupportedError

from . import attention_backward, attention_fp8, attention_paged
from .attention_views import lse_rows as _lse
from .attention_views import memory_order as _memory_order
from .attention_views import rows_view as _rows_view
from .device import require_hopper
from .kernels import attention as kernel
from .kernels import attention_host as host
from .library import custom_op, direct, wrap

#: The head dims the kernel serves.
HEAD_DIMS = (64, 128, 256)


def _memory_orders(q, k, v, layout: str) -> tuple[str, str]:
    """(Q's path, K's and V's path): each read where it lies (a rotated Q may lie (B, H, S, D)
    beside a V that lies (B, S, H, D)); K and V in one."""
    kv = _memory_order(k, layout, "k")
    if _memory_order(v, layout, "v") != kv:
        if _rows_view(v if layout == kv else v.transpose(1, 2), kv) is None:
            raise ArgumentError("v", "lies in another memory order than k ((B, S, H, D) and "
                                     "(B, H, S, D)); pass them in one")
    return _memory_order(q, layout, "q"), kv


def _check(q, k, v, cu_q, cu_k, max_q: int, layout: str) -> None:
    varlen = cu_q is not None
    rank = 3 if varlen else 4
    for name, x in (("q", q), ("k", k), ("v", v)):
        if x.dim() != rank:
            raise ArgumentError(name, f"has {x.dim()} dimensions; {layout} attention takes "
                                      + ("(rows, H, D)" if varlen else
                                         "(B, S, H, D)" if layout == "bshd" else "(B, H, S, D)"))
        if x.dtype != torch.bfloat16:
            raise ArgumentError(name, f"is {x.dtype}; the kernel takes torch.bfloat16 (or "
                                      "float8_e4m3fn q, k, v: the FP8 forward)")
        if x.device != q.device:
            raise ArgumentError(name, f"is on {x.device}, q on {q.device}")
        if x.device.type not in ("cuda", "cpu"):
            raise ArgumentError(name, f"is on {x.device}; attention runs on CUDA tensors (CPU "
                                      "tensors on the emulator)")
    for name, x in (("q", q), ("k", k), ("v", v)):
        if x.stride(-1) != 1:
            raise ArgumentError(name, f"has strides {tuple(x.stride())}: the kernel reads rows of "
                                      "D contiguous elements; pass x.contiguous()")
    require_hopper(q.device, "tylo.ops.attention")
    D = q.shape[-1]
    if D not in HEAD_DIMS or k.shape[-1] != D or v.shape[-1] != D:
        raise ArgumentError("q", f"head dim {D} (k {k.shape[-1]}, v {v.shape[-1]}): the kernel "
                                 f"serves {', '.join(map(str, HEAD_DIMS))}, the same for q, k, v")
    if k.shape != v.shape:
        raise ArgumentError("v", f"has shape {tuple(v.shape)}, k {tuple(k.shape)}: they must match")
    head_axis = 1 if varlen or layout == "bhsd" else 2
    hq, hkv = q.shape[head_axis], k.shape[head_axis]
    if hq % hkv:
        raise ArgumentError("k", f"{hkv} key/value heads do not divide {hq} query heads")
    if varlen:
        for name, cu in (("cu_seqlens_q", cu_q), ("cu_seqlens_k", cu_k)):
            if cu is None or cu.dtype != torch.int32 or cu.dim() != 1 or cu.device != q.device:
                raise ArgumentError(name, "must be a 1-D torch.int32 tensor of B + 1 row offsets "
                                          f"on {q.device} (both cu_seqlens or neither)")
        if cu_q.shape != cu_k.shape:
            raise ArgumentError("cu_seqlens_k", f"has {cu_k.shape[0]} offsets, cu_seqlens_q "
                                                f"{cu_q.shape[0]}: one per sequence + 1 each")
        if max_q <= 0:
            raise ArgumentError("max_seqlen_q", "packed sequences need max_seqlen_q (the longest "
                                                "query sequence: the grid's extent)")
    elif cu_k is not None:
        raise ArgumentError("cu_seqlens_k", "given without cu_seqlens_q")
    elif q.shape[0] != k.shape[0]:
        raise ArgumentError("k", f"batch {k.shape[0]}, q's {q.shape[0]}")


def _outputs(q, k, v, cu_q, layout: str, orders: tuple[str, str] | None = None):
    """(out in q's layout, lse, the kernel paths (Q's, K's and V's: `orders` when known), O
    as the kernel writes it): allocated the same way by the op and its fake implementation."""
    if cu_q is not None:
        return (torch.empty_like(q, memory_format=torch.contiguous_format),
                _lse(q, q.shape[1], q.shape[0]), "varlen", None)
    order, kv_order = orders or _memory_orders(q, k, v, layout)
    B, S, H, D = q.shape if layout == "bshd" else (q.shape[0], q.shape[2], q.shape[1], q.shape[3])
    O = q.new_empty((B, S, H, D) if order == "bshd" else (B, H, S, D))
    out = O if order == layout else O.transpose(1, 2)
    return out, _lse(q, B, H, S), (order, kv_order), O


def _fake(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, causal, scale, layout,
          window_left, window_right, softcap, max_seqlen_k=0):
    _check(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, layout)
    out, lse, _, _ = _outputs(q, k, v, cu_seqlens_q, layout)
    return out, lse


#: A real call's geometry (shapes, strides, dtypes, devices, layout) -> the memory orders
#: `_memory_orders` found, after `_check`: both done once per geometry.
_ORDERS: dict = {}
_ORDER_ENTRIES = 1024


def _checked(q, k, v, cu_q, cu_k, max_q: int, layout: str) -> tuple[str, str] | None:
    """`_check` and `_memory_orders` (None for packed rows) of real tensors, once per
    geometry."""
    key = (q.shape, q.stride(), k.shape, k.stride(), v.shape, v.stride(), q.dtype, k.dtype,
           v.dtype, q.device, k.device, v.device, layout, max_q > 0,
           None if cu_q is None else (cu_q.dtype, cu_q.shape, cu_q.device),
           None if cu_k is None else (cu_k.dtype, cu_k.shape, cu_k.device))
    hit = _ORDERS.get(key)
    if hit is None:
        _check(q, k, v, cu_q, cu_k, max_q, layout)
        hit = ("varlen", "varlen") if cu_q is not None else _memory_orders(q, k, v, layout)
        if len(_ORDERS) >= _ORDER_ENTRIES:
            _ORDERS.clear()
        _ORDERS[key] = hit
    return None if hit[0] == "varlen" else hit


def _run(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
             cu_seqlens_q: torch.Tensor | None, cu_seqlens_k: torch.Tensor | None,
             max_seqlen_q: int, causal: bool, scale: float, layout: str, window_left: int,
             window_right: int, softcap: float,
             max_seqlen_k: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """The op behind `attention` (module docstring); `layout` "bshd" or "bhsd" (the logical
    layout of q, k, v and out) unless cu_seqlens_q is given (packed rows); window (-1, -1): none;
    softcap 0: none; max_seqlen_k (0: unknown) only for the backward's grid."""
    orders = _checked(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, layout)
    out, lse, order, O = _outputs(q, k, v, cu_seqlens_q, layout, orders)
    if order == "varlen":
        inputs, O = (q, k, v), out
        options = dict(layout="varlen", cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k,
                       max_seqlen_q=max_seqlen_q)
    else:
        inputs = (q if layout == order[0] else q.transpose(1, 2),
                  *(x if layout == order[1] else x.transpose(1, 2) for x in (k, v)))
        options = dict(layout=order[0], kv_layout=order[1])
    window = None if (window_left, window_right) == (-1, -1) else (window_left, window_right)
    run = host.Attention(*inputs, O, lse, causal, scale=scale, window=window,
                           softcap=softcap or None, **options)
    wrap(kernel.attention)[run.grid, run.block](*run.maps, *run.args)
    return out, lse


_forward = custom_op("tylo::attention_forward", _run, fake=_fake)
_forward.register_autograd(attention_backward.backward,
                           setup_context=attention_backward.setup_context)
for _device in ("cpu", "cuda"):  # mixed precision: float32 q, k, v under autocast become bf16
    _forward.register_autocast(_device, torch.bfloat16)


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, causal: bool = False,
              scale: float | None = None, window=None, softcap: float | None = None,
              cu_seqlens_q: torch.Tensor | None = None, cu_seqlens_k: torch.Tensor | None = None,
              max_seqlen_q: int | None = None, max_seqlen_k: int | None = None,
              return_lse: bool = False, layout: str = "bshd", dropout_p: float = 0.0,
              block_table: torch.Tensor | None = None, seqused_k: torch.Tensor | None = None,
              q_descale: torch.Tensor | None = None, k_descale: torch.Tensor | None = None,
              v_descale: torch.Tensor | None = None):
    """softmax(scale q k^T) v (module docstring): out, or (out, lse) with `return_lse`.
    With `block_table` (B, max_pages) int32 and `seqused_k` (B,) int32, k and v are a paged
    KV cache (num_pages, page_size, Hkv, D) (prefill and chunked prefill, no backward:
    `attention_paged`). float8_e4m3fn q, k, v run the FP8 forward (`attention_fp8`): the
    attention of q q_descale, k k_descale, v v_descale (float32: None, one element, or (B,
    Hkv)), bf16 out, no backward. Raises ArgumentError naming the argument (dtype, shape,
    strides, heads, cu_seqlens, a window that is not two ints >= -1, a softcap < 0, a page
    size, descales beside bf16 inputs or of another shape, what the FP8 forward does not take),
    UnsupportedError for what the kernel does not do (dropout; the FP8 backward)."""
    if layout not in ("bshd", "bhsd"):
        raise ArgumentError("layout", f"{layout!r}: 'bshd' ((B, S, H, D), FlashAttention's) or "
                                      "'bhsd' ((B, H, S, D), SDPA's)")
    host.band(window, False, 0)  # ArgumentError naming `window` unless (left, right) >= -1
    left, right = (-1, -1) if window is None else (int(window[0]), int(window[1]))
    softcap = 0.0 if softcap is None or softcap == 0 else host.check_softcap(softcap)
    if dropout_p:
        raise UnsupportedError("tylo.ops.attention: dropout is not supported")
    D = q.shape[-1]
    scale = 1.0 / math.sqrt(D) if scale is None else float(scale)
    if attention_fp8.E4M3 in (q.dtype, k.dtype, v.dtype):
        out, lse = attention_fp8.forward(q, k, v, q_descale, k_descale, v_descale, causal, scale,
                                         layout, cu_seqlens_q is not None or
                                         cu_seqlens_k is not None,
                                         block_table is not None or seqused_k is not None,
                                         (left, right), softcap)
        return (out, lse) if return_lse else out
    attention_fp8.refuse_descales(q_descale, k_descale, v_descale)
    if block_table is not None or seqused_k is not None:
        if block_table is None:
            raise ArgumentError("seqused_k", "is read only beside block_table (a paged KV "
                                             "cache); contiguous k, v hold their own lengths")
        out, lse = attention_paged.paged(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                                         block_table, seqused_k, causal, scale, layout,
                                         (left, right), softcap)
        return (out, lse) if return_lse else out
    args = (q, k, v, cu_seqlens_q, cu_seqlens_k, int(max_seqlen_q or 0), bool(causal), scale,
            layout, left, right, softcap, int(max_seqlen_k or 0))
    if direct(q, k, v):  # an eager call that torch need not see: no dispatcher (library.direct)
        try:
            out, lse = _run(*args)
        except TyloError as e:  # the caller's mistake: no frames of this module
            raise e.with_traceback(None) from None
    else:
        out, lse = _forward(*args)
    return (out, lse) if return_lse else out


#: The memory orders `variants` knows, as "Q" or "Q/KV": what the op reads where it lies.
LAYOUTS = {"bhsd": ("bhsd", "bhsd"), "bshd": ("bshd", "bshd"), "bshd/bhsd": ("bshd", "bhsd"),
           "bhsd/bshd": ("bhsd", "bshd"), "varlen": ("varlen", "varlen")}


def variants(*, head_dim: int | None = None, num_heads: int | None = None,
             num_kv_heads: int | None = None, scale: float | None = None,
             causal=(True, False), layouts=None, sliding_window: int | None = None,
             softcap: float | None = None, training: bool = False, **_) -> list:
    """The kernel variants `attention` launches for a model (`tylo.ops.warmup`): one per
    causality in `causal` and memory order in `layouts` (default all of `LAYOUTS`: (B, H, S,
    D) and (B, S, H, D) memory, Q in one and K/V in the other as a model with a KV cache
    hands them over, and packed sequences), for head dim `head_dim`, `num_heads` query and
    `num_kv_heads` key/value heads (both compile-time: a tensor-parallel shard passes its own)
    and the softmax `scale` (default 1 / sqrt(head_dim)); with a `sliding_window` (a model's:
    any size, the window is a launch argument) also the window variant of each memory order,
    and with a `softcap` (> 0) every variant capped. [] without a head dim. Batch and
    sequence lengths (decode's single query row included) are launch arguments: one variant
    serves them all. With `training`, also the backward's kernels (`backward_variants`) for
    the same choices, but for none of those the backward refuses (a window, a softcap).
    ArgumentError for a head dim the kernel does not serve, heads that do not divide, an
    unknown layout, or a softcap <= 0."""
    from .warmup import Variant

    if head_dim is None:
        return []
    if head_dim not in HEAD_DIMS:
        raise ArgumentError("head_dim", f"{head_dim}: the kernel serves "
                                        f"{', '.join(map(str, HEAD_DIMS))}")
    if not num_heads:
        raise ArgumentError("num_heads", "attention's variants need the number of query heads "
                                         "(compile-time in the kernel)")
    kv = num_kv_heads or num_heads
    if num_heads % kv:
        raise ArgumentError("num_kv_heads", f"{kv} key/value heads do not divide {num_heads} "
                                            "query heads")
    scale = 1.0 / math.sqrt(head_dim) if scale is None else float(scale)
    softcap = None if not softcap else host.check_softcap(softcap)
    capped = "" if softcap is None else f" softcap {softcap:g}"
    found = []
    for name in (LAYOUTS if layouts is None else layouts):
        if name not in LAYOUTS:
            raise ArgumentError("layouts", f"{name!r}: one of {', '.join(LAYOUTS)}")
        q_order, kv_order = LAYOUTS[name]
        kinds = [("causal" if c else "full", bool(c), False) for c in causal]
        for kind, c, window in kinds + ([("window", False, True)] if sliding_window else []):
            label = (f"attention D{head_dim} {kind} Hq{num_heads} Hkv{kv} {name} scale "
                     f"{scale:.6g}{capped}")

            def build(arch, emulator, c=c, q_order=q_order, kv_order=kv_order, window=window):
                return host.precompile(head_dim, c, num_heads, kv, q_order, kv_order, scale,
                                         arch, emulator, window, softcap)
            found.append(Variant("attention", label, build))
    if training and softcap is None and head_dim in attention_backward.HEAD_DIMS:
        found += backward_variants(head_dim, num_heads, kv, scale, causal,
                                   LAYOUTS if layouts is None else layouts)
    return found


def backward_variants(head_dim: int, num_heads: int, num_kv_heads: int, scale: float,
                      causal, layouts) -> list:
    """The kernel variants of `attention`'s backward (`attention_backward`) for these choices
    (head dim 64, 128 or 256; `layouts` names of `LAYOUTS`): per memory order and causality the
    main kernel (specialized by both, the head dim, both head counts and the scale; where Q or
    K/V lie (B, S, H, D) with more than one head, a batch of one is another variant, "batch
    1": `kernels.attention_backward_host.host_launches`), and per head dim, query heads and packed
    or not `preprocess` (by these only) and `postprocess` (and the scale). No key holds a
    length: the op pads lse's and dlse's rows to 16 bytes (``_aligned_rows``)."""
    from .kernels import attention_backward_host as backward
    from .warmup import Variant

    found = {}
    for name in layouts:
        q_order, kv_order = LAYOUTS[name]
        rows = "varlen" if name == "varlen" else "batched"
        shared = f"D{head_dim} Hq{num_heads} {rows}"
        ones = ((q_order == "bshd" and num_heads > 1) or (kv_order == "bshd" and num_kv_heads > 1))
        for c in causal:
            kind = "causal" if c else "full"
            each = [("preprocess", 2, f"attention_backward preprocess {shared}")]
            each += [("attention_backward", b,
                      f"attention_backward D{head_dim} {kind} Hq{num_heads} Hkv{num_kv_heads} "
                      f"{name}{' batch 1' if b == 1 else ''} scale {scale:.6g}")
                     for b in ((2, 1) if ones else (2,))]
            each += [("postprocess", 2, f"attention_backward postprocess {shared} scale "
                                        f"{scale:.6g}")]
            for kern, b, label in each:
                def build(arch, emulator, c=c, q_order=q_order, kv_order=kv_order, kern=kern,
                          b=b):
                    return backward.precompile(head_dim, bool(c), num_heads, num_kv_heads,
                                               q_order, kv_order, scale, arch, emulator,
                                               (kern,), b)[0]
                found.setdefault(label, Variant("attention", label, build))
    return list(found.values())
