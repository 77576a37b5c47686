"""Online softmax over fragments: ``tylo.SoftmaxState``, ``tylo.softmax_update``,
``tylo.softmax_merge``, ``tylo.softmax_normalize``, ``tylo.softmax_logsumexp``.

The softmax of each line of a score tile seen in chunks (FlashAttention's streaming form):
the state is two FP32 fragments of the scores' replicated `reduced_ownership` along `dims`,
the running maximum ``m`` and the unnormalized sum ``l = sum(exp(scale * (s - m)))`` of
every score seen so far. The empty state is ``(-inf, 0)``. Scores are finite or ``-inf``
(masked); +inf and NaN scores are outside the contract (they give NaN, as the arithmetic
says).

No IR op of its own: everything is built from the reductions of `frontend.language.reductions`
(``tylo.maximum(f, dims=)``, ``tylo.sum``: a local tree and ``shfl.sync.bfly``), elementwise
``max``/``setp``/``selp``/``fma``/``ex2.approx.ftz.f32``, broadcasting (no shuffle: the reduced
fragment feeds the scores' slots through `broadcast_slots`), and one ``rcp.rn.f32`` per row.

**Exponentials, the FA2 way.** With ``c = scale * log2(e)`` (rounded once to f32), a weight is
``exp2(fma(s, c, -mc))`` where ``mc = m * c`` is computed once per line (``mul.rn``): one FMA
and one ``ex2.approx.ftz.f32`` per score. Accuracy: the exponent's absolute error is at most
``(|m c| + 2 |s c - m c|) * 2^-24`` (the rounding of ``m c``, of the FMA, and of ``c`` itself,
which scales ``s - m`` consistently), and ex2.approx.f32 adds at most 2 ulp (PTX ISA 9.7.3.21),
so a weight's relative error is at most about ``ln(2) * (|m c| + 2 |(s - m) c|) * 2^-24 +
2^-22``: 1e-6 when ``|m c|`` is 8, 3e-6 at 64. Forming ``s - m`` first would make the first
term relative to ``|s - m|`` instead of ``|m|``, at the cost of an extra instruction per score;
FlashAttention-2 accepts the same bound (its ``scale_apply_exp2``).

**Flushing.** `softmax_update` and `softmax_merge` take ``ftz`` (static, default True): the
exponentials are ``ex2.approx.ftz.f32``, as FlashAttention-2/3 get them (both build with nvcc
``--use_fast_math``, which implies ``-ftz=true``: setup.py, hopper/setup.py), one MUFU.EX2 each on
sm_90 where the IEEE form adds an FSETP and two predicated FMULs. It changes only the weights
and rescale factors below 2^-126, which become 0, while a row's largest weight is about 1: the
total (at least about 1) and the numerator change by less than 2^-126 per flushed term.
``ftz=False`` keeps IEEE subnormals (``ex2.approx.f32``).

**Empty lines.** A line whose scores seen so far are all ``-inf`` has ``m = -inf``; its
exponent offset is taken as 0 instead of ``-inf * c`` (FA2's guard), so ``s - m`` never
becomes ``-inf - -inf`` (NaN): its weights are ``exp2(-inf) = 0``, its rescale 0, its sum stays
0, `softmax_normalize` gives 0 and `softmax_logsumexp` gives ``-inf``.

**Runtime scale.** `scale` may be a runtime Float32 scalar (FP8 attention's descale factors
of Q and K, read from memory, times 1 / sqrt(d): FlashAttention-3 folds them into its
softmax_scale_log2 the same way): ``c`` is then one multiplication when the state is made, and
every exponent still one FMA. It must be positive and finite (not checked: a runtime value).

**Weight scale.** ``weight_scale`` (a static power of two >= 1, default 1) multiplies every
weight and the total by that factor, folded into the exponent's per-line offset (the FMA's
addend, ``-m c + log2(weight_scale)``: no instruction more per score): weights lie in [0,
weight_scale] instead of [0, 1]. FlashAttention-3's FP8 forward takes 256 (its Max_offset 8),
so that rounding P to e4m3 (3 fraction bits, smallest subnormal 2^-9) flushes only weights below
2^-17 of the row's largest instead of 2^-10. `softmax_normalize` is unchanged (numerator and
total carry the same factor); `softmax_logsumexp` subtracts log(weight_scale).

Every function is collective over the warp (the reductions shuffle): every lane must call it.
`dims`, `weight_scale` and a static `scale` are part of the state's type, so a state carried
through a runtime loop keeps them (the state is a tuple of two fragments, carried as its leaves;
a runtime scale is defined before the loop and read inside it).
"""

from __future__ import annotations

import functools
import math as _math

