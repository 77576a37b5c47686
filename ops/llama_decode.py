"""Token-by-token decoding of a Hugging Face Llama (``LlamaForCausalLM``) on Tylo's ops, and the
same loop on torch, for comparing the two:

    dec = tylo.ops.LlamaDecoder(model, batch=1, max_tokens=1024)            # Tylo, paged cache
    ref = tylo.ops.LlamaDecoder(model, batch=1, max_tokens=1024, backend="torch")
    logits = dec.step(tokens)         # tokens (B,) int64 -> (B, vocab) bf16; cache grows by 1
    graphed = dec.graphed()           # CUDA: the step in a CUDA graph
    dec.tokens.copy_(next_tokens); graphed.replay()    # the same step, replayed

The decoder shares the model's parameters (no copy) and keeps the model's embedding, RMSNorms
and rotary embedding (torch). backend "tylo": each projection through `tylo.ops.matmul` (M =
batch rows: the decode kernel at batch <= 64), the MLP through `tylo.ops.gate_up` and
`tylo.ops.matmul`, the new token's K/V appended to a `PagedKVCache` and attention by
`tylo.ops.decode_attention` over it. backend "torch": ``F.linear`` (cuBLAS) and SDPA over a
contiguous (B, Hkv, max_tokens rounded up to 16, D) cache with a mask of each sequence's
length (the static cache of transformers: every step reads the whole cache), the Hq / Hkv query
heads of a KV head passed as that many query rows (no repeat of K and V).

A step: cache seq_lens += 1 (in place), positions = seq_lens - 1, then the layers; the state
(`tokens`, the caches' `seq_lens`) lives in tensors on the device, so a step never
synchronizes with the host and `graphed()` captures it; between replays set `tokens` in place
(the step itself advances seq_lens). The model must be a Llama without attention bias
(q_proj ... bias-free), bf16, its head_dim 64 or 128 (decode_attention's rules), intermediate
size a multiple of 64 (gate_up's).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from tylo import ArgumentError

from .paged_cache import GraphedStep, PagedKVCache

__all__ = ["LlamaDecoder"]

BACKENDS = ("tylo", "torch")


class LlamaDecoder(nn.Module):
    """One decode step of `model` (a transformers ``LlamaForCausalLM``) for `batch` sequences of
    at most `max_tokens` tokens, on `backend` "tylo" or "torch" (module docstring).

    tokens: (batch,) torch.int64 on the model's device, the step's input tokens (set in
    place between graph replays); cache: a `PagedKVCache` ("tylo", pages of `page_size`
    tokens) or a (k, v) pair of (layers, B, Hkv, max_tokens rounded up to 16, D) tensors
    ("torch"); seq_lens: (batch,) torch.int32 on the device, each sequence's tokens so far. Raises ArgumentError naming `backend` for another backend."""

    def __init__(self, model: nn.Module, batch: int, max_tokens: int, *, backend: str = "tylo",
                 page_size: int = 16):
        super().__init__()
        if backend not in BACKENDS:
            raise ArgumentError("backend", f"is {backend!r}; LlamaDecoder takes 'tylo' or "
                                           "'torch'")
        from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

        self.backend, self.model, self._rope = backend, model, apply_rotary_pos_emb
        config = model.config
        self.heads, self.kv_heads = config.num_attention_heads, config.num_key_value_heads
        self.head_dim = model.model.layers[0].self_attn.head_dim
        layers = len(model.model.layers)
        weight = model.lm_head.weight
        device, dtype = weight.device, weight.dtype
        self.tokens = torch.zeros(batch, dtype=torch.int64, device=device)
        if backend == "tylo":
            self.cache = PagedKVCache(layers, batch, max_tokens, self.kv_heads, self.head_dim,
                                      page_size=page_size, dtype=dtype, device=device)
            self.seq_lens = self.cache.seq_lens
        else:
            # (rows of 16 keys: the mask's stride SDPA's memory-efficient kernel wants)
            shape = (layers, batch, self.kv_heads, -(-max_tokens // 16) * 16, self.head_dim)
            self.cache = (torch.zeros(shape, dtype=dtype, device=device),
                          torch.zeros(shape, dtype=dtype, device=device))
            self.seq_lens = torch.zeros(batch, dtype=torch.int32, device=device)
        self.max_tokens = max_tokens

    def _linear(self, x: torch.Tensor, layer: nn.Linear) -> torch.Tensor:
        if self.backend == "torch":
            return F.linear(x, layer.weight)
        from .matmul_op import matmul

        return matmul(x, layer.weight.t())

    def _mlp(self, x: torch.Tensor, mlp: nn.Module) -> torch.Tensor:
        if self.backend == "torch":
            return mlp.down_proj(mlp.act_fn(mlp.gate_proj(x)) * mlp.up_proj(x))
        from .gate_up_op import gate_up

        return self._linear(gate_up(x, mlp.gate_proj.weight, mlp.up_proj.weight), mlp.down_proj)

    def _attention(self, i: int, q, k, v, scale: float) -> torch.Tensor:
        """q (B, Hq, D), k, v (B, Hkv, D) of layer i's new token -> (B, Hq D)."""
        B = q.shape[0]
        if self.backend == "tylo":
            from .decode_attention_op import decode_attention

            self.cache.append(i, k, v)
            out = decode_attention(q[:, None].contiguous(), self.cache.k[i], self.cache.v[i],
                                   self.cache.block_table, self.seq_lens, scale=scale)
            return out.view(B, -1)
        kc, vc = self.cache[0][i], self.cache[1][i]
        rows = torch.arange(B, device=q.device)
        pos = self.seq_lens.long() - 1
        kc[rows, :, pos] = k
        vc[rows, :, pos] = v
        mask = torch.arange(kc.shape[2], device=q.device) < self.seq_lens[:, None]
        # the G = Hq / Hkv query heads of a KV head as G query rows over it (no repeat of K/V)
        q = q.view(B, self.kv_heads, -1, q.shape[-1])
        out = F.scaled_dot_product_attention(q, kc, vc, attn_mask=mask[:, None, None],
                                             scale=scale)
        return out.reshape(B, -1)

    def step(self, tokens: torch.Tensor | None = None) -> torch.Tensor:
        """One token a sequence: copies `tokens` (batch,) into `self.tokens` when given, grows
        every sequence by one and returns the logits (batch, vocab) in the model's dtype."""
        if tokens is not None:
            self.tokens.copy_(tokens)
        self.seq_lens.add_(1)
        body = self.model.model
        B, D = self.tokens.shape[0], self.head_dim
        positions = (self.seq_lens.long() - 1)[:, None]
        x = body.embed_tokens(self.tokens)
        cos, sin = body.rotary_emb(x[:, None], positions)  # (B, 1, D)
        for i, layer in enumerate(body.layers):
            attn = layer.self_attn
            h = layer.input_layernorm(x)
            q = self._linear(h, attn.q_proj).view(B, 1, self.heads, D)
            k = self._linear(h, attn.k_proj).view(B, 1, self.kv_heads, D)
            v = self._linear(h, attn.v_proj).view(B, self.kv_heads, D)
            q, k = self._rope(q, k, cos, sin, unsqueeze_dim=2)  # (B, 1, H, D) layout
            o = self._attention(i, q[:, 0], k[:, 0], v, attn.scaling)
            x = x + self._linear(o, attn.o_proj)
            x = x + self._mlp(layer.post_attention_layernorm(x), layer.mlp)
        return self._linear(body.norm(x), self.model.lm_head)

    def reset(self) -> None:
        """Every sequence empty again (seq_lens = 0)."""
        self.seq_lens.zero_()

    @torch.no_grad()
    def graphed(self, warmup: int = 2) -> GraphedStep:
        """The step captured in a CUDA graph (`GraphedStep`; each replay advances seq_lens by
        one and returns the logits tensor). The `warmup` eager steps write slots 0 ..
        warmup - 1 (the real steps overwrite them); seq_lens is 0 afterwards."""
        self.reset()
        graphed = GraphedStep(self.step, self.tokens.device, warmup)
        self.reset()
        return graphed
