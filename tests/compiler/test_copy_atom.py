"""Copy atoms: the ldmatrix/stmatrix ownerships against the PTX facts (docs/facts/ptx_isa.md
section 2), the one instruction table, and every rejection."""

import pytest

from tylo.compiler.atoms.copy_atom import (
    COPY_ATOMS,
    MATRIX_COPY_INSTRUCTIONS,
    CopyAtom,
    address_lane,
)
from tylo.compiler.support.errors import PlanError
from tylo.compiler.atoms.mma_atom import operand_layout


def test_four_atoms_loads_and_stores_plain_and_transposed():
    assert [(a.op, a.trans) for a in COPY_ATOMS] == [
        ("load", False), ("load", True), ("store", False), ("store", True)]
    assert len(set(COPY_ATOMS)) == 4
    assert CopyAtom("load") == CopyAtom("load", False) == COPY_ATOMS[0]
    assert CopyAtom("store", True) != CopyAtom("load", True)
    assert repr(CopyAtom("store", True)) == "CopyAtom('store', trans=True)"


def test_table_rows_minimum_targets_and_ptx_versions():
    # ldmatrix: sm_75, PTX 6.5 (facts 2.1); stmatrix .m8n8: sm_90 (facts 2.5), PTX 7.8.
    assert {k: (r.ptx, r.min_sm, r.min_ptx) for k, r in MATRIX_COPY_INSTRUCTIONS.items()} == {
        ("load", False): ("ldmatrix", 75, (6, 5)),
        ("load", True): ("ldmatrix", 75, (6, 5)),
        ("store", False): ("stmatrix", 90, (7, 8)),
        ("store", True): ("stmatrix", 90, (7, 8)),
    }
    assert [a.min_sm for a in COPY_ATOMS] == [75, 75, 90, 90]
    for row in MATRIX_COPY_INSTRUCTIONS.values():
        assert (row.shape, row.element, row.nums) == ("m8n8", "b16", (1, 2, 4))


@pytest.mark.parametrize("atom", COPY_ATOMS, ids=repr)
def test_register_ownership_follows_facts_2_3(atom):
    own = atom.operand_layout("registers")
    assert own.shape == (8, 8) and own.threads == 32 and own.values == 2
    assert own.is_complete() and own.is_injective()
    for lane in range(32):
        g, t = lane // 4, lane % 4
        for v in range(2):
            want = (2 * t + v, g) if atom.trans else (g, 2 * t + v)
            assert own(lane, v) == want


def test_register_examples_from_the_facts():
    plain = CopyAtom("load").operand_layout("Registers")
    trans = CopyAtom("load", True).operand_layout("Registers")
    assert [plain(5, v) for v in (0, 1)] == [(1, 2), (1, 3)]
    assert [plain(31, v) for v in (0, 1)] == [(7, 6), (7, 7)]
    assert [trans(0, v) for v in (0, 1)] == [(0, 0), (1, 0)]
    assert [trans(5, v) for v in (0, 1)] == [(2, 1), (3, 1)]
    assert [trans(31, v) for v in (0, 1)] == [(6, 7), (7, 7)]


def test_stores_place_registers_like_loads():  # facts 2.5
    for trans in (False, True):
        assert (CopyAtom("store", trans).operand_layout("registers")
                == CopyAtom("load", trans).operand_layout("registers"))


@pytest.mark.parametrize("atom", COPY_ATOMS, ids=repr)
def test_address_ownership_lane_supplies_row_lane_mod_8(atom):
    own = operand_layout(atom, "addresses")  # the free function of mma_atom accepts copy atoms
    assert own.shape == (8, 1) and own.threads == 32 and own.values == 1
    assert own.is_complete()
    assert [own(lane, 0) for lane in range(32)] == [(lane % 8, 0) for lane in range(32)]
    assert atom.operand_layout("Addresses") == own


def test_address_lanes_of_x1_x2_x4_follow_facts_2_2():
    for lane in range(32):
        assert address_lane(lane, 4) == (lane // 8, lane % 8)
        # .x2 reads lanes 0-15; .x1 lanes 0-7; the others repeat those rows
        assert address_lane(lane, 2) == ((lane // 8) % 2, lane % 8)
        assert address_lane(lane, 1) == (0, lane % 8)
    assert address_lane(13, 2) == (1, 5) and address_lane(29, 2) == (1, 5)


def test_mnemonics():
    assert CopyAtom("load").mnemonic(4) == "ldmatrix.sync.aligned.m8n8.x4.shared.b16"
    assert CopyAtom("load", True).mnemonic(2) == "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16"
    assert CopyAtom("store").mnemonic(1) == "stmatrix.sync.aligned.m8n8.x1.shared.b16"


def test_rejections():
    with pytest.raises(PlanError, match=r"op 'copy' must be 'load' \(ldmatrix\) or 'store'"):
        CopyAtom("copy")
    with pytest.raises(PlanError, match="trans 1 must be a bool"):
        CopyAtom("load", 1)
    with pytest.raises(PlanError, match="role 'A': expected 'addresses' or 'registers'"):
        CopyAtom("load").operand_layout("A")
    with pytest.raises(PlanError, match="num 3 matrices; one instruction moves 1, 2 or 4"):
        CopyAtom("load").mnemonic(3)
