"""Types of the tylo dialect: pointers, tiles and fragments.

    !tylo.ptr<bf16, global>                          a typed pointer (global or shared memory)
    !tylo.tile<bf16, global, (?,?):(?,1)>            a borrowed tile: pointer + layout
    !tylo.tile<bf16, global, (?,?):(?,1), [128,16]>  a window of it (static shape, runtime origin)
    !tylo.fragment<f32, #tylo.ownership<...>>        this thread's share of a logical tile
    !tylo.tensor_map<bf16, [128,64], axis 1, swizzle 128, rank 2>
                                                     a CUDA tensor map kernel parameter (a
                                                     TMATile plan's box over a rank-2/3 array)

A tile's layout may have runtime leaves (``?``); their values are the operands of the
`tylo.make_tile` op that made it. A window keeps its root's layout (offsets stay relative to the
root's base, which preserves swizzle phase) and adds a static window shape.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, IntAttr, StringAttr
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from ...compiler.plans.tma_tile import TMATile
from .attributes import LayoutAttr, OwnershipAttr, dtype_of, element_type, parse_layout

MEMORY_SPACES = ("global", "shared", "cluster")
"""PTX state spaces a tile or pointer may name (PTX ISA 5.1 "State Spaces"); "cluster" is
.shared::cluster, a peer CTA's shared memory reached through ``tylo.mapa``."""


def _check_space(space: StringAttr) -> None:
    if space.data not in MEMORY_SPACES:
        raise VerifyException(f"memory space '{space.data}' is not one of {MEMORY_SPACES}")


def _check_element(t: Attribute) -> None:
    try:
        dtype_of(t)
    except Exception:
        raise VerifyException(f"{t} is not an element type of Tylo") from None


@irdl_attr_definition
class PointerType(ParametrizedAttribute, TypeAttribute):
    """A pointer to elements of `element_type` in a memory space."""

    name = "tylo.ptr"
    element_type: Attribute
    space: StringAttr

    def __init__(self, element_type: Attribute, space: str | StringAttr):
        super().__init__(element_type, StringAttr(space) if isinstance(space, str) else space)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            element = parser.parse_type()
            parser.parse_punctuation(",")
            space = parser.parse_identifier()
        return (element, StringAttr(space))

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_attribute(self.element_type)
            printer.print_string(f", {self.space.data}")

    def verify(self) -> None:
        _check_element(self.element_type)
        _check_space(self.space)


@irdl_attr_definition
class TileType(ParametrizedAttribute, TypeAttribute):
    """A typed memory tile: elements, state space, root layout, optional static window shape."""

    name = "tylo.tile"
    element_type: Attribute
    space: StringAttr
    layout: LayoutAttr
    window: ArrayAttr[IntAttr]  # empty: the whole root tile

    def __init__(self, element_type, space, layout, window=()):
        super().__init__(
            element_type,
            StringAttr(space) if isinstance(space, str) else space,
            layout if isinstance(layout, LayoutAttr) else LayoutAttr(layout),
            ArrayAttr([IntAttr(w) for w in window]),
        )

    @property
    def window_shape(self) -> tuple[int, ...] | None:
        return tuple(w.data for w in self.window.data) if self.window.data else None

    @property
    def shape(self):
        """The tile's logical shape: the window's, else the root layout's (may hold ``?``)."""
        return self.window_shape or self.layout.data.shape

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            element = parser.parse_type()
            parser.parse_punctuation(",")
            space = parser.parse_identifier()
            parser.parse_punctuation(",")
            layout = parse_layout(parser)
            window: list[IntAttr] = []
            if parser.parse_optional_punctuation(","):
                parser.parse_punctuation("[")
                window.append(IntAttr(parser.parse_integer(allow_negative=False)))
                while parser.parse_optional_punctuation(","):
                    window.append(IntAttr(parser.parse_integer(allow_negative=False)))
                parser.parse_punctuation("]")
        return (element, StringAttr(space), LayoutAttr(layout), ArrayAttr(window))

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_attribute(self.element_type)
            printer.print_string(f", {self.space.data}, {self.layout.data}")
            if self.window.data:
                printer.print_string(", [" + ",".join(str(w.data) for w in self.window.data) + "]")

    def verify(self) -> None:
        _check_element(self.element_type)
        _check_space(self.space)
        rank = len(self.layout.data.shape) if isinstance(self.layout.data.shape, tuple) else 1
        if self.window.data and len(self.window.data) != rank:
            raise VerifyException(
                f"window shape {[w.data for w in self.window.data]} has rank "
                f"{len(self.window.data)}, the layout {self.layout.data} has rank {rank}"
            )
        if any(w.data <= 0 for w in self.window.data):
            raise VerifyException("window extents must be positive")


