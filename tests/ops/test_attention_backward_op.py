"""The backward of tylo.ops.attention (the custom op tylo::attention_backward, registered as the
autograd rule of tylo::attention_forward): on CPU tensors through the emulator, gradients of q,
k, v against float64 torch autograd (fresh random inputs) in both layouts, grouped-query heads,
causal with Sq != Sk, D 64, 128 and 256, a scale, a loss that reads lse, float32 inputs under
autocast; torch.compile(fullgraph=True) of forward and backward; what the backward refuses. On
a GPU (marked gpu): real sizes against float32 torch autograd."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

import tylo  # noqa: E402
import tylo.ops  # noqa: E402
import tylo.ops.attention_forward  # noqa: E402,F401  (registers the tylo:: attention ops)


def reference(q, k, v, causal: bool, scale: float, dtype=torch.float64):
    """out, lse of softmax(scale q k^T) v in (B, H, S, D), differentiable, in `dtype` (GQA by
    repeating K, V; causal bottom-right; rows that see no key: out 0, lse -inf)."""
    group = q.shape[1] // k.shape[1]
    q, k, v = (x.to(dtype) for x in (q, k, v))
    k, v = (x.repeat_interleave(group, dim=1) for x in (k, v))
    z = scale * q @ k.transpose(-1, -2)
    seen = torch.ones(q.shape[2], dtype=torch.bool, device=q.device)
    if causal:
        sq, sk = q.shape[2], k.shape[2]
        hidden = (torch.arange(sk, device=q.device)[None, :]
                  > torch.arange(sq, device=q.device)[:, None] + (sk - sq))
        seen = ~hidden.all(-1)
        z = z.masked_fill(hidden & seen[:, None], -math.inf)
    lse = torch.logsumexp(z, dim=-1).masked_fill(~seen, -math.inf)
    return (torch.softmax(z, dim=-1) * seen[:, None]) @ v, lse


def leaves(*shapes, device="cpu"):
    return [torch.randn(*s, dtype=torch.bfloat16, device=device).requires_grad_() for s in shapes]


def check(got, want, tol=2e-2):
    for name, g, w in zip("qkv", got, want):
        assert g is not None and not g.isnan().any(), name
        err = float((g.double() - w.double()).norm() / w.double().norm())
        assert err < tol, f"d{name}: relative error {err:.3g}"


def gradients(q, k, v, bhsd, loss):
    """(dq, dk, dv) of loss(out, lse) through the op and through the float64 reference."""
    to = (lambda x: x) if bhsd else (lambda x: x.transpose(1, 2))
    out, lse = loss["op"](q, k, v)
    torch.manual_seed(1)
    g_out = torch.randn_like(out.float())
    g_lse = torch.randn_like(lse) if loss["lse"] else None
    total = (out.float() * g_out).sum() + ((lse * g_lse).sum() if loss["lse"] else 0)
    got = torch.autograd.grad(total, (q, k, v))
    rq, rk, rv = (x.detach().double().requires_grad_() for x in (q, k, v))
    ref_out, ref_lse = reference(to(rq), to(rk), to(rv), loss["causal"], loss["scale"])
    ref_total = (to(ref_out) * g_out.double()).sum()
    if loss["lse"]:
        ref_total = ref_total + (ref_lse * g_lse.double()).sum()
    return got, torch.autograd.grad(ref_total, (rq, rk, rv))


@pytest.mark.parametrize("layout, causal, Sq, Sk, Hq, Hkv, D", [
    ("bshd", True, 128, 128, 2, 1, 64),     # grouped-query, causal, FlashAttention's layout
    ("bhsd", False, 96, 160, 1, 1, 64),     # ragged lengths, Sq != Sk
    ("bshd", True, 64, 128, 1, 1, 128),     # D 128, bottom-right causal with more keys
    ("bshd", True, 80, 112, 2, 1, 256),     # D 256 (the split kernel), GQA, ragged, Sq != Sk
])
def test_gradients_against_float64_autograd(layout, causal, Sq, Sk, Hq, Hkv, D):
    bhsd = layout == "bhsd"
    shape = (lambda s, h: (1, h, s, D)) if bhsd else (lambda s, h: (1, s, h, D))
    q, k, v = leaves(shape(Sq, Hq), shape(Sk, Hkv), shape(Sk, Hkv))
    scale = 1 / math.sqrt(D)

    def op(q, k, v):
        return tylo.ops.attention(q, k, v, causal=causal, layout=layout, return_lse=True)
    got, want = gradients(q, k, v, bhsd, dict(op=op, lse=False, causal=causal, scale=scale))
    check(got, want)
    # read and written in place: each gradient lies as its input does (no (B, H, S, D) copy)
    assert [g.stride() for g in got] == [x.stride() for x in (q, k, v)]


@pytest.fixture
def deterministic_algorithms():
    """torch.use_deterministic_algorithms(True) for the test (warn_only: the float32 reference's
    cuBLAS matmuls would raise without CUBLAS_WORKSPACE_CONFIG), restored after."""
    before = (torch.are_deterministic_algorithms_enabled(),
              torch.is_deterministic_algorithms_warn_only_enabled())
    torch.use_deterministic_algorithms(True, warn_only=True)
    yield
    torch.use_deterministic_algorithms(before[0], warn_only=before[1])


@pytest.mark.parametrize("causal, Hq, Hkv, D", [(True, 2, 1, 64), (False, 1, 1, 256)])
def test_deterministic_algorithms_take_the_ordered_kernels(deterministic_algorithms, causal,
                                                            Hq, Hkv, D, monkeypatch):
    """Under torch.use_deterministic_algorithms(True) the backward launches the kernels whose dQ
    additions wait for their turn (`deterministic`), three key blocks of GQA 2:1, and the
    gradients still match float64 autograd."""
    from tylo.ops.kernels import attention_backward_host as host

    seen = []
    real = host.AttentionBackward.__init__

    def spy(self, *args, **kwargs):
        real(self, *args, **kwargs)
        seen.append(self.cfg.deterministic)

    monkeypatch.setattr(host.AttentionBackward, "__init__", spy)
    q, k, v = leaves((1, 96, Hq, D), (1, 320, Hkv, D), (1, 320, Hkv, D))
    scale = 1 / math.sqrt(D)
    got, want = gradients(q, k, v, False, dict(op=lambda q, k, v: tylo.ops.attention(
        q, k, v, causal=causal, return_lse=True), lse=False, causal=causal, scale=scale))
    check(got, want)
    assert seen == [True]


def test_q_and_kv_in_different_memory_orders():
    """A rotated q in (B, H, S, D) memory beside k, v in (B, S, H, D) (given as bhsd views)."""
    q, = leaves((1, 2, 64, 64))
    k, v = (x.detach().transpose(1, 2).requires_grad_()
            for x in leaves((1, 64, 1, 64), (1, 64, 1, 64)))
    k.retain_grad(), v.retain_grad()

    def op(q, k, v):
        return tylo.ops.attention(q, k, v, causal=True, layout="bhsd", return_lse=True)
    check(*gradients(q, k, v, True, dict(op=op, lse=False, causal=True, scale=0.125)))


@pytest.mark.parametrize("max_k", [True, False], ids=["max_seqlen_k", "read-on-host"])
def test_packed_sequences(max_k):
    """(rows, H, D) with cu_seqlens, bottom-right causal per sequence, Hq 2 Hkv 1: each
    sequence's gradients against its own float64 autograd."""
    lens_q, lens_k = [50, 90], [70, 90]
    cq = torch.tensor([0, *lens_q]).cumsum(0).int()
    ck = torch.tensor([0, *lens_k]).cumsum(0).int()
    q, k, v = leaves((sum(lens_q), 2, 64), (sum(lens_k), 1, 64), (sum(lens_k), 1, 64))
    out = tylo.ops.attention(q, k, v, causal=True, cu_seqlens_q=cq, cu_seqlens_k=ck,
                             max_seqlen_q=max(lens_q),
                             max_seqlen_k=max(lens_k) if max_k else None)
    g_out = torch.randn_like(out.float())
    got = torch.autograd.grad((out.float() * g_out).sum(), (q, k, v))
    for b in range(2):
        sq, sk = slice(int(cq[b]), int(cq[b + 1])), slice(int(ck[b]), int(ck[b + 1]))
        rq, rk, rv = (x[s].detach().double().transpose(0, 1)[None].requires_grad_()
                      for x, s in ((q, sq), (k, sk), (v, sk)))
        ref, _ = reference(rq, rk, rv, True, 1 / 8)
        want = torch.autograd.grad((ref * g_out[sq].double().transpose(0, 1)[None]).sum(),
                                   (rq, rk, rv))
        check([g[s] for g, s in zip(got, (sq, sk, sk))],
              [w[0].transpose(0, 1) for w in want])


