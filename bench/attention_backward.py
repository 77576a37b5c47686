"""Tylo's Hopper attention backward (tylo.ops.kernels.attention_backward: preprocess, the
FlashAttention-3-structured main kernel, at D 256 attention_backward_d256, postprocess) on the
GPU, (B, H, S, D), D 64, 128 and 256: checks against float32 torch autograd on fresh random
inputs with poisoned gradients, then times the three kernels beside torch's SDPA backward
(cuDNN, flash) on the same inputs, interleaved in one run
(`tylo.testing.interleaved_ms`). TFLOP/s count 2.5 times the forward's 4 B Hq Sq Sk D (half
of it causal): the backward's five GEMMs to the forward's two. `--dq` picks the main kernel's
dQ mode ("red": red.global.add per element; "tma": the CTA's sum by TMA reductions; "both":
each checked, and timed as its own case "tylo-red", "tylo-tma" in the same interleaved run;
default: the kernels' default, `DQ_MODE`); `--dq-vector` the float32 elements per
red.global.add of the "red" mode (2, the default; 4, red.global.add.v4.f32 after a lane
shuffle; "both": cases "tylo-v2", "tylo-v4", so that one run times both beside cuDNN; the "tma"
mode has 2 only). v2 against v4 at D 128 "red" and D 256:

    python bench/attention_backward.py --bench-only --dq red --dq-vector both --shapes 1,5
    python bench/attention_backward.py [--check-only] [--bench-only] [--dq red|tma|both]
        [--dq-vector 2|4|both]
"""

from __future__ import annotations

import argparse
import math

#: (B, Hq, Hkv, S, D) timed, each causal and not: issue 25's four (B4 S4096 and B1 S16384 at D 64
#: and 128), grouped-query heads, and D 256.
SHAPES = [(4, 16, 16, 4096, 64), (4, 16, 16, 4096, 128), (1, 16, 16, 16384, 64),
          (1, 16, 16, 16384, 128), (2, 32, 8, 4096, 128), (2, 16, 16, 4096, 256)]


def flops(B, Hq, S, Sk, D, causal) -> float:
    """2.5 x the forward's FLOPs (4 B Hq Sq Sk D; half when causal)."""
    return 2.5 * 4 * B * Hq * S * Sk * D / (2 if causal else 1)


def inputs(torch, B, Hq, Hkv, S, D, device="cuda"):
    """Fresh random q, dout (B, Hq, S, D), k, v (B, Hkv, S, D) bfloat16."""
    q, dout = (torch.randn(B, Hq, S, D, device=device, dtype=torch.bfloat16) for _ in range(2))
    k, v = (torch.randn(B, Hkv, S, D, device=device, dtype=torch.bfloat16) for _ in range(2))
    return q, k, v, dout


def reference(torch, q, k, v, dout, causal):
    """out, lse and (dq, dk, dv) by float32 torch autograd (GQA by repeating K, V heads)."""
    q, k, v = (x.detach().float().requires_grad_() for x in (q, k, v))
    g = q.shape[1] // k.shape[1]
    kk, vv = (x.repeat_interleave(g, dim=1) for x in (k, v))
    z = q @ kk.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        n = q.shape[2]
        z = z.masked_fill(torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1),
                          -math.inf)
    lse = torch.logsumexp(z, dim=-1)
    out = torch.softmax(z, dim=-1) @ vv
    out.backward(dout.float())
    return out.detach(), lse.detach(), (q.grad, k.grad, v.grad)


def modes(dq: str | None) -> list:
    """The dQ modes a `--dq` value names (None: the kernels' default)."""
    from tylo.ops.kernels.attention_backward import DQ_MODE, DQ_MODES

    if dq is None:
        return [DQ_MODE]
    return list(DQ_MODES) if dq == "both" else [dq]


def at_dim(dq: list, D: int) -> list:
    """The modes of `dq` the kernels have at head dim D: at D 256 "red" alone
    (attention_backward_d256)."""
    return dq if D != 256 else ["red"]


def variants(dq: list, vectors: list, D: int) -> list:
    """The (dQ mode, vector) pairs run at head dim D: each mode of `dq` the kernels have there
    (`at_dim`; None: the default mode, "red" at D 256), with each of `vectors` in the "red"
    mode and 2 in the "tma" mode."""
    from tylo.ops.kernels.attention_backward import DQ_MODE

    red = lambda mode: (mode or (DQ_MODE if D != 256 else "red")) == "red"  # noqa: E731
    return [(mode, n) for mode in at_dim(dq, D) for n in (vectors if red(mode) else [2])]


def extras(dets: list, writers: list) -> list:
    """The option sets `--deterministic` and `--dq-writer` ask for: dicts of
    `AttentionBackward`'s deterministic and dq_writer."""
    return [dict(deterministic=d, dq_writer=w) for d in dets for w in writers]


