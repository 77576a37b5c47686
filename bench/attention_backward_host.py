"""The host time of one ``tylo::attention_backward`` call (``tylo.ops.attention``'s backward):
microseconds per call of the op's implementation and of the custom op through torch's
dispatcher, at training shapes (bf16, B 4, S 2048, Hq 16, Hkv 4, causal; D 64 with Q/K/V in
(B, S, H, D) memory, D 128 in both orders), then (`--profile`) a cProfile of `_run`'s calls.

    python bench/attention_backward_host.py [--calls 200] [--profile]           # a GPU
    python bench/attention_backward_host.py --stub [--calls 200] [--profile]    # no GPU

Each row is the median over `--calls` calls, each timed alone by ``time.perf_counter`` (on a
GPU the kernels launched, unsynchronized: the host's cost, which the GPU hides behind longer
kernels). The rows: "custom op" (``torch.ops.tylo.attention_backward``: torch's dispatcher,
as a compiled graph or a profiled step calls it), "implementation" (the custom op's function:
its argument checks and `_run`), "_run (direct)" (what an eager backward runs: autograd's rule
skips the dispatcher, `library.direct`).

`--stub` (no GPU needed) measures only the host's Python on CPU tensors of the same shapes and
strides: the launches are stubbed out (a ``wrap`` launch builds its ``kernel[grid, block]``
and launches nothing; ``Launcher.prepare`` returns a launch that does nothing), and
``tylo.prepare_tma`` answers as its descriptor-cache hit of a CUDA tensor does (the real
checks once per address and geometry, then the cache's key, lookup and binding; no driver),
with a device binding's fields so that the op's CUDA path (`attention_backward.PREPARED_ON`
is given "cpu") runs as on a GPU. Not measured in that mode: the launcher's dispatch, its
parameter packing and cuLaunchKernel (about 7-9 us a launch on an H100 host), and CUDA's
caching allocator (CPU tensors come from the CPU allocator: the workspace's float32 arrays
are tens of MiB, allocated untouched).
"""

from __future__ import annotations

import argparse
import time

from op_host_time import print_profile  # (bench/ is the script's folder: on sys.path)

#: (label, D, Q/dO/O memory order, K/V memory order) timed; all B 4, S 2048, Hq 16, Hkv 4, causal
CASES = [("D64 bshd", 64, "bshd", "bshd"), ("D128 bhsd", 128, "bhsd", "bhsd"),
         ("D128 bshd", 128, "bshd", "bshd")]
B, S, HQ, HKV = 4, 2048, 16, 4


def arguments(torch, D: int, order: str, kv_order: str, device: str) -> tuple:
    """(dout, q, k, v, out, lse, dlse, causal, scale) as autograd hands them to the op in a
    training step: logical (B, H, S, D) views of `order`'s memory, lse the forward's (rows
    16-byte aligned), dlse autograd's zeros (the loss does not read lse)."""
    bf16 = torch.bfloat16

    def tensor(heads, memory):
        if memory == "bshd":
            return torch.randn(B, S, heads, D, dtype=bf16, device=device).transpose(1, 2)
        return torch.randn(B, heads, S, D, dtype=bf16, device=device)

    q, out, dout = (tensor(HQ, order) for _ in range(3))
    k, v = tensor(HKV, kv_order), tensor(HKV, kv_order)
    lse = torch.randn(B, HQ, S, device=device)
    dlse = torch.zeros(B, HQ, S, device=device)
    return dout, q, k, v, out, lse, dlse, True, D ** -0.5


class _NoLaunch:
    """A prepared launch that launches nothing (`--stub`)."""

    def __call__(self, *args) -> None:
        return None

    def release(self) -> None:
        return None


def stub() -> None:
    """Stub the launches and the driver's encode out (module docstring, `--stub`)."""
    import tylo
    from tylo.compiler.hardware import dtypes
    from tylo.frontend.jit.launcher import Launcher
    from tylo.ops import attention_backward as op
    from tylo.ops import library
    from tylo.runtime.arrays import DeviceArray

    real = tylo.prepare_tma
    hits: dict = {}

    def prepare_tma(plan, array, bounds=None, l2_promotion=0):
        # prepare_tma's torch-keyed cache hit (runtime/tma.py), over a host binding made once
        key = (plan, array.dtype, array.data_ptr(), array.shape, array.stride(),
               None if bounds is None else tuple(bounds), l2_promotion, array.get_device())
        hit = hits.get(key)
        if hit is None:
            b = real(plan, array, bounds, l2_promotion)
            device = DeviceArray(array.data_ptr(), dtypes.as_dtype(array.dtype, "array"),
                                 tuple(array.shape), tuple(array.stride()), 0, kind="torch")
            hit = hits[key] = (b.bounds, b.encoding, None, bytes(128), f"torch0|{plan}|{b.rank}",
                               device)
        return tylo.TMABinding(plan, array, hit[0], hit[1], hit[5], hit[2], hit[3], hit[4])

    tylo.prepare_tma = prepare_tma
    library.WrappedLaunch._launch = lambda self, args, kwargs: self.wrapped.kernel[self.config]
    Launcher.prepare = lambda self, *args: _NoLaunch()
    if hasattr(op, "PREPARED_ON"):
        op.PREPARED_ON = (*op.PREPARED_ON, "cpu")


def per_call_us(torch, fn, calls: int, cuda: bool) -> float:
    """The median host microseconds of one fn() call over `calls` calls, each timed alone (10
    warm-up calls first; on a GPU a synchronization after every 16 calls, untimed, so that the
    launch queue never fills and blocks a launch)."""
    for _ in range(10):
        fn()
    times = []
    for i in range(calls):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        if cuda and i % 16 == 15:
            torch.cuda.synchronize()
    if cuda:
        torch.cuda.synchronize()
    return sorted(times)[len(times) // 2] * 1e6


def rows(torch, op, a) -> dict:
    """name -> a callable: the op's three ways of one call on the arguments `a`."""
    implementation = op.attention_backward._init_fn  # the custom op's (its checks included)
    custom = torch.ops.tylo.attention_backward.default
    found = {"custom op": lambda: custom(*a),  # torch's dispatcher, as a compiled graph calls it
             "implementation": lambda: implementation(*a)}  # the checks and `_run`
    if hasattr(op, "_run"):  # (the op before its per-geometry plans had no `_run`)
        found["_run (direct)"] = lambda: op._run(*a)  # an eager backward (library.direct)
    return found


def main() -> None:
    import torch

    import tylo.ops.attention_forward  # noqa: F401  (registers the tylo:: attention ops)
    from tylo.ops import attention_backward as op

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--stub", action="store_true", help="CPU only, launches stubbed out")
    parser.add_argument("--profile", action="store_true", help="cProfile of the first case")
    args = parser.parse_args()
    cuda = not args.stub
    if cuda and not torch.cuda.is_available():
        raise SystemExit("bench/attention_backward_host.py needs a CUDA GPU (or --stub)")
    if args.stub:
        stub()
    device = "cuda" if cuda else "cpu"
    for label, D, order, kv_order in CASES:
        a = arguments(torch, D, order, kv_order, device)
        for name, fn in rows(torch, op, a).items():
            us = per_call_us(torch, fn, args.calls, cuda)
            print(f"{label:10s} {name:16s} {us:9.1f} us", flush=True)
    if args.profile:
        a = arguments(torch, CASES[0][1], CASES[0][2], CASES[0][3], device)
        run = list(rows(torch, op, a).values())[-1]
        run()
        print_profile(torch, run, args.calls, cuda, 30)


if __name__ == "__main__":
    main()
