"""tylo.ops.decode_attention (paged KV cache, split-KV) beside SDPA on the same cache stored
contiguously and a read-only pass over the same K/V bytes, on a Hopper GPU: each case checked
first (fresh random inputs, the output's memory poisoned with NaN, against float32 torch on the
gathered cache), then timed in one run, interleaved (CUDA events, `tylo.testing.interleaved_ms`),
in GB/s of K + V bytes (B x context x Hkv x D x 2 tensors x 2 bytes).

    python bench/decode_attention.py [--batch 1 8 64] [--context 1024 8192 32768]
                                     [--heads 32,8,128] [--page-size 16] [--q-len 1] [--fp8]

Defaults: Hq 32, Hkv 8, D 128 (Llama-3-8B), q_len 1, pages of 16 tokens scattered over a
shuffled pool, every sequence of the full context (cases whose cache passes --max-gb skipped).
SDPA gets q (B, Hq, q_len, D) and K/V (B, Hkv, context, D) contiguous, enable_gqa=True, under
the cuDNN backend where it accepts the call, else the default choice (the line says which).
The read-only pass is `k.sum(dtype=float32) + v.sum(...)` over the contiguous copy: a bound on
what streaming these bytes costs here. Eager calls: host time is inside each measurement.

--fp8: the cache quantized to float8_e4m3fn with per-KV-head descales (k_scale, v_scale), and
tylo.ops.decode_attention on it (GB/s of the FP8 bytes, half the bf16 ones) beside the same op
on the bf16 cache of the dequantized values, SDPA on its contiguous bf16 copy and read-only
passes over the FP8 bytes and the bf16 ones; the FP8 result is checked against float32 on the
dequantized cache. Each case's GB/s counts the bytes it reads (FP8: 1 an element).
"""

from __future__ import annotations

import argparse

BATCHES = (1, 8, 64)
CONTEXTS = (1024, 8192, 32768)


