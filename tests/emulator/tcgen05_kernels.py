"""Kernels of the tcgen05 / TMEM tests (tests/emulator/test_tcgen05_emulation.py,
tests/frontend/test_tcgen05.py, the catalogue): one CTA of 128 threads (four warps, one per
32-lane TMEM band), compiled for sm_100a."""

from __future__ import annotations

import tylo
from tylo import BFloat16, Float16, Float32, Int8, Int32, TMATile, UInt8, shared_layout

ARCH = "sm_100a"


@tylo.kernel
def tmem_roundtrip(out, x, n: tylo.constexpr, columns: tylo.constexpr, band_shift: tylo.constexpr = 0,
                   freed: tylo.constexpr = None):
    """out = 2 x through TMEM: warp w stores its 32 rows (n Float32 values a thread) into lanes
    32 w .., loads them back; allocation, fences, relinquish and deallocation around it.
    Mistakes: `band_shift` 1 makes warp w use band w + 1; `freed` deallocates that many columns
    instead of `columns` (0: none)."""
    warp, lane = tylo.warp_id(), tylo.lane_id()
    transfer = tylo.TmemTransfer((32, n), 1)
    slot = tylo.shared_alloc(Int32, 1)
    if warp == 0:
        tylo.tmem_allocate(columns, into=slot)
    tylo.tcgen05_fence_before_thread_sync()
    tylo.barrier()
    tylo.tcgen05_fence_after_thread_sync()
    base = tylo.SharedTile(slot, tylo.Layout((1,), (1,)))[0]
    band = tylo.TmemTile(Float32, base + ((((warp + band_shift) % 4) * 32) << 16),
                         tylo.Layout((32, n), (1, 128)))
    part = tylo.partition(transfer, band)
    f = tylo.load_fragment(transfer.ownership, tylo.window(x, (warp * 32, 0), (32, n)), lane)
    tylo.store_async(part, f * 2.0)
    tylo.wait_stores()
    g = tylo.wait_load(tylo.load_async(part))
    tylo.store(tylo.window(out, (warp * 32, 0), (32, n)), g, lane)
    tylo.tcgen05_fence_before_thread_sync()
    tylo.barrier()
    if warp == 0:
        tylo.tcgen05_fence_after_thread_sync()
        tylo.tmem_relinquish_permit()
        if freed != 0:
            tylo.tmem_deallocate(base, columns if freed is None else freed)


@tylo.kernel
def tmem_roundtrip_packed(out, x, n: tylo.constexpr):
    """out = x (BFloat16, n values a thread) through TMEM as packed pairs: tylo.pack, tcgen05.st,
    tcgen05.ld, tylo.unpack."""
    warp, lane = tylo.warp_id(), tylo.lane_id()
    transfer = tylo.TmemTransfer((32, n), 1)
    slot = tylo.shared_alloc(Int32, 1)
    if warp == 0:
        tylo.tmem_allocate(32, into=slot)
    tylo.tcgen05_fence_before_thread_sync()
    tylo.barrier()
    tylo.tcgen05_fence_after_thread_sync()
    base = tylo.SharedTile(slot, tylo.Layout((1,), (1,)))[0]
    band = tylo.TmemTile(BFloat16, base + ((warp * 32) << 16), tylo.Layout((32, n), (1, 128)))
    part = tylo.partition(transfer, band)
    f = tylo.load_fragment(transfer.ownership, tylo.window(x, (warp * 32, 0), (32, n)), lane)
    tylo.store_async(part, tylo.pack(f))
    tylo.wait_stores()
    g = tylo.unpack(tylo.wait_load(tylo.load_async(part)))
    tylo.store(tylo.window(out, (warp * 32, 0), (32, n)), g, lane)
    tylo.tcgen05_fence_before_thread_sync()
    tylo.barrier()
    if warp == 0:
        tylo.tcgen05_fence_after_thread_sync()
        tylo.tmem_deallocate(base, 32)


