"""Arguments of the wrong kind get a precise TyloError, never a Python TypeError/AttributeError.

One case per rejection: axes given as bools or floats, shapes that are not pairs, a ``None``
element type (numpy would read it as float64), coordinates that are neither ints nor runtime
values, and values that are not ownerships, layouts or TMEM tiles where one is required.
"""

import re

import numpy as np
import pytest

from tylo.compiler.hardware import dtypes as d
from tylo.compiler.hardware.dtypes import as_dtype
from tylo.compiler.encodings.tcgen05_instruction import instruction_descriptor
from tylo.compiler.encodings.wgmma_descriptor import operand_descriptor
from tylo.compiler.support.errors import GeometryError, LayoutError, PlanError, TypeMismatchError
from tylo.compiler.layout.layout import Layout, complement
from tylo.compiler.atoms.mma_atom import MMAAtom
from tylo.compiler.ownership.ownership import Ownership, ownership_table
from tylo.compiler.ownership.fit import fit_ownership, simplify_ownership
from tylo.compiler.ownership.maps import (
    broadcast_slots,
    check_relayout,
    permute_ownership,
    relayout_permutation,
    window_plan,
)
from tylo.compiler.ownership.patterns import (
    LocalOwnership,
    StripedOwnership,
    check_complete,
    check_unique,
    same_ownership,
)
from tylo.compiler.plans.cp_async import CopyPlan
from tylo.compiler.plans.matrix_copy import matrix_copy_plan
from tylo.compiler.plans.reduction import reduction_plan
from tylo.compiler.plans.swizzled_structure import (
    contiguous_axis,
    structure_layout,
    swizzled_structure,
)
from tylo.compiler.plans.tma_tile import (
    TMATile,
    shared_layout,
    validate_tma_box,
    validate_tma_origin,
)
from tylo.compiler.plans.vector import vector_plan
from tylo.compiler.hardware.tmem import TmemTile, TmemTransfer, reinterpret_tile

ATOM = MMAAtom((16, 8, 16), d.BFloat16)
C = ATOM.operand_layout("C")
TILE = TMATile(d.BFloat16, (64, 64), 1)
LAYOUT = shared_layout(TILE)
STRUCTURE = swizzled_structure(LAYOUT, d.BFloat16, 1)
FP32_TMEM = TmemTile(d.Float32, 0, Layout((128, 8), (1, 128)))


def test_none_is_not_an_element_type():
    with pytest.raises(TypeMismatchError, match="TMATile dtype: None is not an element type"):
        TMATile(None, (8, 64), 1)
    with pytest.raises(TypeMismatchError, match="dtype: None is not an element type"):
        as_dtype(None)


def test_sub_byte_types_are_mma_operand_types_only():
    import ml_dtypes

    from tylo import Tensor
    from tylo.compiler.hardware.dtypes import by_numpy

    assert [as_dtype(x) for x in ("s4", "u4", "b1", "Int4")] == [d.Int4, d.UInt4, d.Bit1, d.Int4]
    assert all(t.sub_byte and t.torch is None and t.dlpack is None
               for t in (d.Int4, d.UInt4, d.Bit1))
    assert not any(t.sub_byte for t in by_numpy().values())
    with pytest.raises(TypeMismatchError, match="not an element type Tylo knows"):
        as_dtype(np.dtype(ml_dtypes.int4))  # a numpy array of int4 is no kernel argument
    with pytest.raises(TypeMismatchError, match="UInt4 is an MMA operand type with no array"):
        Tensor(d.UInt4, 2)


# Every axis argument goes through int_tuple.require_axis; each site keeps its error class.
AXIS_SITES = {
    "TMATile": (lambda a: TMATile(d.BFloat16, (128, 64), a), GeometryError,
                r"TMATile\(.*\): inner axis"),
    "TmemTransfer": (lambda a: TmemTransfer((32, 8), a), PlanError, "TmemTransfer: axis"),
    "reinterpret_tile": (lambda a: reinterpret_tile(d.BFloat16, FP32_TMEM, a), GeometryError,
                         "reinterpret_tile: dims"),
    "swizzled_structure": (lambda a: swizzled_structure(LAYOUT, d.BFloat16, a), GeometryError,
                           "swizzled_structure: kaxis"),
    "contiguous_axis": (lambda a: contiguous_axis(STRUCTURE, a), GeometryError,
                        "contiguous_axis: kaxis"),
    "reduction_plan": (lambda a: reduction_plan(C, a), GeometryError, "reduction of .*: axis"),
    "vector_plan": (lambda a: vector_plan(C, d.Float32, a, 16), PlanError, "vector_plan: axis"),
    "matrix_copy_plan": (lambda a: matrix_copy_plan(C, d.BFloat16, a), PlanError,
                         "matrix_copy_plan: axis"),
    "CopyPlan": (lambda a: CopyPlan((16, 16), 32, a, d.Float16), PlanError, "CopyPlan: axis"),
    "LocalOwnership": (lambda a: LocalOwnership(4, a), GeometryError, "LocalOwnership: axis"),
    "StripedOwnership": (lambda a: StripedOwnership(4, a), GeometryError,
                         "StripedOwnership: axis"),
}


