"""`tylo.ops.custom_op` and `tylo.ops.wrap` on CPU tensors (the emulator runs the kernels): the
ops of torch_user_ops.py against torch in float64, torch.library.opcheck, torch.compile with
no graph break (aot_eager), autograd through backwards of Tylo kernels, and the errors."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import tylo  # noqa: E402
import tylo.ops  # noqa: E402
from tylo import ArgumentError, Float64, UnsupportedError  # noqa: E402

import torch_user_ops as user  # noqa: E402

OPCHECK = ("test_schema", "test_autograd_registration", "test_faketensor",
           "test_aot_dispatch_dynamic")


def _bf16(*shape):
    return torch.randn(*shape).to(torch.bfloat16)


def test_an_elementwise_op_runs_on_the_emulator_for_cpu_tensors():
    x = torch.randn(45, dtype=torch.float64)
    assert torch.equal(user.scale(x, 2.5), x * 2.5)  # float64: exact


def test_tile_ops_match_torch_in_float64():
    x = torch.randn(32, 8)
    torch.testing.assert_close(user.rowsum(x).double(), x.double().sum(1, keepdim=True),
                               rtol=1e-6, atol=1e-6)
    a, b = _bf16(32, 48), _bf16(48, 16)
    torch.testing.assert_close(user.matmul(a, b).double(), a.double() @ b.double(),
                               rtol=1e-5, atol=1e-5)


def test_an_op_that_writes_its_argument_in_place():
    x = torch.randn(40, dtype=torch.float64)
    y = x.clone()
    assert user.scale_(y, -2.0) is None
    assert torch.equal(y, x * -2.0)

    def f(x):
        y = x.sin()
        user.scale_(y, 3.0)
        return y + 1

    torch._dynamo.reset()
    compiled = torch.compile(f, fullgraph=True, backend="aot_eager")
    torch.testing.assert_close(compiled(x), f(x))


@pytest.mark.parametrize("case", ["scale", "scale_", "rowsum", "broadcast_rows", "matmul"])
def test_opcheck(case):
    args = {
        "scale": lambda: (torch.randn(7, dtype=torch.float64, requires_grad=True), 2.0),
        "scale_": lambda: (torch.randn(7, dtype=torch.float64), 2.0),
        "rowsum": lambda: (torch.randn(16, 8, requires_grad=True),),
        "broadcast_rows": lambda: (torch.randn(16, 1),),
        "matmul": lambda: (_bf16(16, 32).requires_grad_(), _bf16(32, 16).requires_grad_()),
    }[case]()
    result = torch.library.opcheck(getattr(user, case), args, test_utils=OPCHECK)
    assert result == dict.fromkeys(OPCHECK, "SUCCESS")


def test_the_elementwise_backward_passes_gradcheck():
    x = torch.randn(6, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x: user.scale(x, -1.5), (x,))


def test_tile_op_backwards_match_torch_in_float64():
    x = torch.randn(16, 8, requires_grad=True)
    weights = torch.randn(16, 1)
    (user.rowsum(x) * weights).sum().backward()
    x64 = x.detach().double().requires_grad_()
    (x64.sum(1, keepdim=True) * weights.double()).sum().backward()
    torch.testing.assert_close(x.grad.double(), x64.grad, rtol=0, atol=0)

    a, b = _bf16(16, 32).requires_grad_(), _bf16(32, 16).requires_grad_()
    g = torch.randn(16, 16).to(torch.bfloat16).float()  # exact in bf16: the backward's cast
    (user.matmul(a, b) * g).sum().backward()
    a64, b64 = a.detach().double().requires_grad_(), b.detach().double().requires_grad_()
    ((a64 @ b64) * g.double()).sum().backward()
    # the operand gradients come out of the kernel in float32 and are rounded to bf16
    torch.testing.assert_close(a.grad.double(), a64.grad, rtol=2 ** -7, atol=1e-2)
    torch.testing.assert_close(b.grad.double(), b64.grad, rtol=2 ** -7, atol=1e-2)


def test_a_compiled_model_has_no_graph_break_and_matches_eager():
    torch.manual_seed(0)
    model = user.Model()
    x = torch.randn(16, 32, requires_grad=True)
    y = torch.randn(20, dtype=torch.float64, requires_grad=True)
    explained = torch._dynamo.explain(model)(x, y)
    assert (explained.graph_count, explained.graph_break_count) == (1, 0)

    expected = model(x, y)
    expected.backward()
    grads = [t.grad.clone() for t in (x, y, model.w)]
    for t in (x, y, model.w):
        t.grad = None
    torch._dynamo.reset()
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    got = compiled(x, y)
    got.backward()
    torch.testing.assert_close(got, expected)
    for t, want in zip((x, y, model.w), grads):
        torch.testing.assert_close(t.grad, want)


# -- a backward that launches a kernel itself, not through a custom op -------------------------

@tylo.ops.custom_op("tylotest::scale_launching_backward")
def scale_launching_backward(x: torch.Tensor, alpha: float) -> torch.Tensor:
    return user.scale(x, alpha)


def _launching_backward(ctx, grad):
    g = grad.contiguous()
    out = torch.empty_like(g)
    tylo.ops.wrap(user.scale_kernel)[1, 32](out, g, ctx.alpha, g.numel())  # not a custom op
    return out, None


scale_launching_backward.register_autograd(_launching_backward, setup_context=user._keep_alpha)


@pytest.mark.filterwarnings("ignore:Error detected in GeneratedBackwardFor")  # (torch's, on the way)
def test_a_launch_traced_outside_a_custom_op_is_refused():
    x = torch.randn(5, dtype=torch.float64, requires_grad=True)
    scale_launching_backward(x, 2.0).sum().backward()  # eager: real tensors, it runs
    assert torch.equal(x.grad, torch.full_like(x, 2.0))
    torch._dynamo.reset()
    f = torch.compile(lambda x: scale_launching_backward(x, 2.0).sum(), fullgraph=True,
                      backend="aot_eager")
    with pytest.raises(Exception) as caught:  # torch wraps it (BackendCompilerFailed)
        f(x)
    assert "UnsupportedError: tylo.ops.wrap(scale_kernel): a launch traced by torch.compile " \
        "outside a custom op" in str(caught.value)
    with torch._subclasses.fake_tensor.FakeTensorMode():
        fake = torch.empty(4, dtype=torch.float64)
        with pytest.raises(UnsupportedError, match="argument 'out' is a fake tensor"):
            tylo.ops.wrap(user.scale_kernel)[1, 32](fake, fake.view(4), 1.0, 4)


def test_a_launch_that_dynamo_traces_outside_a_custom_op_is_refused():
    """wrap called by a compiled function itself (no custom op): refused by name, with
    fullgraph (Dynamo's error carries the reason) and without (at the graph break)."""
    def f(x):
        out = torch.empty_like(x)
        tylo.ops.wrap(user.scale_kernel)[1, 32](out, x, 2.0, x.numel())
        return out + 1

    x = torch.randn(8, dtype=torch.float64)
    assert torch.equal(f(x), x * 2 + 1)  # eager: it runs
    for fullgraph in (True, False):
        torch._dynamo.reset()
        with pytest.raises(Exception) as caught:
            torch.compile(f, fullgraph=fullgraph, backend="aot_eager")(x)
        assert "a launch traced by torch.compile outside a custom op" in str(caught.value)
        if not fullgraph:
            assert isinstance(caught.value, UnsupportedError)


def test_meta_tensors_take_the_fake_implementation():
    out = user.matmul(torch.empty(64, 32, dtype=torch.bfloat16, device="meta"),
                      torch.empty(32, 24, dtype=torch.bfloat16, device="meta"))
    assert (out.device.type, out.shape, out.dtype) == ("meta", (64, 24), torch.float32)


def test_wrap_launches_on_cpu_tensors_outside_a_custom_op():
    x = torch.arange(40, dtype=torch.float64)
    out = torch.zeros_like(x)
    assert tylo.ops.wrap(user.scale_kernel)[2, 32](out, x, 0.5, 40) is None
    assert torch.equal(out, x * 0.5)


# -- errors -------------------------------------------------------------------------------------

def test_a_wrong_dtype_names_the_argument():
    with pytest.raises(ArgumentError, match=r"argument 'x': is a torch.float32 tensor; "
                                            r"tylotest::scale takes Float64") as caught:
        user.scale(torch.zeros(4), 1.0)
    assert caught.value.argument == "x"
    with pytest.raises(ArgumentError, match=r"argument 'b': is a torch.float16 tensor"):
        user.matmul(_bf16(16, 16), torch.zeros(16, 8, dtype=torch.float16))


def test_a_wrong_shape_or_rank_names_the_argument():
    with pytest.raises(ArgumentError, match=r"argument 'x': has extent 4 on axis 1; "
                                            r"tylotest::rowsum takes 8 there"):
        user.rowsum(torch.zeros(16, 4))
    with pytest.raises(ArgumentError, match=r"argument 'a': has 3 dimensions; "
                                            r"tylotest::matmul takes 2"):
        user.matmul(_bf16(1, 16, 16), _bf16(16, 8))


@tylo.ops.custom_op("tylotest::rowsum_aligned",
                    tensors={"x": tylo.Tensor(tylo.Float32, 2, stride=(None, 1), align=16)})
def rowsum_aligned(x: torch.Tensor) -> torch.Tensor:
    return user.rowsum(x)


def test_strides_and_alignment_a_tylo_tensor_asks_for_name_the_argument():
    x = torch.randn(16, 12)
    torch.testing.assert_close(rowsum_aligned(x[:, :8]), x[:, :8].sum(1, keepdim=True))
    with pytest.raises(ArgumentError, match=r"argument 'x': has stride 16 on axis 1; "
                                            r"tylotest::rowsum_aligned takes 1 there"):
        rowsum_aligned(torch.randn(8, 16).t())
    with pytest.raises(ArgumentError, match=r"argument 'x': starts at an address that is not a "
                                            r"multiple of 16 bytes"):
        rowsum_aligned(x[:, 1:9])


def test_a_strided_tensor_where_a_contiguous_one_is_asked_names_the_argument():
    x = torch.zeros(8, dtype=torch.float64)[::2]
    with pytest.raises(ArgumentError, match=r"argument 'x': has strides \(2,\) for shape \(4,\); "
                                            r"tylotest::scale takes a contiguous tensor"):
        user.scale(x, 1.0)


def test_tensors_on_two_devices_name_the_one_elsewhere():
    """Without a GPU, fake CUDA tensors: the fake implementation checks as the real one does."""
    with torch._subclasses.fake_tensor.FakeTensorMode():
        a = torch.empty(16, 16, dtype=torch.bfloat16, device="cuda")
        b = torch.empty(16, 8, dtype=torch.bfloat16)
        with pytest.raises(ArgumentError, match=r"argument 'b': is on device 'cpu', but 'a' is "
                                                r"on 'cuda:0'; tylotest::matmul takes tensors on "
                                                r"one device"):
            user.matmul(a, b)
        b = torch.empty(16, 8, dtype=torch.bfloat16, device="cuda")
        assert user.matmul(a, b).device.type == "cuda"  # (fake: nothing is launched)


def test_an_error_is_raised_while_torch_compile_traces():
    torch._dynamo.reset()
    f = torch.compile(lambda x: user.scale(x, 2.0), fullgraph=True, backend="aot_eager")
    with pytest.raises(Exception, match=r"argument 'x': is a torch.float32 tensor"):
        f(torch.zeros(3))


def test_the_kernel_launch_rules_still_apply():
    out, x = torch.zeros(4, dtype=torch.float64), torch.zeros(4, dtype=torch.float32)
    with pytest.raises(tylo.TypeMismatchError):  # Float32 * Float64 in the kernel
        tylo.ops.wrap(user.scale_kernel)[1, 32](out, x, 1.0, 4)


def test_what_custom_op_and_wrap_refuse():
    with pytest.raises(UnsupportedError, match="decorates a Python function"):
        tylo.ops.custom_op("tylotest::refused")(user.scale_kernel)
    with pytest.raises(UnsupportedError, match="tensors= names 'y'"):
        tylo.ops.custom_op("tylotest::refused", tensors={"y": Float64})(lambda x: x)
    with pytest.raises(UnsupportedError, match="contiguous= names 'y'"):
        tylo.ops.custom_op("tylotest::refused", contiguous=("y",))(lambda x: x)
    with pytest.raises(UnsupportedError, match=r"tensors\['x'\] is 'float64'"):
        tylo.ops.custom_op("tylotest::refused", tensors={"x": "float64"})(lambda x: x)
    with pytest.raises(UnsupportedError, match="tylo.ops.wrap takes a @tylo.kernel"):
        tylo.ops.wrap(lambda x: x)


def test_an_op_without_tensor_rules_checks_one_device_in_one_pass():
    """The checks of an op with no dtype or contiguity rule pass plain values beside tensors on
    one device in one pass (`library._on_one_device`); a tensor on another device, and lists
    (whose tensors it does not look into), go to the checks that name the argument."""
    from tylo.ops import library

    checks = library._Checks("tylotest::plain", lambda a, b, c, n: None, None, False)
    cpu, meta = torch.zeros(4), torch.empty(4, device="meta")
    assert checks.plain and library._on_one_device((cpu, cpu, None, 3, torch.float32))
    checks((cpu, cpu, None, 3), {})
    assert not library._on_one_device((cpu, meta))
    with pytest.raises(ArgumentError, match="argument 'b': is on device 'meta'"):
        checks((cpu, meta, None, 3), {})
    assert not library._on_one_device((cpu, cpu, [cpu], 3))
    with pytest.raises(ArgumentError, match=r"argument 'c\[0\]': is on device 'meta'"):
        checks((cpu, cpu, [meta], 3), {})
    assert not library._Checks("tylotest::ruled", lambda a: None, {"a": Float64}, False).plain
    assert not library._Checks("tylotest::ruled", lambda a: None, None, True).plain
    assert not library._Checks("tylotest::ruled", lambda a: None, None, ("a",)).plain
