"""Tensor maps of an op's CUDA tensors kept by address, per geometry: `bound`.

An op whose calls of one geometry (shapes, strides, dtypes, device) bind the same kinds of
tensor maps keeps, for each map of that geometry, a dict from a tensor's address to its
detached binding (`tylo.TMABinding.detached`: the descriptor without the tensor, holding no
memory alive). Within one geometry the address decides the descriptor (the shape and strides
are the geometry's), so a tensor freed and another allocated at its address (torch's caching
allocator hands the same blocks back, step after step) reuses the map; the caller keeps the
tensor alive while a launch may read it (a launch on torch's stream does for a tensor freed
after it: the allocator is stream-ordered).
"""

from __future__ import annotations

#: Addresses remembered per geometry and map (then the dict starts afresh).
BOUND_ENTRIES = 32


def bound(cache: dict, x, bind, *args):
    """bind(*args, x) detached, from `cache` (this geometry's, for this map) by x's address
    (``x.data_ptr()``, a torch CUDA tensor); bound and remembered on a miss."""
    ptr = x.data_ptr()
    binding = cache.get(ptr)
    if binding is None:
        if len(cache) >= BOUND_ENTRIES:
            cache.clear()
        binding = cache[ptr] = bind(*args, x).detached()
    return binding
