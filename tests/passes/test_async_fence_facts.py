"""tylo-insert-async-fences reads op facts (`tylo.dialects.facts`), not lists of op classes: a new
op that declares a generic shared write gets its proxy fence, and a new async-proxy reader makes
the stores before it fenced, without the pass naming either."""

from xdsl.dialects.builtin import ModuleOp
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, traits_def
from xdsl.parser import Parser

from tylo.dialects import facts as F
from tylo.dialects.tylo import PointerType
from tylo.dialects.tylo.mbarrier_ops import FenceOp
from tylo.passes.insert_async_fences import InsertAsyncFences
from tylo.passes.universe import make_context


@irdl_op_definition
class SharedScatter(IRDLOperation):
    """A generic shared store the pass has never heard of."""

    name = "test.shared_scatter"
    traits = traits_def(F.MemoryAccess(F.WRITE, operand="pointer"))
    pointer = operand_def(PointerType)


@irdl_op_definition
class FactlessScatter(IRDLOperation):
    """The same op without its fact (what every op was before facts)."""

    name = "test.factless_scatter"
    pointer = operand_def(PointerType)


@irdl_op_definition
class AsyncSharedRead(IRDLOperation):
    """An async-proxy reader of shared memory, completed by tylo.tma_wait."""

    name = "test.async_shared_read"
    traits = traits_def(F.MemoryAccess(F.READ, proxy=F.ASYNC, operand="src"),
                        F.AsyncCompletion(("tylo.tma_wait",), committed_by="tylo.tma_commit"))
    src = operand_def(PointerType)


def _run(body: str) -> list[str]:
    ctx = make_context()
    for op in (SharedScatter, FactlessScatter, AsyncSharedRead):
        ctx.load_op(op)
    text = ("func.func @k(%v: bf16, %i: i32) {\n"
            "  %s = tylo.shared_alloc 512, align 1024 : !tylo.ptr<bf16, shared>\n"
            "  %p = tylo.ptr_add %s, %i : !tylo.ptr<bf16, shared>, i32\n"
            f"{body}\n  func.return\n}}")
    module: ModuleOp = Parser(ctx, text).parse_module()
    module.verify()
    InsertAsyncFences().apply(ctx, module)
    return [op.name + (f" {op.kind.data}" if isinstance(op, FenceOp) else "")
            for op in module.walk() if op.dialect_name() in ("tylo", "ptx", "test")]


WGMMA = """  %d = tylo.wgmma_encode %s, 4611686293305360384 : !tylo.ptr<bf16, shared>
  %z = arith.constant 0.000000e+00 : f32
  %r:4 = tylo.wgmma_instr(%z, %z, %z, %z), %d, %d {n = 8 : i64, types = "f32.bf16.bf16", tnsp_a = 0 : i64, tnsp_b = 0 : i64, scale_d_imm = 0 : i64} : (f32, f32, f32, f32) -> (f32, f32, f32, f32)
  tylo.wgmma_commit
  %w:4 = tylo.wgmma_wait 0 (%r#0, %r#1, %r#2, %r#3) : (f32, f32, f32, f32) -> (f32, f32, f32, f32)"""


def test_a_new_generic_shared_writer_is_fenced_before_the_barrier():
    names = _run('  "test.shared_scatter"(%p) : (!tylo.ptr<bf16, shared>) -> ()\n'
                 "  ptx.bar_sync 0\n" + WGMMA)
    i = names.index("test.shared_scatter")
    assert names[i + 1:i + 3] == ["tylo.fence proxy_async", "ptx.bar_sync"]


def test_without_its_fact_the_writer_gets_no_fence():
    names = _run('  "test.factless_scatter"(%p) : (!tylo.ptr<bf16, shared>) -> ()\n'
                 "  ptx.bar_sync 0\n" + WGMMA)
    assert "tylo.fence proxy_async" not in names


def test_a_new_async_reader_makes_the_stores_it_reads_fenced():
    names = _run("  tylo.store %v, %p : bf16, !tylo.ptr<bf16, shared>\n  ptx.bar_sync 0\n"
                 '  "test.async_shared_read"(%s) : (!tylo.ptr<bf16, shared>) -> ()')
    assert names[names.index("tylo.store") + 1] == "tylo.fence proxy_async"
    names = _run("  tylo.store %v, %p : bf16, !tylo.ptr<bf16, shared>\n  ptx.bar_sync 0")
    assert "tylo.fence proxy_async" not in names  # no async reader: no fence
