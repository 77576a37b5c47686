"""Instruction selection of the vector copies and cp.async (`dialects.tylo.copy_ops` ->
``ld/st.{global,shared}.v2/.v4`` of `dialects.ptx.memory`, `dialects.ptx.cp_async`; PTX ISA
5.4.4 "Vectors", 9.7.9.8 ld, 9.7.9.10 st, 9.7.9.25.3 cp.async, sm_80+).

Elements of 4 or 8 bytes are the vector's registers (``.v2/.v4.f32``, ``.b32``, ``.v2.b64`` ...);
narrower ones are packed into .b32 words, low element first (`Matrix._pack` / `_unpack`, as
ldmatrix's), so a 4-byte vector is one ``.b32`` access and 8 or 16 bytes ``.v2/.v4.b32``.
"""

from __future__ import annotations

from ...dialects.ptx import cp_async as C
from ...dialects.ptx import ops as P
from ...dialects.tylo import copy_ops as T
from ...dialects.tylo import dtype_of
from .handlers import HANDLERS
from .values import memory_type, reg_class


class Copies:
    """The vector-copy and cp.async handlers of the kernel selector (a mixin of
    `kernel.KernelSelection`, beside `matrix.Matrix` whose packing it uses)."""

    def _access_words(self, t):
        """(PTX type, register class) of the registers a vector of elements of type `t` uses."""
        if dtype_of(t).bytes >= 4:
            return memory_type(t), reg_class(t)
        return "b32", "b32"

    @HANDLERS.on(T.LdVectorOp)
    def _LdVectorOp(self, op: T.LdVectorOp) -> None:
        t = op.memory.type.element_type
        space, address = op.memory.type.space.data, self.get(op.memory)
        kind, cls = self._access_words(t)
        count = len(op.elements) * dtype_of(t).bytes // (8 if kind.endswith("64") else 4)
        if count == 1:
            words = [self.emit(P.LdOp(space, kind, address, self.new(cls))).results[0]]
        else:
            regs = [self.new(cls) for _ in range(count)]
            words = list(self.emit(P.LdVectorOp(space, kind, address, regs)).results)
        elements = words if dtype_of(t).bytes >= 4 else self._unpack(words, t)
        for old, new in zip(op.elements, elements):
            self.bind(old, new)

    @HANDLERS.on(T.StVectorOp)
    def _StVectorOp(self, op: T.StVectorOp) -> None:
        t = op.memory.type.element_type
        dtype = dtype_of(t)
        space, address = op.memory.type.space.data, self.get(op.memory)
        kind, _ = self._access_words(t)
        values = [self.get(v) for v in op.elements]
        words = values if dtype.bytes >= 4 else self._pack(values, dtype, dtype.ptx)
        if len(words) == 1:
            self.emit(P.StOp(space, kind, address, words[0]))
        else:
            self.emit(P.StVectorOp(space, kind, address, words))

    @HANDLERS.on(T.CopyAsyncOp)
    def _CopyAsyncOp(self, op: T.CopyAsyncOp) -> None:
        self.require(80, "cp.async (tylo.copy_async)")
        size = self.get(op.src_bytes) if op.src_bytes is not None else None
        self.emit(C.CpAsyncOp(self.get(op.dst), self.get(op.src), size))

    @HANDLERS.on(T.CommitCopiesOp)
    def _CommitCopiesOp(self, op: T.CommitCopiesOp) -> None:
        self.require(80, "cp.async.commit_group (tylo.commit_copies)")
        self.emit(C.CpAsyncCommitOp())

    @HANDLERS.on(T.WaitCopiesOp)
    def _WaitCopiesOp(self, op: T.WaitCopiesOp) -> None:
        self.require(80, "cp.async.wait_group (tylo.wait_copies)")
        self.emit(C.CpAsyncWaitOp(op.pending.value.data))

    @HANDLERS.on(T.AddressBitsOp)
    def _AddressBitsOp(self, op: T.AddressBitsOp) -> None:
        ptr = self.get(op.pointer)
        if op.pointer.type.space.data == "shared":
            self.bind(op.result, ptr)  # (a shared pointer is its b32 address)
            return
        self.set(op.result, self.emit(P.CvtOp("u32", "u64", ptr, self.new("b32"))))