def test_a_scale_and_a_loss_that_reads_lse():
    q, k, v = leaves((1, 2, 64, 64), (1, 2, 64, 64), (1, 2, 64, 64))

    def op(q, k, v):
        return tylo.ops.attention(q, k, v, causal=True, scale=0.3, layout="bhsd",
                                  return_lse=True)
    check(*gradients(q, k, v, True, dict(op=op, lse=True, causal=True, scale=0.3)))


def test_torch_compile_fullgraph_forward_and_backward():
    """torch.compile(fullgraph=True, backend="aot_eager") traces the forward and the backward
    (tylo::attention_backward in the backward graph) and gives eager's gradients."""
    def block(q, k, v):
        return tylo.ops.attention(q, k, v, causal=True).float().square().sum()

    q, k, v = leaves((1, 64, 2, 64), (1, 64, 1, 64), (1, 64, 1, 64))
    eager = torch.autograd.grad(block(q, k, v), (q, k, v))
    compiled = torch.compile(block, fullgraph=True, backend="aot_eager")
    got = torch.autograd.grad(compiled(q, k, v), (q, k, v))
    for g, e in zip(got, eager):
        assert torch.equal(g, e)


def test_opcheck_of_the_backward_op():
    q, k, v, out, dout = (torch.randn(1, 2, 64, 64, dtype=torch.bfloat16) for _ in range(5))
    lse = torch.randn(1, 2, 64)
    torch.library.opcheck(torch.ops.tylo.attention_backward.default,
                          (dout, q, k, v, out, lse, None, True, 0.125),
                          test_utils=("test_schema", "test_faketensor"))


