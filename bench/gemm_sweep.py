"""The bf16 GEMM shapes models run: tylo.ops.matmul beside cuBLAS (torch.matmul) on a Hopper GPU,
one table row per shape, and issue 26's goals judged at the end.

    python bench/gemm_sweep.py [--models 8b,70b,square] [--m 128,512,2048,8192,16384]
                               [--quick] [--triton] [--check-only] [--table text|md]
                               [--dtype bf16|fp8|block]

Shapes: tokens M in {128, 512, 2048, 8192, 16384} times the (N, K) of the projections of
Llama-3-8B and Llama-3-70B (`MODELS`: an nn.Linear weight W is (N, K)), and the squares 4096^3
and 8192^3 (M = N = K, not crossed with M). `--quick` runs `QUICK`, six of them.

Cases, all on the same operands x (M, K) and W (N, K), bf16, y = x @ W.T (M, N) bf16:
"tylo" tylo.ops.matmul(x, W.T) (b = W.T, read K-major where it lies); "cuBLAS TN"
torch.matmul(x, W.T); "cuBLAS NN" torch.matmul(x, Wt), Wt = W.T.contiguous() (K, N) row-major;
with `--triton`, "triton" `tylo.testing.triton_matmul` on (x, Wt) (autotuned over four
configurations at each shape's first call). Each case is checked first, after one warm-up
call: the output's memory poisoned with NaN (`tylo.testing.poison_next`), the relative
Frobenius error against float32 torch below `TOLERANCE` (on the GPU, in float64: about 35 GB
at the largest shape). Then all are timed in one run, interleaved (`tylo.testing.
interleaved_ms`), each as a CUDA graph of `graph_calls` back-to-back calls
(`tylo.testing.graphed`, as bench/matmul_op.py's `--graphed`): the kernels' GPU time, no host
time. A graph replays one product on the same operands, so a weight that fits the H100's 50 MB
L2 (the 8B's 4096 x 4096, 33.5 MB) is partly read from L2 at small M, for every case alike.
The whole sweep is about 60 TFLOP per call of each case: about 2 minutes on an H100, `--quick`
about 30 s (estimates).

The ratio is tylo's TFLOP/s over the better of the two cuBLAS forms. Issue 26's goals (`GOALS`):
its geometric mean over the shapes >= 1.05, no shape below 0.95, 8192^3 >= 1.0; each printed as
met or missed. Exit status 1 when a check failed.

FP8 (issue 26 part 2), x and W quantized to e4m3 (`gemm_fp8.quantize`, `gemm_fp8_blockwise.
quantize_blocks`), bf16 out, checked against float32 of the dequantized inputs:
``--dtype fp8``: the same sweep per-tensor scaled, "tylo" tylo.ops.scaled_matmul beside "torch"
torch._scaled_mm (cuBLASLt); ratio tylo / torch, goal >= 1.0 at every shape (and in the mean).
``--dtype block``: DeepSeek-V3's shapes (`DEEPSEEK`, M in {128, 4096}, and 4096^3; `--models`
and `--m` do not apply), "tylo block" (1x128 activation / 128x128 weight scales) beside
"tylo tensor" (per-tensor, the same bytes), "tylo block pp" (the block-scaled kernel with its
consumers taking turns, `gemm_fp8_blockwise.promote_k_steps`' pingpong: not yet what the op
runs) and "torch block" (torch._scaled_mm's BlockWise1x128 / BlockWise128x128, where this
torch takes them); ratio tylo block / tylo tensor, goal >= 0.90 at every shape.
"""

from __future__ import annotations

import argparse
import math
from typing import NamedTuple