def inputs(torch, B: int, ctx: int, q_len: int, Hq: int, Hkv: int, D: int, page_size: int,
           device="cuda"):
    """(q, k_cache, v_cache, block_table, seq_lens, k, v): a paged cache of B sequences of ctx
    tokens (pages shuffled) and its contiguous (B, Hkv, ctx, D) copy k, v."""
    pages = -(-ctx // page_size)
    n_pages = B * pages
    k_cache = torch.randn(n_pages, page_size, Hkv, D, device=device).to(torch.bfloat16)
    v_cache = torch.randn(n_pages, page_size, Hkv, D, device=device).to(torch.bfloat16)
    table = torch.randperm(n_pages, device=device).view(B, pages).to(torch.int32)
    seq_lens = torch.full((B,), ctx, dtype=torch.int32, device=device)
    q = torch.randn(B, q_len, Hq, D, device=device).to(torch.bfloat16)
    k, v = (contiguous(c, table, ctx) for c in (k_cache, v_cache))
    return q, k_cache, v_cache, table, seq_lens, k, v


def contiguous(cache, table, ctx: int):
    """The paged cache (num_pages, page_size, Hkv, D) gathered through table (B, pages) as a
    contiguous (B, Hkv, ctx, D)."""
    B, pages = table.shape
    _, page_size, Hkv, D = cache.shape
    return (cache[table.long()].reshape(B, pages * page_size, Hkv, D)[:, :ctx].transpose(1, 2)
            .contiguous())


def quantize(torch, cache):
    """(float8_e4m3fn cache, (Hkv,) float32 descales, the dequantized float32 cache): each KV
    head over its amax / 448."""
    x = cache.float()
    scales = x.abs().amax((0, 1, 3)) / 448
    fp8 = (x / scales[None, None, :, None]).to(torch.float8_e4m3fn)
    return fp8, scales, fp8.float() * scales[None, None, :, None]


def reference(torch, q, k, v):
    """float32 attention of q (B, q_len, Hq, D) over contiguous k, v (B, Hkv, ctx, D), causal
    bottom-right among the q_len new tokens: (B, q_len, Hq, D)."""
    B, q_len, Hq, D = q.shape
    G = Hq // k.shape[1]
    kf, vf = (x.float().repeat_interleave(G, 1) for x in (k, v))
    s = torch.einsum("bihd,bhjd->bhij", q.float(), kf) * D ** -0.5
    ctx = k.shape[2]
    mask = torch.arange(ctx, device=q.device)[None, :] > (
        ctx - q_len + torch.arange(q_len, device=q.device))[:, None]
    p = s.masked_fill(mask, float("-inf")).softmax(-1)
    return torch.einsum("bhij,bhjd->bihd", p, vf)


def rel_error(torch, out, ref) -> float:
    if bool(out.isnan().any()):
        return float("inf")
    return float((out.float() - ref).abs().max() / ref.abs().max())


def sdpa(torch, q, k, v):
    """(fn, backend name): SDPA on (B, Hq, q_len, D) and k, v, cuDNN if it takes the call."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.functional as F
    qt = q.transpose(1, 2).contiguous()
    causal = q.shape[1] > 1

    def call():
        return F.scaled_dot_product_attention(qt, k, v, is_causal=False, enable_gqa=True) \
            if not causal else F.scaled_dot_product_attention(
                qt, k, v, attn_mask=_mask(torch, q, k), enable_gqa=True)
    try:
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            call()

        def cudnn():
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                return call()
        return cudnn, "cuDNN"
    except RuntimeError:
        return call, "default"


def _mask(torch, q, k):
    q_len, ctx = q.shape[1], k.shape[2]
    return torch.arange(ctx, device=q.device)[None, :] <= (
        ctx - q_len + torch.arange(q_len, device=q.device))[:, None]


def fp8_cases(torch, q, kc, vc, table, lens, ctx: int, nbytes: int):
    """--fp8: (cases {name: (fn, bytes)}, check error) over an e4m3 copy of the cache; kc, vc
    are replaced in place by the bf16 of the dequantized values (what the others read)."""
    import tylo.ops
    (k8, ks, kd), (v8, vs, vd) = quantize(torch, kc), quantize(torch, vc)
    kc.copy_(kd)
    vc.copy_(vd)
    ref = reference(torch, q, contiguous(kd, table, ctx), contiguous(vd, table, ctx))
    kd = vd = None
    out = tylo.ops.decode_attention(q, k8, v8, table, lens, k_scale=ks, v_scale=vs)
    err = rel_error(torch, out, ref)
    cases = {"tylo fp8": (lambda: tylo.ops.decode_attention(q, k8, v8, table, lens,
                                                           k_scale=ks, v_scale=vs), nbytes // 2),
             "read fp8 K+V": (lambda: k8.view(torch.uint8).sum(dtype=torch.int32)
                              + v8.view(torch.uint8).sum(dtype=torch.int32), nbytes // 2)}
    return cases, err


def bench(torch, batches, contexts, Hq, Hkv, D, page_size, q_len, max_gb, fp8=False) -> bool:
    import tylo.ops
    from tylo.testing import interleaved_ms
    good = True
    for B in batches:
        for ctx in contexts:
            nbytes = 2 * B * ctx * Hkv * D * 2
            held = 3 * nbytes if fp8 else 2 * nbytes  # paged, contiguous (and FP8, float32 tmp)
            if held / 1e9 > max_gb:
                print(f"B={B} ctx={ctx}: {held / 1e9:.1f} GB > --max-gb, skipped")
                continue
            q, kc, vc, table, lens, k, v = inputs(torch, B, ctx, q_len, Hq, Hkv, D, page_size)
            extra, err8 = ({}, 0.0) if not fp8 else fp8_cases(torch, q, kc, vc, table, lens,
                                                              ctx, nbytes)
            if fp8:  # the contiguous copy of the dequantized values
                k, v = contiguous(kc, table, ctx), contiguous(vc, table, ctx)
            poison = torch.full(q.shape, float("nan"), device="cuda", dtype=torch.bfloat16)
            del poison
            out = tylo.ops.decode_attention(q, kc, vc, table, lens)
            err = max(rel_error(torch, out, reference(torch, q, k, v)), err8)
            ok = err < 2e-2
            good &= ok
            theirs, backend = sdpa(torch, q, k, v)
            cases = {"tylo": (lambda q=q, kc=kc, vc=vc, t=table, n=lens:
                              tylo.ops.decode_attention(q, kc, vc, t, n), nbytes),
                     f"sdpa[{backend}]": (theirs, nbytes),
                     "read K+V": (lambda k=k, v=v: k.sum(dtype=torch.float32)
                                  + v.sum(dtype=torch.float32), nbytes), **extra}
            ms = interleaved_ms(torch, {name: fn for name, (fn, _) in cases.items()})
            line = "  ".join(f"{name} {cases[name][1] / t / 1e6:7.1f} GB/s ({t:.3f} ms)"
                             for name, t in ms.items())
            print(f"B={B} ctx={ctx} Hq={Hq} Hkv={Hkv} D={D} q_len={q_len} page={page_size} "
                  f"(check {'ok' if ok else f'FAILED {err:.3g}'}):\n  {line}")
            cases = theirs = None  # the inputs go before the next case's are made
            q = kc = vc = k = v = out = extra = None
            torch.cuda.empty_cache()
    return good


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", nargs="+", type=int, default=list(BATCHES))
    parser.add_argument("--context", nargs="+", type=int, default=list(CONTEXTS))
    parser.add_argument("--heads", default="32,8,128", help="Hq,Hkv,D")
    parser.add_argument("--page-size", type=int, default=16)
    parser.add_argument("--q-len", type=int, default=1)
    parser.add_argument("--fp8", action="store_true",
                        help="also an e4m3 cache with per-KV-head descales (module docstring)")
    parser.add_argument("--max-gb", type=float, default=40.0,
                        help="skip cases whose paged cache + contiguous copy pass this")
    args = parser.parse_args(argv)
    Hq, Hkv, D = (int(x) for x in args.heads.split(","))
    import torch
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        print("no Hopper GPU (sm_90): nothing to time")
        return 0
    return 0 if bench(torch, args.batch, args.context, Hq, Hkv, D, args.page_size, args.q_len,
                      args.max_gb, args.fp8) else 1


if __name__ == "__main__":
    raise SystemExit(main())
