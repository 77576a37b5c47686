"""The implementations Tylo's kernels are timed beside, on the same inputs and in the same run
(`tylo.testing.interleaved_ms`): torch's scaled_dot_product_attention under its flash
(FlashAttention-2) and cuDNN backends, and torch's FP8 attention where it has one
(`fp8_sdpa_case`: FlashAttention-3 through torch, which then serves the flash backend too);
torch.matmul (cuBLAS) and torch._scaled_mm (cuBLASLt,
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


def fp8_sdpa_case(torch, Q, K, V, q_descale, k_descale, v_descale,
                  causal: bool) -> Callable[[], object] | None:
    """torch's own FP8 attention on these e4m3 (B, H, S, D) inputs and (B, Hkv) float32
    descales, when this torch has one that runs here: torch.nn.attention.experimental's
    ``_scaled_dot_product_attention_quantized`` (FlashAttention-3's kernels through
    ``activate_flash_attention_impl("FA3")``, which needs FA3's ``flash_attn_interface``
    installed); else None, with a printed note saying why (torch 2.11's SDPA has no FP8 cuDNN
    path)."""
    try:
        from torch.nn.attention import activate_flash_attention_impl
        from torch.nn.attention.experimental._scaled_dot_product_attention_quantized import (
            _scaled_dot_product_attention_quantized as quantized)
    except ImportError as e:
        print(f"  (torch {torch.__version__} has no FP8 SDPA: {e})")
        return None
    try:
        activate_flash_attention_impl("FA3")
    except Exception as e:  # noqa: BLE001 - any failure means: no FA3 here
        print(f"  (torch's FP8 SDPA needs FlashAttention-3: {str(e).splitlines()[0][:120]})")
        return None

    def run():
        return quantized(Q, K, V, is_causal=causal, q_descale=q_descale, k_descale=k_descale,
                         v_descale=v_descale)
    try:
        run()
        torch.cuda.synchronize()
    except (RuntimeError, ValueError) as e:
        print(f"  (torch's FP8 SDPA refused these inputs: {str(e).splitlines()[0][:120]})")
        return None
    return run