#: model -> projection -> (N, K) of its weight W (N, K); "gate/up" is gate and up fused.
MODELS = {
    "8b": {"qkv": (6144, 4096), "o": (4096, 4096), "gate/up": (28672, 4096),
           "down": (4096, 14336)},
    "70b": {"qkv": (10240, 8192), "o": (8192, 8192), "gate/up": (57344, 8192),
            "down": (8192, 28672)},
}
TOKENS = (128, 512, 2048, 8192, 16384)
SQUARES = (4096, 8192)
GOALS = {"geomean": 1.05, "min": 0.95, "8192^3": 1.0}
#: DeepSeek-V3's (N, K) of issue 26 part 2 (`--dtype block`), at M in DEEPSEEK_TOKENS
DEEPSEEK = ((2112, 7168), (24576, 1536), (7168, 16384), (4096, 7168), (7168, 2048))
DEEPSEEK_TOKENS = (128, 4096)


class Mode(NamedTuple):
    """One `--dtype`: its cases (timed columns), the ratio's numerator and denominators (the
    better of them), the ratio's name and its goals (None: not judged)."""
    cases: tuple
    numerator: str
    denominators: tuple
    ratio_name: str
    goals: dict


MODES = {
    "bf16": Mode(("tylo", "cuBLAS TN", "cuBLAS NN", "triton"), "tylo", ("cuBLAS TN", "cuBLAS NN"),
                 "tylo/cuBLAS", GOALS),
    "fp8": Mode(("tylo", "torch"), "tylo", ("torch",), "tylo/torch",
                {"geomean": 1.0, "min": 1.0, "8192^3": 1.0}),
    "block": Mode(("tylo block", "tylo tensor", "tylo block pp", "torch block"), "tylo block",
                  ("tylo tensor",), "block/tensor", {"geomean": None, "min": 0.90, "8192^3": None}),
}
TOLERANCE = 1e-2
GRAPH_MS = 1.0  # each CUDA graph replays about this long (at `ASSUMED_TFLOPS`)
ASSUMED_TFLOPS = 600.0
CASES = MODES["bf16"].cases


class Shape(NamedTuple):
    M: int
    N: int
    K: int
    name: str  # "8b qkv", ..., "square"

    @property
    def flop(self) -> int:
        return 2 * self.M * self.N * self.K


def shapes(models=("8b", "70b", "square"), tokens=TOKENS) -> list[Shape]:
    """The sweep: each model's projections at each M in `tokens`, then the squares."""
    out = [Shape(M, N, K, f"{model} {proj}") for model in models if model in MODELS
           for proj, (N, K) in MODELS[model].items() for M in tokens]
    if "square" in models:
        out += [Shape(n, n, n, "square") for n in SQUARES]
    return out


def deepseek_shapes() -> list[Shape]:
    """`--dtype block`'s shapes: DEEPSEEK's (N, K) at each M of DEEPSEEK_TOKENS, then 4096^3."""
    return [Shape(M, N, K, "dsv3") for N, K in DEEPSEEK for M in DEEPSEEK_TOKENS] + [
        Shape(4096, 4096, 4096, "square")]


#: `--quick`: six shapes of the sweep, each model and size of M
QUICK = [s for s in shapes() if (s.M, s.name) in {
    (512, "8b qkv"), (2048, "8b gate/up"), (8192, "8b down"), (128, "70b o"),
    (16384, "70b gate/up"), (8192, "square")}]


def graph_calls(flop: int) -> int:
    """Calls per CUDA graph: enough that a replay lasts about GRAPH_MS (1 to 50)."""
    ms = flop / (ASSUMED_TFLOPS * 1e9)
    return max(1, min(50, math.ceil(GRAPH_MS / ms)))


class Row(NamedTuple):
    shape: Shape
    tflops: dict  # case -> TFLOP/s (empty with --check-only)
    failed: tuple  # the cases whose check failed
    dtype: str = "bf16"  # the MODES key

    @property
    def ratio(self) -> float | None:
        """The mode's numerator's TFLOP/s over its best denominator's (bf16: tylo over the
        better cuBLAS form); None when not timed."""
        mode = MODES[self.dtype]
        if not self.tflops:
            return None
        return self.tflops[mode.numerator] / max(self.tflops[d] for d in mode.denominators)