def served(options: dict, mode: str | None, D: int) -> bool:
    """Whether the kernels have `options` with dQ mode `mode` at head dim D: whether `config`
    takes them (it refuses deterministic and the writer with "red" at D 64/128, the writer at
    D 256)."""
    import tylo
    from tylo.ops.kernels.attention_backward import config

    try:
        config(D, dq=mode, **options)
    except tylo.ArgumentError:
        return False
    return True


def suffix(options: dict) -> str:
    return ("-det" if options.get("deterministic") else "") + \
        ("-writer" if options.get("dq_writer") else "")


def tylo_backward(torch, q, k, v, out, dout, lse, causal, dq=None, lpt=None, dq_vector=2,
                  **options):
    """(the launches as a callable, (dq, dk, dv) poisoned) of the kernels on these arrays,
    dQ added the `dq` way (`dq_vector` float32 elements per reduction of the "red" mode), the
    grid in `lpt` order (None: the defaults; "full": one chunk of every head,
    `attention_backward_tiles.grid`), `options` more of `AttentionBackward`'s (deterministic,
    dq_writer)."""
    from tylo.ops.kernels import attention_backward_tiles as tiles
    from tylo.ops.kernels.attention_backward_host import AttentionBackward

    grads = tuple(torch.full_like(x, float("nan")) for x in (q, k, v))
    budget = tiles.LPT_L2_BYTES
    if lpt == "full":
        tiles.LPT_L2_BYTES = 1 << 62
    try:
        run = AttentionBackward(q, k, v, out, dout, lse, *grads, causal,
                                emulate=q.device.type == "cpu", dq=dq,
                                lpt=None if lpt is None else bool(lpt), dq_vector=dq_vector,
                                **options)
    finally:
        tiles.LPT_L2_BYTES = budget
    return run, grads


def check(torch, B, Hq, Hkv, S, D, causal, device="cuda", dq=None, lpt=None,
          dq_vector=2, **options) -> bool:
    """The kernels' dQ, dK, dV against float32 autograd (relative error < 2e-2, every element
    written); with options["deterministic"] a second run's gradients must equal the first's
    bit for bit."""
    deterministic = options.get("deterministic", False)
    q, k, v, dout = inputs(torch, B, Hq, Hkv, S, D, device)
    out, lse, want = reference(torch, q, k, v, dout, causal)
    run, got = tylo_backward(torch, q, k, v, out.to(torch.bfloat16), dout, lse, causal, dq,
                             lpt, dq_vector, **options)
    run()
    first = got
    if deterministic:  # a second run into poisoned gradients must give the same bits
        first = [g.clone() for g in got]
        for g in got:
            g.fill_(float("nan"))
        run()
    if device != "cpu":
        torch.cuda.synchronize()
    errs = [float((g.float() - w).norm() / w.norm()) for g, w in zip(got, want)]
    written = not any(bool(g.isnan().any()) for g in got)
    same = all(torch.equal(a, b) for a, b in zip(first, got))
    good = written and max(errs) < 2e-2 and same
    print(f"check B{B} Hq{Hq} Hkv{Hkv} S{S} D{D}{' causal' * causal}"
          f"{'' if dq is None else ' dq ' + dq}{'' if dq_vector == 2 else f' v{dq_vector}'}"
          f"{'' if lpt is None else f' lpt {lpt}'}"
          f"{' deterministic' * deterministic}"
          f"{' writer' * bool(options.get('dq_writer'))}: dq/dk/dv rel err "
          + "/".join(f"{e:.2e}" for e in errs) + f", all written {written}"
          + (f", rerun bit for bit {same}" if deterministic else "") + ": "
          + ("ok" if good else "FAILED"))
    return good


def sdpa_case(torch, backend, q, k, v, dout, causal):
    """A callable running SDPA's backward alone with `backend` (its forward done once), or None
    where that backend refuses these inputs."""
    from torch.nn.attention import sdpa_kernel

    q, k, v = (x.detach().requires_grad_() for x in (q, k, v))
    try:
        with sdpa_kernel(backend):
            out = torch.nn.functional.scaled_dot_product_attention(
                q, k, v, is_causal=causal, enable_gqa=q.shape[1] != k.shape[1])
            torch.autograd.grad(out, (q, k, v), dout, retain_graph=True)
    except RuntimeError:
        return None

    def run():
        with sdpa_kernel(backend):
            torch.autograd.grad(out, (q, k, v), dout, retain_graph=True)
    return run


