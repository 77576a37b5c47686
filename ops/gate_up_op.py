"""``tylo.ops.gate_up``: the Llama MLP's fused gate/up projection as the PyTorch custom op
``tylo::gate_up``, with a backward made of Tylo kernels.

    h = tylo.ops.gate_up(x, mlp.gate_proj.weight, mlp.up_proj.weight)   # silu(x Wg^T) * (x Wu^T)
    out = mlp.down_proj(h)

x: bfloat16 (..., K) (its leading dims flattened to M rows, as a view: no copy); w_gate, w_up:
bfloat16 (R, K) each, nn.Linear weights (no bias). Returns h (..., R) bfloat16:
silu(x w_gate^T) * (x w_up^T) with f32 accumulation, rounded once. R must be a multiple of 64
and K of 8; x's rows and the weights' rows K-contiguous with row strides that are multiples of
8 elements (16 bytes, the TMA rule). A broken rule is an ArgumentError naming the argument.

Routing by M (the rows of x): M <= 64 (decode) runs `tylo.ops.kernels.projection` (swap-AB
WGMMA, the weights streamed once, Stream-K; it writes and resets a small f32 workspace and an
int32 counter per 64 rows of R, kept per CUDA stream and allocated anew in a graph capture); M > 64
(prefill) runs `tylo.ops.kernels.gate_up` (the Hopper GEMM with W_gate's and W_up's rows as the
two halves of its B tile and silu(g) * u in its epilogue). Neither writes g or u to memory.

Backward (``backward()`` through the op), every product `tylo.ops.matmul` (the Hopper GEMM in
any operand layout) on views, NO copy: g = x w_gate^T and u = x w_up^T are RECOMPUTED in bf16
(two M x R x K products, the forward's cost) rather than saved: saving them would cost 4 M R bytes
per layer kept from the forward to the backward (470 MB at M = 8192, R = 14336), which is
what activation memory in training cannot spare, and would make the forward write them (2 M R
more bytes of stores in the inference kernel). Then the elementwise kernel `swiglu_backward`
(f32 inside): dU = dh silu(g), dG = dh u s(g) (1 + g (1 - s(g))), s the sigmoid, side by
side in one (M, 2R) buffer; then dx = dG w_gate + dU w_up (two float32 products added and
rounded once by `add_rounded`), [dw_gate; dw_up] = [dG | dU]^T x (one product over M).

CUDA tensors run on the GPU (sm_90: H100, H200), on torch's current stream, capturable in CUDA
graphs (warm up once first: the first call of a shape compiles); CPU tensors on the CPU emulator
(small sizes: tests). ``torch.compile(fullgraph=True)`` traces it (fake implementation).
"""

from __future__ import annotations

import torch

import tylo
from tylo import ArgumentError, BFloat16, Float32, TyloError

from .kernels import gate_up as fused
from .kernels import projection
from .library import custom_op, direct, wrap
from .device import require_hopper, sm_count
from .matmul_op import matmul
from .variants import TOKEN_TILES

#: The most rows of x the decode kernel (projection) takes; more go to the fused GEMM.
DECODE_ROWS = projection.MAX_TOKENS
#: R's required multiple (the decode kernel's unit of weight rows).
R_MULTIPLE = projection.ROWS
BLOCK = 256  # threads per block of the backward's elementwise kernels


def _rows(x: torch.Tensor) -> torch.Tensor:
    """x (..., K) as its (M, K) view; ArgumentError when the leading dims do not flatten."""
    if x.dim() < 1:
        raise ArgumentError("x", "is a 0-d tensor; gate_up takes (..., K)")
    try:
        return x.view(-1, x.shape[-1])
    except (RuntimeError, ValueError):  # (fake tensors raise ValueError)
        raise ArgumentError("x", f"has shape {tuple(x.shape)} and strides {tuple(x.stride())}: "
                                 "its leading dims do not flatten to rows without a copy; pass "
                                 "x.contiguous()") from None


