"""LocalOwnership / StripedOwnership, same_ownership, and the completeness / uniqueness checks."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tylo.compiler.hardware.dtypes import BFloat16
from tylo.compiler.support.errors import GeometryError
from tylo.compiler.layout.layout import Layout
from tylo.compiler.atoms.mma_atom import MMAAtom
from tylo.compiler.ownership.ownership import Ownership
from tylo.compiler.ownership.patterns import (
    LocalOwnership, StripedOwnership, check_complete, check_unique, same_ownership,
)

FAST = settings(max_examples=40, deadline=None)


@FAST
@given(st.integers(1, 12), st.sampled_from([0, 1]))
def test_local_ownership_table(n, axis):
    p = LocalOwnership(n, axis)
    assert isinstance(p, Ownership) and (p.threads, p.values) == (32, n)
    if axis == 1:
        assert p.shape == (32, n)
        assert p.table() == [[(lane, v) for v in range(n)] for lane in range(32)]
    else:
        assert p.shape == (n, 32)
        assert p.table() == [[(v, lane) for v in range(n)] for lane in range(32)]
    check_complete(p)
    check_unique(p)


@FAST
@given(st.integers(1, 12), st.sampled_from([0, 1]))
def test_striped_ownership_table(n, axis):
    p = StripedOwnership(n, axis)
    assert isinstance(p, Ownership) and (p.threads, p.values) == (32, n)
    if axis == 1:
        assert p.shape == (1, 32 * n)
        assert p.table() == [[(0, lane + 32 * v) for v in range(n)] for lane in range(32)]
    else:
        assert p.shape == (32 * n, 1)
        assert p.table() == [[(lane + 32 * v, 0) for v in range(n)] for lane in range(32)]
    check_complete(p)
    check_unique(p)


def test_patterns_compare_and_hash_with_explicit_ownerships():
    explicit = Ownership((32, 4), Layout((32, 4), (1, 32)))
    assert LocalOwnership(4, 1) == explicit and hash(LocalOwnership(4, 1)) == hash(explicit)
    assert LocalOwnership(4, 0) == Ownership((4, 32), Layout((32, 4), (4, 1)))
    assert StripedOwnership(2, 1) == Ownership((1, 64), Layout((32, 2), (1, 32)))
    assert LocalOwnership(1, 1) == Ownership((32, 1), Layout((32, 1), (1, 0)))
    assert LocalOwnership(4, 1) != StripedOwnership(4, 0)  # same layout, other shape


@pytest.mark.parametrize("make", [LocalOwnership, StripedOwnership])
@pytest.mark.parametrize("n, axis, message", [
    (0, 1, "n = 0 must be a positive"),
    (-3, 0, "n = -3 must be a positive"),
    (2.0, 1, "n = 2.0 must be a positive"),
    (True, 1, "n = True must be a positive"),
    (4, 2, "axis 2 must be 0 .rows. or 1 .columns."),
    (4, -1, "axis -1 must be 0"),
    (4, "1", "axis '1' must be 0"),
])
def test_pattern_rejections(make, n, axis, message):
    with pytest.raises(GeometryError, match=f"{make.__name__}: {message}"):
        make(n, axis)


def test_same_ownership_compares_tables_not_layouts():
    a = Ownership((8, 4), Layout((8, 4), (1, 8)))
    b = Ownership((8, 4), Layout(((2, 4), (2, 2)), ((1, 2), (8, 16))))
    assert a != b and same_ownership(a, b) and same_ownership(b, a)
    assert not same_ownership(a, Ownership((8, 4), Layout((8, 4), (4, 1))))  # transposed roles
    assert not same_ownership(a, Ownership((16, 2), Layout((8, 4), (1, 8))))  # other shape
    assert not same_ownership(a, Ownership((8, 4), Layout((8, 2), (1, 8))))  # fewer slots
    assert not same_ownership(a, Ownership((8, 4), Layout((4, 4), (1, 8))))  # fewer threads
    c = MMAAtom((16, 8, 16), BFloat16).operand_layout("C")
    assert same_ownership(c, Ownership((16, 8), Layout(((2, 2, 8), (2, 2)), ((32, 64, 1), (16, 8)))))


def test_check_complete_names_the_missing_coordinate():
    half = Ownership((8, 4), Layout((8, 2), (1, 8)))
    with pytest.raises(GeometryError, match=r"not complete: coordinate \(0, 2\) is held by no thread "
                                            r"\(16 of 32 coordinates are missing\)"):
        check_complete(half)
    check_unique(half)


def test_check_unique_names_the_coordinate_and_its_holders():
    replicated = Ownership((4, 2), Layout(((4, 2), 2), ((1, 0), 4)))
    check_complete(replicated)
    with pytest.raises(GeometryError, match=r"holds coordinate \(0, 0\) 2 times: "
                                            r"\(thread 0, slot 0\), \(thread 4, slot 0\)"):
        check_unique(replicated)
    in_one_thread = Ownership((4, 1), Layout((4, 2), (1, 0)))
    with pytest.raises(GeometryError, match=r"\(thread 0, slot 0\), \(thread 0, slot 1\)"):
        check_unique(in_one_thread)
    many = Ownership((2, 1), Layout((2, 8), (1, 0)))
    with pytest.raises(GeometryError, match=r"8 times: .*\(thread 0, slot 3\) and 4 more"):
        check_unique(many)


@pytest.mark.parametrize("role", ["A", "B", "C"])
def test_mma_operands_are_complete_and_unique(role):
    own = MMAAtom((16, 8, 16), BFloat16).operand_layout(role)
    check_complete(own)
    check_unique(own)
    assert own.is_complete() and own.is_injective()
