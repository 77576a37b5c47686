"""The backward of ``tylo.ops.attention``: the custom op ``tylo::attention_backward`` (the Hopper
kernels of `tylo.ops.kernels.attention_backward`: preprocess, the FlashAttention-3-structured
main kernel, postprocess) and the autograd rule that `attention_forward` registers on
``tylo::attention_forward``.

dq, dk, dv = attention_backward(dout, q, k, v, out, lse, dlse, causal, scale): every tensor in
SDPA's logical (B, H, S, D) layout, q, out, dout (B, Hq, Sq, D) and k, v (B, Hkv, Sk, D)
bfloat16, lse (B, Hq, Sq) float32 (the forward's, natural log), dlse (the gradient of lse, or
None); the gradients come back (B, H, S, D)-contiguous bfloat16 (dk, dv summed over each
group of Hq / Hkv query heads). The kernels read (B, H, S, D) memory: a tensor that lies
otherwise (the default "bshd" layout's (B, S, H, D)) is copied into it first (`contiguous`), and
the rule hands the gradients back as transposed views. Served: D 64 and 128, causal or not (Sq
!= Sk bottom-right), grouped-query heads, any scale, a loss that reads lse. Refused with
`UnsupportedError` when backward() runs: D 256, packed sequences (cu_seqlens), a sliding window
and a softcap (the forward serves them; the backward's kernel does not yet).
"""

from __future__ import annotations

import torch

from tylo import UnsupportedError

from .kernels import attention_backward as kernel
from .library import custom_op, wrap

#: The head dims the backward serves.
HEAD_DIMS = (64, 128)


def _gradients(dout, q, k, v):
    """dq, dk, dv allocated (B, H, S, D)-contiguous (the kernels' layout)."""
    return (q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape))


def _fake(dout, q, k, v, out, lse, dlse, causal, scale):
    return _gradients(dout, q, k, v)


@custom_op("tylo::attention_backward", fake=_fake)
def attention_backward(dout: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                       out: torch.Tensor, lse: torch.Tensor, dlse: torch.Tensor | None,
                       causal: bool, scale: float) -> tuple[torch.Tensor, torch.Tensor,
                                                            torch.Tensor]:
    """dq, dk, dv of softmax(scale q k^T) v (module docstring); all (B, H, S, D) logical."""
    dq, dk, dv = _gradients(dout, q, k, v)
    dout, q, k, v, out = (x.contiguous() for x in (dout, q, k, v, out))
    if lse.stride(-1) != 1:
        lse = lse.contiguous()
    if dlse is not None:
        dlse = dlse.contiguous()
    run = kernel.AttentionBackward(q, k, v, out, dout, lse, dq, dk, dv, causal, scale,
                                   dlse=dlse)
    for kern, grid, block, args in run.launches:
        wrap(kern)[grid, block](*args)
    return dq, dk, dv


def setup_context(ctx, inputs, output) -> None:
    """Saves q, k, v, out and lse of ``tylo::attention_forward`` and its options."""
    q, k, v, cu_q, _cu_k, _max_q, causal, scale, layout, left, right, softcap = inputs
    out, lse = output
    ctx.save_for_backward(q, k, v, out, lse)
    ctx.options = dict(causal=causal, scale=scale, layout=layout, varlen=cu_q is not None,
                       window=(left, right) != (-1, -1), softcap=bool(softcap))


def backward(ctx, grad_out, grad_lse):
    """The gradients of q, k, v (None for the other inputs of the forward op)."""
    o = ctx.options
    q, k, v, out, lse = ctx.saved_tensors
    refused = [what for what, on in (("packed sequences (cu_seqlens)", o["varlen"]),
                                      ("a sliding window", o["window"]),
                                      ("a softcap", o["softcap"])) if on]
    if q.shape[-1] not in HEAD_DIMS:
        refused.append(f"head dim {q.shape[-1]} (it serves {', '.join(map(str, HEAD_DIMS))})")
    if refused:
        raise UnsupportedError("tylo.ops.attention's backward does not serve "
                               + ", ".join(refused) + " yet: use torch's "
                               "scaled_dot_product_attention where these need gradients")
    seen = (lambda x: x) if o["layout"] == "bhsd" else (lambda x: x.transpose(1, 2))
    dq, dk, dv = attention_backward(seen(grad_out), seen(q), seen(k), seen(v), seen(out), lse,
                                    grad_lse, o["causal"], o["scale"])
    return (seen(dq), seen(dk), seen(dv)) + (None,) * 9