def _check(x, w_gate, w_up) -> torch.Tensor:
    """The argument rules (module docstring); returns x's (M, K) view."""
    for name, t in (("x", x), ("w_gate", w_gate), ("w_up", w_up)):
        if t.dtype != torch.bfloat16:
            raise ArgumentError(name, f"is {t.dtype}; gate_up takes torch.bfloat16")
    x2 = _rows(x)
    K = x2.shape[1]
    for name, w in (("w_gate", w_gate), ("w_up", w_up)):
        if w.dim() != 2 or w.shape[1] != K:
            raise ArgumentError(name, f"has shape {tuple(w.shape)}; it must be (R, K) with "
                                      f"K = {K} (x's last dim), as an nn.Linear(K, R) weight")
    R = w_gate.shape[0]
    if tuple(w_up.shape) != (R, K):
        raise ArgumentError("w_up", f"has shape {tuple(w_up.shape)}, w_gate {tuple(w_gate.shape)}: "
                                    "they must match")
    if R % R_MULTIPLE or R == 0:
        raise ArgumentError("w_gate", f"has {R} rows; gate_up takes R a positive multiple of "
                                      f"{R_MULTIPLE}")
    if K % 8 or K == 0:
        raise ArgumentError("x", f"has K = {K}; gate_up takes K a positive multiple of 8 (TMA "
                                 "rows of 16-byte multiples)")
    for name, t in (("x", x2), ("w_gate", w_gate), ("w_up", w_up)):
        if t.stride(1) != 1 or (t.shape[0] > 1 and t.stride(0) % 8):
            raise ArgumentError(name, f"has strides {tuple(t.stride())}: gate_up reads K-"
                                      "contiguous rows whose stride is a multiple of 8 elements; "
                                      "pass it .contiguous()")
    require_hopper(x.device, "tylo.ops.gate_up")
    return x2


def _fake(x, w_gate, w_up):
    _check(x, w_gate, w_up)
    return x.new_empty((*x.shape[:-1], w_gate.shape[0]))


def _run(x: torch.Tensor, w_gate: torch.Tensor, w_up: torch.Tensor) -> torch.Tensor:
    """The op behind `gate_up` (module docstring)."""
    x2 = _check(x, w_gate, w_up)
    M, R = x2.shape[0], w_gate.shape[0]
    out = x.new_empty((*x.shape[:-1], R))
    if M == 0:
        return out
    out2 = out.view(M, R)
    cpu = x.device.type == "cpu"
    ctas = 1 if cpu else sm_count(x.device.index or 0)
    if M <= DECODE_ROWS:
        run = projection.Projection(x2, w_gate, w_up, out2, ctas, emulate=cpu)
        wrap(projection.projection)[run.ctas, projection.THREADS](
            *run.maps, run.ws, run.counts, run.R, run.K, run.n, run.stages)
    else:
        run = fused.GateUp(x2, w_gate, w_up, out2, ctas, emulate=cpu)
        wrap(fused.gate_up)[run.grid, fused.THREADS](*run.maps, run.M, run.R, run.K)
    return out


_gate_up = custom_op("tylo::gate_up", _run, fake=_fake)


# -- backward ---------------------------------------------------------------------------------

@tylo.kernel
def swiglu_backward(dgu, g, u, dh, R, n):
    """dG = dh u s(g) (1 + g (1 - s(g))) into dgu[:, :R], dU = dh silu(g) into dgu[:, R:] (s
    the sigmoid), for the n = M R elements of g, u, dh (bf16, flat (M, R) row-major) and dgu
    (M, 2R) bf16; f32 inside, rounded once; one element per thread. Int32 indices: a launch
    takes M 2R < 2^31 (`_swiglu_grads` launches row blocks of that size)."""
    i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
    if i < n:
        m = i // R
        r = i % R
        gi = g[i].to(Float32)
        di = dh[i].to(Float32)
        s = tylo.sigmoid(gi)
        dgu[m, r + R] = (di * gi * s).to(BFloat16)
        dgu[m, r] = (di * u[i].to(Float32) * s * (1.0 + gi * (1.0 - s))).to(BFloat16)


