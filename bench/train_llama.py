"""Training of a small transformers Llama (random initial weights, bf16) with Tylo's attention
beside the same run on SDPA: the loss of every step both ways, whether the two curves agree
within bf16 noise, step times and tokens/s; with `--check-grads` also one step's gradient of
every parameter both ways.

    python bench/train_llama.py [--steps 300] [--layers 8] [--hidden 1024] [--heads 16]
        [--kv-heads 4] [--head-dim 64] [--seq 2048] [--batch 4] [--gemms] [--amp]
        [--check-grads] [--float32] [--json PATH]

Runs: copies of one random initial state (made on the CPU from `--seed`, rounded to bf16), each
trained by AdamW on the same batches, their steps interleaved in one loop:

* baseline `sdpa-cudnn`: transformers' "sdpa" attention under SDPBackend.CUDNN_ATTENTION
  (`--baseline`; any run name below);
* `tylo`: attn_implementation="tylo" (`tylo.ops.attention`, forward and backward through
  Tylo's kernels); `--gemms` also puts Tylo's GEMMs in (`tylo.ops.nn.convert`);
* noise reference `sdpa-flash`: "sdpa" under FLASH_ATTENTION (FlashAttention-2) (`--reference`);
* `--float32`: the baseline's attention with float32 weights, optimizer and compute, shown for
  scale (the spread bf16 itself makes), not judged.

Run names: `tylo`, `sdpa` (SDPA's own choice of backend), `sdpa-cudnn`, `sdpa-flash`,
`sdpa-efficient`, `sdpa-math`, `eager` (transformers' matmul-softmax-matmul), `float32`.
`--amp`: every run keeps float32 weights and optimizer and computes under
torch.autocast(bfloat16) (mixed precision) instead of bf16 weights (no `--gemms` then: the GEMM
ops take bf16 weights).

Data (`token_batches`): pure uniform random tokens give a flat loss at log(vocab), so each
sequence is a walk of a fixed random Markov chain (every token has `--branch` successors, one
drawn uniformly per step) of seq / `--repeat` tokens, repeated `--repeat` times. The walk's
tokens are learnable from the previous token alone (floor log(branch) nats); the repeats are
predictable only by attending to the earlier copy (floor 0). The loss falls from log(vocab)
towards the mean of the two floors.

Judgement (`judge`): two correct bf16 attentions (cuDNN's and FlashAttention-2's) round
differently, so their training curves part by what bf16 rounding does to training: that is the
noise. Per window of `--window` steps, the mean |loss_tylo - loss_baseline| must be at most
`--k` times the mean |loss_reference - loss_baseline| (or k times `floor`, 1e-4 of the mean
loss, where the reference's spread is smaller), in every window; the baseline's loss must also
fall (by `--min-drop`, 10% of its first loss, first step to the last window), else the curves
say little.

Timing: each run's steps are timed in the loop with CUDA events (forward + backward, optimizer
step), the median over the steps after `--warmup`; then forward + backward alone on one batch,
every run once per round (`tylo.testing.interleaved_ms`). Tokens/s = batch x seq / time.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import statistics
import time
from dataclasses import dataclass, field

#: run name -> (transformers' attn_implementation, SDPBackend member or None, float32 weights)
RUNS = {"tylo": ("tylo", None, False), "sdpa": ("sdpa", None, False),
        "sdpa-cudnn": ("sdpa", "CUDNN_ATTENTION", False),
        "sdpa-flash": ("sdpa", "FLASH_ATTENTION", False),
        "sdpa-efficient": ("sdpa", "EFFICIENT_ATTENTION", False),
        "sdpa-math": ("sdpa", "MATH", False), "eager": ("eager", None, False),
        "float32": ("sdpa", None, True)}


def llama_config(transformers, *, vocab=32000, hidden=1024, mlp=None, layers=8, heads=16,
                 kv_heads=4, head_dim=64, seq=2048):
    """A LlamaConfig of these sizes (mlp default: 2.75 x hidden rounded to 64, Llama's ratio)."""
    mlp = mlp or -(-int(2.75 * hidden) // 64) * 64
    return transformers.LlamaConfig(vocab_size=vocab, hidden_size=hidden, intermediate_size=mlp,
                                    num_hidden_layers=layers, num_attention_heads=heads,
                                    num_key_value_heads=kv_heads, head_dim=head_dim,
                                    max_position_embeddings=max(seq, 128))


def initial_state(torch, transformers, config, seed: int) -> dict:
    """The random initial weights every run starts from: transformers' initialization on the
    CPU from `seed` (the same on every machine), rounded to bf16 (exact in every run's dtype)."""
    torch.manual_seed(seed)
    model = transformers.LlamaForCausalLM._from_config(config, attn_implementation="eager")
    return {k: v.to(torch.bfloat16) for k, v in model.state_dict().items()}


@dataclass
class Run:
    """One model in training: its name, model, optimizer and what surrounds its forward (an
    SDPA backend, autocast)."""
    name: str
    model: object
    optimizer: object
    context: object
    losses: list = field(default_factory=list)
    fwd_bwd_ms: list = field(default_factory=list)
    optimizer_ms: list = field(default_factory=list)

    def forward_backward(self, ids):
        """The loss of `ids` (next-token cross entropy, float32), its gradients accumulated."""
        with self.context():
            loss = self.model(input_ids=ids, labels=ids).loss
        loss.backward()
        return loss

    def step(self):
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)


def make_run(torch, transformers, config, state, name: str, device, *, gemms=False, amp=False,
             lr=1e-3):
    """`name` (a key of RUNS) as a `Run`: the model of `config` on `device` holding `state`,
    AdamW(lr, betas (0.9, 0.95), weight decay 0.1)."""
    import copy

    from torch.nn.attention import SDPBackend, sdpa_kernel

    if name not in RUNS:
        raise SystemExit(f"unknown run {name!r}: one of {', '.join(RUNS)}")
    attn, backend, float32 = RUNS[name]
    if attn == "tylo":
        import tylo.ops.transformers

        attn = tylo.ops.transformers.register()
    with torch.device(device):
        model = transformers.LlamaForCausalLM._from_config(copy.deepcopy(config),
                                                           attn_implementation=attn)
    dtype = torch.float32 if float32 or amp else torch.bfloat16
    model = model.to(dtype)
    model.load_state_dict(state)
    model.train()
    if gemms and name == "tylo":
        import tylo.ops.nn

        tylo.ops.nn.convert(model)
    sdpa = (lambda: sdpa_kernel(getattr(SDPBackend, backend))) if backend else \
        contextlib.nullcontext
    autocast = amp and not float32

    @contextlib.contextmanager
    def context():
        with sdpa(), (torch.autocast(torch.device(device).type, dtype=torch.bfloat16)
                      if autocast else contextlib.nullcontext()):
            yield
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95),
                                  weight_decay=0.1)
    return Run(name, model, optimizer, context)


