"""The typed modifier attributes of the ptx dialect, from Python: members are the strings of their
tables, so code that compares or indexes with ``op.type.data`` keeps working, and the Python
constructors refuse a value outside the table.

The parser's refusals of textual IR are lit tests (lit_tests/dialects/ptx/attributes_invalid.mlir).
"""

import re

import pytest

from tylo.compiler.hardware.ptx_types import PTX_TYPES
from tylo.dialects.ptx import ops as P
from tylo.dialects.ptx import attributes as A
from tylo.dialects.ptx.registers import RegisterType


@pytest.mark.parametrize(
    "attr, table",
    [
        (A.PtxTypeAttr, tuple(PTX_TYPES)),
        (A.StateSpaceAttr, tuple(A.STATE_SPACES)),
        (A.CmpOpAttr, A.COMPARISONS + A.FLOAT_COMPARISONS),
        (A.ModeAttr, A.MODES),
        (A.CvtModeAttr, A.CVT_MODES),
    ],
)
def test_each_enum_is_its_table(attr, table):
    assert tuple(m.value for m in attr.enum_type) == table


def test_members_act_as_their_strings():
    r1, r2, r3 = RegisterType("b32", 1), RegisterType("b32", 2), RegisterType("b32", 3)
    r = P.AddOp("s32", P.ConstOp("b32", 1, r1).result, P.ConstOp("b32", 2, r2).result, r3)
    assert r.type.data == "s32" and f".{r.type.data}" == ".s32"
    assert PTX_TYPES[r.type.data].bits == 32
    assert {"s32": 1}[r.type.data] == 1
    x = P.ConstOp("f32", 0x3F800000, RegisterType("f32", 1)).result
    pair = P.CvtPairOp("e4m3x2", "f32", x, x, RegisterType("b16", 1), mode="rn.satfinite")
    pair.verify()
    assert pair.mode.data.split(".") == ["rn", "satfinite"]
    assert pair.assembly_line() == "cvt.rn.satfinite.e4m3x2.f32 %rs1, %f1, %f1;"


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: A.PtxTypeAttr("s33"), "'.s33' is not a PTX type"),
        (lambda: A.StateSpaceAttr("tex"), "state space 'tex' is not one of"),
        (lambda: A.CmpOpAttr("less"), "'less' is not a setp comparison"),
        (lambda: A.ModeAttr("rni"), "'.rni' is not an instruction modifier"),
        (lambda: A.CvtModeAttr("approx"), "'.approx' is not a cvt modifier"),
    ],
)
def test_a_value_outside_the_table_is_refused(make, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        make()
