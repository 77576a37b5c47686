"""The kernels of the launch and autotuning GPU tests (test_launch_gpu.py, test_autotune_gpu.py),
whose results test_launch_results_gpu.py also checks on the emulator."""

from __future__ import annotations

import tylo


@tylo.kernel
def fma4(out, a, b, c, alpha):
    i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
    if i < out.shape[0]:
        out[i] = a[i] * alpha + b[i] * c[i]


@tylo.kernel
def add_one(x, n, BLOCK: tylo.constexpr, SMEM: tylo.constexpr):
    i = tylo.block_idx() * BLOCK + tylo.thread_idx()
    if i < n:
        x[i] = x[i] + 1.0


CONFIGS = [
    tylo.Config(BLOCK=64, SMEM=0),
    tylo.Config(BLOCK=128, SMEM=0),
    tylo.Config(BLOCK=256, SMEM=0),
    tylo.Config(BLOCK=128, SMEM=400 * 1024),  # more dynamic shared memory than any GPU has
    tylo.Config(BLOCK=2048, SMEM=0),  # more threads than a block may have
]
LAUNCHABLE = CONFIGS[:3]
