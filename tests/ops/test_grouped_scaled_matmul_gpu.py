"""tylo.ops.grouped_scaled_matmul (block-scaled FP8 grouped GEMM) on a Hopper GPU: fresh random
inputs quantized in 1 x 128 / 128 x 128 blocks, the output's memory poisoned with NaN first,
against float32 torch of the dequantized inputs per group: MoE shapes with ragged and empty
groups, N and K tails, float32 output; the kernel on small persistent grids (long walks over
the tiles) leaving the rows past the last group untouched; CUDA graph replay with new offsets
(no host sync)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import tylo.ops  # noqa: E402
from tylo.ops import grouped_scaled_matmul_op as op  # noqa: E402

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("hopper")]


def inputs(sizes, N, K, extra_rows=0):
    """(a, b, scale_a, scale_b, offsets) on the GPU: x and w with rows of magnitudes 2^-4 ..
    2^4, quantized (grouped_gemm_fp8.quantize); scale_a column-major (torch's layout)."""
    T, G = sum(sizes) + extra_rows, len(sizes)
    x = torch.randn(T, K, device="cuda") * torch.exp2(torch.randint(-4, 5, (T, 1), device="cuda"))
    w = torch.randn(G, N, K, device="cuda") * torch.exp2(torch.randint(-4, 5, (G, N, 1),
                                                                      device="cuda"))
    a, sa, b, sb = op.kernel.quantize(x, w)
    offsets = torch.tensor(sizes, device="cuda").cumsum(0).to(torch.int32)
    return a, b, sa.t().contiguous().t(), sb, offsets


def check(out, args, tol):
    """Every group row finite and within `tol` (relative to the group's largest) of the
    float32 reference of the dequantized inputs."""
    ref = op.kernel.reference(*args)
    start = 0
    for end in args[-1].tolist():
        if end > start:
            got, want = out[start:end].float(), ref[start:end]
            assert not got.isnan().any(), (start, end)
            assert ((got - want).abs().max() / want.abs().max()).item() < tol, (start, end)
        start = end


SIZES = {
    "ragged": ([0, 130, 0, 1, 511, 128, 127, 0, 1000, 64], 4096, 1024),
    "moe8": ([512, 0, 777, 2048, 33, 1500, 0, 4096], 4096, 2048),
    "moe64": ([(i * 37) % 300 for i in range(64)], 2048, 7168),
    "tails": ([100, 0, 300], 1000, 528),
}


@pytest.mark.parametrize("case", list(SIZES))
@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float32], ids=str)
def test_matches_float32_dequantized_per_group(case, out_dtype):
    sizes, N, K = SIZES[case]
    args = inputs(sizes, N, K)
    poison = torch.full((args[0].shape[0], N), float("nan"), dtype=out_dtype, device="cuda")
    del poison  # the op's output reuses the block: an unwritten group row stays NaN
    out = tylo.ops.grouped_scaled_matmul(*args, out_dtype=out_dtype)
    torch.cuda.synchronize()
    assert out.shape == (args[0].shape[0], N) and out.dtype == out_dtype
    check(out, args, 2e-2 if out_dtype == torch.bfloat16 else 2e-3)


@pytest.mark.parametrize("ctas", [1, 5])
def test_small_persistent_grids(ctas):
    """The kernel on 1 and 5 CTAs (each walks tens of tiles: the pipeline's phases run on
    across them) into a NaN output: group rows right, the 50 rows past the last group NaN."""
    sizes = [70, 0, 200, 300, 1]
    a, b, sa, sb, offsets = inputs(sizes, 512, 640, extra_rows=50)
    out = torch.full((621, 512), float("nan"), dtype=torch.bfloat16, device="cuda")
    v, k = op._check(a, b, sa, sb, offsets, torch.bfloat16), op.kernel
    tylo.ops.wrap(k.grouped_scaled_matmul)[ctas, k.THREADS](
        k.bind_a(v, a), k.bind_b(v, b), out, sa, sb, offsets, 621, 512, 640, v)
    torch.cuda.synchronize()
    check(out, (a, b, sa, sb, offsets), 2e-2)
    assert out[571:].isnan().all()


def test_cuda_graph_replay_with_new_offsets():
    """Captured once, replayed after the offsets (on the device) change: no host sync."""
    a, b, sa, sb, offsets = inputs([100, 0, 300, 112], 512, 256)
    tylo.ops.grouped_scaled_matmul(a, b, sa, sb, offsets)  # compile outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = tylo.ops.grouped_scaled_matmul(a, b, sa, sb, offsets)
    for new in ([0, 256, 0, 256], [512, 0, 0, 0], [1, 2, 3, 506]):
        offsets.copy_(torch.tensor(new, device="cuda").cumsum(0).to(torch.int32))
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        check(out, (a, b, sa, sb, offsets), 2e-2)
