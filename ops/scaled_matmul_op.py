"""``tylo.ops.scaled_matmul``: FP8 (e4m3, e5m2) matrix products with scales, the Hopper kernels
`tylo.ops.kernels.gemm_fp8` and `gemm_fp8_blockwise` as the PyTorch custom op
``tylo::scaled_matmul``, with the arguments of ``torch._scaled_mm``:

    out = tylo.ops.scaled_matmul(a, w.t(), scale_a, scale_b)   # (M, N) bfloat16

a: (M, K), row-major (K contiguous); b: (K, N), column-major (K contiguous: b = W.t() of a
row-major (N, K) weight W); each float8_e4m3fn or float8_e5m2, in any pairing (the WGMMA
instructions have all four; torch._scaled_mm refuses e5m2 x e5m2). FP8 WGMMA reads both
operands K-major only (PTX ISA, "Matrix multiply-accumulate operation using wgmma
instructions": .e4m3/.e5m2 operands must be K-major), so, as torch._scaled_mm, other layouts
are refused (never copied). out[m, n] = sum_k (a[m, k] * its scale) * (b[k, n] * its scale),
float32 accumulation, rounded once to bfloat16. The scales are float32; their shapes pick the
form:

* per-tensor: scale_a and scale_b of 1 element each (shape (), (1,) or (1, 1));
* rowwise: scale_a (M, 1), one per row of a; scale_b (1, N), one per column of b (row of W);
* block-scaled: scale_a (M, ceil(K/128)), one per 1 x 128 block of a (activations); scale_b
  (ceil(K/128), ceil(N/128)), one per 128 x 128 block of b (K, N) (weights).

These are torch._scaled_mm's (TensorWise, RowWise, BlockWise1x128 x BlockWise128x128, any
strides here). DeepGEMM (and DeepSeek-V3's checkpoints) store the weight's block scales for W
(N, K): (ceil(N/128), ceil(K/128)); pass that tensor's ``.t()`` (a view) as scale_b. The
block-scaled kernel promotes every 128-K group's partial sum into the f32 accumulator times its
scales (DeepSeek-V3's recipe: no long FP8-precision sums); the other two scale the accumulator
once in the epilogue.

Rules (an `ArgumentError` naming the argument otherwise): K a multiple of 16 and N of 8 (TMA's
16-byte row pitches of a, b and out), row strides of a and b multiples of 16, data 16-byte
aligned; scales float32 on a and b's device. Refused (`UnsupportedError`): out_dtype other
than bfloat16 (the epilogue stages bf16), GPUs other than Hopper (sm_90). CUDA tensors run on
torch's current stream; CPU tensors on the CPU emulator (test sizes). There is no backward:
FP8 training recipes differ in what they quantize and keep, so ``backward()`` through the op
raises `UnsupportedError`.
"""

from __future__ import annotations


import torch

from tylo import ArgumentError, TyloError, UnsupportedError, prepare_tma

from .device import require_hopper, sm_count
from .k_major import check_operands
from .kernels import gemm, gemm_fp8, gemm_fp8_blockwise
from .library import custom_op, direct, wrap
from .variants import TOKEN_TILES

BLOCK = 128  # the block scales' extent along K (and along N for scale_b)
_FP8 = {torch.float8_e4m3fn: "e4m3", torch.float8_e5m2: "e5m2"}  # the kernels' `types`
_WGMMA_RULE = ("FP8 WGMMA reads K-major operands only (PTX ISA, wgmma: .e4m3/.e5m2 A and B "
               "must be K-major), as torch._scaled_mm")


