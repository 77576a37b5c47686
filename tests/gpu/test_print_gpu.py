"""tylo.print on the GPU: a kernel prints fresh random Int32 (negative too, and its hex), UInt32,
Int64, Float32, BFloat16 and Int8 values from 120 threads of two blocks, inside a runtime if and
a runtime loop, and a value-less line from every thread; the lines it writes to the process's
stdout equal Python's formatting of the same values (sorted: threads print in no set order).

The kernel runs in a subprocess: the driver writes device printf output to the C stdout of the
process when the context synchronizes (CUDA C++ Programming Guide, "Formatted Output").
"""

from __future__ import annotations

import os
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

pytestmark = pytest.mark.gpu
pytest.importorskip("torch")

N, BLOCKS, THREADS = 120, 2, 64

SCRIPT = '''
import ctypes
import sys

import numpy as np
import torch

import tylo
from tylo import Int32, UInt32


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


data = np.load(sys.argv[1])
n, blocks, threads = map(int, sys.argv[2:5])
cuda = {name: torch.from_numpy(data[name]).cuda() for name in ("i32", "i64", "f32", "i8")}
bf16 = torch.from_numpy(data["bf16_bits"]).cuda().view(torch.bfloat16)
show[(blocks,), (threads,)](cuda["i32"], cuda["i64"], cuda["f32"], bf16, cuda["i8"], n, "lbl")
torch.cuda.synchronize()
ctypes.CDLL(None).fflush(None)
print("launched", file=sys.stderr)
'''


def _values(rng):
    f32 = (rng.standard_normal(N) * 10.0 ** rng.integers(-30, 30, N)).astype(np.float32)
    f32[:3] = [0.0, -0.0, np.float32(1) / 3]
    bf16 = (rng.standard_normal(N) * 10.0 ** rng.integers(-8, 8, N)).astype(ml_dtypes.bfloat16)
    return {
        "i32": rng.integers(-2**31, 2**31, N, dtype=np.int32),
        "i64": rng.integers(-2**63, 2**63 - 1, N, dtype=np.int64),
        "f32": f32,
        "bf16_bits": bf16.view(np.int16),
        "i8": rng.integers(-128, 128, N, dtype=np.int8),
    }


def _expected(v) -> list[str]:
    lines = []
    bf16 = v["bf16_bits"].view(ml_dtypes.bfloat16)
    for t in range(N):
        a, b, f, c = int(v["i32"][t]), float(bf16[t]), float(v["f32"][t]), int(v["i8"][t])
        lines.append(f"lbl t={t} i32={a} hex={a & 0xFFFFFFFF:08x} u32={a & 0xFFFFFFFF} "
                     f"i64={int(v['i64'][t])} f32={f:.9e} f32g={f:g} bf16={b:g} i8={c:>4} "
                     f"i8x={c & 0xFF:02x} 100%")
        for k in range(t % 4):
            if (k + t) % 2 == 0:
                lines.append(f"loop t={t} k={k} v={a // (k + 1):+d}")
    lines += ["done {static}"] * (BLOCKS * THREADS)
    return sorted(lines)


def test_device_print_matches_python_formatting(tmp_path):
    seed = int.from_bytes(os.urandom(8), "little")
    values = _values(np.random.default_rng(seed))
    np.savez(tmp_path / "values.npz", **values)
    (tmp_path / "print_kernel.py").write_text(SCRIPT)
    done = subprocess.run([sys.executable, str(tmp_path / "print_kernel.py"),
                           str(tmp_path / "values.npz"), str(N), str(BLOCKS), str(THREADS)],
                          capture_output=True, text=True,
                          cwd=tmp_path, timeout=300)
    assert done.returncode == 0 and "launched" in done.stderr, done.stderr
    got = sorted(done.stdout.splitlines())
    expected = _expected(values)
    missing = sorted(set(expected) - set(got))[:5]
    extra = sorted(set(got) - set(expected))[:5]
    assert got == expected, f"seed {seed}: missing {missing}, unexpected {extra}"