@pytest.mark.parametrize("site", AXIS_SITES)
@pytest.mark.parametrize("axis", [1.0, True, 2, -1, "1", None])
def test_axis_must_be_the_int_0_or_1(site, axis):
    call, error, where = AXIS_SITES[site]
    with pytest.raises(error, match=f"{where} {re.escape(repr(axis))} must be 0 .rows. or 1 "
                                    ".columns., as an int"):
        call(axis)


@pytest.mark.parametrize("site", AXIS_SITES)
def test_axis_may_be_a_numpy_integer(site):
    call, _, _ = AXIS_SITES[site]
    assert repr(call(np.int64(1))) == repr(call(1))


def test_tma_origin_coordinates_must_be_integers():
    with pytest.raises(GeometryError, match="origin coordinate 0 = 'a' must be an integer"):
        validate_tma_origin(TILE, ("a", 0), "store")


def test_tma_box_dims_must_be_integers():
    with pytest.raises(GeometryError, match=r"box_dims\[0\] = None must be 1 to 256"):
        validate_tma_box(None, 2, 128)


def test_reinterpret_needs_a_tmem_tile():
    with pytest.raises(GeometryError, match="reinterpret_tile: None is not a TmemTile"):
        reinterpret_tile(d.BFloat16, None, 1)


@pytest.mark.parametrize("shape", [None, (64.0, 64)])
def test_structure_layout_shape_must_be_two_ints(shape):
    with pytest.raises(GeometryError, match="structure_layout: shape .* must have two extents"):
        structure_layout(STRUCTURE, shape, 1)


@pytest.mark.parametrize("shape", [5, (True, 32)])
def test_ownership_shape_must_be_two_positive_ints(shape):
    with pytest.raises(GeometryError, match="must be two positive static extents"):
        Ownership(shape, Layout((32, 1), (1, 0)))
    with pytest.raises(GeometryError, match="fit_ownership: shape .* must be two positive"):
        fit_ownership([[(0, 0)]], shape)


@pytest.mark.parametrize("shape", [16, (16, 8), [[16], 8, 16], (16, 8, 0), (16.0, 8, 16),
                                   (True, 8, 16)])
def test_mma_atom_shape_must_be_a_triple(shape):
    with pytest.raises(PlanError, match=r"MMAAtom: shape .* must be three positive static ints "
                                        r"\(m, n, k\)"):
        MMAAtom(shape, d.BFloat16)


def test_operand_role_must_be_a_name():
    with pytest.raises(PlanError, match=r"operand role \['A'\]"):
        ATOM.operand_layout(["A"])


@pytest.mark.parametrize("call, where", [
    (lambda: reduction_plan("o", 1), "reduction"),
    (lambda: check_relayout("o", C), r"relayout \(source\)"),
    (lambda: relayout_permutation(C, "o"), r"relayout_permutation \(to\)"),
    (lambda: broadcast_slots("o", C), r"broadcast_slots \(x\)"),
    (lambda: window_plan("o", (0, 0), (1, 1)), "window_plan"),
    (lambda: permute_ownership("o"), "permute_ownership"),
    (lambda: simplify_ownership("o"), "simplify_ownership"),
    (lambda: check_complete("o"), "check_complete"),
    (lambda: check_unique("o"), "check_unique"),
    (lambda: ownership_table("o"), "ownership_table"),
    (lambda: same_ownership(C, "o"), "same_ownership"),
])
def test_ownership_arguments_must_be_ownerships(call, where):
    with pytest.raises(GeometryError, match=f"{where}: 'o' is not an Ownership"):
        call()


def test_complement_needs_a_layout():
    with pytest.raises(LayoutError, match="complement: 'x' is not a Layout"):
        complement("x")


def test_operand_descriptor_origin_must_be_a_pair():
    with pytest.raises(GeometryError, match="origin None must be two non-negative static ints"):
        operand_descriptor(STRUCTURE, LAYOUT, None, 0)


def test_instruction_descriptor_needs_a_tcgen05_atom():
    with pytest.raises(PlanError, match="MMAAtom.* is not a Tcgen05MMA atom"):
        instruction_descriptor(ATOM)


@pytest.mark.parametrize("descriptor", ["wgmma_descriptor", "tcgen05_smem_descriptor"])
def test_descriptor_of_a_non_canonical_layout_is_refused(descriptor):
    """swizzled_structure gives None for a layout no descriptor describes; passing that on is a
    GeometryError, not an AttributeError."""
    import tylo

    with pytest.raises(tylo.GeometryError, match="is not a canonical swizzled encoding"):
        getattr(tylo, descriptor)(None, 0)


def test_tma_box_rejects_bad_element_bytes_and_reads_int_strides():
    from tylo.compiler.plans.tma_tile import validate_tma_box

    with pytest.raises(GeometryError, match="element_strides .* must have one entry per dimension"):
        validate_tma_box((64, 8), 2, 128, 3)
    for bad in (None, 3, True):
        with pytest.raises(GeometryError, match="element_bytes = .* must be 1, 2, 4 or 8"):
            validate_tma_box((64, 8), bad, 128)
    assert validate_tma_box(64, 2, 128, 1) is None
