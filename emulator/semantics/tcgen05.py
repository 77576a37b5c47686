"""Tensor memory and tcgen05 MMA: the ops of `tylo.dialects.ptx.tcgen05` (PTX ISA 9.7.16), on
the per-CTA TMEM of `tylo.emulator.tmem`.

* ``tcgen05.alloc`` / ``dealloc`` / ``relinquish_alloc_permit``, ``tcgen05.ld`` / ``st`` /
  ``wait`` are warp-collective (their `Collective` trait): every lane gives the same address. alloc
  writes the column (lane 0) to the shared word through ``machine.store`` (so the CTA's race
  record orders its readers by the barrier after it) from lane 0 of the warp.
* ``tcgen05.ld.32x32b.xN``: warp w's lane l reads TMEM lane ``lane(taddr) + l``; the lane field
  must be ``32 (w % 4)`` (9.7.16.8.1: a warp touches its band only), columns allocated, and no
  pending MMA may write them. ``.16x64b`` / ``.16x128b`` / ``.16x256b``: the 16 lanes from the
  lane field (``32 (w % 4)`` or ``32 (w % 4) + 16``), thread t's register r at the cell
  `compiler.hardware.tmem.transfer_cells` gives (the shape's matrix fragment, PTX 9.7.16.2.3.1). The destination registers are locked (`LOCK_LOAD`: neither read
  nor written) until ``tcgen05.wait::ld`` of the thread, which returns them.
* ``tcgen05.st``: writes the cells at issue (the same checks); ``wait::st`` has no further
  effect here, since nothing the emulator runs can observe the cells before it.
* ``tcgen05.mma`` (one thread, each thread of the issue group issuing its own): reads A and B AT
  ISSUE, from shared memory through the descriptors (decoded with the one bit table,
  `encodings.tcgen05_smem_descriptor`, read by the canonical layouts of
  `wgmma_operands.canonical_offsets`; ordered after the stores and TMA loads that filled them
  exactly as a WGMMA's reads, and recorded as pending reads until completion) or A from TMEM,
  then waits in the thread's queue. Its D (M = 128 or 64; row r in TMEM lane
  `accumulator_lanes`: r, or 32 (r // 16) + r % 16 for M = 64, PTX 9.7.16.10.5 Layout F) is
  written when it COMPLETES: at the thread's next
  ``tcgen05.commit``, which completes the thread's queue in issue order (each MMA adding to what
  the previous one left) and then arrives once on the mbarrier (9.7.16.10.10). Numerics: the
  fused dot-add model of the wgmma emulation (`wgmma.multiply_add`, fitted on the H200's wgmma
  and mma.sync, `wgmma.K_STEP` products a fused step; not measured on a Blackwell tensor core)
  for ``.kind::f16``, ``.kind::tf32`` (the low 13 bits of each f32
  ignored) and ``.kind::f8f6f4`` with E4M3/E5M2 (aligned as f16, as mma.sync's fp8), into F32;
  ``.kind::i8`` exactly (wrapping to s32). F16 accumulators (``.kind::f16`` with F16 inputs,
  ``.kind::f8f6f4``): each TMEM word holds one element in its low 16 bits, the high 16 bits
  written as 0 (9.7.16.10.4.1 "Packing format for matrix D in Tensor Memory": sub-word D
  elements are not packed). Their rounding is a MODEL, fitted to no GPU (no Blackwell GPU was
  at hand): one instruction's products and the f16 D it reads go through the same fused
  dot-add into f32, and that result is rounded once to f16 (round to nearest even; NaN as
  0x7FFF), i.e. D is rounded to f16 per K step of the instruction (16 products of 16-bit
  inputs, 32 of 8-bit ones), never inside it. The 6- and 4-bit types, negation, saturation and
  sparsity and A from TMEM at M = 64 are refused.
* The tcgen05 fences (``ptx.fence``) have no data effect (the emulator issues in program order).
"""

from __future__ import annotations

