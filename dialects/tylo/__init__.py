"""The tylo dialect: layouts, ownership, fragments, tiles and the ops over them."""

from xdsl.ir import Dialect

from .attributes import LayoutAttr, OwnershipAttr, TiledMMAAttr, dtype_of, element_type
from .mbarrier_ops import MBARRIER_OPS
from .matrix_ops import LdMatrixOp, MatrixLoadOp, MatrixStoreOp, StMatrixOp
from .ops import (
    BarrierOp,
    BlockDimOp,
    BlockIdxOp,
    CheckOp,
    GridDimOp,
    LoadElementOp,
    LoadFragmentOp,
    LoadOp,
    MakeTileOp,
    MapOp,
    MMAOp,
    MMASyncOp,
    PtrAddOp,
    SharedAllocOp,
    SlotOp,
    SplatOp,
    StoreElementOp,
    StoreFragmentOp,
    StoreOp,
    ThreadIdxOp,
    WindowOp,
    YieldOp,
)
from .printing import PrintOp
from .shuffle_ops import ShuffleOp
from .reduce_ops import FromSlotsOp, ReduceOp
from .fragment_ops import FRAGMENT_OPS
from .sync_ops import DynamicSmemSizeOp, ElectOneOp, NamedBarrierOp, SetMaxNRegOp, SharedAddressOp
from .tensor_map_ops import TensorMapAddressOp
from .tma_ops import TMA_OPS
from .copy_ops import COPY_OPS
from .vote_ops import VOTE_OPS
from .atomic_ops import AtomicOp
from .cluster_ops import CLUSTER_OPS
from .tcgen05_ops import TCGEN05_TYLO_OPS
from .types import FragmentType, PointerType, TensorMapType, TileType
from .wgmma_ops import (
    WgmmaCommitOp,
    WgmmaDescriptorOp,
    WgmmaEncodeOp,
    WgmmaFenceOp,
    WgmmaInstrOp,
    WgmmaInstrRegAOp,
    WgmmaMmaAsyncOp,
    WgmmaMmaAsyncRegAOp,
    WgmmaPackAOp,
    WgmmaSumPartialsOp,
    WgmmaWaitOp,
)

Tylo = Dialect(
    "tylo",
    [
        ThreadIdxOp,
        BlockIdxOp,
        BlockDimOp,
        GridDimOp,
        BarrierOp,
        CheckOp,
        SharedAllocOp,
        PtrAddOp,
        LoadOp,
        StoreOp,
        MakeTileOp,
        WindowOp,
        LoadElementOp,
        StoreElementOp,
        LoadFragmentOp,
        StoreFragmentOp,
        SplatOp,
        SlotOp,
        MapOp,
        YieldOp,
        MMAOp,
        MMASyncOp,
        MatrixLoadOp,
        MatrixStoreOp,
        LdMatrixOp,
        StMatrixOp,
        PrintOp,
        NamedBarrierOp,
        ElectOneOp,
        SetMaxNRegOp,
        SharedAddressOp,
        DynamicSmemSizeOp,
        TensorMapAddressOp,
        WgmmaDescriptorOp, WgmmaEncodeOp, WgmmaMmaAsyncOp, WgmmaInstrOp, WgmmaFenceOp,
        WgmmaCommitOp, WgmmaWaitOp, WgmmaSumPartialsOp, WgmmaMmaAsyncRegAOp, WgmmaPackAOp,
        WgmmaInstrRegAOp,
        *MBARRIER_OPS,
        *TMA_OPS,
        *COPY_OPS,
        *VOTE_OPS,
        AtomicOp,
        ShuffleOp,
        ReduceOp,
        FromSlotsOp,
        *FRAGMENT_OPS,
        *CLUSTER_OPS,
        *TCGEN05_TYLO_OPS,
    ],
    [LayoutAttr, OwnershipAttr, TiledMMAAttr, PointerType, TileType, FragmentType,
     TensorMapType],
)

__all__ = [
    "Tylo",
    "LayoutAttr",
    "OwnershipAttr",
    "TiledMMAAttr",
    "PointerType",
    "TileType",
    "FragmentType",
    "TensorMapType",
    "element_type",
    "dtype_of",
]
