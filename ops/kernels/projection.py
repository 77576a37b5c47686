"""The decode projection on Hopper: out (M, R) bf16 = silu(x W_gate^T) * (x W_up^T), with x
(M, K) bf16 of a few tokens and the weights W_gate, W_up (R, K) bf16 each (two nn.Linear
weights, two tensor maps: no concatenation) streamed once by TMA into swap-AB WGMMAs, the
gate/up epilogue fused, Stream-K balanced.

Tutorial: examples/hopper/projection.py (its --bench: GB/s of weights beside cuBLAS and a copy
of W).

The Llama-3-8B MLP shape is R = 14336, K = 4096 (W_gate and W_up 14336 x 4096 each, 234.9 MB
together) and M = 1, 8, 16,
64. At these M the weights are the whole cost (234.9 MB streamed from HBM per call):

* Swap AB. WGMMA's M is always 64, so the weight rows are its M and the tokens its N: a unit is
  64 gate rows and the same 64 up rows, D_gate (64, n) = W_gate[rows] x^T and D_up likewise,
  with n = 8, 16, 32 or 64 the tokens rounded up (TMA zero-fills the missing x rows, the TMA
  store of out skips them). The plan is WGMMA64(BFloat16, n, 64, partials): at n <= 16 four
  partials, i.e. the four K = 16 instructions of a K step go to four independent accumulators
  (no instruction waits for the previous one's result), summed by finish_mma; 2 at n = 32 and
  1 at n = 64, where n/2 * partials registers per accumulator would crowd the register file.
  Both accumulators of a unit are held by the same threads with the same ownership, so the
  epilogue silu(g) * u = g / (1 + exp(-g)) * u runs in f32 registers, converts to bf16, is
  transposed into a (n, 64) shared tile and written by one TMA store.
* Streaming. One producer warp (warp 4, its elected lane) issues per K step of 64 the TMA loads
  of the gate tile (64 x 64, 8 KB, through W_gate's tensor map), the up tile (8 KB, W_up's map,
  the same coordinates) and the x tile (64 x n, from L2) into
  the next of STAGES = 8 shared stages behind a full/empty mbarrier pair; the consumer
  warpgroup (warps 0-3) waits, issues two mma_async, waits for them and releases the stage.
  Bytes in flight: up to 7 stages x 16 KB of W = 112 KB per SM, 14.8 MB over 132 SMs, four
  times the ~3.4 MB that 4.8 TB/s x ~0.7 us of loaded HBM latency needs (~25 KB per SM).
  The consumer's work per 16 KB step (8 HGMMA m64nNk16 and a wait; a few hundred cycles by
  estimate, not measured) is under the ~900 cycles the SM's share of the bandwidth allows per
  step (16 KB / (4.8 TB/s / 132) = 0.45 us at 1.98 GHz): the tensor cores do not gate the
  stream.
* Balance: Stream-K. The work is R/64 = 224 units x K/64 = 64 steps = 14336 steps of 16 KB. A
  unit per CTA is 224 CTAs on 132 SMs = 1.70 waves: if a CTA's time is set by its SM's share of
  the stream, the second wave's 92 CTAs leave 40 SMs idle for half the run (224 / 264 = 85% of
  the machine), and the wave boundary drains and refills every pipeline; whether 92 SMs could
  pull the whole 4.8 TB/s alone (52 GB/s and ~37 KB in flight each) is not a published figure.
  Split-K in 4 is 896 items / 132 = 6.79 -> 7 rounds (97%), and every unit then needs a
  cross-CTA sum. Stream-K instead gives CTA c (grid G = 132, one per SM, persistent) the
  contiguous steps [c T / G, (c+1) T / G) of the T = 14336: 108 or 109 steps each (the mean is
  108.6: within 0.4%, the step grain). A unit wholly inside one CTA's range (96 of the 224
  here) is finished there; a unit cut by a range boundary (128 here, at most G - 1) is finished
  by the last of its CTAs to arrive: every contributor stores its f32 partial gate and up
  accumulators (2 x 64 x n x 4 B, 4 KB at n = 8) into its own workspace slot (two per CTA: its
  first and its last unit), then, after a barrier of the warpgroup, one thread adds its step
  count to the unit's counter (`atomic_add`, acq_rel, gpu scope: the release covers the slot
  stores, the acquire the reads that follow); the one that brings the count to K/64 reads the
  unit's slots in CTA order (so the sum, and the output, do not depend on who came last), runs
  the epilogue and resets the counter to 0 for the next launch. Each CTA visits its last unit
  first (`walk`): the cut unit at the end of CTA c's range starts CTA c+1's, so both pieces of
  every cut unit are done in the first few microseconds, its fixup overlaps the stream (the
  producer keeps 7 stages in flight meanwhile), and every CTA ends on a unit it finishes alone.
  Nothing waits for another CTA, so no schedule can deadlock (the emulator runs CTAs one after
  another); there is no second kernel and no memset per call. Workspace traffic: 128 cut units
  x 16 KB (two slot stores, two slot reads) = 2 MB at n = 8, 4 MB at n = 16 (0.9%, 1.7% of W's
  235 MB, mostly L2). Red-adding the partials into a zeroed f32 workspace (`red_add`) would
  need a memset (or a reset) per launch and would make the f32 sum order, hence the bf16
  output, vary between runs; hence slots and a counter.

Shared memory (dynamic; the tutorial prints it): 8 stages x (16 KB + 64 n 2 B) + the n x 64 output
tile + 1008 B of alignment slack = 141 296 B at n = 8, 150 512 at 16, 205 808 at 64: one CTA
per SM. x has 1 to 64 rows (a larger batch is several calls, or a GEMM); R is a multiple of 64
(whole units), K of 8 (TMA row strides are 16-byte multiples; a K tail is zero-filled).

The plain variant (`Plain`, the ``plain`` constexpr; host runner `Linear`; behind
``tylo.ops.matmul`` at M <= 64, x @ W.T): out (M, N) = x W^T for one nn.Linear weight W (N, K),
bf16 or f16, out bf16 or f16 (float32 outputs stay on the GEMM). The gated variant's PTX is
unchanged (the switch is resolved while tracing). A unit is 128 rows of W as two independent
64-row halves: the two W tiles of a stage come through one tensor map at rows 128 u and
128 u + 64, into the two accumulators and the workspace's two halves per slot that the gated
variant uses for gate and up. So a K step still streams 16 KB of W per stage and per mbarrier
round trip (64-row units would halve it, doubling the consumer's waits and releases per byte),
the workspace keeps its size (grid x 4 x 64 x n f32: one slot per cut unit end, at most two per
CTA, whatever the unit's size) and the Stream-K fixups stay at most G - 1; the epilogue converts
each half and TMA-stores it (two (n, 64) staging tiles, one more than the gated variant's, so
one stage fewer fits at n = 64: 8). N tails: any N > 0 (the op's output rule makes it a
multiple of 8): the rows past N are zero-filled by the TMA loads and clipped by the stores; a
second half wholly past N loads the first half's rows again (no box lies wholly outside W) and
is not stored. K tails are zero-filled as in the gated variant.

No runtime checks in the consumer: the workspace windows are `inbounds` and the TMA store is
`checked=False` (their origins are in range by construction). A check is a `trap` under a
branch, and a trap anywhere on the consumer's divergent path made ptxas serialize every wgmma
of the kernel ("C7520 ... serialized due to program dependence on compiler-inserted WG.AR in
divergent path"); the SASS test (tests/kernels/test_projection.py) holds the ptxas log to its
absence.
"""

