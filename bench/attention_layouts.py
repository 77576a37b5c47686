"""Tylo's Hopper attention in the layouts models hand over, on the GPU: (B, H, S, D) with
grouped-query heads and Sq != Sk, FlashAttention's (B, S, H, D), and packed variable-length
sequences (cu_seqlens); checks against torch in float32 on fresh random inputs with poisoned
outputs, then times each beside torch's SDPA (cuDNN, flash) in the same run, interleaved.
`--window`: a sliding window and logit soft-capping (`bench_window`) instead.

    python bench/attention_layouts.py [--check-only] [--bench-only] [--op] [--window]
"""

from __future__ import annotations

import argparse



def load() -> dict:
    from tylo.ops.kernels import attention_host

    return vars(attention_host)


def reference(torch, q, k, v, causal):
    """O, lse of one (Sq, D) x (Sk, D) head in float32: the library kernel's reference."""
    out, lse = load()["reference"](*(x[None, None] for x in (q, k, v)), causal)
    return out[0, 0], lse[0, 0]


def judge(torch, name, pairs):
    errs, lerrs, written = [], [], True
    for o, lse, ro, rl in pairs:
        written &= not bool(torch.isnan(o).any() or torch.isnan(lse).any())
        errs.append(float((o.float() - ro).norm() / ro.norm().clamp_min(1e-30)))
        fin = torch.isfinite(rl)
        lerrs.append(float((lse[fin] - rl[fin]).abs().max()) if fin.any() else 0.0)
    good = written and max(errs) < 1e-2 and max(lerrs) < 2e-3
    print(f"check {name}: O rel err {max(errs):.2e}, lse err {max(lerrs):.2e}, all written "
          f"{written}: {'ok' if good else 'FAILED'}")
    return good


