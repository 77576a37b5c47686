"""The kernel variants of the GEMM ops (`tylo.ops.matmul`, `tylo.ops.gate_up`), for
`tylo.ops.warmup`: each `Variant`'s ``compile(arch, emulator)`` builds host (numpy) arrays
laid out as the op's call lays out its tensors and precompiles the kernel on them, so that its
disk-cache key is the one the op's first call looks up.

What a kernel's key holds besides its source (frontend/jit/kernel.py): the block shape, and per
argument its spec (runtime/arguments.py): a tensor map (``tylo.prepare_tma``) by its plan and
rank only (never its extents, strides or address); a scalar by its dtype (an int is Int32
below 2^31); a constexpr by its value; an array by its dtype, rank, the axes of stride 1 with
more than one element, and whether its base and its other strides are 16-byte multiples. So:

* `gemm_layouts.matmul`: one variant per `gemm_layouts.Variant` (dtype, A's and B's
  contiguous axes, C's dtype); M, N, K are Int32 launch arguments.
* `projection.projection`, the decode kernel (M <= 64 rows): per token tile n (8, 16, 32, 64:
  M rounded up) and `Plain` (matmul) or None (gate_up), with the stages that fit; its f32
  workspace (grid * 256, n) has one key, its Int32 counters (one per unit of weight rows: 128
  rows of W for matmul, 64 of W_gate for gate_up) another when there is a single unit (N <= 128
  for matmul, R = 64 for gate_up: the axis then has one element and is not specialized).
* `gate_up.gate_up` (prefill): one variant (four tensor maps, three Int32).
* gate_up's backward kernels `swiglu_backward` and `add_rounded`: one each (contiguous bf16
  and f32 rows whose byte strides are 16-byte multiples: R a multiple of 64).

The host arrays use stand-in extents (small, with the same specs): the variants depend on the
model's sizes only through the single-unit counters.
"""

from __future__ import annotations

from tylo import ArgumentError

from .kernels import gate_up as fused
from .kernels import gemm_layouts as layouts
from .kernels import projection

#: The decode kernel's token tiles (WGMMA's N: M <= 64 rows rounded up to one of them).
TOKEN_TILES = (8, 16, 32, 64)
K_STANDIN = 64  # K of the host arrays: K is an Int32 launch argument, not part of the key


def dtype_name(dtype) -> str:
    """"bfloat16" or "float16" for such a name or torch dtype; ArgumentError naming `dtype`."""
    name = str(dtype).removeprefix("torch.")
    if name not in layouts.DTYPES:
        raise ArgumentError("dtype", f"{dtype!r}: the GEMM ops take bfloat16 or float16")
    return name


def token_tiles(tiles) -> tuple[int, ...]:
    """The decode token tiles asked for (each one of `TOKEN_TILES`); ArgumentError naming
    `token_tiles` for another."""
    tiles = tuple(tiles)
    for n in tiles:
        if n not in TOKEN_TILES:
            raise ArgumentError("token_tiles", f"{n!r}: the decode kernel's token tiles are "
                                               f"{', '.join(map(str, TOKEN_TILES))} (M <= 64 "
                                               "rows rounded up)")
    return tiles


def linear_shapes(hidden_size: int, intermediate_size: int | None = None,
                  head_dim: int | None = None, num_heads: int | None = None,
                  num_kv_heads: int | None = None) -> list[tuple[int, int]]:
    """(N, K) of the projections x @ W.T of a Llama-like block, W (N, K): q (Hq D, hidden), k
    and v (Hkv D, hidden), o (hidden, Hq D), gate and up (intermediate, hidden), down
    (hidden, intermediate); the attention ones as hidden x hidden without head counts."""
    q = num_heads * head_dim if num_heads and head_dim else hidden_size
    kv = (num_kv_heads or num_heads) * head_dim if num_heads and head_dim else hidden_size
    shapes = [(q, hidden_size), (kv, hidden_size), (hidden_size, q)]
    if intermediate_size:
        shapes += [(intermediate_size, hidden_size), (hidden_size, intermediate_size)]
    return shapes


