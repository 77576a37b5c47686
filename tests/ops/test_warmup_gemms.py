"""`tylo.ops.warmup` of the GEMM ops (ops/variants.py): the variants a Llama-like model's
description lists for `tylo.ops.matmul`, `tylo.ops.gate_up` and (asked for) `scaled_matmul`;
the keys the op's calls look up are the variants' for every row count; a warm-up in one process
after which another process's first calls (CPU tensors: the emulator) compile nothing
(`disk_cache.COUNTS`)."""

from __future__ import annotations

import textwrap

import pytest
from fresh_process import warm_then_run

torch = pytest.importorskip("torch")

from tylo.ops import warmup as ops_warmup  # noqa: E402

LLAMA_8B = {"hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
            "intermediate_size": 14336, "head_dim": 128}


def names(**options):
    return [v.name for v in ops_warmup.model_variants(LLAMA_8B, **options)]


def test_a_llama_forward_and_its_backward():
    forward = names(ops=["matmul", "gate_up"])
    assert forward == (["matmul gemm bfloat16 a K-major b K-major out bfloat16"]
                       + [f"matmul decode bfloat16 out bfloat16 n{n}" for n in (8, 16, 32, 64)]
                       + ["gate_up prefill bfloat16"]
                       + [f"gate_up decode bfloat16 n{n}" for n in (8, 16, 32, 64)])
    training = names(ops=["matmul", "gate_up"], training=True)
    assert training[:len(forward)] != forward  # matmul's backward GEMMs come with matmul's
    assert set(training) - set(forward) == {
        "matmul gemm bfloat16 a K-major b N-major out bfloat16",   # grad_a = grad @ W
        "matmul gemm bfloat16 a M-major b N-major out bfloat16",   # grad_b = x.T @ grad
        "matmul gemm bfloat16 a K-major b N-major out float32",    # gate_up's dx terms
        "gate_up swiglu_backward bfloat16", "gate_up add_rounded bfloat16"}
    assert len(training) == len(set(training))  # gate_up's GEMMs are matmul's: listed once


def test_narrowing_options():
    assert names(ops=["matmul"], token_tiles=(), dtype="float16") == [
        "matmul gemm float16 a K-major b K-major out float16"]
    assert names(ops=["gate_up"], token_tiles=(16,), prefill=False) == [
        "gate_up decode bfloat16 n16"]
    assert names(ops=["gate_up"], dtype=torch.float16) == []  # gate_up is bfloat16 only
    assert not any(n.startswith("scaled_matmul") for n in names())  # not in a Llama forward
    assert names(fp8=True) == names(ops=["attention", "matmul", "gate_up", "scaled_matmul"])


def test_tiny_widths_key_the_single_counter_variants():
    """N <= 128 (matmul) and R = 64 (gate_up): the decode kernel's counters have one element,
    an axis that is not specialized: another key."""
    found = [v.name for v in ops_warmup.model_variants(hidden_size=64, intermediate_size=64,
                                                       ops=["matmul", "gate_up"],
                                                       token_tiles=(8,), prefill=False)]
    assert found == ["matmul decode bfloat16 out bfloat16 n8 N<=128",
                     "gate_up decode bfloat16 n8 R64"]


def test_fp8_variants_by_scale_layout():
    found = names(ops=["scaled_matmul"])
    assert found == ["scaled_matmul tensor e4m3 x e4m3",
                     "scaled_matmul row e4m3 x e4m3 (as M 1 N 4096 K 4096)",
                     "scaled_matmul row e4m3 x e4m3 (as M 128 N 4096 K 4096)",
                     "scaled_matmul block e4m3 x e4m3"]
    assert names(ops=["scaled_matmul"], token_tiles=(), fp8_scaling=("row",)) == [
        "scaled_matmul row e4m3 x e4m3"]


def _key(kernel, args, block):
    specs, _ = kernel._bind(tuple(args), {}, describe=True)
    return specs, block


class Recorder:
    """Stands in for `tylo.ops.library.wrap` and each `precompile`: records the keys (specs,
    block) of the launches the ops make."""

    def __init__(self):
        self.keys = []

    def wrap(self, kernel):
        from tylo.frontend.jit.emulate import host_array

        recorder = self

        class Launch:
            def __getitem__(self, config):
                def launch(*args):
                    names = list(kernel.signature.parameters)
                    host = [host_array(n, a) if isinstance(a, torch.Tensor) else a
                            for n, a in zip(names, args)]
                    recorder.keys.append((kernel.fn.__name__, _key(kernel, host, config[1])))
                return launch
        return Launch()


def _warmup_keys(monkeypatch, variants):
    """The keys the variants' compile would precompile (their precompile recorded)."""
    from tylo.frontend.jit.kernel import Kernel

    keys = []

    def precompile(self, *args, block=32, arch=None, emulator=False, **kwargs):
        keys.append((self.fn.__name__, _key(self, args, block)))
    monkeypatch.setattr(Kernel, "precompile", precompile)
    for v in variants:
        v.compile("sm_90a", False)
    return keys


