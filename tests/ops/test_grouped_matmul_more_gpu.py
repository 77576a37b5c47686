"""tylo.ops.grouped_matmul's backward and tylo.ops.grouped_matmul_masked on a Hopper GPU (fresh
random inputs, outputs poisoned with NaN first, against float32 torch per group): gradients of
ragged and empty groups (grad_a: the Tylo kernel, b N-major; grad_b: the K-grouped kernel),
grad_b's op alone with Inf and NaN in the rows past the last group; the masked layout's valid
rows, its unwritten rows, and CUDA graph replay with new counts (no host sync)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import tylo.ops  # noqa: E402
from tylo.ops import grouped_matmul_masked_op as masked_op  # noqa: E402
from tylo.ops import grouped_matmul_op  # noqa: E402

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("hopper")]


def rel(x, ref):
    return ((x.float() - ref).abs().max() / ref.abs().max().clamp_min(1e-6)).item()


@pytest.mark.parametrize("sizes, N, K", [
    ([0, 130, 0, 1, 511, 128, 127, 0, 1000, 64], 4096, 1024),
    ([100, 0, 300], 1000, 520),  # N and K tails
], ids=["ragged", "tails"])
def test_backward_matches_float32_per_group(sizes, N, K):
    T = sum(sizes) + 40  # 40 rows past the last group: zero grad_a
    a = torch.randn(T, K, device="cuda").bfloat16().requires_grad_()
    b = (torch.randn(len(sizes), N, K, device="cuda") / K ** 0.5).bfloat16().requires_grad_()
    offsets = torch.tensor(sizes, device="cuda").cumsum(0).to(torch.int32)
    w = torch.randn(T, N, device="cuda")
    poison = torch.full((T + len(sizes) * N, K), float("nan"), device="cuda").bfloat16()
    del poison
    (tylo.ops.grouped_matmul(a, b, offsets).float() * w).sum().backward()
    torch.cuda.synchronize()
    start = 0
    for g, n in enumerate(sizes):
        rows, wg = slice(start, start + n), w[start:start + n]
        if n:
            assert rel(a.grad[rows], wg @ b[g].float()) < 2e-2, g
            assert rel(b.grad[g], wg.T @ a[rows].float()) < 2e-2, g
        else:
            assert not b.grad[g].any(), g
        start += n
    assert not a.grad[start:].any() and not a.grad.isnan().any()


@pytest.mark.parametrize("sizes, N, K", [
    ([0, 130, 0, 1, 511, 128, 127, 0, 1000, 64, 63], 4096, 1024),
    ([100, 0, 300, 5], 1000, 520),  # N and K tails
    ([(i * 37) % 300 for i in range(64)], 2048, 7168),  # 64 experts
], ids=["ragged", "tails", "moe64"])
def test_grad_b_kernel_matches_float32_per_group(sizes, N, K):
    """grad_b[g] = grad[rows of g].T @ a[rows of g] by the K-grouped kernel, its output's memory
    NaN first: every group's gradient written (an empty group's exactly zero), the rows past
    the last group (grad Inf, a NaN) and the next group's rows of a partial step unused."""
    T = sum(sizes) + 40
    grad = torch.randn(T, N, device="cuda").bfloat16()
    a = torch.randn(T, K, device="cuda").bfloat16()
    grad[sum(sizes):], a[sum(sizes):] = float("inf"), float("nan")
    offsets = torch.tensor(sizes, device="cuda").cumsum(0).to(torch.int32)
    poison = torch.full((len(sizes), N, K), float("nan"), device="cuda").bfloat16()
    del poison
    out = grouped_matmul_op._grad_b(grad, a, offsets, len(sizes))
    torch.cuda.synchronize()
    assert not out.isnan().any()
    start = 0
    for g, n in enumerate(sizes):
        if n:
            ref = grad[start:start + n].float().T @ a[start:start + n].float()
            assert rel(out[g], ref) < 2e-2, g
        else:
            assert not out[g].any(), g
        start += n


def test_masked_matches_float32_and_leaves_rows():
    counts = [0, 256, 1, 100, 255, 37, 256, 0]
    G, C, N, K = len(counts), 256, 2048, 1024
    a = torch.randn(G, C, K, device="cuda").bfloat16()
    b = (torch.randn(G, N, K, device="cuda") / K ** 0.5).bfloat16()
    cnt = torch.tensor(counts, dtype=torch.int32, device="cuda")
    out = torch.full((G, C, N), float("nan"), dtype=torch.bfloat16, device="cuda")
    v, k = masked_op._check(a, b, cnt, torch.bfloat16), masked_op.kernel
    grid = k.masked_grid(C, N, G, masked_op.ctas(a.device))
    tylo.ops.wrap(k.grouped_matmul)[grid, k.THREADS](
        k.bind_a(v, a.view(G * C, K)), k.bind_b(v, b), out.view(G * C, N), cnt, C, N, K, v)
    got = tylo.ops.grouped_matmul_masked(a, b, cnt, out_dtype=torch.float32)
    torch.cuda.synchronize()
    for g, n in enumerate(counts):
        assert out[g, n:].isnan().all(), g
        if n:
            ref = a[g, :n].float() @ b[g].float().T
            assert rel(out[g, :n], ref) < 2e-2 and rel(got[g, :n], ref) < 1e-3, g


def test_masked_cuda_graph_replay_with_new_counts():
    G, C, N, K = 4, 128, 512, 256
    a = torch.randn(G, C, K, device="cuda").bfloat16()
    b = (torch.randn(G, N, K, device="cuda") / K ** 0.5).bfloat16()
    cnt = torch.tensor([128, 0, 5, 64], dtype=torch.int32, device="cuda")
    tylo.ops.grouped_matmul_masked(a, b, cnt)  # compile outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = tylo.ops.grouped_matmul_masked(a, b, cnt)
    for new in ([0, 128, 0, 1], [7, 7, 128, 128]):
        cnt.copy_(torch.tensor(new, dtype=torch.int32, device="cuda"))
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        for g, n in enumerate(new):
            assert out[g, n:].isnan().all(), g
            if n:
                assert rel(out[g, :n], a[g, :n].float() @ b[g].float().T) < 2e-2, g
