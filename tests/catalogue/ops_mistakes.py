"""The catalogue's entries for Tylo's torch ops (`tylo.ops`): what `tylo.ops.attention`,
`tylo.ops.matmul`, `tylo.ops.grouped_matmul` (and its masked and FP8 forms),
`tylo.ops.decode_attention`, `tylo.ops.gate_up`, `tylo.ops.scaled_matmul`, `tylo.ops.warmup`
and the decode kernel's runner (`tylo.ops.kernels.projection.Linear`) refuse before anything
runs or compiles, each naming the argument and the rule (host-side errors raised by the call:
``located=False``). CPU tensors stand in for CUDA ones (the checks are the same)."""

from __future__ import annotations

from mistakes_base import Mistake

O = "torch ops (tylo.ops)"

_PRELUDE = """
import torch
import tylo.ops
q = torch.randn(1, 64, 4, 64, dtype=torch.bfloat16)   # (B, S, Hq, D)
kv = torch.randn(1, 64, 2, 64, dtype=torch.bfloat16)  # (B, S, Hkv, D)
"""

_MATMUL = """
import torch
import tylo.ops
x = torch.randn(64, 64, dtype=torch.bfloat16)   # a (M, K)
w = torch.randn(64, 64, dtype=torch.bfloat16)   # b (K, N)
"""

_GATE_UP = """
import torch
import tylo.ops
x = torch.randn(4, 256, dtype=torch.bfloat16)          # (M, K)
wg = torch.randn(128, 256, dtype=torch.bfloat16)       # (R, K), nn.Linear(K, R).weight
wu = torch.randn(128, 256, dtype=torch.bfloat16)
"""

_GROUPED = """
import torch
import tylo.ops
x = torch.randn(50, 64, dtype=torch.bfloat16)          # a (T, K): tokens sorted by expert
w = torch.randn(2, 256, 64, dtype=torch.bfloat16)      # b (G, N, K): one weight per expert
ends = torch.tensor([30, 50], dtype=torch.int32)       # offsets: each group's end row
"""

_LINEAR = """
import torch
from tylo.ops.kernels import projection
x = torch.randn(4, 256, dtype=torch.bfloat16)          # (M, K)
w = torch.randn(128, 256, dtype=torch.bfloat16)        # W (N, K), nn.Linear(K, N).weight
out = torch.empty(4, 128, dtype=torch.bfloat16)        # (M, N)
"""

