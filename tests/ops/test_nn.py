"""tylo.ops.nn: Linear and GatedMLP over an existing module's parameters, and `convert` of a small
transformers Llama (tylo attention, matmul and gate_up) against the same model on SDPA + torch,
logits and gradients, on the CPU (the emulator) and on a GPU."""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")

import tylo.ops.nn as tylo_nn  # noqa: E402


def rel(a, b) -> float:
    a, b = a.detach().double(), b.detach().double()
    return float((a - b).norm() / b.norm())


def test_linear_shares_the_parameters_and_matches_torch_forward_and_backward():
    torch.manual_seed(0)
    lin = torch.nn.Linear(72, 40, bias=True).to(torch.bfloat16)
    mine = tylo_nn.Linear(lin)
    assert mine.weight is lin.weight and mine.bias is lin.bias
    x = torch.randn(2, 3, 72, dtype=torch.bfloat16)
    xa, xb = x.clone().requires_grad_(), x.clone().requires_grad_()
    with torch.no_grad():
        got, want = mine(xa), lin.double()(xb.double())
    assert got.shape == (2, 3, 40) and rel(got, want) < 1e-2
    lin.to(torch.bfloat16)
    g = torch.randn(2, 3, 40, dtype=torch.bfloat16)
    got_w = torch.autograd.grad(mine(xa), (xa, mine.weight), g)
    lin64 = copy.deepcopy(lin).double()
    want_w = torch.autograd.grad(lin64(xb.double()), (xb, lin64.weight), g.double())
    for a, b in zip(got_w, want_w):
        assert rel(a, b) < 1e-2


def test_gated_mlp_refuses_a_module_that_is_not_one():
    with pytest.raises(TypeError, match="gate_proj"):
        tylo_nn.GatedMLP(torch.nn.Linear(8, 8))


def test_convert_leaves_float32_linears_alone():
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Linear(8, 8).to(torch.bfloat16))
    tylo_nn.convert(model)
    assert type(model[0]) is torch.nn.Linear and isinstance(model[1], tylo_nn.Linear)


class MLP(torch.nn.Module):
    def __init__(self, dtype):
        super().__init__()
        self.gate_proj = torch.nn.Linear(64, 128, bias=False, dtype=dtype)
        self.up_proj = torch.nn.Linear(64, 128, bias=False, dtype=dtype)
        self.down_proj = torch.nn.Linear(128, 64, bias=False, dtype=dtype)
        self.act_fn = torch.nn.SiLU()

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


def test_convert_keeps_the_parameter_names_and_gives_float16_three_linears():
    """A state dict (save_pretrained, an optimizer's groups) sees the same names after convert;
    gate_up is bf16 only, so an f16 MLP keeps its shape with tylo Linear layers."""
    model = torch.nn.Sequential(MLP(torch.bfloat16), MLP(torch.float16))
    before = {k: v.data_ptr() for k, v in model.state_dict().items()}
    tylo_nn.convert(model)
    assert {k: v.data_ptr() for k, v in model.state_dict().items()} == before
    assert isinstance(model[0], tylo_nn.GatedMLP)
    assert type(model[1]) is MLP and isinstance(model[1].gate_proj, tylo_nn.Linear)
    x = torch.randn(3, 64, dtype=torch.float16)
    want = MLP(torch.float16)
    want.load_state_dict(model[1].state_dict())
    assert rel(model[1](x), want.double()(x.double())) < 1e-2


def llamas(device, layers, hidden, heads, kv_heads, head_dim, mlp):
    transformers = pytest.importorskip("transformers")
    import tylo.ops.transformers as tylo_transformers

    config = transformers.LlamaConfig(vocab_size=512, hidden_size=hidden, intermediate_size=mlp,
                                      num_hidden_layers=layers, num_attention_heads=heads,
                                      num_key_value_heads=kv_heads, head_dim=head_dim)
    name = tylo_transformers.register()
    made = [transformers.LlamaForCausalLM._from_config(copy.deepcopy(config),
                                                       attn_implementation=impl)
            for impl in ("sdpa", name)]
    made[1].load_state_dict(made[0].state_dict())
    sdpa, mine = (m.to(device=device, dtype=torch.bfloat16) for m in made)
    tylo_nn.convert(mine)
    assert isinstance(mine.model.layers[0].mlp, tylo_nn.GatedMLP)
    assert isinstance(mine.model.layers[0].self_attn.q_proj, tylo_nn.Linear)
    return sdpa, mine


def test_small_llama_converted_matches_sdpa_on_the_emulator():
    """Logits of a converted Llama (tylo attention, matmul, gate_up; the emulator) against the
    same weights on SDPA + torch; the forward only (the attention has no backward yet)."""
    sdpa, mine = llamas("cpu", layers=1, hidden=128, heads=2, kv_heads=1, head_dim=64, mlp=192)
    ids = torch.randint(0, 512, (1, 24))
    with torch.no_grad():
        want = sdpa(ids).logits.float()
        got = mine(ids).logits.float()
    assert rel(got, want) < 2e-2


@pytest.mark.gpu
def test_gpu_llama_converted_matches_sdpa_eager_and_compiled():
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    torch.manual_seed(0)
    sdpa, mine = llamas("cuda", layers=2, hidden=1024, heads=8, kv_heads=2, head_dim=128,
                        mlp=2816)
    ids = torch.randint(0, 512, (2, 600), device="cuda")
    with torch.no_grad():
        want = sdpa(ids).logits.float()
        assert rel(mine(ids).logits.float(), want) < 2e-2
        compiled = torch.compile(mine, fullgraph=True)
        assert rel(compiled(ids).logits.float(), want) < 2e-2