from __future__ import annotations

from dataclasses import dataclass

import tylo
from tylo import BFloat16, Float16, Int32, Layout, SharedTile, TMATile, WGMMA64

from .common import sm_count

BK = 64           # K per step: one 128-byte swizzle row of bf16
ROWS = 64         # weight rows per half of a unit: WGMMA's M
STAGES = 8
L2_PROMOTION = 0  # bytes the L2 fetches per TMA request of W (tylo.prepare_tma l2_promotion)
MAX_TOKENS = 64
THREADS = 160     # consumer warpgroup (warps 0-3) + producer warp (warp 4)
W_TILE = TMATile(BFloat16, (ROWS, BK), 1)   # a (64, 64) box of W_gate or W_up (R, K), K inner


def token_tile(M: int) -> int:
    """WGMMA's N for M tokens: 8, 16, 32 or 64 (M rounded up)."""
    return next(n for n in (8, 16, 32, 64) if M <= n)


#: The 16-bit dtypes of the plain variant (`Plain`), by name.
DTYPES = {"bfloat16": BFloat16, "float16": Float16}


@dataclass(frozen=True)
class Plain:
    """The plain epilogue (the ``plain`` constexpr of `projection`): out = x W^T, no gate. A
    unit is 128 rows of W (N, K) as two independent 64-row halves (two accumulators, the two
    tiles of a stage loaded through one tensor map), so a K step streams 16 KB of W as the gated
    variant's does and the workspace (two halves per slot) keeps its size. dtype: x's and W's
    ("bfloat16" or "float16"); out: out's ("bfloat16" or "float16")."""

    dtype: str = "bfloat16"
    out: str = "bfloat16"


