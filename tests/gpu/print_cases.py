"""The tylo.print kernel of test_print_gpu.py and test_emulator_vs_gpu.py, its fresh random
values and the lines Python's formatting gives for them.

`show` prints Int32 (negative too, and its hex), UInt32, Int64, Float32, BFloat16 and Int8 values
from N threads of BLOCKS blocks of THREADS, inside a runtime if and a runtime loop, and a
value-less line from every thread. `main` runs it on the GPU in a process of its own (the driver
writes device printf output to the C stdout of the process when the context synchronizes:
CUDA C++ Programming Guide, "Formatted Output").
"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np

import tylo
from tylo import UInt32

N, BLOCKS, THREADS = 120, 2, 64


@tylo.kernel
def show(i32, i64, f32, bf16, i8, n, label: tylo.constexpr):
    t = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
    if t < n:
        tylo.print("{} t={} i32={} hex={:08x} u32={} i64={} f32={:.9e} f32g={} bf16={:g} i8={:>4} "
                   "i8x={:02x} 100%", label, t, i32[t], i32[t], i32[t].to(UInt32), i64[t], f32[t],
                   f32[t], bf16[t], i8[t], i8[t])
        for k in range(t % 4):
            if (k + t) % 2 == 0:
                tylo.print("loop t={} k={} v={:+d}", t, k, i32[t] // (k + 1))
    tylo.print("done {{{}}}", "static")


def values(rng) -> dict[str, np.ndarray]:
    f32 = (rng.standard_normal(N) * 10.0 ** rng.integers(-30, 30, N)).astype(np.float32)
    f32[:3] = [0.0, -0.0, np.float32(1) / 3]
    bf16 = (rng.standard_normal(N) * 10.0 ** rng.integers(-8, 8, N)).astype(ml_dtypes.bfloat16)
    return {
        "i32": rng.integers(-2**31, 2**31, N, dtype=np.int32),
        "i64": rng.integers(-2**63, 2**63 - 1, N, dtype=np.int64),
        "f32": f32,
        "bf16": bf16,
        "i8": rng.integers(-128, 128, N, dtype=np.int8),
    }


def arguments(backend, v: dict) -> tuple:
    """`show`'s arguments on `backend` (see backends.py)."""
    return (*(backend.put(v[k]) for k in ("i32", "i64", "f32", "bf16", "i8")), N, "lbl")


def expected(v) -> list[str]:
    """The lines `show` prints, sorted (threads print in no set order)."""
    lines = []
    for t in range(N):
        a, b, f, c = int(v["i32"][t]), float(v["bf16"][t]), float(v["f32"][t]), int(v["i8"][t])
        lines.append(f"lbl t={t} i32={a} hex={a & 0xFFFFFFFF:08x} u32={a & 0xFFFFFFFF} "
                     f"i64={int(v['i64'][t])} f32={f:.9e} f32g={f:g} bf16={b:g} i8={c:>4} "
                     f"i8x={c & 0xFF:02x} 100%")
        for k in range(t % 4):
            if (k + t) % 2 == 0:
                lines.append(f"loop t={t} k={k} v={a // (k + 1):+d}")
    lines += ["done {static}"] * (BLOCKS * THREADS)
    return sorted(lines)


def save(path, v: dict) -> None:
    np.savez(path, **{k: (x.view(np.int16) if k == "bf16" else x) for k, x in v.items()})


def load(path) -> dict[str, np.ndarray]:
    data = np.load(path)
    return {k: (data[k].view(ml_dtypes.bfloat16) if k == "bf16" else data[k]) for k in data.files}


def printed(backend, v: dict, tmp_path) -> list[str]:
    """The lines `show` prints on `backend` (backends.py) for values `v`, sorted: in process on
    the emulator, in a process of its own (`main`) on the GPU."""
    if backend.emulated:
        out = io.StringIO()
        launch = show.emulate[(BLOCKS,), (THREADS,)]
        launch.stdout = out
        launch(*arguments(backend, v))
        return sorted(out.getvalue().splitlines())
    save(tmp_path / "values.npz", v)
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), str(tmp_path / "values.npz")],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0 and "launched" in done.stderr, done.stderr
    return sorted(done.stdout.splitlines())


def main(values_path: str) -> None:
    """Run `show` on the GPU on the values saved at `values_path`; its lines go to stdout."""
    import ctypes

    import backends

    gpu = backends.make("gpu")
    gpu.launch(show, (BLOCKS,), (THREADS,), *arguments(gpu, load(values_path)))
    ctypes.CDLL(None).fflush(None)
    print("launched", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1])
