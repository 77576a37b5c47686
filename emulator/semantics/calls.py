"""Calls: ``ptx.call_uni`` of CUDA's ``vprintf(const char *format, void *arguments)``, the device
printf that `tylo.print` lowers to (`tylo.passes.select.printf`).

What the GPU does, and so the emulator (CUDA C++ Programming Guide, "Formatted Output"): each
thread that executes the call emits its format with the substitutions made from its argument
buffer; the driver formats it on the host with the host's C library. The emulator does the same,
through the C library's ``snprintf`` (ctypes), and writes each thread's text to
``machine.stdout`` in thread order (the GPU's order between threads is unspecified).

* The format is read at its generic address (``machine.read_cstring``) up to its NUL; its
  conversions are parsed by `tylo.compiler.hardware.printf.conversions`, the parser that built them.
* The arguments are C's promoted varargs laid out as a C struct at the thread's generic
  argument address (`tylo.compiler.hardware.printf.buffer_layout`): int (4 bytes), long long and double
  (8), little-endian, each read with ``machine.load(op, "generic", addresses, 4 or 8)``.
  A format without conversions reads nothing (the lowering then passes a null pointer).
* vprintf returns an int, the number of arguments parsed (CUDA's printf); the lowering's call
  scope puts it in a ``.param`` it never reads, so ``ptx.call_uni`` has no result and the
  emulated call returns none.

Not modelled: the printf FIFO's size (1 MiB by default, ``cudaLimitPrintfFifoSize``), which on
the GPU drops old output of a launch that prints more.
A format Tylo cannot have written (a conversion `conversions` refuses, more than
`MAX_ARGUMENTS` of them, a null argument pointer under conversions) and a call of another
function are errors through ``machine.error``.
"""

from __future__ import annotations

import functools

from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ...compiler.support.lazy_modules import np
from ...compiler.hardware.printf import MAX_ARGUMENTS, buffer_layout, conversions
from ...dialects.ptx.calls import CallUniOp

VPRINTF = "vprintf"
"""CUDA's device printf entry point, the only function a Tylo kernel calls."""

_SIZES = {"i32": 4, "i64": 8, "f64": 8}
_NUMPY = {"i32": "<i4", "i64": "<i8", "f64": "<f8"}


@functools.lru_cache(maxsize=1)
def _c_library():
    """ctypes, and the host C library's ``snprintf``."""
    import ctypes
    import ctypes.util

    try:
        snprintf = ctypes.CDLL(None).snprintf
    except (OSError, AttributeError):
        snprintf = ctypes.CDLL(ctypes.util.find_library("c")).snprintf
    snprintf.restype = ctypes.c_int
    return ctypes, snprintf


def c_format(fmt: bytes, arguments: list[tuple[str, int | float]]) -> bytes:
    """`fmt` formatted by the host C library's snprintf with `arguments`, (kind, value) pairs
    of kind "i32" (an int), "i64" (a long long) or "f64" (a double), in order.
    Raises ValueError when the C library reports an encoding error."""
    ctypes, snprintf = _c_library()
    kinds = {"i32": ctypes.c_int, "i64": ctypes.c_longlong, "f64": ctypes.c_double}
    args = [kinds[kind](value) for kind, value in arguments]
    size = snprintf(None, 0, fmt, *args)
    if size < 0:
        raise ValueError(f"snprintf failed on the format {fmt!r}")
    buffer = ctypes.create_string_buffer(size + 1)
    snprintf(buffer, size + 1, fmt, *args)
    return buffer.raw[:size]


def vprintf(interpreter, op, formats, buffers) -> None:
    """Run ``vprintf(format, arguments)`` for the issue group: `formats` and `buffers` are the
    threads' generic addresses (uint64 arrays); each thread's text goes to machine.stdout, in
    thread order."""
    machine, threads = interpreter.machine, interpreter.threads
    texts: list[bytes] = [b""] * len(formats)
    for address in np.unique(formats):
        group = np.nonzero(formats == address)[0]
        fmt = machine.read_cstring(op, int(address))
        try:
            found = conversions(fmt.decode("latin-1"))
        except ValueError as e:
            machine.error(op, f"vprintf format {fmt!r}: {e}", threads[group])
        if len(found) > MAX_ARGUMENTS:
            machine.error(op, f"vprintf format {fmt!r}: {len(found)} conversions; a device "
                              f"printf passes at most {MAX_ARGUMENTS} arguments", threads[group])
        kinds = [c.argument for c in found]
        offsets, _ = buffer_layout(kinds)
        base = buffers[group].astype(np.uint64)
        if kinds and (base == 0).any():
            machine.error(op, f"vprintf format {fmt!r} has {len(kinds)} conversions and a null "
                              "argument buffer", threads[group][base == 0])
        columns = []
        for kind, offset in zip(kinds, offsets):
            raw = machine.load(op, "generic", base + np.uint64(offset), _SIZES[kind], group)
            columns.append(np.ascontiguousarray(raw, np.uint8).view(_NUMPY[kind])[:, 0])
        for row, thread in enumerate(group):
            arguments = [(kind, col[row].item()) for kind, col in zip(kinds, columns)]
            try:
                texts[thread] = c_format(fmt, arguments)
            except ValueError as e:
                machine.error(op, str(e), threads[[thread]])
    for text in texts:
        machine.stdout.write(text.decode("utf-8", errors="replace"))


@register_impls
class CallSemantics(InterpreterFunctions):
    """Semantics of ``ptx.call_uni`` (module text)."""

    @impl(CallUniOp)
    def run_call_uni(self, interpreter, op: CallUniOp, args):
        callee = op.callee.root_reference.data
        if callee != VPRINTF or len(args) != 2:
            interpreter.machine.error(op, f"call of '{callee}' with {len(args)} arguments: the "
                                          f"emulator runs only {VPRINTF}(format, arguments)",
                                      interpreter.threads)
        vprintf(interpreter, op, args[0], args[1])
        return ()
