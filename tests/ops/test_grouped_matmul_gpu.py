"""tylo.ops.grouped_matmul on a Hopper GPU: MoE shapes with ragged and empty groups (fresh
random inputs, the output's memory poisoned with NaN first) against float32 torch per group;
rows past the last group; float32 output; the persistent kernel on small grids (long walks over
the tiles); CUDA graph capture and replay with new offsets (no host sync: the kernel reads them
on the device); against torch._grouped_mm where present."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import tylo.ops  # noqa: E402

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("hopper")]


def inputs(sizes, N, K, extra_rows=0):
    T = sum(sizes) + extra_rows
    a = torch.randn(T, K, device="cuda").bfloat16()
    b = (torch.randn(len(sizes), N, K, device="cuda") / K ** 0.5).bfloat16()
    offsets = torch.tensor(sizes, device="cuda").cumsum(0).to(torch.int32)
    return a, b, offsets


def reference(a, b, sizes):
    """float32 torch per group (a list of (start, end, product))."""
    out, start = [], 0
    for g, n in enumerate(sizes):
        out.append((start, start + n, a[start:start + n].float() @ b[g].float().T))
        start += n
    return out


def check(out, a, b, sizes, tol):
    for start, end, ref in reference(a, b, sizes):
        got = out[start:end].float()
        assert not got.isnan().any(), (start, end)
        if end > start:
            assert ((got - ref).abs().max() / ref.abs().max().clamp_min(1e-6)).item() < tol


def poisoned_call(fn, shape, dtype):
    """fn() right after a NaN block of the output's size went back to torch's caching
    allocator (the op's output is allocated there: unwritten elements stay NaN)."""
    poison = torch.full(shape, float("nan"), dtype=dtype, device="cuda")
    del poison
    return fn()


SIZES = {
    "ragged": ([0, 130, 0, 1, 511, 128, 127, 0, 1000, 64], 4096, 1024),
    "moe8": ([512, 0, 777, 2048, 33, 1500, 0, 4096], 4096, 2048),
    "moe64": ([(i * 37) % 300 for i in range(64)], 2048, 7168),
    "n-tail": ([100, 0, 300], 1000, 520),
}


@pytest.mark.parametrize("case", list(SIZES))
@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float32], ids=str)
def test_matches_float32_torch_per_group(case, out_dtype):
    sizes, N, K = SIZES[case]
    a, b, offsets = inputs(sizes, N, K)
    out = poisoned_call(lambda: tylo.ops.grouped_matmul(a, b, offsets, out_dtype=out_dtype),
                        (a.shape[0], N), out_dtype)
    torch.cuda.synchronize()
    assert out.shape == (a.shape[0], N) and out.dtype == out_dtype
    check(out, a, b, sizes, 2e-2 if out_dtype == torch.bfloat16 else 1e-3)


def test_rows_past_the_last_group_are_untouched():
    """The kernel into a NaN output: group rows written, the 50 rows past the last group not."""
    from tylo.ops import grouped_matmul_op as op

    sizes = [70, 0, 200]
    a, b, offsets = inputs(sizes, 512, 256, extra_rows=50)
    out = torch.full((320, 512), float("nan"), dtype=torch.bfloat16, device="cuda")
    v, k = op.check(a, b, offsets, torch.bfloat16), op.kernel
    tylo.ops.wrap(k.grouped_matmul)[k.grid(320, 512, 3, op.ctas(a.device)), k.THREADS](
        k.bind_a(v, a), k.bind_b(v, b), out, offsets, 320, 512, 256, v)
    torch.cuda.synchronize()
    check(out, a, b, sizes, 2e-2)
    assert out[270:].isnan().all()


@pytest.mark.parametrize("ctas", [1, 7])
@pytest.mark.parametrize("b_major", ["K", "N"])
def test_small_persistent_grids(ctas, b_major):
    """The kernel on 1 and 7 CTAs (each walks many tiles: the pipeline's phases run on across
    them; b_major "N" is the backward's grad_a variant) into a NaN output: group rows right,
    the 50 rows past the last group NaN."""
    from tylo.ops import grouped_matmul_op as op

    sizes = [70, 0, 200, 300, 1, 0, 129]
    a, b, offsets = inputs(sizes, 768, 512, extra_rows=50)
    if b_major == "N":
        b = b.transpose(1, 2).contiguous()  # (G, K, N), N contiguous
        ref_b = b.transpose(1, 2)
    else:
        ref_b = b
    out = torch.full((750, 768), float("nan"), dtype=torch.bfloat16, device="cuda")
    k = op.kernel
    v = k.Variant("bfloat16", False, b_major)
    tylo.ops.wrap(k.grouped_matmul)[ctas, k.THREADS](
        k.bind_a(v, a), k.bind_b(v, b), out, offsets, 750, 768, 512, v)
    torch.cuda.synchronize()
    check(out, a, ref_b, sizes, 2e-2)
    assert out[700:].isnan().all()


def test_cuda_graph_replay_with_new_offsets():
    """Captured once, replayed after the offsets (on the device) change: no host sync."""
    sizes, N, K = [100, 0, 300, 112], 512, 256
    a, b, offsets = inputs(sizes, N, K)
    tylo.ops.grouped_matmul(a, b, offsets)  # compile outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = tylo.ops.grouped_matmul(a, b, offsets)
    for new in ([0, 256, 0, 256], [512, 0, 0, 0], [1, 2, 3, 506]):
        offsets.copy_(torch.tensor(new, device="cuda").cumsum(0).to(torch.int32))
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        check(out, a, b, new, 2e-2)


def test_matches_torch_grouped_mm():
    if not hasattr(torch, "_grouped_mm"):
        pytest.skip("this torch has no torch._grouped_mm")
    sizes, N, K = [0, 300, 17, 1024, 0, 256], 2048, 1024
    a, b, offsets = inputs(sizes, N, K)
    ours = tylo.ops.grouped_matmul(a, b, offsets).float()
    theirs = torch._grouped_mm(a, b.transpose(-2, -1), offs=offsets).float()
    assert ((ours - theirs).abs().max() / theirs.abs().max()).item() < 2e-2