@tylo.kernel
def tmem_shape_roundtrip(out, raw, x, n: tylo.constexpr, shape: tylo.constexpr,
                         dtype: tylo.constexpr, offset: tylo.constexpr = 0):
    """x (64, n) through TMEM with a 16-lane shape: warp w stores rows 16 w .. + 15 (its
    partition's ownership, Float32 doubled, BFloat16 packed as they are) into lanes
    32 w + offset .. (offset 0 or 16: a half of the band), loads them back into out (64, n);
    raw (128, n) is every lane read through .32x32b, so the placement in TMEM shows (row
    32 w + offset + i holds x's row 16 w + i). Mistake: another offset (8: not a half)."""
    warp, lane = tylo.warp_id(), tylo.lane_id()
    slot = tylo.shared_alloc(Int32, 1)
    if warp == 0:
        tylo.tmem_allocate(max(32, n), into=slot)
    tylo.tcgen05_fence_before_thread_sync()
    tylo.barrier()
    tylo.tcgen05_fence_after_thread_sync()
    base = tylo.SharedTile(slot, tylo.Layout((1,), (1,)))[0] + ((warp * 32) << 16)
    part = tylo.partition(tylo.TmemTransfer((16, n), 1, shape),
                          tylo.TmemTile(dtype, base + (offset << 16), tylo.Layout((16, n), (1, 128))))
    f = tylo.load_fragment(part.ownership, tylo.window(x, (warp * 16, 0), (16, n)), lane)
    if dtype == Float32:
        tylo.store_async(part, f * 2.0)
    else:
        tylo.store_async(part, tylo.pack(f))
    tylo.wait_stores()
    g = tylo.wait_load(tylo.load_async(part))
    if dtype != Float32:
        g = tylo.unpack(g)
    tylo.store(tylo.window(out, (warp * 16, 0), (16, n)), g, lane)
    whole = tylo.partition(tylo.TmemTransfer((32, n), 1), tylo.TmemTile(dtype, base, tylo.Layout((32, n), (1, 128))))
    r = tylo.wait_load(tylo.load_async(whole))
    if dtype != Float32:
        r = tylo.unpack(r)
    tylo.store(tylo.window(raw, (warp * 32, 0), (32, n)), r, lane)
    tylo.tcgen05_fence_before_thread_sync()
    tylo.barrier()
    if warp == 0:
        tylo.tcgen05_fence_after_thread_sync()
        tylo.tmem_deallocate(base, max(32, n))


@tylo.kernel
def tmem_allocations(out, first: tylo.constexpr, second: tylo.constexpr,
                     relinquish: tylo.constexpr):
    """Warp 0 allocates `first` columns (and relinquishes the permit when `relinquish`), then
    warp 1 allocates `second`; out[0], out[1] = the two addresses."""
    warp, t = tylo.warp_id(), tylo.thread_idx()
    slots = tylo.shared_alloc(Int32, 2)
    view = tylo.SharedTile(slots, tylo.Layout((2,), (1,)))
    if warp == 0:
        tylo.tmem_allocate(first, into=slots)
        if relinquish:
            tylo.tmem_relinquish_permit()
    tylo.barrier()
    if warp == 1:
        tylo.tmem_allocate(second, into=slots + 1)
    tylo.barrier()
    if t < 2:
        out[t] = view[t]
    tylo.barrier()
    if warp == 0:
        tylo.tmem_deallocate(view[0], first)
    if warp == 1:
        tylo.tmem_deallocate(view[1], second)


