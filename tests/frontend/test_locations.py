"""Source locations (tylo.dialects.locations): every traced op carries the user's file, line and
column; the passes keep them down to the ptx ops; pass errors show the user's line with a caret;
the PTX carries them as ``.file`` / ``.loc`` line info (PTX ISA 11.5.3, 11.5.4), which ptxas
assembles with ``-lineinfo``. No GPU needed."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import FileLineColLoc, UnknownLoc
from xdsl.utils.exceptions import VerifyException

import tylo
from tylo import Float32
from tylo.compiler.support.errors import CompileError
from tylo.dialects.builder import emit
from tylo.dialects.locations import first_invalid, reset_handled, source_location
from tylo.dialects.ptx import EntryOp
from tylo.frontend.jit import build
from tylo.passes.pipeline import emit_ptx, pass_error

HERE = str(Path(__file__))
SOURCE = Path(__file__).read_text().splitlines()


def line_of(marker: str) -> int:
    """The 1-based line of this file that ends with the comment ``# <marker>``."""
    (line,) = [i for i, text in enumerate(SOURCE, 1) if text.rstrip().endswith(f"# {marker}")]
    return line


@tylo.func
def twice(x):
    return x * 2.0  # helper-mul


@tylo.kernel
def scaled(out: tylo.Tensor, a: tylo.Tensor, n):  # def
    i = tylo.thread_idx()  # tid
    if i < n:  # guard
        v = a[i]  # load
        out[i] = twice(v) + 1.0  # store


@tylo.kernel
def fenced(out: tylo.Tensor):
    t = tylo.thread_idx()
    s = tylo.SharedTile(tylo.shared_alloc(Float32, 128), tylo.Layout((128,), (1,)))
    s[t] = 1.0
    tylo.fence_proxy_async()  # fence
    tylo.barrier()
    out[t] = s[127 - t]


ARGS = (tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1), 4)


def _traced(kernel=scaled, args=ARGS, arch="sm_90a"):
    specs, values = kernel._bind(args, {}, describe=True)
    return build.trace(kernel, specs, values, (32, 1, 1), arch)


def _lowered(kernel=scaled, args=ARGS, arch="sm_90a"):
    specs, values = kernel._bind(args, {}, describe=True)
    module, _, _ = build.ptx_module(kernel, specs, values, (32, 1, 1), arch)
    return module


def _line(op) -> int:
    assert isinstance(op.location, FileLineColLoc), op.name
    assert op.location.filename.data == HERE, (op.name, op.location)
    return op.location.line.data


def test_every_traced_op_is_at_the_line_that_made_it():
    module = _traced()
    (fn,) = module.ops
    ops = [op for op in module.walk() if op is not module]
    lines = {_line(op) for op in ops}  # every op is located in this file
    assert _line(fn) == line_of("def")
    by_name = {}
    for op in ops:
        by_name.setdefault(op.name, set()).add(_line(op))
    assert by_name["tylo.thread_idx"] == {line_of("tid")}
    assert by_name["scf.if"] == {line_of("guard")}
    assert by_name["tylo.load_element"] == {line_of("load")}
    assert by_name["tylo.store_element"] == {line_of("store")}
    assert line_of("helper-mul") in by_name["arith.mulf"]  # inside the @tylo.func, its line
    assert lines <= {line_of(m) for m in ("def", "tid", "guard", "load", "store", "helper-mul")}


def test_columns_are_those_of_the_expression():
    module = _traced()
    (tid,) = [op for op in module.walk() if op.name == "tylo.thread_idx"]
    text = SOURCE[line_of("tid") - 1]
    assert tid.location.column.data == text.index("tylo.thread_idx") + 1  # 1-based, as MLIR's
    where = source_location(tid)
    assert (where.filename, where.line, where.column) == (HERE, line_of("tid"), text.index("tylo"))
    assert where.source_line.strip() == text.strip()


# what has no line of the kernel's body: the entry and its parameter reads are at the def line
_AT_THE_DEF = ("ptx.entry", "ptx.ld_param", "ptx.cvta")


def test_every_ptx_op_keeps_the_line_of_the_op_it_lowers():
    module = _lowered()
    (entry,) = [op for op in module.ops if isinstance(op, EntryOp)]
    assert isinstance(module.location, UnknownLoc)  # the module itself is no user's
    lines: dict[str, set[int]] = {}
    for op in entry.walk():
        lines.setdefault(op.name, set()).add(_line(op))
    for name in _AT_THE_DEF:
        assert lines[name] == {line_of("def")}, name
    assert lines["ptx.special"] == {line_of("tid")}
    assert lines["ptx.setp"] == {line_of("guard")}
    assert lines["ptx.ld"] == {line_of("load")}
    assert lines["ptx.st"] == {line_of("store")}
    assert lines["ptx.mul"] >= {line_of("helper-mul")}


def test_a_pass_error_shows_the_line_and_a_caret():
    with pytest.raises(CompileError) as info:
        fenced.compile(np.zeros(128, np.float32), block=128, arch="sm_80")
    err = info.value
    assert err.message.startswith("pass tylo-lower-to-ptx failed on kernel 'fenced': "
                                  "fence.proxy.async needs sm_90")  # the pass named once
    assert (err.location.filename, err.location.line) == (HERE, line_of("fence"))
    head, source, caret = str(err).splitlines()[:3]
    assert head == f"{HERE}:{line_of('fence')}:5"
    assert source.strip() == "tylo.fence_proxy_async()  # fence"
    assert caret.strip() == "^"


