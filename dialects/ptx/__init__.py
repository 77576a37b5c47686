"""The ptx dialect: PTX instructions over virtual registers, printed by the `ptx` target."""

from xdsl.ir import Dialect

from .attributes import ATTRIBUTES, CmpOpAttr, CvtModeAttr, ModeAttr, PtxTypeAttr, StateSpaceAttr
from .entry import EntryOp
from .ops import (
    AddOp,
    AndOp,
    BarSyncOp,
    BraOp,
    CallUniOp,
    CondBraOp,
    ConstOp,
    CvtaGenericOp,
    CvtaOp,
    CvtOp,
    CvtPairOp,
    DivOp,
    ExternFuncOp,
    FmaOp,
    GetRegisterOp,
    GlobalStringOp,
    LabelOp,
    LdMatrixOp,
    LdOp,
    LdParamOp,
    LdVectorOp,
    LocalDeclOp,
    MaxOp,
    MinOp,
    MmaSyncOp,
    MovOp,
    MovSymbolOp,
    MulOp,
    NegOp,
    NotOp,
    OrOp,
    PackOp,
    PTXInstruction,
    RemOp,
    RetOp,
    SelpOp,
    SetpOp,
    SharedDeclOp,
    ShlOp,
    ShrOp,
    SpecialOp,
    StMatrixOp,
    StOp,
    StVectorOp,
    SubOp,
    TrapOp,
    UnpackOp,
    XorOp,
)
from .math import AbsOp, Ex2Op, Lg2Op, RsqrtOp, SqrtOp
from .math import RcpOp
from .params import CvtaParamOp, ParamAddressOp
from .bulk_tensor import BULK_TENSOR_OPS
from .cluster import CLUSTER_OPS
from .cp_async import CP_ASYNC_OPS
from .mbarrier import MBARRIER_OPS
from .registers import RegisterAllocator, RegisterType
from .sync import BarOp, ElectSyncOp, ExternSharedDeclOp, SetmaxnregOp
from .vote import VOTE_OPS
from .atomics import ATOMIC_OPS
from .warp import ShflSyncOp
from .tcgen05 import TCGEN05_OPS
from .wgmma import (
    WgmmaCommitGroupOp,
    WgmmaFenceOp,
    WgmmaMmaAsyncOp,
    WgmmaMmaAsyncRegAOp,
    WgmmaWaitGroupOp,
)

PTX = Dialect(
    "ptx",
    [
        EntryOp,
        AddOp, SubOp, MulOp, DivOp, RemOp, MinOp, MaxOp, AndOp, OrOp, XorOp, ShlOp, ShrOp,
        FmaOp, MovOp, NegOp, NotOp, ConstOp, SpecialOp, SetpOp, SelpOp, CvtOp, CvtPairOp,
        PackOp, UnpackOp,
        LdParamOp, CvtaOp, LdOp, StOp, SharedDeclOp, MovSymbolOp, LdMatrixOp, StMatrixOp,
        BarSyncOp, MmaSyncOp, LabelOp, BraOp, CondBraOp, TrapOp, RetOp, GetRegisterOp,
        LocalDeclOp, CvtaGenericOp, ExternFuncOp, GlobalStringOp, CallUniOp,
        Ex2Op, Lg2Op, SqrtOp, RsqrtOp, AbsOp,
        ExternSharedDeclOp, BarOp, ElectSyncOp, SetmaxnregOp,
        ParamAddressOp, CvtaParamOp,
        WgmmaFenceOp, WgmmaCommitGroupOp, WgmmaWaitGroupOp, WgmmaMmaAsyncOp, WgmmaMmaAsyncRegAOp,
        *MBARRIER_OPS,
        *BULK_TENSOR_OPS,
        LdVectorOp, StVectorOp,
        *CP_ASYNC_OPS,
        *VOTE_OPS,
        *ATOMIC_OPS,
        ShflSyncOp,
        RcpOp,
        *CLUSTER_OPS,
        *TCGEN05_OPS,
    ],
    [RegisterType, *ATTRIBUTES],
)

__all__ = [
    "PTX", "EntryOp", "RegisterType", "RegisterAllocator", "PTXInstruction",
    "PtxTypeAttr", "StateSpaceAttr", "CmpOpAttr", "ModeAttr", "CvtModeAttr",
]
