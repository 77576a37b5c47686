"""tylo.ops: Tylo kernels as PyTorch operators (``import tylo.ops`` imports torch).

`custom_op` makes a function that launches Tylo kernels a ``torch.library`` custom op with a
fake implementation (``torch.compile``, ``opcheck``, CUDA graphs; `register_autograd` for a
backward), and `wrap(kernel)[grid, block](...)` launches a kernel on its tensors' device: CUDA
tensors on torch's current stream, CPU tensors on the CPU emulator (`ops.library`). The package
is written in Tylo's public language: it imports `tylo`'s public names only
(tests/test_layering.py). docs/torch.md is the guide.
"""

from .library import WrappedKernel, custom_op, wrap

__all__ = ["custom_op", "wrap", "WrappedKernel"]