@pytest.mark.parametrize("op", ["matmul", "gate_up"])
def test_every_row_count_looks_up_a_warmed_key(monkeypatch, op):
    """For M = 1 .. 64 (decode), 65 and 300 rows, forward and backward, the keys the op's
    launches make are the warm-up's (training=True), none missing and none left over; the
    variants' host arrays stand in for the model's sizes (hidden 64, intermediate 192; q's N of
    64 makes matmul's single-counter decode variants)."""
    from tylo.ops import gate_up_op, matmul_op

    options = dict(hidden_size=64, intermediate_size=192, head_dim=32, num_heads=2,
                   num_kv_heads=1, training=True)
    warm = set(_warmup_keys(monkeypatch, ops_warmup.model_variants(ops=[op], **options)))
    recorder = Recorder()
    for module in (matmul_op, gate_up_op):
        monkeypatch.setattr(module, "wrap", recorder.wrap)
    K, R = 64, 192
    for M in (*range(1, 65, 7), 64, 65, 300):
        x = torch.randn(M, K, dtype=torch.bfloat16, requires_grad=True)
        for N in ((R, 64) if op == "matmul" else (R,)):
            w = [torch.randn(N, K, dtype=torch.bfloat16, requires_grad=True) for _ in range(2)]
            if op == "matmul":
                out = matmul_op.matmul(x, w[0].T)
            else:
                out = gate_up_op.gate_up(x, *w)
            out.backward(torch.zeros_like(out))
    called = set(recorder.keys)
    assert called <= warm, [k[0] for k in called - warm]
    assert warm <= called, [k[0] for k in warm - called]
    assert len(warm) == len(ops_warmup.model_variants(ops=[op], **options))  # all distinct


def test_every_fp8_call_looks_up_a_warmed_key(monkeypatch):
    """scaled_matmul's launches, per-tensor, rowwise and block-scaled with the scales of
    `quantize_rows` / `quantize_blocks` (W's block scales passed .t()), at M 1, 5, 64 and 300
    over the projections of a model of hidden 512 and intermediate 640, make exactly the
    warm-up's keys: the scales' strides and alignment split rowwise at M 1 (scale_a (1, 1)), and
    block-scaled by K (ceil(640/128) = 5 scales a row: not 16 bytes) and at M 1."""
    from tylo.ops import scaled_matmul_op
    from tylo.ops.kernels import gemm_fp8, gemm_fp8_blockwise

    options = dict(hidden_size=512, intermediate_size=640)
    variants = ops_warmup.model_variants(ops=["scaled_matmul"], **options)
    warm = set(_warmup_keys(monkeypatch, variants))
    assert len(warm) == len(variants) == 6  # tensor; row: 2; block: 3
    recorder = Recorder()
    monkeypatch.setattr(scaled_matmul_op, "wrap", recorder.wrap)
    shapes = [(512, 512), (640, 512), (512, 640)]  # (N, K): attention, gate/up, down
    for M in (1, 5, 64, 300):
        for N, K in shapes:
            x, w = torch.randn(M, K), torch.randn(N, K)
            (a, sa), (wq, sw) = gemm_fp8.quantize_rows(x), gemm_fp8.quantize_rows(w)
            scaled_matmul_op.scaled_matmul(a, wq.t(), sa, sw.t())
            scaled_matmul_op.scaled_matmul(a, wq.t(), torch.ones(()), torch.ones(()))
            (a, sa), (wq, sw) = (gemm_fp8_blockwise.quantize_blocks(x, 1),
                                 gemm_fp8_blockwise.quantize_blocks(w, 128))
            scaled_matmul_op.scaled_matmul(a, wq.t(), sa[:M], sw.t())
    called = set(recorder.keys)
    assert called == warm, ([k[0] for k in called - warm], [k[0] for k in warm - called])


