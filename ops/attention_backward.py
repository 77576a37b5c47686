"""The backward of ``tylo.ops.attention``: the custom op ``tylo::attention_backward`` (the Hopper
kernels of `tylo.ops.kernels.attention_backward`: preprocess, the FlashAttention-3-structured
main kernel, postprocess) and the autograd rule that `attention_forward` registers on
``tylo::attention_forward``.

dq, dk, dv = attention_backward(dout, q, k, v, out, lse, dlse, causal, scale): every tensor in
SDPA's logical (B, H, S, D) layout, q, out, dout (B, Hq, Sq, D) and k, v (B, Hkv, Sk, D)
bfloat16, lse (B, Hq, Sq) float32 (the forward's, natural log), dlse (the gradient of lse, or
None); the gradients come back bfloat16 in the memory order of q, k, v (dk, dv summed over
each group of Hq / Hkv query heads). The kernels read q, k, v and dout where they lie when
their rows are D-contiguous in (B, H, S, D) or (B, S, H, D) memory (the default "bshd"
layout's), as the forward does; dout is copied into q's memory order when it lies otherwise
(the gradient of a sum is an expanded tensor), and v into k's. Packed sequences (cu_seqlens_q/k, max_seqlen_q/k; rows, H, D)
too: attention's max_seqlen_k sizes the key grid (without it the rule reads cu_seqlens_k on the
host). Served: every head dim of the forward, D 64 and 128 (the main kernel
`attention_backward`) and 256 (`attention_backward_d256`: the two consumer warpgroups split D),
causal or not (Sq != Sk bottom-right), grouped-query heads, any scale, a loss that reads lse.
Refused with `UnsupportedError` when backward() runs: a sliding window and a softcap (the
forward serves them; the backward's kernels do not yet). Deterministic: under
``torch.use_deterministic_algorithms(True)`` the backward adds dQ's float32 partial sums in
one fixed order (key block by key block, `attention_backward_tiles.await_turn`), so that the
same inputs give the same dq bits on every run (dk and dv always do); its cost is measured by
``bench/attention_backward.py --deterministic both``.

Host time: the memory-order probes, the copies' decisions and the kernels' geometry are made
once per geometry (`_plan`: shapes, strides and dtypes of every tensor, the device, causal,
the scale, the dQ mode); on CUDA tensors a geometry's second call prepares its three launches
(`Launcher.prepare`: compiled and bound once) and each later call allocates the gradients and
the float32 workspace (torch's caching allocator, on the current stream: nothing is shared
between calls), finds the tensor maps of Q, K, V, dO and dQ's accumulator by address
(`maps.bound`) and swaps its arrays into the prepared launches under a lock (an array off 16
bytes takes the general launch path). An eager backward skips torch's dispatcher
(`library.direct`). Calls on CPU tensors (the emulator) launch through `wrap` each time.
Packed sequences take the general path (their grids follow max_seqlen_q/k).
"""

from __future__ import annotations

import threading

import torch

import tylo
from tylo import TyloError, UnsupportedError

from .kernels import attention_backward as dq_kernels
from .kernels import attention_backward_host as kernel
from .library import custom_op, direct, wrap
from .maps import bound

#: The head dims the backward serves (the forward's: backward() refuses none of them).
HEAD_DIMS = (64, 128, 256)


def _rows_in_place(x) -> str | None:
    """"bhsd" or "bshd": the memory order whose rows the kernels read `x` (logical (B, H, S, D))
    in place from, or None (a copy is needed)."""
    B, H, S, D = x.shape
    if x.stride(-1) == 1:
        try:
            x.view(B * H, S, D)
            return "bhsd"
        except (RuntimeError, ValueError):  # (fake tensors raise ValueError)
            pass
        try:
            x.transpose(1, 2).view(B * S, H, D)
            return "bshd"
        except (RuntimeError, ValueError):  # (fake tensors raise ValueError)
            pass
    return None


def _copy(x, order: str):
    """A copy of x (logical (B, H, S, D)) in `order`'s memory."""
    if order == "bhsd":
        return x.contiguous()
    return x.transpose(1, 2).contiguous().transpose(1, 2)


def _in_order(x, order: str):
    """x (logical (B, H, S, D)) in `order`'s memory: itself when it lies so, else a copy."""
    return x if _rows_in_place(x) == order else _copy(x, order)


