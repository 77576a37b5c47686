"""`RegisterType` built from Python: the register class and number are checked on construction.

The ptx and tylo verifiers' refusals of textual IR are lit tests (lit_tests/dialects/*/
*_invalid.mlir); this file keeps what only the Python builder API reaches.
"""

import re

import pytest
from xdsl.utils.exceptions import VerifyException

from tylo.dialects.ptx import RegisterType


@pytest.mark.parametrize(
    "reg_class, index, message",
    [
        ("b8", 1, "unknown PTX register class 'b8'"),
        ("u32", 1, "unknown PTX register class 'u32'"),
        ("b32", -1, "register numbers are non-negative"),
    ],
)
def test_register_type_is_refused(reg_class, index, message):
    with pytest.raises(VerifyException, match=re.escape(message)):
        RegisterType(reg_class, index)


@pytest.mark.parametrize(
    "reg_class, index, name", [("b32", 0, "%r0"), ("b64", 7, "%rd7"), ("pred", 2, "%p2")]
)
def test_register_type_is_accepted(reg_class, index, name):
    assert RegisterType(reg_class, index).register_name == name


def test_an_unallocated_register_has_a_class_and_no_number():
    r = RegisterType.unallocated("u32")
    assert (r.reg_class.data, r.allocated, r.register_name) == ("b32", False, "%r")
    assert str(r) == "!ptx.reg<r>" and RegisterType("f64", 3).allocated
    assert RegisterType.unallocated("f64") == RegisterType("f64", None) != RegisterType("f64", 0)


def test_the_ptx_target_refuses_an_unallocated_register():
    from xdsl.parser import Parser

    from tylo.dialects.ptx.target import register_counts
    from tylo.passes.universe import make_context

    module = Parser(make_context(), """
ptx.entry "k" [] reqntid [32, 1, 1] {
  %x = ptx.special "%laneid" : !ptx.reg<r>
  ptx.ret
}""").parse_module()
    with pytest.raises(ValueError, match=r"ptx.special defines an unallocated register \(!ptx.reg<r>\)"):
        register_counts(next(iter(module.ops)))
