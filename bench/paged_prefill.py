"""Prefill and chunked prefill over a paged KV cache: `tylo.ops.attention(..., block_table=,
seqused_k=)` beside the same forward on the cache stored contiguously (packed sequences,
cu_seqlens_k), on a Hopper GPU. Issue 27's goal: the paged forward within 10% of the
contiguous one. Each case is checked first (the two outputs agree, fresh random inputs), then
both are timed in one run, interleaved (CUDA events, `tylo.testing.interleaved_ms`), in TFLOP/s
of the causal work (4 D Hq x the (query, key) pairs each query sees).

    python bench/paged_prefill.py [--batch 4] [--context 4096] [--chunk 4096 512]
                                  [--heads 32,8,128] [--page-size 16 64 128 256]

Each of B sequences has `context` keys, of which its last `chunk` are the new queries (chunk ==
context: a whole prompt's prefill; smaller: chunked prefill after earlier context); pages of
the cache shuffled over the pool. Defaults: Llama-3-8B's heads (Hq 32, Hkv 8, D 128).
"""

from __future__ import annotations

import argparse


def inputs(torch, B: int, ctx: int, chunk: int, Hq: int, Hkv: int, D: int, page_size: int,
           device="cuda"):
    """(q, cu_q, k_cache, v_cache, table, seqused, k, v, cu_k): a paged cache of B sequences of
    ctx keys (pages shuffled), its packed contiguous copy k, v (B ctx, Hkv, D), and q packed
    (B chunk, Hq, D)."""
    pages = -(-ctx // page_size)
    n_pages = B * pages
    k_cache = torch.randn(n_pages, page_size, Hkv, D, device=device).bfloat16()
    v_cache = torch.randn(n_pages, page_size, Hkv, D, device=device).bfloat16()
    table = torch.randperm(n_pages, device=device).view(B, pages).to(torch.int32)
    seqused = torch.full((B,), ctx, dtype=torch.int32, device=device)
    k, v = (c[table.long()].reshape(B, pages * page_size, Hkv, D)[:, :ctx].reshape(-1, Hkv, D)
            .contiguous() for c in (k_cache, v_cache))
    q = torch.randn(B * chunk, Hq, D, device=device).bfloat16()
    cu_q = torch.arange(0, B + 1, dtype=torch.int32, device=device) * chunk
    cu_k = torch.arange(0, B + 1, dtype=torch.int32, device=device) * ctx
    return q, cu_q, k_cache, v_cache, table, seqused, k, v, cu_k


def causal_flops(B: int, ctx: int, chunk: int, Hq: int, D: int) -> float:
    """4 D Hq per (query, key) pair a query sees: query i of the chunk sees ctx - chunk + i + 1."""
    pairs = chunk * (ctx - chunk) + chunk * (chunk + 1) / 2
    return 4.0 * D * Hq * B * pairs


def calls(torch, B: int, ctx: int, chunk: int, Hq: int, Hkv: int, D: int, page_size: int):
    """(paged, contiguous): the two forward calls of one case, over fresh `inputs`."""
    import tylo.ops

    q, cu_q, kc, vc, table, used, k, v, cu_k = inputs(torch, B, ctx, chunk, Hq, Hkv, D,
                                                      page_size)

    def paged():
        return tylo.ops.attention(q, kc, vc, causal=True, cu_seqlens_q=cu_q, max_seqlen_q=chunk,
                                  block_table=table, seqused_k=used)

    def contiguous():
        return tylo.ops.attention(q, k, v, causal=True, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k,
                                  max_seqlen_q=chunk)
    return paged, contiguous


def main() -> None:
    import torch

    from tylo.testing import interleaved_ms

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--batch", type=int, nargs="+", default=[4])
    p.add_argument("--context", type=int, nargs="+", default=[4096])
    p.add_argument("--chunk", type=int, nargs="+", default=[4096, 512])
    p.add_argument("--heads", default="32,8,128", help="Hq,Hkv,D")
    p.add_argument("--page-size", type=int, nargs="+", default=[16, 64, 128, 256])
    args = p.parse_args()
    Hq, Hkv, D = (int(x) for x in args.heads.split(","))
    print(f"{'B':>3} {'ctx':>6} {'chunk':>6} {'page':>5} {'paged ms':>9} {'contig ms':>9} "
          f"{'paged TF':>9} {'contig TF':>9} {'ratio':>6}  goal (paged >= 0.90 contiguous)")
    for B in args.batch:
        for ctx in args.context:
            for chunk in (c for c in args.chunk if c <= ctx):
                for page_size in args.page_size:
                    paged, contiguous = calls(torch, B, ctx, chunk, Hq, Hkv, D, page_size)
                    a, b = paged(), contiguous()
                    err = float((a.float() - b.float()).abs().max())
                    if not err < 2e-2:
                        raise SystemExit(f"paged and contiguous outputs differ by {err}")
                    ms = interleaved_ms(torch, {"paged": paged, "contiguous": contiguous})
                    flops = causal_flops(B, ctx, chunk, Hq, D)
                    tf = {n: flops / (t * 1e9) for n, t in ms.items()}
                    ratio = ms["contiguous"] / ms["paged"]
                    print(f"{B:>3} {ctx:>6} {chunk:>6} {page_size:>5} {ms['paged']:>9.3f} "
                          f"{ms['contiguous']:>9.3f} {tf['paged']:>9.1f} "
                          f"{tf['contiguous']:>9.1f} {ratio:>6.3f}  "
                          f"{'met' if ratio >= 0.9 else 'MISSED'}")


if __name__ == "__main__":
    main()
