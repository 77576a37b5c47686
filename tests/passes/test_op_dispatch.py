"""Lowerings find their handlers by op class, never by class name: tylo's and PTX's `LdMatrixOp`,
and ``tylo.yield`` and ``scf.yield``, share Python class names but not handlers."""

import pytest
from xdsl.dialects import func, scf
from xdsl.parser import Parser
from xdsl.utils.exceptions import PassFailedException

from tylo.dialects.ptx.matrix import LdMatrixOp as PtxLdMatrix
from tylo.dialects.tylo.ops import SplatOp
from tylo.dialects.tylo.ops import YieldOp as TyloYield
from tylo.passes.lower_fragments import LowerFragments, _Lowering
from tylo.passes.select.kernel import KernelSelection
from tylo.passes.analysis.op_table import OpTable
from tylo.passes.universe import make_context

CTX = make_context()
FRAGMENT = "!tylo.fragment<f32, #tylo.ownership<(32,2), (32,2):(1,32)>>"


def parse(text: str):
    return Parser(CTX, text).parse_module()


def first(module, cls):
    return next(op for op in module.walk() if isinstance(op, cls))


def test_select_ptx_refuses_a_ptx_ldmatrix_instead_of_lowering_it_as_tylo_ldmatrix():
    module = parse("""\
func.func @k() {
  %sm = ptx.mov_symbol "buf" : !ptx.reg<r21>
  %m = ptx.ldmatrix 1[%sm] : !ptx.reg<r21> -> (!ptx.reg<r24>)
  func.return
}""")
    kernel = KernelSelection(first(module, func.FuncOp), "sm_90a")
    with pytest.raises(PassFailedException, match="no PTX lowering for ptx.ldmatrix"):
        kernel.lower(first(module, PtxLdMatrix))


def test_tylo_yield_is_not_handled_as_scf_yield():
    """scf.yield of a fragment carries its slots; a tylo.yield met outside its map's expansion is
    refused (the handler of scf.yield would have rewritten its operands)."""
    module = parse(f"""\
func.func @k(%x: f32) {{
  %f = tylo.splat %x : f32 -> {FRAGMENT}
  func.return
}}""")
    splat = first(module, SplatOp)
    lowering = _Lowering("sm_90a")
    lowering.op(splat)
    scf_yield = scf.YieldOp(splat.result)
    lowering.op(scf_yield)
    assert list(scf_yield.operands) == [splat.value, splat.value]
    with pytest.raises(PassFailedException, match="tylo.yield on fragments is not supported"):
        lowering.op(TyloYield(splat.result))


def test_tylo_map_consumes_its_tylo_yield_inside_an_scf_for():
    module = parse(f"""\
func.func @k(%x: f32, %n: i32) {{
  %f = tylo.splat %x : f32 -> {FRAGMENT}
  %lb = arith.constant 0 : i32
  %st = arith.constant 1 : i32
  %r = scf.for %i = %lb to %n step %st iter_args(%a = %f) -> ({FRAGMENT}) : i32 {{
    %y = tylo.map %a : ({FRAGMENT}) -> {FRAGMENT} {{
    ^bb0(%e: f32):
      %s = arith.addf %e, %x : f32
      tylo.yield %s : f32
    }}
    scf.yield %y : {FRAGMENT}
  }}
  %v = tylo.slot %r[1] : {FRAGMENT} -> f32
  func.return
}}""")
    LowerFragments().apply(CTX, module)
    module.verify()
    text = str(module)
    assert "tylo.map" not in text and "tylo.yield" not in text and "tylo.fragment" not in text
    loop = first(module, scf.ForOp)
    assert len(loop.iter_args) == 2 and text.count("arith.addf") == 2
    assert [v.owner.name for v in loop.body.block.last_op.operands] == ["arith.addf", "arith.addf"]


def test_op_table_refuses_a_second_handler_and_finds_base_classes():
    table = OpTable()

    @table.on(scf.YieldOp)
    def handler(op):
        return op

    with pytest.raises(ValueError, match="YieldOp already has a handler"):
        table.on(scf.YieldOp)(handler)

    class Sub(scf.YieldOp):
        pass

    assert table.lookup(Sub.__new__(Sub)) is handler
    assert table.lookup(TyloYield.__new__(TyloYield)) is None
