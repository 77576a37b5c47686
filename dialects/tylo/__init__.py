"""The tylo dialect: layouts, ownership, fragments, tiles and the ops over them."""

from xdsl.ir import Dialect

from .attributes import LayoutAttr, OwnershipAttr, TiledMMAAttr, dtype_of, element_type
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
from .fence_proxy_ops import FenceProxyAsyncOp
from .printing import PrintOp
from .types import FragmentType, PointerType, TileType
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
        WgmmaDescriptorOp, WgmmaEncodeOp, WgmmaMmaAsyncOp, WgmmaInstrOp, WgmmaFenceOp,
        WgmmaCommitOp, WgmmaWaitOp, WgmmaSumPartialsOp, WgmmaMmaAsyncRegAOp, WgmmaPackAOp,
        WgmmaInstrRegAOp,
        FenceProxyAsyncOp,
    ],
    [LayoutAttr, OwnershipAttr, TiledMMAAttr, PointerType, TileType, FragmentType],
)

__all__ = [
    "Tylo",
    "LayoutAttr",
    "OwnershipAttr",
    "TiledMMAAttr",
    "PointerType",
    "TileType",
    "FragmentType",
    "element_type",
    "dtype_of",
]
