"""The implementations Tylo's kernels are timed beside, on the same inputs and in the same run
(`tylo.testing.interleaved_ms`): torch's scaled_dot_product_attention under its flash
(FlashAttention-2) and cuDNN backends; torch.matmul (cuBLAS) and torch._scaled_mm (cuBLASLt,
FP8) are plain lambdas where they are timed; the Triton bf16 matmul is
`tylo.testing.triton_matmul` (it needs triton). Everything here needs torch, imported when a
function is called."""

from __future__ import annotations

from collections.abc import Callable

#: case name -> SDPBackend member name
SDPA_BACKENDS = {"flash": "FLASH_ATTENTION", "cudnn": "CUDNN_ATTENTION"}


def sdpa_cases(torch, Q, K, V, causal: bool,
               enable_gqa: bool = False) -> dict[str, Callable[[], object]]:
    """A callable per SDPA backend that runs on these (B, H, S, D) inputs (`enable_gqa`: K and
    V with fewer heads than Q); a backend this torch lacks, or one that refuses the inputs at a
    first call, is left out with a printed note."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.functional import scaled_dot_product_attention

    cases = {}
    for case, member in SDPA_BACKENDS.items():
        backend = getattr(SDPBackend, member, None)
        if backend is None:
            print(f"  (torch {torch.__version__} has no SDPBackend.{member})")
            continue

        def run(backend=backend):
            with sdpa_kernel(backend):
                if enable_gqa:
                    return scaled_dot_product_attention(Q, K, V, is_causal=causal,
                                                        enable_gqa=True)
                return scaled_dot_product_attention(Q, K, V, is_causal=causal)
        try:
            run()
            torch.cuda.synchronize()
        except RuntimeError as e:
            print(f"  (SDPA {member} refused these inputs: {str(e).splitlines()[0][:120]})")
            continue
        cases[case] = run
    return cases
