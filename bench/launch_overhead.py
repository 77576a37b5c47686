"""Host cost of a launch: Tylo (cached and prepared) beside Triton and raw cuLaunchKernel, in one run.

    python bench/launch_overhead.py [--calls 2000] [--repeats 7] [--profile]

Kernels (elementwise over 4096 floats, 32 blocks of 128 threads):

* raw: an empty kernel (no parameters) through ``cuda.bindings.driver.cuLaunchKernel`` with
  the handle and stream prepared; the 4-tensor kernel below with its 8 parameters packed
  once, and packed with numpy on every call (as cuda-python's examples do);
* ``scale(out, x, alpha)``: 2 tensors and a float, as in earlier runs of this script;
* ``add4(out, a, b, c)``: 4 tensors (the issue's 4-tensor kernel);
* ``twelve(out, a, b, c, 4 floats, 4 ints)``: 12 arguments;
* ``add4`` prepared (`Launcher.prepare`): ``p()`` and ``p(out, a, b, c)`` (pointers swapped);
* ``add2_map(out, a, b, tm, where)``: 4 tensors and a tensor map (a ``tylo.prepare_tma``
  binding, its 128 bytes copied into a 64-byte-aligned slot per launch), cached and prepared,
  beside add4 (issue 10: a tensor map should cost about what a tensor does);
* the compiled launcher (runtime/native.py) against cuda-python's: ``add4`` cached and
  prepared once more through a second kernel object whose launches were made with
  ``tylo.knobs.runtime.native_launch`` off (the rows "..., cuda-python launcher"), and the two
  ``cuCtxGetCurrent`` calls alone; every other Tylo row uses the default (the compiled
  launcher where it built: the first line says whether it is in use);
* Triton's cached launch of the same three kernels;
* the parts of a 4-tensor launch besides the driver call: reading the four torch tensors,
  torch's current stream, ``cuCtxGetCurrent``.

Every Tylo kernel's result is checked against torch (float64) first, on fresh random inputs
with NaN-poisoned outputs. A figure is host microseconds per launch: the median over
`--repeats` rounds (cases interleaved) of a loop of `--calls` launches without synchronizing.
The last lines print the ratios of issue 7's goals: Tylo 4-tensor / Triton 4-tensor (goal
<= 0.5) and prepared / raw empty (goal <= 2). Needs a GPU, torch and triton.
"""

from __future__ import annotations

import argparse
import os
import cProfile
import pstats
import statistics
import time

import numpy as np
import torch
import triton
import triton.language as tl
from cuda.bindings import driver as cu

import tylo
from tylo.runtime import assemble, driver, native, target_arch

N = 4096
BLOCK = 128
GRID = (N // BLOCK,)


@tylo.kernel
def scale(out, x, alpha):
    i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
    if i < x.shape[0]:
        out[i] = x[i] * alpha


@tylo.kernel
def add4(out, a, b, c):
    i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
    if i < out.shape[0]:
        out[i] = a[i] + b[i] * c[i]


@tylo.kernel
def twelve(out, a, b, c, s0, s1, s2, s3, i0, i1, i2, n):
    i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
    if i < n:
        k = (i0 + i1 + i2).to(tylo.Float32)
        out[i] = a[i] * s0 + b[i] * s1 + c[i] * s2 + s3 + k


@tylo.kernel
def add2_map(out, a, b, tm, where):
    i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
    if i < out.shape[0]:
        out[i] = a[i] + b[i]
    if i == 0:
        where[0] = tm.address()


add4_python = tylo.kernel(add4.fn)  # the same kernel, launched through cuda-python (main)

MAP_PLAN = tylo.TMATile(tylo.BFloat16, (128, 64), 1)


def _binding():
    return tylo.prepare_tma(MAP_PLAN, torch.randn(256, 64, device="cuda").to(torch.bfloat16))


@triton.jit
def scale_triton(out, x, alpha, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) * alpha, mask=mask)