def test_a_verifier_error_after_a_pass_names_the_invalid_op():
    module = _traced()
    (add,) = [op for op in module.walk() if op.name == "arith.addf"]
    (tid,) = [op for op in module.walk() if op.name == "tylo.thread_idx"]
    add.operands = [add.operands[0], tid.results[0]]  # f32 + i32: the verifier refuses it
    found = first_invalid(module)
    assert found is not None and found[0] is add
    reset_handled()  # (no pass is handling an op)
    error = pass_error("cse", "scaled", module, VerifyException("invalid IR"))
    assert "pass cse failed on kernel 'scaled': arith.addf: " in error.message
    assert (error.location.filename, error.location.line) == (HERE, line_of("store"))
    assert str(error).startswith(f"{HERE}:{line_of('store')}:")
    assert "^" in str(error).splitlines()[2]


def _bad_add(x, i):
    """Emit f32 + i32 (a plain Python function of this file: its line is the op's)."""
    return emit(arith.AddfOp(x.value, i.value))  # bad-op


@tylo.kernel
def invalid(out: tylo.Tensor, a: tylo.Tensor):
    i = tylo.thread_idx()
    _bad_add(a[i], i)
    out[i] = 0.0


def test_invalid_traced_ir_is_refused_at_the_line_that_made_the_op():
    with pytest.raises(CompileError) as info:
        invalid.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1))
    err = info.value
    assert "kernel invalid produced invalid IR" in err.message
    assert (err.location.filename, err.location.line) == (HERE, line_of("bad-op"))


def _without_line_info(text: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True)
                   if not re.match(r"\s*\.(file|loc)\b", line))


def test_ptx_line_info_points_at_the_kernel_lines():
    ptx = emit_ptx(_lowered())
    files = re.findall(r'^\.file\t(\d+) "(.*)"$', ptx, re.M)
    assert files == [("1", HERE)]
    head = ptx.split(".file")[0]
    assert head.endswith(".address_size 64\n")  # declared right after the target
    locs = [tuple(map(int, m)) for m in re.findall(r"^\t\.loc\t(\d+) (\d+) (\d+)$", ptx, re.M)]
    assert {f for f, _, _ in locs} == {1}
    lines = {line for _, line, _ in locs}
    assert {line_of(m) for m in ("def", "tid", "guard", "load", "store", "helper-mul")} <= lines
    # a .loc only where the location changes, never twice in a row, and always before an
    # instruction of the body
    body = ptx.splitlines()
    for i, text in enumerate(body):
        if text.startswith("\t.loc"):
            nxt = body[i + 1]
            assert nxt.startswith("\t") and not nxt.startswith("\t.") and not nxt.endswith(":")
    assert all(a != b for a, b in zip(locs, locs[1:]))


def test_ptx_without_line_info_is_the_ptx_of_an_unlocated_module():
    module = _lowered()
    located = emit_ptx(module)
    for op in module.walk():
        op.location = UnknownLoc()
    plain = emit_ptx(module)
    assert ".loc" not in plain and ".file" not in plain
    assert _without_line_info(located) == plain


def test_ptxas_assembles_the_line_info():
    ptxas = pytest.importorskip("tylo.runtime.ptxas")
    try:
        ptxas.find_ptxas()
    except tylo.TyloError:
        pytest.skip("no ptxas")
    result = ptxas.assemble(emit_ptx(_lowered()), "sm_90a", "scaled")
    assert "-lineinfo" in result.command
    assert result.cubin[:4] == b"\x7fELF"
    assert b".nv_debug_line_sass" in result.cubin or b".debug_line" in result.cubin


def test_ptx_without_line_info_is_assembled_without_lineinfo():
    """Hand-written PTX (no .loc) goes to ptxas without -lineinfo: ptxas 13.0 aborts on this
    kernel with it ("Fatal glibc error: malloc assertion failure in sysmalloc", the H100 run of
    tests/emulator/test_semantics_vs_gpu.py, 2026-12-07)."""
    ptxas = pytest.importorskip("tylo.runtime.ptxas")
    try:
        ptxas.find_ptxas()
    except tylo.TyloError:
        pytest.skip("no ptxas")
    regs = "\n".join(f".reg .{c} {p}<8>;" for c, p in (("b32", "%r"), ("b64", "%rd"), ("f32", "%f")))
    text = "\n".join([
        ".version 8.4", ".target sm_90a", ".address_size 64",
        ".visible .entry k(.param .u64 k_0)", "{", regs,
        "ld.param.u64 %rd1, [k_0];", "cvta.to.global.u64 %rd2, %rd1;",
        "ld.global.f32 %f1, [%rd2];", "add.rn.f32 %f3, %f1, %f1;",
        "st.global.f32 [%rd2], %f3;", "ret;", "}"])
    result = ptxas.assemble(text, "sm_90a", "k")
    assert "-lineinfo" not in result.command
    assert result.cubin[:4] == b"\x7fELF"