from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ...compiler.encodings.tcgen05_instruction import decode_instruction_descriptor
from ...compiler.encodings.tcgen05_smem_descriptor import decode_tcgen05_smem_descriptor
from ...compiler.plans.tcgen05_mma import accumulator_lanes
from ...compiler.hardware.tmem import transfer_cells
from ...compiler.encodings.swizzle_modes import swizzle_mode
from ...compiler.support.lazy_modules import np
from ...dialects.ptx import tcgen05 as X
from ...dialects.ptx.tcgen05 import shape_of
from ..cluster import cta_offsets
from ..tmem import PendingMma, split, tmem_of
from .matrix import _NAN32, _decode, f16_result
from .wgmma import _read_shared, multiply_add
from .wgmma_operands import canonical_offsets, swizzle_addresses

LOCK_LOAD = 3
"""`Machine.pending_registers` level of a tcgen05.ld destination: reads and writes refused."""

OPERAND_TYPES = {"f16": {0: "f16", 1: "bf16"}, "tf32": {2: "tf32"},
                 "f8f6f4": {0: "e4m3", 1: "e5m2"}, "i8": {0: "u8", 1: "s8"}}
"""Per kind, the A/B type codes of the instruction descriptor (PTX Table 42) the emulator runs,
as the PTX types `matrix._decode` reads (f8f6f4's 6- and 4-bit codes are not run)."""
ELEMENT_BYTES = {"f16": 2, "tf32": 4, "f8f6f4": 1, "i8": 1}


def _warps(interpreter):
    """(threads (warps, 32), warp index in its CTA (warps,))."""
    t = interpreter.threads.reshape(-1, 32)
    return t, (t[:, 0] % interpreter.machine.threads_per_cta) // 32


def _uniform(interpreter, op, value, what: str):
    v = np.asarray(value).reshape(-1, 32)
    bad = (v != v[:, :1]).any(axis=1)
    if bad.any():
        threads = interpreter.threads.reshape(-1, 32)[int(np.nonzero(bad)[0][0])]
        interpreter.machine.error(op, f"{op.OPCODE}: {what} differs between the lanes of warp "
                                      f"{int(threads[0]) // 32}; every lane must pass the same "
                                      "value", threads)
    return v[:, 0]


def _band(interpreter, op, address: int, warp: int, shape, count: int, threads):
    """(tmem, lane, column) of a warp's access of `shape` (`TransferShape`) over `count`
    columns, checked: the address's lane is the band's first (.32x32b) or the first of one of
    its 16-lane halves (the 16-lane shapes), and the columns are allocated."""
    machine = interpreter.machine
    tmem = tmem_of(machine, int(threads[0]))
    lane, column = split(address)
    first = 32 * (warp % 4)
    if not (first <= lane <= first + 32 - shape.lanes and lane % shape.lanes == 0):
        machine.error(op, f"{op.OPCODE}.{shape.name}: warp {warp} accesses TMEM lanes {lane}.."
                          f"{lane + shape.lanes - 1}; a warp may touch only lanes {first}.."
                          f"{first + 31} (warp % 4 = {warp % 4}, PTX ISA 9.7.16.8.1)"
                          + ("" if shape.lanes == 32 else f", from lane {first} or {first + 16}"),
                      threads, kind="access")
    bad = tmem.unallocated(column, count)
    if bad is not None:
        machine.error(op, f"{op.OPCODE}: column {bad} of TMEM address {address:#010x} (+{count} "
                          f"columns) is not allocated; {tmem.describe()}", threads, kind="access")
    return tmem, lane, column


def _cells(op):
    """(shape, columns touched, lanes (32, num), columns (32, num)) of a ld/st's registers."""
    shape, num = shape_of(op), len(op.values)
    lanes, columns = transfer_cells(shape, num)
    return shape, num // shape.registers * shape.columns, lanes, columns


def _lock(machine, threads, names, level: int) -> None:
    n = getattr(machine, "unit_threads", machine.threads_per_cta)
    for name in names:
        locks = machine.pending_registers.setdefault(name, np.zeros(n, np.int8))
        locks[threads] = np.maximum(locks[threads], level)


