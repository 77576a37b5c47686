"""A stand-in for the emulator's machine in unit tests of instruction semantics: shared memory
as one byte array, generic memory as a few regions at fixed addresses, a text stdout, and
``error`` raising `Fault`. It checks bounds and natural alignment as the PTX ISA asks (6.4) and
records every access, so a test can see which addresses an instruction read."""

from __future__ import annotations

import io

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter
from xdsl.ir import Block

from tylo.dialects.ptx.registers import RegisterType


class Fault(Exception):
    """What `FakeMachine.error` raises: the message and the threads it names."""

    def __init__(self, message: str, threads):
        super().__init__(message)
        self.threads = [int(t) for t in threads]


class FakeMachine:
    """shared: the CTA's shared bytes; regions: {generic base address: bytes}."""

    def __init__(self, shared: int | bytes = 0, regions: dict[int, bytes] | None = None):
        self.shared = np.frombuffer(bytes(shared), np.uint8).copy()  # an int: that many zeros
        self.regions = {base: np.frombuffer(bytes(b), np.uint8).copy()
                        for base, b in (regions or {}).items()}
        self.stdout = io.StringIO()
        self.accesses: list[tuple[str, str, list[int], int]] = []

    def _where(self, space: str, address: int, size: int):
        if address % size:
            raise Fault(f"misaligned {size}-byte {space} access at {address:#x}", [])
        if space == "shared":
            if address + size > self.shared.size:
                raise Fault(f"shared address {address:#x} out of bounds", [])
            return self.shared, address
        for base, data in self.regions.items():
            if base <= address and address + size <= base + data.size:
                return data, address - base
        raise Fault(f"generic address {address:#x} is in no region", [])

    def load(self, op, space: str, addresses, size: int, lanes=None):
        assert addresses.dtype == np.uint64
        self.accesses.append(("load", space, [int(a) for a in addresses], size))
        out = np.zeros((addresses.size, size), np.uint8)
        for i, a in enumerate(addresses):
            data, offset = self._where(space, int(a), size)
            out[i] = data[offset:offset + size]
        return out

    def store(self, op, space: str, addresses, values, lanes=None) -> None:
        assert addresses.dtype == np.uint64 and values.dtype == np.uint8
        assert values.shape[0] == addresses.size
        self.accesses.append(("store", space, [int(a) for a in addresses], values.shape[1]))
        for a, v in zip(addresses, values):
            data, offset = self._where(space, int(a), v.size)
            data[offset:offset + v.size] = v

    def read_cstring(self, op, address: int) -> bytes:
        out = bytearray()
        while True:
            data, offset = self._where("generic", address + len(out), 1)
            if data[offset] == 0:
                return bytes(out)
            out.append(int(data[offset]))

    def error(self, op, message: str, threads):
        raise Fault(message, threads)


def emulation(machine: FakeMachine, threads: int, *functions) -> Interpreter:
    """An xDSL interpreter running `functions` (InterpreterFunctions instances) for an issue
    group of threads 0 .. threads - 1 on `machine`."""
    interpreter = Interpreter(ModuleOp([]))
    for f in functions:
        interpreter.register_implementations(f)
    interpreter.machine = machine
    interpreter.threads = np.arange(threads, dtype=np.int64)
    return interpreter


def registers(reg_class: str, count: int, first: int = 1) -> list:
    """`count` SSA values of `reg_class` registers (block arguments) to build ops with."""
    return list(Block(arg_types=[RegisterType(reg_class, first + i) for i in range(count)]).args)