OPS: list[Mistake] = [
    Mistake("attention-float16", O, "float16 inputs to tylo.ops.attention (the kernel is bf16)",
            _PRELUDE + """
tylo.ops.attention(q.half(), kv.half(), kv.half())  # <-
""", "ArgumentError", "is torch.float16; the kernel takes torch.bfloat16 (or float8_e4m3fn",
            located=False),
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
    Mistake("attention-window-extent", O, "a sliding window side below -1 (-1 is unbounded)",
            _PRELUDE + """
tylo.ops.attention(q, kv, kv, causal=True, window=(-128, 0))  # <-
""", "ArgumentError", "its left extent -128 must be an int >= 0, or -1 (unbounded)",
            located=False),
    Mistake("attention-window-not-a-pair", O, "a sliding window given as one int (it is (left, "
            "right))", _PRELUDE + """
tylo.ops.attention(q, kv, kv, causal=True, window=128)  # <-
""", "ArgumentError", "a sliding window is (left, right), two ints", located=False),
    Mistake("attention-negative-softcap", O, "a negative logit softcap", _PRELUDE + """
tylo.ops.attention(q, kv, kv, causal=True, softcap=-30.0)  # <-
""", "ArgumentError", "the logit cap must be a finite number > 0", located=False),
    Mistake("attention-dropout", O, "dropout in tylo.ops.attention (not supported)",
            _PRELUDE + """
tylo.ops.attention(q, kv, kv, causal=True, dropout_p=0.1)  # <-
""", "UnsupportedError", "dropout is not supported", located=False),
    Mistake("attention-backward", O, "backward() through tylo.ops.attention with a sliding "
            "window (the backward kernels serve D 64, 128 and 256 without a window or a "
            "softcap)", _PRELUDE + """
out = tylo.ops.attention(q.requires_grad_(), kv, kv, causal=True, window=(15, 0))
out.float().sum().backward()  # <-
""", "UnsupportedError", "backward does not serve a sliding window", located=False),
    Mistake("attention-backward-kernel-head-dim", O, "the backward kernels' runner "
            "(`tylo.ops.kernels.attention_backward_host.AttentionBackward`) at head dim 96", """
import ml_dtypes
import numpy as np
from tylo.ops.kernels.attention_backward_host import AttentionBackward
x = np.zeros((1, 1, 64, 96), ml_dtypes.bfloat16)      # (B, H, S, D)
lse = np.zeros((1, 1, 64), np.float32)
AttentionBackward(x, x, x, x, x, lse, x, x, x, True, emulate=True)  # <-
""", "ArgumentError", "head dim 96 is not one of 64, 128, 256 (the backward's)",
            located=False),
    Mistake("attention-backward-dq-mode", O, "the backward kernels' runner with a dQ mode it "
            "does not have (`dq` is \"red\" or \"tma\")", """
import ml_dtypes
import numpy as np
from tylo.ops.kernels.attention_backward_host import AttentionBackward
x = np.zeros((1, 1, 64, 64), ml_dtypes.bfloat16)      # (B, H, S, D)
lse = np.zeros((1, 1, 64), np.float32)
AttentionBackward(x, x, x, x, x, lse, x, x, x, True, emulate=True, dq="atomic")  # <-
""", "ArgumentError", "'atomic' is not one of 'red', 'tma'", located=False),
    Mistake("attention-backward-d256-dq-tma", O, "the backward kernels' runner at head dim 256 "
            "with dQ by TMA reductions (the D 256 kernel adds dQ by red.global.add only)", """
import ml_dtypes
import numpy as np
from tylo.ops.kernels.attention_backward_host import AttentionBackward
x = np.zeros((1, 1, 64, 256), ml_dtypes.bfloat16)     # (B, H, S, D)
lse = np.zeros((1, 1, 64), np.float32)
AttentionBackward(x, x, x, x, x, lse, x, x, x, True, emulate=True, dq="tma")  # <-
""", "ArgumentError", "'tma' at head dim 256: its kernel adds dQ by red.global.add",
            located=False),
    Mistake("attention-backward-dq-vector", O, "the backward kernels' runner with a dQ vector "
            "red.global.add does not have (`dq_vector` is 2 or 4 float32 elements)", """
import ml_dtypes
import numpy as np
from tylo.ops.kernels.attention_backward_host import AttentionBackward
x = np.zeros((1, 1, 64, 64), ml_dtypes.bfloat16)      # (B, H, S, D)
lse = np.zeros((1, 1, 64), np.float32)
AttentionBackward(x, x, x, x, x, lse, x, x, x, True, emulate=True, dq="red", dq_vector=8)  # <-
""", "ArgumentError", "8 is not one of 2, 4", located=False),
    Mistake("attention-backward-dq-vector-tma", O, "the backward kernels' runner with dQ by "
            "red.global.add.v4 in the \"tma\" mode (the vector is the \"red\" mode's; \"tma\" "
            "is the default at head dim 64 and 128)", """
import ml_dtypes
import numpy as np
from tylo.ops.kernels.attention_backward_host import AttentionBackward
x = np.zeros((1, 1, 64, 128), ml_dtypes.bfloat16)     # (B, H, S, D)
lse = np.zeros((1, 1, 64), np.float32)
AttentionBackward(x, x, x, x, x, lse, x, x, x, True, emulate=True, dq_vector=4)  # <-
""", "ArgumentError", "4 with dQ mode 'tma': the vector is the \"red\" mode's",
            located=False),
    Mistake("attention-backward-dq-writer-red", O, "the backward kernels' runner asked for "
            "the dQ writer warp with dQ mode \"red\" (the writer issues the \"tma\" mode's "
            "reductions)", """
import ml_dtypes
import numpy as np
from tylo.ops.kernels.attention_backward_host import AttentionBackward
x = np.zeros((1, 1, 64, 64), ml_dtypes.bfloat16)      # (B, H, S, D)
lse = np.zeros((1, 1, 64), np.float32)
AttentionBackward(x, x, x, x, x, lse, x, x, x, True, emulate=True, dq="red",
                  dq_writer=True)  # <-
""", "ArgumentError", "the writer warp issues the \"tma\" mode's reductions", located=False),
    Mistake("attention-backward-deterministic-red", O, "the backward kernels' runner asked "
            "for a deterministic dQ with dQ mode \"red\" at head dim 64 (its two consumer "
            "warpgroups add into the same elements; \"tma\" adds one sum per CTA)", """
import ml_dtypes
import numpy as np
from tylo.ops.kernels.attention_backward_host import AttentionBackward
x = np.zeros((1, 1, 64, 64), ml_dtypes.bfloat16)      # (B, H, S, D)
lse = np.zeros((1, 1, 64), np.float32)
AttentionBackward(x, x, x, x, x, lse, x, x, x, True, emulate=True, dq="red",
                  deterministic=True)  # <-
""", "ArgumentError", "'red' with deterministic=True at head dim 64", located=False),
    Mistake("attention-backward-precompile-mixed-varlen", O, "the backward's warm-up "
            "(`tylo.ops.kernels.attention_backward_host.precompile`) with packed Q beside batched K/V",
            """
from tylo.ops.kernels.attention_backward_host import precompile
precompile(64, True, 2, 1, "varlen", "bshd")  # <-
""", "ArgumentError", "varlen for both or neither", located=False),
    Mistake("matmul-float32", O, "float32 operands to tylo.ops.matmul (the kernel takes 16-bit "
            "inputs)", _MATMUL + """
tylo.ops.matmul(x.float(), w.float())  # <-
""", "ArgumentError", "is torch.float32; tylo.ops.matmul takes torch.bfloat16 or torch.float16",
            located=False),
    Mistake("matmul-mixed-dtypes", O, "a bfloat16 a with a float16 b", _MATMUL + """
tylo.ops.matmul(x, w.half())  # <-
""", "ArgumentError", "both operands take one dtype", located=False),
    Mistake("matmul-batched-b", O, "a 3-D b (a batch of matrices; b must be 2-D)", _MATMUL + """
tylo.ops.matmul(x, w.expand(2, 64, 64))  # <-
""", "ArgumentError", "has 3 dimensions; tylo.ops.matmul takes a (K, N) matrix", located=False),
    Mistake("matmul-inner-extents", O, "a (64, 64) times a (32, 64): K differs", _MATMUL + """
tylo.ops.matmul(x, w[:32])  # <-
""", "ArgumentError", "b's rows (32) must equal a's columns (K = 64)", located=False),
    Mistake("matmul-no-contiguous-axis", O, "an operand with neither axis contiguous (every "
            "other column)", _MATMUL + """
tylo.ops.matmul(x[:, ::2], w[:32])  # <-
""", "ArgumentError", "reads a matrix with one contiguous axis", located=False),
    Mistake("matmul-row-stride", O, "a row-major (64, 20) bf16 a: rows of 40 bytes, no TMA "
            "stride", _MATMUL + """
tylo.ops.matmul(x[:, :20].contiguous(), w[:20])  # <-
""", "ArgumentError", "K = 20 must be a multiple of 8", located=False),
    Mistake("matmul-misaligned-start", O, "a view that starts one element into its row",
            _MATMUL + """
tylo.ops.matmul(x[:, 1:57], w[:56])  # <-
""", "ArgumentError", "TMA needs a 16-byte-aligned first element (rule R3", located=False),
    Mistake("matmul-output-rows", O, "N = 12 bf16 columns: output rows of 24 bytes, no TMA "
            "store", _MATMUL + """
tylo.ops.matmul(x, w[:, :12])  # <-
""", "ArgumentError", "N must be a multiple of 8 for torch.bfloat16", located=False),
    Mistake("matmul-out-dtype", O, "an integer out_dtype", _MATMUL + """
tylo.ops.matmul(x, w, out_dtype=torch.int32)  # <-
""", "ArgumentError", "writes torch.bfloat16, torch.float16 or torch.float32", located=False),
    Mistake("projection-linear-mixed-dtypes", O, "a float16 W with a bfloat16 x given to the "
            "decode kernel's plain runner (tylo.ops.kernels.projection.Linear)", _LINEAR + """
projection.Linear(x, w.half(), out, emulate=True)  # <-
""", "ArgumentError", "is torch.float16, x is torch.bfloat16: they take one dtype",
            located=False),
    Mistake("projection-linear-rows", O, "65 rows of x given to the decode kernel's plain "
            "runner (it takes 1 to 64 tokens)", _LINEAR + """
projection.Linear(torch.zeros(65, 256, dtype=torch.bfloat16), w, out, emulate=True)  # <-
""", "ArgumentError", "has 65 rows; this kernel takes 1 .. 64", located=False),
    Mistake("gate-up-float32-weight", O, "a float32 weight given to tylo.ops.gate_up (the "
            "kernels are bf16)", _GATE_UP + """
tylo.ops.gate_up(x, wg.float(), wu)  # <-
""", "ArgumentError", "is torch.float32; gate_up takes torch.bfloat16", located=False),
    Mistake("gate-up-weight-shape", O, "w_gate with another K than x's last dim (a transposed "
            "weight)", _GATE_UP + """
tylo.ops.gate_up(x, wg.T.contiguous(), wu)  # <-
""", "ArgumentError", "it must be (R, K) with K = 256 (x's last dim)", located=False),
    Mistake("gate-up-weights-differ", O, "w_up of another shape than w_gate", _GATE_UP + """
tylo.ops.gate_up(x, wg, wu[:64])  # <-
""", "ArgumentError", "they must match", located=False),
    Mistake("gate-up-rows", O, "R (the weights' rows) not a multiple of 64", _GATE_UP + """
tylo.ops.gate_up(x, wg[:96], wu[:96])  # <-
""", "ArgumentError", "96 rows; gate_up takes R a positive multiple of 64", located=False),
    Mistake("gate-up-k", O, "K not a multiple of 8 (TMA rows are 16-byte multiples)",
            _GATE_UP + """
tylo.ops.gate_up(x[:, :100], wg[:, :100], wu[:, :100])  # <-
""", "ArgumentError", "K = 100; gate_up takes K a positive multiple of 8", located=False),
    Mistake("gate-up-strided-weight", O, "a weight whose rows are not K-contiguous (a "
            "transposed view)", _GATE_UP + """
w = torch.randn(256, 128, dtype=torch.bfloat16).T  # (128, 256) with strides (1, 128)
tylo.ops.gate_up(x, w, wu)  # <-
""", "ArgumentError", "gate_up reads K-contiguous rows", located=False),
    Mistake("gate-up-rows-do-not-flatten", O, "x whose leading dims do not flatten to rows "
            "without a copy", _GATE_UP + """
x3 = torch.randn(4, 3, 256, dtype=torch.bfloat16).transpose(0, 1)
tylo.ops.gate_up(x3, wg, wu)  # <-
""", "ArgumentError", "do not flatten to rows without a copy", located=False),
]