def bf16_cases(torch, shape: Shape, triton: bool, device: str):
    """(cases, each case's float32 reference, a function that poisons a case's next
    output)."""
    import tylo.ops
    from tylo.testing import poison_next

    M, N, K = shape.M, shape.N, shape.K
    x = torch.randn(M, K, device=device).to(torch.bfloat16)
    W = (torch.randn(N, K, device=device) * K ** -0.5).to(torch.bfloat16)
    Wt = W.T.contiguous()
    cases = {"tylo": lambda: tylo.ops.matmul(x, W.T),
             "cuBLAS TN": lambda: torch.matmul(x, W.T),
             "cuBLAS NN": lambda: torch.matmul(x, Wt)}
    C = None
    if triton:
        from tylo.testing import triton_matmul

        C = torch.empty(M, N, device=device, dtype=torch.bfloat16)
        cases["triton"] = lambda: triton_matmul.matmul(x, Wt, C)

    def poison(name):
        if name == "triton":
            C.fill_(math.nan)  # its output
        else:
            poison_next(torch, (M, N), torch.bfloat16, device)
    ref = x.float() @ W.float().T
    return cases, dict.fromkeys(cases, ref), poison


def fp8_cases(torch, shape: Shape, block: bool, device: str):
    """`--dtype fp8` (block False) or `block`: (cases, each case's float32 reference of its
    dequantized inputs, poison). x, W random with rows of magnitudes 2**-4 .. 2**4; "torch block" only
    where this torch's _scaled_mm takes the block scales (its first call is tried)."""
    import tylo.ops
    from tylo.ops.kernels import gemm_fp8 as fp8
    from tylo.ops.kernels import gemm_fp8_blockwise as blockwise
    from tylo.testing import poison_next

    M, N, K = shape.M, shape.N, shape.K
    x = torch.randn(M, K, device=device) * torch.exp2(torch.randint(-4, 5, (M, 1), device=device))
    w = torch.randn(N, K, device=device) * torch.exp2(torch.randint(-4, 5, (N, 1), device=device))
    (a, sa), (wq, sw) = fp8.quantize(x), fp8.quantize(w)
    sa, sw = sa.reshape(()), sw.reshape(())

    def scaled(library, a, b, sa, sb):
        if library == "tylo":
            return lambda: tylo.ops.scaled_matmul(a, b, sa, sb)
        return lambda: torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)

    C = torch.empty(M, N, device=device, dtype=torch.bfloat16)  # "tylo block pp"'s output

    def poison(name):
        if name == "tylo block pp":
            C.fill_(math.nan)
        else:
            poison_next(torch, (M, N), torch.bfloat16, device)
    tensor_ref = fp8.reference(a, wq, sa, sw)
    if not block:
        cases = {"tylo": scaled("tylo", a, wq.t(), sa, sw),
                 "torch": scaled("torch", a, wq.t(), sa, sw)}
        return cases, dict.fromkeys(cases, tensor_ref), poison
    (ab, sab), (wb, swb) = blockwise.quantize_blocks(x, 1), blockwise.quantize_blocks(w, 128)
    block_ref = blockwise.reference(ab, wb, sab, swb)
    sab = sab[:M].t().contiguous().t()  # (M, K/128), M contiguous: torch's BlockWise1x128
    cases = {"tylo block": scaled("tylo", ab, wb.t(), sab, swb.t()),
             "tylo tensor": scaled("tylo", a, wq.t(), sa, sw)}
    refs = {"tylo block": block_ref, "tylo tensor": tensor_ref, "tylo block pp": block_ref}
    pingpong = blockwise.GemmBlockwise(ab, wb, C, sab, swb, emulate=device == "cpu",
                                       pingpong=True)
    cases["tylo block pp"] = lambda: (pingpong(), C)[1]
    theirs = scaled("torch", ab, wb.t(), sab, swb.t())
    try:
        theirs()
        cases["torch block"], refs["torch block"] = theirs, block_ref
    except (RuntimeError, NotImplementedError, ValueError) as e:
        print(f"  (torch._scaled_mm refuses the block scales: {str(e).splitlines()[0][:100]})")
    return cases, refs, poison