@register_impls
class Tcgen05Semantics(InterpreterFunctions):
    """Semantics of the tcgen05 ops (module text)."""

    @impl(X.Tcgen05AllocOp)
    def run_alloc(self, interpreter, op, args):
        machine, ncols = interpreter.machine, op.ncols.value.data
        dst = _uniform(interpreter, op, args[0], "the shared destination")
        for w, threads in enumerate(interpreter.threads.reshape(-1, 32)):
            tmem = tmem_of(machine, int(threads[0]))
            if tmem.relinquished:
                machine.error(op, "tcgen05.alloc after tcgen05.relinquish_alloc_permit: this CTA "
                                  "gave up its permit to allocate", threads, kind="tmem")
            column = tmem.allocate(ncols, op)
            if column is None:
                machine.error(op, f"tcgen05.alloc of {ncols} columns would wait forever: only "
                                  f"{int((tmem.owner < 0).sum())} of 512 are free ("
                                  f"{tmem.describe()})", threads, kind="tmem")
            word = np.array([[column]], np.uint32).view(np.uint8)
            machine.store(op, "shared", np.array([int(dst[w])], np.uint64), word,
                          lanes=[w * 32])
        return ()

    @impl(X.Tcgen05DeallocOp)
    def run_dealloc(self, interpreter, op, args):
        machine = interpreter.machine
        taddr = _uniform(interpreter, op, args[0], "the TMEM address")
        for w, threads in enumerate(interpreter.threads.reshape(-1, 32)):
            tmem = tmem_of(machine, int(threads[0]))
            lane, column = split(int(taddr[w]))
            why = f"lane field {lane} is not 0" if lane else tmem.free(column, op.ncols.value.data)
            if why:
                machine.error(op, f"tcgen05.dealloc {int(taddr[w]):#010x}: {why}", threads,
                              kind="tmem")
            if tmem.pending_writer(np.arange(128), column, op.ncols.value.data) is not None:
                machine.error(op, "tcgen05.dealloc of columns a pending tcgen05.mma still writes "
                                  "(commit and wait on its mbarrier first)", threads, kind="race")
        return ()

    @impl(X.Tcgen05RelinquishOp)
    def run_relinquish(self, interpreter, op, args):
        for threads in interpreter.threads.reshape(-1, 32):
            tmem_of(interpreter.machine, int(threads[0])).relinquished = True
        return ()

    @impl(X.Tcgen05LdOp)
    def run_ld(self, interpreter, op, args):
        machine, num = interpreter.machine, len(op.values)
        shape, count, lanes, columns = _cells(op)
        taddr = _uniform(interpreter, op, args[0], "the TMEM address")
        groups, warps = _warps(interpreter)
        out = np.zeros((groups.shape[0], 32, num), np.uint32)
        for w, threads in enumerate(groups):
            tmem, lane, column = _band(interpreter, op, int(taddr[w]), int(warps[w]), shape,
                                       count, threads)
            writer = tmem.pending_writer(np.arange(lane, lane + shape.lanes), column, count)
            if writer is not None:
                machine.error(op, f"TMEM read while a tcgen05.mma writing it may be pending: "
                                  f"columns {column}..{column + count - 1} of lanes {lane}.."
                                  f"{lane + shape.lanes - 1} are its D, and no tcgen05.commit of "
                                  "its thread has completed it (wait on the commit's mbarrier, "
                                  "then tcgen05.fence::after_thread_sync)", threads, kind="race")
            _check_landed(machine, op, tmem, lane + lanes, column + columns, threads, "read")
            out[w] = tmem.cells[lane + lanes, column + columns]
        _lock(machine, interpreter.threads, [r.type.register_name for r in op.values], LOCK_LOAD)
        return tuple(out[..., r].reshape(-1) for r in range(num))

    @impl(X.Tcgen05StOp)
    def run_st(self, interpreter, op, args):
        num = len(op.values)
        shape, count, lanes, columns = _cells(op)
        taddr = _uniform(interpreter, op, args[0], "the TMEM address")
        values = np.stack([np.asarray(v, np.uint32) for v in args[1:]], -1).reshape(-1, 32, num)
        groups, warps = _warps(interpreter)
        for w, threads in enumerate(groups):
            tmem, lane, column = _band(interpreter, op, int(taddr[w]), int(warps[w]), shape,
                                       count, threads)
            if tmem.pending_writer(np.arange(lane, lane + shape.lanes), column, count) is not None:
                interpreter.machine.error(op, "tcgen05.st to TMEM a pending tcgen05.mma writes",
                                          threads, kind="race")
            _check_landed(interpreter.machine, op, tmem, lane + lanes, column + columns, threads,
                          "write")
            tmem.cells[lane + lanes, column + columns] = values[w]
        return ()

    @impl(X.Tcgen05WaitOp)
    def run_wait(self, interpreter, op, args):
        machine = interpreter.machine
        if op.kind.data == "ld":
            for name, locks in list(machine.pending_registers.items()):
                locks[interpreter.threads] = np.where(
                    locks[interpreter.threads] == LOCK_LOAD, 0, locks[interpreter.threads])
                if not locks.any():
                    del machine.pending_registers[name]
        return tuple(args)

    @impl(X.Tcgen05MmaOp)
    def run_mma(self, interpreter, op, args):
        for lane, thread in enumerate(interpreter.threads):
            _issue(interpreter, op, [int(a[lane]) for a in args], int(thread))
        return ()

    @impl(X.Tcgen05CommitOp)
    def run_commit(self, interpreter, op, args):
        machine = interpreter.machine
        bars = cta_offsets(machine, op, args[0], interpreter.threads, 8)
        for lane, thread in enumerate(interpreter.threads):
            tmem = tmem_of(machine, int(thread))
            landed = None  # (recorded before the arrival: the phase it completes)
            if int(bars[lane]) in machine.mbarriers.bars:
                landed = machine.mbarriers.completion(int(bars[lane]), "a tcgen05.mma (its D)")
                tmem.committed(int(thread), landed)
            for p in tmem.pending.pop(int(thread), []):
                view = tmem.cells[p.lanes, p.column:p.column + p.n]
                tmem.cells[p.lanes, p.column:p.column + p.n] = p.compute(view)
                tmem.land(int(thread), p, landed)
                machine.async_reads.release([p.key])
            machine.mbarriers.arrive(op, bars[lane:lane + 1], interpreter.threads[lane:lane + 1])
        return ()