def _grouped(name: str, what: str, code: str, error: str, match: str) -> Mistake:
    return Mistake(f"grouped-matmul-{name}", O, what, _GROUPED + code, error, match,
                   located=False)


OPS += [
    _grouped("float16", "float16 tokens (the grouped GEMM is bf16)", """
tylo.ops.grouped_matmul(x.half(), w, ends)  # <-
""", "ArgumentError", "is torch.float16; tylo.ops.grouped_matmul takes torch.bfloat16"),
    _grouped("weights-2d", "one expert's weight (N, K) instead of the stack (G, N, K)", """
tylo.ops.grouped_matmul(x, w[0], ends)  # <-
""", "ArgumentError", "has 2 dimensions; tylo.ops.grouped_matmul takes a (G, N, K) b"),
    _grouped("weights-transposed", "weights stacked as (G, K, N) (w.transpose(1, 2), the "
             "layout torch._grouped_mm takes as mat_b)", """
tylo.ops.grouped_matmul(x, w.transpose(1, 2).contiguous(), ends)  # <-
""", "ArgumentError", "b is (G, N, K) with K = 64"),
    _grouped("offsets-int64", "offsets made by cumsum without a cast (int64)", """
tylo.ops.grouped_matmul(x, w, torch.tensor([30, 20]).cumsum(0))  # <-
""", "ArgumentError", "is torch.int64; tylo.ops.grouped_matmul takes torch.int32 group ends"),
    _grouped("offsets-with-leading-zero", "offsets with a leading 0 (G + 1 boundaries, a "
             "cu_seqlens layout) instead of G end rows", """
tylo.ops.grouped_matmul(x, w, torch.tensor([0, 30, 50], dtype=torch.int32))  # <-
""", "ArgumentError", "one end row per group of b"),
    _grouped("out-dtype", "out_dtype=torch.float16 (the output is bf16 or float32)", """
tylo.ops.grouped_matmul(x, w, ends, out_dtype=torch.float16)  # <-
""", "ArgumentError", "writes torch.bfloat16 or torch.float32"),
    _grouped("k-multiple-of-8", "K = 60 (TMA: rows of a and b must be 16-byte multiples)", """
tylo.ops.grouped_matmul(x[:, :60], w[:, :, :60], ends)  # <-
""", "ArgumentError", "K = 60: the rows of a and b must be 16-byte multiples"),
    _grouped("n-multiple-of-8", "N = 100 (the output's rows are stored as 16-byte vectors)", """
tylo.ops.grouped_matmul(x, w[:, :100], ends)  # <-
""", "ArgumentError", "N = 100: the output's rows are stored as 16-byte-aligned vectors"),
    _grouped("strided-rows", "a weight stack whose rows are not K-contiguous", """
tylo.ops.grouped_matmul(x, w.transpose(1, 2).contiguous().transpose(1, 2), ends)  # <-
""", "ArgumentError", "reads K-contiguous rows"),
    _grouped("misaligned", "tokens that start 2 bytes into their storage (TMA reads 16-byte "
             "aligned data)", """
flat = torch.randn(50 * 64 + 8, dtype=torch.bfloat16)
tylo.ops.grouped_matmul(flat[1:50 * 64 + 1].view(50, 64), w, ends)  # <-
""", "ArgumentError", "starts 2 bytes past a 16-byte boundary"),
    _grouped("no-groups", "a stack of 0 experts", """
tylo.ops.grouped_matmul(x, w[:0], ends[:0])  # <-
""", "ArgumentError", "has G = 0 groups"),
    _grouped("masked-backward", "backward() through tylo.ops.grouped_matmul_masked (the masked "
             "layout serves decoding; the contiguous one has a backward)", """
xm = torch.randn(2, 32, 64, dtype=torch.bfloat16)  # (G, capacity, K)
out = tylo.ops.grouped_matmul_masked(xm.requires_grad_(), w, ends)
out.float().sum().backward()  # <-
""", "UnsupportedError", "grouped_matmul_masked has no backward"),
    _grouped("masked-tokens-2d", "packed (T, K) tokens given to the masked layout (it takes "
             "(G, capacity, K): tylo.ops.grouped_matmul takes packed ones)", """
tylo.ops.grouped_matmul_masked(x, w, ends)  # <-
""", "ArgumentError", "takes a (G, capacity, K) a"),
    _grouped("masked-counts-int64", "counts made by bincount without a cast (int64)", """
xm = torch.randn(2, 32, 64, dtype=torch.bfloat16)
tylo.ops.grouped_matmul_masked(xm, w, torch.tensor([30, 20]))  # <-
""", "ArgumentError", "takes torch.int32 row counts per group"),
    _grouped("masked-groups", "a (capacity, G, K) buffer (G and capacity swapped)", """
xm = torch.randn(32, 2, 64, dtype=torch.bfloat16)
tylo.ops.grouped_matmul_masked(xm, w, ends)  # <-
""", "ArgumentError", "a is (G, capacity, K) with G = 2"),
    _grouped("masked-not-one-view", "a (G, capacity, K) whose (G, capacity) axes do not merge "
             "into one by a view", """
xm = torch.randn(32, 2, 64, dtype=torch.bfloat16).transpose(0, 1)
tylo.ops.grouped_matmul_masked(xm, w, ends)  # <-
""", "ArgumentError", "reads a as one (G * capacity, K) view"),
]