def _rows_aligned(x) -> bool:
    """Whether x's last axis is contiguous and its rows lie a multiple of 4 elements apart."""
    return x.stride(-1) == 1 and all(s % 4 == 0 for e, s in zip(x.shape[:-1], x.stride()[:-1])
                                     if e > 1)


def _aligned_rows(x):
    """x (float32, a row per sequence on its last axis: lse, dlse) itself when that axis is
    contiguous and its rows lie a multiple of 4 elements (16 bytes) apart, else a copy in rows
    padded so (as the forward allocates lse): every sequence length then launches one compiled
    variant of `preprocess` (an array's alignment is part of its key), the one
    ``tylo.ops.warmup`` compiles. (autograd hands a loss that does not read lse a dense dlse
    of zeros, whose rows are S apart.)"""
    if _rows_aligned(x):
        return x
    return _padded(x)


def _padded(x):
    """x (float32 rows on its last axis) copied into rows padded to a multiple of 4 elements."""
    rows = -(-x.shape[-1] // 4) * 4
    padded = x.new_empty((*x.shape[:-1], rows))[..., :x.shape[-1]]
    return padded.copy_(x)


def _gradients(q, k, v):
    """dq, dk, dv in q's, k's and v's memory order where they are dense (empty_like keeps the
    strides of a dense tensor), else (B, H, S, D)-contiguous."""
    return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)


def _fake(dout, q, k, v, out, lse, dlse, causal, scale, cu_seqlens_q=None, cu_seqlens_k=None,
          max_seqlen_q=0, max_seqlen_k=0, deterministic=False):
    return _gradients(q, k, v)


def _packed(dout, q, k, v, out, lse, dlse, causal, scale, cu_q, cu_k, max_q, max_k,
            deterministic):
    """The packed sequences' (rows, H, D) gradients (rows D-contiguous)."""
    q, k, v, out, dout = (x if x.stride(-1) == 1 and x.stride(0) % 8 == 0 else x.contiguous()
                          for x in (q, k, v, out, dout))
    dq, dk, dv = _gradients(q, k, v)
    run = kernel.AttentionBackward(q, k, v, out, dout, _aligned_rows(lse), dq, dk, dv, causal,
                                   scale, dlse=None if dlse is None else _aligned_rows(dlse),
                                   cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, max_seqlen_q=max_q,
                                   max_seqlen_k=max_k, deterministic=deterministic)
    for kern, grid, block, args in run.launches:
        wrap(kern)[grid, block](*args)
    return dq, dk, dv


#: The device types whose calls launch the three kernels through one prepared launch each per
#: geometry (`_launch_prepared`); calls on CPU tensors (the emulator) launch through `wrap`.
PREPARED_ON = ("cuda",)


class _Plan:
    """What `_plan` decided for one geometry: Q's and K's memory orders, which inputs are
    copied (`copies`: None for none, else flags of q, dout, k, v, out, lse, dlse), whether
    calls take prepared launches, and their state: the `kernel.Geometry` and the rows' packing
    of the first call (None before it), the tensor maps of Q, K, V, dO and dQ's accumulator by
    address (detached bindings: `maps.bound`), the three prepared launches (None before the
    second call)."""

    __slots__ = ("order", "kv_order", "copies", "prepared", "geometry", "packed", "maps",
                 "launches")

    def __init__(self, order: str, kv_order: str, copies, prepared: bool):
        self.order, self.kv_order, self.copies, self.prepared = order, kv_order, copies, prepared
        self.geometry = self.packed = self.launches = None
        self.maps = ({}, {}, {}, {}, {})


#: A call's geometry (shapes, strides, dtypes of every tensor, the device, causal, scale, the
#: dQ mode) -> its `_Plan`: the memory-order probes, the copies' decisions, the kernels'
#: geometry and the compiled kernels' lookups (prepared launches), once per geometry.
_PLANS: dict = {}
_PLAN_ENTRIES = 256
_ALIGN = 16  # bytes: the prepared launches' arrays were bound at 16-byte-aligned addresses
#: A geometry's prepared launches (their buffers) are swapped and launched by one thread at a
#: time.
_PREPARED_LOCK = threading.Lock()


