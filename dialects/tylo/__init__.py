"""The tylo dialect: layouts, ownership, fragments, tiles and the ops over them.

Its ops and attributes are those the modules of this package define (`dialects.discovery`).
"""

from xdsl.ir import Dialect

from ..discovery import package_attributes, package_operations
from .attributes import LayoutAttr, OwnershipAttr, TiledMMAAttr, dtype_of, element_type
from .types import FragmentType, PointerType, TensorMapType, TileType

Tylo = Dialect("tylo", package_operations(__name__), package_attributes(__name__))

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
