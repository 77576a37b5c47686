"""Semantics of the byte-array parameter addresses (`tylo.dialects.ptx.params`): ``mov.b64 d,
entry_param_i`` gives the parameter's byte offset in the launch's parameter buffer, and
``cvta.param.u64`` its generic address in the emulator's param window (`emulator.memory`
``PARAM_WINDOW``), which `emulator.tensor_maps.tensor_map_at` maps back to the tensor map.
"""

from __future__ import annotations

from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ...compiler.support.lazy_modules import np
from ...dialects.ptx import params as P
from ..memory import PARAM_WINDOW


@register_impls
class ParamSemantics(InterpreterFunctions):
    """mov of a parameter's address, cvta.param."""

    @impl(P.ParamAddressOp)
    def run_param_address(self, interpreter, op: P.ParamAddressOp, args):
        offset = interpreter.machine.param_offsets[op.index.value.data]
        return (np.full(interpreter.threads.size, offset, np.uint64),)

    @impl(P.CvtaParamOp)
    def run_cvta_param(self, interpreter, op: P.CvtaParamOp, args):
        return (args[0].astype(np.uint64) + np.uint64(PARAM_WINDOW),)


__all__ = ["ParamSemantics"]
