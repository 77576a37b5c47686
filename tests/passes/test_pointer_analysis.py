"""passes/analysis/pointer_analysis.py: the constant folder, the walk of ``tylo.ptr_add`` chains and the
alignment it proves. The folder is checked against numpy's int32 arithmetic; the alignment and
the misalignment verdicts against the addresses a random offset expression takes for random
runtime values and allocation placements (a claim that one address breaks fails the test);
known cases pin down that the analysis is also precise where the callers need it (a
`tylo.shared_tiles` stage, warp-uniform offsets for tylo-plan-copies)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.parser import Parser

from tylo.passes.analysis.pointer_analysis import (
    constant,
    pointer_address,
    pointer_place,
    shared_alignment,
)
from tylo.passes.universe import make_context

CTX = make_context()


def _values(text: str, args: str = "%x: i32, %y: i32") -> dict:
    """The SSA values of a one-function module, by name."""
    body = "\n".join(f"  {line}" for line in text.strip().splitlines())
    module = Parser(CTX, f"func.func @k({args}) {{\n{body}\n  func.return\n}}").parse_module()
    fn = module.body.block.first_op
    named = {a.name_hint: a for a in fn.body.block.args}
    for op in fn.walk():
        named.update({r.name_hint: r for r in op.results})
    return named


# -- constants -----------------------------------------------------------------------------------
I32 = st.integers(-(2**31), 2**31 - 1)
NUMPY = {
    "addi": np.add, "subi": np.subtract, "muli": np.multiply, "andi": np.bitwise_and,
    "ori": np.bitwise_or, "xori": np.bitwise_xor, "shli": np.left_shift,
    "shrsi": np.right_shift,
}


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(NUMPY)), I32, I32, st.integers(0, 31))
def test_folds_as_int32_arithmetic(name, a, b, shift):
    """Each op of the folder on i32 constants gives numpy's wrapped int32 result."""
    if name.startswith("sh"):
        b = shift
    v = _values(f"%a = arith.constant {a} : i32\n%b = arith.constant {b} : i32\n"
                f"%r = arith.{name} %a, %b : i32")["r"]
    with np.errstate(over="ignore"):
        want = int(NUMPY[name](np.int32(a), np.int32(b)))
    assert constant(v) == want


@pytest.mark.parametrize("text, want", [
    ("%r = arith.shli %a, %c32 : i32", None),          # a shift by the width is poison
    ("%r = arith.shrsi %a, %c32 : i32", None),
    ("%r = arith.divsi %a, %c32 : i32", None),         # not in the table
    ("%r = arith.addi %a, %x : i32", None),            # a runtime operand
    ("%m = arith.muli %a, %c32 : i32\n%r = arith.shli %m, %a : i32", 96 << 3),  # nested
])
def test_folder_edges(text, want):
    v = _values(f"%a = arith.constant 3 : i32\n%c32 = arith.constant 32 : i32\n{text}")["r"]
    assert constant(v) == want


# -- pointers: known cases -----------------------------------------------------------------------
def _address(lines: str, align: int = 1024, dtype: str = "bf16", warp_uniform: bool = False):
    text = (f"%p = tylo.shared_alloc 65536, align {align} : !tylo.ptr<{dtype}, shared>\n"
            "%t = tylo.thread_idx \"x\" : i32\n"
            + "\n".join(f"%c{c} = arith.constant {c} : i32"
                        for c in (1, 3, 4, 5, 8, 32, 64, 4096, 8192))
            + "\n" + lines)
    v = _values(text)["q"]
    return (pointer_address(v, warp_uniform=warp_uniform),
            shared_alignment(v, warp_uniform=warp_uniform))


def _ptr(offset: str, dtype: str = "bf16") -> str:
    return f"%q = tylo.ptr_add %p, {offset} : !tylo.ptr<{dtype}, shared>, i32"


