"""`TargetOption`: what the passes with an ``arch`` option share.

A pass that takes ``arch`` (``tylo-opt -p 'tylo-lower-to-ptx{arch=sm_80}'``) checks it when it is
made, so that a misspelt target (``sm_7``, ``gfx90``) is refused with the list of targets
(`tylo.compiler.hardware.ptx_types.arch_number`) before any IR is touched, instead of reaching ptxas.
"""

from __future__ import annotations

from ...compiler.hardware.ptx_types import arch_number

__all__ = ["TargetOption"]


class TargetOption:
    """Mixin of a `ModulePass` dataclass with an ``arch: str`` field: validated on creation
    (UnsupportedError naming the known targets)."""

    arch: str

    def __post_init__(self) -> None:
        arch_number(self.arch)
