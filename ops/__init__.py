"""tylo.ops: Tylo's production kernels and their PyTorch operators.

* `tylo.ops.kernels`: the kernels, written in Tylo's public language (attention, the GEMMs, the
  decode projection), each with its configuration table and a host-side runner; importing them
  loads no torch (they take torch or numpy arrays, and run on the CPU emulator too).
* The torch side, loaded (with torch) on first use of one of its names: `attention` (the
  attention forward as the custom op ``tylo::attention_forward``: `ops.attention_forward`),
  `matmul` (the Hopper GEMM in any operand layout, with autograd, as ``tylo::matmul``:
  `ops.matmul_op`, a module name apart from the function's), `grouped_matmul` (the
  mixture-of-experts grouped GEMM, contiguous layout, as ``tylo::grouped_matmul``:
  `ops.grouped_matmul_op`; `grouped_matmul_masked`, its masked (padded per expert) layout:
  `ops.grouped_matmul_masked_op`; `grouped_scaled_matmul`, its block-scaled FP8 form:
  `ops.grouped_scaled_matmul_op`), `decode_attention` (decode attention over a paged KV cache,
  split-KV, as ``tylo::decode_attention``: `ops.decode_attention_op`), `gate_up` (the Llama MLP's
  silu(x W_gate^T) * (x W_up^T) as ``tylo::gate_up``, with autograd: `ops.gate_up_op`),
  `scaled_matmul` (FP8 GEMMs with per-tensor, rowwise or block scales, as
  ``tylo::scaled_matmul``: `ops.scaled_matmul_op`), `int_mm` (int8/uint8 products into int32,
  torch._int_mm's arguments, as ``tylo::int_mm``: `ops.int_mm_op`); `PagedKVCache` (a paged KV cache for
  decode_attention: pages, block table, seq_lens, a token's K/V appended on the device) and
  `GraphedStep` (a step captured in a CUDA graph): `ops.paged_cache`; `LlamaDecoder` (a
  transformers Llama decoded token by token on these ops, or on torch for comparison):
  `ops.llama_decode`; `custom_op` makes a function that launches Tylo
  kernels a ``torch.library`` custom op with a fake implementation (``torch.compile``,
  ``opcheck``, CUDA graphs; `register_autograd` for a backward), and
  `wrap(kernel)[grid, block](...)` launches a kernel on its tensors' device: CUDA tensors on
  torch's current stream, CPU tensors on the CPU emulator, and `direct(*tensors)` says when an
  eager call may skip torch's dispatcher (`ops.library`); `warmup(config)`
  (also ``python -m tylo.ops.warmup``) compiles the kernel variants a model needs into the disk
  cache ahead of time, without a GPU (`ops.warmup`). docs/torch.md is the guide.

The package imports `tylo`'s public names only (tests/test_layering.py).
"""

from importlib import import_module

_TORCH_SIDE = {"custom_op": "library", "direct": "library", "wrap": "library", "WrappedKernel": "library",
               "attention": "attention_forward", "matmul": "matmul_op",
               "grouped_matmul": "grouped_matmul_op", "gate_up": "gate_up_op",
               "grouped_matmul_masked": "grouped_matmul_masked_op",
               "grouped_scaled_matmul": "grouped_scaled_matmul_op",
               "decode_attention": "decode_attention_op",
               "scaled_matmul": "scaled_matmul_op", "int_mm": "int_mm_op", "warmup": "warmup",
               "PagedKVCache": "paged_cache", "GraphedStep": "paged_cache",
               "LlamaDecoder": "llama_decode"}

__all__ = ["GraphedStep", "LlamaDecoder", "PagedKVCache", "WrappedKernel", "attention", "custom_op", "decode_attention", "direct", "gate_up", "grouped_matmul",
           "grouped_matmul_masked", "grouped_scaled_matmul", "int_mm", "matmul", "scaled_matmul",
           "warmup", "wrap"]


def __getattr__(name: str):
    module = _TORCH_SIDE.get(name)
    if module is None:
        raise AttributeError(f"module 'tylo.ops' has no attribute {name!r}")
    value = import_module(f"{__name__}.{module}")
    if name != "warmup":  # (the module ops/warmup.py is itself callable as its warmup function)
        value = getattr(value, name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_TORCH_SIDE))