def plans(n: int, plain: Plain | None = None):
    """(WGMMA plan, x tile, out tile) for n tokens: the plan WGMMA64(dtype, n, 64, partials)
    (4 partials at n <= 16, 2 at 32, 1 at 64), the x box (64 K x n tokens, read from x (M, K)
    through its (K, M) view x.T), the out box (n tokens x 64 rows, written to out (M, R)); bf16
    throughout, or `plain`'s dtypes."""
    partials = 4 if n <= 16 else (2 if n == 32 else 1)
    dtype, out = (BFloat16, BFloat16) if plain is None else (DTYPES[plain.dtype],
                                                             DTYPES[plain.out])
    return (WGMMA64(dtype, n, BK, partials), TMATile(dtype, (BK, n), 0),
            TMATile(out, (n, ROWS), 1))


def w_tile(plain: Plain | None = None) -> TMATile:
    """The (64, 64) box of a weight (R, K), K inner: `W_TILE`, or in `plain`'s dtype."""
    return W_TILE if plain is None else TMATile(DTYPES[plain.dtype], (ROWS, BK), 1)


def stage_bytes(n: int) -> int:
    """Bytes one K step brings into a stage: the gate and up tiles and the x tile."""
    return 2 * ROWS * BK * 2 + BK * n * 2


def max_stages(n: int, plain: Plain | None = None) -> int:
    """The most stages that fit a block's 232448 bytes of shared memory on sm_90 (docs/
    kernel_language.md 6): per stage its bytes and two 8-byte mbarriers; besides, the n x 64
    16-bit output tile (two in the `plain` variant), the dynamic window's 1008 bytes of
    alignment slack and the flag."""
    tiles = 1 if plain is None else 2
    return (232448 - tiles * n * ROWS * 2 - 1008 - 16) // (stage_bytes(n) + 16)


