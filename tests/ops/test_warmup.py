"""`tylo.ops.warmup` (ops/warmup.py): the variants a model's description asks for, and a warm-up
in one process after which another process's first attention call compiles nothing (the disk
cache's own accounting, `disk_cache.COUNTS`, not timing)."""

from __future__ import annotations

import pytest
from fresh_process import warm_then_run

torch = pytest.importorskip("torch")

import tylo  # noqa: E402
from tylo.ops import warmup as ops_warmup  # noqa: E402

LLAMA_8B = {"hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
            "intermediate_size": 14336, "head_dim": 128}


def test_a_config_gives_the_attention_variants():
    found = ops_warmup.model_variants(LLAMA_8B, ops=["attention"])
    names = [v.name for v in found]
    assert len(names) == 10 == len(set(names))  # 5 memory orders x causal or not
    assert all(n.startswith("attention D128 ") and " Hq32 Hkv8 " in n for n in names)
    assert {n.split()[5] for n in names} == {"bhsd", "bshd", "bshd/bhsd", "bhsd/bshd",
                                             "varlen"}


def test_a_sliding_window_and_a_softcap_add_the_window_variants_all_capped():
    gemma2 = {"hidden_size": 3584, "num_attention_heads": 16, "num_key_value_heads": 8,
              "head_dim": 256, "query_pre_attn_scalar": 256, "sliding_window": 4096,
              "attn_logit_softcapping": 50.0}
    names = [v.name for v in ops_warmup.model_variants(gemma2, ops=["attention"])]
    assert len(names) == 15 == len(set(names))  # 5 memory orders x causal, full, window
    assert sum(" window " in n for n in names) == 5
    assert all(n.endswith(" softcap 50") for n in names)
    qwen2 = dict(LLAMA_8B, sliding_window=4096, use_sliding_window=False)
    assert not any(" window " in v.name for v in ops_warmup.model_variants(qwen2, ops=["attention"]))


def test_the_window_variant_precompiles():
    """The window variant compiles for sm_90a, capped (its left and right are launch
    arguments: one variant for every window)."""
    from tylo.ops.kernels import attention_host as host

    compiled = host.precompile(128, True, 2, 1, "bshd", window=True, softcap=30.0)
    assert "tanh.approx.f32" in compiled.ptx


def test_model_options_read_a_config_object_and_options_win():
    class Config:  # any object with transformers' field names
        hidden_size, num_attention_heads, num_key_value_heads = 2048, 16, None
        query_pre_attn_scalar = 144

    options = ops_warmup.model_options(Config(), num_kv_heads=4)
    assert options["head_dim"] == 128 and options["num_heads"] == 16
    assert options["num_kv_heads"] == 4 and options["scale"] == 144 ** -0.5


def test_narrowing_and_no_attention_without_a_head_dim():
    found = ops_warmup.model_variants(head_dim=64, num_heads=4, causal=(True,),
                                      layouts=("varlen",))
    assert [v.name for v in found] == ["attention D64 causal Hq4 Hkv4 varlen scale 0.125"]
    assert ops_warmup.model_variants(hidden_size=1024, ops=["attention", "gate_up"]) == []


@pytest.mark.parametrize("options, argument", [
    (dict(head_dim=96, num_heads=8), "head_dim"),
    (dict(head_dim=128, num_heads=8, num_kv_heads=3), "num_kv_heads"),
    (dict(head_dim=128), "num_heads"),
    (dict(head_dim=128, num_heads=8, layouts=("sbhd",)), "layouts"),
    (dict(head_dim=128, num_heads=8, ops=["softmax"]), "ops"),
    (dict(hidden_size=4096, dtype="float32"), "dtype"),
    (dict(hidden_size=4096, token_tiles=(8, 12)), "token_tiles"),
    (dict(hidden_size=4096, intermediate_size=1000), "intermediate_size"),
    (dict(hidden_size=4096, fp8=True, fp8_types=[("e5m2", "e5m2")]), "fp8_types"),
    (dict(hidden_size=4096, fp8=True, fp8_scaling=("colwise",)), "fp8_scaling"),
])
def test_refusals_name_the_option(options, argument):
    with pytest.raises(tylo.ArgumentError) as info:
        ops_warmup.model_variants(**options)
    assert info.value.argument == argument


