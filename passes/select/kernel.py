"""The kernel selector's core: one ``func.func`` of scalar tylo, arith, math and cf ops in, one
``ptx.entry`` out (`KernelSelection.run`).

Every SSA value gets a fresh virtual register (``!ptx.reg<r7>``, numbered per class in the order
selection asks for them: `RegisterAllocator`); the registers of the blocks' arguments are handed
out first. Each cf block becomes a ptx block, in the same order, starting with its label
``$L__BB<i>`` (but the first); its arguments are read with ``ptx.get_register`` after the label.
Parameters are read with ``ld.param`` (pointers are converted with ``cvta.to.global``, an i1
travels as a u8; a tensor map is a ``.param .align 64 .b8 [128]`` whose generic address is
taken with ``mov.b64`` and ``cvta.param.u64``, `dialects.ptx.params`). Each op is lowered by the handler `HANDLERS` has for its class, from the family
modules of this package, found by importing them all (`load_handlers`): each is a function
``handler(sel, op)`` that reads and extends the selector state `sel` (a `KernelSelection`:
registers, blocks, module directives, dynamic shared bytes) through its methods and fields; an op
without one is refused. Every ptx op emitted takes the location of the op being lowered (the
kernel's own for the parameter reads and declarations).
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, i64
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import PassFailedException

from ...compiler.params.kernel_params import TENSOR_MAP_PARAM
from ...compiler.hardware.ptx_types import arch_number, param_type
from ...compiler.hardware.shared_memory import DYNAMIC_BYTES_ATTRIBUTE
from ...dialects import ptx
from ...dialects.discovery import package_modules
from ...dialects.builder import kernel_block_shape, kernel_cluster_shape, kernel_launch_bounds
from ...dialects.locations import inherit, located, location_of
from ...dialects.ptx import ops as P
from ...dialects.ptx.registers import RegisterAllocator, RegisterType
from ...dialects.ptx.params import CvtaParamOp, ParamAddressOp
from ...dialects.tylo import PointerType, TensorMapType
from ...dialects.tylo import ops as T
from .handlers import HANDLERS
from .printf import ModuleDirectives
from .values import class_of, ptx_type, reg_class

_SPECIAL = {T.ThreadIdxOp: "tid", T.BlockIdxOp: "ctaid", T.BlockDimOp: "ntid", T.GridDimOp: "nctaid"}


def load_handlers() -> None:
    """Import every module of this package, so that each has registered its handlers (a new
    family is a new module here: no list names it)."""
    package_modules(__package__)


class KernelSelection:
    """Selects the ptx.entry of one func.func: the state a handler is given (``fn``, ``arch``,
    ``module``, ``alloc``, ``dynamic_shared_bytes``, ``waits``) and the helpers it calls
    (``emit``, ``begin``, ``new``, ``get``, ``set``, ``bind``, ``const``, ``require``)."""

    def __init__(self, fn: func.FuncOp, arch: str, module: ModuleDirectives | None = None):
        load_handlers()
        self.fn = fn
        self.arch = arch
        self.module = module if module is not None else ModuleDirectives()
        self.alloc = RegisterAllocator()
        self.order: list[Block] = []  # the entry's blocks so far, in order; ops go to the last
        self.decls: list[Operation] = []
        self.regs: dict[SSAValue, SSAValue] = {}
        self.params: list[str] = []
        self.dynamic_shared_bytes = 0  # bytes of the dynamic shared window a launch needs
        self.waits = 0  # mbarrier wait loops so far (their labels: $L__wait<k>)
        self.location = location_of(fn)  # what `emit` gives the ops it emits: `lower`'s op's
        blocks = list(fn.body.blocks)
        self.labels = {b: f"$L__BB{i}" for i, b in enumerate(blocks)}
        self.blocks = {b: Block() for b in blocks}  # cf block -> its ptx block
        self.arg_regs = {a: self.alloc.new(reg_class(a.type)) for b in blocks[1:] for a in b.args}

    # -- helpers of every family -----------------------------------------------------------------
    def require(self, min_sm: int, what: str) -> None:
        """Refuse an instruction the target does not run (ptxas would, without a location)."""
        if arch_number(self.arch) < min_sm:
            raise PassFailedException(
                f"tylo-lower-to-ptx: {what} needs sm_{min_sm} or later; the target is {self.arch}")

    def emit(self, op: Operation) -> Operation:
        inherit(op, self.location)
        self.order[-1].add_op(op)
        return op

    def begin(self, block: Block, label: str | None) -> None:
        """Emit into `block` from now on, placed after the blocks so far, `label` first."""
        self.order.append(block)
        if label is not None:
            self.emit(P.LabelOp(label))

    def new(self, cls_or_type: str) -> RegisterType:
        return self.alloc.new(cls_or_type)

    def get(self, v: SSAValue) -> SSAValue:
        try:
            return self.regs[v]
        except KeyError:
            name = f"%{v.name_hint}" if v.name_hint else "a value"
            owner = v.owner.name if isinstance(v.owner, Operation) else "a block argument"
            raise PassFailedException(
                f"tylo-lower-to-ptx: {name} (of {owner}) is used before it is defined") from None

    def set(self, v: SSAValue, op: Operation) -> None:
        self.bind(v, op.results[0])

    def bind(self, v: SSAValue, reg: SSAValue) -> None:
        """`reg` holds tylo value `v` (and takes its name, for legible dumps)."""
        if v.name_hint is not None and reg.name_hint is None:
            reg.name_hint = v.name_hint
        self.regs[v] = reg

    def const(self, suffix: str, bits: int) -> SSAValue:
        return self.emit(P.ConstOp(suffix, bits, self.new(class_of(suffix)))).results[0]

    # -- driver ---------------------------------------------------------------------------------
    def run(self) -> ptx.EntryOp:
        blocks = list(self.fn.body.blocks)
        self.begin(self.blocks[blocks[0]], None)
        for i, arg in enumerate(blocks[0].args):
            self.param(i, arg)
        for b in blocks:
            if b is not blocks[0]:
                self.begin(self.blocks[b], self.labels[b])
                for a in b.args:
                    self.bind(a, self.emit(P.GetRegisterOp(self.arg_regs[a])).results[0])
            for op in b.ops:
                self.lower(op)
        start = self.order[0]
        if self.decls:
            for decl in self.decls:
                inherit(decl, location_of(self.fn))
            start.insert_ops_before(self.decls, start.first_op)
        shape = kernel_block_shape(self.fn)
        reqntid = list(shape) if shape is not None else None
        cluster = kernel_cluster_shape(self.fn)
        if cluster is not None:
            self.require(90, ".reqnctapercluster (a thread block cluster)")
        entry = ptx.EntryOp(self.fn.sym_name.data, self.params, Region(self.order), reqntid,
                            cluster, **kernel_launch_bounds(self.fn))
        inherit(entry, location_of(self.fn))
        if self.dynamic_shared_bytes:  # (set by `sync.dynamic_alloc`)
            entry.attributes[DYNAMIC_BYTES_ATTRIBUTE] = IntegerAttr(self.dynamic_shared_bytes, i64)
        return entry

    def param(self, index: int, arg: SSAValue) -> None:
        t = arg.type
        if isinstance(t, PointerType):
            self.params.append("u64")
            raw = self.emit(P.LdParamOp("u64", index, self.new("b64"))).results[0]
            if t.space.data != "global":
                raise PassFailedException("tylo-lower-to-ptx: kernel pointer parameters are global")
            self.bind(arg, self.emit(P.CvtaOp("global", raw, self.new("b64"))).results[0])
            return
        if isinstance(t, TensorMapType):
            self.params.append(TENSOR_MAP_PARAM)
            address = self.emit(ParamAddressOp(index, self.new("b64"))).results[0]
            self.bind(arg, self.emit(CvtaParamOp(address, self.new("b64"))).results[0])
            return
        suffix = ptx_type(t, "s")
        if suffix == "pred":
            self.params.append("u8")
            byte = self.emit(P.LdParamOp("u8", index, self.new("b16"))).results[0]
            zero = self.const("u16", 0)
            self.bind(arg, self.emit(P.SetpOp("ne", "u16", byte, zero, self.new("pred"))).results[0])
            return
        declared = param_type(suffix)
        self.params.append(declared)
        self.bind(arg, self.emit(P.LdParamOp(declared, index, self.new(class_of(suffix)))).results[0])

    def lower(self, op: Operation) -> None:
        handler = HANDLERS.lookup(op)
        self.location = location_of(op)
        with located(op):
            if handler is None:
                raise PassFailedException(f"tylo-lower-to-ptx: no PTX lowering for {op.name}")
            handler(self, op)


@HANDLERS.on(*_SPECIAL)
def _special(sel: KernelSelection, op: Operation) -> None:
    d = op.dim.data
    sel.set(op.result, sel.emit(P.SpecialOp(f"%{_SPECIAL[type(op)]}.{d}", sel.new("b32"))))
