"""tylo.ops.scaled_matmul (the custom op tylo::scaled_matmul) on CPU tensors, through the
emulator at small sizes with M, N and K tails: each scaling form (per-tensor, rowwise, 1x128 /
128x128 blocks) against a float64 product of the dequantized inputs (fresh random inputs whose
rows span 2**-4 .. 2**4, so that a wrong scale is an O(1) error); opcheck; torch.compile
(fullgraph=True) with no graph break; the backward's refusal; the argument checks. The GPU
tests (marked gpu) run 4096^3 and DeepSeek-V3's shapes beside torch._scaled_mm."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import tylo  # noqa: E402
import tylo.ops  # noqa: E402
import tylo.ops.scaled_matmul_op  # noqa: E402
from tylo.ops.kernels import gemm_fp8 as fp8  # noqa: E402
from tylo.ops.kernels import gemm_fp8_blockwise as blockwise  # noqa: E402

FORMS = ("tensor", "row", "block")
BLOCK = 128


def _expand(s, R: int, C: int, rows: int):
    """Block scales s (ceil(R/rows), ceil(C/128)) spread over (R, C), float64."""
    return s.double().repeat_interleave(rows, 0).repeat_interleave(BLOCK, 1)[:R, :C]


def inputs(M: int, N: int, K: int, form: str, device="cpu"):
    """(a (M, K), b (K, N) column-major, scale_a, scale_b, reference (M, N) float64): x and W
    random with rows of magnitudes 2**-4 .. 2**4, quantized to e4m3 in `form`; the reference
    is the product of the dequantized a and b in float64 (on the CPU)."""
    x = torch.randn(M, K, device=device) * torch.exp2(torch.randint(-4, 5, (M, 1), device=device))
    w = torch.randn(N, K, device=device) * torch.exp2(torch.randint(-4, 5, (N, 1), device=device))
    if form == "tensor":
        (a, sa), (wq, sw) = fp8.quantize(x), fp8.quantize(w)
        sa, sb = sa.reshape(()), sw.reshape(())
        da, dw = a.double() * sa.double(), wq.double() * sw.double()
    elif form == "row":
        (a, sa), (wq, sw) = fp8.quantize_rows(x), fp8.quantize_rows(w)
        sb = sw.t()                                            # (1, N)
        da, dw = a.double() * sa.double(), wq.double() * sw.double()
    else:
        (a, sa), (wq, sw) = blockwise.quantize_blocks(x, 1), blockwise.quantize_blocks(w, BLOCK)
        sa = sa[:M]                                            # (M, ceil(K/128))
        sb = sw.t()                                            # (ceil(K/128), ceil(N/128))
        da, dw = a.double() * _expand(sa, M, K, 1), wq.double() * _expand(sw, N, K, BLOCK)
    return a, wq.t(), sa, sb, (da @ dw.T).cpu()


def error(out, ref) -> float:
    assert out.dtype == torch.bfloat16 and out.shape == ref.shape
    assert not out.isnan().any()
    return float((out.cpu().double() - ref).norm() / ref.norm())


@pytest.mark.parametrize("form", FORMS)
def test_forms_with_tails(form):
    """M, N and K tails of every form (per-tensor and rowwise: two 128 x 256 tiles, 8 rows and
    8 columns in the second; block-scaled: 128 x 128 tiles, a K group of 32)."""
    a, b, sa, sb, ref = inputs(136, 264, 160, form)
    assert tylo.ops.scaled_matmul(a, b, sa, sb).is_contiguous()
    assert error(tylo.ops.scaled_matmul(a, b, sa, sb), ref) < 1e-2


def test_one_row_and_the_smallest_k():
    """M = 1 (a decode step) and K = 16 (one TMA row pitch), rowwise and block-scaled."""
    for form in ("row", "block"):
        a, b, sa, sb, ref = inputs(1, 136, 16, form)
        assert error(tylo.ops.scaled_matmul(a, b, sa, sb), ref) < 1e-2


def test_block_scales_in_either_memory_order():
    """torch._scaled_mm's scale_a is column-major (M contiguous); a row-major one reads the same."""
    a, b, sa, sb, ref = inputs(130, 136, 272, "block")
    out = tylo.ops.scaled_matmul(a, b, sa, sb)
    col_major = sa.t().contiguous().t()
    assert col_major.stride() == (1, 130)
    assert torch.equal(tylo.ops.scaled_matmul(a, b, col_major, sb.contiguous()), out)
    assert error(out, ref) < 1e-2