def check_bhsd(torch, m, B, Hq, Hkv, Sq, Sk, D, causal):
    Q = torch.randn(B, Hq, Sq, D, device="cuda", dtype=torch.bfloat16)
    K, V = (torch.randn(B, Hkv, Sk, D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    O = torch.full_like(Q, float("nan"))
    L = torch.full((B, Hq, Sq), float("nan"), device="cuda")
    m["Attention"](Q, K, V, O, L, causal)()
    torch.cuda.synchronize()
    g = Hq // Hkv
    return judge(torch, f"bhsd B{B} Hq{Hq} Hkv{Hkv} Sq{Sq} Sk{Sk} D{D}{' causal' * causal}",
                 [(O[b, h], L[b, h], *reference(torch, Q[b, h], K[b, h // g], V[b, h // g], causal))
                  for b in range(B) for h in range(Hq)])


def check_bshd(torch, m, B, Hq, Hkv, Sq, Sk, D, causal):
    Q = torch.randn(B, Sq, Hq, D, device="cuda", dtype=torch.bfloat16)
    K, V = (torch.randn(B, Sk, Hkv, D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    O = torch.full_like(Q, float("nan"))
    L = torch.full((B, Hq, Sq), float("nan"), device="cuda")
    m["Attention"](Q, K, V, O, L, causal, layout="bshd")()
    torch.cuda.synchronize()
    g = Hq // Hkv
    return judge(torch, f"bshd B{B} Hq{Hq} Hkv{Hkv} Sq{Sq} Sk{Sk} D{D}{' causal' * causal}",
                 [(O[b, :, h], L[b, h],
                   *reference(torch, Q[b, :, h], K[b, :, h // g], V[b, :, h // g], causal))
                  for b in range(B) for h in range(Hq)])


def varlen_inputs(torch, lq, lk, Hq, Hkv, D):
    cq = torch.tensor([0] + lq, device="cuda").cumsum(0).int()
    ck = torch.tensor([0] + lk, device="cuda").cumsum(0).int()
    Q = torch.randn(int(cq[-1]), Hq, D, device="cuda", dtype=torch.bfloat16)
    K, V = (torch.randn(int(ck[-1]), Hkv, D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    return Q, K, V, cq, ck


def check_varlen(torch, m, lq, lk, Hq, Hkv, D, causal):
    Q, K, V, cq, ck = varlen_inputs(torch, lq, lk, Hq, Hkv, D)
    O = torch.full_like(Q, float("nan"))
    L = torch.full((Hq, Q.shape[0]), float("nan"), device="cuda")
    m["Attention"](Q, K, V, O, L, causal, layout="varlen", cu_seqlens_q=cq, cu_seqlens_k=ck,
                   max_seqlen_q=max(lq))()
    torch.cuda.synchronize()
    g, cq, ck = Hq // Hkv, cq.tolist(), ck.tolist()
    return judge(torch, f"varlen {len(lq)} seqs ({min(lq)}..{max(lq)} q, {min(lk)}..{max(lk)} k) "
                 f"Hq{Hq} Hkv{Hkv} D{D}{' causal' * causal}",
                 [(O[cq[b]:cq[b + 1], h], L[h, cq[b]:cq[b + 1]],
                   *reference(torch, Q[cq[b]:cq[b + 1], h], K[ck[b]:ck[b + 1], h // g],
                              V[ck[b]:ck[b + 1], h // g], causal))
                  for b in range(len(lq)) for h in range(Hq)])


def checks(torch, m) -> bool:
    import random
    rnd = random.Random()
    ok = []
    for D in (64, 128, 256):
        for causal in (False, True):
            ok.append(check_bhsd(torch, m, 2, 8, 2, 777, 777, D, causal))
            ok.append(check_bshd(torch, m, 2, 8, 2, 777, 777, D, causal))
    ok.append(check_bhsd(torch, m, 1, 4, 1, 300, 1000, 128, True))
    ok.append(check_bhsd(torch, m, 1, 4, 4, 1000, 300, 128, True))  # rows with no key
    ok.append(check_bshd(torch, m, 2, 4, 2, 200, 900, 64, True))
    for D in (64, 128):
        for causal in (False, True):
            lq = [rnd.randint(1, 700) for _ in range(5)]
            lk = lq if rnd.random() < 0.5 else [x + rnd.randint(0, 300) for x in lq]
            ok.append(check_varlen(torch, m, lq, lk, 8, 2, D, causal))
    return all(ok)


def report(torch, name, cases, flops):
    """Time `cases` interleaved; print TFLOP/s (of `flops`) and tylo's ratio to each."""
    from tylo.testing import interleaved_ms

    ms = interleaved_ms(torch, cases)
    tf = {n: flops / t / 1e9 for n, t in ms.items()}
    print(f"bench {name}: " + " | ".join(f"{n} {v:.1f}" for n, v in tf.items())
          + " TFLOP/s | " + " ".join(f"tylo/{n} {tf['tylo'] / tf[n]:.3f}" for n in tf if n != "tylo"))


def bench(torch, m) -> None:
    from tylo.testing.peers import sdpa_cases as peers


    for B, H, S, D in m["BENCH_SHAPES"]:
        for causal in (False, True):
            Q, K, V = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
            O, L = torch.empty_like(Q), torch.empty(B, H, S, device="cuda")
            cases = {"tylo": m["Attention"](Q, K, V, O, L, causal)}
            cases.update(peers(torch, Q, K, V, causal))
            report(torch, f"bhsd B{B} H{H} S{S} D{D}{' causal' * causal}", cases,
                   4 * B * H * S * S * D / (2 if causal else 1))
    B, Hq, Hkv, S, D = 2, 32, 8, 4096, 128
    for causal in (False, True):
        Q = torch.randn(B, Hq, S, D, device="cuda", dtype=torch.bfloat16)
        K, V = (torch.randn(B, Hkv, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
        O, L = torch.empty_like(Q), torch.empty(B, Hq, S, device="cuda")
        Qs, Ks, Vs = (x.transpose(1, 2).contiguous() for x in (Q, K, V))
        Os, Ls = torch.empty_like(Qs), torch.empty(B, Hq, S, device="cuda")
        cases = {"tylo": m["Attention"](Q, K, V, O, L, causal),
                 "tylo bshd": m["Attention"](Qs, Ks, Vs, Os, Ls, causal, layout="bshd")}
        cases.update(peers(torch, Q, K, V, causal, enable_gqa=True))
        report(torch, f"GQA B{B} Hq{Hq} Hkv{Hkv} S{S} D{D}{' causal' * causal}", cases,
               4 * B * Hq * S * S * D / (2 if causal else 1))
    import random
    rnd = random.Random(0)
    lens, total = [], 0
    while total < 32768:
        n = min(rnd.randint(128, 8192), 32768 - total)
        lens.append(n)
        total += n
    H, D = 16, 128
    for causal in (False, True):
        Q, K, V, cq, ck = varlen_inputs(torch, lens, lens, H, H, D)
        O, L = torch.empty_like(Q), torch.empty(H, total, device="cuda")
        cases = {"tylo": m["Attention"](Q, K, V, O, L, causal, layout="varlen", cu_seqlens_q=cq,
                                        cu_seqlens_k=cq, max_seqlen_q=max(lens))}
        try:
            from torch.nn.attention.varlen import varlen_attn

            def run_varlen(Q=Q, K=K, V=V, cq=cq, causal=causal):
                return varlen_attn(Q, K, V, cq, cq, max(lens), max(lens),
                                   window_size=(-1, 0) if causal else (-1, -1))
            run_varlen()
            torch.cuda.synchronize()
            cases["torch varlen"] = run_varlen
        except Exception as e:  # noqa: BLE001 - a peer this torch lacks is left out
            print(f"  (torch varlen_attn: {type(e).__name__}: {str(e)[:100]})")
        Bp, Smax = len(lens), max(lens)
        Qp, Kp, Vp = (torch.randn(Bp, H, Smax, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        for n, fn in peers(torch, Qp, Kp, Vp, causal).items():
            cases[f"padded {n}"] = fn
        flops = sum(4 * H * n * n * D for n in lens) / (2 if causal else 1)
        report(torch, f"varlen {len(lens)} seqs 128..8192 total {total} H{H} D{D}{' causal' * causal}",
               cases, flops)


def band_mask(torch, Sq, Sk, causal, window):
    """(Sq, Sk) bool, True where query i sees key j: FlashAttention's window (left, right), -1
    unbounded, bottom-right aligned; causal makes right 0."""
    i = torch.arange(Sq, device="cuda")[:, None] + (Sk - Sq)
    j = torch.arange(Sk, device="cuda")[None, :]
    left, right = window or (-1, -1)
    right = 0 if causal else right
    keep = torch.ones(Sq, Sk, dtype=torch.bool, device="cuda")
    if left >= 0:
        keep &= j >= i - left
    if right >= 0:
        keep &= j <= i + right
    return keep


def capped_reference(torch, q, k, v, keep, softcap):
    """O, lse of one head (Sq, D) x (Sk, D) in float32: logits scale q.k, capped to softcap
    tanh(logit / softcap), masked where `keep` is False."""
    z = (q.float() @ k.float().T) / q.shape[-1] ** 0.5
    if softcap:
        z = softcap * torch.tanh(z / softcap)
    z = z.masked_fill(~keep, float("-inf"))
    return torch.softmax(z, -1).nan_to_num(0.0) @ v.float(), torch.logsumexp(z, -1)


def check_window(torch, m, Hq, Hkv, Sq, Sk, D, causal, window, softcap):
    Q = torch.randn(1, Hq, Sq, D, device="cuda", dtype=torch.bfloat16)
    K, V = (torch.randn(1, Hkv, Sk, D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    O = torch.full_like(Q, float("nan"))
    L = torch.full((1, Hq, Sq), float("nan"), device="cuda")
    m["Attention"](Q, K, V, O, L, causal, window=window, softcap=softcap)()
    torch.cuda.synchronize()
    keep, g = band_mask(torch, Sq, Sk, causal, window), Hq // Hkv
    return judge(torch, f"window {window} softcap {softcap} Hq{Hq} Hkv{Hkv} Sq{Sq} Sk{Sk} D{D}"
                 f"{' causal' * causal}",
                 [(O[0, h], L[0, h], *capped_reference(torch, Q[0, h], K[0, h // g],
                                                       V[0, h // g], keep, softcap))
                  for h in range(Hq)])


def flex_case(torch, Q, K, V, causal, window, softcap):
    """flex_attention (compiled) with the band as a block mask and the cap as a score_mod, or
    None (printed why) where this torch lacks it."""
    try:
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention

        S, Sk = Q.shape[2], K.shape[2]
        block_mask = None
        if window or causal:
            left, right = window or (-1, 0)
            right, shift = 0 if causal else right, Sk - S

            def mask_mod(b, h, q, kv):
                seen = kv >= 0
                if left >= 0:
                    seen = seen & (kv >= q + shift - left)
                if right >= 0:
                    seen = seen & (kv <= q + shift + right)
                return seen
            block_mask = create_block_mask(mask_mod, None, None, S, Sk, device="cuda")

        def score_mod(score, b, h, q, kv):
            return softcap * torch.tanh(score / softcap)
        flex = torch.compile(flex_attention)

        def run():
            return flex(Q, K, V, score_mod=score_mod if softcap else None, block_mask=block_mask)
        run()
        torch.cuda.synchronize()
        return run
    except Exception as e:  # noqa: BLE001 - a peer this torch lacks is left out
        print(f"  (flex_attention: {type(e).__name__}: {str(e)[:120]})")
        return None


def bench_window(torch, m, check_only: bool = False) -> bool:
    """Sliding window and softcap: checks against float32 torch, then each timed beside the
    same kernel without them ("tylo plain"), flex_attention (block mask / score_mod) and, for
    the window, SDPA with the band as an explicit boolean mask (for the cap SDPA has no form:
    its plain run is shown, "no cap"). TFLOP/s count the scores the band keeps. The window's
    own cost: the window variant with a band that bounds nothing beside plain causal."""
    from tylo.testing.peers import sdpa_cases

    ok = [check_window(torch, m, 8, 2, 2000, 2000, D, True, (300, -1), None) for D in (64, 128)]
    ok.append(check_window(torch, m, 4, 1, 1000, 3000, 128, False, (700, 100), None))
    ok.append(check_window(torch, m, 4, 2, 1500, 1500, 128, True, None, 50.0))
    ok.append(check_window(torch, m, 4, 2, 1500, 1500, 256, False, (256, 256), 30.0))
    if check_only or not all(ok):
        return all(ok)
    for B, H, S, D, causal, window, softcap in [(2, 16, 8192, 128, True, (1024, 0), None),
                                                 (4, 16, 4096, 128, True, None, 50.0),
                                                 (4, 16, 4096, 128, False, None, 50.0)]:
        Q, K, V = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        O, L = torch.empty_like(Q), torch.empty(B, H, S, device="cuda")
        keep = band_mask(torch, S, S, causal, window)
        cases = {"tylo": m["Attention"](Q, K, V, O, L, causal, window=window, softcap=softcap),
                 "tylo plain": m["Attention"](Q, K, V, torch.empty_like(Q), torch.empty_like(L),
                                              causal)}
        flex = flex_case(torch, Q, K, V, causal, window, softcap)
        if flex is not None:
            cases["flex"] = flex
        if window:
            from torch.nn.functional import scaled_dot_product_attention as sdpa

            cases["sdpa mask"] = lambda Q=Q, K=K, V=V, keep=keep: sdpa(Q, K, V, attn_mask=keep)
        else:
            cases.update({f"{n} no cap": f for n, f in sdpa_cases(torch, Q, K, V, causal).items()})
        report(torch, f"B{B} H{H} S{S} D{D}{' causal' * causal} window {window} softcap "
                      f"{softcap}", cases, 4 * B * H * D * float(keep.sum()))
        if window:  # the window variant's own cost: a band that bounds nothing, beside causal
            cases = {"tylo": m["Attention"](Q, K, V, O, L, causal, window=(S, 0)),
                     "tylo plain": cases["tylo plain"]}
            report(torch, f"B{B} H{H} S{S} D{D} causal, window ({S}, 0) (bounds nothing)",
                   cases, 4 * B * H * D * S * (S + 1) / 2)
    return True


def bench_op(torch) -> None:
    """tylo.ops.attention (the custom op: checks, output allocation, tensor maps and launch on
    every call) beside the kernel's runner made once, on the (B, H, S, D) shapes; and the host
    time of one eager call (microseconds, no synchronization)."""
    import time

    import tylo.ops
    from tylo.testing import interleaved_ms

    m = load()
    for B, H, S, D in m["BENCH_SHAPES"]:
        for causal in (False, True):
            Q, K, V = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16)
                       for _ in range(3))
            O, L = torch.empty_like(Q), torch.empty(B, H, S, device="cuda")
            runner = m["Attention"](Q, K, V, O, L, causal)

            def op(Q=Q, K=K, V=V, causal=causal):
                return tylo.ops.attention(Q, K, V, causal=causal, layout="bhsd")
            op()
            ms = interleaved_ms(torch, {"kernel": runner, "op": op})
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(20):
                op()
            host = (time.perf_counter() - t0) / 20 * 1e6
            torch.cuda.synchronize()
            print(f"op B{B} H{H} S{S} D{D}{' causal' * causal}: kernel {ms['kernel']:.3f} ms, "
                  f"op {ms['op']:.3f} ms (op/kernel time {ms['op'] / ms['kernel']:.3f}); host "
                  f"time of a call {host:.0f} us")


def main() -> int:
    import torch
    parser = argparse.ArgumentParser()
    parser.add_argument("--check-only", action="store_true")
    parser.add_argument("--bench-only", action="store_true")
    parser.add_argument("--op", action="store_true",
                        help="only time tylo.ops.attention beside the kernel's runner")
    parser.add_argument("--window", action="store_true",
                        help="only the sliding window and softcap checks and timings")
    args = parser.parse_args()
    if args.op:
        bench_op(torch)
        return 0
    if args.window:
        return 0 if bench_window(torch, load(), args.check_only) else 1
    m = load()
    good = args.bench_only or checks(torch, m)
    if good and not args.check_only:
        bench(torch, m)
    return 0 if good else 1


if __name__ == "__main__":
    raise SystemExit(main())
