"""The tensor-map kernel parameter below the frontend: its tylo type, the ptx.entry byte-array
parameter, its lowering (mov.b64 + cvta.param.u64) and their emulation."""

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, UnitAttr, i32
from xdsl.ir import Block, Region
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from tylo.compiler.hardware import dtypes
from tylo.compiler.params.kernel_params import TENSOR_MAP_PARAM, param_layout, parse_byte_array
from tylo.compiler.plans.tma_tile import TMATile
from tylo.dialects import ptx
from tylo.dialects.tylo import TensorMapType, Tylo
from tylo.emulator.memory import PARAM_WINDOW
from tylo.emulator.tensor_maps import TensorMapInfo, param_address, tensor_map_at
from tylo.passes.pipeline import emit_ptx, run_pipeline

PLAN = TMATile(dtypes.BFloat16, (128, 64), 1)


def test_type_prints_readably_and_parses_back():
    t = TensorMapType(PLAN, 3)
    assert str(t) == "!tylo.tensor_map<bf16, [128,64], axis 1, swizzle 128, rank 3>"
    ctx = Context()
    ctx.load_dialect(Tylo)
    assert Parser(ctx, str(t)).parse_type() == t
    assert t.plan == PLAN and t.rank.data == 3


def test_type_refuses_a_rank_other_than_2_or_3():
    with pytest.raises(VerifyException, match="rank 4"):
        TensorMapType(PLAN, 4).verify()


def test_layout_puts_byte_arrays_at_their_alignment():
    assert parse_byte_array(TENSOR_MAP_PARAM) == (64, 128)
    assert parse_byte_array("u64") is None
    assert param_layout(["u64", "s32", "s32"]) == ((0, 8, 16), 24)  # unchanged without arrays
    assert param_layout(["u64", TENSOR_MAP_PARAM, "s32", TENSOR_MAP_PARAM]) == (
        (0, 64, 192, 256), 384)


def _module(arg_types):
    body = Block(arg_types=arg_types)
    fn = func.FuncOp("k", (body.arg_types, []), Region(body))
    fn.attributes["tylo.kernel"] = UnitAttr()
    fn.attributes["tylo.block"] = DenseArrayBase.from_list(i32, [32, 1, 1])
    body.add_op(func.ReturnOp())
    return ModuleOp([fn])


def test_lowering_declares_an_aligned_byte_array_and_takes_its_generic_address():
    module = _module([i32, TensorMapType(PLAN, 2)])
    run_pipeline(module, "k", "sm_90a", texts=False)
    entry = next(op for op in module.walk() if isinstance(op, ptx.EntryOp))
    assert [p.data for p in entry.params.data] == ["s32", TENSOR_MAP_PARAM]
    text = emit_ptx(module)
    assert "\t.param .s32 k_param_0,\n\t.param .align 64 .b8 k_param_1[128]\n" in text
    assert "mov.b64 %rd1, k_param_1;" in text
    assert "cvta.param.u64 %rd2, %rd1;" in text


def test_param_address_refuses_a_scalar_parameter():
    from tylo.dialects.ptx import ops as P
    from tylo.dialects.ptx.params import ParamAddressOp
    from tylo.dialects.ptx.registers import RegisterType

    block = Block([ParamAddressOp(0, RegisterType("b64", 1)), P.RetOp()])
    entry = ptx.EntryOp("k", ["u64"], Region(block))
    with pytest.raises(VerifyException, match="not a byte array"):
        entry.verify()


class _Machine:
    def __init__(self, maps):
        self.tensor_maps = maps
        self.threads = np.arange(4)

    def error(self, op, message, threads):
        raise RuntimeError(message)


def test_tensor_map_at_maps_the_generic_address_back_to_the_parameter():
    info = TensorMapInfo(0x7F00_0000_0000, dtypes.BFloat16, (64, 128), (128,), (64, 128),
                         128, (64, 100), "a")
    m = _Machine({64: info})
    assert param_address(64) == PARAM_WINDOW + 64
    assert tensor_map_at(m, np.full(4, PARAM_WINDOW + 64, np.uint64)) is info
    with pytest.raises(KeyError, match="'a' at"):
        tensor_map_at(m, PARAM_WINDOW + 8)
    with pytest.raises(RuntimeError, match="differs between threads"):
        tensor_map_at(m, np.array([PARAM_WINDOW + 64, PARAM_WINDOW], np.uint64), op=object())


def test_the_emulated_kernel_computes_the_parameters_window_address():
    """A kernel that stores its tensor-map operand's value: the emulator gives the window
    address of the parameter's offset, which tensor_map_at finds."""
    from tylo.dialects.ptx import ops as P
    from tylo.dialects.ptx.params import CvtaParamOp, ParamAddressOp
    from tylo.dialects.ptx.registers import RegisterType
    from tylo.emulator.memory import Memory
    from tylo.emulator.scheduler import run_entry

    r = lambda c, i: RegisterType(c, i)  # noqa: E731
    block = Block()
    ops = [
        P.LdParamOp("u64", 0, r("b64", 1)),
        ParamAddressOp(1, r("b64", 2)),
    ]
    ops.append(CvtaParamOp(ops[1].results[0], r("b64", 3)))
    ops.append(P.StOp("global", "u64", ops[0].results[0], ops[2].results[0]))
    ops.append(P.RetOp())
    for op in ops:
        block.add_op(op)
    entry = ptx.EntryOp("k", ["u64", TENSOR_MAP_PARAM], Region(block))
    module = ModuleOp([entry])
    module.verify()
    memory = Memory()
    base = memory.allocate("argument 'out'", np.zeros(8, np.uint8), 8)
    params = base.to_bytes(8, "little") + bytes(56) + bytes(128)
    run_entry(module, "k", (1, 1, 1), (1, 1, 1), params, memory)
    assert int(memory.allocations[0].data.view("<u8")[0]) == PARAM_WINDOW + 64