from ...compiler.hardware import dtypes
from ...compiler.support.errors import GeometryError, PlanError, TypeMismatchError
from ...compiler.hardware.fp8 import FP8_FORMATS
from ...compiler.plans.reduction import reduced_ownership
from ...dialects.scalars import Scalar
from .builtins import exp2, fma, log2, maximum
from .fragment_ops import rcp, select
from .fragments import Fragment, full
from .reductions import _AXES, reduce_fragment


EXPORTS = (
    "SoftmaxState", "softmax_update", "softmax_merge", "softmax_normalize", "softmax_logsumexp",
)
"""Names this module adds to the `tylo` namespace (api/__init__.py finds them)."""

__all__ = ["SoftmaxState", "softmax_update", "softmax_merge", "softmax_normalize",
           "softmax_logsumexp"]

_LOG2E = 1.4426950408889634  # log2(e)
_LN2 = 0.6931471805599453  # ln(2)


class SoftmaxState(tuple):
    """``SoftmaxState(scores, dims=1, scale=1.0, weight_scale=1)``: the empty online-softmax
    state for `scores`.

    scores: a float fragment (Float32, or Float16/BFloat16, converted). dims: the zero-based
    axis of a softmax line, static (1: each row is one softmax over its columns, as for
    attention scores ``Q K^T``; 0: columns). scale: a static positive finite number, or a
    runtime Float32 scalar (positive and finite, not checked), the softmax's temperature
    (``softmax(scale * s)``; attention's ``1 / sqrt(d)``), folded into the exponent's FMA.
    weight_scale: a static power of two >= 1 that multiplies the weights and the total (module
    docstring: FP8's P). The state is ``(maximum, total)``: two Float32 fragments of
    ``reduced_ownership(scores.ownership, dims)``, ``-inf`` and ``0`` (`maximum` is of the
    unscaled scores, `total` is ``weight_scale * sum(exp(scale * (s - maximum)))``). Raises
    TypeMismatchError (not a float fragment, a runtime scale of another dtype), GeometryError
    (bad dims, scale or weight_scale, or an axis whose lines span warps: a PlanError naming the
    fragment and the axis). No instruction but two register initializations (and, with a
    runtime scale, one multiplication); nothing is stored or synchronized."""

    DIMS = 1
    SCALE = 1.0
    WEIGHT_SCALE = 1
    __slots__ = ()

    def __new__(cls, scores, dims=1, scale=1.0, weight_scale=1):
        scores = _scores(scores, "tylo.SoftmaxState")
        if isinstance(dims, bool) or dims not in (0, 1):
            raise GeometryError(f"tylo.SoftmaxState: dims={dims!r} must be a static axis, 0 "
                                f"(columns are the lines) or 1 (rows are the lines)")
        if isinstance(scale, Scalar):
            if scale.dtype is not dtypes.Float32:
                raise TypeMismatchError(f"tylo.SoftmaxState: a runtime scale must be Float32, "
                                        f"got a runtime {scale.dtype} (convert it: .to(Float32))")
        elif isinstance(scale, bool) or not isinstance(scale, (int, float)) \
                or not _math.isfinite(scale) or scale <= 0:
            raise GeometryError(f"tylo.SoftmaxState: scale={scale!r} must be a static positive "
                                f"finite number or a runtime Float32 (max(scale * s) = scale * "
                                f"max(s) needs it positive)")
        if isinstance(weight_scale, bool) or not isinstance(weight_scale, (int, float)) \
                or not _math.isfinite(weight_scale) or weight_scale < 1 \
                or _math.frexp(weight_scale)[0] != 0.5:
            raise GeometryError(f"tylo.SoftmaxState: weight_scale={weight_scale!r} must be a "
                                f"static power of two >= 1 (log2 of it is the exponent's offset)")
        try:
            own = reduced_ownership(scores.ownership, dims)
        except PlanError as e:  # the lines span warps
            raise type(e)(f"tylo.SoftmaxState: cannot reduce {_AXES[dims]} of the scores "
                          f"(ownership {scores.ownership}) inside a warp: {e.message}; a softmax "
                          f"line must stay inside one warp") from None
        if isinstance(scale, Scalar):
            kind = _runtime_state_class(dims, scale, int(weight_scale))
        else:
            kind = _state_class(dims, float(scale), int(weight_scale))
        return kind((full(own, -_math.inf, dtypes.Float32), full(own, 0.0, dtypes.Float32)))

    @property
    def maximum(self) -> Fragment:
        """The running maximum of the unscaled scores, per line (Float32; -inf when empty)."""
        return self[0]

    @property
    def total(self) -> Fragment:
        """The running sum of exp(scale * (s - maximum)), per line (Float32; 0 when empty)."""
        return self[1]

    @property
    def dims(self) -> int:
        return self.DIMS

    @property
    def scale(self):
        """The static scale (a float), or the runtime Float32 scalar."""
        return self.SCALE

    @property
    def weight_scale(self) -> int:
        return self.WEIGHT_SCALE