FIRST_CALLS = """
import json, torch, tylo.ops
from tylo.frontend.jit import disk_cache
torch.manual_seed(0)
bf = torch.bfloat16
errors = {}
def error(out, ref):
    return float((out.detach().float() - ref).norm() / ref.norm())
w = torch.randn(64, 64, dtype=bf)                        # an nn.Linear weight (N, K)
for M in (2, 70):                                        # decode (M <= 64) and the GEMM
    x = torch.randn(M, 64, dtype=bf, requires_grad=True)
    wg = w.clone().requires_grad_()
    out = tylo.ops.matmul(x, wg.T)
    errors[f"matmul {M}"] = error(out, x.float() @ w.float().T)
out.backward(torch.ones_like(out))                       # the backward's two GEMMs (M 70)
errors["grad x"] = error(x.grad, torch.ones(70, 64) @ w.float())
errors["grad w"] = error(wg.grad, torch.ones(70, 64).T @ x.float())
wu = torch.randn(128, 64, dtype=bf) * 0.125
for M in (2, 70):
    x = torch.randn(M, 64, dtype=bf)
    g, u = x.float() @ (w.float().repeat(2, 1) * 0.125).T, x.float() @ wu.float().T
    out = tylo.ops.gate_up(x, (w.repeat(2, 1) * 0.125), wu)
    errors[f"gate_up {M}"] = error(out, torch.nn.functional.silu(g) * u)
emulated = dict(disk_cache.COUNTS)
model = dict(hidden_size=64, intermediate_size=128, token_tiles=(8,))
found = (tylo.ops.warmup.model_variants(ops=["matmul"], training=True, **model)
         + tylo.ops.warmup.model_variants(ops=["gate_up"], **model))
origins = [v.compile("sm_90a", False).origin for v in found]  # what a GPU's launches look up
print(json.dumps({"counts": emulated, "errors": errors, "origins": origins}))
"""

WARM = """
import sys, tylo.ops
model = dict(hidden_size=64, intermediate_size=128, emulator=True, progress=sys.stdout,
             token_tiles=(8,))
tylo.ops.warmup(ops=["matmul"], training=True, **model)
tylo.ops.warmup(ops=["gate_up"], **model)
"""


def test_warmup_then_a_fresh_process_compiles_nothing(tmp_path):
    """Warm-up (matmul with its backward, gate_up; token tile 8) of a tiny model, then a fresh
    process: matmul at M 2 (decode) and 70 (GEMM) and its backward, gate_up at M 2 and 70, on
    CPU tensors (the emulator): every module from disk, none traced."""
    out, result = warm_then_run(tmp_path, ["-c", textwrap.dedent(WARM)], FIRST_CALLS)
    assert "matmul decode bfloat16 out bfloat16 n8 N<=128" in out
    counts = result["counts"]
    assert counts.get("emulated hit") == 6, counts  # 2 + 2 matmul's, 2 gate_up's
    assert not any(k.endswith(("miss", "stored")) for k in counts), counts  # nothing compiled
    assert max(result["errors"].values()) < 1e-2, result["errors"]
    assert result["origins"] == ["disk cache"] * 6  # the sm_90a kernels too (no GPU needed)


FIRST_GPU_CALLS = """
import json, torch, tylo.ops
from tylo.frontend.jit import disk_cache
bf, dev = torch.bfloat16, "cuda"
errors, nan = {}, False
def error(out, ref):
    return float((out.detach().float() - ref).norm() / ref.norm())
for M in (5, 300):                                       # decode (token tile 8) and the GEMM
    x = torch.randn(M, 256, dtype=bf, device=dev, requires_grad=True)
    w = (torch.randn(512, 256, device=dev) * 0.0625).to(bf).requires_grad_()
    out = tylo.ops.matmul(x, w.T)
    grad = torch.randn_like(out)
    out.backward(grad)
    xf, wf, gf = x.detach().float(), w.detach().float(), grad.float()
    errors[f"matmul {M}"] = error(out, xf @ wf.T)
    errors[f"grad x {M}"] = error(x.grad, gf @ wf)
    errors[f"grad w {M}"] = error(w.grad, gf.T @ xf)
    wg, wu = ((torch.randn(512, 256, device=dev) * 0.0625).to(bf) for _ in range(2))
    h = tylo.ops.gate_up(x.detach(), wg, wu)
    errors[f"gate_up {M}"] = error(h, torch.nn.functional.silu(xf @ wg.float().T)
                                   * (xf @ wu.float().T))
    nan = nan or bool(out.isnan().any() or x.grad.isnan().any() or h.isnan().any())
torch.cuda.synchronize()
print(json.dumps({"counts": dict(disk_cache.COUNTS), "errors": errors, "nan": nan}))
"""


@pytest.mark.gpu
def test_warmup_then_a_fresh_gpu_process_compiles_nothing(tmp_path):
    """On an H100: the warm-up (sm_90a, no GPU needed) of matmul with its backward and gate_up
    (hidden 256, intermediate 512, token tile 8), then a fresh process's first calls on CUDA
    tensors (M 5: decode, M 300: the GEMMs; matmul's backward) load every kernel from disk
    (6: matmul's GEMM, decode, two backward GEMMs; gate_up's two) and match float32."""
    _, result = warm_then_run(
        tmp_path, ["-m", "tylo.ops.warmup", "--ops", "matmul", "gate_up", "--hidden-size", "256",
                   "--intermediate-size", "512", "--token-tiles", "8", "--training"],
        FIRST_GPU_CALLS)
    assert result["counts"] == {"kernels hit": 6}, result
    assert not result["nan"] and max(result["errors"].values()) < 1e-2, result["errors"]