_GROUPED_FP8 = """
import torch
import tylo.ops
x = torch.randn(50, 256).to(torch.float8_e4m3fn)      # a (T, K): tokens sorted by expert
w = torch.randn(2, 128, 256).to(torch.float8_e4m3fn)  # b (G, N, K): one weight per expert
sx, sw = torch.ones(50, 2), torch.ones(2, 1, 2)        # (T, K/128), (G, N/128, K/128)
ends = torch.tensor([30, 50], dtype=torch.int32)       # offsets: each group's end row
"""


def _grouped_fp8(name: str, what: str, code: str, error: str, match: str) -> Mistake:
    return Mistake(f"grouped-scaled-matmul-{name}", O, what, _GROUPED_FP8 + code, error, match,
                   located=False)


OPS += [
    _grouped_fp8("bf16-tokens", "bfloat16 tokens to the FP8 grouped product (bf16 has "
                 "tylo.ops.grouped_matmul)", """
tylo.ops.grouped_scaled_matmul(x.bfloat16(), w, sx, sw, ends)  # <-
""", "ArgumentError", "is torch.bfloat16; tylo.ops.grouped_scaled_matmul takes "
                  "torch.float8_e4m3fn or torch.float8_e5m2"),
    _grouped_fp8("scale-b-transposed", "weight scales of w.transpose(1, 2) (G, K/128, N/128) "
                 "instead of w's (G, N/128, K/128)", """
tylo.ops.grouped_scaled_matmul(x, w, sx, sw.mT.contiguous(), ends)  # <-
""", "ArgumentError", "is passed as its .mT"),
    _grouped_fp8("per-tensor-scales", "one scale per tensor (the grouped FP8 product takes "
                 "1 x 128 and 128 x 128 block scales)", """
tylo.ops.grouped_scaled_matmul(x, w, torch.ones(1), sw, ends)  # <-
""", "ArgumentError", "it must be (50, 2): one per row of a and 128-K block"),
    _grouped_fp8("scale-dtype", "bfloat16 scales (scales are float32)", """
tylo.ops.grouped_scaled_matmul(x, w, sx, sw.bfloat16(), ends)  # <-
""", "ArgumentError", "is torch.bfloat16; scales are torch.float32"),
    _grouped_fp8("k-multiple-of-16", "K = 120 (TMA: the 1-byte rows of a and b must be 16-byte "
                 "multiples)", """
xk, wk = x[:, :120].contiguous(), w[:, :, :120].contiguous()
tylo.ops.grouped_scaled_matmul(xk, wk, sx[:, :1], sw[:, :, :1], ends)  # <-
""", "ArgumentError", "K must be a multiple of 16"),
    _grouped_fp8("backward", "backward() through tylo.ops.grouped_scaled_matmul (FP8 training "
                 "recipes differ: the op has no backward)", """
out = tylo.ops.grouped_scaled_matmul(x, w, sx.requires_grad_(), sw, ends)
out.float().sum().backward()  # <-
""", "UnsupportedError", "grouped_scaled_matmul has no backward"),
]

_DECODE = """
import torch
import tylo.ops
q = torch.randn(2, 1, 8, 128, dtype=torch.bfloat16)        # (B, q_len, Hq, D)
k = torch.randn(6, 16, 2, 128, dtype=torch.bfloat16)       # (num_pages, page_size, Hkv, D)
v = torch.randn(6, 16, 2, 128, dtype=torch.bfloat16)
table = torch.tensor([[0, 1, 2], [3, 4, 5]], dtype=torch.int32)  # (B, max_pages) page ids
lens = torch.tensor([40, 7], dtype=torch.int32)            # (B,) tokens a sequence
"""


def _decode(name: str, what: str, code: str, error: str, match: str) -> Mistake:
    return Mistake(f"decode-attention-{name}", O, what, _DECODE + code, error, match,
                   located=False)