@functools.cache
def _state_class(dims: int, scale: float, weight_scale: int = 1) -> type:
    """The state type of one (dims, scale, weight_scale): its constructor takes (maximum,
    total), so that the runtime loops' `frontend.tracing.carried` rebuilds it from new
    leaves."""
    return type(f"SoftmaxState_dims{dims}", (SoftmaxState,),
                {"DIMS": dims, "SCALE": scale, "WEIGHT_SCALE": weight_scale, "__slots__": (),
                 "__new__": tuple.__new__})


def _runtime_state_class(dims: int, scale: Scalar, weight_scale: int) -> type:
    """The state type of a runtime scale (one per SoftmaxState call: it holds the scalar and
    its exponent coefficient, computed once here, before any loop that carries the state)."""
    return type(f"SoftmaxState_dims{dims}", (SoftmaxState,),
                {"DIMS": dims, "SCALE": scale, "WEIGHT_SCALE": weight_scale,
                 "COEFFICIENT": scale * _LOG2E, "__slots__": (), "__new__": tuple.__new__})


def _same_kind(left: SoftmaxState, right: SoftmaxState) -> bool:
    """Whether two states follow one line tiling's dims, scale (the same runtime scalar, for a
    runtime scale) and weight scale."""
    return type(left) is type(right) or (
        left.DIMS == right.DIMS and left.SCALE is right.SCALE
        and left.WEIGHT_SCALE == right.WEIGHT_SCALE)


def _scores(scores, what: str) -> Fragment:
    if not isinstance(scores, Fragment) or not scores.dtype.is_float \
            or scores.dtype in FP8_FORMATS or scores.dtype is dtypes.Float64:
        got = f"a fragment of {scores.dtype}" if isinstance(scores, Fragment) else repr(scores)
        raise TypeMismatchError(f"{what}: the scores must be a Float32, Float16 or BFloat16 "
                                f"fragment, got {got}")
    return scores.to(dtypes.Float32)


def _state(state, what: str) -> SoftmaxState:
    if not isinstance(state, SoftmaxState) or type(state) is SoftmaxState:
        raise TypeMismatchError(f"{what}: {state!r} is not a tylo.SoftmaxState")
    return state


def _coefficient(state: SoftmaxState):
    """c = scale * log2(e): a float (rounded to f32 as the constant) for a static scale, the
    runtime product made with the state for a runtime one."""
    if isinstance(state.SCALE, Scalar):
        return state.COEFFICIENT
    return state.SCALE * _LOG2E


def _offset(state: SoftmaxState) -> int:
    """log2(weight_scale): the exponent's offset (an exact small integer)."""
    return state.WEIGHT_SCALE.bit_length() - 1


def _safe(maximum: Fragment) -> Fragment:
    """The maximum, 0 where it is -inf (an empty line: FA2's guard against -inf - -inf)."""
    return select(maximum == -_math.inf, 0.0, maximum)


def _rescale(old: Fragment, safe_new: Fragment, c: float, ftz: bool) -> Fragment:
    """``exp2((m_old - m_new) * c)`` per line: 0 for an empty old line (-inf), 1 for the same
    maximum (the difference is formed first, exactly when the two are close: Sterbenz)."""
    return exp2((old - safe_new) * c, ftz=ftz)


def _ftz(ftz, what: str) -> bool:
    if not isinstance(ftz, bool):
        raise TypeMismatchError(f"{what}: ftz={ftz!r} must be a static True or False")
    return ftz


