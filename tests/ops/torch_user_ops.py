"""A user's Tylo kernels made PyTorch custom ops with `tylo.ops` (namespace ``tylotest``), for
tests/ops: an elementwise op in float64 with a backward of Tylo kernels (and its in-place
form, an op that mutates its argument), a tile op (row sums of
16x8 fragments, a warp reduction) with a Tylo backward, and an mma.sync matmul whose backward
is the same op on transposed operands. On CPU tensors they run on the emulator."""

from __future__ import annotations

import torch

import tylo
import tylo.ops
from tylo import BFloat16, Float32, Float64, MMAAtom, TiledMMA, operand_layout

BLOCK = 32


# -- elementwise: out = alpha * x, in float64 --------------------------------------------------

@tylo.kernel
def scale_kernel(out, x, alpha: tylo.Scalar[Float64], n):
    i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
    if i < n:
        out[i] = x[i] * alpha


@tylo.ops.custom_op("tylotest::scale", tensors={"x": Float64}, contiguous=True)
def scale(x: torch.Tensor, alpha: float) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    tylo.ops.wrap(scale_kernel)[(n + BLOCK - 1) // BLOCK, BLOCK](out, x, alpha, n)
    return out


def _keep_alpha(ctx, inputs, output):
    ctx.alpha = inputs[1]


def _scale_backward(ctx, grad):
    return scale(grad.contiguous(), ctx.alpha), None  # (the gradient of a sum is expanded)


scale.register_autograd(_scale_backward, setup_context=_keep_alpha)


@tylo.kernel
def scale_in_place_kernel(x, alpha: tylo.Scalar[Float64], n):
    i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
    if i < n:
        x[i] = x[i] * alpha


@tylo.ops.custom_op("tylotest::scale_", mutates_args=("x",), tensors={"x": Float64},
                    contiguous=True)
def scale_(x: torch.Tensor, alpha: float) -> None:
    """x *= alpha, in place (an op that writes its argument names it in mutates_args)."""
    n = x.numel()
    tylo.ops.wrap(scale_in_place_kernel)[(n + BLOCK - 1) // BLOCK, BLOCK](x, alpha, n)


# -- a tile op: the sums of the rows of x (M, 8), M a multiple of 16 ---------------------------

C = operand_layout(MMAAtom((16, 8, 16), BFloat16, Float32), "C")  # lane l: rows l/4, l/4 + 8


@tylo.kernel
def rowsum_kernel(out, x):
    t = tylo.thread_idx()
    m0 = tylo.block_idx() * 16
    f = tylo.load_fragment(C, tylo.window(x, (m0, 0), (16, 8)), t)
    tylo.store(tylo.window(out, (m0, 0), (16, 1)), tylo.sum(f, 1), t)


@tylo.kernel
def broadcast_kernel(out, g, rows):
    """out[i, j] = g[i, 0]: the backward of the row sums."""
    i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
    if i < rows * 8:
        out[i // 8, i % 8] = g[i // 8, 0]


@tylo.ops.custom_op("tylotest::rowsum", tensors={"x": tylo.Tensor(Float32, 2, shape=(None, 8))})
def rowsum(x: torch.Tensor) -> torch.Tensor:
    out = x.new_empty((x.shape[0], 1))
    tylo.ops.wrap(rowsum_kernel)[x.shape[0] // 16, 32](out, x)
    return out


@tylo.ops.custom_op("tylotest::broadcast_rows", tensors={"g": Float32})
def broadcast_rows(g: torch.Tensor) -> torch.Tensor:
    out = g.new_empty((g.shape[0], 8))
    rows = g.shape[0]
    tylo.ops.wrap(broadcast_kernel)[(rows * 8 + BLOCK - 1) // BLOCK, BLOCK](out, g, rows)
    return out


rowsum.register_autograd(lambda ctx, grad: broadcast_rows(grad),
                         setup_context=lambda ctx, inputs, output: None)


# -- a tile op on tensor cores: C = A @ B, bf16 in, f32 out (mma.sync m16n8k16) ----------------

PLAN = TiledMMA(MMAAtom((16, 8, 16), BFloat16, Float32), warps=(1, 1), k=16)  # 16x8 tiles


@tylo.kernel
def matmul_kernel(C, A, B, plan: tylo.constexpr):
    TM, TN, TK = plan.tile_shape
    m0, n0 = tylo.block_idx(0) * TM, tylo.block_idx(1) * TN
    t = tylo.thread_idx()
    acc = tylo.accumulator(plan)
    for k in range(0, A.shape[1], TK):
        a = tylo.load_a(plan, tylo.window(A, (m0, k), (TM, TK)), t)
        b = tylo.load_b(plan, tylo.window(B, (k, n0), (TK, TN)), t)
        acc = tylo.mma(plan, a, b, acc)
    tylo.store(tylo.window(C, (m0, n0), (TM, TN)), acc, t)


@tylo.ops.custom_op("tylotest::matmul", tensors={"a": tylo.Tensor(BFloat16, 2),
                                                 "b": tylo.Tensor(BFloat16, 2)})
def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a (M, K) @ b (K, N) in float32; M, N, K multiples of 16, 8 and 16."""
    c = a.new_empty((a.shape[0], b.shape[1]), dtype=torch.float32)
    TM, TN, _ = PLAN.tile_shape
    tylo.ops.wrap(matmul_kernel)[(a.shape[0] // TM, b.shape[1] // TN), 32](c, a, b, PLAN)
    return c


def _matmul_backward(ctx, grad):
    a, b = ctx.saved_tensors
    g = grad.to(torch.bfloat16)
    return matmul(g, b.t().contiguous()), matmul(a.t().contiguous(), g)


def _save_operands(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


matmul.register_autograd(_matmul_backward, setup_context=_save_operands)


class Model(torch.nn.Module):
    """A small module that calls every op above (with torch ops between them)."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(32, 16).to(torch.bfloat16))

    def forward(self, x, y):
        h = matmul(torch.tanh(x).to(torch.bfloat16), self.w)   # (16, 32) @ (32, 16)
        s = rowsum((h * h).reshape(32, 8))                     # (32, 1)
        return scale(y.sin(), 3.0).sum() + s.double().sum()
