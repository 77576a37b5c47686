"""Semantics of cp.async and its groups (`tylo.dialects.ptx.cp_async`; PTX ISA 9.7.9.25.3).

Each lane issues its own copy, in thread order: both addresses must be 16-byte aligned and the
16 destination bytes inside the CTA's shared memory (an `EmulationError` of kind "access"
otherwise, as the hardware faults); the first ``src_size`` bytes (16 without the operand; 0..16)
are read from global memory at once, bounds checked byte by byte (a zero-size copy reads
nothing), the rest are zeros. The bytes stay pending (`emulator.async_copies`) until a
``cp.async.wait_group`` of the thread completes the copy's group.
"""

from __future__ import annotations

from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ...compiler.support.lazy_modules import np
from ...dialects.ptx import cp_async as C
from ..cluster import cta_offsets

BYTES = C.CP_ASYNC_BYTES


@register_impls
class CpAsyncSemantics(InterpreterFunctions):
    """cp.async.cg.shared.global, cp.async.commit_group, cp.async.wait_group."""

    @impl(C.CpAsyncOp)
    def run_copy(self, interpreter, op, args):
        machine = interpreter.machine
        dst = np.asarray(args[0]).astype(np.int64)
        src = np.asarray(args[1]).astype(np.uint64)
        sizes = (np.asarray(args[2]).astype(np.int64) if len(args) > 2
                 else np.full(dst.size, BYTES, np.int64))
        for lane, t in enumerate(interpreter.threads):
            t, d, s, n = int(t), int(dst[lane]), int(src[lane]), int(sizes[lane])
            if not 0 <= n <= BYTES:
                machine.error(op, f"cp.async src_size {n} must be 0 .. {BYTES}", [t])
            if d % BYTES or s % BYTES:
                which = "destination" if d % BYTES else "source"
                machine.error(op, f"misaligned cp.async {which}: shared {d:#x} / global {s:#x} "
                                  f"must both be multiples of {BYTES} bytes", [t], kind="access")
            if d < 0 or d + BYTES > machine.shared_size:
                machine.error(op, f"cp.async destination: shared offset {d} (+{BYTES} bytes) is "
                                  f"outside the {machine.shared_size} bytes declared", [t],
                              kind="access")
            d = int(cta_offsets(machine, op, [d], [t], BYTES)[0])  # (its CTA's window)
            data = np.zeros(BYTES, np.uint8)
            if n:
                addresses = np.uint64(s) + np.arange(n, dtype=np.uint64)
                data[:n] = machine.load(op, "global", addresses, 1, lanes=[lane] * n)[:, 0]
            machine.copies.issue(op, t, d, data)
        return ()

    @impl(C.CpAsyncCommitOp)
    def run_commit(self, interpreter, op, args):
        for t in interpreter.threads:
            interpreter.machine.copies.commit(int(t))
        return ()

    @impl(C.CpAsyncWaitOp)
    def run_wait(self, interpreter, op, args):
        n = op.pending.value.data
        for lane, t in enumerate(interpreter.threads):
            interpreter.machine.copies.wait(op, lane, int(t), n)
        return ()


__all__ = ["CpAsyncSemantics"]