@pytest.mark.parametrize("options, match", [
    (dict(window=(15, 0)), "a sliding window"),
    (dict(softcap=30.0), "a softcap"),
])
def test_what_the_backward_refuses(options, match):
    q, k, v = leaves((1, 64, 1, 64), (1, 64, 1, 64), (1, 64, 1, 64))
    out = tylo.ops.attention(q, k, v, causal=True, **options)
    with pytest.raises(tylo.UnsupportedError, match=match):
        out.float().sum().backward()


@pytest.mark.parametrize("dtype, autocast", [(torch.float32, torch.bfloat16),
                                             (torch.float16, torch.float16)])
def test_inputs_under_autocast(dtype, autocast):
    """Mixed precision: float32 q, k, v (as a rotary embedding in float32 leaves them), or
    float16 ones, under torch.autocast are cast to bf16 before the op (its autocast rule,
    whatever the autocast dtype); the gradients come back in the inputs' dtype, against float64
    autograd of the bf16-rounded inputs."""
    q = torch.randn(1, 64, 2, 64, dtype=dtype, requires_grad=True)
    k, v = (torch.randn(1, 64, 1, 64, dtype=dtype, requires_grad=True) for _ in range(2))
    with torch.autocast("cpu", dtype=autocast):
        out = tylo.ops.attention(q, k, v, causal=True)
    assert out.dtype == torch.bfloat16
    g_out = torch.randn(out.shape)
    got = torch.autograd.grad(out, (q, k, v), g_out.to(torch.bfloat16))
    rq, rk, rv = (x.detach().to(torch.bfloat16).double().transpose(1, 2).requires_grad_()
                  for x in (q, k, v))
    ref, _ = reference(rq, rk, rv, True, 1 / 8)
    want = torch.autograd.grad(ref, (rq, rk, rv), g_out.double().transpose(1, 2))
    assert all(x.dtype == dtype for x in got)
    check(got, [w.transpose(1, 2) for w in want])