@pytest.mark.parametrize("types", [("e5m2", "e4m3"), ("e4m3", "e5m2"), ("e5m2", "e5m2")])
@pytest.mark.parametrize("form", ["tensor", "block"])
def test_e5m2_operands(types, form):
    """e5m2 a or b (or both): the WGMMA instructions of each pairing, per-tensor and
    block-scaled (the scales of the e4m3 quantization, applied to the re-rounded values)."""
    a, b, sa, sb, _ = inputs(136, 136, 144, form)
    fp = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}
    a, b = a.float().to(fp[types[0]]), b.float().to(fp[types[1]])
    if form == "tensor":
        ref = (a.double() * sa.double()) @ (b.double() * sb.double())
    else:
        ref = (a.double() * _expand(sa, 136, 144, 1)) @ (b.double() * _expand(sb.t(), 136, 144,
                                                                               BLOCK).T)
    assert error(tylo.ops.scaled_matmul(a, b, sa, sb), ref) < 1e-2


def test_empty_products():
    a, b, sa, sb, _ = inputs(128, 128, 128, "tensor")
    assert tylo.ops.scaled_matmul(a[:0], b, sa, sb).shape == (0, 128)
    zero = tylo.ops.scaled_matmul(a[:, :0], b[:0], sa, sb)
    assert zero.shape == (128, 128) and not zero.any()


def test_matches_torch_scaled_mm_per_tensor_on_the_cpu():
    """torch's CPU _scaled_mm (per-tensor scales) gives the same product."""
    a, b, sa, sb, ref = inputs(64, 128, 128, "tensor")
    try:
        theirs = torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
    except (RuntimeError, NotImplementedError, ValueError) as e:
        pytest.skip(f"torch._scaled_mm on the CPU: {e}")
    ours = tylo.ops.scaled_matmul(a, b, sa, sb)
    assert error(ours, ref) < 1e-2
    assert float((ours.double() - theirs.double()).norm() / ref.norm()) < 1e-2


@pytest.mark.parametrize("form", FORMS)
def test_opcheck(form):
    """opcheck's fake-tensor, autograd-registration and AOTAutograd (dynamic shapes) tests;
    its schema test compares FP8 tensors with a multiplication torch's CPU build does not have
    for float8 ("mul_cpu_reduced_float"), so the schema (nothing mutated) is checked here."""
    a, b, sa, sb, _ = inputs(64, 64, 64, form)
    op = tylo.ops.scaled_matmul_op._scaled_matmul
    torch.library.opcheck(op, (a, b, sa, sb),
                          test_utils=("test_faketensor", "test_autograd_registration",
                                      "test_aot_dispatch_dynamic"))
    assert str(op._opoverload._schema) == ("tylo::scaled_matmul(Tensor a, Tensor b, "
                                           "Tensor scale_a, Tensor scale_b) -> Tensor")
    before = [x.view(torch.uint8).clone() if x.element_size() == 1 else x.clone()
              for x in (a, b, sa, sb)]
    tylo.ops.scaled_matmul(a, b, sa, sb)
    for x, y in zip((a, b, sa, sb), before):
        assert torch.equal(x.view(torch.uint8) if x.element_size() == 1 else x, y)


def test_torch_compile_fullgraph_matches_eager():
    a, b, sa, sb, _ = inputs(64, 128, 128, "row")

    def block(a, b, sa, sb):
        return torch.relu(tylo.ops.scaled_matmul(a, b, sa, sb).float()) * 2.0

    eager = block(a, b, sa, sb)
    compiled = torch.compile(block, fullgraph=True, backend="aot_eager")(a, b, sa, sb)
    assert torch.equal(eager, compiled)
    explained = torch._dynamo.explain(block)(a, b, sa, sb)
    assert explained.graph_break_count == 0 and explained.graph_count == 1


