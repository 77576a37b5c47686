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
int32 counter per 64 rows of R, allocated per call from torch's caching allocator); M > 64
(prefill) runs `tylo.ops.kernels.gate_up` (the Hopper GEMM with W_gate's and W_up's rows as the
two halves of its B tile and silu(g) * u in its epilogue). Neither writes g or u to memory.

Backward (``backward()`` through the op): with g = x w_gate^T and u = x w_up^T RECOMPUTED in
bf16 by the Hopper GEMM (`tylo.ops.kernels.gemm`, TN: x and the weights as they lie; two
M x R x K products, the forward's cost) rather than saved: saving them would cost 4 M R bytes
per layer kept from the forward to the backward (470 MB at M = 8192, R = 14336), which is
what activation memory in training cannot spare, and would make the forward write them (2 M R
more bytes of stores in the inference kernel). Then the elementwise kernel `swiglu_backward`
(f32 inside): dU = dh silu(g), dG = dh u s(g) (1 + g (1 - s(g))), s the sigmoid; then
dx = dG w_gate + dU w_up, dw_gate = dG^T x, dw_up = dU^T x on the same TN GEMM, which reads
both operands K-contiguous: three operands are COPIED, explicitly (`_products`).

CUDA tensors run on the GPU (sm_90: H100, H200), on torch's current stream, capturable in CUDA
graphs (warm up once first: the first call of a shape compiles); CPU tensors on the CPU emulator
(small sizes: tests). ``torch.compile(fullgraph=True)`` traces it (fake implementation).
"""

from __future__ import annotations

import torch

import tylo
from tylo import ArgumentError, BFloat16, Float32, UnsupportedError

from .kernels import gate_up as fused
from .kernels import gemm
from .kernels import projection
from .kernels.common import sm_count
from .library import custom_op, wrap

#: The most rows of x the decode kernel (projection) takes; more go to the fused GEMM.
DECODE_ROWS = projection.MAX_TOKENS
#: R's required multiple (the decode kernel's unit of weight rows).
R_MULTIPLE = projection.ROWS
BLOCK = 256  # threads per block of swiglu_backward


def _rows(x: torch.Tensor) -> torch.Tensor:
    """x (..., K) as its (M, K) view; ArgumentError when the leading dims do not flatten."""
    if x.dim() < 1:
        raise ArgumentError("x", "is a 0-d tensor; gate_up takes (..., K)")
    try:
        return x.view(-1, x.shape[-1])
    except RuntimeError:
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
    if x.device.type == "cuda" and torch.cuda.get_device_capability(x.device) != (9, 0):
        major, minor = torch.cuda.get_device_capability(x.device)
        raise UnsupportedError(f"tylo.ops.gate_up runs on Hopper (sm_90: H100, H200); "
                               f"{x.device} is sm_{major}{minor}")
    return x2


def _fake(x, w_gate, w_up):
    _check(x, w_gate, w_up)
    return x.new_empty((*x.shape[:-1], w_gate.shape[0]))


@custom_op("tylo::gate_up", fake=_fake)
def _gate_up(x: torch.Tensor, w_gate: torch.Tensor, w_up: torch.Tensor) -> torch.Tensor:
    """The op behind `gate_up` (module docstring)."""
    x2 = _check(x, w_gate, w_up)
    M, R = x2.shape[0], w_gate.shape[0]
    out = x.new_empty((*x.shape[:-1], R))
    if M == 0:
        return out
    out2 = out.view(M, R)
    cpu = x.device.type == "cpu"
    if M <= DECODE_ROWS:
        run = projection.Projection(x2, w_gate, w_up, out2, emulate=cpu)
        wrap(projection.projection)[run.ctas, projection.THREADS](
            *run.maps, run.ws, run.counts, run.R, run.K, run.n, run.stages)
    else:
        run = fused.GateUp(x2, w_gate, w_up, out2, ctas=1 if cpu else sm_count(), emulate=cpu)
        wrap(fused.gate_up)[run.grid, fused.THREADS](*run.maps, run.M, run.R, run.K)
    return out


# -- backward ---------------------------------------------------------------------------------

@tylo.kernel
def swiglu_backward(dgu, g, u, dh, R, n):
    """dG = dh u s(g) (1 + g (1 - s(g))) into dgu[:, :R], dU = dh silu(g) into dgu[:, R:] (s
    the sigmoid), for the n = M R elements of g, u, dh (bf16, flat (M, R) row-major) and dgu
    (M, 2R) bf16; f32 inside, rounded once; one element per thread."""
    i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
    if i < n:
        m = i // R
        r = i % R
        gi = g[i].to(Float32)
        di = dh[i].to(Float32)
        s = tylo.sigmoid(gi)
        dgu[m, r + R] = (di * gi * s).to(BFloat16)
        dgu[m, r] = (di * u[i].to(Float32) * s * (1.0 + gi * (1.0 - s))).to(BFloat16)


def _gemm(a: torch.Tensor, bt: torch.Tensor, c: torch.Tensor) -> None:
    """c (M, N) = a (M, K) @ bt (N, K)^T with `tylo.ops.kernels.gemm` (TN, K-contiguous rows)."""
    M, N, K = a.shape[0], bt.shape[0], a.shape[1]
    ctas = 1 if a.device.type == "cpu" else sm_count()
    wrap(gemm.gemm)[gemm.grid(M, N, ctas, 1), gemm.THREADS](*gemm.bindings(a, bt, c, 1), M, N, K)


def _swiglu_grads_fake(x, w_gate, w_up, dh):
    x2 = _check(x, w_gate, w_up)
    return x.new_empty((x2.shape[0], 2 * w_gate.shape[0]))


@custom_op("tylo::gate_up_swiglu_grads", fake=_swiglu_grads_fake)
def _swiglu_grads(x: torch.Tensor, w_gate: torch.Tensor, w_up: torch.Tensor,
                  dh: torch.Tensor) -> torch.Tensor:
    """[dG | dU] (M, 2R) bf16 (dG in columns [0, R), dU in [R, 2R)): g and u recomputed by two
    TN GEMMs (x and the weights as they lie), then `swiglu_backward`. dh (..., R) is read
    as (M, R) rows: a dh that is not contiguous (an expanded gradient) is copied first."""
    x2 = _check(x, w_gate, w_up)
    M, R = x2.shape[0], w_gate.shape[0]
    dgu = x.new_empty((M, 2 * R))
    if M == 0:
        return dgu
    g, u = x.new_empty((M, R)), x.new_empty((M, R))
    _gemm(x2, w_gate, g)
    _gemm(x2, w_up, u)
    dh = dh.reshape(M, R).contiguous()
    n = M * R
    wrap(swiglu_backward)[(n + BLOCK - 1) // BLOCK, BLOCK](dgu, g.view(-1), u.view(-1),
                                                           dh.view(-1), R, n)
    return dgu


def _gemm_tn_fake(a, bt):
    return a.new_empty((a.shape[0], bt.shape[0]))


@custom_op("tylo::gate_up_gemm_tn", fake=_gemm_tn_fake, tensors={"a": BFloat16, "bt": BFloat16},
           contiguous=True)
def _gemm_tn(a: torch.Tensor, bt: torch.Tensor) -> torch.Tensor:
    """a (M, K) @ bt (N, K)^T -> (M, N) bf16: the backward's products on `tylo.ops.kernels.gemm`."""
    c = a.new_empty((a.shape[0], bt.shape[0]))
    if c.numel():
        _gemm(a, bt, c)
    return c


def _products(x2, w_gate, w_up, dgu):
    """(dx (M, K), dw_gate (R, K), dw_up (R, K)) from [dG | dU] (M, 2R) with the TN GEMM, whose
    operands are both K-contiguous. Its reductions run over R and M, along which x, the
    weights and dgu are not contiguous, so three operands are COPIED (explicitly, here):
    [w_gate; w_up]^T (K, 2R) (the weights' size, 2 R K elements), dgu^T (2R, M) and x^T (K, M)
    (M padded with zeros to a multiple of 8, `_transposed`).
    Then dx = dgu @ [w_gate; w_up] is one GEMM over 2R, and [dw_gate; dw_up] = dgu^T x one
    GEMM over M."""
    w_t = torch.cat((w_gate, w_up)).T.contiguous()        # copy: (K, 2R)
    dx = _gemm_tn(dgu, w_t)
    dw = _gemm_tn(_transposed(dgu), _transposed(x2))      # copies: (2R, M8), (K, M8)
    R = w_gate.shape[0]
    return dx, dw[:R], dw[R:]


def _transposed(t: torch.Tensor) -> torch.Tensor:
    """A COPY of t (M, N)^T as (N, M8) row-major, M8 = M rounded up to a multiple of 8 with
    zero columns (TMA row strides are 16-byte multiples; zeros add nothing to the products)."""
    M, N = t.shape
    out = t.new_empty((N, -(-M // 8) * 8))
    out[:, :M].copy_(t.T)
    out[:, M:].zero_()
    return out


def _setup_context(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def _backward(ctx, dh):
    x, w_gate, w_up = ctx.saved_tensors
    dgu = _swiglu_grads(x, w_gate, w_up, dh)
    dx, dw_gate, dw_up = _products(_rows(x), w_gate, w_up, dgu)
    return dx.view(x.shape), dw_gate, dw_up


_gate_up.register_autograd(_backward, setup_context=_setup_context)


def gate_up(x: torch.Tensor, w_gate: torch.Tensor, w_up: torch.Tensor) -> torch.Tensor:
    """silu(x w_gate^T) * (x w_up^T) (module docstring): x bf16 (..., K), w_gate and w_up bf16
    (R, K) -> bf16 (..., R). Raises ArgumentError naming the argument (dtype, shape, strides,
    R not a multiple of 64, K not of 8, tensors on two devices), UnsupportedError on a GPU
    that is not sm_90."""
    return _gate_up(x, w_gate, w_up)