def _fill(tile, src, rows: int, cols: int, t):
    for i in tylo.static_range(rows * cols // 128):
        idx = t + 128 * i
        tile[idx // cols, idx % cols] = src[idx // cols, idx % cols]


@tylo.func
def _staged_operands(A, B, m: int, n: int, k: int, b_axis: int, dtype, row_bytes: int, t):
    """A (m, k) and B (k, n) stored by the CTA into canonical shared tiles (A K-major; B's
    inner axis `b_axis`), fenced for the async proxy by tylo-insert-async-fences."""
    sa = tylo.SharedTile(tylo.shared_alloc(dtype, m * k, align=1024),
                         shared_layout(TMATile(dtype, (m, k), 1, row_bytes)))
    sb = tylo.SharedTile(tylo.shared_alloc(dtype, k * n, align=1024),
                         shared_layout(TMATile(dtype, (k, n), b_axis, row_bytes)))
    _fill(sa, A, m, k, t)
    _fill(sb, B, k, n, t)
    return sa, sb


@tylo.func
def _allocate(columns: int, warp, t):
    """Warp 0 allocates `columns` TMEM columns into a shared slot; thread 0 inits one mbarrier."""
    slot = tylo.shared_alloc(Int32, 1)
    bars = tylo.mbarriers(1)
    if warp == 0:
        tylo.tmem_allocate(columns, into=slot)
    if t == 0:
        bars[0].init(1)
        tylo.fence_mbarrier_init()
    return slot, bars


@tylo.func
def _publish(slot):
    """The barrier (tcgen05 fences around it) after the allocation and the operand stores;
    the TMEM address read from the slot."""
    tylo.fence_proxy_async()
    tylo.tcgen05_fence_before_thread_sync()
    tylo.barrier()
    tylo.tcgen05_fence_after_thread_sync()
    return tylo.SharedTile(slot, tylo.Layout((1,), (1,)))[0]


@tylo.func
def _release(base, columns: int, warp):
    tylo.tcgen05_fence_before_thread_sync()
    tylo.barrier()
    if warp == 0:
        tylo.tcgen05_fence_after_thread_sync()
        tylo.tmem_deallocate(base, columns)


@tylo.func
def _store_band(out, base, dtype, n: int):
    """Warp w loads its 32 lanes of the (128, n) `dtype` accumulator at `base` into out."""
    warp, lane = tylo.warp_id(), tylo.lane_id()
    band = tylo.TmemTile(dtype, base + ((warp * 32) << 16), tylo.Layout((32, n), (1, 128)))
    g = tylo.wait_load(tylo.load_async(tylo.partition(tylo.TmemTransfer((32, n), 1), band)))
    tylo.store(tylo.window(out, (warp * 32, 0), (32, n)), g, lane)


@tylo.kernel
def mma_128xn(out, A, B, n: tylo.constexpr, k: tylo.constexpr, b_axis: tylo.constexpr,
              dtype: tylo.constexpr, row_bytes: tylo.constexpr, a_tmem: tylo.constexpr = False,
              mistake: tylo.constexpr = None, transposed: tylo.constexpr = False,
              f16_acc: tylo.constexpr = False):
    """out (128, n) = A (128, k) @ B (k, n) by one thread's tcgen05.mma (dtype BFloat16 into
    Float32, or Int8 into Int32): operands stored by the CTA into canonical shared tiles (B's
    inner axis `b_axis`: 0 K-major, 1 MN-major; rows of `row_bytes`); commit on an mbarrier,
    wait, TMEM -> registers -> global. With `a_tmem` A (bf16) is packed and stored into TMEM
    columns max(32, n) .. by tcgen05.st (warp w its rows 32 w ..) and the MMA reads it there. Mistakes: "no_commit" loads D without the
    commit and its wait (a barrier instead); "no_wait" commits but loads D after a barrier,
    no thread having waited on the commit's mbarrier; "overwrite" stores into A's stage before the
    commit. `transposed`: read D through the permuted transfer ((n, 32), axis 0: logical (column,
    lane)) into out (n, 128) = D^T. `f16_acc`: a Float16 accumulator (Float16 or 8-bit float
    inputs), one element in the low half of each TMEM word, read through the packed 16-bit
    transfer of the (32, 2 n) Float16 view into out (128, 2 n): D in the even columns, the
    words' high halves in the odd ones."""
    t, warp, lane = tylo.thread_idx(), tylo.warp_id(), tylo.lane_id()
    acc_type = Int32 if dtype in (Int8, UInt8) else Float16 if f16_acc else Float32
    atom = tylo.Tcgen05MMA((128, n, 256 // dtype.bits), dtype, acc_type)
    columns = 2 * max(32, n) if a_tmem else max(32, n)
    slot, bars = _allocate(columns, warp, t)
    sa, sb = _staged_operands(A, B, 128, n, k, b_axis, dtype, row_bytes, t)
    base = _publish(slot)
    d = tylo.accumulator(atom, base)
    a = tylo.tcgen05_operand(atom, "A", sa)
    b = tylo.tcgen05_operand(atom, "B", sb)
    if a_tmem:
        rows = tylo.TmemTransfer((32, k), 1)
        a_band = tylo.TmemTile(dtype, base + ((warp * 32) << 16) + max(32, n),
                               tylo.Layout((32, k), (1, 128)))
        f = tylo.load_fragment(rows.ownership, tylo.window(A, (warp * 32, 0), (32, k)), lane)
        tylo.store_async(tylo.partition(rows, a_band), tylo.pack(f))
        tylo.wait_stores()
        tylo.tcgen05_fence_before_thread_sync()
        tylo.barrier()
        tylo.tcgen05_fence_after_thread_sync()
        a = tylo.TmemTile(dtype, base + max(32, n), tylo.Layout((128, k), (1, 128)))
    if t == 0:
        tylo.mma(atom, d, a, b, k=k, accumulate=False)
        if mistake == "overwrite":
            sa[0, 0] = A[0, 0]
        if mistake != "no_commit":
            tylo.commit_mma(bars[0])
    if mistake in ("no_commit", "no_wait"):
        tylo.barrier()
    else:
        bars[0].wait(0)
    tylo.tcgen05_fence_after_thread_sync()
    if f16_acc:
        words = tylo.TmemTile(Float16, base + ((warp * 32) << 16),
                              tylo.Layout((32, 2 * n), (1, 128)))
        part = tylo.partition(tylo.TmemTransfer((32, 2 * n), 1), words)
        g = tylo.unpack(tylo.wait_load(tylo.load_async(part)))
        tylo.store(tylo.window(out, (warp * 32, 0), (32, 2 * n)), g, lane)
    elif transposed:
        view = tylo.TmemTile(acc_type, base + ((warp * 32) << 16), tylo.Layout((n, 32), (128, 1)))
        g = tylo.wait_load(tylo.load_async(tylo.partition(tylo.TmemTransfer((n, 32), 0), view)))
        tylo.store(tylo.window(out, (0, warp * 32), (n, 32)), g, lane)
    else:
        _store_band(out, base, acc_type, n)
    _release(base, columns, warp)


@tylo.kernel
def mma_64xn(out, A, B, n: tylo.constexpr, k: tylo.constexpr, b_axis: tylo.constexpr,
             dtype: tylo.constexpr, row_bytes: tylo.constexpr, read: tylo.constexpr = "lanes"):
    """An M = 64 tcgen05.mma into TMEM: D (64, n) = A (64, k) @ B (k, n), k / k_atom
    instructions accumulating, then (a second mma, accumulate=True) D += A[:, :k_atom] @
    B[:k_atom, :] of the first K step again. read "lanes": every TMEM lane read raw through
    .32x32b, out (128, n) row l = lane l (warp w reads lanes 32 w .. 32 w + 31), so the data
    path layout (PTX 9.7.16.10.5 Layout F) shows: lanes 32 w .. + 15 hold rows 16 w .. + 15 of
    D, lanes 32 w + 16 .. + 31 stay as TMEM started (zero in the emulator). read "16x256b" /
    "16x128b" / "16x64b": warp w reads its 16 rows of D with that shape into out (64, n)."""
    t, warp, lane = tylo.thread_idx(), tylo.warp_id(), tylo.lane_id()
    acc_type = Int32 if dtype in (Int8, UInt8) else Float32
    atom = tylo.Tcgen05MMA((64, n, 256 // dtype.bits), dtype, acc_type)
    columns = max(32, 1 << (n - 1).bit_length())  # a power of two
    slot, bars = _allocate(columns, warp, t)
    sa, sb = _staged_operands(A, B, 64, n, k, b_axis, dtype, row_bytes, t)
    base = _publish(slot)
    if t == 0:
        d = tylo.accumulator(atom, base)
        a, b = tylo.tcgen05_operand(atom, "A", sa), tylo.tcgen05_operand(atom, "B", sb)
        tylo.mma(atom, d, a, b, k=k, accumulate=False)
        tylo.mma(atom, d, a, b, k=atom.k, accumulate=True)
        tylo.commit_mma(bars[0])
    bars[0].wait(0)
    tylo.tcgen05_fence_after_thread_sync()
    if read == "lanes":
        _store_band(out, base, acc_type, n)
    else:  # the warp's rows 16 w .. 16 w + 15 of D: lanes 32 w .. 32 w + 15
        rows = tylo.TmemTile(acc_type, base + ((warp * 32) << 16), tylo.Layout((16, n), (1, 128)))
        part = tylo.partition(tylo.TmemTransfer((16, n), 1, read), rows)
        g = tylo.wait_load(tylo.load_async(part))
        tylo.store(tylo.window(out, (warp * 16, 0), (16, n)), g, lane)
    _release(base, columns, warp)


@tylo.kernel
def mma_ring(out, A, B, stage, k_steps, stages: tylo.constexpr, n: tylo.constexpr,
             b_axis: tylo.constexpr, mistake: tylo.constexpr = None,
             inbounds: tylo.constexpr = False):
    """out (128, n) = A[stage] @ B[stage] over K = 16 k_steps, `stage` and `k_steps` runtime:
    the `stages` A tiles (128, 64) are one shared (stages * 128, 64) tile (K-major, 128-byte
    rows) and the B tiles (64, n) one (64, stages * n) tile, K-major (`b_axis` 0: N is the
    strided axis) or MN-major (1, n = 64: N the contiguous axis, one swizzle row a stage).
    One thread picks the stage by runtime origins (stage * 128 rows of A, stage * n columns of
    B) and steps K by re-origins in a runtime loop (kk * 16: inside A's one row, B's 8-row
    groups or row), one tcgen05.mma of k = 16 each. Mistakes: "unproven" gives A's origin as
    stage * 4 rows (not provably a multiple of 8). `inbounds`: the operands' origins promised
    inside their tiles (no run-time bounds traps for them)."""
    t = tylo.thread_idx()
    atom = tylo.Tcgen05MMA((128, n, 16), BFloat16)
    la = shared_layout(TMATile(BFloat16, (128, 64), 1)).rebuild((stages * 128, 64), (64, 1))
    if b_axis == 0:
        lb = shared_layout(TMATile(BFloat16, (64, n), 0)).rebuild((64, stages * n), (1, 64))
    else:
        lb = shared_layout(TMATile(BFloat16, (64, 64), 1)).rebuild((64, (64, stages)),
                                                                    (64, (1, 4096)))
    sa = tylo.SharedTile(tylo.shared_alloc(BFloat16, stages * 128 * 64, align=1024), la)
    sb = tylo.SharedTile(tylo.shared_alloc(BFloat16, stages * 64 * n, align=1024), lb)
    slot, bars = _allocate(max(32, n), tylo.warp_id(), t)
    _fill(sa, A, stages * 128, 64, t)
    _fill(sb, B, 64, stages * n, t)
    base = _publish(slot)
    d = tylo.accumulator(atom, base)
    if t == 0:
        rows = stage * 4 if mistake == "unproven" else stage * 128
        a = tylo.tcgen05_operand(atom, "A", sa, (rows, 0), inbounds=inbounds)
        b = tylo.tcgen05_operand(atom, "B", sb, (0, stage * n), inbounds=inbounds)
        for kk in range(k_steps):
            tylo.mma(atom, d, tylo.tcgen05_operand(a, (rows, kk * 16)),
                     tylo.tcgen05_operand(b, (kk * 16, stage * n)), k=16, accumulate=kk > 0)
        tylo.commit_mma(bars[0])
    bars[0].wait(0)
    tylo.tcgen05_fence_after_thread_sync()
    _store_band(out, base, Float32, n)
    _release(base, max(32, n), tylo.warp_id())


@tylo.kernel
def mma_two_rows(out, A, B, n: tylo.constexpr, split: tylo.constexpr):
    """out (128, n) = A (128, 128) @ B (128, n), both K-major with K in two 128-byte swizzle
    rows (row groups 16 KiB / 8 n KiB apart). `split`: one mma per row, the operands
    re-originated at K = 64 r; else one mma of K = 128 (refused: it would cross the row)."""
    t = tylo.thread_idx()
    atom = tylo.Tcgen05MMA((128, n, 16), BFloat16)
    la = shared_layout(TMATile(BFloat16, (128, 64), 1)).rebuild((128, (64, 2)), (64, (1, 8192)))
    lb = shared_layout(TMATile(BFloat16, (64, n), 0)).rebuild(((64, 2), n), ((1, 64 * n), 64))
    sa = tylo.SharedTile(tylo.shared_alloc(BFloat16, 128 * 128, align=1024), la)
    sb = tylo.SharedTile(tylo.shared_alloc(BFloat16, 128 * n, align=1024), lb)
    slot, bars = _allocate(max(32, n), tylo.warp_id(), t)
    _fill(sa, A, 128, 128, t)
    _fill(sb, B, 128, n, t)
    base = _publish(slot)
    d = tylo.accumulator(atom, base)
    a = tylo.tcgen05_operand(atom, "A", sa)
    b = tylo.tcgen05_operand(atom, "B", sb)
    if t == 0:
        if split:
            for r in tylo.static_range(2):
                tylo.mma(atom, d, tylo.tcgen05_operand(a, (0, 64 * r)),
                         tylo.tcgen05_operand(b, (64 * r, 0)), k=64, accumulate=r > 0)
        else:
            tylo.mma(atom, d, a, b, k=128, accumulate=False)
        tylo.commit_mma(bars[0])
    bars[0].wait(0)
    tylo.tcgen05_fence_after_thread_sync()
    _store_band(out, base, Float32, n)
    _release(base, max(32, n), tylo.warp_id())
