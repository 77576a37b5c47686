"""The ptx dialect: PTX instructions over virtual registers, printed by the `ptx` target.

Its ops and attributes are those the modules of this package define (`dialects.discovery`): an
instruction joins the dialect by being defined in one of them.
"""

from xdsl.ir import Dialect

from ..discovery import package_attributes, package_operations
from .attributes import CmpOpAttr, CvtModeAttr, ModeAttr, PtxTypeAttr, StateSpaceAttr
from .abstract_ops import PTXInstruction
from .entry import EntryOp
from .registers import RegisterAllocator, RegisterType

PTX = Dialect("ptx", package_operations(__name__), package_attributes(__name__))

__all__ = [
    "PTX", "EntryOp", "RegisterType", "RegisterAllocator", "PTXInstruction",
    "PtxTypeAttr", "StateSpaceAttr", "CmpOpAttr", "ModeAttr", "CvtModeAttr",
]
