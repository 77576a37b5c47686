"""Cost of one emulated instruction: the arithmetic, conversion and math semantics on a block.

    python bench/emulator_semantics.py [--threads 256] [--calls 2000]

Each instruction runs through xDSL's `Interpreter.run_op` (the path the emulator's scheduler
takes) on `--threads` random operands, `--calls` times; printed: microseconds per call, best of
three. The forms are the ones a GEMM kernel issues most (f32 arithmetic and fma, integer address
arithmetic, predicates, bf16 packing) and a few slower exact paths for comparison.
"""

from __future__ import annotations

import argparse
import itertools
import timeit

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter
from xdsl.utils.test_value import create_ssa_value

from tylo.dialects.ptx import math as M
from tylo.dialects.ptx import ops as P
from tylo.dialects.ptx.registers import RegisterType
from tylo.emulator.semantics.arithmetic import ArithmeticSemantics
from tylo.emulator.semantics.math import MathSemantics

_index = itertools.count(1)


def _reg(cls: str) -> RegisterType:
    return RegisterType(cls, next(_index))


def _val(cls: str):
    return create_ssa_value(_reg(cls))


def cases(rng, n: int):
    f = rng.standard_normal(n).astype(np.float32).view(np.uint32)
    i = rng.integers(0, 1 << 20, n).astype(np.uint32)
    d = rng.standard_normal(n).view(np.uint64)
    p = rng.integers(0, 2, n).astype(bool)
    h = (f >> 16).astype(np.uint16)
    return {
        "add.f32": (P.AddOp("f32", _val("f32"), _val("f32"), _reg("f32")), (f, f)),
        "mul.rn.f32": (P.MulOp("f32", _val("f32"), _val("f32"), _reg("f32"), mode="rn"), (f, f)),
        "fma.rn.f32": (P.FmaOp("f32", _val("f32"), _val("f32"), _val("f32"), _reg("f32")), (f, f, f)),
        "fma.rn.f64": (P.FmaOp("f64", _val("f64"), _val("f64"), _val("f64"), _reg("f64")), (d, d, d)),
        "add.rz.f32": (P.AddOp("f32", _val("f32"), _val("f32"), _reg("f32"), mode="rz"), (f, f)),
        "add.s32": (P.AddOp("s32", _val("b32"), _val("b32"), _reg("b32")), (i, i)),
        "mad.lo.s32": (P.FmaOp("s32", _val("b32"), _val("b32"), _val("b32"), _reg("b32")), (i, i, i)),
        "mul.wide.s32": (P.MulOp("s32", _val("b32"), _val("b32"), _reg("b64"), mode="wide"), (i, i)),
        "div.s32": (P.DivOp("s32", _val("b32"), _val("b32"), _reg("b32")), (i, i)),
        "shl.b32": (P.ShlOp("b32", _val("b32"), _val("b32"), _reg("b32")), (i, i & 31)),
        "and.b32": (P.AndOp("b32", _val("b32"), _val("b32"), _reg("b32")), (i, i)),
        "setp.lt.s32": (P.SetpOp("lt", "s32", _val("b32"), _val("b32"), _reg("pred")), (i, i)),
        "setp.lt.f32": (P.SetpOp("lt", "f32", _val("f32"), _val("f32"), _reg("pred")), (f, f)),
        "selp.b32": (P.SelpOp("b32", _val("b32"), _val("b32"), _val("pred"), _reg("b32")), (i, i, p)),
        "mov.b32": (P.MovOp("b32", _val("b32"), _reg("b32")), (i,)),
        "const.b32": (P.ConstOp("b32", 7, _reg("b32")), ()),
        "cvt.rn.f32.s32": (P.CvtOp("f32", "s32", _val("b32"), _reg("f32"), mode="rn"), (i,)),
        "cvt.rzi.s32.f32": (P.CvtOp("s32", "f32", _val("f32"), _reg("b32"), mode="rzi"), (f,)),
        "cvt.rn.bf16.f32": (P.CvtOp("bf16", "f32", _val("f32"), _reg("b16"), mode="rn"), (f,)),
        "cvt.f32.bf16": (P.CvtOp("f32", "bf16", _val("b16"), _reg("f32")), (h,)),
        "cvt.rn.bf16x2.f32": (P.CvtPairOp("bf16x2", "f32", _val("f32"), _val("f32"), _reg("b32"),
                                          mode="rn"), (f, f)),
        "cvt.rn.satfinite.e4m3x2.f32": (P.CvtPairOp("e4m3x2", "f32", _val("f32"), _val("f32"),
                                                    _reg("b16"), mode="rn.satfinite"), (f, f)),
        "pack.b32": (P.PackOp([_val("b16"), _val("b16")], _reg("b32")), (h, h)),
        "ex2.approx.f32": (M.Ex2Op("f32", _val("f32"), _reg("f32"), mode="approx"), (f,)),
        "sqrt.rn.f32": (M.SqrtOp("f32", _val("f32"), _reg("f32"), mode="rn"), (f,)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--threads", type=int, default=256)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    interpreter = Interpreter(ModuleOp([]))
    interpreter.register_implementations(ArithmeticSemantics())
    interpreter.register_implementations(MathSemantics())
    interpreter.threads = np.arange(args.threads, dtype=np.int64)
    print(f"us per instruction, {args.threads} threads:")
    for name, (op, operands) in cases(np.random.default_rng(0), args.threads).items():
        interpreter.run_op(op, operands)  # builds and caches the op's function
        best = min(timeit.repeat(lambda: interpreter.run_op(op, operands), number=args.calls, repeat=3))  # noqa: B023
        print(f"  {name:30s} {best / args.calls * 1e6:8.1f}")


if __name__ == "__main__":
    main()
