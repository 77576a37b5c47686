"""``tylo.ops.matmul``: the Hopper GEMM (`tylo.ops.kernels.gemm_layouts`) as the PyTorch custom
op ``tylo::matmul``, with autograd, reading both operands where they lie.

    y = tylo.ops.matmul(x, w.T)                       # x (M, K), nn.Linear weight w (N, K)
    y = tylo.ops.matmul(x, w2, out_dtype=torch.float32)  # w2 (K, N) row-major, float32 C
    y = tylo.ops.matmul(h, w.T)                       # h (B, S, K): a view (B S, K) (no copy)

a: (M, K), b: (K, N), both torch.bfloat16 or both torch.float16; a may also be (..., M, K) when
its leading axes merge into one by a view (b 2-D). Returns a new (M, N) (or (..., M, N))
row-major tensor of `out_dtype` (default: a's dtype; torch.bfloat16, torch.float16 or
torch.float32), accumulated in float32.

Memory orders, no copy: each operand is read where it lies when one of its two axes is
contiguous: a row-major or a column-major view (a = x or x.T, b = w or w.T); the kernel has
a variant for each of the four pairs. The TMA rules that remain (cuTensorMapEncodeTiled's, as
docs/facts/tma_constraints.md numbers them) are checked and refused with an ArgumentError
naming the operand and the rule, never copied silently: the other axis's stride is a multiple
of 16 bytes (R5: 8 elements of a 16-bit type, so a contiguous (M, K) needs K % 8 == 0), the
first element is 16-byte aligned (R3), and the output's rows are 16-byte multiples (N % 8 == 0,
N % 4 == 0 for float32). Tails of M, N and K that are no multiple of the 128 x 256 x 64 tile
are zero-filled by TMA. M, N or K of 0 give an empty or zero result without a launch.

Backward (`register_autograd`): grad_a = grad @ b^T and grad_b = a^T @ grad, each through
``tylo::matmul`` on transposed views (no copies); a float32 gradient (out_dtype float32) is
rounded to the inputs' dtype first, and a gradient in no readable memory order (a broadcast
one, stride 0) is made contiguous (those two are copies, in the backward only).

CUDA tensors run on a Hopper GPU (sm_90; another is refused with UnsupportedError) on torch's
current stream (CUDA graph capture records it); CPU tensors run on the CPU emulator (small
sizes: tests). ``torch.compile(fullgraph=True)`` traces it (a fake implementation gives the
output's shape).

Which kernel runs (`path`): M <= 64 rows (decode) with a row-major (K-contiguous) a and a
K-major b (b = W.T, the nn.Linear case) and a bf16/f16 output run the swap-AB kernel of
`tylo.ops.kernels.projection` (its plain epilogue: W's rows are WGMMA's M, the tokens its N,
Stream-K over units of 128 rows of W with one CTA per SM, the weights streamed once; a small f32
workspace and an int32 counter per unit, kept per CUDA stream: the kernel leaves the counters
at zero) Every other shape, memory
order or a float32 output runs the 128 x 256 persistent GEMM (`route`), which at M <= 64 leaves
most SMs idle (16 CTAs for N = 4096). The backward's products route by their own rows and
layouts: with a = x and b = W.T, grad_a = grad @ W reads W N-major and grad_b = x.T @ grad
(M is its K) reads x.T M-major, so both run on the GEMM.
"""

from __future__ import annotations


import functools
import threading

import torch

from tylo import ArgumentError, TyloError, prepare_tma

from .device import require_hopper, sm_count
from .kernels import gemm_layouts as kernel
from .kernels import projection
from .library import custom_op, direct, wrap
from .maps import bound
from .variants import TOKEN_TILES

_DTYPES = {torch.bfloat16: "bfloat16", torch.float16: "float16"}
_OUT_DTYPES = {**_DTYPES, torch.float32: "float32"}
_BYTES = {torch.bfloat16: 2, torch.float16: 2, torch.float32: 4}
_ALIGN = 16  # bytes: TMA's base address (R3) and global strides (R5)
CPU_CTAS = 2  # the emulator's persistent grid (two CTAs walk the tiles in turn)
#: The most rows of a (M) the swap-AB decode kernel takes (`path`).
DECODE_ROWS = projection.MAX_TOKENS
CPU_DECODE_CTAS = 3  # the emulator's Stream-K grid: three CTAs, so that units are cut


