"""Builders the rewritten kernel calls (as ``__tylo__.<name>``) for control flow.

Each takes the values of the names a region assigns and returns their values after it. Runtime
values (scalars, fragments, and tuples or lists of them: `carried`) flow through the ``scf`` op
as results and loop-carried values;
static values must come out of every path unchanged (else a CompileError says which name); a
name bound on one path only becomes `Unbound` and raises if used later.
"""

from __future__ import annotations

from xdsl.dialects import scf
from xdsl.ir import Block, Region

from ...compiler.hardware import dtypes
from ...compiler.support.errors import CompileError, TypeMismatchError, UnsupportedError
from ...dialects.builder import emit
from ...dialects.scalars import Scalar, as_scalar, python_dtype
from .carried import LEAF, flat_names, flatten_all, regroup, spec_of
from ..language.fragments import Fragment
from ..language.tiles import Pointer, Tile
from .tracing import current
from .unbound import Unbound


_UNSET = Unbound("?", "it was not assigned before this point")


def get(thunk):
    """The current value of a name, or an Unbound marker when it has none yet."""
    try:
        return thunk()
    except NameError:
        return _UNSET


def unbound(name: str) -> Unbound:
    return Unbound(name, "the loop variable of a runtime loop does not exist after the loop")


def unsupported(message: str):
    raise UnsupportedError(message)


def checked_print(function, *args, **kwargs):
    """``print(...)`` in a kernel: Python's print runs while the kernel is traced, so it may show
    static values (layouts, plans, shapes); a runtime value has no value yet and is refused."""
    if function is print and any(_runtime(a) for a in (*args, *kwargs.values())):
        raise UnsupportedError(
            "print() runs once while the kernel is compiled, and a runtime value has no value "
            "then: use tylo.print(fmt, *values) to print from the GPU (printf), or print static "
            "values only")
    return function(*args, **kwargs)


def formatted(v):
    """The value of a ``{v}`` in an f-string of a kernel: static values only."""
    if _runtime(v):
        raise UnsupportedError(
            f"an f-string is built once while the kernel is compiled, when a runtime {v.dtype} "
            "has no value (it would format as placeholder text): use tylo.print(fmt, *values) "
            "with '{}' placeholders to print from the GPU")
    return v


def no_result(v):
    """The value of a kernel's ``return v``: None only."""
    if v is not None:
        raise UnsupportedError(
            "a kernel returns no value (it runs on the GPU; only what it stores is kept): "
            "store the result into an output array argument, or return it from a @tylo.func "
            "helper")
    return v


def _runtime(v) -> bool:
    return isinstance(v, (Scalar, Fragment))


def is_static(v) -> bool:
    """True when `v` is a compile-time value (anything but a runtime scalar or fragment)."""
    if isinstance(v, Fragment):
        raise TypeMismatchError("a fragment cannot be used as a condition (one value per slot): "
                                "choose per slot with tylo.select(f > x, a, b), or test one "
                                "slot, f[v] > x")
    return not isinstance(v, Scalar)


def _condition(v) -> Scalar:
    if isinstance(v, Scalar):
        return v if v.dtype is dtypes.Bool else v != 0
    return as_scalar(bool(v), dtypes.Bool)


def _unchanged(before, after) -> bool:
    if before is after:
        return True
    if isinstance(before, (Tile, Pointer, Unbound)) or isinstance(after, (Tile, Pointer, Unbound)):
        return False
    try:
        return bool(type(before) is type(after) and before == after)
    except Exception:
        return False


def _type_of(v):
    """(IR type, rebuild) for a runtime value or a Python number promoted to one."""
    if isinstance(v, Scalar):
        return v.value.type, lambda ssa: Scalar(ssa, v.dtype)
    if isinstance(v, Fragment):
        def rebuild(ssa):
            from ..language.wgmma import carry_plan  # an accumulator keeps its WGMMA plan (finish_mma)

            return carry_plan(v, Fragment(ssa, v.dtype, v.ownership))
        return v.value.type, rebuild
    raise AssertionError(v)


def _conform(v, like, name: str):
    """`v` as a runtime value of `like`'s type (numbers become constants), or raise."""
    if isinstance(like, Scalar):
        if isinstance(v, Scalar) and v.dtype is not like.dtype:
            raise TypeMismatchError(
                f"'{name}' is {like.dtype} on one path and {v.dtype} on another; convert with .to()"
            )
        if isinstance(v, (Scalar, int, float)) and not isinstance(v, Fragment):
            return as_scalar(v, like.dtype)
    if isinstance(like, Fragment):
        if isinstance(v, Fragment) and v.ownership == like.ownership and v.dtype is like.dtype:
            return v
        if isinstance(v, Fragment):
            raise TypeMismatchError(
                f"'{name}' is a fragment of {like.dtype} with ownership {like.ownership} on one "
                f"path and of {v.dtype} with ownership {v.ownership} on another"
            )
    raise TypeMismatchError(f"'{name}' is {like!r} on one path and {v!r} on another")


