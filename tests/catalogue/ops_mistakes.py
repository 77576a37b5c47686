"""The catalogue's entries for Tylo's torch ops (`tylo.ops`): what `tylo.ops.attention` and
`tylo.ops.warmup` refuse before anything runs or compiles, each naming the argument and the
rule (host-side errors raised by the call: ``located=False``). CPU tensors stand in for CUDA ones (the checks are the same)."""

from __future__ import annotations

from mistakes_base import Mistake

O = "torch ops (tylo.ops)"

_PRELUDE = """
import torch
import tylo.ops
q = torch.randn(1, 64, 4, 64, dtype=torch.bfloat16)   # (B, S, Hq, D)
kv = torch.randn(1, 64, 2, 64, dtype=torch.bfloat16)  # (B, S, Hkv, D)
"""

OPS: list[Mistake] = [
    Mistake("attention-float16", O, "float16 inputs to tylo.ops.attention (the kernel is bf16)",
            _PRELUDE + """
tylo.ops.attention(q.half(), kv.half(), kv.half())  # <-
""", "ArgumentError", "is torch.float16; the kernel takes torch.bfloat16", located=False),
    Mistake("attention-head-dim", O, "a head dim the attention kernel does not serve (96)",
            _PRELUDE + """
x = torch.randn(1, 64, 2, 96, dtype=torch.bfloat16)
tylo.ops.attention(x, x, x)  # <-
""", "ArgumentError", "head dim 96", located=False),
    Mistake("attention-heads-do-not-group", O, "3 query heads over 2 key/value heads",
            _PRELUDE + """
tylo.ops.attention(q[:, :, :3], kv, kv)  # <-
""", "ArgumentError", "2 key/value heads do not divide 3 query heads", located=False),
    Mistake("attention-strided-rows", O, "a head dim that is not contiguous (every other element)",
            _PRELUDE + """
x = torch.randn(1, 64, 2, 128, dtype=torch.bfloat16)[..., ::2]
tylo.ops.attention(q, x, x)  # <-
""", "ArgumentError", "the kernel reads rows of D contiguous elements", located=False),
    Mistake("attention-cu-seqlens-dtype", O, "int64 cu_seqlens (the kernel reads int32 offsets)",
            _PRELUDE + """
cu = torch.tensor([0, 64])
tylo.ops.attention(q[0], kv[0], kv[0], cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=64)  # <-
""", "ArgumentError", "must be a 1-D torch.int32 tensor of B + 1 row offsets", located=False),
    Mistake("attention-sliding-window", O, "a sliding window (not supported)", _PRELUDE + """
tylo.ops.attention(q, kv, kv, causal=True, window=(128, 0))  # <-
""", "UnsupportedError", "sliding windows (window=) are not supported", located=False),
    Mistake("attention-backward", O, "backward() through tylo.ops.attention (no backward kernel "
            "yet)", _PRELUDE + """
out = tylo.ops.attention(q.requires_grad_(), kv, kv, causal=True)
out.float().sum().backward()  # <-
""", "UnsupportedError", "has no backward yet", located=False),
    Mistake("warmup-head-dim", O, "a warm-up for a head dim the attention kernel does not serve",
            """
import torch  # (the ops' modules are torch's side of Tylo)
import tylo.ops
tylo.ops.warmup(head_dim=96, num_heads=8)  # <-
""", "ArgumentError", "96: the kernel serves 64, 128, 256", located=False),
    Mistake("warmup-heads-do-not-group", O, "a warm-up for 3 key/value heads beside 8 query heads",
            """
import torch  # (the ops' modules are torch's side of Tylo)
import tylo.ops
tylo.ops.warmup(head_dim=128, num_heads=8, num_kv_heads=3)  # <-
""", "ArgumentError", "3 key/value heads do not divide 8 query heads", located=False),
    Mistake("warmup-unknown-op", O, "a warm-up of an op that declares no variants", """
import torch
import tylo.ops
tylo.ops.warmup(head_dim=128, num_heads=8, ops=["softmax"])  # <-
""", "ArgumentError", "'softmax' is not an op with variants", located=False),
    Mistake("warmup-cache-off", O, "a warm-up with the disk cache off (it would keep nothing)", """
import torch
import tylo.ops
tylo.knobs.cache.off = True
tylo.ops.warmup(head_dim=128, num_heads=8)  # <-
""", "ArgumentError", "the disk cache is off", located=False),
]
