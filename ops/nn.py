"""``torch.nn`` modules over `tylo.ops`, for putting Tylo's GEMMs into an existing model:

    model = tylo.ops.nn.convert(model)        # every bf16/f16 nn.Linear and gated MLP, in place

* `Linear`: y = x W^T (+ bias) through `tylo.ops.matmul`, over an ``nn.Linear``'s own
  parameters (no copy: W (N, K) is read as the K-major view W.T). x (..., K) is flattened to
  (M, K) when its rows are contiguous (a view), else refused by matmul's checks.
* `GatedMLP`: down(silu(x W_gate^T) * (x W_up^T)), Llama's MLP (transformers' ``LlamaMLP``,
  ``MistralMLP``, ``Qwen2MLP`` ...: any module with ``gate_proj``, ``up_proj``, ``down_proj`` and a
  SiLU ``act_fn``, bf16, intermediate size a multiple of 64: gate_up's rules), through
  `tylo.ops.gate_up` and `tylo.ops.matmul`.
* `convert(model)`: replaces such MLPs by `GatedMLP` and the remaining ``nn.Linear`` layers whose
  weight is bf16 or f16 by `Linear`, sharing the parameters under their names
  (``gate_proj.weight`` ...: a state dict, ``save_pretrained`` and an optimizer's parameter
  groups see the model as before), and returns the model. An f16 gated MLP gets three `Linear`
  layers; an ``nn.Linear`` of another dtype stays as it is.

The modules have the backward of the ops they call (autograd of `tylo.ops.matmul` and
`tylo.ops.gate_up`); a bias is added by torch (one extra elementwise kernel).
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["GatedMLP", "Linear", "convert"]

_DTYPES = (torch.bfloat16, torch.float16)


def _rows(x: torch.Tensor) -> torch.Tensor:
    """x (..., K) as (M, K): a view when its rows allow, else x itself (2-D or not: the op's
    checks name what is wrong)."""
    return x if x.dim() == 2 else x.reshape(-1, x.shape[-1])


class Linear(nn.Module):
    """y = x W^T + b over the parameters of `linear` (an ``nn.Linear``; shared, not copied).
    x: (..., in_features) of the weight's dtype (bf16 or f16); y: (..., out_features)."""

    def __init__(self, linear: nn.Linear):
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.weight, self.bias = linear.weight, linear.bias

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        from .matmul_op import matmul

        y = matmul(_rows(x), self.weight.t())
        if self.bias is not None:
            y = y + self.bias
        return y.view(*x.shape[:-1], self.out_features)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None} (tylo.ops.matmul)")


def _is_gated_mlp(module: nn.Module) -> bool:
    names = ("gate_proj", "up_proj", "down_proj")
    if not all(isinstance(getattr(module, n, None), nn.Linear) for n in names):
        return False
    if any(getattr(module, n).bias is not None for n in names[:2]):
        return False
    R, K = module.gate_proj.weight.shape  # gate_up's rules: R a multiple of 64, K of 8
    return _is_silu(getattr(module, "act_fn", None)) and \
        module.gate_proj.weight.dtype == torch.bfloat16 and R % 64 == 0 and K % 8 == 0


def _is_silu(act) -> bool:
    """torch's ``nn.SiLU``, ``F.silu``, or transformers' ``SiLUActivation`` (ACT2FN["silu"])."""
    return isinstance(act, nn.SiLU) or act is torch.nn.functional.silu or (
        type(act).__name__ == "SiLUActivation" and type(act).__module__.startswith("transformers"))


class GatedMLP(nn.Module):
    """down_proj(silu(x W_gate^T) * (x W_up^T)) over the parameters of `mlp` (a module with
    bf16 ``gate_proj``, ``up_proj`` (no bias), ``down_proj`` and a SiLU ``act_fn``; shared,
    not copied, under the same names). x: (..., hidden) bf16; returns (..., hidden)."""

    def __init__(self, mlp: nn.Module):
        super().__init__()
        if not _is_gated_mlp(mlp):
            raise TypeError(f"GatedMLP takes a module with bias-free bf16 gate_proj and up_proj "
                            f"nn.Linear layers, a down_proj and a SiLU act_fn; got "
                            f"{type(mlp).__name__}")
        self.gate_proj, self.up_proj = mlp.gate_proj, mlp.up_proj  # (their weights: gate_up's)
        self.down_proj = Linear(mlp.down_proj)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        from .gate_up_op import gate_up

        h = gate_up(_rows(x), self.gate_proj.weight, self.up_proj.weight)
        return self.down_proj(h).view(*x.shape[:-1], -1)


def convert(model: nn.Module) -> nn.Module:
    """Swap `model`'s gated MLPs for `GatedMLP` and its other bf16/f16 ``nn.Linear`` layers for
    `Linear`, in place (module docstring); returns `model`."""
    for name, child in list(model.named_children()):
        if _is_gated_mlp(child):
            setattr(model, name, GatedMLP(child))
        elif isinstance(child, nn.Linear) and child.weight.dtype in _DTYPES:
            setattr(model, name, Linear(child))
        else:
            convert(child)
    return model