@irdl_attr_definition
class FragmentType(ParametrizedAttribute, TypeAttribute):
    """One thread's values of a logical tile, placed by an ownership (one value per slot)."""

    name = "tylo.fragment"
    element_type: Attribute
    ownership: OwnershipAttr

    def __init__(self, element_type: Attribute, ownership):
        super().__init__(
            element_type,
            ownership if isinstance(ownership, OwnershipAttr) else OwnershipAttr(ownership),
        )

    @property
    def slots(self) -> int:
        return self.ownership.data.values

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            element = parser.parse_type()
            parser.parse_punctuation(",")
            ownership = parser.parse_attribute()
        return (element, ownership)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_attribute(self.element_type)
            printer.print_string(", ")
            printer.print_attribute(self.ownership)

    def verify(self) -> None:
        _check_element(self.element_type)
        if not isinstance(self.ownership, OwnershipAttr):
            raise VerifyException(f"{self.ownership} is not a #tylo.ownership")



@irdl_attr_definition
class TensorMapType(ParametrizedAttribute, TypeAttribute):
    """A CUDA tensor map (``CUtensorMap``) kernel parameter: the generic address of the 128-byte
    descriptor, bound on the host by ``tylo.prepare_tma`` for a `TMATile` plan.

    Parameters: the plan's element type, logical box shape, inner axis and swizzle row bytes,
    and the rank of the global tensor (2: a matrix, 3: a batch of matrices). `plan` rebuilds the
    `TMATile`. Printed ``!tylo.tensor_map<bf16, [128,64], axis 1, swizzle 128, rank 2>``.
    """

    name = "tylo.tensor_map"
    element_type: Attribute
    box: ArrayAttr[IntAttr]
    axis: IntAttr
    row_bytes: IntAttr
    rank: IntAttr

    def __init__(self, plan, rank: int):
        super().__init__(element_type(plan.dtype), ArrayAttr([IntAttr(s) for s in plan.shape]),
                         IntAttr(plan.axis), IntAttr(plan.row_bytes), IntAttr(rank))

    @property
    def plan(self):
        """The `TMATile` this tensor map copies boxes of."""
        return TMATile(dtype_of(self.element_type), tuple(b.data for b in self.box.data),
                       self.axis.data, self.row_bytes.data)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            element = parser.parse_type()
            parser.parse_punctuation(",")
            parser.parse_punctuation("[")
            box = [IntAttr(parser.parse_integer(allow_negative=False))]
            while parser.parse_optional_punctuation(","):
                box.append(IntAttr(parser.parse_integer(allow_negative=False)))
            parser.parse_punctuation("]")
            fields = []
            for word in ("axis", "swizzle", "rank"):
                parser.parse_punctuation(",")
                parser.parse_keyword(word)
                fields.append(IntAttr(parser.parse_integer(allow_negative=False)))
        return (element, ArrayAttr(box), *fields)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_attribute(self.element_type)
            box = ",".join(str(b.data) for b in self.box.data)
            printer.print_string(f", [{box}], axis {self.axis.data}, swizzle "
                                 f"{self.row_bytes.data}, rank {self.rank.data}")

    def verify(self) -> None:
        _check_element(self.element_type)
        if self.rank.data not in (2, 3):
            raise VerifyException(f"tensor map rank {self.rank.data} must be 2 (a matrix) or 3 "
                                  "(a batch of matrices)")
        try:
            self.plan  # noqa: B018
        except Exception as e:  # noqa: BLE001 - the plan's own GeometryError/PlanError text
            raise VerifyException(f"tensor map box is not a TMATile plan: {e}") from None
