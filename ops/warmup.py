"""Compile the kernels of Tylo's ops ahead of time, into the disk cache: ``tylo.ops.warmup``.

A Tylo kernel compiles on its first call for each variant (the compile-time choices of a call:
for attention its head dim, causality, head counts, memory layouts and scale), about 2 s each,
and a model calls several. The warm-up compiles them before the model runs, for a target
(default sm_90a: H100, H200) and without a GPU, so that a container build or an install step
fills the disk cache (``TYLO_CACHE_DIR``) and a serving process's first calls load from disk:

    tylo.ops.warmup(model.config)                      # a transformers config, or any object
    tylo.ops.warmup(head_dim=128, num_heads=32, num_kv_heads=8, causal=(True,))
    python -m tylo.ops.warmup --config path/to/config.json
    python -m tylo.ops.warmup --head-dim 128 --num-heads 32 --num-kv-heads 8 --list

An op takes part by naming, in `OPS`, the module of `tylo.ops` that declares its variants in
one function, ``variants(**options) -> list[Variant]``: the options are a model's description
(`model_options`: ``head_dim``, ``num_heads``, ``num_kv_heads``, ``hidden_size``,
``intermediate_size``, ``scale``, and the op's own narrowing ones, e.g. attention's ``causal``
and ``layouts``, the GEMMs' ``dtype``, ``token_tiles``, ``prefill``, and ``training``: the
backward's kernels too, attention's and the GEMMs'); it returns
[] when the options do not describe a use of the op (no head dim: no attention), ignores the
options it does not use, and each `Variant`'s ``compile(arch, emulator)`` compiles one kernel
variant into the disk cache (``Kernel.precompile``). Ops today: attention, matmul, gate_up,
and scaled_matmul when asked (`OPT_IN`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import import_module
from types import ModuleType

from tylo import ArgumentError

#: op name -> the module of tylo.ops whose ``variants(**options)`` lists its variants.
OPS = {"attention": "attention_forward", "matmul": "matmul_op", "gate_up": "gate_up_op",
       "scaled_matmul": "scaled_matmul_op"}
#: The ops a model's description leaves out unless asked (``ops=[...]``, or ``fp8=True``):
#: a Llama forward has no FP8 product.
OPT_IN = {"scaled_matmul": "fp8"}

#: The options a model description gives (`model_options`), besides each op's own.
MODEL_OPTIONS = ("head_dim", "num_heads", "num_kv_heads", "hidden_size", "intermediate_size",
                 "scale", "sliding_window", "softcap")


@dataclass(frozen=True)
class Variant:
    """One kernel variant of an op: `name` says its choices (``attention D128 causal Hq32 Hkv8
    bshd``), ``compile(arch, emulator)`` compiles it into the disk cache and returns the
    `CompiledKernel` (``.origin``: ``"disk cache"`` when it was there already)."""

    op: str
    name: str
    compile: Callable[[str, bool], object]


def model_options(config=None, **options) -> dict:
    """The options of a model description: a transformers ``PretrainedConfig`` (or any object
    or dict with its field names: ``head_dim``, ``num_attention_heads``,
    ``num_key_value_heads``, ``hidden_size``, ``intermediate_size``,
    ``query_pre_attn_scalar``, ``sliding_window``, ``attn_logit_softcapping``), then `options`
    over it (None: not given). ``head_dim`` defaults to hidden_size / num_attention_heads;
    ``scale`` is query_pre_attn_scalar ** -0.5 where the config has one (Gemma's), else left
    to the op (attention: 1 / sqrt(head_dim), the same variant as transformers' head_dim **
    -0.5); ``sliding_window`` and ``softcap`` (attn_logit_softcapping) where the config has
    them (Mistral's, Gemma 2's)."""
    get = (config.get if isinstance(config, dict) else
           (lambda name, default=None: getattr(config, name, default)))
    found: dict = {}
    if config is not None:
        found = {"num_heads": get("num_attention_heads"), "hidden_size": get("hidden_size"),
                 "intermediate_size": get("intermediate_size"), "head_dim": get("head_dim"),
                 "sliding_window": (None if get("use_sliding_window") is False  # Qwen 2's
                                    else get("sliding_window")),
                 "softcap": get("attn_logit_softcapping")}
        found["num_kv_heads"] = get("num_key_value_heads") or found["num_heads"]
        if found["head_dim"] is None and found["hidden_size"] and found["num_heads"]:
            found["head_dim"] = found["hidden_size"] // found["num_heads"]
        scalar = get("query_pre_attn_scalar")
        if scalar:
            found["scale"] = float(scalar) ** -0.5
    found = {k: v for k, v in found.items() if v is not None}
    found.update({k: v for k, v in options.items() if v is not None})
    return found


def _op_module(op: str) -> ModuleType:
    if op not in OPS:
        raise ArgumentError("ops", f"{op!r} is not an op with variants; known: "
                                   f"{', '.join(sorted(OPS))}")
    return import_module(f"{__package__}.{OPS[op]}")


def model_variants(config=None, *, ops: Iterable[str] | None = None,
                   **options) -> list[Variant]:
    """The variants `ops` (default: every op of `OPS` but those of `OPT_IN`, which its option
    brings in: ``fp8=True``) need for a model (`model_options` of `config` and `options`), in
    order, each kernel variant once (by name), without compiling. ArgumentError for an unknown
    op or an option an op refuses (a head dim it does not serve)."""
    described = model_options(config, **options)
    if ops is None:
        ops = [op for op in OPS if op not in OPT_IN or described.get(OPT_IN[op])]
    found: dict[str, Variant] = {}
    for op in ops:
        for v in _op_module(op).variants(**described):
            found.setdefault(v.name, v)  # one kernel two ops launch (gate_up's backward GEMMs)
    return list(found.values())


def warmup(config=None, *, ops: Iterable[str] | None = None,
           variants: Iterable[Variant] | None = None, arch: str = "sm_90a",
           emulator: bool = False, progress=None, **options) -> list[tuple[Variant, object]]:
    """Compile the variants a model needs (`model_variants` of `config`, `ops` and `options`;
    or the explicit list `variants`) for `arch` into the disk cache, and (`emulator`) the modules the
    CPU emulator runs (what ``tylo.ops`` ops run on CPU tensors). No GPU is needed. `progress`:
    a file to print a line per variant to (seconds, and "disk cache" for one already there).
    Returns [(variant, CompiledKernel)]. Needs the disk cache (ArgumentError when it is off:
    ``TYLO_CACHE_DIR=`` or ``TYLO_NO_CACHE=1``)."""
    import tylo

    todo = (list(variants) if variants is not None
            else model_variants(config, ops=ops, **options))
    if tylo.knobs.cache.folder is None:
        raise ArgumentError("TYLO_CACHE_DIR", "the disk cache is off (TYLO_CACHE_DIR set empty "
                                              "or TYLO_NO_CACHE=1): a warm-up would keep "
                                              "nothing")
    done = []
    for v in todo:
        t0 = time.perf_counter()
        compiled = v.compile(arch, emulator)
        if progress is not None:
            print(f"{v.name}: {time.perf_counter() - t0:.2f} s "
                  f"({getattr(compiled, 'origin', '?')})", file=progress, flush=True)
        done.append((v, compiled))
    return done


def main(argv: list[str] | None = None) -> int:
    """``python -m tylo.ops.warmup`` (``--help`` lists the options)."""
    import argparse
    import json
    from pathlib import Path

    parser = argparse.ArgumentParser(
        prog="python -m tylo.ops.warmup",
        description="Compile the Tylo kernels a model needs into the disk cache (TYLO_CACHE_DIR)"
                    ", without a GPU: at install or container build time.")
    parser.add_argument("--config", help="a model's config.json (transformers' format), or "
                                         "the folder that holds it")
    parser.add_argument("--ops", nargs="+", choices=sorted(OPS), help="default: all")
    parser.add_argument("--head-dim", type=int)
    parser.add_argument("--num-heads", type=int)
    parser.add_argument("--num-kv-heads", type=int)
    parser.add_argument("--hidden-size", type=int)
    parser.add_argument("--intermediate-size", type=int)
    parser.add_argument("--scale", type=float, help="softmax scale (default head_dim ** -0.5)")
    parser.add_argument("--causal", choices=("both", "yes", "no"), default="both")
    parser.add_argument("--sliding-window", type=int, help="attention: also the window variant")
    parser.add_argument("--softcap", type=float, help="attention: logits capped (Gemma 2's 50)")
    parser.add_argument("--layouts", nargs="+", help="attention memory orders: bhsd, bshd, "
                                                     "bshd/bhsd (Q/KV), bhsd/bshd, varlen")
    parser.add_argument("--dtype", choices=("bfloat16", "float16"), default="bfloat16",
                        help="the GEMMs' dtype (gate_up: bfloat16 only)")
    parser.add_argument("--token-tiles", nargs="*", type=int, help="decode token tiles of the "
                        "GEMMs (M <= 64 rows rounded up: 8 16 32 64, the default; none: no "
                        "decode)")
    parser.add_argument("--no-prefill", action="store_true",
                        help="leave out the GEMMs of more than 64 rows")
    parser.add_argument("--training", action="store_true", help="also the backward's kernels")
    parser.add_argument("--fp8", action="store_true", help="also scaled_matmul's (FP8)")
    parser.add_argument("--fp8-scaling", nargs="+", choices=("tensor", "row", "block"),
                        help="scaled_matmul's forms (default all)")
    parser.add_argument("--arch", default="sm_90a")
    parser.add_argument("--emulator", action="store_true",
                        help="also the CPU emulator's modules (ops on CPU tensors)")
    parser.add_argument("--list", action="store_true", help="print the variants, compile none")
    args = parser.parse_args(argv)
    config = None
    if args.config:
        path = Path(args.config)
        config = json.loads((path / "config.json" if path.is_dir() else path).read_text())
    causal = {"both": (True, False), "yes": (True,), "no": (False,)}[args.causal]
    options = dict(head_dim=args.head_dim, num_heads=args.num_heads,
                   num_kv_heads=args.num_kv_heads, hidden_size=args.hidden_size,
                   intermediate_size=args.intermediate_size, scale=args.scale, causal=causal,
                   sliding_window=args.sliding_window, softcap=args.softcap,
                   layouts=tuple(args.layouts) if args.layouts else None, dtype=args.dtype,
                   token_tiles=None if args.token_tiles is None else tuple(args.token_tiles),
                   prefill=not args.no_prefill, training=args.training, fp8=args.fp8,
                   fp8_scaling=tuple(args.fp8_scaling) if args.fp8_scaling else None)
    found = model_variants(config, ops=args.ops, **options)
    if args.list:
        print("\n".join(v.name for v in found))
        return 0
    import tylo

    print(f"{len(found)} variants for {args.arch} into {tylo.knobs.cache.folder}", flush=True)
    warmup(variants=found, arch=args.arch, emulator=args.emulator, progress=sys.stdout)
    return 0


class _CallableModule(ModuleType):
    """This module, callable as its `warmup` function: ``tylo.ops.warmup`` is the module
    (``tylo.ops.warmup.model_variants``, in whatever order it was imported) and
    ``tylo.ops.warmup(...)`` the warm-up."""

    def __call__(self, *args, **kwargs):
        return warmup(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

if __name__ == "__main__":
    sys.exit(main())
