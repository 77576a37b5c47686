"""torch's scaled_dot_product_attention under its flash backend (FlashAttention-2) and, where
this torch offers it, its cuDNN backend: the peers of Tylo's Hopper attention benchmark
(examples/hopper/attention.py --bench). Importing this module needs torch."""

from __future__ import annotations

from collections.abc import Callable

from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.functional import scaled_dot_product_attention

#: case name -> SDPBackend member name
BACKENDS = {"flash": "FLASH_ATTENTION", "cudnn": "CUDNN_ATTENTION"}


def sdpa_cases(torch, Q, K, V, causal: bool) -> dict[str, Callable[[], object]]:
    """A callable per backend that runs on these (B, H, S, D) inputs; a backend this torch
    lacks, or one that refuses the inputs at a first call, is left out with a printed note."""
    cases = {}
    for case, member in BACKENDS.items():
        backend = getattr(SDPBackend, member, None)
        if backend is None:
            print(f"  (torch {torch.__version__} has no SDPBackend.{member})")
            continue

        def run(backend=backend):
            with sdpa_kernel(backend):
                return scaled_dot_product_attention(Q, K, V, is_causal=causal)
        try:
            run()
            torch.cuda.synchronize()
        except RuntimeError as e:
            print(f"  (SDPA {member} refused these inputs: {str(e).splitlines()[0][:120]})")
            continue
        cases[case] = run
    return cases