OPS += [
    _decode("float16", "a float16 query (the paged decode attention is bf16)", """
tylo.ops.decode_attention(q.half(), k, v, table, lens)  # <-
""", "ArgumentError", "is torch.float16; tylo.ops.decode_attention takes torch.bfloat16"),
    _decode("q-3d", "a query without its q_len axis ((B, Hq, D), vLLM's decode layout)", """
tylo.ops.decode_attention(q[:, 0], k, v, table, lens)  # <-
""", "ArgumentError", "has 3 dimensions; tylo.ops.decode_attention takes a (B, q_len, Hq, D) q"),
    _decode("q-len", "9 new tokens a sequence (speculative decoding takes 1 to 8)", """
tylo.ops.decode_attention(q.expand(2, 9, 8, 128), k, v, table, lens)  # <-
""", "ArgumentError", "has q_len = 9 new tokens a sequence"),
    _decode("head-dim", "head dimension 96 (the kernel serves 64 and 128)", """
tylo.ops.decode_attention(q[..., :96], k[..., :96], v[..., :96], table, lens)  # <-
""", "ArgumentError", "D = 96; tylo.ops.decode_attention takes 64 or 128"),
    _decode("page-size", "pages of 8 tokens (16, 32, 64, 128 or 256)", """
tylo.ops.decode_attention(q, k[:, :8], v[:, :8], table, lens)  # <-
""", "ArgumentError", "page_size = 8"),
    _decode("hnd-cache", "a cache in the (num_pages, Hkv, page_size, D) layout passed as a "
            "transposed view", """
k_hnd = torch.randn(6, 2, 16, 128, dtype=torch.bfloat16)
tylo.ops.decode_attention(q, k_hnd.transpose(1, 2), v, table, lens)  # <-
""", "ArgumentError", "reads a contiguous (num_pages, page_size, Hkv, D) cache"),
    _decode("heads-do-not-group", "12 query heads over 8 KV heads", """
tylo.ops.decode_attention(q.repeat(1, 1, 2, 1)[:, :, :12], k.repeat(1, 1, 4, 1),
                          v.repeat(1, 1, 4, 1), table, lens)  # <-
""", "ArgumentError", "Hq must be a positive multiple of Hkv"),
    _decode("group-too-large", "32 query heads a KV head (at most 16)", """
tylo.ops.decode_attention(q.repeat(1, 1, 8, 1), k, v, table, lens)  # <-
""", "ArgumentError", "Hq / Hkv = 32 query heads a KV head"),
    _decode("lengths-int64", "sequence lengths as int64 (torch.tensor's default)", """
tylo.ops.decode_attention(q, k, v, table, torch.tensor([40, 7]))  # <-
""", "ArgumentError", "is torch.int64; tylo.ops.decode_attention takes torch.int32"),
    _decode("cu-seqlens", "cumulative lengths (B + 1 boundaries) instead of B lengths", """
tylo.ops.decode_attention(q, k, v, table, torch.tensor([0, 40, 47], dtype=torch.int32))  # <-
""", "ArgumentError", "it must be (2,): one length per sequence"),
    _decode("block-table-rows", "one block table row for two sequences", """
tylo.ops.decode_attention(q, k, v, table[:1], lens)  # <-
""", "ArgumentError", "one row of page ids per sequence"),
    _decode("num-splits", "num_splits=0", """
tylo.ops.decode_attention(q, k, v, table, lens, num_splits=0)  # <-
""", "ArgumentError", "it must be an int >= 1"),
    _decode("backward", "backward() through tylo.ops.decode_attention (an inference op)", """
out = tylo.ops.decode_attention(q.requires_grad_(), k, v, table, lens, num_splits=1)
out.float().sum().backward()  # <-
""", "UnsupportedError", "has no backward"),
]

_DECODE_FP8 = _DECODE + """k8, v8 = k.to(torch.float8_e4m3fn), v.to(torch.float8_e4m3fn)  # an e4m3 cache
k_scale, v_scale = torch.ones(2), torch.ones(2)          # (Hkv,) float32 descales
"""


def _decode_fp8(name: str, what: str, code: str, match: str) -> Mistake:
    return Mistake(f"decode-attention-fp8-{name}", O, what, _DECODE_FP8 + code, "ArgumentError",
                   match, located=False)


OPS += [
    _decode_fp8("no-scales", "an FP8 cache without its descales k_scale, v_scale", """
tylo.ops.decode_attention(q, k8, v8, table, lens)  # <-
""", "is None with a torch.float8_e4m3fn cache"),
    _decode_fp8("scales-with-bf16", "descales passed with a bf16 cache", """
tylo.ops.decode_attention(q, k, v, table, lens, k_scale=k_scale, v_scale=v_scale)  # <-
""", "is given with a torch.bfloat16 cache"),
    _decode_fp8("mixed-caches", "an FP8 k_cache with a bf16 v_cache", """
tylo.ops.decode_attention(q, k8, v, table, lens, k_scale=k_scale, v_scale=v_scale)  # <-
""", "both caches torch.bfloat16 or both torch.float8_e4m3fn"),
    _decode_fp8("e5m2", "an e5m2 cache (the kernel reads e4m3)", """
k5, v5 = k.to(torch.float8_e5m2), v.to(torch.float8_e5m2)
tylo.ops.decode_attention(q, k5, v5, table, lens, k_scale=k_scale, v_scale=v_scale)  # <-
""", "is torch.float8_e5m2; tylo.ops.decode_attention takes a torch.bfloat16 cache"),
    _decode_fp8("per-tensor-scale", "one per-tensor scale (shape ()) instead of one a KV head",
                """
per_tensor = torch.tensor(0.5)
tylo.ops.decode_attention(q, k8, v8, table, lens, k_scale=per_tensor, v_scale=v_scale)  # <-
""", "it must be a (2,) tensor: one descale a KV head"),
    _decode_fp8("scale-dtype", "bf16 descales (they are float32)", """
bf16_scale = v_scale.bfloat16()
tylo.ops.decode_attention(q, k8, v8, table, lens, k_scale=k_scale, v_scale=bf16_scale)  # <-
""", "is torch.bfloat16; tylo.ops.decode_attention takes torch.float32 descales"),
]


_PAGED = """
import torch
import tylo.ops
q = torch.randn(12, 4, 64, dtype=torch.bfloat16)         # packed (rows_q, Hq, D): 2 chunks
k = torch.randn(6, 16, 2, 64, dtype=torch.bfloat16)      # (num_pages, page_size, Hkv, D)
v = torch.randn(6, 16, 2, 64, dtype=torch.bfloat16)
table = torch.tensor([[0, 1, 2], [3, 4, 5]], dtype=torch.int32)  # (B, max_pages) page ids
used = torch.tensor([40, 7], dtype=torch.int32)          # (B,) keys a sequence, new ones too
cu = torch.tensor([0, 6, 12], dtype=torch.int32)         # cu_seqlens_q
"""


def _paged(name: str, what: str, code: str, error: str, match: str) -> Mistake:
    return Mistake(f"attention-paged-{name}", O, what, _PAGED + code, error, match,
                   located=False)