def _is_number(v) -> bool:
    return isinstance(v, (int, float))


def _common_dtype(a, b):
    """The runtime dtype two Python constants share: Bool, an integer, or Float32."""
    if isinstance(a, bool) and isinstance(b, bool):
        return dtypes.Bool
    if isinstance(a, float) or isinstance(b, float):
        return dtypes.Float32
    wide = python_dtype(int(a)) is dtypes.Int64 or python_dtype(int(b)) is dtypes.Int64
    return dtypes.Int64 if wide else dtypes.Int32


def _promote(v):
    """Python numbers carried by a runtime loop become runtime scalars."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return as_scalar(v, python_dtype(v))
    return v


# ---------------------------------------------------------------------------------------------


def _through_leaves(names, values, what: str):
    """(specs, leaf names, leaf values, wrap) when a value is a tuple or list holding runtime
    values (`carried`), else None: `wrap(fn, skip)` makes a region function that takes and
    returns leaves (its first `skip` arguments passed as they are)."""
    specs = [spec_of(v) for v in values]
    if all(s is LEAF for s in specs):
        return None

    def wrap(fn, skip: int = 0):
        def leaves_fn(*args):
            out = fn(*args[:skip], *regroup(specs, list(args[skip:])))
            return flatten_all(out, specs, names, what)
        return leaves_fn

    return specs, flat_names(names, specs), flatten_all(values, specs, names, what), wrap


def if_(cond, then_fn, else_fn, names, values):
    """Build ``scf.if`` for a runtime condition; return the names' values after it."""
    flat = _through_leaves(names, values, "runtime if")
    if flat is not None:
        specs, leaf_names, leaves, wrap = flat
        out = if_(cond, wrap(then_fn), wrap(else_fn), leaf_names, leaves)
        return tuple(regroup(specs, list(out)))
    c = _condition(cond)
    tracer = current()
    blocks, outs = [Block(), Block()], []
    for block, fn in zip(blocks, (then_fn, else_fn)):
        with tracer.inside(block):
            outs.append(list(fn(*values)))
    merged = list(values)
    carried: list[int] = []
    for i, name in enumerate(names):
        a, b = outs[0][i], outs[1][i]
        if isinstance(a, Unbound) or isinstance(b, Unbound):
            merged[i] = a if a is b else Unbound(name, "it is assigned on one branch of a runtime if only")
        elif _runtime(a) or _runtime(b):
            like = a if _runtime(a) else b
            with tracer.inside(blocks[0]):
                outs[0][i] = _conform(a, like, name)
            with tracer.inside(blocks[1]):
                outs[1][i] = _conform(b, like, name)
            carried.append(i)
        elif _unchanged(a, b):
            merged[i] = a
        elif _is_number(a) and _is_number(b):  # two constants: the value becomes runtime
            dtype = _common_dtype(a, b)
            with tracer.inside(blocks[0]):
                outs[0][i] = as_scalar(a, dtype)
            with tracer.inside(blocks[1]):
                outs[1][i] = as_scalar(b, dtype)
            carried.append(i)
        else:
            raise CompileError(
                f"'{name}' is a compile-time value that the branches of a runtime if set "
                f"differently ({a!r} vs {b!r}); it cannot depend on a runtime condition"
            )
    for block, out in zip(blocks, outs):
        with tracer.inside(block):
            emit(scf.YieldOp(*[out[i].value for i in carried]))
    types = [outs[0][i].value.type for i in carried]
    op = emit(scf.IfOp(c.value, types, Region(blocks[0]), Region(blocks[1])))
    for k, i in enumerate(carried):
        merged[i] = _type_of(outs[0][i])[1](op.results[k])
    return tuple(merged)


def _loop_state(names, values):
    """Split loop names into carried runtime values and static ones."""
    values = [_promote(v) if not isinstance(v, Unbound) else v for v in values]
    carried = [i for i, v in enumerate(values) if _runtime(v)]
    return values, carried


def _finish_body(out, values, carried, names, what: str):
    """The yielded runtime values; checks that static names did not change."""
    yielded = []
    for i, name in enumerate(names):
        if i in carried:
            yielded.append(_conform(out[i], values[i], name))
        elif not isinstance(values[i], Unbound) and not _unchanged(values[i], out[i]):
            raise CompileError(
                f"'{name}' is a compile-time value ({values[i]!r}) changed inside a {what}; "
                "only runtime scalars and fragments can change from one iteration to the next"
            )
    return yielded


def _after_loop(values, carried, names, results, what: str):
    merged = []
    k = 0
    for i, name in enumerate(names):
        if i in carried:
            merged.append(_type_of(values[i])[1](results[k]))
            k += 1
        elif isinstance(values[i], Unbound):
            merged.append(Unbound(name, f"it is first assigned inside a {what}"))
        else:
            merged.append(values[i])
    return tuple(merged)