def softmax_update(state, scores, ftz=True):
    """Fold a chunk of scores into `state`: ``(new_state, weights, rescale)``.

    scores: a float fragment whose `reduced_ownership` along the state's dims is the state's
    (the same tiling of lines: each chunk is another block of columns of the same rows, for
    dims=1), finite or -inf (masked). weights: the unnormalized ``weight_scale * exp(scale *
    (s - m_new))`` (Float32, the scores' ownership; 0 for a masked score; module docstring for
    the accuracy);
    rescale: ``exp(scale * (m_old - m_new))`` per line (Float32, the state's ownership; 0 for an
    empty old state, 1 when the maximum did not change). A numerator accumulated from earlier
    chunks (``O = sum(weights @ V)``) is multiplied by rescale before this chunk's weighted
    values are added: ``O = tylo.scale(O, rescale) + weights @ V``. The new total is
    ``total * rescale + sum(weights)``. Collective over the warp (a maximum and a sum along
    dims). ftz (static bool): ``ex2.approx.ftz.f32`` (default) or, False, ``ex2.approx.f32``
    (module docstring, "Flushing"). Raises TypeMismatchError (not a state, not float scores,
    another ownership, a non-bool ftz)."""
    ftz = _ftz(ftz, "tylo.softmax_update")
    state = _state(state, "tylo.softmax_update")
    scores = _scores(scores, "tylo.softmax_update")
    dims = state.DIMS
    try:
        own = reduced_ownership(scores.ownership, dims)
    except PlanError:
        own = None
    if own != state.maximum.ownership:
        raise TypeMismatchError(
            f"tylo.softmax_update: scores of ownership {scores.ownership} reduce along dims="
            f"{dims} to {own}, not to the state's ownership {state.maximum.ownership}; a "
            f"state follows one tiling of the lines (make it with tylo.SoftmaxState(scores))")
    c = _coefficient(state)
    chunk = reduce_fragment("max", scores, dims, "tylo.softmax_update")
    new_max = maximum(state.maximum, chunk)
    safe = _safe(new_max)
    offset = _offset(state)
    line = fma(safe, -c, float(offset)) if offset else safe * -c
    weights = exp2(fma(scores, c, line), ftz=ftz)
    rescale = _rescale(state.maximum, safe, c, ftz)
    total = fma(state.total, rescale, reduce_fragment("sum", weights, dims,
                                                      "tylo.softmax_update"))
    return type(state)((new_max, total)), weights, rescale


def softmax_merge(left, right, ftz=True):
    """Combine two states of one line tiling (the same dims, scale and ownership), each the
    summary of other scores: ``(state, left_rescale, right_rescale)``; the numerators combine as
    ``O = tylo.scale(O_left, left_rescale) + tylo.scale(O_right, right_rescale)``. Two empty
    lines stay empty (both factors 0); floating-point merge order may change the result in the
    last bits. No shuffle: both states already hold every line's values. ftz: as for
    `softmax_update`. Raises TypeMismatchError for states of different kinds or ownerships."""
    ftz = _ftz(ftz, "tylo.softmax_merge")
    left = _state(left, "tylo.softmax_merge")
    right = _state(right, "tylo.softmax_merge")
    if not _same_kind(left, right) or left.maximum.ownership != right.maximum.ownership:
        raise TypeMismatchError(
            f"tylo.softmax_merge: states of dims {left.DIMS} / {right.DIMS}, scale {left.SCALE} "
            f"/ {right.SCALE}, ownerships {left.maximum.ownership} / {right.maximum.ownership}: "
            f"only states of one line tiling, dims and scale merge")
    c = _coefficient(left)
    new_max = maximum(left.maximum, right.maximum)
    safe = _safe(new_max)
    left_rescale = _rescale(left.maximum, safe, c, ftz)
    right_rescale = _rescale(right.maximum, safe, c, ftz)
    total = fma(left.total, left_rescale, right.total * right_rescale)
    return type(left)((new_max, total)), left_rescale, right_rescale


def softmax_normalize(state, numerator):
    """`numerator` (a Float32 fragment: the weighted sum ``O`` of a line's values, any
    ownership the state's broadcasts against, such as the PV accumulator) divided by each line's
    total: one ``rcp.rn.f32`` per line (correctly rounded) and one ``mul.rn`` per slot. Empty
    lines (total 0) give 0, not NaN. Raises TypeMismatchError (not a state, a fragment of
    another dtype, ownerships that do not broadcast)."""
    state = _state(state, "tylo.softmax_normalize")
    if not isinstance(numerator, Fragment) or numerator.dtype is not dtypes.Float32:
        got = f"a fragment of {numerator.dtype}" if isinstance(numerator, Fragment) \
            else repr(numerator)
        raise TypeMismatchError(f"tylo.softmax_normalize: the numerator must be a Float32 "
                                f"fragment, got {got}")
    inverse = select(state.total == 0.0, 0.0, rcp(state.total))
    return numerator * inverse


def softmax_logsumexp(state) -> Fragment:
    """``log(sum(exp(scale * s)))`` of each line (Float32, the state's ownership):
    ``(m c + log2(total)) * ln(2)`` with ``lg2.approx.f32`` (absolute error 2^-22 near 1,
    relative 2^-22 elsewhere, PTX ISA 9.7.3.20) and two roundings. Empty lines give -inf.
    Raises TypeMismatchError for anything but a state. With a weight_scale, log2 of it is
    subtracted from log2(total) first (one subtraction per line)."""
    state = _state(state, "tylo.softmax_logsumexp")
    c = _coefficient(state)
    offset = _offset(state)
    total = log2(state.total) - float(offset) if offset else log2(state.total)
    lse = fma(state.maximum, c, total) * _LN2
    return select(state.total == 0.0, -_math.inf, lse)