def bench(torch, B, Hq, Hkv, S, D, causal, dq=((None, 2),), lpts=(None,),
          options=({},)) -> None:
    """One shape: the Tylo kernels in each (dQ mode, vector) of `dq` (`variants`), grid order
    of `lpts` and option set of `options` (`extras`) (a case "tylo", or
    "tylo[-<mode>][-v<vector>][-lpt|-heads][-det][-writer]" when several)
    beside SDPA's cuDNN and flash backward, interleaved; TFLOP/s and ratios."""
    from torch.nn.attention import SDPBackend

    from tylo.testing import interleaved_ms

    q, k, v, dout = inputs(torch, B, Hq, Hkv, S, D)
    out = torch.empty_like(q)
    lse = torch.empty(B, Hq, S, device="cuda")
    from tylo.ops.kernels.attention_host import Attention

    Attention(q, k, v, out, lse, causal)()  # the forward's out and lse, as training has them
    cases = {}
    several_modes = len({mode for mode, _ in dq}) > 1
    several_vectors = len({n for _, n in dq}) > 1
    for mode, n in dq:
        for lpt in lpts:
            for more in options:
                if not served(more, mode, D):
                    continue  # (refused: `config`)
                order = {False: "heads", True: "lpt", "full": "lpt-full"}.get(lpt)
                name = "tylo" + (f"-{mode}" if several_modes else "") + \
                    (f"-v{n}" if several_vectors else "") + \
                    (f"-{order}" if len(lpts) > 1 else "") + suffix(more)
                cases[name] = tylo_backward(torch, q, k, v, out, dout, lse, causal, mode, lpt,
                                            n, **more)[0]
    ours = list(cases)
    for name, backend in (("cudnn", SDPBackend.CUDNN_ATTENTION),
                          ("flash", SDPBackend.FLASH_ATTENTION)):
        case = sdpa_case(torch, backend, q, k, v, dout, causal)
        if case is not None:
            cases[name] = case
    ms = interleaved_ms(torch, cases)
    f = flops(B, Hq, S, S, D, causal)
    tf = {n: f / t / 1e9 for n, t in ms.items()}
    others = [n for n in tf if n not in ours]
    pairs = [(o, n) for o in ours for n in others] + [(o, ours[0]) for o in ours[1:]]
    print(f"bench B{B} Hq{Hq} Hkv{Hkv} S{S} D{D}{' causal' * causal}: "
          + " | ".join(f"{n} {v:.1f}" for n, v in tf.items()) + " TFLOP/s | "
          + " ".join(f"{o}/{n} {tf[o] / tf[n]:.3f}" for o, n in pairs))


def main() -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check-only", action="store_true")
    parser.add_argument("--bench-only", action="store_true")
    parser.add_argument("--dq", choices=("red", "tma", "both"), default=None,
                        help="the main kernel's dQ mode(s) (default: the kernels' default)")
    parser.add_argument("--dq-vector", choices=("2", "4", "both"), default="2",
                        help="float32 elements per red.global.add of the \"red\" dQ mode "
                             "(both: each timed as its own case)")
    parser.add_argument("--lpt", choices=("on", "off", "both", "all"), default=None,
                        help="the main kernel's grid order: key blocks slowest in chunks of "
                             "heads (on), heads slowest (off), both, all (both and one chunk "
                             "of every head) (default: the kernels' default by causality)")
    parser.add_argument("--deterministic", choices=("on", "off", "both"), default="off",
                        help="dQ added in a fixed order (on), not (off), or both timed")
    parser.add_argument("--dq-writer", choices=("on", "off", "both"), default="off",
                        help="the \"tma\" dQ reductions issued by a producer warp (on), by a "
                             "consumer thread (off), or both timed")
    parser.add_argument("--shapes", default=None,
                        help="comma-separated indices into SHAPES to time (default: all)")
    parser.add_argument("--shape", action="append", default=[], metavar="B,Hq,Hkv,S,D",
                        help="another shape to time (repeatable; with --shapes or alone)")
    args = parser.parse_args()
    dq = modes(args.dq)
    vectors = [2, 4] if args.dq_vector == "both" else [int(args.dq_vector)]
    lpts = {None: [None], "on": [True], "off": [False], "both": [False, True],
            "all": [False, True, "full"]}[args.lpt]
    choice = {"on": [True], "off": [False], "both": [False, True]}
    options = extras(choice[args.deterministic], choice[args.dq_writer])
    ok = True
    if not args.bench_only:
        for D in (64, 128, 256):
            for mode, n in variants(dq, vectors, D):
                for causal in (False, True):
                    for lpt in lpts:
                        for more in options:
                            if not served(more, mode, D):
                                continue  # (refused: `config`)
                            ok &= check(torch, 2, 16, 16, 2048, D, causal, dq=mode, lpt=lpt,
                                        dq_vector=n, **more)
                            ok &= check(torch, 2, 32, 8, 1024, D, causal, dq=mode, lpt=lpt,
                                        dq_vector=n, **more)
    if not args.check_only:
        extra = [tuple(int(x) for x in shape.split(",")) for shape in args.shape]
        picked = (SHAPES if args.shapes is None and not extra
                  else [SHAPES[int(i)] for i in (args.shapes or "").split(",") if i] + extra)
        for shape in picked:
            for causal in (False, True):
                bench(torch, *shape, causal, variants(dq, vectors, shape[-1]), lpts, options)
    if not ok:
        raise SystemExit("a check FAILED")


if __name__ == "__main__":
    main()
