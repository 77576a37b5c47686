"""Instruction selection of the vector copies and cp.async (`dialects.tylo.copy_ops` ->
``ld/st.{global,shared}.v2/.v4`` of `dialects.ptx.memory`, `dialects.ptx.cp_async`; PTX ISA
5.4.4 "Vectors", 9.7.9.8 ld, 9.7.9.10 st, 9.7.9.25.3 cp.async, sm_80+).

Elements of 4 or 8 bytes are the vector's registers (``.v2/.v4.f32``, ``.b32``, ``.v2.b64`` ...);
narrower ones are packed into .b32 words, low element first (`matrix._pack` / `_unpack`, as
ldmatrix's), so a 4-byte vector is one ``.b32`` access and 8 or 16 bytes ``.v2/.v4.b32``.
"""

from __future__ import annotations

from ...dialects.ptx import cp_async as C
from ...dialects.ptx import ops as P
from ...dialects.tylo import copy_ops as T
from ...dialects.tylo import dtype_of
from .handlers import HANDLERS
from .kernel import KernelSelection
from .matrix import _pack
from .matrix import _unpack
from .values import memory_type, reg_class


def _access_words(sel: KernelSelection, t):
    """(PTX type, register class) of the registers a vector of elements of type `t` uses."""
    if dtype_of(t).bytes >= 4:
        return memory_type(t), reg_class(t)
    return "b32", "b32"


@HANDLERS.on(T.LdVectorOp)
def _LdVectorOp(sel: KernelSelection, op: T.LdVectorOp) -> None:
    t = op.memory.type.element_type
    space, address = op.memory.type.space.data, sel.get(op.memory)
    kind, cls = _access_words(sel, t)
    count = len(op.elements) * dtype_of(t).bytes // (8 if kind.endswith("64") else 4)
    if count == 1:
        words = [sel.emit(P.LdOp(space, kind, address, sel.new(cls))).results[0]]
    else:
        regs = [sel.new(cls) for _ in range(count)]
        words = list(sel.emit(P.LdVectorOp(space, kind, address, regs)).results)
    elements = words if dtype_of(t).bytes >= 4 else _unpack(sel, words, t)
    for old, new in zip(op.elements, elements):
        sel.bind(old, new)


@HANDLERS.on(T.StVectorOp)
def _StVectorOp(sel: KernelSelection, op: T.StVectorOp) -> None:
    t = op.memory.type.element_type
    dtype = dtype_of(t)
    space, address = op.memory.type.space.data, sel.get(op.memory)
    kind, _ = _access_words(sel, t)
    values = [sel.get(v) for v in op.elements]
    words = values if dtype.bytes >= 4 else _pack(sel, values, dtype, dtype.ptx)
    if len(words) == 1:
        sel.emit(P.StOp(space, kind, address, words[0]))
    else:
        sel.emit(P.StVectorOp(space, kind, address, words))


@HANDLERS.on(T.CopyAsyncOp)
def _CopyAsyncOp(sel: KernelSelection, op: T.CopyAsyncOp) -> None:
    sel.require(80, "cp.async (tylo.copy_async)")
    size = sel.get(op.src_bytes) if op.src_bytes is not None else None
    sel.emit(C.CpAsyncOp(sel.get(op.dst), sel.get(op.src), size))


@HANDLERS.on(T.CommitCopiesOp)
def _CommitCopiesOp(sel: KernelSelection, op: T.CommitCopiesOp) -> None:
    sel.require(80, "cp.async.commit_group (tylo.commit_copies)")
    sel.emit(C.CpAsyncCommitOp())


@HANDLERS.on(T.WaitCopiesOp)
def _WaitCopiesOp(sel: KernelSelection, op: T.WaitCopiesOp) -> None:
    sel.require(80, "cp.async.wait_group (tylo.wait_copies)")
    sel.emit(C.CpAsyncWaitOp(op.pending.value.data))


@HANDLERS.on(T.AddressBitsOp)
def _AddressBitsOp(sel: KernelSelection, op: T.AddressBitsOp) -> None:
    ptr = sel.get(op.pointer)
    if op.pointer.type.space.data == "shared":
        sel.bind(op.result, ptr)  # (a shared pointer is its b32 address)
        return
    sel.set(op.result, sel.emit(P.CvtOp("u32", "u64", ptr, sel.new("b32"))))
