"""``tylo.ops.int_mm``: 8-bit integer matrix products with int32 results, the Hopper GEMM of
`tylo.ops.kernels.gemm_layouts` on integer WGMMA (``wgmma.mma_async ... .s32.s8.s8``, IGMMA), as
the PyTorch custom op ``tylo::int_mm``, with the arguments of ``torch._int_mm``:

    out = tylo.ops.int_mm(a, w.t())          # (M, N) int32 = a (M, K) @ w.t() (K, N)

a: (M, K), row-major (K contiguous); b: (K, N), column-major (K contiguous: b = W.t() of a
row-major (N, K) weight W); each torch.int8 or torch.uint8, in any pairing (the WGMMA has all
four; torch._int_mm takes int8 x int8 only). out[m, n] = sum_k a[m, k] * b[k, n] in int32,
exactly: the sums wrap modulo 2**32 only past the int32 range, as torch._int_mm's
(|a b| <= 2**16, so K < 2**15 never gets there with int8 x int8). Integer WGMMA reads both
operands K-major only (PTX ISA 9.7.15.5.2: no imm-trans for .s8/.u8), so other layouts are
refused, as torch._int_mm refuses them, never copied.

Rules (an `ArgumentError` naming the argument otherwise): K a multiple of 16 (TMA: the rows of a
and the columns of b are 16-byte multiples), N a multiple of 4 (the int32 rows of out), row
strides of a and column strides of b multiples of 16, data 16-byte aligned. GPUs other than
Hopper (sm_90) are refused (`UnsupportedError`). CUDA tensors run on torch's current stream;
CPU tensors on the CPU emulator (test sizes). M, N or K of 0 give an empty or zero result
without a launch. There is no backward (integer outputs carry no gradient).

The kernel (`gemm_layouts.Variant("int8", "K", "K", "int32")`): gemm.py's warp-specialized
persistent schedule, 128 x 256 tiles, 128 of K a stage (one 128-byte swizzle row of int8: four
m64n128k32 instructions per consumer and half), three stages and the 4-byte C staging of the
float32 variant.
"""

from __future__ import annotations

import torch

from tylo import ArgumentError, TyloError

from .device import require_hopper, sm_count
from .k_major import check_operands
from .kernels import gemm_layouts as kernel
from .library import custom_op, direct, wrap

_INT8 = {torch.int8: "int8", torch.uint8: "uint8"}
_WGMMA_RULE = ("integer WGMMA reads K-major operands only (PTX ISA, wgmma.mma_async: .s8/.u8 "
               "A and B have no transpose), as torch._int_mm")


def _check(a: torch.Tensor, b: torch.Tensor) -> None:
    """The argument rules (module docstring), in the real and the fake implementation."""
    check_operands(a, b, "int_mm", _INT8, _WGMMA_RULE, 4, "int32")
    if a.device.type not in ("cuda", "cpu"):
        raise ArgumentError("a", f"is on {a.device}; int_mm runs on CUDA tensors (CPU tensors "
                                 "on the emulator)")
    require_hopper(a.device, "tylo.ops.int_mm")


def variant(a_dtype: torch.dtype, b_dtype: torch.dtype) -> kernel.Variant:
    """The GEMM variant of a pair of 8-bit dtypes: K-major A and B, int32 C."""
    a, b = _INT8[a_dtype], _INT8[b_dtype]
    return kernel.Variant(a, "K", "K", "int32", None if b == a else b)


def _fake(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    _check(a, b)
    return a.new_empty((a.shape[0], b.shape[1]), dtype=torch.int32)


def _run(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The op behind `int_mm` (module docstring)."""
    _check(a, b)
    (M, K), N = a.shape, b.shape[1]
    out = a.new_empty((M, N), dtype=torch.int32)
    if M == 0 or N == 0:
        return out
    if K == 0:
        return out.zero_()
    v = variant(a.dtype, b.dtype)
    ctas = sm_count(a.get_device()) if a.is_cuda else 1
    maps = kernel.bind(v.a_box, a), kernel.bind(v.b_box, b), kernel.bind(v.c_box, out)
    wrap(kernel.matmul)[kernel.grid(M, N, ctas), kernel.THREADS](*maps, M, N, K, v)
    return out


_int_mm = custom_op("tylo::int_mm", _run, fake=_fake)


def int_mm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a (M, K) @ b (K, N) as a new int32 (M, N) (module docstring): a row-major and b
    column-major, torch.int8 or torch.uint8 each. Raises ArgumentError naming the argument
    (dtype, shape, strides, K % 16, N % 4, alignment), UnsupportedError (not Hopper)."""
    if direct(a, b):  # an eager call torch need not see (library.direct)
        try:
            return _run(a, b)
        except TyloError as e:  # the caller's mistake: no frames of this module
            raise e.with_traceback(None) from None
    return _int_mm(a, b)