def _plan(dout, q, k, v, out, lse, dlse, causal: bool, scale: float,
          deterministic: bool) -> _Plan:
    """The `_PLANS` entry of a call (not packed), made on a miss."""
    key = (q.shape, q.stride(), k.shape, k.stride(), v.shape, v.stride(), out.shape,
           out.stride(), dout.shape, dout.stride(), lse.shape, lse.stride(),
           None if dlse is None else (dlse.shape, dlse.stride(), dlse.dtype), q.dtype, k.dtype,
           v.dtype, out.dtype, dout.dtype, lse.dtype, q.device, causal, scale,
           dq_kernels.DQ_MODE, deterministic)
    plan = _PLANS.get(key)
    if plan is None:
        order = _rows_in_place(q) or "bhsd"
        kv_order = _rows_in_place(k) or "bhsd"
        copies = (_rows_in_place(q) != order, _rows_in_place(dout) != order,
                  _rows_in_place(k) != kv_order, _rows_in_place(v) != kv_order,
                  out.stride(-1) != 1, not _rows_aligned(lse),
                  dlse is not None and not _rows_aligned(dlse))
        plan = _Plan(order, kv_order, copies if any(copies) else None,
                     q.device.type in PREPARED_ON)
        if len(_PLANS) >= _PLAN_ENTRIES:
            _PLANS.clear()
        _PLANS[key] = plan
    return plan


def _run(dout, q, k, v, out, lse, dlse, causal: bool, scale: float, cu_seqlens_q=None,
         cu_seqlens_k=None, max_seqlen_q: int = 0, max_seqlen_k: int = 0,
         deterministic: bool = False):
    """dq, dk, dv: the op's implementation (`attention_backward`), which the autograd rule
    also calls directly when torch need not see the call (`library.direct`)."""
    if cu_seqlens_q is not None:
        return _packed(dout, q, k, v, out, lse, dlse, causal, scale, cu_seqlens_q,
                       cu_seqlens_k, max_seqlen_q, max_seqlen_k, deterministic)
    plan = _plan(dout, q, k, v, out, lse, dlse, causal, scale, deterministic)
    if plan.copies is not None:
        q_copy, dout_copy, k_copy, v_copy, out_copy, lse_copy, dlse_copy = plan.copies
        q = _copy(q, plan.order) if q_copy else q
        dout = _copy(dout, plan.order) if dout_copy else dout
        k = _copy(k, plan.kv_order) if k_copy else k
        v = _copy(v, plan.kv_order) if v_copy else v
        out = out.contiguous() if out_copy else out
        lse = _padded(lse) if lse_copy else lse
        dlse = _padded(dlse) if dlse_copy else dlse
    dq, dk, dv = _gradients(q, k, v)
    # the prepared launches were bound to 16-byte-aligned arrays (a compiled kernel's key): an
    # array off 16 bytes takes the general path (dq, dk, dv and the workspace are aligned)
    aligned = plan.prepared and not (out.data_ptr() | dout.data_ptr() | lse.data_ptr() | (
        0 if dlse is None else dlse.data_ptr())) % _ALIGN
    if aligned and plan.geometry is not None:
        _launch_prepared(plan, q, k, v, out, dout, lse, dlse, dq, dk, dv)
        return dq, dk, dv
    run = kernel.AttentionBackward(q, k, v, out, dout, lse, dq, dk, dv, causal, scale,
                                   dlse=dlse, deterministic=deterministic)
    if aligned:  # this geometry's first call: the next prepares its launches
        plan.packed, plan.geometry = run.packed, run.geometry
    for kern, grid, block, args in run.launches:
        wrap(kern)[grid, block](*args)
    return dq, dk, dv


def _rows_binding(x):
    """Q_BOX's tensor map over x's rows (`kernels.attention_backward_host.rows_map`)."""
    return kernel.rows_map(x)[0]