def test_backward_is_refused_not_silently_missing():
    a, b, sa, sb, _ = inputs(64, 64, 64, "row")
    out = tylo.ops.scaled_matmul(a, b, sa.requires_grad_(), sb)
    with pytest.raises(tylo.UnsupportedError, match="has no backward: FP8 training recipes"):
        out.float().sum().backward()


M, N, K = 64, 128, 256


def _e4m3(*shape):
    return torch.randn(*shape).to(torch.float8_e4m3fn)


def _row_scales():
    return torch.ones(M, 1), torch.ones(1, N)


@pytest.mark.parametrize("change, error_type, match", [
    (dict(a=torch.randn(M, K, dtype=torch.bfloat16)), tylo.ArgumentError,
     "argument 'a': is torch.bfloat16; scaled_matmul takes torch.float8_e4m3fn or "
     "torch.float8_e5m2"),
    (dict(b=_e4m3(K, N)), tylo.ArgumentError,
     "argument 'b': has strides .*column-major .*FP8 WGMMA reads K-major operands only"),
    (dict(a=_e4m3(K, M).t()), tylo.ArgumentError,
     "argument 'a': has strides .*row-major .*FP8 WGMMA reads K-major operands only"),
    (dict(a=_e4m3(M, 40), b=_e4m3(N, 40).t()), tylo.ArgumentError,
     "K = 40; K must be a multiple of 16"),
    (dict(b=_e4m3(12, K).t(), scale_b=torch.ones(1, 12)), tylo.ArgumentError,
     "N = 12; N must be a multiple of 8"),
    (dict(a=_e4m3(M, K + 8)[:, :K]), tylo.ArgumentError,
     "argument 'a': .*a multiple of 16 bytes apart"),
    (dict(b=_e4m3(N, 128).t()), tylo.ArgumentError, r"argument 'b': has shape \(128, 128\)"),
    (dict(a=_e4m3(M * K + 16)[1:M * K + 1].view(M, K)), tylo.ArgumentError,
     "argument 'a': starts 1 bytes into its storage: its data must be 16-byte aligned"),
    (dict(scale_a=torch.ones(M, 3)), tylo.ArgumentError,
     r"argument 'scale_a': has shape \(64, 3\); .*\(64, 1\) \(rowwise\) or \(64, 2\)"),
    (dict(scale_b=torch.ones(N, 1)), tylo.ArgumentError,
     r"argument 'scale_b': has shape \(128, 1\); .* must be \(1, 128\) \(rowwise\)"),
    (dict(scale_a=torch.ones(M, 2), scale_b=torch.ones(1, 2)), tylo.ArgumentError,
     r"argument 'scale_b': .* must be \(2, 1\) \(blockwise\); a \(ceil\(N/128\), ceil\(K/128\)\) "
     r"scale of W \(N, K\), DeepGEMM's layout, is passed as its .t\(\)"),
    (dict(scale_a=torch.ones(M, 1, dtype=torch.bfloat16)), tylo.ArgumentError,
     "argument 'scale_a': is torch.bfloat16; scales are torch.float32"),
    (dict(out_dtype=torch.float32), tylo.UnsupportedError, "out_dtype=torch.float32"),
])
def test_arguments_are_checked(change, error_type, match):
    sa, sb = _row_scales()
    args = dict(a=_e4m3(M, K), b=_e4m3(N, K).t(), scale_a=sa, scale_b=sb)
    args.update(change)
    with pytest.raises(error_type, match=match):
        tylo.ops.scaled_matmul(args.pop("a"), args.pop("b"), args.pop("scale_a"),
                               args.pop("scale_b"), **args)


def test_the_same_checks_while_tracing():
    """The fake implementation checks too: torch.compile reports the mistake while tracing."""
    sa, sb = _row_scales()
    with pytest.raises(Exception, match="FP8 WGMMA reads K-major operands only"):
        torch.compile(tylo.ops.scaled_matmul, fullgraph=True, backend="aot_eager")(
            _e4m3(M, K), _e4m3(K, N), sa, sb)