OPS += [
    _paged("page-size", "pages of 8 tokens (a multiple of 16)", """
tylo.ops.attention(q, k[:, :8], v[:, :8], causal=True, cu_seqlens_q=cu, max_seqlen_q=6,
                   block_table=table, seqused_k=used)  # <-
""", "ArgumentError", "has page_size = 8"),
    _paged("float16-cache", "a float16 KV cache (the kernel is bf16)", """
tylo.ops.attention(q, k.half(), v.half(), causal=True, cu_seqlens_q=cu, max_seqlen_q=6,
                   block_table=table, seqused_k=used)  # <-
""", "ArgumentError", "is torch.float16; tylo.ops.attention with block_table takes "
                      "torch.bfloat16"),
    _paged("cache-3d", "a cache of (rows, Hkv, D) (the paged cache is 4-D)", """
tylo.ops.attention(q, k.flatten(0, 1), v.flatten(0, 1), causal=True, cu_seqlens_q=cu,
                   max_seqlen_q=6, block_table=table, seqused_k=used)  # <-
""", "ArgumentError", "takes a (num_pages, page_size, Hkv, D) k"),
    _paged("hnd-cache", "a (num_pages, Hkv, page_size, D) cache passed as a transposed view",
           """
k_hnd = torch.randn(6, 2, 16, 64, dtype=torch.bfloat16)
tylo.ops.attention(q, k_hnd.transpose(1, 2), v, causal=True, cu_seqlens_q=cu,
                   max_seqlen_q=6, block_table=table, seqused_k=used)  # <-
""", "ArgumentError", "pages page_size rows apart"),
    _paged("table-int64", "a block table of int64 page ids", """
tylo.ops.attention(q, k, v, causal=True, cu_seqlens_q=cu, max_seqlen_q=6,
                   block_table=table.long(), seqused_k=used)  # <-
""", "ArgumentError", "is torch.int64; tylo.ops.attention with block_table takes torch.int32"),
    _paged("table-rows", "one block table row for two sequences", """
tylo.ops.attention(q, k, v, causal=True, cu_seqlens_q=cu, max_seqlen_q=6,
                   block_table=table[:1], seqused_k=used)  # <-
""", "ArgumentError", "one row of page ids per sequence"),
    _paged("no-seqused-k", "a block table without the sequences' key counts", """
tylo.ops.attention(q, k, v, causal=True, cu_seqlens_q=cu, max_seqlen_q=6,
                   block_table=table)  # <-
""", "ArgumentError", "a paged cache (block_table) needs seqused_k"),
    _paged("cu-seqlens-k", "cumulative key offsets beside a block table (FlashAttention-2's "
           "varlen form; the kernel counts keys by seqused_k)", """
tylo.ops.attention(q, k, v, causal=True, cu_seqlens_q=cu, max_seqlen_q=6,
                   cu_seqlens_k=torch.tensor([0, 40, 47], dtype=torch.int32),
                   block_table=table, seqused_k=used)  # <-
""", "ArgumentError", "is not read beside block_table"),
    _paged("backward", "backward() through the paged forward (an inference op)", """
out = tylo.ops.attention(q.requires_grad_(), k, v, causal=True, cu_seqlens_q=cu,
                         max_seqlen_q=6, block_table=table, seqused_k=used)
out.float().sum().backward()  # <-
""", "UnsupportedError", "has no backward"),
]

_FP8 = """
import torch
import tylo.ops
a = torch.randn(64, 256).to(torch.float8_e4m3fn)      # (M, K), row-major
w = torch.randn(128, 256).to(torch.float8_e4m3fn)     # W (N, K); b = w.t(): (K, N) column-major
sa, sb = torch.ones(64, 1), torch.ones(1, 128)        # rowwise scales
"""


def _fp8(name: str, what: str, code: str, error: str, match: str) -> Mistake:
    return Mistake(f"scaled-matmul-{name}", O, what, _FP8 + code, error, match, located=False)