def test_the_disk_cache_must_be_on():  # (the suite runs with TYLO_NO_CACHE=1)
    with pytest.raises(tylo.ArgumentError, match="the disk cache is off"):
        tylo.ops.warmup(head_dim=64, num_heads=2)


def test_transformers_scale_is_the_default_variant():
    """head_dim ** -0.5 (what transformers passes) and 1 / sqrt(head_dim) differ in their last
    bit at D 128; they are one variant (the kernel computes in float32)."""
    import numpy as np

    from tylo import BFloat16
    from tylo.ops.kernels import attention_host as host

    x = np.zeros((1, 2, 64, 128), dtype=BFloat16.numpy)
    lse = np.zeros((1, 2, 64), np.float32)
    default = host.Attention(x, x, x, x, lse, True, emulate=True)
    hf = host.Attention(x, x, x, x, lse, True, emulate=True, scale=128 ** -0.5)
    other = host.Attention(x, x, x, x, lse, True, emulate=True, scale=0.1)
    assert 128 ** -0.5 != 1 / np.sqrt(128)
    assert hf.cfg == default.cfg and other.cfg != default.cfg


FIRST_CALL = """
import json, torch, tylo.ops
from tylo.frontend.jit import disk_cache
from tylo.ops.kernels import attention_host as host
torch.manual_seed(0)
q = torch.randn(1, 40, 2, 64, dtype=torch.bfloat16)   # (B, S, Hq, D): the "bshd" path
k, v = (torch.randn(1, 40, 1, 64, dtype=torch.bfloat16) for _ in range(2))
out = tylo.ops.attention(q, k, v, causal=True)          # CPU tensors: the emulator
ref = torch.nn.functional.scaled_dot_product_attention(
    q.transpose(1, 2).float(), k.transpose(1, 2).float(), v.transpose(1, 2).float(),
    is_causal=True, enable_gqa=True).transpose(1, 2)
error = float((out.float() - ref).norm() / ref.norm())
gpu = host.precompile(64, True, 2, 1, "bshd", "bshd")  # what a GPU's first launch looks up
print(json.dumps({"counts": dict(disk_cache.COUNTS), "error": error, "origin": gpu.origin}))
"""


def test_warmup_then_a_fresh_process_compiles_nothing(tmp_path):
    out, result = warm_then_run(
        tmp_path, ["-m", "tylo.ops.warmup", "--head-dim", "64", "--num-heads", "2",
                   "--num-kv-heads", "1", "--causal", "yes", "--layouts", "bshd", "--emulator"],
        FIRST_CALL)
    assert "attention D64 causal Hq2 Hkv1 bshd" in out
    counts = result["counts"]
    assert counts.get("emulated hit") == 1 and counts.get("kernels hit") == 1, counts
    assert not any(k.endswith(("miss", "stored")) for k in counts), counts  # nothing compiled
    assert result["origin"] == "disk cache"
    assert result["error"] < 1e-2


@pytest.mark.parametrize("varlen", [False, True])
def test_one_variant_serves_every_length(varlen):
    """The op's compile key (the kernel's parameter specs) is the same for a sequence of 128, of
    5, 127 (not multiples of 4) and of 1 (decode): the lse rows the op allocates are 16-byte
    aligned and the kernel's lse annotation fixes the stride of its last axis."""
    from tylo.frontend.jit.emulate import host_array
    from tylo.ops import attention_forward as op
    from tylo.ops.kernels import attention as kernel
    from tylo.ops.kernels import attention_host as host

    names = list(kernel.attention.signature.parameters)
    keys = set()
    for S in (128, 127, 5, 1):
        q = torch.zeros(1, S, 2, 64, dtype=torch.bfloat16)
        k = torch.zeros(1, 8 if S == 1 else S, 1, 64, dtype=torch.bfloat16)
        if varlen:
            q, k = q[0], k[0]
            cu_q, cu_k = (torch.tensor([0, x.shape[0]], dtype=torch.int32) for x in (q, k))
            out, lse, _, _ = op._outputs(q, k, k, cu_q, "bshd")
            run = host.Attention(q, k, k, out, lse, True, emulate=True, layout="varlen",
                                 cu_seqlens_q=cu_q, cu_seqlens_k=cu_k, max_seqlen_q=S)
        else:
            _, lse, order, O = op._outputs(q, k, k, None, "bshd")
            run = host.Attention(q, k, k, O, lse, True, emulate=True, layout=order[0],
                                 kv_layout=order[1])
        args = tuple(host_array(n, a) for n, a in zip(names, (*run.maps, *run.args)))
        specs, _ = kernel.attention._bind(args, {}, describe=True)
        keys.add(specs)
        assert lse.shape[-1] == (q.shape[0] if varlen else S)
    assert len(keys) == 1