def _major(x: torch.Tensor, name: str, axes: str) -> str:
    """The name of the contiguous logical axis of the 2-D `x` ("K" for a K-contiguous a (M, K)
    ...; `axes` names its two axes) whose other stride TMA can describe: ArgumentError naming
    `name` and the rule otherwise."""
    e = x.element_size()
    candidates = [i for i in (1, 0) if x.stride(i) == 1 or x.shape[i] == 1]
    if not candidates:
        raise ArgumentError(name, f"has strides {tuple(x.stride())} for shape {tuple(x.shape)}: "
                                  "tylo.ops.matmul reads a matrix with one contiguous axis (a "
                                  "row- or column-major view, x or x.T); pass x.contiguous()")
    for i in candidates:
        other = x.stride(1 - i)
        if (other * e) % _ALIGN == 0 and other >= x.shape[i]:
            return axes[i]
    i = candidates[0]
    other = x.stride(1 - i)
    raise ArgumentError(name, f"has shape {tuple(x.shape)} and strides {tuple(x.stride())}: axis "
                              f"{1 - i}'s stride of {other} elements ({other * e} B) is not a "
                              f"multiple of 16 bytes, which TMA needs (rule R5 of "
                              f"cuTensorMapEncodeTiled): with axis {i} ({axes[i]}) contiguous, "
                              f"{axes[i]} = {x.shape[i]} must be a multiple of {_ALIGN // e} "
                              f"for {x.dtype} (pad it)")


def require_aligned(name: str, x: torch.Tensor) -> None:
    """ArgumentError naming `name` unless x's first element is 16-byte aligned (TMA's rule R3;
    a fake or meta tensor: by its storage offset only)."""
    offset = (x.storage_offset() * x.element_size()) % _ALIGN
    if offset == 0 and not x.is_meta and type(x) is torch.Tensor:
        offset = x.data_ptr() % _ALIGN
    if offset:
        raise ArgumentError(name, f"starts {offset} bytes past a 16-byte boundary: TMA "
                                  "needs a 16-byte-aligned first element (rule R3 of "
                                  "cuTensorMapEncodeTiled); pass x.contiguous()")


#: One Variant object per specialization, so that its cached boxes and plans are built once.
_variant = functools.lru_cache(maxsize=None)(kernel.Variant)


def _check(a: torch.Tensor, b: torch.Tensor, out_dtype: torch.dtype) -> kernel.Variant | None:
    """The argument rules (module docstring), in the real and the fake implementation; the
    kernel variant that reads a and b where they lie (None when M, N or K is 0: no launch)."""
    for name, x in (("a", a), ("b", b)):
        if x.dim() != 2:
            raise ArgumentError(name, f"has {x.dim()} dimensions; tylo.ops.matmul takes "
                                      + ("a (M, K) matrix (or (..., M, K) with b 2-D)"
                                         if name == "a" else "a (K, N) matrix"))
        if x.dtype not in _DTYPES:
            raise ArgumentError(name, f"is {x.dtype}; tylo.ops.matmul takes torch.bfloat16 or "
                                      "torch.float16")
    if b.dtype != a.dtype:
        raise ArgumentError("b", f"is {b.dtype}, a is {a.dtype}: both operands take one dtype")
    if out_dtype not in _OUT_DTYPES:
        raise ArgumentError("out_dtype", f"is {out_dtype}; tylo.ops.matmul writes torch.bfloat16, "
                                         "torch.float16 or torch.float32")
    if a.shape[1] != b.shape[0]:
        hint = (" (an nn.Linear weight (N, K) is passed as w.T)"
                if b.shape[1] == a.shape[1] else "")
        raise ArgumentError("b", f"has shape {tuple(b.shape)}, a {tuple(a.shape)}: b's rows "
                                 f"({b.shape[0]}) must equal a's columns (K = {a.shape[1]})"
                                 + hint)
    require_hopper(a.device, "tylo.ops.matmul")
    M, K = a.shape
    N = b.shape[1]
    if not (M and N and K):
        return None
    majors = _major(a, "a", "MK"), _major(b, "b", "KN")
    for name, x in (("a", a), ("b", b)):
        require_aligned(name, x)
    out_bytes = _BYTES[out_dtype]
    if (N * out_bytes) % _ALIGN:
        raise ArgumentError("b", f"has N = {N} columns: the output's rows of {N * out_bytes} B "
                                 "are not a multiple of 16 bytes, which its TMA store needs (rule "
                                 f"R5 of cuTensorMapEncodeTiled): N must be a multiple of "
                                 f"{_ALIGN // out_bytes} for {out_dtype}")
    return _variant(_DTYPES[a.dtype], *majors, _OUT_DTYPES[out_dtype])