@triton.jit
def add4_triton(out, a, b, c, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    va = tl.load(a + offs, mask=mask)
    vb = tl.load(b + offs, mask=mask)
    vc = tl.load(c + offs, mask=mask)
    tl.store(out + offs, va + vb * vc, mask=mask)


@triton.jit
def twelve_triton(out, a, b, c, s0, s1, s2, s3, i0, i1, i2, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    k = (i0 + i1 + i2).to(tl.float32)
    va = tl.load(a + offs, mask=mask)
    vb = tl.load(b + offs, mask=mask)
    vc = tl.load(c + offs, mask=mask)
    tl.store(out + offs, va * s0 + vb * s1 + vc * s2 + s3 + k, mask=mask)


EMPTY_PTX = """.version 8.0
.target {arch}
.address_size 64
.visible .entry empty()
{{
    ret;
}}
"""


def _fresh(count):
    return [torch.randn(N, device="cuda") for _ in range(count)]


def _poisoned():
    return torch.full((N,), float("nan"), device="cuda")


def python_launches(out, a, b, c):
    """add4_python's cached launch and a prepared add4, both made with the compiled launcher
    off: they call cuda-python's cuLaunchKernel and cuCtxGetCurrent."""
    with tylo.knobs.runtime.scope(native_launch=False):
        launch = add4_python[GRID, BLOCK]
        launch(out, a, b, c)  # the binding is made now, while the knob is off
        run = add4[GRID, BLOCK].prepare(out, a, b, c)
    assert not run.native
    return launch, run


def check_results() -> None:
    """Each Tylo kernel (cached, then prepared) against torch in float64; add4 through both
    launchers."""
    for step in range(3):  # add4 through cuda-python: made (and launched), cached, prepared
        out, (a, b, c) = _poisoned(), _fresh(3)
        if step == 0:
            launch, run = python_launches(out, a, b, c)
        else:
            (launch if step == 1 else run)(out, a, b, c)
        torch.cuda.synchronize()
        torch.testing.assert_close(out, (a.double() + b.double() * c.double()).float())
    out, x = _poisoned(), *_fresh(1)
    scale[GRID, BLOCK](out, x, 2.5)
    torch.cuda.synchronize()
    torch.testing.assert_close(out, (x.double() * 2.5).float())
    out, (a, b, c) = _poisoned(), _fresh(3)
    add4[GRID, BLOCK](out, a, b, c)
    torch.cuda.synchronize()
    torch.testing.assert_close(out, (a.double() + b.double() * c.double()).float())
    out, (a, b, c) = _poisoned(), _fresh(3)
    twelve[GRID, BLOCK](out, a, b, c, 0.5, -1.5, 2.0, 0.25, 1, 2, 3, N)
    torch.cuda.synchronize()
    ref = a.double() * 0.5 - b.double() * 1.5 + c.double() * 2.0 + 0.25 + 6.0
    torch.testing.assert_close(out, ref.float())
    out, (a, b, c) = _poisoned(), _fresh(3)
    run = add4[GRID, BLOCK].prepare(out, a, b, c)
    run()
    torch.cuda.synchronize()
    torch.testing.assert_close(out, (a.double() + b.double() * c.double()).float())
    out2, (a2, b2, c2) = _poisoned(), _fresh(3)
    run(out2, a2, b2, c2)
    torch.cuda.synchronize()
    torch.testing.assert_close(out2, (a2.double() + b2.double() * c2.double()).float())
    launch_map = add2_map[GRID, BLOCK]
    for launch in (launch_map, launch_map, launch_map.prepare, launch_map.prepare):
        out, (a, b), tm = _poisoned(), _fresh(2), _binding()
        where = torch.full((1,), -1, dtype=torch.int64, device="cuda")
        r = launch(out, a, b, tm, where)
        if r is not None:  # prepared: launch it, then again with new arguments
            r()
            out, (a, b), where = _poisoned(), _fresh(2), torch.full_like(where, -1)
            r(out, a, b, _binding(), where)
        torch.cuda.synchronize()
        torch.testing.assert_close(out, (a.double() + b.double()).float())
        assert int(where[0]) != -1 and int(where[0]) % 64 == 0, int(where[0])


def raw_launchers(out, a, b, c):
    """The raw cuLaunchKernel cases: empty kernel; add4 with its parameters packed once, and
    packed with numpy per call."""
    device = out.device.index
    arch = target_arch(device)
    empty = driver.load_function(assemble(EMPTY_PTX.format(arch=arch), arch, "empty").cubin,
                                 "empty", device).handle
    compiled = add4.compile(out, a, b, c, block=BLOCK)
    function = driver.load_function(compiled.cubin, compiled.name, device).handle
    stream = cu.CUstream(torch.cuda.current_stream().cuda_stream)
    values = [out.data_ptr(), N, a.data_ptr(), N, b.data_ptr(), N, c.data_ptr(), N]
    kinds = [p.ptx_type for p in compiled.device_params]
    assert kinds == ["u64", "s32"] * 4, kinds
    typed = [np.array([v], dtype=np.uint64 if k == "u64" else np.int32)
             for v, k in zip(values, kinds)]
    once = np.array([t.ctypes.data for t in typed], dtype=np.uint64)
    once_address = once.ctypes.data  # (numpy's .ctypes costs a microsecond: read it once)
    launch = cu.cuLaunchKernel

    def raw_empty():
        launch(empty, GRID[0], 1, 1, BLOCK, 1, 1, 0, stream, 0, 0)

    def raw_packed_once():
        launch(function, GRID[0], 1, 1, BLOCK, 1, 1, 0, stream, once_address, 0)

    def raw_numpy_per_call():
        ptrs = [out.data_ptr(), a.data_ptr(), b.data_ptr(), c.data_ptr()]
        held = [np.array([ptrs[i // 2]], dtype=np.uint64) if i % 2 == 0
                else np.array([N], dtype=np.int32) for i in range(8)]
        params = np.array([h.ctypes.data for h in held], dtype=np.uint64)
        launch(function, GRID[0], 1, 1, BLOCK, 1, 1, 0, stream, params.ctypes.data, 0)

    return raw_empty, raw_packed_once, raw_numpy_per_call


def parts(out, a, b, c) -> dict:
    """What a launch of add4 must do besides cuLaunchKernel, one piece at a time: read the four
    tensors (pointer, extents, strides, device, dtype: what the checks and the parameters need),
    ask torch for the current stream, ask the driver for the current context."""
    tensors = (out, a, b, c)
    stream_of = torch._C._cuda_getCurrentRawStream

    def reads():
        for t in tensors:
            t.data_ptr(), t.shape, t.stride(), t.get_device(), t.dtype

    calls = {"part: read 4 tensors (5 attributes each)": reads,
             "part: torch current stream": lambda: stream_of(0),
             "part: cuCtxGetCurrent": cu.cuCtxGetCurrent}
    if native.status().active:
        calls["part: compiled current_context()"] = native._state.module.current_context
    return calls


def measure(cases: dict, calls: int, repeats: int) -> dict[str, float]:
    """Median host microseconds per launch of each case, rounds interleaved."""
    for fn in cases.values():
        fn()
    torch.cuda.synchronize()
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(repeats):
        for name, fn in cases.items():
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            samples[name].append((time.perf_counter() - t0) / calls * 1e6)
            torch.cuda.synchronize()
    return {name: statistics.median(v) for name, v in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--profile", action="store_true", help="cProfile Tylo's 4-tensor launch")
    args = parser.parse_args()
    if os.environ.get("TYLO_NATIVE_LAUNCH") is None:  # the compiled launcher's rows (default off)
        tylo.knobs.runtime.native_launch = True
    check_results()
    out, x, a, b, c = _poisoned(), *_fresh(4)
    raw_empty, raw_once, raw_numpy = raw_launchers(out, a, b, c)
    g, launch_add4 = GRID, add4[GRID, BLOCK]
    run = launch_add4.prepare(out, a, b, c)
    tw = (0.5, -1.5, 2.0, 0.25, 1, 2, 3, N)
    tm, where = _binding(), torch.zeros(1, dtype=torch.int64, device="cuda")
    run_map = add2_map[GRID, BLOCK].prepare(out, a, b, tm, where)
    launch_py, run_py = python_launches(out, a, b, c)
    cases = {
        "raw empty kernel": raw_empty,
        "raw add4, params packed once": raw_once,
        "raw add4, numpy-packed per call": raw_numpy,
        "tylo scale (2 tensors + float)": lambda: scale[GRID, BLOCK](out, x, 2.0),
        "tylo add4 (4 tensors)": lambda: add4[GRID, BLOCK](out, a, b, c),
        "tylo twelve (12 arguments)": lambda: twelve[GRID, BLOCK](out, a, b, c, *tw),
        "tylo add4 prepared p()": run,
        "tylo add4 prepared p(out, a, b, c)": lambda: run(out, a, b, c),
        "tylo add4, cuda-python launcher": lambda: launch_py(out, a, b, c),
        "tylo add4 p(), cuda-python launcher": run_py,
        "tylo add4 p(out, a, b, c), cuda-python": lambda: run_py(out, a, b, c),
        "tylo add2_map (4 tensors + tensor map)": lambda: add2_map[GRID, BLOCK](out, a, b, tm,
                                                                                  where),
        "tylo add2_map prepared p()": run_map,
        "tylo add2_map prepared p(args)": lambda: run_map(out, a, b, tm, where),
        "triton scale": lambda: scale_triton[g](out, x, 2.0, N, BLOCK=BLOCK),
        "triton add4": lambda: add4_triton[g](out, a, b, c, N, BLOCK=BLOCK),
        "triton twelve": lambda: twelve_triton[g](out, a, b, c, *tw, BLOCK=BLOCK),
        **parts(out, a, b, c),
    }
    t = measure(cases, args.calls, args.repeats)
    state = native.status()
    print(f"compiled launcher: {'in use' if state.active else 'NOT in use'} ({state.reason})")
    print(f"host us per launch (median of {args.repeats} x {args.calls}), "
          f"{torch.cuda.get_device_name()}:")
    for name, us in t.items():
        print(f"  {name:38s} {us:7.2f}")
    print(f"ratio tylo scale / triton scale:       {t['tylo scale (2 tensors + float)'] / t['triton scale']:.2f}")
    print(f"ratio tylo twelve / triton twelve:     {t['tylo twelve (12 arguments)'] / t['triton twelve']:.2f}")
    print(f"ratio tylo add4 / triton add4:         {t['tylo add4 (4 tensors)'] / t['triton add4']:.2f}"
          "   (goal <= 0.5)")
    print(f"ratio tylo add4 cuda-python / triton:  "
          f"{t['tylo add4, cuda-python launcher'] / t['triton add4']:.2f}   (before the compiled "
          "launcher)")
    for what, key, py in (
            ("add4", "tylo add4 (4 tensors)", "tylo add4, cuda-python launcher"),
            ("p()", "tylo add4 prepared p()", "tylo add4 p(), cuda-python launcher"),
            ("p(args)", "tylo add4 prepared p(out, a, b, c)", "tylo add4 p(out, a, b, c), cuda-python")):
        print(f"compiled launcher saves on {what:8s} {t[py] - t[key]:5.2f} us "
              f"({t[key] / t[py]:.2f}x the cuda-python launcher's time)")
    print(f"ratio tylo prepared / raw empty:       {t['tylo add4 prepared p()'] / t['raw empty kernel']:.2f}"
          "   (goal <= 2)")
    print(f"ratio prepared swap / raw empty:       "
          f"{t['tylo add4 prepared p(out, a, b, c)'] / t['raw empty kernel']:.2f}")
    print(f"ratio tylo add2_map / tylo add4:       "
          f"{t['tylo add2_map (4 tensors + tensor map)'] / t['tylo add4 (4 tensors)']:.2f}"
          "   (a tensor map costs about a tensor: ~1.0)")
    python = t["tylo add4 (4 tensors)"] - t["raw add4, params packed once"]
    reads = t["part: read 4 tensors (5 attributes each)"]
    print(f"tylo add4 over raw add4: {python:.2f} us, of which the tensor reads {reads:.2f} us; "
          f"0.5x triton leaves {0.5 * t['triton add4'] - t['raw add4, params packed once']:.2f} us "
          "for all of it")
    if args.profile:
        cProfile.runctx("for _ in range(20000): launch_add4(out, a, b, c)", globals(), locals(),
                        "/tmp/tylo_launch.prof")
        pstats.Stats("/tmp/tylo_launch.prof").sort_stats("tottime").print_stats(18)


if __name__ == "__main__":
    main()