def _launch_prepared(plan: _Plan, q, k, v, out, dout, lse, dlse, dq, dk, dv) -> None:
    """The three launches of a geometry seen before (`_Plan`) on CUDA tensors: its workspace
    allocated (torch's caching allocator, on the current stream), its tensor maps by address,
    the arrays swapped into its prepared launches (made on this, its second, call: compiled
    and bound once, `Launcher.prepare`), which drop them after launching (`release`)."""
    g = plan.geometry
    f32 = torch.float32
    delta, lse2 = q.new_empty(g.rows, dtype=f32), q.new_empty(g.rows, dtype=f32)
    acc = q.new_empty(g.accumulator, dtype=f32)
    turns = None if g.turns is None else q.new_empty(g.turns, dtype=torch.int32)
    q_maps, k_maps, v_maps, do_maps, acc_maps = plan.maps
    maps = (bound(q_maps, q, _rows_binding), bound(k_maps, k, _rows_binding),
            bound(v_maps, v, _rows_binding), bound(do_maps, dout, _rows_binding))
    dq_to = (bound(acc_maps, acc, tylo.prepare_tma, dq_kernels.DQ_BOX) if g.cfg.dq == "tma"
             else acc)
    lse = lse.view(g.lse_rows)
    if dlse is not None:
        dlse = dlse.view(g.lse_rows)
    arguments = g.arguments(maps, *plan.packed, out, dout, lse, dlse, dq, dk, dv, delta, lse2,
                            acc, dq_to, turns=turns)
    with _PREPARED_LOCK:  # (one thread at a time swaps a prepared launch's arguments)
        launches = plan.launches
        if launches is None:
            launches = plan.launches = [kern[grid, block].prepare(*args) for
                                        (kern, grid, block), args in zip(g.kernels, arguments)]
        for launch, args in zip(launches, arguments):
            launch(*args)
            launch.release()


@custom_op("tylo::attention_backward", fake=_fake)
def attention_backward(dout: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                       out: torch.Tensor, lse: torch.Tensor, dlse: torch.Tensor | None,
                       causal: bool, scale: float, cu_seqlens_q: torch.Tensor | None = None,
                       cu_seqlens_k: torch.Tensor | None = None, max_seqlen_q: int = 0,
                       max_seqlen_k: int = 0,
                       deterministic: bool = False) -> tuple[torch.Tensor, torch.Tensor,
                                                             torch.Tensor]:
    """dq, dk, dv of softmax(scale q k^T) v (module docstring); all (B, H, S, D) logical, or
    packed (rows, H, D) with cu_seqlens (lse, dlse (Hq, rows)); `deterministic`: dq's sums in
    one fixed order."""
    return _run(dout, q, k, v, out, lse, dlse, causal, scale, cu_seqlens_q, cu_seqlens_k,
                max_seqlen_q, max_seqlen_k, deterministic)


def setup_context(ctx, inputs, output) -> None:
    """Saves q, k, v, out and lse of ``tylo::attention_forward`` and its options."""
    q, k, v, cu_q, cu_k, max_q, causal, scale, layout, left, right, softcap, *rest = inputs
    out, lse = output
    ctx.save_for_backward(q, k, v, out, lse, cu_q, cu_k)
    ctx.options = dict(causal=causal, scale=scale, layout=layout, max_q=max_q,
                       max_k=rest[0] if rest else 0, window=(left, right) != (-1, -1),
                       softcap=bool(softcap))


def _call(*args):
    """``tylo::attention_backward``, or its implementation directly where torch need not see
    the call (`library.direct`: an eager backward on plain CUDA tensors, as autograd runs it)."""
    if direct(*(a for a in args if isinstance(a, torch.Tensor))):
        try:
            return _run(*args)
        except TyloError as e:  # the caller's mistake: no frames of this module
            raise e.with_traceback(None) from None
    return attention_backward(*args)


def backward(ctx, grad_out, grad_lse):
    """The gradients of q, k, v (None for the other inputs of the forward op)."""
    o = ctx.options
    q, k, v, out, lse, cu_q, cu_k = ctx.saved_tensors
    refused = [what for what, on in (("a sliding window", o["window"]),
                                      ("a softcap", o["softcap"])) if on]
    if refused:
        raise UnsupportedError("tylo.ops.attention's backward does not serve "
                               + ", ".join(refused) + " yet: use torch's "
                               "scaled_dot_product_attention where these need gradients")
    deterministic = torch.are_deterministic_algorithms_enabled()
    if cu_q is not None:  # packed sequences (rows, H, D)
        max_k = o["max_k"] or int((cu_k[1:] - cu_k[:-1]).max())  # (a host sync without it)
        dq, dk, dv = _call(grad_out, q, k, v, out, lse, grad_lse, o["causal"], o["scale"],
                           cu_q, cu_k, o["max_q"], max_k, deterministic)
        return (dq, dk, dv) + (None,) * 10
    seen = (lambda x: x) if o["layout"] == "bhsd" else (lambda x: x.transpose(1, 2))
    dq, dk, dv = _call(seen(grad_out), seen(q), seen(k), seen(v), seen(out), lse, grad_lse,
                       o["causal"], o["scale"], None, None, 0, 0, deterministic)
    return (seen(dq), seen(dk), seen(dv)) + (None,) * 10