@pytest.mark.parametrize("lines, static, runtime, alignment", [
    # a shared_tiles stage: index * stage elements (8192 bf16 = 16 KiB), a runtime multiple
    (f"%o = arith.muli %x, %c8192 : i32\n{_ptr('%o')}", 0, 16384, 1024),
    (f"%o = arith.muli %c8192, %x : i32\n{_ptr('%o')}", 0, 16384, 1024),
    (f"%o = arith.shli %x, %c4 : i32\n{_ptr('%o')}", 0, 32, 32),
    # sums of terms: the stage plus a constant, two scaled runtime values, a difference
    (f"%m = arith.muli %x, %c8192 : i32\n%o = arith.addi %m, %c64 : i32\n{_ptr('%o')}",
     128, 16384, 128),
    (f"%m = arith.muli %x, %c4096 : i32\n%n = arith.shli %y, %c5 : i32\n"
     f"%o = arith.subi %m, %n : i32\n{_ptr('%o')}", 0, 64, 64),
    # a scaled sum: (x * 8 + 4) * 32 = 256 x + 128
    (f"%m = arith.muli %x, %c8 : i32\n%s = arith.addi %m, %c4 : i32\n"
     f"%o = arith.muli %s, %c32 : i32\n{_ptr('%o')}", 256, 512, 256),
    # two ptr_adds: a stage, then a static step inside it
    ("%o = arith.muli %x, %c8192 : i32\n%r = tylo.ptr_add %p, %o : !tylo.ptr<bf16, shared>, i32\n"
     "%q = tylo.ptr_add %r, %c4096 : !tylo.ptr<bf16, shared>, i32", 8192, 16384, 1024),
    # nothing known of a runtime offset but that it counts whole elements; times zero is zero
    (_ptr("%x"), 0, 2, 2),
    (f"%o = arith.muli %x, %y : i32\n{_ptr('%o')}", 0, 2, 2),
    (f"%z = arith.subi %c1, %c1 : i32\n%o = arith.muli %x, %z : i32\n{_ptr('%o')}", 0, None, 1024),
    # constants canonicalize left unfolded; an i32 constant written unsigned is negative
    (f"%o = arith.muli %c64, %c3 : i32\n{_ptr('%o')}", 384, None, 128),
    (f"%o = arith.constant 4294967295 : i32\n{_ptr('%o')}", -2, None, 2),
])
def test_known_offsets(lines, static, runtime, alignment):
    """(static bytes, runtime multiple in bytes, alignment) of offsets the kernels make, from a
    bf16 allocation aligned to 1024 bytes."""
    address, known = _address(lines)
    assert (address.static_bytes, address.runtime_multiple, known) == (static, runtime, alignment)


def test_allocation_alignment_bounds_everything():
    address, known = _address(f"%o = arith.muli %x, %c8192 : i32\n{_ptr('%o')}", align=16)
    assert known == 16 and address.alignment == 16
    address, known = _address(f"%o = arith.muli %x, %c8 : i32\n{_ptr('%o', 'f32')}", dtype="f32")
    assert (address.runtime_multiple, known) == (32, 32)  # f32 elements: 32-byte steps


def test_warp_uniform_option():
    """A lane-dependent runtime term proves nothing when warp uniformity is asked (each lane
    would compute another pointer); the warp index and kernel arguments are uniform."""
    lane = f"%o = arith.muli %t, %c8 : i32\n{_ptr('%o')}"
    assert _address(lane)[1] == 16
    assert _address(lane, warp_uniform=True) == (None, 0)
    warp = f"%w = arith.divsi %t, %c32 : i32\n%o = arith.muli %w, %c8 : i32\n{_ptr('%o')}"
    assert _address(warp, warp_uniform=True)[1] == 16
    arg = f"%o = arith.muli %x, %c8 : i32\n{_ptr('%o')}"
    assert _address(arg, warp_uniform=True)[1] == 16


def test_pointer_place():
    values = _values(
        "%p = tylo.shared_alloc 4096, align 128 : !tylo.ptr<f32, shared>\n"
        "%c3 = arith.constant 3 : i32\n%c5 = arith.constant 5 : i32\n"
        "%o = arith.addi %c3, %c5 : i32\n"
        "%a = tylo.ptr_add %p, %o : !tylo.ptr<f32, shared>, i32\n"
        "%b = tylo.ptr_add %a, %x : !tylo.ptr<f32, shared>, i32\n"
        "%g = tylo.ptr_add %gp, %c3 : !tylo.ptr<f32, global>, i32",
        "%x: i32, %y: i32, %gp: !tylo.ptr<f32, global>")
    alloc = values["p"].owner
    assert pointer_place(values["a"]) == (alloc, 32)
    assert pointer_place(values["b"]) == (alloc, None)
    assert pointer_place(values["g"]) == (None, 12)  # a kernel parameter: no root op
    assert shared_alignment(values["g"]) == 0