def laid(shape, memory, device="cpu"):
    """A fresh random bf16 tensor of logical (B, H, S, D) `shape` lying in `memory` ("bhsd",
    "bshd", or "strided": every other element of a (B, H, S, 2 D) tensor, in neither order)."""
    B, H, S, D = shape
    if memory == "bshd":
        return torch.randn(B, S, H, D, dtype=torch.bfloat16, device=device).transpose(1, 2)
    if memory == "strided":
        return torch.randn(B, H, S, 2 * D, dtype=torch.bfloat16, device=device)[..., ::2]
    return torch.randn(B, H, S, D, dtype=torch.bfloat16, device=device)


def direct_case(Hq=2, Hkv=1, S=64, D=64, q_mem="bhsd", kv_mem="bhsd", dout_mem=None,
                causal=True, scale=0.125, dlse_rows=None, device="cpu", dtype=torch.float64):
    """(the op's arguments, the float64 (or `dtype`) autograd gradients): fresh random q, k, v,
    dout laid out as named, out and lse the reference's (out in q's memory), dlse random
    float32 rows `dlse_rows` apart (None: no dlse)."""
    q, dout = laid((1, Hq, S, D), q_mem, device), laid((1, Hq, S, D), dout_mem or q_mem, device)
    k, v = laid((1, Hkv, S, D), kv_mem, device), laid((1, Hkv, S, D), kv_mem, device)
    rq, rk, rv = (x.detach().to(dtype).requires_grad_() for x in (q, k, v))
    ref_out, ref_lse = reference(rq, rk, rv, causal, scale, dtype)
    out = torch.empty_like(q).copy_(ref_out.detach())
    lse = ref_lse.detach().float()
    total = (ref_out * dout.to(dtype)).sum()
    dlse = None
    if dlse_rows is not None:
        dlse = torch.randn(1, Hq, dlse_rows, device=device)[..., :S]
        total = total + (ref_lse * dlse.to(dtype)).sum()
    want = torch.autograd.grad(total, (rq, rk, rv))
    return (dout, q, k, v, out, lse, dlse, causal, scale), want


def test_plans_per_geometry_in_sequence():
    """The op's per-geometry plans (memory orders, copies, the kernels' geometry: `_PLANS`)
    told apart: calls in sequence that differ in causal, scale, Q's or K/V's memory order, a
    dout in neither order (copied), a dlse whose rows need padding, each right against float64
    autograd on fresh inputs, each its own plan; the same geometry again (new values) reuses
    its plan and stays right. Gradients lie as their inputs."""
    from tylo.ops import attention_backward as op

    cases = [dict(), dict(causal=False), dict(scale=0.3), dict(q_mem="bshd"),
             dict(kv_mem="bshd"), dict(Hq=4, kv_mem="bshd"), dict(dout_mem="strided"),
             dict(dlse_rows=66), dict()]
    op._PLANS.clear()
    for i, case in enumerate(cases):
        args, want = direct_case(**case)
        got = torch.ops.tylo.attention_backward(*args)
        check(got, want)
        assert [g.stride() for g in got] == [x.stride() for x in args[1:4]]
        assert len(op._PLANS) == min(i + 1, len(cases) - 1), case
    plan = op._PLANS[next(iter(op._PLANS))]
    assert (plan.order, plan.kv_order, plan.copies, plan.prepared) == ("bhsd", "bhsd", None,
                                                                        False)
    copied = [p.copies for p in op._PLANS.values() if p.copies is not None]
    assert copied == [(False, True, False, False, False, False, False),  # dout in neither order
                      (False, False, False, False, False, False, True)]  # dlse rows 66 apart


