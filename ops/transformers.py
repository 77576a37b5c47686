"""Tylo's attention in Hugging Face `transformers` models: ``tylo.ops.transformers.register()``
adds the implementation "tylo" to transformers' `AttentionInterface` (and its mask function to
`AttentionMaskInterface`), so that

    tylo.ops.transformers.register()
    model = AutoModelForCausalLM.from_pretrained(..., attn_implementation="tylo")

runs every attention layer through `tylo.ops.attention`. What transformers hands over is taken
as it comes: q, k, v (B, H, S, D) views (read in place, in whichever memory order each lies),
grouped-query heads (no repeat of K and V), the layer's scale and causality, a KV cache (Sq <
Sk: bottom-right causal), packed sequences (``cu_seq_lens_q`` / ``cu_seq_lens_k`` /
``max_length_q`` keyword arguments, as transformers passes them to FlashAttention). A padded
batch (a 2-D padding mask, FlashAttention's mask function) is unpadded into packed sequences,
as transformers' FlashAttention integration does (a gather of the kept rows: a copy, and one
host synchronization for the longest sequence). A layer's ``sliding_window`` w becomes
``window=(w - 1, w - 1)`` when the keys outnumber w (transformers' FlashAttention mapping:
with causal layers the right side is 0, so a query sees itself and the w - 1 keys before it),
its ``softcap`` the op's softcap (Gemma 2's ``attn_logit_softcapping``). Refused
(UnsupportedError): dropout while training, attention sinks.
"""

from __future__ import annotations

import torch

from tylo import UnsupportedError

from .attention_forward import attention

#: The name `register` gives the implementation by default.
NAME = "tylo"


def attention_forward(module, query, key, value, attention_mask, dropout: float = 0.0,
                      scaling: float | None = None, is_causal: bool | None = None,
                      sliding_window: int | None = None, softcap: float | None = None,
                      **kwargs):
    """transformers' attention-function signature: query (B, Hq, Sq, D), key, value (B, Hkv,
    Sk, D); returns (out (B, Sq, Hq, D), None) as transformers' own implementations do."""
    if dropout and module.training:
        raise UnsupportedError("tylo attention: dropout while training is not supported")
    if kwargs.get("s_aux") is not None:
        raise UnsupportedError("tylo attention: attention sinks (s_aux) are not supported")
    causal = is_causal if is_causal is not None else getattr(module, "is_causal", True)
    options = dict(causal=causal, scale=scaling, softcap=softcap)
    if sliding_window is not None and key.shape[2] > sliding_window:
        options["window"] = (sliding_window - 1, sliding_window - 1)
    cu_q = kwargs.get("cu_seq_lens_q")
    if cu_q is not None:  # packed sequences: one batch row of rows
        q, k, v = (x[0].transpose(0, 1) for x in (query, key, value))
        out = attention(q, k, v, cu_seqlens_q=cu_q.int(),
                        cu_seqlens_k=kwargs["cu_seq_lens_k"].int(),
                        max_seqlen_q=int(kwargs["max_length_q"]),
                        max_seqlen_k=int(kwargs["max_length_k"]), **options)
        return out[None], None
    if attention_mask is not None:
        return _padded(query, key, value, attention_mask.bool(), options), None
    out = attention(query, key, value, layout="bhsd", **options)
    return out.transpose(1, 2), None


def _padded(query, key, value, mask, options):
    """A padded batch: the kept rows of each sequence packed (a gather), attention over the
    packed sequences, the result scattered back (0 at the padding)."""
    B, Hq, Sq, D = query.shape
    Hkv, Sk = key.shape[1], key.shape[2]
    mask_k, mask_q = mask[:, -Sk:], mask[:, -Sq:]
    keep_k = mask_k.reshape(-1).nonzero().squeeze(1)
    keep_q = mask_q.reshape(-1).nonzero().squeeze(1)
    lens_q, lens_k = mask_q.sum(1, dtype=torch.int32), mask_k.sum(1, dtype=torch.int32)
    cu_q = torch.nn.functional.pad(lens_q.cumsum(0, dtype=torch.int32), (1, 0))
    cu_k = torch.nn.functional.pad(lens_k.cumsum(0, dtype=torch.int32), (1, 0))
    q = query.transpose(1, 2).reshape(B * Sq, Hq, D)[keep_q]
    k, v = (x.transpose(1, 2).reshape(B * Sk, Hkv, D)[keep_k] for x in (key, value))
    rows = attention(q, k, v, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k,
                     max_seqlen_q=int(lens_q.max()), max_seqlen_k=int(lens_k.max()), **options)
    out = query.new_zeros(B * Sq, Hq, D)
    out[keep_q] = rows
    return out.view(B, Sq, Hq, D)


def register(name: str = NAME) -> str:
    """Add `attention_forward` to transformers' AttentionInterface under `name`, with
    FlashAttention's mask function (None when nothing is padded, else the 2-D padding mask);
    returns `name` (pass it as ``attn_implementation``)."""
    try:
        from transformers import AttentionInterface
        from transformers.masking_utils import AttentionMaskInterface, flash_attention_mask
    except ImportError as e:
        raise UnsupportedError("tylo.ops.transformers.register() needs Hugging Face "
                               "transformers with AttentionInterface and masking_utils (5.x): "
                               f"pip install transformers ({e})") from None

    AttentionInterface.register(name, attention_forward)
    AttentionMaskInterface.register(name, flash_attention_mask)
    return name
