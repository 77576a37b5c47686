"""Semantics of ex2, lg2, sqrt, rsqrt, rcp, tanh and abs (`tylo.dialects.ptx.math`; PTX ISA
9.7.3.15, 9.7.3.16, 9.7.3.20, 9.7.3.21, 9.7.3.22, 9.7.1.10, 9.7.3.9, 9.7.4.6).

The ``.approx`` instructions are computed in float64 (numpy's exp2, log2, sqrt) and rounded once
to f32: the float64 result is within about 1 float64 ulp of the exact one, so the f32 result is
the correctly rounded one or its neighbour, within the bound the ISA states for each:

* ``ex2.approx.f32`` (9.7.3.21): "The maximum ulp error is 2 ulp from correctly rounded result
  across the full range of inputs."
* ``lg2.approx.f32`` (9.7.3.20): "The maximum absolute error is 2^-22 when the input operand is
  in the range (0.5, 2). For positive finite inputs outside of this interval, maximum relative
  error is 2^-22."
* ``rsqrt.approx.f32`` (9.7.3.16): "The maximum relative error for rsqrt.f32 over the entire
  positive finite floating-point range is 2^-22.9." ``rsqrt.approx.f64`` has no stated bound
  (the ISA: "emulated in software"); it gives 1 / sqrt(a) rounded twice in float64 (within 1 ulp).
* ``sqrt.approx.f32`` (9.7.3.15, relative error 2^-23): the correctly rounded root.
* ``tanh.approx.f32`` (9.7.3.22): "Max relative error for tanh.approx.f32 over the entire range
  is 2^-10.987". The emulation is a model, not the GPU's bits: numpy's float64 tanh rounded once
  to f32, far inside the bound, where the hardware's result may lie up to the bound away (until
  a fit on a GPU, tests/gpu/test_tanh_gpu.py checks both against the bound, not each other).

So an emulated result may differ from the GPU's by the GPU's own error, never by more than the
bound. ``sqrt.rn/rz/rm/rp`` (.f32, .f64) are correctly rounded ("IEEE 754 compliant rounding").
``rcp.rn`` (.f32, .f64) is correctly rounded and ``rcp.approx.f32`` (ISA: at most 1 ulp) is
emulated by the same correctly rounded 1/a; rcp(+-0) = +-inf, rcp(+-inf) = +-0.
``abs`` is exact. Special values as the ISA's tables give them: ex2(-inf) = +0, ex2(+inf) = +inf;
lg2(+-0) = -inf, lg2(negative) = NaN; sqrt(-0) = -0, sqrt(negative) = NaN; rsqrt(+-0) = +-inf,
rsqrt(+inf) = +0. NaN results follow `rounding.apply_nan_rule` (the ISA: "unspecified NaN"):
the canonical NaN for f32, f16, bf16 (abs of a NaN too); for f64 a NaN operand quieted with its
sign and payload kept (``abs.f64`` clears no NaN's sign and quiets a signalling one:
0xFFF0000000000123 -> 0xFFF8000000000123, measured on the H200, 2026-12-01) and the default NaN
0xFFF8000000000000 for sqrt of a negative number (measured on the H200, 2026-12-01; rsqrt.f64 of
one is chosen alike, unmeasured). ``.ftz`` (f32; f16 for abs) flushes subnormal inputs and
results to signed zero. abs of the most negative integer is itself.
"""

from __future__ import annotations

from functools import lru_cache

from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ...compiler.support.errors import UnsupportedError
from ...compiler.support.lazy_modules import np
from ...dialects.ptx import math as M
from . import rounding as R

_SIGNED = {"s16": ("int16", "uint16"), "s32": ("int32", "uint32"), "s64": ("int64", "uint64")}


def _f32_approx(function):
    """An f32 function computed in float64 and rounded to nearest once."""
    return lambda a: R.from_float64(function(a.view(np.float32).astype(np.float64)), R.F32, "rn")


def _rsqrt(x):
    return 1.0 / np.sqrt(x)