class _CheckedEmulation:
    """A prepared launch (`Launcher.prepare`) that runs on the emulator and asserts what the
    GPU's prepared launch checks of the arguments swapped in: each tensor's dtype, shape,
    strides and 16-byte alignment, each tensor map's plan and rank, every other value equal."""

    def __init__(self, launcher, args):
        self.kernel, self.grid, self.block = launcher.kernel, launcher.grid, launcher.block
        self.kinds = [self.kind(a) for a in args]
        self.released = False

    @staticmethod
    def kind(a):
        if isinstance(a, torch.Tensor):
            return a.dtype, a.shape, a.stride(), a.data_ptr() % 16 == 0
        if isinstance(a, tylo.TMABinding):
            return a.plan, a.rank
        return a

    def __call__(self, *args):
        assert [self.kind(a) for a in args] == self.kinds
        self.kernel.emulate[self.grid, self.block](*args)
        self.released = False

    def release(self):
        self.released = True


def test_prepared_launches_per_geometry_on_the_emulator(monkeypatch):
    """The CUDA path (prepared launches, the workspace and tensor maps of a geometry's later
    calls) run on the emulator: the launches are prepared on a geometry's second call, and
    every call after swaps new arrays in (as the GPU's would check them) and releases them.
    Geometries that differ in causal, scale, memory orders, copies and dlse in sequence, each
    right against float64 autograd on fresh inputs, each with its own launches."""
    from tylo.frontend.jit.launcher import Launcher
    from tylo.ops import attention_backward as op

    monkeypatch.setattr(op, "PREPARED_ON", ("cuda", "cpu"))
    monkeypatch.setattr(tylo.TMABinding, "detached", lambda self: self)  # (host bindings)
    prepared = []

    def prepare(launcher, *args):
        prepared.append(_CheckedEmulation(launcher, args))
        return prepared[-1]

    monkeypatch.setattr(Launcher, "prepare", prepare)
    cases = [dict(), dict(causal=False), dict(scale=0.3), dict(q_mem="bshd", kv_mem="bshd"),
             dict(Hq=4, kv_mem="bshd", dout_mem="strided"), dict(dlse_rows=66)]
    op._PLANS.clear()
    for i, case in enumerate(cases + cases[:1]):
        for call in range(2):
            args, want = direct_case(**case)
            check(op._run(*args), want)
            assert len(prepared) == 3 * min(i + call, len(cases)), (case, call)
            assert all(p.released for p in prepared)
    assert len({id(p.launches) for p in op._PLANS.values()}) == len(cases)


def _cuda():
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    return torch.device("cuda")


@pytest.mark.gpu
@pytest.mark.parametrize("Hq, Hkv", [(16, 16), (32, 8)])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("D", [64, 128, 256])
def test_gpu_against_float32_autograd(Hq, Hkv, causal, D):
    """B 2, S 2048, (B, S, H, D): the op's gradients against float32 torch autograd of the
    same inputs (the bf16 rounding of the op's inputs of each GEMM bounds the error)."""
    dev = _cuda()
    q, k, v = leaves((2, 2048, Hq, D), (2, 2048, Hkv, D), (2, 2048, Hkv, D), device=dev)
    out = tylo.ops.attention(q, k, v, causal=causal)
    g_out = torch.randn_like(out)
    torch.full((2**27,), float("nan"), device=dev)  # (freed: the gradients' memory is likely NaN)
    got = torch.autograd.grad(out, (q, k, v), g_out)
    rq, rk, rv = (x.detach().float().transpose(1, 2).requires_grad_() for x in (q, k, v))
    ref, _ = reference(rq, rk, rv, causal, 1 / math.sqrt(D), torch.float32)
    ref.backward(g_out.float().transpose(1, 2))
    check(got, [x.grad.transpose(1, 2) for x in (rq, rk, rv)])