FIRST_GPU_CALL = """
import json, torch, tylo.ops
from tylo.frontend.jit import disk_cache
q = torch.randn(2, 300, 4, 128, dtype=torch.bfloat16, device="cuda")    # (B, S, Hq, D)
k, v = (torch.randn(2, 300, 2, 128, dtype=torch.bfloat16, device="cuda") for _ in range(2))
out, lse = tylo.ops.attention(q, k, v, causal=True, return_lse=True)
torch.cuda.synchronize()
ref = torch.nn.functional.scaled_dot_product_attention(
    q.transpose(1, 2).float(), k.transpose(1, 2).float(), v.transpose(1, 2).float(),
    is_causal=True, enable_gqa=True).transpose(1, 2)
error = float((out.float() - ref).norm() / ref.norm())
print(json.dumps({"counts": dict(disk_cache.COUNTS), "error": error,
                  "nan": bool(out.isnan().any() or lse.isnan().any())}))
"""


@pytest.mark.gpu
def test_warmup_then_a_fresh_gpu_process_compiles_nothing(tmp_path):
    """On an H100: the warm-up (sm_90a, no GPU needed) of Hq 4 Hkv 2 D 128 causal (B, S, H, D),
    then a fresh process's first op call on CUDA tensors loads the kernel from disk (S 300: not
    a multiple of the tiles) and matches float32 SDPA."""
    _, result = warm_then_run(
        tmp_path, ["-m", "tylo.ops.warmup", "--head-dim", "128", "--num-heads", "4",
                   "--num-kv-heads", "2", "--causal", "yes", "--layouts", "bshd"],
        FIRST_GPU_CALL)
    assert result["counts"] == {"kernels hit": 1}, result
    assert not result["nan"] and result["error"] < 1e-2


def test_training_adds_the_backward_variants():
    """With training: per memory order and causality the backward's main kernel (and its
    batch-of-one variant where Q or K/V lie (B, S, H, D) with more than one head), and
    preprocess and postprocess once per batched or packed rows, at D 256 too (its own main
    kernel); none where the backward refuses (a softcap) and no window variant."""
    names = [v.name for v in ops_warmup.model_variants(LLAMA_8B, ops=["attention"],
                                                       training=True, sliding_window=4096)]
    backward = [n for n in names if n.startswith("attention_backward ")]
    assert len(names) == 15 + len(backward) and len(set(names)) == len(names)
    main = [n for n in backward if n.split()[1] == "D128"]
    assert len(main) == 2 * (5 + 3)  # causal or not x (5 memory orders + 3 of batch 1)
    assert not any(" window " in n for n in backward)
    assert sum(" batch 1 " in n for n in main) == 6
    assert sorted(n for n in backward if n not in main) == [
        "attention_backward postprocess D128 Hq32 batched scale 0.0883883",
        "attention_backward postprocess D128 Hq32 varlen scale 0.0883883",
        "attention_backward preprocess D128 Hq32 batched",
        "attention_backward preprocess D128 Hq32 varlen"]
    found = ops_warmup.model_variants(LLAMA_8B, ops=["attention"], training=True, softcap=50.0)
    assert found and not any(v.name.startswith("attention_backward") for v in found)
    d256 = [v.name for v in ops_warmup.model_variants(LLAMA_8B, ops=["attention"],
                                                      training=True, head_dim=256)]
    assert len([n for n in d256 if n.startswith("attention_backward D256 ")]) == len(main)
    assert "attention_backward D256 causal Hq32 Hkv8 varlen scale 0.0625" in d256