def _zeros(shape, dtype: str, major: int = 1):
    """Zeros of `shape` in the tylo dtype named `dtype`, axis `major` contiguous."""
    import numpy as np

    element = layouts.OUT_DTYPES[dtype].numpy
    if major == 1:
        return np.zeros(shape, element)
    return np.zeros(shape[::-1], element).T


def _variant(op: str, name: str, build):
    from .warmup import Variant

    return Variant(op, name, build)


def gemm(v: layouts.Variant, op: str = "matmul"):
    """The warm-up `Variant` of `gemm_layouts.matmul` specialized by v (what
    ``tylo.ops.matmul`` launches for more than 64 rows, another memory order or a float32
    output): tensor maps of v's boxes over (128, 64) A, (64, 256) B and (128, 256) C host
    arrays in v's memory orders."""
    name = f"matmul gemm {v.dtype} a {v.a_major}-major b {v.b_major}-major out {v.out}"

    def build(arch, emulator):
        M, N, K = 128, 256, K_STANDIN
        a = _zeros((M, K), v.dtype, 1 if v.a_major == "K" else 0)
        b = _zeros((K, N), v.dtype, 0 if v.b_major == "K" else 1)
        c = _zeros((M, N), v.out)
        maps = layouts.bind(v.a_box, a), layouts.bind(v.b_box, b), layouts.bind(v.c_box, c)
        return layouts.matmul.precompile(*maps, M, N, K, v, block=layouts.THREADS, arch=arch,
                                         emulator=emulator)
    return _variant(op, name, build)


def decode(dtype: str, out: str, n: int, single_unit: bool = False, op: str = "matmul"):
    """The warm-up `Variant` of the plain decode kernel (`projection.Linear`: x @ W.T of at most
    64 rows, token tile n) for x and W of `dtype`, out of `out`; `single_unit`: W of at most
    128 rows (one counter)."""
    name = f"matmul decode {dtype} out {out} n{n}" + (" N<=128" if single_unit else "")

    def build(arch, emulator):
        N = 2 * projection.ROWS if single_unit else 4 * projection.ROWS
        x, W = _zeros((n, K_STANDIN), dtype), _zeros((N, K_STANDIN), dtype)
        run = projection.Linear(x, W, _zeros((n, N), out), ctas=3, emulate=True)
        return projection.projection.precompile(*run.args, block=projection.THREADS,
                                                arch=arch, emulator=emulator)
    return _variant(op, name, build)


def gated_decode(n: int, single_unit: bool = False):
    """The warm-up `Variant` of the gated decode kernel (`projection.Projection`, what
    ``tylo.ops.gate_up`` launches for at most 64 rows) at token tile n; `single_unit`: R = 64."""
    name = f"gate_up decode bfloat16 n{n}" + (" R64" if single_unit else "")

    def build(arch, emulator):
        R = projection.ROWS * (1 if single_unit else 2)
        x = _zeros((n, K_STANDIN), "bfloat16")
        Wg, Wu = (_zeros((R, K_STANDIN), "bfloat16") for _ in range(2))
        run = projection.Projection(x, Wg, Wu, _zeros((n, R), "bfloat16"), ctas=3,
                                    emulate=True)
        return projection.projection.precompile(*run.maps, run.ws, run.counts, run.R, run.K,
                                                run.n, run.stages, block=projection.THREADS,
                                                arch=arch, emulator=emulator)
    return _variant("gate_up", name, build)


def gate_up_prefill():
    """The warm-up `Variant` of the fused gate/up GEMM (`gate_up.GateUp`, more than 64 rows)."""
    def build(arch, emulator):
        x = _zeros((128, K_STANDIN), "bfloat16")
        Wg, Wu = (_zeros((128, K_STANDIN), "bfloat16") for _ in range(2))
        run = fused.GateUp(x, Wg, Wu, _zeros((128, 128), "bfloat16"), ctas=1, emulate=True)
        return fused.gate_up.precompile(*run.maps, run.M, run.R, run.K, block=fused.THREADS,
                                        arch=arch, emulator=emulator)
    return _variant("gate_up", "gate_up prefill bfloat16", build)