def measure(torch, shape: Shape, triton: bool, check_only: bool, device="cuda",
            dtype: str = "bf16") -> Row:
    """Check every case on fresh random operands, then time them interleaved (module
    docstring). `device` "cpu" (with `check_only`): the checks on the emulator, at small
    sizes (the bench's CPU test). `dtype`: a MODES key."""
    from tylo.testing import graphed, interleaved_ms, relative_error

    if dtype == "bf16":
        cases, refs, poison = bf16_cases(torch, shape, triton, device)
    else:
        cases, refs, poison = fp8_cases(torch, shape, dtype == "block", device)
    failed = []
    for name, fn in cases.items():
        fn()  # first: compiles (tylo), autotunes (triton), allocates workspaces
        poison(name)
        if not relative_error(fn(), refs[name]) < TOLERANCE:
            failed.append(name)
    del refs
    if check_only:
        return Row(shape, {}, tuple(failed), dtype)
    calls = graph_calls(shape.flop)
    ms = interleaved_ms(torch, {name: graphed(torch, fn, calls) for name, fn in cases.items()})
    return Row(shape, {name: shape.flop / (t / calls) / 1e9 for name, t in ms.items()},
               tuple(failed), dtype)


def columns(names, dtype: str = "bf16") -> list[str]:
    """The table's column heads; `names`: the timed cases (TFLOP/s each)."""
    return ["M", "N", "K", "shape", *names, MODES[dtype].ratio_name, "check"]


def cells(row: Row, names) -> list[str]:
    timed = [f"{row.tflops[n]:.1f}" if n in row.tflops else "-" for n in names]
    ratio = "-" if row.ratio is None else f"{row.ratio:.3f}"
    check = "FAILED " + ",".join(row.failed) if row.failed else "ok"
    s = row.shape
    return [str(s.M), str(s.N), str(s.K), s.name, *timed, ratio, check]


def line(values, names, table: str, dtype: str = "bf16") -> str:
    """One table line: Markdown (`table` "md") or fixed-width text (shape names left-aligned)."""
    if table == "md":
        return "| " + " | ".join(values) + " |"
    widths = [max(len(h), 12 if h == "shape" else 6) for h in columns(names, dtype)]
    return " ".join(v.ljust(w) if i == 3 else v.rjust(w)
                    for i, (v, w) in enumerate(zip(values, widths)))


def header(names, table: str, dtype: str = "bf16") -> list[str]:
    """The table's head lines (Markdown's with its alignment row)."""
    head = [line(columns(names, dtype), names, table, dtype)]
    if table == "md":
        head.append("|" + "|".join("---" if h in ("shape", "check") else "---:"
                                   for h in columns(names, dtype)) + "|")
    return head


def summary(rows: list[Row]) -> list[str]:
    """The geometric mean and the minimum of the ratio, the 8192^3 ratio, and the rows' mode's
    goals judged (GOALS for bf16; a goal of None is not judged)."""
    timed = [r for r in rows if r.ratio is not None]
    failed = [f"{r.shape.M}x{r.shape.N}x{r.shape.K} ({', '.join(r.failed)})"
              for r in rows if r.failed]
    out = ["checks: " + ("all ok" if not failed else "FAILED at " + "; ".join(failed))]
    if not timed:
        return out
    geomean = math.exp(sum(math.log(r.ratio) for r in timed) / len(timed))
    worst = min(timed, key=lambda r: r.ratio)
    # (70b o at M 8192 is the same product as the square)
    square = [r.ratio for r in timed if r.shape[:3] == (8192, 8192, 8192)]

    mode = MODES[timed[0].dtype]
    goals = mode.goals

    def verdict(value, key):
        if goals[key] is None:
            return "(no goal)"
        judged = "not measured" if value is None else ("met" if value >= goals[key] else "missed")
        return f"(goal >= {goals[key]}: {judged})"

    square = square[0] if square else None
    s = worst.shape
    out += [f"{mode.ratio_name} over {len(timed)} shapes: geometric mean {geomean:.3f}x "
            f"{verdict(geomean, 'geomean')}",
            f"minimum {worst.ratio:.3f}x at M={s.M} N={s.N} K={s.K} ({s.name}) "
            f"{verdict(worst.ratio, 'min')}"]
    if goals["8192^3"] is not None:
        out.append(f"8192^3 {'-' if square is None else f'{square:.3f}x'} "
                   f"{verdict(square, '8192^3')}")
    return out