@tylo.kernel
def projection(gate_map, up_map, x_map, out_map, ws, counts, R, K, n: tylo.constexpr,
               stages: tylo.constexpr, plain: tylo.constexpr = None):
    """out = silu(x W_gate^T) * (x W_up^T) (module docstring). gate_map, up_map: W_TILE bound
    to W_gate and W_up (R, K); x_map, out_map: plans(n)'s x and out tiles bound to x.T (the
    (K, M) view of x (M, K): K contiguous) and out (M, R); ws: f32 (grid * 4 * 64, n)
    workspace (any values); counts: Int32 (R / 64,), zero before the launch and zero after it.
    Grid: any size up to (R / 64) * ceil(K / 64) CTAs; THREADS threads.

    plain (a `Plain`): out = x W^T instead, gate_map = up_map = w_tile(plain) bound to W (R, K)
    (R any positive extent: the rows past R are zero-filled, their outputs not stored), x_map
    and out_map plans(n, plain)'s; units of 128 rows, so counts: Int32 (ceil(R / 128),) and up
    to ceil(R / 128) * ceil(K / 64) CTAs."""
    plan, x_tile, out_tile = plans(n, plain)
    warp = tylo.warp_id()
    gate_st = tylo.shared_tiles(w_tile(plain), stages, dynamic=True)
    up_st = tylo.shared_tiles(w_tile(plain), stages, dynamic=True)
    x_st = tylo.shared_tiles(x_tile, stages, dynamic=True)
    if plain is None:
        staging = tylo.shared_tile(out_tile, dynamic=True)
    else:
        staging = tylo.shared_tiles(out_tile, 2, dynamic=True)
    flag = SharedTile(tylo.shared_alloc(Int32, 1), Layout((1,), (1,)))
    pipe = tylo.Pipeline(stages, 1)
    pipe.init()
    ksteps = (K + BK - 1) // BK
    if plain is None:
        total = (R // ROWS) * ksteps
    else:
        total = ((R + 2 * ROWS - 1) // (2 * ROWS)) * ksteps
    ctas = tylo.grid_dim()
    c = tylo.block_idx()
    s0 = c * total // ctas
    s1 = (c + 1) * total // ctas
    u_first = s0 // ksteps
    units_here = (s1 + ksteps - 1) // ksteps - u_first     # units this CTA touches
    st = pipe.start()
    if warp == 4:
        if tylo.elect_one():
            for j in range(units_here):
                u = walk(j, u_first, units_here)
                k0, k1 = unit_steps(u, s0, s1, ksteps)
                for k in range(k0, k1):
                    pipe.producer_acquire(st)
                    pipe.producer_commit(st, stage_bytes(n))
                    bar = pipe.full_barrier(st)
                    if plain is None:
                        tylo.tma_load(gate_st[st.index], gate_map, (u * ROWS, k * BK), bar)
                        tylo.tma_load(up_st[st.index], up_map, (u * ROWS, k * BK), bar)
                    else:                        # the unit's two halves of W
                        r0 = u * (2 * ROWS)
                        tylo.tma_load(gate_st[st.index], gate_map, (r0, k * BK), bar)
                        tylo.tma_load(up_st[st.index], up_map, (second_half(r0, R), k * BK),
                                      bar)
                    tylo.tma_load(x_st[st.index], x_map, (k * BK, 0), bar)
                    st = st.advance()
    else:
        t = tylo.warpgroup_thread_idx()
        g = tylo.zero_accumulator(plan)
        h = tylo.zero_accumulator(plan)
        for j in range(units_here):
            u = walk(j, u_first, units_here)
            k0, k1 = unit_steps(u, s0, s1, ksteps)
            for k in range(k0, k1):
                pipe.consumer_wait(st)
                b = tylo.wgmma_operand(plan, "B", x_st[st.index])
                more = k != k0                   # false: scale-d 0 starts the unit's sums
                pg = tylo.mma_async(plan, tylo.wgmma_operand(plan, "A", gate_st[st.index]), b, g,
                                    accumulate=more)
                ph = tylo.mma_async(plan, tylo.wgmma_operand(plan, "A", up_st[st.index]), b, h,
                                    accumulate=more)
                g = tylo.wait_mma(pg, 1)
                h = tylo.wait_mma(ph, 0)
                if t == 0:
                    pipe.consumer_release(st)
                st = st.advance()
            gate = tylo.finish_mma(g, plan)
            up = tylo.finish_mma(h, plan)
            finish = tylo.select(k1 - k0 == ksteps, 1, 0)
            if finish == 0:                 # a cut unit: publish, and count the steps
                slot = tylo.select(u == u_first, 0, 1)
                tylo.store(slot_window(ws, c, slot, 0, n), gate, t)
                tylo.store(slot_window(ws, c, slot, 1, n), up, t)
                tylo.barrier(1, 128)             # every slot store before the release
                if t == 0:
                    old = tylo.atomic_add(counts, u, k1 - k0, sem="acq_rel", scope="gpu")
                    flag[0] = tylo.select(old + (k1 - k0) == ksteps, 1, 0)
                tylo.barrier(1, 128)
                finish = flag[0]
                if finish == 1:                  # the last to arrive: sum the slots in CTA order
                    if t == 0:
                        counts[u] = 0
                    own = gate.ownership
                    gate = tylo.zeros(own)
                    up = tylo.zeros(own)
                    for c2 in range(owner(u * ksteps, total, ctas),
                                    owner((u + 1) * ksteps - 1, total, ctas) + 1):
                        slot2 = tylo.select(u == (c2 * total // ctas) // ksteps, 0, 1)
                        gate = gate + tylo.load_fragment(own, slot_window(ws, c2, slot2, 0, n), t)
                        up = up + tylo.load_fragment(own, slot_window(ws, c2, slot2, 1, n), t)
            if plain is None:
                if finish == 1:
                    act = gate / (1.0 + tylo.exp(-gate)) * up
                    if t == 0:
                        tylo.wait_tma_reads(0)       # the staging tile may be rewritten
                    tylo.barrier(1, 128)
                    tylo.store(staging, tylo.permutedims(act).to(BFloat16), t)
                    tylo.barrier(1, 128)
                    if t == 0:
                        tylo.tma_store(out_map, staging, (0, u * ROWS), checked=False)
                        tylo.commit_tma_stores()
            else:
                if finish == 1:
                    store_plain(out_map, staging, gate, up, u, R, t, plain)
        if t == 0:
            tylo.wait_tma_stores(0)


@tylo.func
def store_plain(out_map, staging, lo, hi, u, R, t, plain):
    """The plain epilogue of unit u: its two (64, n) f32 halves, transposed into the two (n, 64)
    staging tiles in `plain.out`'s dtype, TMA-stored at columns 128 u and 128 u + 64 of out (M, R);
    the second not at all when it starts at or past R (its rows were `second_half`'s stand-in)."""
    if t == 0:
        tylo.wait_tma_reads(0)                   # the staging tiles may be rewritten
    tylo.barrier(1, 128)
    out = DTYPES[plain.out]
    tylo.store(staging[0], tylo.permutedims(lo).to(out), t)
    tylo.store(staging[1], tylo.permutedims(hi).to(out), t)
    tylo.barrier(1, 128)
    if t == 0:
        r0 = u * (2 * ROWS)
        tylo.tma_store(out_map, staging[0], (0, r0), checked=False)
        if r0 + ROWS < R:
            tylo.tma_store(out_map, staging[1], (0, r0 + ROWS), checked=False)
        tylo.commit_tma_stores()


# Plain functions: the kernel calls them while tracing (on runtime values `//` and `%` are
# floor division as in Python), the tests call them on ints to check the schedule.
def unit_steps(u, s0, s1, ksteps):
    """The K steps [k0, k1) of unit u inside this CTA's step range [s0, s1)."""
    return tylo.maximum(s0 - u * ksteps, 0), tylo.minimum(s1 - u * ksteps, ksteps)


def second_half(r0, R):
    """The first W row of the second half of the plain unit at row r0: r0 + 64, or r0 again
    when that half lies wholly past R (a loaded box then stays in bounds: no TMA box of W is
    wholly outside it; the half's results are not stored)."""
    return tylo.select(r0 + ROWS < R, r0 + ROWS, r0)


def walk(j, u_first, count):
    """The j-th unit a CTA visits: its last unit first, then the others in order. The cut
    unit at the end of its range is the start of the next CTA's, so both pieces of every cut
    unit are computed early and its fixup overlaps the stream; every CTA ends with a unit it
    finishes alone (no counter, no workspace)."""
    return u_first + (j + count - 1) % count


def owner(s, total, ctas):
    """The CTA whose range [c T / G, (c+1) T / G) holds step s: the largest c with
    c T / G <= s, i.e. floor(((s + 1) G - 1) / T)."""
    return ((s + 1) * ctas - 1) // total


def slot_row(c, slot, half):
    """First workspace row of CTA c's slot (0: its first unit, 1: its last), half 0 gate, 1 up."""
    return ((c * 2 + slot) * 2 + half) * ROWS


def slot_window(ws, c, slot, half, n):
    """The (64, n) f32 window of `slot_row` in the workspace (in range by construction: rows
    < grid * 4 * 64, so no runtime check: a trap here would serialize the wgmmas)."""
    return tylo.window(ws, (slot_row(c, slot, half), 0), (ROWS, n), inbounds=True)


def schedule(units: int, ksteps: int, ctas: int):
    """The kernel's Stream-K split on the host, for the docstring's arithmetic and the tests:
    (steps per CTA, units finished inside one CTA, units cut by a range boundary)."""
    total = units * ksteps
    bounds = [c * total // ctas for c in range(ctas + 1)]
    steps = [b - a for a, b in zip(bounds, bounds[1:])]
    cut = sum(1 for u in range(units)
              if owner(u * ksteps, total, ctas) != owner((u + 1) * ksteps - 1, total, ctas))
    return steps, units - cut, cut


class Projection:
    """out = silu(x W_gate^T) * (x W_up^T) for one set of arrays: x (M, K) bf16 with M <= 64,
    W_gate and W_up (R, K) bf16, out (M, R) bf16 (K-contiguous rows, row strides multiples of
    16 bytes; torch CUDA tensors, or numpy arrays with
    ``emulate=True``, which runs on the CPU emulator). Makes the four TMA bindings, the f32
    workspace and the zeroed counters once; keep the object alive while the kernel may run (it
    owns the descriptors). `ctas`: the grid (default one CTA per SM, on the emulator one CTA;
    clipped to the step count); `stages`: clipped to `max_stages`; `l2_promotion`: the
    weights' tensor-map L2 promotion in bytes (None: `L2_PROMOTION`). Raises tylo.ArgumentError
    naming x, W_gate, W_up or out for a shape that does not match, a TMAError for strides TMA cannot take."""

    def __init__(self, x, W_gate, W_up, out, ctas: int | None = None, stages: int = STAGES,
                 emulate: bool = False, l2_promotion: int | None = None):
        if ctas is None:
            ctas = 1 if emulate else sm_count()
        M = x.shape[0]
        if not 1 <= M <= MAX_TOKENS:
            raise tylo.ArgumentError("x", f"has {M} rows; this kernel takes 1 .. {MAX_TOKENS} "
                                          "tokens (a larger batch: call it per 64 rows)")
        M, R, K = shapes(x, W_gate, W_up, out, ROWS)
        self.M, self.R, self.K, self.n = M, R, K, token_tile(M)
        self.stages = min(stages, max_stages(self.n))
        _, x_tile, out_tile = plans(self.n)
        promotion = L2_PROMOTION if l2_promotion is None else l2_promotion
        self.maps = (tylo.prepare_tma(W_TILE, W_gate, l2_promotion=promotion),
                     tylo.prepare_tma(W_TILE, W_up, l2_promotion=promotion),
                     tylo.prepare_tma(x_tile, x.T),
                     tylo.prepare_tma(out_tile, out))
        units, ksteps = R // ROWS, -(-K // BK)
        self.ctas = min(ctas, units * ksteps)
        self.ws, self.counts = _buffers(x, (self.ctas * 4 * ROWS, self.n), units)
        runner = projection.emulate if emulate else projection
        self.launch = runner[self.ctas, THREADS]

    def __call__(self):
        self.launch(*self.maps, self.ws, self.counts, self.R, self.K, self.n, self.stages)


class Linear:
    """out = x W^T (the `Plain` variant) for one set of arrays: x (M, K) with M <= 64 and W
    (N, K), both bf16 or both f16, out (M, N) bf16 or f16 (K-contiguous rows of x and W, out
    row-major, row strides multiples of 16 bytes; N any positive extent, K too: tails are
    zero-filled and clipped); torch CUDA tensors, or torch CPU / numpy arrays with
    ``emulate=True``. As `Projection`: the bindings (W's twice, as gate_map and up_map), the f32
    workspace (grid * 256, n) and the zeroed Int32 counters (ceil(N / 128),); `ctas` is clipped
    to the step count. Raises tylo.ArgumentError naming x, W or out (shape, dtype), a TMAError
    for strides TMA cannot take."""

    def __init__(self, x, W, out, ctas: int | None = None, stages: int = STAGES,
                 emulate: bool = False):
        if ctas is None:
            ctas = 1 if emulate else sm_count()
        (M, K), (N, K2) = tuple(x.shape), tuple(W.shape)
        if not 1 <= M <= MAX_TOKENS:
            raise tylo.ArgumentError("x", f"has {M} rows; this kernel takes 1 .. {MAX_TOKENS}")
        if K2 != K or not N:
            raise tylo.ArgumentError("W", f"has shape {(N, K2)}; it must be (N, K) with K = {K} "
                                          "(x's) and N > 0")
        if tuple(out.shape) != (M, N):
            raise tylo.ArgumentError("out", f"has shape {tuple(out.shape)}, not (M, N) = {(M, N)}")
        self.plain = Plain(_dtype_name(x, "x"), _dtype_name(out, "out"))
        if _dtype_name(W, "W") != self.plain.dtype:
            raise tylo.ArgumentError("W", f"is {W.dtype}, x is {x.dtype}: they take one dtype")
        self.M, self.R, self.K, self.n = M, N, K, token_tile(M)
        self.stages = min(stages, max_stages(self.n, self.plain))
        _, x_tile, out_tile = plans(self.n, self.plain)
        w_map = tylo.prepare_tma(w_tile(self.plain), W, l2_promotion=L2_PROMOTION)
        self.maps = (w_map, w_map, tylo.prepare_tma(x_tile, x.T), tylo.prepare_tma(out_tile, out))
        units, ksteps = -(-N // (2 * ROWS)), -(-K // BK)
        self.ctas = min(ctas, units * ksteps)
        self.ws, self.counts = _buffers(x, (self.ctas * 4 * ROWS, self.n), units)
        runner = projection.emulate if emulate else projection
        self.launch = runner[self.ctas, THREADS]

    @property
    def args(self) -> tuple:
        """The kernel's arguments after the grid (for ``wrap(projection)[ctas, THREADS]``)."""
        return (*self.maps, self.ws, self.counts, self.R, self.K, self.n, self.stages, self.plain)

    def __call__(self):
        self.launch(*self.args)


def _dtype_name(array, name: str) -> str:
    """"bfloat16" or "float16" for a torch or numpy (ml_dtypes) array; ArgumentError else."""
    text = str(array.dtype).removeprefix("torch.")
    if text not in DTYPES:
        raise tylo.ArgumentError(name, f"is {array.dtype}; the plain projection takes bfloat16 "
                                       "or float16")
    return text


def shapes(x, W_gate, W_up, out, multiple: int) -> tuple[int, int, int]:
    """(M, R, K) of x (M, K), W_gate and W_up (R, K), out (M, R), R a positive multiple of
    `multiple`; tylo.ArgumentError naming the array whose shape does not match (also
    gate_up.py's runner)."""
    (M, K), (R, K2) = tuple(x.shape), tuple(W_gate.shape)
    if K2 != K or R % multiple or not R:
        raise tylo.ArgumentError("W_gate", f"has shape {tuple(W_gate.shape)}; it must be (R, K) "
                                           f"with K = {K} (x's) and R a positive multiple of "
                                           f"{multiple}")
    if tuple(W_up.shape) != (R, K):
        raise tylo.ArgumentError("W_up", f"has shape {tuple(W_up.shape)}, not W_gate's {(R, K)}")
    if tuple(out.shape) != (M, R):
        raise tylo.ArgumentError("out", f"has shape {tuple(out.shape)}, not (M, R) = {(M, R)}")
    return M, R, K


#: (device, stream, workspace shape, units) -> (workspace, counters) of eager CUDA launches: the
#: kernel leaves the counters at zero and the workspace is scratch, so launches in one stream's
#: order share them (another stream gets its own; a CUDA graph capture allocates its own).
_SCRATCH: dict = {}
_SCRATCH_ENTRIES = 64


def _buffers(like, ws_shape, units: int):
    """The f32 workspace and the zeroed Int32 counters, on `like`'s device (torch) or host: on
    a CUDA device, reused by the launches of torch's current stream (`_SCRATCH`), allocated
    anew while a CUDA graph is being captured."""
    if type(like).__module__.startswith("torch"):
        import torch

        if like.is_cuda and not torch.cuda.is_current_stream_capturing():
            index = like.get_device()
            key = (index, _current_stream(torch, index), ws_shape, units)
            hit = _SCRATCH.get(key)
            if hit is None:
                if len(_SCRATCH) >= _SCRATCH_ENTRIES:
                    _SCRATCH.clear()
                hit = _SCRATCH[key] = (
                    torch.empty(ws_shape, device=like.device, dtype=torch.float32),
                    torch.zeros(units, device=like.device, dtype=torch.int32))
            return hit
        return (torch.empty(ws_shape, device=like.device, dtype=torch.float32),
                torch.zeros(units, device=like.device, dtype=torch.int32))
    import numpy as np

    return np.zeros(ws_shape, np.float32), np.zeros(units, np.int32)


def _current_stream(torch, index: int) -> int:
    """The handle of torch's current stream on CUDA device `index`."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw(index)
    return torch.cuda.current_stream(index).cuda_stream


def reference(x, W_gate, W_up):
    """silu(x W_gate^T) * (x W_up^T) in float32 (torch) or float64 (numpy)."""
    if type(x).__module__.startswith("torch"):
        g, u = x.float() @ W_gate.float().T, x.float() @ W_up.float().T
        return g / (1 + (-g).exp()) * u
    import numpy as np

    x64 = x.astype(np.float64)
    g, u = x64 @ W_gate.astype(np.float64).T, x64 @ W_up.astype(np.float64).T
    return g / (1 + np.exp(-g)) * u


def host_arrays(M: int, R: int, K: int, rng=None):
    """x (M, K), W_gate and W_up (R, K) (random bf16 when `rng` is given, else zeros) and a NaN
    out (M, R), as numpy arrays."""
    import ml_dtypes
    import numpy as np

    bf16 = ml_dtypes.bfloat16
    if rng is None:
        x, Wg, Wu = (np.zeros(shape, bf16) for shape in ((M, K), (R, K), (R, K)))
    else:
        x = rng.standard_normal((M, K)).astype(bf16)
        Wg, Wu = ((rng.standard_normal((R, K)) * K ** -0.5).astype(bf16) for _ in range(2))
    return x, Wg, Wu, np.full((M, R), np.nan, bf16)


def compile_for_sm90a(n: int = 16, plain: bool = False):
    """The kernel for token tile n (the gated variant, or with `plain` the bf16 `Plain` one),
    compiled for sm_90a from host bindings (no GPU)."""
    x, Wg, Wu, out = host_arrays(n, 128, 256)
    proj = (Linear(x, Wg, out, ctas=3, emulate=True) if plain
            else Projection(x, Wg, Wu, out, ctas=3, emulate=True))
    args = (*proj.maps, proj.ws, proj.counts, proj.R, proj.K, proj.n, proj.stages)
    if plain:
        args += (proj.plain,)
    return projection.compile(*args, block=THREADS, arch="sm_90a")