@pytest.mark.gpu
@pytest.mark.parametrize("D", [128, 256])
def test_gpu_deterministic_algorithms_repeat_bit_for_bit(deterministic_algorithms, D):
    """B 2, S 1500, GQA 16:4, causal, under torch.use_deterministic_algorithms(True): two
    backward passes of the same graph give the same dq, dk, dv bits, close to float32
    autograd."""
    dev = _cuda()
    q, k, v = leaves((2, 1500, 16, D), (2, 1500, 4, D), (2, 1500, 4, D), device=dev)
    out = tylo.ops.attention(q, k, v, causal=True)
    g_out = torch.randn_like(out)
    runs = []
    for _ in range(2):
        torch.full((2**27,), float("nan"), device=dev)
        runs.append(torch.autograd.grad(out, (q, k, v), g_out, retain_graph=True))
    for a, b in zip(*runs):
        assert torch.equal(a, b)
    rq, rk, rv = (x.detach().float().transpose(1, 2).requires_grad_() for x in (q, k, v))
    ref, _ = reference(rq, rk, rv, True, 1 / math.sqrt(D), torch.float32)
    ref.backward(g_out.float().transpose(1, 2))
    check(runs[0], [x.grad.transpose(1, 2) for x in (rq, rk, rv)])


@pytest.mark.gpu
def test_gpu_unequal_lengths_and_bhsd():
    dev = _cuda()
    q = torch.randn(2, 8, 777, 128, device=dev, dtype=torch.bfloat16).requires_grad_()
    k, v = (torch.randn(2, 2, 900, 128, device=dev, dtype=torch.bfloat16).requires_grad_()
            for _ in range(2))

    def op(q, k, v):
        return tylo.ops.attention(q, k, v, causal=True, layout="bhsd", return_lse=True)
    got, want = gradients(q, k, v, True, dict(op=op, lse=True, causal=True,
                                              scale=1 / math.sqrt(128)))
    check(got, want)


@pytest.mark.gpu
@pytest.mark.parametrize("D", [64, 128, 256])
def test_gpu_packed_sequences(D):
    """Five packed sequences of random lengths (keys longer than queries in some), Hq 8 Hkv 2,
    causal: each sequence's gradients against float32 torch autograd."""
    dev = _cuda()
    lens_q = torch.randint(1, 700, (5,)).tolist()
    lens_k = [n + int(torch.randint(0, 300, ())) for n in lens_q]
    cq = torch.tensor([0, *lens_q], device=dev).cumsum(0).int()
    ck = torch.tensor([0, *lens_k], device=dev).cumsum(0).int()
    q, k, v = leaves((sum(lens_q), 8, D), (sum(lens_k), 2, D), (sum(lens_k), 2, D), device=dev)
    out = tylo.ops.attention(q, k, v, causal=True, cu_seqlens_q=cq, cu_seqlens_k=ck,
                             max_seqlen_q=max(lens_q), max_seqlen_k=max(lens_k))
    g_out = torch.randn_like(out)
    got = torch.autograd.grad(out, (q, k, v), g_out)
    for b in range(5):
        sq, sk = slice(int(cq[b]), int(cq[b + 1])), slice(int(ck[b]), int(ck[b + 1]))
        rq, rk, rv = (x[s].detach().float().transpose(0, 1)[None].requires_grad_()
                      for x, s in ((q, sq), (k, sk), (v, sk)))
        ref, _ = reference(rq, rk, rv, True, 1 / math.sqrt(D), torch.float32)
        want = torch.autograd.grad(ref, (rq, rk, rv), g_out[sq].float().transpose(0, 1)[None])
        check([g[s] for g, s in zip(got, (sq, sk, sk))], [w[0].transpose(0, 1) for w in want])


def _poison():
    """A NaN block back to torch's caching allocator: the op's next gradients and workspace
    are likely carved from it (unwritten elements stay NaN)."""
    poison = torch.full((2**27,), float("nan"), device="cuda")
    del poison


#: Geometries in sequence on the GPU (`direct_case` options): D 64, 128, 256, both memory
#: orders and a mix, causal or not, a scale, a copied dout, a dlse whose rows are padded.
GPU_CASES = [dict(Hq=16, Hkv=4, S=1024, D=64, q_mem="bshd", kv_mem="bshd"),
             dict(Hq=16, Hkv=4, S=1024, D=64, q_mem="bshd", kv_mem="bshd", causal=False),
             dict(Hq=8, Hkv=2, S=768, D=128, scale=0.05),
             dict(Hq=8, Hkv=8, S=640, D=128, q_mem="bshd", dout_mem="strided", dlse_rows=642),
             dict(Hq=4, Hkv=2, S=512, D=256, kv_mem="bshd")]