# -- pointers: soundness on random offsets -------------------------------------------------------
LEAF = st.tuples(st.just("leaf"), st.sampled_from(["x", "y", "t"]))
CONST = st.tuples(st.just("const"), st.integers(-300, 5000))


def _terms(children):
    return st.one_of(
        st.tuples(st.just("mul"), children, st.integers(-64, 4096)),
        st.tuples(st.just("rmul"), st.integers(-64, 4096), children),
        st.tuples(st.just("shl"), children, st.integers(0, 12)),
        st.tuples(st.sampled_from(["add", "sub"]), children, children),
    )


EXPR = st.recursive(st.one_of(LEAF, CONST), _terms, max_leaves=6)


def _emit(e, lines: list) -> str:
    """Append the MLIR lines of expression `e`; the name of its value."""
    name = f"%v{len(lines)}"
    kind = e[0]
    if kind == "leaf":
        return f"%{e[1]}"
    if kind == "const":
        lines.append(f"{name} = arith.constant {e[1]} : i32")
        return name
    if kind in ("mul", "shl"):
        a = _emit(e[1], lines)
        c = _emit(("const", e[2]), lines)
        operands = f"{a}, {c}"
    elif kind == "rmul":
        c = _emit(("const", e[1]), lines)
        operands = f"{c}, {_emit(e[2], lines)}"
    else:
        operands = f"{_emit(e[1], lines)}, {_emit(e[2], lines)}"
    name = f"%v{len(lines)}"
    op = {"mul": "muli", "rmul": "muli", "shl": "shli", "add": "addi", "sub": "subi"}[kind]
    lines.append(f"{name} = arith.{op} {operands} : i32")
    return name


def _i32(x: int) -> int:
    return (x + 2**31) % 2**32 - 2**31


def _eval(e, env: dict) -> int:
    """The i32 value of `e` (each operation wraps, as the hardware computes it)."""
    kind = e[0]
    if kind == "leaf":
        return env[e[1]]
    if kind == "const":
        return e[1]
    if kind == "mul":
        return _i32(_eval(e[1], env) * e[2])
    if kind == "rmul":
        return _i32(e[1] * _eval(e[2], env))
    if kind == "shl":
        return _i32(_eval(e[1], env) << e[2])
    a, b = _eval(e[1], env), _eval(e[2], env)
    return _i32(a + b if kind == "add" else a - b)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(EXPR, min_size=1, max_size=3),
    st.sampled_from([("bf16", 2), ("f32", 4), ("i8", 1)]),
    st.sampled_from([16, 128, 1024]),
    st.lists(st.tuples(st.integers(-50, 50), st.integers(-50, 50), st.integers(0, 383),
                       st.integers(0, 200)), min_size=8, max_size=8),
    st.sampled_from([128, 256, 512, 1024]),
)
def test_claims_hold_for_every_runtime_value(offsets, dtype, align, samples, period):
    """A chain of ptr_adds by random offset expressions over x, y (arguments) and t
    (%tid.x): every address it takes, for runtime values and an allocation at any multiple of
    its alignment, is a multiple of the claimed alignment; an `excludes` verdict is never
    contradicted; a static offset is exact."""
    name, size = dtype
    lines = [f"%p = tylo.shared_alloc 4096, align {align} : !tylo.ptr<{name}, shared>",
             '%t = tylo.thread_idx "x" : i32']
    prev = "%p"
    for i, e in enumerate(offsets):
        v = _emit(e, lines)
        lines.append(f"%q{i} = tylo.ptr_add {prev}, {v} : !tylo.ptr<{name}, shared>, i32")
        prev = f"%q{i}"
    pointer = _values("\n".join(lines))[prev[1:]]
    address = pointer_address(pointer)
    known = address.alignment
    assert known > 0 and known & (known - 1) == 0
    uniform = shared_alignment(pointer, warp_uniform=True)
    assert uniform in (0, known)
    for x, y, t, slot in samples:
        env = {"x": x, "y": y, "t": t}
        at = slot * align + sum(_eval(e, env) for e in offsets) * size
        assert at % known == 0
        if address.excludes(period):
            assert at % period != 0
        if address.runtime_multiple is None:
            assert address.static_bytes == sum(_eval(e, env) for e in offsets) * size
    assert pointer_place(pointer)[1] == (
        address.static_bytes if address.runtime_multiple is None else None)