def _abs(suffix: str):
    if suffix in _SIGNED:
        signed, unsigned = _SIGNED[suffix]
        return lambda a: np.abs(a.view(signed)).view(unsigned)  # |MIN| wraps to MIN
    fmt = R.FORMATS[suffix]
    return lambda a: R.apply_nan_rule(a & a.dtype.type(fmt.sign_bit - 1), fmt, a)


def _sqrt(suffix: str, mode: str):
    fmt = R.FORMATS[suffix]
    if mode in ("rn", "approx"):
        view = "float32" if suffix == "f32" else "float64"
        return lambda a: R.apply_nan_rule(np.sqrt(a.view(view)).view(a.dtype), fmt, a)
    return lambda a: R.apply_nan_rule(R.finish(*R.sqrt64(R.to_float64(a, fmt)), fmt, mode), fmt, a)


def _rcp(suffix: str):
    """1 / a correctly rounded (numpy's IEEE division): ``rcp.rn``, and ``rcp.approx`` within
    its 1 ulp; NaN results by `rounding.apply_nan_rule`."""
    fmt, view = R.FORMATS[suffix], "float32" if suffix == "f32" else "float64"

    def rcp(a):
        with np.errstate(divide="ignore"):
            out = (np.ones(len(a), view) / a.view(view)).view(a.dtype)
        return R.apply_nan_rule(out, fmt, a)
    return rcp


@lru_cache(maxsize=None)
def math_function(opcode: str, suffix: str, mode: str | None, ftz: bool):
    """The function a -> d of ``opcode{.mode}{.ftz}.suffix`` on register arrays."""
    if opcode == "ex2" and suffix == "f32":
        fn = _f32_approx(np.exp2)
    elif opcode == "lg2" and suffix == "f32":
        fn = _f32_approx(np.log2)
    elif opcode == "rsqrt" and suffix == "f32":
        fn = _f32_approx(_rsqrt)
    elif opcode == "rsqrt" and suffix == "f64":
        fn = lambda a: R.apply_nan_rule(_rsqrt(a.view(np.float64)).view(np.uint64), R.F64, a)  # noqa: E731
    elif opcode == "sqrt" and suffix in ("f32", "f64"):
        fn = _sqrt(suffix, mode)
    elif opcode == "abs":
        fn = _abs(suffix)
    elif opcode == "rcp" and suffix in ("f32", "f64"):
        fn = _rcp(suffix)
    elif opcode == "tanh" and suffix == "f32":
        fn = _f32_approx(np.tanh)
    else:
        raise UnsupportedError(f"emulator: {opcode}.{suffix} is not emulated")
    if ftz:
        fmt, exact = R.FORMATS[suffix], fn
        fn = lambda a: R.flush_subnormals(exact(R.flush_subnormals(a, fmt)), fmt)  # noqa: E731
    return R.quiet(fn)


@register_impls
class MathSemantics(InterpreterFunctions):
    """The ``@impl`` of every op of `tylo.dialects.ptx.math`."""

    def _run(self, op, args):
        mode = op.mode.data if op.mode is not None else None
        return (math_function(op.OPCODE, op.type.data, mode, op.ftz is not None)(args[0]),)

    @impl(M.Ex2Op)
    def run_ex2(self, interpreter, op, args):
        return self._run(op, args)

    @impl(M.Lg2Op)
    def run_lg2(self, interpreter, op, args):
        return self._run(op, args)

    @impl(M.SqrtOp)
    def run_sqrt(self, interpreter, op, args):
        return self._run(op, args)

    @impl(M.RsqrtOp)
    def run_rsqrt(self, interpreter, op, args):
        return self._run(op, args)

    @impl(M.AbsOp)
    def run_abs(self, interpreter, op, args):
        return self._run(op, args)

    @impl(M.RcpOp)
    def run_rcp(self, interpreter, op, args):
        return self._run(op, args)

    @impl(M.TanhOp)
    def run_tanh(self, interpreter, op, args):
        return self._run(op, args)