@tylo.kernel
def add_rounded(out, a, b, n):
    """out = bf16(a + b) on n elements: a, b float32, out bfloat16 (flat); one per thread."""
    i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
    if i < n:
        out[i] = (a[i] + b[i]).to(BFloat16)


#: Elements per launch of the elementwise kernels: their indices and offsets are Int32.
INDEX_LIMIT = 2 ** 31 - 1


def _launch_1d(kernel, n: int, *args) -> None:
    if n:
        wrap(kernel)[(n + BLOCK - 1) // BLOCK, BLOCK](*args, n)


def _swiglu_grads_fake(g, u, dh):
    return g.new_empty((g.shape[0], 2 * g.shape[1]))


@custom_op("tylo::gate_up_swiglu_grads", fake=_swiglu_grads_fake, contiguous=True,
           tensors={"g": BFloat16, "u": BFloat16, "dh": BFloat16})
def _swiglu_grads(g: torch.Tensor, u: torch.Tensor, dh: torch.Tensor) -> torch.Tensor:
    """[dG | dU] (M, 2R) bf16 (dG in columns [0, R), dU in [R, 2R)) from g, u, dh (M, R) bf16
    (`swiglu_backward`)."""
    M, R = g.shape
    dgu = g.new_empty((M, 2 * R))
    rows = max(1, INDEX_LIMIT // (2 * R))    # per launch: offsets into dgu stay below 2^31
    for m in range(0, M, rows):
        part = slice(m, m + rows)
        _launch_1d(swiglu_backward, min(rows, M - m) * R, dgu[part], g[part].reshape(-1),
                   u[part].reshape(-1), dh[part].reshape(-1), R)
    return dgu


def _sum_fake(a, b):
    return a.new_empty(a.shape, dtype=torch.bfloat16)


@custom_op("tylo::gate_up_sum", fake=_sum_fake, contiguous=True,
           tensors={"a": Float32, "b": Float32})
def _sum(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a + b (float32, one shape) rounded once to bfloat16 (`add_rounded`): dx's two terms."""
    out = a.new_empty(a.shape, dtype=torch.bfloat16)
    flat, fa, fb = out.view(-1), a.view(-1), b.view(-1)
    for i in range(0, flat.numel(), INDEX_LIMIT):
        part = slice(i, i + INDEX_LIMIT)
        _launch_1d(add_rounded, flat[part].numel(), flat[part], fa[part], fb[part])
    return out


def _setup_context(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def _backward(ctx, dh):
    """The backward (module docstring), every product `tylo.ops.matmul` on views, no copy:
    g = x w_gate^T and u = x w_up^T (the weights' (K, R) views, K-contiguous), [dG | dU] by
    `swiglu_backward`; dx = dG w_gate + dU w_up as two float32 products (dG and dU are column
    slices of one (M, 2R) buffer, R-contiguous; the weights read (R, K) as they lie) added and
    rounded once (`add_rounded`); [dw_gate; dw_up] = [dG | dU]^T x, one product over M (the
    (2R, M) view of the buffer, 2R-contiguous, and x (M, K)). dh is made contiguous first (a
    copy only when it is not, e.g. an expanded gradient). Products whose gradient is not
    needed (ctx.needs_input_grad) are skipped."""
    x, w_gate, w_up = ctx.saved_tensors
    x2 = _rows(x)
    M, R = x2.shape[0], w_gate.shape[0]
    g, u = matmul(x2, w_gate.T), matmul(x2, w_up.T)
    dgu = _swiglu_grads(g, u, dh.reshape(M, R).contiguous())
    dx = dw = None
    if ctx.needs_input_grad[0]:
        dx = _sum(matmul(dgu[:, :R], w_gate, out_dtype=torch.float32),
                  matmul(dgu[:, R:], w_up, out_dtype=torch.float32)).view(x.shape)
    if ctx.needs_input_grad[1] or ctx.needs_input_grad[2]:
        dw = matmul(dgu.T, x2)
    return dx, None if dw is None else dw[:R], None if dw is None else dw[R:]


_gate_up.register_autograd(_backward, setup_context=_setup_context)


def gate_up(x: torch.Tensor, w_gate: torch.Tensor, w_up: torch.Tensor) -> torch.Tensor:
    """silu(x w_gate^T) * (x w_up^T) (module docstring): x bf16 (..., K), w_gate and w_up bf16
    (R, K) -> bf16 (..., R). Raises ArgumentError naming the argument (dtype, shape, strides,
    R not a multiple of 64, K not of 8, tensors on two devices), UnsupportedError on a GPU
    that is not sm_90."""
    if direct(x, w_gate, w_up):  # an eager call that torch need not see (library.direct)
        try:
            return _run(x, w_gate, w_up)
        except TyloError as e:  # the caller's mistake: no frames of this module
            raise e.with_traceback(None) from None
    return _gate_up(x, w_gate, w_up)


def variants(*, hidden_size: int | None = None, intermediate_size: int | None = None,
             dtype="bfloat16", token_tiles=TOKEN_TILES, prefill: bool = True,
             training: bool = False, **_) -> list:
    """The kernel variants `gate_up` launches for a Llama-like model's MLP (`tylo.ops.warmup`;
    x (M, hidden_size), w_gate and w_up (intermediate_size, hidden_size)): with `prefill` the
    fused GEMM (M > 64), per decode token tile in `token_tiles` (8, 16, 32, 64; () for none)
    the gated decode kernel (its single-counter variant when intermediate_size is 64); with
    `training` the backward's: `matmul`'s variants of g and u (x @ W.T, as the forward's
    rows), dx's (dG @ w_gate: b N-major, out float32), [dw_gate; dw_up]'s ([dG | dU]^T @ x: a
    M-major, b N-major), `swiglu_backward` and `add_rounded`. [] without hidden_size and
    intermediate_size, or for a dtype other than bfloat16 (the op's only one). ArgumentError
    naming `intermediate_size` when it is not a multiple of 64 (the op refuses it), `dtype`
    or `token_tiles` as `matmul.variants`."""
    from . import variants as gemms
    from .kernels import gemm_layouts

    tiles = gemms.token_tiles(token_tiles)
    if not (hidden_size and intermediate_size) or gemms.dtype_name(dtype) != "bfloat16":
        return []
    R = intermediate_size
    if R % R_MULTIPLE:
        raise ArgumentError("intermediate_size", f"{R}: gate_up takes R (w_gate's rows) a "
                                                 f"multiple of {R_MULTIPLE}")
    bf = "bfloat16"
    found = [gemms.gate_up_prefill()] if prefill else []
    found += [gemms.gated_decode(n, R == R_MULTIPLE) for n in tiles]
    if training:
        found += [gemms.gemm(gemm_layouts.Variant(bf, "K", "K", bf))] if prefill else []
        found += [gemms.decode(bf, bf, n, R <= 2 * R_MULTIPLE) for n in tiles]
        found += [gemms.gemm(gemm_layouts.Variant(bf, "K", "N", "float32")),
                  gemms.gemm(gemm_layouts.Variant(bf, "M", "N", bf)),
                  gemms.elementwise(swiglu_backward, "gate_up swiglu_backward bfloat16",
                                    [((2, 2 * R_MULTIPLE), bf), ((2 * R_MULTIPLE,), bf),
                                     ((2 * R_MULTIPLE,), bf), ((2 * R_MULTIPLE,), bf),
                                     (R_MULTIPLE, None), (2 * R_MULTIPLE, None)], BLOCK),
                  gemms.elementwise(add_rounded, "gate_up add_rounded bfloat16",
                                    [((256,), bf), ((256,), "float32"), ((256,), "float32"),
                                     (256, None)], BLOCK)]
    return found