@pytest.mark.parametrize("dq", ["red", "tma"])
@pytest.mark.parametrize("layout", ["bhsd", "bshd", "bshd/bhsd", "bhsd/bshd", "varlen"])
def test_the_backward_warmup_keys_are_the_ops(layout, dq, monkeypatch):
    """The keys (parameter specs) of the op's three backward launches, for several batches,
    lengths (not multiples of 4 too: dlse is padded) and head counts, are those of the
    warm-up's host arrays (`host_launches`; its batch 1 variant for a batch of one where it
    differs), and the transformers scale head_dim ** -0.5 is the default's variant; with
    either dQ mode the default (`DQ_MODE`: "tma" binds dQ's accumulator as a tensor map; D
    256 adds dQ by red.global.add whatever the default)."""
    from tylo.frontend.jit.emulate import host_array
    from tylo.ops import attention_backward as op_backward
    from tylo.ops import attention_forward as op
    from tylo.ops.kernels import attention_backward as kernel
    from tylo.ops.kernels import attention_backward_host as host
    from tylo.ops.kernels.attention_backward_d256 import SplitConfig

    monkeypatch.setattr(kernel, "DQ_MODE", dq)
    launched = []

    class Launches:  # wrap(kernel)[grid, block](*args): recorded, not run
        def __init__(self, k):
            self.k = k

        def __getitem__(self, launch):
            return lambda *args: launched.append((self.k, args))

    monkeypatch.setattr(op, "wrap", Launches)
    monkeypatch.setattr(op_backward, "wrap", Launches)

    def specs(k, args):
        names = list(k.signature.parameters)
        return k._bind(tuple(host_array(n, x.detach() if hasattr(x, "detach") else x)
                             for n, x in zip(names, args)), {}, describe=True)[0]

    q_order, kv_order = op.LAYOUTS[layout]
    for B, S, Hq, Hkv, D, scale in ((1, 40, 2, 1, 64, None), (3, 5, 4, 2, 64, None),
                                    (2, 7, 1, 1, 128, 128 ** -0.5), (1, 9, 4, 4, 128, 0.1),
                                    (2, 11, 4, 2, 256, None)):
        def tensor(order, h, B=B, S=S, D=D):
            if order == "varlen":
                return torch.zeros(B * S, h, D, dtype=torch.bfloat16, requires_grad=True)
            x = torch.zeros(*((B, S, h, D) if order == "bshd" else (B, h, S, D)),
                            dtype=torch.bfloat16)
            return (x.transpose(1, 2) if order == "bhsd" else x).requires_grad_()
        q, k, v = tensor(q_order, Hq), tensor(kv_order, Hkv), tensor(kv_order, Hkv)
        packed = {}
        if layout == "varlen":
            cu = torch.arange(0, B * S + 1, S, dtype=torch.int32)
            packed = dict(cu_seqlens_q=cu, cu_seqlens_k=cu, max_seqlen_q=S, max_seqlen_k=S)
        launched.clear()
        tylo.ops.attention(q, k, v, causal=True, scale=scale, **packed).sum().backward()
        batch = 1 if B == 1 and ((q_order == "bshd" and Hq > 1) or
                                 (kv_order == "bshd" and Hkv > 1)) else 2
        warm = host.host_launches(D, True, Hq, Hkv, q_order, kv_order,
                                    D ** -0.5 if scale is None else scale, batch)
        assert [k for k, _ in launched[1:]] == [k for k, _, _, _ in warm]  # (1st: forward)
        assert [specs(k, a) for k, a in launched[1:]] == [specs(k, a) for k, _, _, a in warm]
        modes = [x.dq for x in launched[2][1] if isinstance(x, (kernel.Config, SplitConfig))]
        assert modes == [dq if D != 256 else "red"]  # (D 256: red.global.add only)