def path(M: int, v: kernel.Variant) -> str:
    """The kernel that runs an M-row product of variant v: "decode" (`tylo.ops.kernels.
    projection`'s plain swap-AB Stream-K kernel, the weights streamed once over every SM) when
    M <= DECODE_ROWS, a K-major (row-major (M, K)), b K-major (b = W.T of an nn.Linear weight
    W (N, K)) and a 16-bit output; "gemm" (`tylo.ops.kernels.gemm_layouts`, 128 x 256 tiles)
    otherwise (more rows, another memory order, a float32 output)."""
    if (M <= DECODE_ROWS and v.a_major == "K" and v.b_major == "K"
            and v.out in projection.DTYPES):
        return "decode"
    return "gemm"


def route(M: int, N: int, device: torch.device) -> int:
    """The GEMM's persistent grid of an (M, N) output: one CTA per SM at most (the GPU's SM
    count), no more than the 128 x 256 tiles; `CPU_CTAS` on the emulator."""
    ctas = CPU_CTAS if device.type == "cpu" else sm_count(device.index or 0)
    return kernel.grid(M, N, ctas)


def _decode(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
    """out = a @ b on the swap-AB kernel (`path` "decode"): W = b.T (N, K) streamed once by a
    Stream-K grid of one CTA per SM (`CPU_DECODE_CTAS` on the emulator); its f32 workspace and
    zeroed counters are kept per stream (`projection._buffers`; a CUDA graph capture allocates
    its own)."""
    cpu = a.device.type == "cpu"
    ctas = CPU_DECODE_CTAS if cpu else sm_count(a.device.index or 0)
    run = projection.Linear(a, b.T, out, ctas, emulate=cpu)
    wrap(projection.projection)[run.ctas, projection.THREADS](*run.args)


def _decode_cuda(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, caches: tuple,
                 state: list) -> None:
    """`_decode` on CUDA tensors of a known geometry: the `projection.Linear` of the first call
    gives the tile plans, grid, buffer shapes and constants (`state[1]`; the Linear itself, which
    holds the arrays, is not kept), the tensor maps come from `caches`
    by address, the workspace and counters from `projection._buffers` (per stream), and one
    prepared launch per geometry (`state[0]`) swaps them in."""
    shape = state[1]
    if shape is None:  # (plans, grid, buffer shapes, constants: no array kept)
        run = projection.Linear(a, b.T, out, sm_count(a.get_device()))
        shape = state[1] = ([m.plan for m in run.maps], run.ctas, tuple(run.ws.shape),
                            run.counts.shape[0], run.args[6:])
    (w_plan, _, x_plan, out_plan), ctas, ws_shape, units, constants = shape
    w = _bound(caches[1], w_plan, b.T)
    maps = (w, w, _bound(caches[0], x_plan, a.T), _bound(caches[2], out_plan, out))
    ws, counts = projection._buffers(a, ws_shape, units)
    with _PREPARED_LOCK:
        launch = state[0]
        if launch is None:
            launch = state[0] = projection.projection[ctas, projection.THREADS].prepare(
                *maps, ws, counts, *constants)
        launch(*maps, ws, counts, *constants)


def _fake(a, b, out_dtype):
    _check(a, b, out_dtype)
    return a.new_empty((a.shape[0], b.shape[1]), dtype=out_dtype)


#: A call's (dtypes, shapes, strides, devices) -> (Variant or None, path, grid, tensor-map
#: caches of a, b and out by address, [prepared launch, decode shapes]): the rules of `_check`
#: and the routing, done once per geometry (an address's alignment, per call).
_PLANS: dict = {}
_PLAN_ENTRIES = 1024


def _plan(a: torch.Tensor, b: torch.Tensor, out_dtype: torch.dtype) -> tuple:
    """The `_PLANS` entry of a real call on one device, checked (`_check`) on a miss."""
    key = (a.dtype, b.dtype, out_dtype, a.shape, a.stride(), b.shape, b.stride(), a.device,
           b.device)
    plan = _PLANS.get(key)
    if plan is not None and not (a.data_ptr() | b.data_ptr()) % _ALIGN:
        return plan
    v = _check(a, b, out_dtype)
    M, N = a.shape[0], b.shape[1]
    kind = None if v is None else path(M, v)
    plan = v, kind, route(M, N, a.device) if kind == "gemm" else 0, ({}, {}, {}), [None, None]
    if len(_PLANS) >= _PLAN_ENTRIES:
        _PLANS.clear()
    _PLANS[key] = plan
    return plan


def _run(a: torch.Tensor, b: torch.Tensor, out_dtype: torch.dtype) -> torch.Tensor:
    """a (M, K) @ b (K, N) -> a new (M, N) of out_dtype: the op's implementation, which
    `matmul` also calls directly when torch need not see the call (`library.direct`)."""
    v, kind, ctas, caches, prepared = _plan(a, b, out_dtype)
    (M, K), N = a.shape, b.shape[1]
    out = torch.empty((M, N), dtype=out_dtype, device=a.device)
    if v is None:
        return out.zero_()
    if kind == "decode":
        if a.is_cuda:
            _decode_cuda(a, b, out, caches, prepared)
        else:
            _decode(a, b, out)
        return out
    if a.is_cuda:  # a real CUDA tensor: the launch itself (wrap's checks are for any tensor)
        maps = (_bound(caches[0], v.a_box, a), _bound(caches[1], v.b_box, b),
                _bound(caches[2], v.c_box, out))
        with _PREPARED_LOCK:  # (one prepared launch swaps its arguments at a time)
            launch = prepared[0]
            if launch is None:  # compiled and bound once per geometry (`Launcher.prepare`)
                launch = prepared[0] = kernel.matmul[ctas, kernel.THREADS].prepare(
                    *maps, M, N, K, v)
            launch(*maps, M, N, K, v)
    else:
        maps = kernel.bind(v.a_box, a), kernel.bind(v.b_box, b), kernel.bind(v.c_box, out)
        wrap(kernel.matmul)[ctas, kernel.THREADS](*maps, M, N, K, v)
    return out


#: A geometry's prepared launch (`Launcher.prepare`: the argument kinds checked once, each call
#: swaps the three descriptors in) is used by one thread at a time.
_PREPARED_LOCK = threading.Lock()


def _bound(cache: dict, box, x: torch.Tensor):
    """The tensor map of `box` over the CUDA tensor x, from `cache` (this geometry's, for this
    operand) by x's address: a detached binding (`maps.bound`)."""
    return bound(cache, x, prepare_tma, box)


@custom_op("tylo::matmul", fake=_fake)
def _matmul(a: torch.Tensor, b: torch.Tensor, out_dtype: torch.dtype) -> torch.Tensor:
    """The op behind `matmul`: a (M, K) @ b (K, N) -> (M, N) of out_dtype (module docstring)."""
    return _run(a, b, out_dtype)


def _readable(g: torch.Tensor) -> torch.Tensor:
    """The gradient as the backward's GEMMs read it: as it lies when one axis is contiguous
    with 16-byte rows, else a contiguous copy (a broadcast gradient has stride 0)."""
    try:
        _major(g, "grad", "MN")
    except ArgumentError:
        return g.contiguous()
    return g


def _setup_context(ctx, inputs, output):
    a, b, _ = inputs
    ctx.save_for_backward(a, b)


def _backward(ctx, grad):
    a, b = ctx.saved_tensors
    g = _readable(grad if grad.dtype == a.dtype else grad.to(a.dtype))
    grad_a = _matmul(g, b.T, a.dtype) if ctx.needs_input_grad[0] else None
    grad_b = _matmul(a.T, g, b.dtype) if ctx.needs_input_grad[1] else None
    return grad_a, grad_b, None


_matmul.register_autograd(_backward, setup_context=_setup_context)


def matmul(a: torch.Tensor, b: torch.Tensor, *, out_dtype: torch.dtype | None = None):
    """a @ b on the Hopper GEMM (module docstring): a (M, K) or (..., M, K), b (K, N), bf16 or
    f16; a new (M, N) (or (..., M, N)) tensor of `out_dtype` (default a's dtype). Raises
    ArgumentError naming the argument and the rule (rank, dtype, shapes, strides, TMA
    alignment, devices), UnsupportedError on a GPU other than Hopper."""
    if out_dtype is None:
        out_dtype = a.dtype
    if a.dim() > 2 and b.dim() == 2:
        lead = a.shape[:-1]
        try:
            flat = a.view(-1, a.shape[-1])
        except (RuntimeError, ValueError):  # (fake tensors raise ValueError)
            raise ArgumentError("a", f"has shape {tuple(a.shape)} and strides "
                                     f"{tuple(a.stride())}: its leading axes do not merge into "
                                     "one (M) by a view, which the batched form needs (no "
                                     "copy); pass a.contiguous()") from None
        return _call(flat, b, out_dtype).view(*lead, b.shape[1])
    return _call(a, b, out_dtype)


def _call(a: torch.Tensor, b: torch.Tensor, out_dtype: torch.dtype) -> torch.Tensor:
    """The op, or its implementation directly where torch need not see it (`library.direct`:
    an eager call on plain CUDA tensors that needs no gradient)."""
    if direct(a, b):
        try:
            return _run(a, b, out_dtype)
        except TyloError as e:  # the caller's mistake: no frames of this module
            raise e.with_traceback(None) from None
    return _matmul(a, b, out_dtype)


def variants(*, hidden_size: int | None = None, intermediate_size: int | None = None,
             head_dim: int | None = None, num_heads: int | None = None,
             num_kv_heads: int | None = None, dtype="bfloat16", token_tiles=TOKEN_TILES,
             prefill: bool = True, training: bool = False, **_) -> list:
    """The kernel variants `matmul` launches for a Llama-like model's projections x @ W.T
    (`tylo.ops.warmup`; x (M, hidden) row-major, W an nn.Linear weight (N, K) read K-major):
    with `prefill`, the GEMM (`gemm_layouts.Variant` `dtype`, a and b K-major, out `dtype`)
    for M > 64; per decode token tile in `token_tiles` (8, 16, 32, 64: M <= 64 rounded up;
    () for none) the swap-AB decode kernel, and its single-counter variant when a projection
    has N <= 128 (hidden_size, intermediate_size and the heads give the N); with `training`,
    the backward's GEMMs (grad_a = grad @ W: b N-major; grad_b = x.T @ grad: a M-major, b
    N-major). `dtype`: "bfloat16" (default) or "float16" (or the torch dtype). [] without a
    hidden size. ArgumentError naming `dtype` or `token_tiles` for a value the kernels do not
    serve."""
    from . import variants as gemms

    if not hidden_size:
        return []
    dt, tiles = gemms.dtype_name(dtype), gemms.token_tiles(token_tiles)
    found = [gemms.gemm(kernel.Variant(dt, "K", "K", dt))] if prefill else []
    shapes = gemms.linear_shapes(hidden_size, intermediate_size, head_dim, num_heads,
                                 num_kv_heads)
    singles = sorted({N <= 2 * projection.ROWS for N, _ in shapes})
    found += [gemms.decode(dt, dt, n, single) for n in tiles for single in singles]
    if training:
        found += [gemms.gemm(kernel.Variant(dt, "K", "N", dt)),
                  gemms.gemm(kernel.Variant(dt, "M", "N", dt))]
    return found
