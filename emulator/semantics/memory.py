"""Semantics of the memory instructions: kernel parameters, addresses, loads and stores
(`tylo.dialects.ptx.memory`; PTX ISA 9.7.9.8 ld, 9.7.9.10 st, 9.7.9.18 cvta, 9.7.9.1 mov).

A vector ld/st (``.v2``/``.v4``) is one access of the vector's whole size (N * sizeof(type)),
so the machine's natural-alignment check refuses an address that is not a multiple of it, as
the hardware faults (PTX ISA 5.4.4 "Vectors": "vector ... accesses must be aligned to a multiple
of the access size"); register k holds the bytes [k * size, (k + 1) * size) of it.

A load narrower than its register is zero-extended (``.u``/``.b`` types) or sign-extended
(``.s``) to the register's width, and a store writes the low bytes of its register, as 9.7.9.8
and 9.7.9.10 say ("the value is sign- or zero-extended to the destination register width").
"""

from __future__ import annotations

from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ...compiler.support.lazy_modules import np
from ...compiler.hardware.ptx_types import PTX_TYPES
from ...dialects.ptx import ops as P
from ...dialects.ptx.registers import reg_class_of
from ..memory import LOCAL_WINDOW
from ..values import register_dtype


def _widen(raw, suffix: str, reg_class: str):
    """(threads, bytes) little-endian bytes of type `suffix` -> register bits of `reg_class`."""
    t = PTX_TYPES[suffix]
    size = t.bits // 8
    if reg_class == "pred":
        return raw[:, 0] != 0
    value = raw.view(f"<{'i' if t.kind == 's' else 'u'}{size}")[:, 0]
    out = register_dtype(reg_class)
    return value.astype(f"<{'i' if t.kind == 's' else 'u'}{out.itemsize}").view(out)


def _narrow(bits, suffix: str):
    """Register bits -> the (threads, bytes) little-endian bytes of type `suffix`."""
    size = PTX_TYPES[suffix].bits // 8
    if bits.dtype == bool:
        bits = bits.astype(np.uint8)
    raw = np.ascontiguousarray(bits).view(np.uint8).reshape(bits.size, -1)
    return raw[:, :size]


def _address(base, offset: int):
    return np.asarray(base).astype(np.uint64) + np.uint64(offset & (2**64 - 1))


@register_impls
class MemorySemantics(InterpreterFunctions):
    """ld.param, cvta, mov of a symbol's address, ld and st."""

    @impl(P.LdParamOp)
    def run_ld_param(self, interpreter, op: P.LdParamOp, args):
        m = interpreter.machine
        at = m.param_offsets[op.index.value.data]
        slot = m.params[at: at + 8]
        raw = np.frombuffer(slot, np.uint8)[None, :].repeat(interpreter.threads.size, 0)
        return (_widen(raw, op.type.data, reg_class_of(op.result)),)

    @impl(P.CvtaOp)
    def run_cvta(self, interpreter, op: P.CvtaOp, args):
        return (args[0].copy(),)  # generic -> global is the identity (see emulator.memory)

    @impl(P.CvtaGenericOp)
    def run_cvta_generic(self, interpreter, op: P.CvtaGenericOp, args):
        if op.space.data == "local":
            return (args[0] + np.uint64(LOCAL_WINDOW),)
        return (args[0].copy(),)

    @impl(P.MovSymbolOp)
    def run_mov_symbol(self, interpreter, op: P.MovSymbolOp, args):
        symbol = interpreter.machine.symbols[op.symbol.data]
        dtype = register_dtype(reg_class_of(op.result))
        return (np.full(interpreter.threads.size, symbol.address, dtype),)

    @impl(P.LdOp)
    def run_ld(self, interpreter, op: P.LdOp, args):
        size = PTX_TYPES[op.type.data].bits // 8
        raw = interpreter.machine.load(op, op.space.data, _address(args[0], op.offset.value.data),
                                       size)
        return (_widen(raw, op.type.data, reg_class_of(op.result)),)

    @impl(P.StOp)
    def run_st(self, interpreter, op: P.StOp, args):
        interpreter.machine.store(op, op.space.data, _address(args[0], op.offset.value.data),
                                  _narrow(args[1], op.type.data))
        return ()

    @impl(P.LdVectorOp)
    def run_ld_vector(self, interpreter, op: P.LdVectorOp, args):
        size = PTX_TYPES[op.type.data].bits // 8
        n = len(op.elements)
        raw = interpreter.machine.load(op, op.space.data, _address(args[0], op.offset.value.data),
                                       n * size)
        cls = reg_class_of(op.elements[0])
        return tuple(_widen(np.ascontiguousarray(raw[:, k * size:(k + 1) * size]), op.type.data,
                            cls) for k in range(n))

    @impl(P.StVectorOp)
    def run_st_vector(self, interpreter, op: P.StVectorOp, args):
        data = np.concatenate([_narrow(v, op.type.data) for v in args[1:]], axis=1)
        interpreter.machine.store(op, op.space.data, _address(args[0], op.offset.value.data),
                                  data)
        return ()


__all__ = ["MemorySemantics"]