def elementwise(kernel, name: str, arrays, block: int):
    """The warm-up `Variant` of a one-element-per-thread kernel of gate_up's backward, on
    `arrays` ((shape, dtype name) each, row-major) then its int arguments."""
    def build(arch, emulator):
        args = [_zeros(shape, dtype) if isinstance(shape, tuple) else shape
                for shape, dtype in arrays]
        return kernel.precompile(*args, block=block, arch=arch, emulator=emulator)
    return _variant("gate_up", name, build)


def scale_spec(shape, strides) -> tuple:
    """What a float32 scale array of `shape` and element `strides` adds to a kernel's key (its
    base taken 16-byte aligned, as torch allocates): its axes of stride 1 with more than one
    element, and whether its other strides are 16-byte multiples."""
    unit = tuple(s == 1 and e > 1 for e, s in zip(shape, strides))
    return unit, all(s * 4 % 16 == 0 for e, s in zip(shape, strides) if e > 1 and s != 1)


def scales(form: str, M: int, N: int, K: int):
    """(scale_a, scale_b) as `tylo.ops.scaled_matmul` hands them to its kernel, as host arrays,
    for form "tensor" (1 element each), "row" (scale_a (M, 1), scale_b (1, N) = s.T of a
    weight's (N, 1) rows: `gemm_fp8.quantize_rows`) or "block" (scale_a (M, ceil(K/128))
    K-contiguous, scale_b = sw.t() of W's (ceil(N/128), ceil(K/128)) block scales, which the
    op passes back as sw: `gemm_fp8_blockwise.quantize_blocks`, DeepGEMM's layout)."""
    import numpy as np

    if form == "tensor":
        return np.zeros(1, np.float32), np.zeros(1, np.float32)
    if form == "row":
        return np.zeros((M, 1), np.float32), np.zeros((N, 1), np.float32).T
    kb, nb = -(-K // 128), -(-N // 128)
    return np.zeros((M, kb), np.float32), np.zeros((nb, kb), np.float32)


def scaled(types: tuple[str, str], form: str, M: int, N: int, K: int, name: str):
    """The warm-up `Variant` of the FP8 GEMM `tylo.ops.scaled_matmul` launches for `form`
    ("tensor", "row": `gemm_fp8`; "block": `gemm_fp8_blockwise`) and the FP8 `types` of a and
    b, with the scales of an (M, N, K) product (`scales`: their strides and alignment are in
    the key); a and b are (M, 128) and (128, 256) stand-ins (tensor maps: plan and rank)."""
    from tylo import prepare_tma

    from .kernels import gemm, gemm_fp8, gemm_fp8_blockwise

    def build(arch, emulator):
        import numpy as np

        kernel = gemm_fp8_blockwise if form == "block" else gemm_fp8
        a_tile, b_tile, _ = kernel.OPERANDS[types]
        a = np.zeros((M, 128), gemm_fp8.FP8[types[0]].numpy)
        b = np.zeros((256, 128), gemm_fp8.FP8[types[1]].numpy).T
        maps = (prepare_tma(a_tile, a), prepare_tma(b_tile, b),
                prepare_tma(gemm.C_TILE, _zeros((M, 256), "bfloat16")))
        sa, sb = scales(form, M, N, K)
        if form == "block":
            return kernel.gemm_fp8_blockwise.precompile(
                *maps, sa, sb, M, 256, 128, types, block=kernel.THREADS, arch=arch,
                emulator=emulator)
        return kernel.gemm_fp8.precompile(*maps, sa, sb, M, 256, 128, form == "row", types,
                                          block=kernel.THREADS, arch=arch, emulator=emulator)
    return _variant("scaled_matmul", name, build)