@pytest.mark.gpu
def test_gpu_repeated_calls_of_several_geometries():
    """Each geometry called three times (its first call the general launch path, the second
    prepares its launches, the third swaps into them) and the geometries interleaved, on fresh
    random inputs with poisoned memory, through the custom op and the direct implementation:
    every result against float32 autograd."""
    from tylo.ops import attention_backward as op

    dev = _cuda()
    for round in range(3):
        for case in GPU_CASES:
            args, want = direct_case(**case, device=dev, dtype=torch.float32)
            _poison()
            run = torch.ops.tylo.attention_backward if round % 2 else op._run
            check(run(*args), want)
    assert all(p.launches is not None for p in op._PLANS.values() if p.prepared)


@pytest.mark.gpu
def test_gpu_two_threads_share_prepared_launches():
    """Two threads, each on its own stream, calling two geometries in turn (the prepared
    launches swapped under a lock): every result against float32 autograd."""
    import threading

    from tylo.ops import attention_backward as op

    dev = _cuda()
    cases = [direct_case(**GPU_CASES[i % 2], device=dev, dtype=torch.float32) for i in range(12)]
    torch.cuda.synchronize()
    results, errors = {}, []

    def work(indices):
        try:
            stream = torch.cuda.Stream()
            with torch.cuda.stream(stream):
                for i in indices:
                    results[i] = op._run(*cases[i][0])
            stream.synchronize()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(range(t, 12, 2),)) for t in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    for i, (_, want) in enumerate(cases):
        check(results[i], want)


@pytest.mark.gpu
def test_gpu_eager_backward_skips_the_dispatcher_and_a_profiled_one_does_not(monkeypatch):
    """An eager backward on CUDA tensors runs the implementation directly (the custom op made
    to fail is not reached); under torch's profiler it goes through tylo::attention_backward,
    which the profile names. Both against float32 autograd."""
    from tylo.ops import attention_backward as op

    dev = _cuda()
    q, k, v = leaves((2, 512, 8, 64), (2, 512, 2, 64), (2, 512, 2, 64), device=dev)

    def grads():
        out = tylo.ops.attention(q, k, v, causal=True)
        g_out = torch.randn_like(out)
        got = torch.autograd.grad(out, (q, k, v), g_out)
        rq, rk, rv = (x.detach().float().transpose(1, 2).requires_grad_() for x in (q, k, v))
        ref, _ = reference(rq, rk, rv, True, 1 / 8, torch.float32)
        ref.backward(g_out.float().transpose(1, 2))
        check(got, [x.grad.transpose(1, 2) for x in (rq, rk, rv)])

    real = op.attention_backward
    monkeypatch.setattr(op, "attention_backward",
                        lambda *args: pytest.fail("the custom op was reached"))
    for _ in range(3):
        grads()
    monkeypatch.setattr(op, "attention_backward", real)
    with torch.profiler.profile() as prof:
        grads()
    assert any("tylo::attention_backward" in e.name for e in prof.events())


@pytest.mark.gpu
def test_gpu_cuda_graph_of_the_backward_op():
    """The backward op captured in a CUDA graph (its launches prepared before, the workspace
    and tensor maps of the graph's memory) and replayed on new input values: right each
    time."""
    from tylo.ops import attention_backward as op

    dev = _cuda()
    args, want = direct_case(**GPU_CASES[0], device=dev, dtype=torch.float32)
    for _ in range(2):
        check(op._run(*args), want)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        got = op._run(*args)
    for _ in range(2):
        new, want = direct_case(**GPU_CASES[0], device=dev, dtype=torch.float32)
        for static, value in zip(args, new):
            if isinstance(static, torch.Tensor):
                static.copy_(value)
        for g in got:
            g.fill_(float("nan"))
        graph.replay()
        check(got, want)
