"""The flagship GEMM on several GPUs at once (up to --gpus), beside torch.matmul on each.

    python bench/multi_gpu_gemm.py                 # the first two GPUs (--gpus), 8192^3
    python bench/multi_gpu_gemm.py --size 4096 --gpus 2

One process per GPU (torch.multiprocessing + torch.distributed with the NCCL backend,
``torch.cuda.set_device(rank)``), each running tylo.ops.kernels.gemm's `Gemm` on its own
device's arrays on torch's current stream. Each rank first checks C = A @ Bt.T on fresh random
bf16 inputs (C poisoned with NaN) against torch in float32; the ranks then pass a barrier and
time Tylo's GEMM and torch.matmul (cuBLAS) interleaved in rounds on their own GPU, all GPUs at
the same time (`tylo.testing.interleaved_ms`: CUDA events, medians of per-round medians). Rank 0
prints each GPU's TFLOP/s (2 M N K per call) and ratio, gathered with `all_gather_object`.
Without a CUDA GPU (or without torch) it says so and exits 0; with one GPU it runs one rank.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys


def rank_main(rank: int, world: int, size: int, port: int) -> None:
    """One process: its GPU's check and timing; rank 0 prints every GPU's line."""
    import torch
    import torch.distributed as dist

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world)
    try:
        from tylo.ops.kernels.gemm import Gemm
        from tylo.testing import interleaved_ms
        M = N = K = size
        A = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        Bt = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
        C = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        run = Gemm(A, Bt, C)
        run()
        torch.cuda.synchronize()
        ref = A.float() @ Bt.float().T
        written = not torch.isnan(C).any().item()
        err = ((C.float() - ref).norm() / ref.norm()).item() if written else float("inf")
        del ref
        dist.barrier()  # every GPU starts timing together
        ms = interleaved_ms(torch, {"tylo": run, "torch": lambda: torch.matmul(A, Bt.T)})
        line = (torch.cuda.get_device_name(rank), err, ms["tylo"], ms["torch"])
        lines = [None] * world
        dist.all_gather_object(lines, line)
        if rank == 0:
            flops = 2 * M * N * K
            for r, (name, e, t_tylo, t_torch) in enumerate(lines):
                tf_tylo, tf_torch = flops / t_tylo / 1e9, flops / t_torch / 1e9
                ok = "ok" if e < 1e-2 else "FAILED"
                print(f"GPU {r} ({name}) {M}^3: check rel err {e:.2e} {ok} | tylo "
                      f"{tf_tylo:.1f} | torch.matmul {tf_torch:.1f} TFLOP/s | ratio "
                      f"{tf_tylo / tf_torch:.3f}")
            print(f"all {world} GPUs timed at once: "
                  f"{'ok' if all(e < 1e-2 for _, e, _, _ in lines) else 'FAILED'}")
        if not all(e < 1e-2 for _, e, _, _ in lines):
            raise RuntimeError("a GPU's check failed (see the lines above)")
    finally:
        dist.destroy_process_group()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--size", type=int, default=8192, help="M = N = K (default 8192)")
    parser.add_argument("--gpus", type=int, default=2, help="at most this many GPUs (default 2)")
    args = parser.parse_args()
    try:
        import torch
        import torch.multiprocessing as mp
    except ImportError:
        print("multi_gpu_gemm: needs torch and CUDA GPUs (torch is not installed); nothing run")
        return 0
    world = min(torch.cuda.device_count(), args.gpus) if torch.cuda.is_available() else 0
    if world == 0:
        print("multi_gpu_gemm: needs a CUDA GPU (none found); nothing run")
        return 0
    mp.spawn(rank_main, args=(world, args.size, free_port()), nprocs=world)
    return 0


if __name__ == "__main__":
    sys.exit(main())