FIRST_BACKWARD = """
import json, torch, tylo.ops
from tylo.frontend.jit import disk_cache
from tylo.ops.kernels import attention_backward_host as backward
torch.manual_seed(0)
q = torch.randn(2, 6, 2, 64, dtype=torch.bfloat16, requires_grad=True)  # (B, S, Hq, D)
k, v = (torch.randn(2, 6, 1, 64, dtype=torch.bfloat16, requires_grad=True) for _ in range(2))
out = tylo.ops.attention(q, k, v, causal=True)          # CPU tensors: the emulator
grad = torch.randn_like(out)
out.backward(grad)
q32, k32, v32 = (x.detach().float().requires_grad_() for x in (q, k, v))
ref = torch.nn.functional.scaled_dot_product_attention(
    q32.transpose(1, 2), k32.transpose(1, 2), v32.transpose(1, 2),
    is_causal=True, enable_gqa=True).transpose(1, 2)
ref.backward(grad.float())
error = max(float((x.grad.float() - r.grad).norm() / r.grad.norm())
            for x, r in ((q, q32), (k, k32), (v, v32)))
gpu = backward.precompile(64, True, 2, 1, "bshd", "bshd", 0.125)  # a GPU's first backward's
print(json.dumps({"counts": dict(disk_cache.COUNTS), "error": error,
                  "origins": [c.origin for c in gpu]}))
"""


def test_a_training_warmup_then_a_fresh_backward_compiles_nothing(tmp_path):
    """`--training --emulator`, then a fresh process's forward and backward on CPU tensors
    (S 6: dlse's rows not 16-byte aligned unpadded) load all four kernels from the disk cache,
    and the sm_90a backward kernels are there too."""
    out, result = warm_then_run(
        tmp_path, ["-m", "tylo.ops.warmup", "--head-dim", "64", "--num-heads", "2",
                   "--num-kv-heads", "1", "--causal", "yes", "--layouts", "bshd", "--training",
                   "--emulator"],
        FIRST_BACKWARD)
    assert "attention_backward D64 causal Hq2 Hkv1 bshd scale 0.125" in out
    counts = result["counts"]
    assert counts.get("emulated hit") == 4 and counts.get("kernels hit") == 3, counts
    assert not any(k.endswith(("miss", "stored")) for k in counts), counts  # nothing compiled
    assert result["origins"] == ["disk cache"] * 3
    assert result["error"] < 2e-2


FIRST_GPU_BACKWARD = """
import json, torch, tylo.ops
from tylo.frontend.jit import disk_cache
q = torch.randn(2, 300, 4, 128, dtype=torch.bfloat16, device="cuda", requires_grad=True)
k, v = (torch.randn(2, 300, 2, 128, dtype=torch.bfloat16, device="cuda", requires_grad=True)
        for _ in range(2))
out = tylo.ops.attention(q, k, v, causal=True)                 # (B, S, H, D), S 300
grad = torch.randn_like(out)
grads = torch.autograd.grad(out, (q, k, v), grad)
torch.cuda.synchronize()
q32, k32, v32 = (x.detach().float().requires_grad_() for x in (q, k, v))
ref = torch.nn.functional.scaled_dot_product_attention(
    q32.transpose(1, 2), k32.transpose(1, 2), v32.transpose(1, 2),
    is_causal=True, enable_gqa=True).transpose(1, 2)
refs = torch.autograd.grad(ref, (q32, k32, v32), grad.float())
error = max(float((g.float() - r).norm() / r.norm()) for g, r in zip(grads, refs))
print(json.dumps({"counts": dict(disk_cache.COUNTS), "error": error,
                  "nan": any(bool(g.isnan().any()) for g in grads)}))
"""


@pytest.mark.gpu
def test_a_training_warmup_then_a_fresh_gpu_backward_compiles_nothing(tmp_path):
    """On an H100: `--training` (sm_90a, no GPU needed) of Hq 4 Hkv 2 D 128 causal (B, S, H,
    D), then a fresh process's forward and backward on CUDA tensors (B 2, S 300) load their
    four kernels from disk and the gradients match float32 SDPA's."""
    _, result = warm_then_run(
        tmp_path, ["-m", "tylo.ops.warmup", "--head-dim", "128", "--num-heads", "4",
                   "--num-kv-heads", "2", "--causal", "yes", "--layouts", "bshd",
                   "--training"],
        FIRST_GPU_BACKWARD)
    assert result["counts"] == {"kernels hit": 4}, result
    assert not result["nan"] and result["error"] < 2e-2