OPS += [
    _fp8("bf16-operands", "bfloat16 operands to the FP8 product", """
tylo.ops.scaled_matmul(a.bfloat16(), w.t(), sa, sb)  # <-
""", "ArgumentError", "is torch.bfloat16; scaled_matmul takes torch.float8_e4m3fn or "
         "torch.float8_e5m2"),
    _fp8("rank", "a batched (3-D) a", """
tylo.ops.scaled_matmul(a[None], w.t(), sa, sb)  # <-
""", "ArgumentError", "has 3 dimensions; scaled_matmul takes a (M, K) and b (K, N)"),
    _fp8("b-row-major", "b given row-major (K, N), N contiguous (FP8 WGMMA reads K-major B only)",
         """
b = w.t().contiguous()
tylo.ops.scaled_matmul(a, b, sa, sb)  # <-
""", "ArgumentError", "FP8 WGMMA reads K-major operands only"),
    _fp8("a-column-major", "a given column-major (M contiguous)", """
tylo.ops.scaled_matmul(a.t().contiguous().t(), w.t(), sa, sb)  # <-
""", "ArgumentError", "a must be row-major (M, K), K contiguous"),
    _fp8("inner-extents", "K and b's rows that do not match", """
tylo.ops.scaled_matmul(a, w[:, :128].t(), sa, sb)  # <-
""", "ArgumentError", "has shape (128, 128); a (64, 256) needs (256, N)"),
    _fp8("k-multiple-of-16", "K = 40 (TMA: rows of a and b must be 16-byte multiples)", """
tylo.ops.scaled_matmul(a[:, :40].contiguous(), w[:, :40].contiguous().t(), sa, sb)  # <-
""", "ArgumentError", "K = 40; K must be a multiple of 16"),
    _fp8("n-multiple-of-8", "N = 12 (TMA: the bf16 rows of out must be 16-byte multiples)", """
tylo.ops.scaled_matmul(a, w[:12].t(), sa, sb[:, :12])  # <-
""", "ArgumentError", "N = 12; N must be a multiple of 8"),
    _fp8("row-pitch", "a slice of a wider matrix whose rows lie 264 bytes apart", """
wide = torch.randn(64, 264).to(torch.float8_e4m3fn)
tylo.ops.scaled_matmul(wide[:, :256], w.t(), sa, sb)  # <-
""", "ArgumentError", "its rows of K must lie a multiple of 16 bytes apart (TMA)"),
    _fp8("misaligned", "a view of a that starts 1 byte into its storage (TMA reads 16-byte "
         "aligned data)", """
flat = torch.randn(64 * 256 + 16).to(torch.float8_e4m3fn)
tylo.ops.scaled_matmul(flat[1:64 * 256 + 1].view(64, 256), w.t(), sa, sb)  # <-
""", "ArgumentError", "its data must be 16-byte aligned (TMA)"),
    _fp8("scale-a-shape", "scale_a of a shape no scaling form has", """
tylo.ops.scaled_matmul(a, w.t(), torch.ones(64, 3), sb)  # <-
""", "ArgumentError", "it must have 1 element (per-tensor), shape (64, 1) (rowwise) or (64, 2) "
         "(1 x 128 blocks of a)"),
    _fp8("scale-b-shape", "rowwise scale_a with a column scale_b (N, 1) instead of (1, N)", """
tylo.ops.scaled_matmul(a, w.t(), sa, torch.ones(128, 1))  # <-
""", "ArgumentError", "it must be (1, 128) (rowwise)"),
    _fp8("deepgemm-scale-b", "DeepGEMM's (ceil(N/128), ceil(K/128)) weight block scales as "
         "scale_b (torch's is for b (K, N): pass its .t())", """
w = torch.randn(256, 512).to(torch.float8_e4m3fn)      # W (N, K) = (256, 512)
block_a, block_w = torch.ones(64, 4), torch.ones(2, 4)  # (M, K/128), DeepGEMM's (N/128, K/128)
tylo.ops.scaled_matmul(a.repeat(1, 2), w.t(), block_a, block_w)  # <-
""", "ArgumentError", "DeepGEMM's layout, is passed as its .t()"),
    _fp8("scale-dtype", "bfloat16 scales (scales are float32)", """
tylo.ops.scaled_matmul(a, w.t(), sa.bfloat16(), sb)  # <-
""", "ArgumentError", "is torch.bfloat16; scales are torch.float32"),
    _fp8("out-dtype", "out_dtype=torch.float32 (the epilogue writes bfloat16)", """
tylo.ops.scaled_matmul(a, w.t(), sa, sb, out_dtype=torch.float32)  # <-
""", "UnsupportedError", "out_dtype=torch.float32; the kernels write torch.bfloat16"),
    _fp8("backward", "backward() through tylo.ops.scaled_matmul (no FP8 training recipe is "
         "chosen)", """
out = tylo.ops.scaled_matmul(a, w.t(), sa.requires_grad_(), sb)
out.float().sum().backward()  # <-
""", "UnsupportedError", "has no backward: FP8 training recipes differ"),
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
    Mistake("warmup-gemm-dtype", O, "a warm-up of the GEMM ops in float32 (they take bfloat16 "
            "or float16)", """
import torch
import tylo.ops
tylo.ops.warmup(hidden_size=4096, dtype="float32")  # <-
""", "ArgumentError", "'float32': the GEMM ops take bfloat16 or float16", located=False),
    Mistake("warmup-token-tile", O, "a warm-up for a decode token tile the kernel has not "
            "(8, 16, 32, 64)", """
import torch
import tylo.ops
tylo.ops.warmup(hidden_size=4096, token_tiles=(8, 12))  # <-
""", "ArgumentError", "12: the decode kernel's token tiles are 8, 16, 32, 64", located=False),
    Mistake("warmup-gate-up-rows", O, "a warm-up of gate_up for an intermediate size that is "
            "not a multiple of 64", """
import torch
import tylo.ops
tylo.ops.warmup(hidden_size=4096, intermediate_size=1000)  # <-
""", "ArgumentError", "1000: gate_up takes R (w_gate's rows) a multiple of 64", located=False),
    Mistake("warmup-fp8-types", O, "a warm-up of scaled_matmul for e5m2 x e5m2 (torch refuses "
            "it too)", """
import torch
import tylo.ops
tylo.ops.warmup(hidden_size=4096, fp8=True, fp8_types=[("e5m2", "e5m2")])  # <-
""", "ArgumentError", "pairs of the FP8 types of a and b", located=False),
    Mistake("warmup-fp8-scaling", O, "a warm-up of scaled_matmul for a scaling form it has not",
            """
import torch
import tylo.ops
tylo.ops.warmup(hidden_size=4096, fp8=True, fp8_scaling=("colwise",))  # <-
""", "ArgumentError", "'colwise': one of tensor, row, block", located=False),
]

_CACHE = """
import torch
import tylo.ops
cache = tylo.ops.PagedKVCache(layers=1, batch=2, max_tokens=64, kv_heads=2, head_dim=64)
cache.advance()
"""

OPS += [
    Mistake("paged-cache-page-size", O, "a paged KV cache of 8-token pages (decode_attention "
            "takes 16, 32, 64, 128 or 256)", """
import torch
import tylo.ops
tylo.ops.PagedKVCache(layers=1, batch=2, max_tokens=64, kv_heads=2, head_dim=64,
                      page_size=8)  # <-
""", "ArgumentError", "page_size", located=False),
    Mistake("paged-cache-append-shape", O, "appending K with its q_len axis (B, 1, Hkv, D): a "
            "step appends one token a sequence as (B, Hkv, D)", _CACHE + """
k = torch.zeros(2, 1, 2, 64, dtype=torch.bfloat16)
cache.append(0, k, k)  # <-
""", "ArgumentError", "takes (batch, kv_heads, head_dim) = (2, 2, 64)", located=False),
    Mistake("graphed-step-cpu", O, "a CUDA graph of a step on the CPU", """
import tylo.ops
tylo.ops.GraphedStep(lambda: None, device="cpu")  # <-
""", "ArgumentError", "a CUDA graph needs a CUDA device", located=False),
    Mistake("llama-decoder-backend", O, "a LlamaDecoder backend other than 'tylo' or 'torch'",
            """
import tylo.ops
model = None  # (a transformers LlamaForCausalLM; the backend is checked first)
tylo.ops.LlamaDecoder(model, batch=1, max_tokens=64, backend="flash")  # <-
""", "ArgumentError", "LlamaDecoder takes 'tylo' or 'torch'", located=False),
]


_INT8 = """
import torch
import tylo.ops
a = torch.randint(-128, 128, (64, 256), dtype=torch.int8)   # (M, K), row-major
w = torch.randint(-128, 128, (128, 256), dtype=torch.int8)  # W (N, K); b = w.t(): column-major
"""


def _int8(name: str, what: str, code: str, error: str, match: str) -> Mistake:
    return Mistake(f"int-mm-{name}", O, what, _INT8 + code, error, match, located=False)