def for_range(args, body_fn, names, values):
    """Build ``scf.for`` over ``range(*args)``; the step must be positive."""
    flat = _through_leaves(names, values, "runtime for loop")
    if flat is not None:
        specs, leaf_names, leaves, wrap = flat
        return tuple(regroup(specs, list(for_range(args, wrap(body_fn, 1), leaf_names, leaves))))
    if not 1 <= len(args) <= 3:
        raise CompileError(f"range expects 1 to 3 arguments, got {len(args)}")
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3] if len(args) == 2 else args
    if isinstance(step, int) and step <= 0:
        raise UnsupportedError(f"runtime loops need a positive step, got {step}")
    bounds = []
    for what, b in (("start", start), ("stop", stop), ("step", step)):
        s = as_scalar(b, dtypes.Int32)
        if not s.dtype.is_int:
            raise TypeMismatchError(f"range {what} must be an integer, got {s.dtype}")
        bounds.append(s if s.dtype is dtypes.Int32 else s.to(dtypes.Int32))
    values, carried = _loop_state(names, values)
    tracer = current()
    body = Block(arg_types=[bounds[0].value.type] + [values[i].value.type for i in carried])
    inner = list(values)
    for k, i in enumerate(carried):
        inner[i] = _type_of(values[i])[1](body.args[k + 1])
    with tracer.inside(body):
        index = Scalar(body.args[0], dtypes.Int32, nonneg=bounds[0].nonneg)  # scf.for steps up
        out = list(body_fn(index, *inner))
        yielded = _finish_body(out, values, carried, names, "runtime for loop")
        emit(scf.YieldOp(*[v.value for v in yielded]))
    op = emit(scf.ForOp(bounds[0].value, bounds[1].value, bounds[2].value,
                        [values[i].value for i in carried], Region(body)))
    return _after_loop(values, carried, names, op.results, "runtime for loop")


def static_while(cond_fn, values) -> bool:
    """True when a while loop can run as Python: its condition and carried names are static."""
    if any(_runtime(v) for v in values):
        return False
    with current().scratch():
        try:
            return is_static(cond_fn(*values))
        except CompileError:
            return False


def while_(cond_fn, body_fn, names, values):
    """Build ``scf.while``: the condition region, then the body region."""
    flat = _through_leaves(names, values, "runtime while loop")
    if flat is not None:
        specs, leaf_names, leaves, wrap = flat
        cond = lambda *xs: cond_fn(*regroup(specs, list(xs)))  # noqa: E731
        return tuple(regroup(specs, list(while_(cond, wrap(body_fn), leaf_names, leaves))))
    values, carried = _loop_state(names, values)
    types = [values[i].value.type for i in carried]
    tracer = current()
    before, after = Block(arg_types=types), Block(arg_types=types)

    def view(block):
        inner = list(values)
        for k, i in enumerate(carried):
            inner[i] = _type_of(values[i])[1](block.args[k])
        return inner

    with tracer.inside(before):
        c = _condition(cond_fn(*view(before)))
        emit(scf.ConditionOp(c.value, *before.args))
    with tracer.inside(after):
        out = list(body_fn(*view(after)))
        yielded = _finish_body(out, values, carried, names, "runtime while loop")
        emit(scf.YieldOp(*[v.value for v in yielded]))
    op = emit(scf.WhileOp([values[i].value for i in carried], types, Region(before), Region(after)))
    return _after_loop(values, carried, names, op.results, "runtime while loop")


# ---------------------------------------------------------------------------------------------
# Boolean expressions.


def and_(*thunks):
    """``a and b and ...`` with Python's short circuit: static operands decide in Python; a
    runtime operand guards the rest with an ``scf.if``, so ``i < n and x[i] > 0`` never reads
    ``x[i]`` when ``i >= n``. A runtime result is a Bool."""
    v = thunks[0]()
    rest = thunks[1:]
    if is_static(v):
        return v if not v or not rest else and_(*rest)
    if not rest:
        return v
    then = lambda _: (_condition(and_(*rest)),)  # noqa: E731
    return if_(_condition(v), then, lambda _: (False,), ("and",), (_UNSET,))[0]


def or_(*thunks):
    """``a or b or ...`` with Python's short circuit (see `and_`)."""
    v = thunks[0]()
    rest = thunks[1:]
    if is_static(v):
        return v if v or not rest else or_(*rest)
    if not rest:
        return v
    other = lambda _: (_condition(or_(*rest)),)  # noqa: E731
    return if_(_condition(v), lambda _: (True,), other, ("or",), (_UNSET,))[0]


def not_(v):
    return (not v) if is_static(v) else ~_condition(v)


def ifexp(cond, then_thunk, else_thunk):
    """``x if c else y``: a static c picks one side in Python; a runtime c builds an ``scf.if``
    that evaluates only the chosen side."""
    if is_static(cond):
        return then_thunk() if cond else else_thunk()
    name = ("the conditional expression",)
    return if_(cond, lambda _: (then_thunk(),), lambda _: (else_thunk(),), name, (_UNSET,))[0]


__all__ = [
    "get", "unbound", "unsupported", "formatted", "no_result",
    "is_static", "if_", "for_range", "static_while", "while_",
    "and_", "or_", "not_", "ifexp",
]
