"""tylo.ops.int_mm (the custom op tylo::int_mm) on CPU tensors, through the emulator at small
sizes with M, N and K tails: every pairing of int8/uint8 exactly against int64 (and against
torch._int_mm for int8 x int8), opcheck, torch.compile (fullgraph=True), the argument checks.
The GPU tests (marked gpu) run 4096^3 and Llama-like shapes exactly against torch._int_mm and
an int64 product, with fresh random inputs and a poisoned output, and sums past int32 wrap."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import tylo  # noqa: E402
import tylo.ops  # noqa: E402
import tylo.ops.int_mm_op  # noqa: E402
from tylo.testing import poison_next  # noqa: E402

M, N, K = 64, 128, 64
PAIRS = [(torch.int8, torch.int8), (torch.int8, torch.uint8), (torch.uint8, torch.int8),
         (torch.uint8, torch.uint8)]


def _random(shape, dtype, device="cpu"):
    info = torch.iinfo(dtype)
    return torch.randint(info.min, info.max + 1, shape, dtype=dtype, device=device)


def _exact(a, b):
    return (a.cpu().long() @ b.cpu().long()).int()


@pytest.mark.parametrize("da,db", PAIRS, ids=lambda t: str(t).split(".")[1])
def test_pairings_with_tails(da, db):
    """136 x 264 x 144: a second 128 x 256 tile of 8 rows and 8 columns, a K tail of 16, full
    range operands; exact (int64 reference; torch._int_mm too for int8 x int8)."""
    a = _random((136, 144), da)
    b = _random((264, 144), db).t()
    out = tylo.ops.int_mm(a, b)
    assert out.dtype == torch.int32 and out.shape == (136, 264)
    assert torch.equal(out, _exact(a, b))
    if da == db == torch.int8:
        assert torch.equal(out, torch._int_mm(a, b))


def test_empty_and_zero_k():
    assert tylo.ops.int_mm(_random((0, 32), torch.int8), _random((8, 32), torch.int8).t()).shape == (0, 8)
    z = tylo.ops.int_mm(torch.zeros(4, 0, dtype=torch.int8), torch.zeros(8, 0, dtype=torch.int8).t())
    assert torch.equal(z, torch.zeros(4, 8, dtype=torch.int32))


def test_opcheck_and_compile():
    a, b = _random((M, K), torch.int8), _random((N, K), torch.int8).t()
    torch.library.opcheck(tylo.ops.int_mm_op._int_mm, (a, b),
                          test_utils=("test_schema", "test_faketensor"))
    compiled = torch.compile(lambda a, b: tylo.ops.int_mm(a, b) * 2, fullgraph=True,
                             backend="aot_eager")
    assert torch.equal(compiled(a, b), _exact(a, b) * 2)


def _i8(*shape):
    return _random(shape, torch.int8)


@pytest.mark.parametrize("a, b, match", [
    (torch.zeros(M, K, dtype=torch.int16), _i8(N, K).t(),
     "argument 'a': is torch.int16; int_mm takes torch.int8 or torch.uint8"),
    (_i8(M, K), _i8(K, N),
     "argument 'b': has strides .*column-major .*integer WGMMA reads K-major operands only"),
    (_i8(K, M).t(), _i8(N, K).t(),
     "argument 'a': has strides .*row-major .*integer WGMMA reads K-major operands only"),
    (_i8(M, 40), _i8(N, 40).t(), "K = 40; K must be a multiple of 16"),
    (_i8(M, K), _i8(6, K).t(), "N = 6; N must be a multiple of 4"),
    (_i8(M, K + 8)[:, :K], _i8(N, K).t(), "argument 'a': .*a multiple of 16 bytes apart"),
    (_i8(M, K), _i8(N, 128).t(), r"argument 'b': has shape \(128, 128\)"),
    (_i8(M * K + 16)[1:M * K + 1].view(M, K), _i8(N, K).t(),
     "argument 'a': starts 1 bytes into its storage: its data must be 16-byte aligned"),
    (_i8(M, K)[None], _i8(N, K).t(), "argument 'a': has 3 dimensions"),
])
def test_arguments_are_checked(a, b, match):
    with pytest.raises(tylo.ArgumentError, match=match):
        tylo.ops.int_mm(a, b)


def test_the_same_checks_while_tracing():
    """The fake implementation checks too: torch.compile reports the mistake while tracing."""
    with pytest.raises(Exception, match="integer WGMMA reads K-major operands only"):
        torch.compile(tylo.ops.int_mm, fullgraph=True, backend="aot_eager")(_i8(M, K),
                                                                            _i8(K, N))


# -- GPU ----------------------------------------------------------------------------------------

GPU_SHAPES = [(4096, 4096, 4096), (128, 4096, 4096), (4096, 14336, 4096), (4096, 4096, 14336),
              (136, 264, 144)]


@pytest.mark.parametrize("shape", GPU_SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.gpu
@pytest.mark.usefixtures("hopper")  # tests/ops/conftest.py
def test_gpu_exact_against_torch_int_mm(shape):
    """Fresh random full-range int8 inputs, the output's memory poisoned (the least int32, which
    no sum of these K reaches): exact against torch._int_mm and the int64 product."""
    dev = torch.device("cuda")
    M_, N_, K_ = shape
    a, b = _random((M_, K_), torch.int8, dev), _random((N_, K_), torch.int8, dev).t()
    theirs = torch._int_mm(a, b)
    exact = (a.double() @ b.double()).long()  # exact: |sums| < 2**53
    for _ in range(2):
        poison_next(torch, (M_, N_), torch.int32)
        out = tylo.ops.int_mm(a, b)
        torch.cuda.synchronize()
        assert out.dtype == torch.int32
        assert torch.equal(out.long(), exact)
    assert torch.equal(out, theirs)


@pytest.mark.gpu
@pytest.mark.usefixtures("hopper")  # tests/ops/conftest.py
@pytest.mark.parametrize("da,db", PAIRS[1:], ids=lambda t: str(t).split(".")[1])
def test_gpu_unsigned_pairings(da, db):
    """The pairings torch._int_mm has not: exact against the int64 product at 2048 x 3072 x
    1536 (fresh inputs, poisoned output)."""
    dev = torch.device("cuda")
    a, b = _random((2048, 1536), da, dev), _random((3072, 1536), db, dev).t()
    exact = (a.double() @ b.double()).long()
    poison_next(torch, (2048, 3072), torch.int32)
    out = tylo.ops.int_mm(a, b)
    torch.cuda.synchronize()
    assert torch.equal(out.long(), exact)


@pytest.mark.gpu
@pytest.mark.usefixtures("hopper")  # tests/ops/conftest.py
def test_gpu_sums_wrap_like_int32():
    """Sums past the int32 range wrap modulo 2**32 (the instruction without .satfinite), as
    torch's int32 arithmetic does: u8 x u8 with K = 33040 (each sum 255 * 255 * K > 2**31; on
    the emulator the instruction's wrap is tests/gpu/test_wgmma_int8_tf32_gpu.py's)."""
    k = 33040
    a = torch.full((64, k), 255, dtype=torch.uint8, device="cuda")
    b = torch.full((4, k), 255, dtype=torch.uint8, device="cuda").t()
    total = 255 * 255 * k
    assert total > 2 ** 31 - 1
    poison_next(torch, (64, 4), torch.int32)
    out = tylo.ops.int_mm(a, b)
    assert bool((out == (total + 2 ** 31) % 2 ** 32 - 2 ** 31).all())


@pytest.mark.gpu
@pytest.mark.usefixtures("hopper")  # tests/ops/conftest.py
def test_gpu_torch_compile_and_cuda_graph():
    """torch.compile(fullgraph=True) (inductor) matches eager; a CUDA graph replays on new
    inputs exactly."""
    dev = torch.device("cuda")
    a, b = _random((512, 768), torch.int8, dev), _random((1024, 768), torch.int8, dev).t()

    def block(a, b):
        return tylo.ops.int_mm(a, b) + 1

    eager = block(a, b)
    assert torch.equal(torch.compile(block, fullgraph=True)(a, b), eager)
    static = [a.clone(), b.t().contiguous().t()]
    for _ in range(2):
        block(*static)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = block(*static)
    a2, b2 = _random((512, 768), torch.int8, dev), _random((1024, 768), torch.int8, dev).t()
    static[0].copy_(a2)
    static[1].copy_(b2)
    static_out.fill_(torch.iinfo(torch.int32).min)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(static_out.long(), (a2.double() @ b2.double()).long() + 1)
