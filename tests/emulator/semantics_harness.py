"""Helpers of the emulator semantics tests: run one ptx op's implementation through an xDSL
`Interpreter`, and exact references written from the IEEE 754 definitions with Fractions.

`run(op, *arrays)` checks that every result has its register class's dtype. `reference(x, fmt,
mode)` is the encoding of the exact rational x rounded to format `fmt` in `mode`, computed
independently of `tylo.emulator.semantics.rounding` (floor of x / ulp, then the mode's rule).
`nan_result(t, *operands)` is the NaN an arithmetic instruction writes, by the rules measured
on the H200, 2026-12-01 (by tests/emulator/test_semantics_vs_gpu.py).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter
from xdsl.utils.test_value import create_ssa_value

from tylo.dialects.ptx.registers import RegisterType, reg_class_of
from tylo.emulator.semantics.arithmetic import ArithmeticSemantics
from tylo.emulator.semantics.math import MathSemantics
from tylo.emulator.values import REGISTER_DTYPES

# name: (exponent bits, stored significand bits, width of the encoding); tf32's 19 bits sit in
# the upper bits of a .b32 register
FORMATS = {"f16": (5, 10, 16), "bf16": (8, 7, 16), "f32": (8, 23, 32), "f64": (11, 52, 64),
           "tf32": (8, 10, 19)}
UINT = {16: np.uint16, 32: np.uint32, 64: np.uint64}
_index = itertools.count(1)


def reg(cls: str) -> RegisterType:
    """A fresh register type of class `cls`."""
    return RegisterType(cls, next(_index))


def val(cls: str):
    """A fresh SSA value held in a register of class `cls` (an operand)."""
    return create_ssa_value(reg(cls))


def run(op, *arrays, n: int | None = None):
    """The results of `op`'s implementation on `arrays` (a tuple), dtypes checked."""
    op.verify()
    interpreter = Interpreter(ModuleOp([]))
    interpreter.register_implementations(ArithmeticSemantics())
    interpreter.register_implementations(MathSemantics())
    count = n if n is not None else len(arrays[0])
    interpreter.threads = np.arange(count, dtype=np.int64)
    results = interpreter.run_op(op, tuple(arrays))
    for value, result in zip(op.results, results):
        assert result.dtype == np.dtype(REGISTER_DTYPES[reg_class_of(value)]), (op.name, result.dtype)
        assert result.shape == (count,)
    return results


def to_fraction(bits: int, fmt: str):
    """The exact value of an encoding: a Fraction, or the float inf / nan (with a sign)."""
    e_bits, m_bits, width = FORMATS[fmt]
    sign = -1 if bits >> (width - 1) & 1 else 1
    e = (bits >> m_bits) & ((1 << e_bits) - 1)
    f = bits & ((1 << m_bits) - 1)
    bias = (1 << (e_bits - 1)) - 1
    if e == (1 << e_bits) - 1:
        return sign * float("inf") if f == 0 else float("nan")
    if e == 0:
        return sign * Fraction(f) * Fraction(2) ** (1 - bias - m_bits)
    return sign * Fraction(f | (1 << m_bits)) * Fraction(2) ** (e - bias - m_bits)


def reference(x: Fraction, fmt: str, mode: str, negative_zero: bool = False) -> int:
    """The encoding of x rounded to `fmt` in `mode` (rn, rna, rz, rm, rp). An exact zero is
    -0 when `negative_zero`."""
    e_bits, m_bits, width = FORMATS[fmt]
    bias = (1 << (e_bits - 1)) - 1
    sign_bit = 1 << (width - 1)
    if x == 0:
        return sign_bit if negative_zero else 0
    negative, a = x < 0, abs(x)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    ulp = Fraction(2) ** (max(e, 1 - bias) - m_bits)
    k = a / ulp
    low = k.numerator // k.denominator
    rest = k - low
    up = {
        "rn": rest > Fraction(1, 2) or (rest == Fraction(1, 2) and low % 2 == 1),
        "rna": rest >= Fraction(1, 2),
        "rz": False,
        "rp": rest > 0 and not negative,
        "rm": rest > 0 and negative,
    }[mode]
    v = (low + up) * ulp
    emax = bias
    if v >= Fraction(2) ** (emax + 1):
        to_inf = {"rn": True, "rna": True, "rz": False, "rp": not negative, "rm": negative}[mode]
        magnitude = ((1 << e_bits) - 1) << m_bits
        bits = magnitude if to_inf else magnitude - 1
    elif v == 0:
        bits = 0
    else:
        ev = v.numerator.bit_length() - v.denominator.bit_length()
        if Fraction(2) ** ev > v:
            ev -= 1
        if ev < 1 - bias:
            bits = int(v / Fraction(2) ** (1 - bias - m_bits))
        else:
            bits = ((ev + bias) << m_bits) | (int(v / Fraction(2) ** (ev - m_bits)) - (1 << m_bits))
    return bits | (sign_bit if negative else 0)


def random_bits(rng, fmt: str, n: int):
    """Random encodings of `fmt`: uniform bit patterns, values near 1, subnormals, edges."""
    e_bits, m_bits, width = FORMATS[fmt]
    dtype = UINT[width]
    bits = rng.integers(0, 2**width, n, dtype=np.uint64).astype(dtype)
    bias = (1 << (e_bits - 1)) - 1
    near_one = (rng.integers(bias - 12, bias + 12, n // 4, dtype=np.uint64) << m_bits) | rng.integers(
        0, 2**m_bits, n // 4, dtype=np.uint64)
    bits[: n // 4] = near_one.astype(dtype)
    bits[n // 4: n // 4 + n // 8] = rng.integers(0, 2**m_bits, n // 8, dtype=np.uint64).astype(dtype)
    sign = rng.integers(0, 2, n, dtype=np.uint64).astype(dtype) << dtype(width - 1)
    edges = [0, 1, (1 << m_bits) - 1, 1 << m_bits, ((1 << e_bits) - 2) << m_bits | ((1 << m_bits) - 1),
             ((1 << e_bits) - 1) << m_bits, (((1 << e_bits) - 1) << m_bits) | 1, bias << m_bits]
    bits[-len(edges):] = np.array(edges, dtype=dtype)
    return bits ^ sign


def is_nan(bits: int, fmt: str) -> bool:
    e_bits, m_bits, width = FORMATS[fmt]
    return (bits & ((1 << (width - 1)) - 1)) > (((1 << e_bits) - 1) << m_bits)


CANONICAL = {"f16": 0x7FFF, "bf16": 0x7FFF, "f32": 0x7FFFFFFF, "f64": 0xFFF8000000000000}
"""The NaN written for a NaN made from numbers (measured on the H200, 2026-12-01: f64 from
sqrt.rn.f64 of a negative number, the others from every f16/bf16/f32 arithmetic result)."""


def nan_result(t: str, *operands: int) -> int:
    """The NaN result of an instruction on type `t` with operand encodings `operands` (PTX
    order): for f64, a NaN operand with its quiet bit set (the first signalling NaN operand,
    else the first NaN operand: the order is the emulator's choice, the rest measured on the
    H200, 2026-12-01); otherwise, and for the other types, CANONICAL[t]."""
    if t == "f64":
        nans = [x for x in operands if is_nan(x, t)]
        signalling = [x for x in nans if not x >> 51 & 1]
        if nans:
            return (signalling or nans)[0] | 1 << 51
    return CANONICAL[t]