def token_batches(torch, *, vocab, batch, seq, steps, branch=4, repeat=2, seed=0,
                  device="cpu"):
    """(steps, batch, seq) int64 tokens (module docstring): walks of one random Markov chain
    (`branch` successors per token) of seq / repeat tokens, each repeated `repeat` times (the
    last copy cut at seq). Made on the CPU from `seed`."""
    g = torch.Generator().manual_seed(seed)
    successors = torch.randint(0, vocab, (vocab, branch), generator=g)
    n, length = steps * batch, -(-seq // repeat)
    walk = torch.empty(n, length, dtype=torch.long)
    walk[:, 0] = torch.randint(0, vocab, (n,), generator=g)
    picks = torch.randint(0, branch, (n, length), generator=g)
    rows = torch.arange(n)
    for i in range(1, length):
        walk[:, i] = successors[walk[rows, i - 1], picks[:, i]]
    tokens = walk.repeat(1, repeat)[:, :seq]
    return tokens.view(steps, batch, seq).to(device)


def loss_floor(vocab: int, seq: int, branch: int, repeat: int) -> float:
    """The lowest mean loss the data allows: each walk's first token log(vocab), its other
    tokens log(branch), the repeats 0; over the seq - 1 predicted tokens."""
    length = -(-seq // repeat)
    return (math.log(vocab) * (1 if repeat > 1 else 0) + (length - 1) * math.log(branch)) \
        / (seq - 1)


class Timer:
    """Milliseconds between two marks: CUDA events on a GPU (read after the loop, no sync in
    it), the host clock on the CPU."""

    def __init__(self, torch, device):
        self.torch, self.cuda = torch, torch.device(device).type == "cuda"

    def mark(self):
        if self.cuda:
            event = self.torch.cuda.Event(enable_timing=True)
            event.record()
            return event
        return time.perf_counter()

    def ms(self, start, end) -> float:
        return start.elapsed_time(end) if self.cuda else (end - start) * 1e3


def train(torch, runs: list[Run], batches, device, log=None) -> None:
    """Every run trains on every batch in turn (each step: forward + backward + optimizer for
    each run, in an order that alternates between steps); losses and times land in the runs.
    `log(step)` is called after each step (with no GPU synchronization before it)."""
    timer = Timer(torch, device)
    marks = []
    for step, ids in enumerate(batches):
        order = runs if step % 2 == 0 else runs[::-1]
        for run in order:
            start = timer.mark()
            loss = run.forward_backward(ids)
            middle = timer.mark()
            run.step()
            marks.append((run, start, middle, timer.mark()))
            run.losses.append(loss.detach())
        if log is not None:
            log(step)
    if timer.cuda:
        torch.cuda.synchronize()
    for run, start, middle, end in marks:
        run.fwd_bwd_ms.append(timer.ms(start, middle))
        run.optimizer_ms.append(timer.ms(middle, end))
    for run in runs:
        run.losses = [float(x) for x in torch.stack(run.losses).cpu()]


@dataclass
class Judgement:
    passed: bool
    why: str
    windows: list  # (first step, last step + 1, mean |test - base|, mean |ref - base|)
    ratio: float   # mean |test - base| / mean |ref - base| over all steps
    fell: float    # the baseline's loss drop, first step to the last window's mean


def judge(test, base, ref, *, k=3.0, window=25, min_drop=0.1) -> Judgement:
    """Whether the `test` loss curve agrees with `base` within the noise that `ref` (another
    correct bf16 run) shows against `base` (module docstring): in every window of `window`
    steps, mean |test - base| <= k max(mean |ref - base|, floor), floor = 1e-4 x the window's
    mean baseline loss; and, given more than one window, the baseline's loss fell by
    `min_drop` of its first at least (first step to the last window's mean: else agreement
    says little)."""
    if not len(test) == len(base) == len(ref) or not base:
        raise ValueError("judge takes three loss curves of one nonzero length")
    d_test = [abs(a - b) for a, b in zip(test, base)]
    d_ref = [abs(a - b) for a, b in zip(ref, base)]
    windows, bad = [], []
    for lo in range(0, len(base), window):
        hi = min(lo + window, len(base))
        t, r = statistics.fmean(d_test[lo:hi]), statistics.fmean(d_ref[lo:hi])
        floor = 1e-4 * statistics.fmean(base[lo:hi])
        windows.append((lo, hi, t, r))
        if not t <= k * max(r, floor):  # (a NaN fails)
            bad.append(f"steps {lo}-{hi - 1}: {t:.2e} > {k:g} x {max(r, floor):.2e}")
    fell = base[0] - statistics.fmean(base[-window:])
    why = "; ".join(bad)
    if len(base) > window and not fell >= min_drop * base[0]:
        why = (why + "; " if why else "") + (f"the baseline's loss fell by {fell:.3f} only "
                                            f"(less than {min_drop:.0%}): the curves say "
                                            "little")
    ratio = statistics.fmean(d_test) / max(statistics.fmean(d_ref), 1e-30)
    return Judgement(not why, why, windows, ratio, fell)


def gradients(runs: list[Run], ids) -> dict:
    """One forward + backward of `ids` in every run (from the weights they hold; gradients
    cleared after): {run: {parameter name: float32 gradient, or None}}."""
    grads = {}
    for run in runs:
        run.forward_backward(ids)
        grads[run.name] = {n: (None if p.grad is None else p.grad.detach().float().clone())
                           for n, p in run.model.named_parameters()}
        run.optimizer.zero_grad(set_to_none=True)
    return grads


def gradient_errors(torch, grads: dict, against: str) -> dict:
    """{parameter: {run: relative Frobenius error of its gradient against run `against`'s}}
    for every other run of `grads` (`gradients`); inf for a missing or non-finite gradient."""
    from tylo.testing import relative_error

    errors = {}
    for name, want in grads[against].items():
        errors[name] = {}
        for run, got in grads.items():
            if run != against:
                got = got.get(name)
                ok = got is not None and want is not None and bool(torch.isfinite(got).all())
                errors[name][run] = relative_error(got, want) if ok else math.inf
    return errors


def judge_gradients(errors: dict, test: str, reference: str, k=3.0, floor=1e-3):
    """(passed, [(parameter, test's error, reference's)] of those failing, the parameter whose
    ratio is largest): every parameter's `test` error at most k max(`reference`'s, floor)."""
    bad = [(n, e[test], e[reference]) for n, e in errors.items()
           if not e[test] <= k * max(e[reference], floor)]
    worst = max(errors, key=lambda n: errors[n][test] / max(errors[n][reference], floor))
    return not bad, bad, worst


def summary(run: Run, tokens: int, warmup: int) -> dict:
    """Median in-loop times (ms) after `warmup` steps and tokens/s of one run."""
    fb = statistics.median(run.fwd_bwd_ms[warmup:] or run.fwd_bwd_ms)
    opt = statistics.median(run.optimizer_ms[warmup:] or run.optimizer_ms)
    steps = [a + b for a, b in zip(run.fwd_bwd_ms, run.optimizer_ms)]
    step = statistics.median(steps[warmup:] or steps)
    return dict(fwd_bwd_ms=fb, optimizer_ms=opt, step_ms=step,
                tokens_per_s=tokens / step * 1e3, fwd_bwd_tokens_per_s=tokens / fb * 1e3)


def check_gradients(torch, runs, ids, args, result) -> bool:
    """Print and judge one step's gradients (`--check-grads`): every parameter's relative error
    against the baseline's (tylo's within k x the reference's) and, with --float32, against the
    float32 run's (tylo's within k x the baseline's)."""
    grads = gradients(runs, ids)
    checks = [(args.baseline, "tylo", args.reference)]
    if "float32" in grads:
        checks.append(("float32", "tylo", args.baseline))
    errors = {against: gradient_errors(torch, grads, against) for against, _, _ in checks}
    columns = [(against, run) for against, _, _ in checks for run in grads
               if run not in (against, "float32")]
    heads = [f"{r}/{a}" for a, r in columns]
    width = max(map(len, heads)) + 2
    print("\ngradients of one step: relative error of run/against's")
    print(f"{'parameter':48s}" + "".join(f"{h:>{width}s}" for h in heads))
    for name in errors[args.baseline]:
        print(f"{name:48s}" + "".join(f"{errors[a][name][r]:{width}.2e}" for a, r in columns))
    passed = True
    for against, test, reference in checks:
        good, bad, worst = judge_gradients(errors[against], test, reference, args.k)
        e = errors[against][worst]
        print(f"gradients vs {against}: {'PASS' if good else 'FAIL'}: every tensor's {test} "
              f"error <= {args.k:g} x max({reference}'s, 1e-3); largest ratio {worst}: "
              f"{e[test]:.2e} vs {e[reference]:.2e}"
              + "".join(f"\n  FAIL {n}: {t:.2e} vs {r:.2e}" for n, t, r in bad))
        passed &= good
    result["gradients"] = errors
    return passed


def parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--mlp", type=int, default=None, help="default 2.75 x hidden, to 64")
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--kv-heads", type=int, default=4)
    p.add_argument("--head-dim", type=int, default=64)
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--seq", type=int, default=2048)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--branch", type=int, default=4, help="successors per token of the chain")
    p.add_argument("--repeat", type=int, default=2, help="copies of each walk per sequence")
    p.add_argument("--baseline", default="sdpa-cudnn")
    p.add_argument("--reference", default="sdpa-flash", help="the noise reference run")
    p.add_argument("--float32", action="store_true", help="also the baseline in float32")
    p.add_argument("--gemms", action="store_true", help="tylo.ops.nn.convert the tylo model")
    p.add_argument("--amp", action="store_true", help="float32 weights + bf16 autocast")
    p.add_argument("--k", type=float, default=3.0)
    p.add_argument("--window", type=int, default=25)
    p.add_argument("--min-drop", type=float, default=0.1,
                   help="the baseline's loss must fall by this fraction")
    p.add_argument("--warmup", type=int, default=10, help="steps left out of the medians")
    p.add_argument("--rounds", type=int, default=5, help="interleaved fwd+bwd timing rounds")
    p.add_argument("--check-grads", action="store_true")
    p.add_argument("--print-every", type=int, default=10)
    p.add_argument("--device", default="cuda")
    p.add_argument("--json", default=None, metavar="PATH")
    args = p.parse_args(argv)
    if args.gemms and args.amp:
        p.error("--gemms takes bf16 weights: not with --amp")
    return args


def main(argv=None) -> int:
    import torch
    import transformers

    args = parse(argv)
    names = list(dict.fromkeys([args.baseline, "tylo", args.reference]
                               + (["float32"] if args.float32 else [])))
    config = llama_config(transformers, vocab=args.vocab, hidden=args.hidden, mlp=args.mlp,
                          layers=args.layers, heads=args.heads, kv_heads=args.kv_heads,
                          head_dim=args.head_dim, seq=args.seq)
    tokens = args.batch * args.seq
    print(f"Llama: {args.layers} layers, hidden {args.hidden}, MLP {config.intermediate_size}, "
          f"heads {args.heads}/{args.kv_heads} (KV), head dim {args.head_dim}, vocab "
          f"{args.vocab}; batch {args.batch} x seq {args.seq} = {tokens} tokens/step; "
          f"{args.steps} steps, AdamW lr {args.lr}; "
          + ("float32 weights + bf16 autocast" if args.amp else "bf16 weights")
          + (", tylo GEMMs" if args.gemms else ""))
    print(f"data: Markov chain, {args.branch} successors per token, each walk of "
          f"{-(-args.seq // args.repeat)} tokens x {args.repeat}; loss floor "
          f"{loss_floor(args.vocab, args.seq, args.branch, args.repeat):.3f}, start ~"
          f"{math.log(args.vocab):.3f}")
    state = initial_state(torch, transformers, config, args.seed)
    runs = [make_run(torch, transformers, config, state, n, args.device, gemms=args.gemms,
                     amp=args.amp, lr=args.lr) for n in names]
    batches = token_batches(torch, vocab=args.vocab, batch=args.batch, seq=args.seq,
                            steps=args.steps, branch=args.branch, repeat=args.repeat,
                            seed=args.seed + 1, device=args.device)
    try:
        for run in runs:  # a first call each: compiles, and a refused SDPA backend shows here
            run.forward_backward(batches[0])
            run.optimizer.zero_grad(set_to_none=True)
    except RuntimeError as e:
        raise SystemExit(f"run {run.name} failed its first step ({str(e).splitlines()[0]}); "
                         "pick another --baseline/--reference (e.g. sdpa-flash, sdpa)") from e
    result = dict(args=vars(args), runs=names)
    ok = True
    if args.check_grads:
        ok &= check_gradients(torch, runs, batches[0], args, result)

    print("\nstep " + "".join(f"{n:>13s}" for n in names) + f"{'|tylo-base|':>13s}"
          f"{'|ref-base|':>13s}")
    train(torch, runs, batches, args.device)
    losses = {r.name: r.losses for r in runs}
    base, test, ref = losses[args.baseline], losses["tylo"], losses[args.reference]
    for step in range(args.steps):
        if step % args.print_every == 0 or step == args.steps - 1:
            print(f"{step:4d} " + "".join(f"{losses[n][step]:13.4f}" for n in names)
                  + f"{abs(test[step] - base[step]):13.2e}{abs(ref[step] - base[step]):13.2e}")
    verdict = judge(test, base, ref, k=args.k, window=args.window,
                    min_drop=args.min_drop)
    print(f"\nper {args.window} steps, mean |tylo - {args.baseline}| vs mean |{args.reference}"
          f" - {args.baseline}|:")
    for lo, hi, t, r in verdict.windows:
        print(f"  steps {lo:4d}-{hi - 1:4d}: {t:.2e} vs {r:.2e} (x{t / max(r, 1e-30):.2f})")
    print(f"loss curves: {'PASS' if verdict.passed else 'FAIL'}: tylo's mean distance from "
          f"{args.baseline} is {verdict.ratio:.2f} x {args.reference}'s (every window <= "
          f"{args.k:g} x); {args.baseline}'s loss fell {verdict.fell:.3f}"
          + ("" if verdict.passed else f"\n  {verdict.why}"))
    ok &= verdict.passed

    times = {r.name: summary(r, tokens, args.warmup) for r in runs}
    if torch.device(args.device).type == "cuda":
        from tylo.testing import interleaved_ms

        def fwd_bwd(run):
            def go():
                run.forward_backward(batches[0])
                run.optimizer.zero_grad(set_to_none=True)
            return go
        alone = interleaved_ms(torch, {r.name: fwd_bwd(r) for r in runs}, rounds=args.rounds,
                               reps=5, warmup=2)
        for name, ms in alone.items():
            times[name]["fwd_bwd_alone_ms"] = ms
    b = times[args.baseline]
    print(f"\ntimes: median of steps {args.warmup}..{args.steps - 1} in the loop (CUDA events: "
          f"GPU time, and the GPU's waits for the host), ms; tokens/s; x: {args.baseline}'s "
          "time / the run's")
    print(f"{'run':14s}{'fwd+bwd':>9s}{'tokens/s':>11s}{'x':>7s}{'optimizer':>11s}{'step':>9s}"
          f"{'tokens/s':>11s}{'x':>7s}{'fwd+bwd alone':>15s}{'x':>7s}")
    for name, t in times.items():
        alone = t.get("fwd_bwd_alone_ms")
        print(f"{name:14s}{t['fwd_bwd_ms']:9.2f}{t['fwd_bwd_tokens_per_s']:11.0f}"
              f"{b['fwd_bwd_ms'] / t['fwd_bwd_ms']:7.3f}{t['optimizer_ms']:11.2f}"
              f"{t['step_ms']:9.2f}{t['tokens_per_s']:11.0f}{b['step_ms'] / t['step_ms']:7.3f}"
              + (f"{alone:15.2f}{b['fwd_bwd_alone_ms'] / alone:7.3f}" if alone else ""))
    result.update(losses=losses, times=times, passed=ok,
                  judgement=dict(passed=verdict.passed, why=verdict.why, ratio=verdict.ratio,
                                 fell=verdict.fell, windows=verdict.windows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    print(f"\n{'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
