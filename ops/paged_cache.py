"""A paged KV cache for `tylo.ops.decode_attention` and a CUDA-graphed decode step.

    cache = tylo.ops.PagedKVCache(layers=2, batch=4, max_tokens=1024, kv_heads=8, head_dim=128,
                                  device="cuda")
    cache.advance()                       # seq_lens += 1: room for this step's token
    cache.append(layer, k, v)             # k, v (B, Hkv, D): written at position seq_lens - 1
    out = tylo.ops.decode_attention(q, cache.k[layer], cache.v[layer], cache.block_table,
                                    cache.seq_lens)

`PagedKVCache` holds, per layer, K and V pages in vLLM's layout (num_pages, page_size, Hkv, D),
a block table (B, max_pages) int32 of each sequence's page ids in order, and seq_lens (B,) int32,
all on one device. `append` is a scatter by torch indexing on the device (page from the block
table at position // page_size, slot position % page_size): no host synchronization, so a step
that appends is capturable in a CUDA graph; replays see seq_lens changed in place.

`GraphedStep(step)` captures a function of no arguments (reading and writing only tensors it
keeps, "static" tensors) in a CUDA graph after warm-up calls on a side stream (the first call
of a Tylo op compiles), and `replay()` runs it again and returns the output tensors it captured
(the same tensors every time: copy them to keep them).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from tylo import ArgumentError

__all__ = ["GraphedStep", "PagedKVCache"]

_OP = "tylo.ops.PagedKVCache"


class PagedKVCache:
    """K/V pages for `layers` layers of `batch` sequences of at most `max_tokens` tokens each.

    k, v: (layers, num_pages, page_size, kv_heads, head_dim) of `dtype` (zeros); `k[layer]` is
    one layer's contiguous (num_pages, page_size, Hkv, D) cache. block_table: (batch,
    max_pages) torch.int32, max_pages = ceil(max_tokens / page_size); by default sequence b
    owns pages b max_pages ... (b + 1) max_pages - 1, or, with `generator`, a random
    permutation of the pool (pages of a sequence scattered, as an allocator leaves them).
    seq_lens: (batch,) torch.int32, zeros. num_pages = batch x max_pages.

    Raises ArgumentError naming the argument when a size is not a positive int or page_size
    is not one that decode_attention takes (16, 32, 64, 128, 256)."""

    def __init__(self, layers: int, batch: int, max_tokens: int, kv_heads: int, head_dim: int,
                 *, page_size: int = 16, dtype: torch.dtype = torch.bfloat16,
                 device: torch.device | str = "cpu", generator: torch.Generator | None = None):
        for name, n in (("layers", layers), ("batch", batch), ("max_tokens", max_tokens),
                        ("kv_heads", kv_heads), ("head_dim", head_dim)):
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise ArgumentError(name, f"is {n!r}; {_OP} takes a positive int")
        if page_size not in (16, 32, 64, 128, 256):
            raise ArgumentError("page_size", f"is {page_size!r}; {_OP} takes 16, 32, 64, 128 "
                                             "or 256 (tylo.ops.decode_attention's page sizes)")
        self.page_size = page_size
        self.max_pages = -(-max_tokens // page_size)
        num_pages = batch * self.max_pages
        shape = (layers, num_pages, page_size, kv_heads, head_dim)
        self.k = torch.zeros(shape, dtype=dtype, device=device)
        self.v = torch.zeros(shape, dtype=dtype, device=device)
        order = (torch.arange(num_pages) if generator is None
                 else torch.randperm(num_pages, generator=generator))
        self.block_table = order.to(torch.int32).view(batch, self.max_pages).to(device)
        self.seq_lens = torch.zeros(batch, dtype=torch.int32, device=device)

    @property
    def max_tokens(self) -> int:
        """Tokens a sequence can hold: max_pages x page_size."""
        return self.max_pages * self.page_size

    def advance(self, n: int = 1) -> None:
        """seq_lens += n in place (on the device, no synchronization): room for n new tokens
        a sequence, to be written by `append` and read by decode_attention."""
        self.seq_lens.add_(n)

    def reset(self) -> None:
        """Every sequence empty again (seq_lens = 0; the pages keep their bytes)."""
        self.seq_lens.zero_()

    def slots(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(page, slot), each (batch,) torch.int64: where each sequence's last token
        (position seq_lens - 1) lies in the pool. Computed on the device."""
        pos = self.seq_lens.long() - 1
        page = self.block_table.gather(1, (pos // self.page_size)[:, None]).squeeze(1)
        return page.long(), pos % self.page_size

    def append(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> None:
        """Write one token's k, v (batch, kv_heads, head_dim) per sequence into `layer`'s pages
        at position seq_lens - 1 (call `advance` first). A scatter on the device: no host
        synchronization (CUDA-graph capturable). Raises ArgumentError when k's or v's shape is
        not (batch, kv_heads, head_dim)."""
        want = (self.seq_lens.shape[0], *self.k.shape[3:])
        for name, x in (("k", k), ("v", v)):
            if tuple(x.shape) != want:
                raise ArgumentError(name, f"has shape {tuple(x.shape)}; {_OP}.append takes "
                                          f"(batch, kv_heads, head_dim) = {want}")
        page, slot = self.slots()
        self.k[layer][page, slot] = k.to(self.k.dtype)
        self.v[layer][page, slot] = v.to(self.v.dtype)

    def gather(self, layer: int, b: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Sequence b's keys and values of `layer` as contiguous (seq_lens[b], Hkv, D) copies
        (reads seq_lens to the host: for tests and checks, not for a decode step)."""
        n = int(self.seq_lens[b])
        pages = self.block_table[b].long()
        k = self.k[layer][pages].flatten(0, 1)[:n]
        v = self.v[layer][pages].flatten(0, 1)[:n]
        return k, v


class GraphedStep:
    """`step` (no arguments; returns a tensor or a tuple of tensors) captured in a CUDA graph.

    `warmup` calls run first on a side stream (compiles, workspaces, cuBLAS handles), then one
    call is captured (recorded, not run: the warm-up calls' effects, an `append`'s writes,
    remain). `replay()` runs the graph on the current stream and returns the
    captured outputs (the same tensors each replay). CUDA only: raises ArgumentError naming
    `device` for another device."""

    def __init__(self, step: Callable[[], object], device: torch.device | str = "cuda",
                 warmup: int = 2):
        device = torch.device(device)
        if device.type != "cuda":
            raise ArgumentError("device", f"is {device}; a CUDA graph needs a CUDA device")
        side = torch.cuda.Stream(device)
        side.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(side):
            for _ in range(warmup):
                step()
        torch.cuda.current_stream(device).wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.outputs = step()

    def replay(self):
        """Run the captured step again; returns its captured outputs."""
        self.graph.replay()
        return self.outputs
