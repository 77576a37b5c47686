"""Host cost of Tylo's launches through the compiled launcher and through cuda-python, without a
GPU: both call the same recording stand-in for libcuda (tests/runtime/stub_libcuda.c), which
cuda-python loads as libcuda.so.1, so the difference is the cost of the two launchers' Python
and wrappers alone (the stub's own work is the same few nanoseconds for both).

    python bench/native_launch_cpu.py [--calls 20000] [--repeats 7] [--check]

Kernel: ``add4(out, a, b, c)`` (4 tensors, as in bench/launch_overhead.py), launched cached
(``add4[grid, block](...)``), prepared ``p()`` and ``p(out, a, b, c)``: one kernel object made
with ``tylo.knobs.runtime.native_launch`` off (cuda-python), one with it on, timed in
interleaved rounds (the median over `--repeats` rounds of `--calls` launches each); then the
two driver calls alone. The tensors are duck-typed torch tensors (tests/runtime/fakes.py) and
torch's current stream a constant. First each case launches once per launcher and the stub's
records must agree (function, grid, block, shared bytes, stream, every parameter's bytes);
`--check` stops there. Needs a C compiler (the stub and the launcher are built here).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests" / "runtime"
sys.path.insert(0, str(TESTS))
STREAM = 0x5000
N, BLOCK = 4096, 128
GRID = (N // BLOCK,)
SIZES = (8, 4) * 4  # out, out.shape[0], a, a.shape[0], ...


def _relaunch_on_the_stub() -> int:
    """Build the stub and run this script again with it first on the library path."""
    from native_stub import build
    from tylo.runtime import native_build

    folder = Path(tempfile.mkdtemp(prefix="tylo-stub-"))
    try:
        path = build(native_build.compiler(), folder, "libcuda.so.1")
    except native_build.BuildError as exc:
        print(f"cannot build the stub: {exc}")
        return 1
    env = dict(os.environ, TYLO_STUB_DRIVER=str(path),
               LD_LIBRARY_PATH=os.pathsep.join(filter(None, [str(folder),
                                                             os.environ.get("LD_LIBRARY_PATH")])))
    return subprocess.run([sys.executable, __file__, *sys.argv[1:]], env=env).returncode


def _add4(out, a, b, c):
    import tylo

    i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
    if i < out.shape[0]:
        out[i] = a[i] + b[i] * c[i]


def cases(stub) -> dict[str, tuple]:
    """name -> (cuda-python case, compiled-launcher case), each launched once and its record
    compared."""
    from fakes import BASE, FakeTensor

    import tylo
    from cuda.bindings import driver as cu
    from tylo.runtime import native

    out, a, b, c = (FakeTensor((N,), (1,), "float32", ("cuda", 0), BASE + i * 0x10000)
                    for i in range(4))
    kernels = {}
    for on in (False, True):
        kernel = tylo.kernel(_add4)
        with tylo.knobs.runtime.scope(native_launch=on):
            kernel[GRID, BLOCK](out, a, b, c)  # the binding is made now, with the knob
            kernels[on] = kernel, kernel[GRID, BLOCK].prepare(out, a, b, c)
    assert not kernels[False][1].native and kernels[True][1].native
    ext = native._state.module
    handle, raw = cu.CUfunction(0xF00D), kernels[True][1].address

    def per(on):
        kernel, p = kernels[on]
        launcher = kernel[GRID, BLOCK]
        return {"add4[grid, block](out, a, b, c)": lambda: launcher(out, a, b, c),
                "add4 prepared p()": p,
                "add4 prepared p(out, a, b, c)": lambda: p(out, a, b, c)}

    rows = {name: (f, g) for (name, f), g in zip(per(False).items(), per(True).values())}
    rows["driver call: cuLaunchKernel"] = (
        lambda: cu.cuLaunchKernel(handle, GRID[0], 1, 1, BLOCK, 1, 1, 0, STREAM, raw, 0),
        lambda: ext.launch(0xF00D, GRID[0], 1, 1, BLOCK, 1, 1, 0, STREAM, raw))
    rows["driver call: cuCtxGetCurrent"] = (cu.cuCtxGetCurrent, ext.current_context)
    return rows


def check(stub, rows) -> None:
    """Each launching case once per launcher: the stub's records agree."""
    for name, pair in rows.items():
        if "cuCtxGetCurrent" in name:
            continue
        seen = []
        for fn in pair:
            calls = stub.record.calls
            fn()
            assert stub.record.calls == calls + 1, name
            seen.append((stub.launch_args(), [stub.slot(i) for i in range(len(SIZES))]))
        assert seen[0] == seen[1], (name, seen)
        assert seen[0][0][1:] == ((GRID[0], 1, 1), (BLOCK, 1, 1), 0, STREAM, 0), seen[0]


def measure(rows, calls: int, repeats: int) -> dict[str, list[float]]:
    samples = {name: [[], []] for name in rows}
    for _ in range(repeats):
        for name, pair in rows.items():
            for k, fn in enumerate(pair):
                t0 = time.perf_counter()
                for _ in range(calls):
                    fn()
                samples[name][k].append((time.perf_counter() - t0) / calls * 1e6)
    return {name: [statistics.median(v) for v in pair] for name, pair in samples.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--check", action="store_true", help="compare the records, time nothing")
    args = parser.parse_args()
    import tylo

    if os.environ.get("TYLO_NATIVE_LAUNCH") is None:  # the compiled launcher's rows (default off)
        tylo.knobs.runtime.native_launch = True
    if "TYLO_STUB_DRIVER" not in os.environ:
        return _relaunch_on_the_stub()
    fake_torch = types.ModuleType("torch")  # torch's current stream: a C call returning STREAM
    fake_torch._C = types.SimpleNamespace(_cuda_getCurrentRawStream=STREAM.__or__)
    sys.modules["torch"] = fake_torch
    from native_stub import Stub

    from tylo.runtime import native

    stub = Stub(Path(os.environ["TYLO_STUB_DRIVER"]))
    stub.reset(sizes=SIZES)
    status = native.status()
    if not status.active:
        print(f"the compiled launcher is not in use: {status.reason}")
        return 1
    rows = cases(stub)
    check(stub, rows)
    print("same launches through cuda-python and the compiled launcher: "
          f"{', '.join(n for n in rows if 'cuCtx' not in n)}")
    if args.check:
        return 0
    t = measure(rows, args.calls, args.repeats)
    print(f"host us per call (median of {args.repeats} x {args.calls}), into a stub libcuda, "
          f"{os.uname().machine} CPU:")
    print(f"  {'case':34s} {'cuda-python':>11s} {'native':>8s} {'saved':>7s}")
    for name, (py, nat) in t.items():
        print(f"  {name:34s} {py:11.3f} {nat:8.3f} {py - nat:7.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