def _check_landed(machine, op, tmem, lanes, columns, threads, verb: str) -> None:
    """Refuse `threads` (a warp; cells ``lanes[t, r], columns[t, r]`` for thread t) touching a
    tcgen05.mma's D that commits completed before they observed the arrival of one of them."""
    threads = np.asarray(threads, np.int64)
    for (_, column, n, _), (rows, completions) in tmem.landed.items():
        touch = (np.isin(lanes, rows) & (columns >= column) & (columns < column + n)).any(axis=1)
        if not touch.any() or not completions:
            continue
        seen = np.zeros(threads.size, bool)
        for c in completions:
            seen |= machine.mbarriers.writes[c].seen[threads]
        blind = threads[touch & ~seen]
        if blind.size:
            w = machine.mbarriers.writes[completions[-1]]
            machine.error(op, f"data race on TMEM: threads {blind[:8].tolist()}"
                              f"{' ...' if blind.size > 8 else ''} {verb} the D of a "
                              f"tcgen05.mma that a tcgen05.commit completed (last: phase "
                              f"{w.phase} of the mbarrier at {machine.mbarriers.name(w.barrier)})"
                              " without observing such a commit's arrival (wait on its "
                              "mbarrier, or a bar.sync after a thread that waited; then "
                              "tcgen05.fence::after_thread_sync)", blind, kind="race")