def parse_list(text: str, kind=str) -> tuple:
    return tuple(kind(v) for v in text.split(",") if v)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", type=parse_list, default=("8b", "70b", "square"),
                   help="comma-separated, of 8b, 70b, square (default: all three)")
    p.add_argument("--m", type=lambda t: parse_list(t, int), default=TOKENS,
                   help="comma-separated token counts M (default: 128,512,2048,8192,16384)")
    p.add_argument("--quick", action="store_true", help="only the six shapes of QUICK")
    p.add_argument("--triton", action="store_true",
                   help="time tylo.testing.triton_matmul too (needs triton)")
    p.add_argument("--check-only", action="store_true", help="check every case, time nothing")
    p.add_argument("--table", choices=("text", "md"), default="text",
                   help="the table's format: fixed-width text or Markdown")
    p.add_argument("--dtype", choices=tuple(MODES), default="bf16",
                   help="bf16 (the sweep beside cuBLAS), fp8 (the sweep per-tensor beside "
                        "torch._scaled_mm) or block (DeepSeek-V3's shapes, block-scaled)")
    return p


def arguments(argv=None) -> tuple[argparse.Namespace, list[Shape]]:
    """The parsed arguments and the shapes they name (argparse's error on a bad one)."""
    p = parser()
    args = p.parse_args(argv)
    unknown = set(args.models) - {*MODELS, "square"}
    if unknown:
        p.error(f"--models: unknown {', '.join(sorted(unknown))} (8b, 70b or square)")
    if any(m <= 0 for m in args.m) or not args.m:
        p.error(f"--m: positive token counts, got {args.m}")
    if args.quick and (args.models != p.get_default("models") or args.m != TOKENS):
        p.error("--quick runs its own six shapes: it takes no --models or --m")
    if args.triton and args.dtype != "bf16":
        p.error("--triton: triton's kernel is bf16; it takes no --dtype fp8 or block")
    if args.dtype == "block":
        if args.quick or args.models != p.get_default("models") or args.m != TOKENS:
            p.error("--dtype block runs DeepSeek-V3's shapes: it takes no --quick, --models "
                    "or --m")
        return args, deepseek_shapes()
    return args, QUICK if args.quick else shapes(args.models, args.m)


def main(argv=None) -> int:
    args, sweep = arguments(argv)
    import torch

    if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        print("no Hopper GPU (sm_90): nothing to time")
        return 0
    if args.triton:
        from tylo.testing import triton_matmul

        if triton_matmul.triton is None:
            print("(triton is not installed: --triton ignored)")
            args.triton = False
    names = [n for n in MODES[args.dtype].cases if n != "triton" or args.triton]
    print(f"{len(sweep)} shapes, {args.dtype}, y = x @ W.T (M, N), W (N, K); TFLOP/s of each "
          f"case{' (checks only)' if args.check_only else ' (CUDA graphs, interleaved)'}")
    print("\n".join(header(names, args.table, args.dtype)), flush=True)
    rows = []
    for shape in sweep:
        rows.append(measure(torch, shape, args.triton, args.check_only, dtype=args.dtype))
        print(line(cells(rows[-1], names), names, args.table, args.dtype), flush=True)
    print("\n".join(summary(rows)))
    return 1 if any(r.failed for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