OPS += [
    _int8("dtype", "int16 operands to the 8-bit integer product", """
tylo.ops.int_mm(a.short(), w.t())  # <-
""", "ArgumentError", "is torch.int16; int_mm takes torch.int8 or torch.uint8"),
    _int8("rank", "a batched (3-D) a", """
tylo.ops.int_mm(a[None], w.t())  # <-
""", "ArgumentError", "has 3 dimensions; int_mm takes a (M, K) and b (K, N)"),
    _int8("b-row-major", "b given row-major (K, N), N contiguous (integer WGMMA reads K-major B "
          "only)", """
tylo.ops.int_mm(a, w.t().contiguous())  # <-
""", "ArgumentError", "integer WGMMA reads K-major operands only"),
    _int8("a-column-major", "a given column-major (M contiguous)", """
tylo.ops.int_mm(a.t().contiguous().t(), w.t())  # <-
""", "ArgumentError", "a must be row-major (M, K), K contiguous"),
    _int8("inner-extents", "K and b's rows that do not match", """
tylo.ops.int_mm(a, w[:, :128].t())  # <-
""", "ArgumentError", "has shape (128, 128); a (64, 256) needs (256, N)"),
    _int8("k-multiple-of-16", "K = 40 (TMA: rows of a and b must be 16-byte multiples)", """
tylo.ops.int_mm(a[:, :40].contiguous(), w[:, :40].contiguous().t())  # <-
""", "ArgumentError", "K = 40; K must be a multiple of 16"),
    _int8("n-multiple-of-4", "N = 6 (TMA: the int32 rows of out must be 16-byte multiples)", """
tylo.ops.int_mm(a, w[:6].t())  # <-
""", "ArgumentError", "N = 6; N must be a multiple of 4"),
    _int8("row-pitch", "a slice of a wider matrix whose rows lie 264 bytes apart", """
wide = torch.randint(-128, 128, (64, 264), dtype=torch.int8)
tylo.ops.int_mm(wide[:, :256], w.t())  # <-
""", "ArgumentError", "its rows of K must lie a multiple of 16 bytes apart (TMA)"),
    _int8("misaligned", "a view of a that starts 1 byte into its storage (TMA reads 16-byte "
          "aligned data)", """
flat = torch.randint(-128, 128, (64 * 256 + 16,), dtype=torch.int8)
tylo.ops.int_mm(flat[1:64 * 256 + 1].view(64, 256), w.t())  # <-
""", "ArgumentError", "its data must be 16-byte aligned (TMA)"),
]


_ATTENTION_FP8 = """
import torch
import tylo.ops
q = (torch.randn(1, 64, 4, 64) * 4).to(torch.float8_e4m3fn)    # (B, S, Hq, D) e4m3
kv = (torch.randn(1, 64, 2, 64) * 4).to(torch.float8_e4m3fn)   # (B, S, Hkv, D)
dq = dk = torch.full((1, 2), 0.05)                             # (B, Hkv) descales
"""


def _attention_fp8(name: str, what: str, code: str, error: str, match: str) -> Mistake:
    return Mistake(f"attention-fp8-{name}", O, what, _ATTENTION_FP8 + code, error, match,
                   located=False)


OPS += [
    _attention_fp8("mixed-dtypes", "e4m3 q and k beside a bfloat16 v", """
tylo.ops.attention(q, kv, kv.bfloat16(), q_descale=dq, k_descale=dk)  # <-
""", "ArgumentError", "is torch.bfloat16 beside e4m3 inputs"),
    _attention_fp8("descale-with-bf16", "descale factors beside bfloat16 q, k, v", """
tylo.ops.attention(q.bfloat16(), kv.bfloat16(), kv.bfloat16(), q_descale=dq)  # <-
""", "ArgumentError", "descale factors go with float8_e4m3fn q, k, v"),
    _attention_fp8("descale-shape", "a descale per query head (B, Hq) instead of per KV head "
                   "(B, Hkv), FlashAttention-3's", """
tylo.ops.attention(q, kv, kv, q_descale=torch.full((1, 4), 0.05), k_descale=dk)  # <-
""", "ArgumentError", "has shape (1, 4): descale factors are one float32 (per tensor) or "
                      "(B, Hkv) = (1, 2)"),
    _attention_fp8("descale-dtype", "bfloat16 descale factors (they are float32)", """
tylo.ops.attention(q, kv, kv, q_descale=dq.bfloat16(), k_descale=dk)  # <-
""", "ArgumentError", "is torch.bfloat16; descale factors are float32"),
    _attention_fp8("head-dim", "e4m3 inputs of head dim 256 (the FP8 kernel serves 64 and 128)",
                   """
x = (torch.randn(1, 64, 2, 256) * 4).to(torch.float8_e4m3fn)
tylo.ops.attention(x, x, x)  # <-
""", "ArgumentError", "head dim 256 (k 256, v 256): the FP8 kernel serves 64, 128"),
    _attention_fp8("varlen", "packed varlen e4m3 sequences (cu_seqlens)", """
cu = torch.tensor([0, 64], dtype=torch.int32)
tylo.ops.attention(q[0], kv[0], kv[0], cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=64)  # <-
""", "ArgumentError", "does not serve packed varlen sequences"),
    _attention_fp8("paged", "an e4m3 paged KV cache (block_table)", """
table, used = torch.zeros(1, 4, dtype=torch.int32), torch.full((1,), 64, dtype=torch.int32)
tylo.ops.attention(q, kv, kv, block_table=table, seqused_k=used)  # <-
""", "ArgumentError", "does not serve a paged KV cache"),
    _attention_fp8("window", "a sliding window with e4m3 inputs", """
tylo.ops.attention(q, kv, kv, causal=True, window=(31, 0))  # <-
""", "ArgumentError", "does not serve a sliding window"),
    _attention_fp8("softcap", "a logit softcap with e4m3 inputs", """
tylo.ops.attention(q, kv, kv, softcap=30.0)  # <-
""", "ArgumentError", "does not serve a softcap"),
    _attention_fp8("backward", "backward() through the FP8 forward (an inference op)", """
d = torch.tensor(0.05, requires_grad=True)
out = tylo.ops.attention(q, kv, kv, q_descale=d, k_descale=d)
out.float().sum().backward()  # <-
""", "UnsupportedError", "has no backward (the FP8 forward is an inference op)"),
]
