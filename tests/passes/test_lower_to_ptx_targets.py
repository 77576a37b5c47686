"""tylo-lower-to-ptx refuses instructions its target does not run (ptxas would refuse them too,
later and without naming the pass): stmatrix below sm_90, FP8 cvt below sm_89."""

import pytest
from xdsl.parser import Parser
from xdsl.utils.exceptions import PassFailedException

from test_plan_copies import STORE

from tylo.passes.lower_fragments import LowerFragments
from tylo.passes.lower_tiles import LowerTiles
from tylo.passes.lower_to_ptx import LowerToPtx
from tylo.passes.plan_copies import PlanCopies
from tylo.passes.universe import make_context

CTX = make_context()

FP8 = """\
func.func @k(%x: f32) {
  %y = arith.truncf %x : f32 to f8E4M3FN
  func.return
}"""


def lower(text: str, plan_arch: str, arch: str):
    module = Parser(CTX, text).parse_module()
    for p in (PlanCopies(arch=plan_arch), LowerFragments(), LowerTiles(), LowerToPtx(arch=arch)):
        p.apply(CTX, module)
    return module


def test_stmatrix_needs_sm90():
    assert "ptx.stmatrix" in str(lower(STORE, "sm_90a", "sm_90a"))
    with pytest.raises(PassFailedException, match="stmatrix needs sm_90 or later; the target is sm_80"):
        lower(STORE, "sm_90a", "sm_80")


def test_fp8_cvt_needs_sm89():
    assert "e4m3x2" in str(lower(FP8, "sm_89", "sm_89"))
    with pytest.raises(PassFailedException, match="cvt of .e4m3 values needs sm_89 or later"):
        lower(FP8, "sm_86", "sm_86")