def _issue(interpreter, op, args, thread: int) -> None:
    """Issue one tcgen05.mma for `thread` (module text)."""
    machine = interpreter.machine
    threads = np.array([thread])
    d, a, b, idesc, enable = args
    kind = op.kind.data
    try:
        f = decode_instruction_descriptor(idesc)
    except Exception as e:  # GeometryError: a reserved bit
        machine.error(op, f"tcgen05.mma instruction descriptor {idesc:#010x}: {e}", threads)
    m, n = f["m_dim"] << 4, f["n_dim"] << 3
    types = OPERAND_TYPES[kind]
    f16_d = f["d_type"] == 0 and kind != "i8"  # F16 D: f16 inputs (.kind::f16) or f8f6f4
    modelled = (f["a_type"] in types and f["b_type"] in types and not f["saturate"]
                and (f["d_type"] == (2 if kind == "i8" else 1)
                     or f16_d and (kind == "f8f6f4" or f["a_type"] == f["b_type"] == 0)))
    a_tmem = bool(op.a_tmem.value.data)
    if (not modelled or f["sparse"] or f["negate_a"] or f["negate_b"] or m not in (64, 128)
            or (a_tmem and m != 128)):
        machine.error(op, f"tcgen05.mma .kind::{kind} (instruction descriptor {idesc:#010x}, "
                          f"M = {m}): the emulator runs dense MMAs of M = 128 or 64 (A from TMEM"
                          " at M = 128 only) into F32 (S32 for .kind::i8, F16 for F16 or 8-bit "
                          "inputs) without negation or saturation, of the types "
                          f"{sorted(t for ts in OPERAND_TYPES.values() for t in ts.values())}",
                      threads, kind="fault")
    e = ELEMENT_BYTES[kind]
    k = 32 // e
    tmem = tmem_of(machine, thread)
    d_lane, d_col = split(d)
    bad = tmem.unallocated(d_col, n)
    if d_lane or bad is not None:
        machine.error(op, f"tcgen05.mma D at {d:#010x} (lane {d_lane}, {n} columns): D starts at "
                          f"lane 0 in allocated columns; {tmem.describe()}", threads, kind="access")
    key = object()
    raw = {}
    for role, word, extent, transpose in (("B", b, n, f["transpose_b"]),
                                          ("A", a, m, f["transpose_a"])):
        if role == "A" and a_tmem:
            a_lane, a_col = split(word)
            words = k * e // 4
            if a_lane or tmem.unallocated(a_col, words) is not None:
                machine.error(op, f"tcgen05.mma A at TMEM {word:#010x}: lane 0, {words} allocated "
                                  "columns", threads, kind="access")
            cells = np.ascontiguousarray(tmem.cells[:m, a_col:a_col + words])
            raw["A"] = cells.view(f"uint{8 * e}").reshape(m, k)
            continue
        try:
            fields = decode_tcgen05_smem_descriptor(word)
        except Exception as err:  # GeometryError: fixed bits, reserved bits, swizzle code
            machine.error(op, f"tcgen05.mma {role} descriptor {word:#x}: {err}", threads)
        if fields.base_offset and fields.swizzle_bytes > 16:
            machine.error(op, f"tcgen05.mma {role} descriptor {word:#x}: base offset "
                              f"{fields.base_offset} is not modelled (Tylo's tiles start on "
                              "their swizzle period)", threads, kind="fault")
        offsets = canonical_offsets("MN" if transpose else "K", fields.swizzle_bytes,
                                    fields.lbo_bytes, fields.sbo_bytes, extent, e, k)
        addresses = swizzle_addresses(fields.start_address + offsets,
                                      swizzle_mode(fields.swizzle_bytes).bits)
        raw[role] = _read_shared(interpreter, op, addresses, 0, threads, e, "a tcgen05.mma")
        flat = cta_offsets(machine, op, addresses.reshape(-1),
                           np.full(addresses.size, thread), e)
        machine.async_reads.add(key, flat, e, op, threads, "a tcgen05.mma")
    in_a, in_b = types[f["a_type"]], types[f["b_type"]]
    Av = _decode(raw["A"].astype(np.uint32), in_a)[None]    # (1, m, k)
    Bv = _decode(raw["B"].T.astype(np.uint32), in_b)[None]  # (1, k, n)
    if f16_d:
        def compute(current, Av=Av, Bv=Bv, add=bool(enable)):
            half = (current & 0xFFFF).astype(np.uint16).view(np.float16)
            C = half.astype(np.float32) if add else np.zeros(current.shape, np.float32)
            return f16_result(multiply_add(Av, Bv, C[None], in_a)[0]).astype(np.uint32)
    elif kind != "i8":
        def compute(current, Av=Av, Bv=Bv, add=bool(enable)):
            C = current.view(np.float32) if add else np.zeros(current.shape, np.float32)
            D = multiply_add(Av, Bv, C[None], in_a)[0]
            return np.where(np.isnan(D), np.uint32(_NAN32), D.view(np.uint32))
    else:
        def compute(current, Ai=Av[0], Bi=Bv[0], add=bool(enable)):
            C = current.view(np.int32).astype(np.int64) if add else 0
            return ((Ai @ Bi + C) & 0xFFFFFFFF).astype(np.uint32)
    tmem.pending.setdefault(thread, []).append(PendingMma(d_col, accumulator_lanes(m), n,
                                                          compute, key))