# -- GPU ----------------------------------------------------------------------------------------

GPU_SHAPES = [(4096, 4096, 4096), (128, 7168, 2048), (4096, 7168, 2048), (128, 2112, 7168),
              (4096, 2112, 7168)]


def _cuda():
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    return torch.device("cuda")


def _torch_scaled_mm(a, b, sa, sb):
    """torch._scaled_mm's product on the same arguments, or None where torch refuses the form
    (block scales need torch's column-major scale_a)."""
    try:
        if sa.dim() == 2 and sa.shape[1] > 1:
            sa = sa.t().contiguous().t()
        return torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
    except (RuntimeError, NotImplementedError, ValueError):
        return None


@pytest.mark.gpu
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("shape", GPU_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_gpu_forms(shape, form):
    """Fresh random inputs, the output poisoned (NaN) where the kernel writes it, against the
    float64 product of the dequantized inputs and beside torch._scaled_mm."""
    dev = _cuda()
    M, N, K = shape
    a, b, sa, sb, ref = inputs(M, N, K, form, dev)
    torch.cuda.synchronize()
    for _ in range(2):  # the second call reuses a poisoned block of the caching allocator
        poison = torch.full((M, N), float("nan"), device=dev, dtype=torch.bfloat16)
        del poison
        out = tylo.ops.scaled_matmul(a, b, sa, sb)
        torch.cuda.synchronize()
        assert error(out, ref) < 1e-2, form
    theirs = _torch_scaled_mm(a, b, sa, sb)
    if theirs is not None:
        assert float((out.double() - theirs.double()).norm().cpu() / ref.norm()) < 1e-2


@pytest.mark.gpu
@pytest.mark.parametrize("types", [("e4m3", "e5m2"), ("e5m2", "e4m3"), ("e5m2", "e5m2")])
@pytest.mark.parametrize("form", ["tensor", "row"])
def test_gpu_e5m2(types, form):
    """e5m2 operands at 4096 x 7168 x 2048 (fresh inputs, poisoned output) against float64 and
    beside torch._scaled_mm where torch takes the pairing (not e5m2 x e5m2)."""
    dev = _cuda()
    fp = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}
    a, b, sa, sb, _ = inputs(4096, 7168, 2048, form, dev)
    a, b = a.float().to(fp[types[0]]), b.float().to(fp[types[1]])
    ref = ((a.double() * sa.double()) @ (b.double() * sb.double())).cpu()
    poison = torch.full((4096, 7168), float("nan"), device=dev, dtype=torch.bfloat16)
    del poison
    out = tylo.ops.scaled_matmul(a, b, sa, sb)
    torch.cuda.synchronize()
    assert error(out, ref) < 1e-2
    theirs = _torch_scaled_mm(a, b, sa, sb)
    if theirs is not None:
        assert float((out.double() - theirs.double()).norm().cpu() / ref.norm()) < 1e-2


@pytest.mark.gpu
def test_gpu_torch_compile_and_cuda_graph():
    """torch.compile(fullgraph=True) (inductor) matches eager; a CUDA graph captured once on
    torch's current (side) stream replays on new inputs correctly."""
    dev = _cuda()
    a, b, sa, sb, _ = inputs(512, 1024, 768, "row", dev)

    def block(a, b, sa, sb):
        return tylo.ops.scaled_matmul(a, b, sa, sb).float() * 2.0

    eager = block(a, b, sa, sb)
    assert torch.equal(torch.compile(block, fullgraph=True)(a, b, sa, sb), eager)
    static = [x.clone() for x in (a, b, sa, sb)]
    for _ in range(2):
        block(*static)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = block(*static)
    a2, b2, sa2, sb2, ref2 = inputs(512, 1024, 768, "row", dev)
    for dst, src in zip(static, (a2, b2, sa2, sb2)):
        dst.copy_(src)
    static_out.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    assert float((static_out.cpu().double() / 2 - ref2).norm() / ref2.norm()) < 1e-2