def _ceil(x: int, d: int) -> int:
    return -(-x // d)


def _check_operands(a, b) -> None:
    check_operands(a, b, "scaled_matmul", {t: str(t).split(".")[1] for t in _FP8}, _WGMMA_RULE,
                   8, "bfloat16")


def scaling(M: int, N: int, K: int, scale_a, scale_b) -> str:
    """The form the scales' shapes pick for a (M, K) @ b (K, N): "tensor", "row" or "block"
    (module docstring); ArgumentError naming scale_a or scale_b, with the shapes it may have."""
    kb, nb = _ceil(K, BLOCK), _ceil(N, BLOCK)
    sa, sb = tuple(scale_a.shape), tuple(scale_b.shape)
    for name, s in (("scale_a", scale_a), ("scale_b", scale_b)):
        if s.dtype != torch.float32:
            raise ArgumentError(name, f"is {s.dtype}; scales are torch.float32")
    if scale_a.numel() == 1 and scale_b.numel() == 1:
        return "tensor"
    if sa == (M, 1) and sb == (1, N):
        return "row"
    if sa == (M, kb) and sb == (kb, nb):
        return "block"
    wants = {"tensor": "1 element", "row": f"(1, {N})", "block": f"({kb}, {nb})"}
    forms = [f for f, fits in (("tensor", scale_a.numel() == 1), ("row", sa == (M, 1)),
                               ("block", sa == (M, kb))) if fits]
    if not forms:
        raise ArgumentError("scale_a", f"has shape {sa}; for a ({M}, {K}) it must have 1 element "
                                       f"(per-tensor), shape ({M}, 1) (rowwise) or ({M}, {kb}) "
                                       "(1 x 128 blocks of a)")
    want = " or ".join(f"{wants[f]} ({'per-tensor' if f == 'tensor' else f + 'wise'})"
                       for f in forms)
    hint = ""
    if "block" in forms and sb == (nb, kb):
        hint = ("; a (ceil(N/128), ceil(K/128)) scale of W (N, K), DeepGEMM's layout, is passed "
                "as its .t()")
    raise ArgumentError("scale_b", f"has shape {sb}; with scale_a of shape {sa}, for b ({K}, {N}) "
                                   f"it must be {want}{hint}")


def _check(a, b, scale_a, scale_b) -> str:
    _check_operands(a, b)
    for name, s in (("scale_a", scale_a), ("scale_b", scale_b)):
        if s.device != a.device:
            raise ArgumentError(name, f"is on {s.device}, a on {a.device}")
    if a.device.type not in ("cuda", "cpu"):
        raise ArgumentError("a", f"is on {a.device}; scaled_matmul runs on CUDA tensors (CPU "
                                 "tensors on the emulator)")
    require_hopper(a.device, "tylo.ops.scaled_matmul")
    (M, K), N = a.shape, b.shape[1]
    return scaling(M, N, K, scale_a, scale_b)


def _maps(a, b, out, operands):
    """The three TMA bindings: a (M, K), b (K, N) (the logical view of the plan's axis-0 B
    tile, K contiguous: what torch._scaled_mm takes), out (M, N); `operands`: the kernel's
    (A tile, B tile, plan). The one place the op calls prepare_tma."""
    a_tile, b_tile, _ = operands
    return prepare_tma(a_tile, a), prepare_tma(b_tile, b), prepare_tma(gemm.C_TILE, out)


def _fake(a, b, scale_a, scale_b):
    _check(a, b, scale_a, scale_b)
    return a.new_empty((a.shape[0], b.shape[1]), dtype=torch.bfloat16)


def _run(a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor,
                   scale_b: torch.Tensor) -> torch.Tensor:
    """The op behind `scaled_matmul` (module docstring)."""
    form = _check(a, b, scale_a, scale_b)
    (M, K), N = a.shape, b.shape[1]
    out = a.new_empty((M, N), dtype=torch.bfloat16)
    if M == 0 or N == 0:
        return out
    if K == 0:
        return out.zero_()
    ctas = sm_count(a.get_device()) if a.is_cuda else 1
    types = (_FP8[a.dtype], _FP8[b.dtype])
    if form == "block":
        kernel = gemm_fp8_blockwise
        maps = _maps(a, b, out, kernel.OPERANDS[types])
        grid = min(ctas, _ceil(M, kernel.BM) * _ceil(N, kernel.BN))
        wrap(kernel.gemm_fp8_blockwise)[grid, kernel.THREADS](*maps, scale_a, scale_b.t(), M, N,
                                                              K, types)
        return out
    maps = _maps(a, b, out, gemm_fp8.OPERANDS[types])
    grid = gemm.grid(M, N, ctas, 1)
    if form == "tensor":
        scale_a, scale_b = scale_a.reshape(1), scale_b.reshape(1)
    wrap(gemm_fp8.gemm_fp8)[grid, gemm_fp8.THREADS](*maps, scale_a, scale_b, M, N, K,
                                                    form == "row", types)
    return out


_scaled_matmul = custom_op("tylo::scaled_matmul", _run, fake=_fake)


def _no_backward(ctx, grad):
    raise UnsupportedError("tylo.ops.scaled_matmul has no backward: FP8 training recipes differ "
                           "(what is quantized, with which scales, kept in which precision), so "
                           "the op does not pick one; a loss through it cannot be differentiated. "
                           "Compute gradients with your recipe's own ops")


_scaled_matmul.register_autograd(_no_backward, setup_context=lambda ctx, inputs, output: None)


def scaled_matmul(a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor,
                  scale_b: torch.Tensor, *, out_dtype: torch.dtype = torch.bfloat16
                  ) -> torch.Tensor:
    """(a * its scales) @ (b * its scales) as bfloat16 (M, N) (module docstring): a (M, K)
    row-major and b (K, N) column-major, float8_e4m3fn or float8_e5m2; scale_a, scale_b
    float32, per-tensor (1 element each), rowwise ((M, 1), (1, N)) or block-scaled ((M,
    ceil(K/128)), (ceil(K/128), ceil(N/128))). Raises ArgumentError naming the argument (dtype,
    shape, strides, alignment, scale shapes), UnsupportedError (out_dtype, not Hopper)."""
    if out_dtype != torch.bfloat16:
        raise UnsupportedError(f"tylo.ops.scaled_matmul: out_dtype={out_dtype}; the kernels write "
                               "torch.bfloat16 (their epilogue stages bf16 tiles)")
    if direct(a, b, scale_a, scale_b):  # an eager call torch need not see (library.direct)
        try:
            return _run(a, b, scale_a, scale_b)
        except TyloError as e:  # the caller's mistake: no frames of this module
            raise e.with_traceback(None) from None
    return _scaled_matmul(a, b, scale_a, scale_b)


#: The scaling forms `variants` knows ("tensor": per-tensor, "row": rowwise, "block").
FORMS = ("tensor", "row", "block")


def variants(*, hidden_size: int | None = None, intermediate_size: int | None = None,
             head_dim: int | None = None, num_heads: int | None = None,
             num_kv_heads: int | None = None, fp8_types=(("e4m3", "e4m3"),), fp8_scaling=FORMS,
             token_tiles=TOKEN_TILES, prefill: bool = True, **_) -> list:
    """The kernel variants `scaled_matmul` launches for a Llama-like model's projections in
    FP8 (`tylo.ops.warmup`, only when asked: ``fp8=True`` or ``ops=["scaled_matmul"]``): per
    pair of FP8 types of a and b in `fp8_types` ("e4m3" or "e5m2") and form in `fp8_scaling`
    ("tensor", "row", "block"), one per distinct key of the scales the op passes, with the
    scale layouts of `gemm_fp8.quantize_rows` and `gemm_fp8_blockwise.quantize_blocks` (W's
    block scales (ceil(N/128), ceil(K/128)) passed as their .t(): `variants.scales`): rowwise
    and block-scaled products of one row (decode: `token_tiles` not empty) key apart from
    longer ones where the scales' strides differ. Batch rows, N and K are otherwise launch
    arguments. [] without a hidden size. ArgumentError naming `fp8_types` (a pair that is no
    two of e4m3/e5m2, or e5m2 x e5m2, which torch refuses too) or `fp8_scaling`."""
    from . import variants as gemms
    from .kernels import gemm_fp8

    if not hidden_size:
        return []
    tiles = gemms.token_tiles(token_tiles)
    pairs = [tuple(p) for p in fp8_types]
    for p in pairs:
        if len(p) != 2 or not set(p) <= set(gemm_fp8.FP8) or p == ("e5m2", "e5m2"):
            raise ArgumentError("fp8_types", f"{p!r}: pairs of the FP8 types of a and b, "
                                             "'e4m3' or 'e5m2' (not both e5m2)")
    for form in fp8_scaling:
        if form not in FORMS:
            raise ArgumentError("fp8_scaling", f"{form!r}: one of {', '.join(FORMS)}")
    rows = ([1] if tiles else []) + ([128] if tiles or prefill else [])
    shapes = gemms.linear_shapes(hidden_size, intermediate_size, head_dim, num_heads,
                                 num_kv_heads)
    found = []
    for types in pairs:
        for form in fp8_scaling:
            keys: dict = {}
            for M in rows:
                for N, K in shapes:
                    sa, sb = gemms.scales(form, M, N, K)
                    key = (gemms.scale_spec(sa.shape, [s // 4 for s in sa.strides]),
                           gemms.scale_spec(sb.shape, [s // 4 for s in sb.strides]))
                    keys.setdefault(key, (M, N, K))
            label = f"scaled_matmul {form} {types[0]} x {types[1]}"
            for M, N, K in keys.values():
                name = label + (f" (as M {M} N {N} K {K})" if len(keys) > 1 else "")
                found.append(gemms.scaled(types, form, M, N, K, name))
    return found
