"""The production kernels, written in the public Tylo language (they import only `tylo`): each
module holds its kernel(s), their configuration table and a host-side class that binds the
arrays (torch CUDA tensors, or numpy arrays for the CPU emulator) once and launches.

* `gemm`: the bf16 Hopper GEMM (TMA, WGMMA, warp-specialized, persistent), also in clusters
  of 2 CTAs with B multicast (`Gemm`);
* `gemm_layouts`: the same kernel with A K- or M-major, B K- or N-major, bf16 or f16 inputs and
  bf16, f16 or float32 C, one `Variant` constexpr each (`tylo.ops.matmul`'s kernel); and on
  K-major int8/uint8 inputs into int32 C (`tylo.ops.int_mm`'s) or float32 ones read as tf32;
* `gemm_fp8`: the same kernel with FP8 (e4m3) WGMMA and per-tensor or rowwise scales (`GemmFP8`);
* `gemm_fp8_blockwise`: FP8 with 1x128 / 128x128 block scales, DeepSeek-V3's (`GemmBlockwise`);
* `attention`: the FlashAttention-3 forward pass on Hopper (`Attention`);
* `projection`: the decode gate/up projection, silu(x W_gate^T) * (x W_up^T), swap-AB and
  Stream-K (`Projection`);
* `gate_up`: the same gate/up projection at prefill sizes, a fused GEMM (gemm.py's, its B tile
  W_gate's and W_up's rows, silu(g) * u in the epilogue; `GateUp`);
* `ampere_gemm`: the autotuned mma.sync GEMM for sm_80+ (cp.async stages, ldmatrix; `launch`);
* `common`: the pieces several of them share (the persistent tile scheduler, the producer
  loop, the staging tiles of the TMA-store epilogue).

No module imports torch at import time; the classes take torch where they are given it.
Tutorials that call them: examples/hopper/.
"""
