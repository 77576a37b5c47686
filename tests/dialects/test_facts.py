"""Op facts as traits (`tylo.dialects.facts`): the verifier's refusals, every op of the tylo and
ptx dialects that holds an address declaring its memory facts, and the queries the passes and
the emulator use."""

import pytest
from xdsl.dialects.builtin import i32
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, traits_def
from xdsl.traits import EffectInstance, MemoryEffectKind, Pure, get_effects, is_side_effect_free
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.test_value import create_ssa_value

from tylo.dialects import facts as F
from tylo.dialects.ptx import PTX
from tylo.dialects.ptx import ops as P
from tylo.dialects.ptx.registers import RegisterType
from tylo.dialects.ptx.tcgen05 import Tcgen05MmaOp
from tylo.dialects.ptx.vote import VoteSyncOp
from tylo.dialects.ptx.wgmma import WgmmaMmaAsyncOp, WgmmaWaitGroupOp
from tylo.dialects.tylo import PointerType, Tylo
from tylo.dialects.tylo.tma_ops import TmaStoreOp

OPS = {op.name: op for op in (*Tylo.operations, *PTX.operations)}


@irdl_op_definition
class AsyncReadNoCompletion(IRDLOperation):
    """An op that says it reads shared memory through the async proxy and not what ends it."""

    name = "test.async_read_no_completion"
    traits = traits_def(F.MemoryAccess(F.READ, proxy=F.ASYNC, operand="src"))
    src = operand_def(PointerType)


@irdl_op_definition
class AsyncReadWithCompletion(IRDLOperation):
    name = "test.async_read_with_completion"
    traits = traits_def(F.MemoryAccess(F.READ, proxy=F.ASYNC, operand="src"),
                        F.AsyncCompletion(("tylo.tma_wait",), committed_by="tylo.tma_commit"))
    src = operand_def(PointerType)


@irdl_op_definition
class PureStore(IRDLOperation):
    name = "test.pure_store"
    traits = traits_def(Pure(), F.MemoryAccess(F.WRITE, operand="dst"))
    dst = operand_def(PointerType)


@irdl_op_definition
class WrongOperand(IRDLOperation):
    name = "test.wrong_operand"
    traits = traits_def(F.MemoryAccess(F.WRITE, operand="pointer"))
    dst = operand_def(PointerType)


SHARED = PointerType(i32, "shared")


def test_an_async_proxy_op_without_its_completion_is_refused():
    op = AsyncReadNoCompletion(operands=[create_ssa_value(SHARED)])
    with pytest.raises(VerifyException, match="test.async_read_no_completion accesses memory "
                       "through the async proxy but declares no AsyncCompletion"):
        op.verify()
    AsyncReadWithCompletion(operands=[create_ssa_value(SHARED)]).verify()


def test_a_pure_op_with_a_memory_access_is_refused():
    op = PureStore(operands=[create_ssa_value(SHARED)])
    with pytest.raises(VerifyException, match="declares no memory effect .Pure. and a memory "
                       "access"):
        op.verify()


def test_an_access_through_an_operand_the_op_lacks_is_refused():
    with pytest.raises(VerifyException, match="names operand 'pointer', which the op lacks"):
        WrongOperand(operands=[create_ssa_value(SHARED)]).verify()


def test_a_collective_spans_a_warp_or_a_warpgroup():
    @irdl_op_definition
    class ThreeWarps(IRDLOperation):
        name = "test.three_warps"
        traits = traits_def(F.Collective(3))

    with pytest.raises(VerifyException, match="Collective over 3 warps"):
        ThreeWarps().verify()


# Operands that hold an address, by name, and a state-space property: an op with one touches
# memory, unless it only computes an address or frees tensor memory (listed with why).
ADDRESS_OPERANDS = {"pointer", "memory", "tile", "address", "dst", "src", "barrier", "slot",
                    "taddr", "a_desc", "b_desc"}
NOT_ACCESSES = {
    "tylo.ptr_add": "pointer arithmetic",
    "tylo.make_tile": "a view of memory",
    "tylo.window": "a view of memory",
    "tylo.shared_address": "the address of a shared pointer",
    "tylo.address_bits": "an address's bits",
    "tylo.mapa": "maps an address to another CTA's",
    "tylo.wgmma_descriptor": "encodes an address into a descriptor",
    "tylo.wgmma_encode": "encodes an address into a descriptor",
    "tylo.tcgen05_descriptor": "encodes an address into a descriptor",
    "ptx.cvta": "converts an address",
    "ptx.cvta_generic": "converts an address",
    "ptx.mapa": "maps an address to another CTA's",
    "ptx.tcgen05_dealloc": "frees tensor memory columns (no access to their contents)",
    "ptx.bar": "its barrier operand is a barrier's number (bar.sync a, b), not an address",
}


def _holds_address(op) -> bool:
    defs = op.get_irdl_definition()
    names = {n for n, _ in defs.operands}
    return bool(names & ADDRESS_OPERANDS) or "space" in defs.properties


@pytest.mark.parametrize("name", sorted(n for n, op in OPS.items() if _holds_address(op)))
def test_every_op_that_holds_an_address_declares_its_memory_access(name):
    op = OPS[name]
    if name in NOT_ACCESSES:
        assert not op.get_traits_of_type(F.MemoryAccess), name
        return
    accesses = op.get_traits_of_type(F.MemoryAccess)
    assert accesses, f"{name} holds an address but declares no MemoryAccess"


def test_every_shared_memory_op_is_found():
    found = {n for n, op in OPS.items() if op.get_traits_of_type(F.MemoryAccess)}
    assert {"tylo.store", "tylo.stmatrix", "tylo.st_vector", "tylo.store_words", "tylo.tma_load",
            "tylo.tma_store", "tylo.copy_async", "tylo.wgmma_instr", "tylo.tcgen05_mma_instr",
            "ptx.st", "ptx.stmatrix", "ptx.cp_async", "ptx.bulk_tensor_load",
            "ptx.wgmma_mma_async", "ptx.tcgen05_mma", "ptx.mbarrier_try_wait"} <= found


@pytest.mark.parametrize("name", sorted(n for n, op in OPS.items() if op.has_trait(F.AsyncCompletion)))
def test_completions_name_ops_of_the_same_dialect(name):
    trait = OPS[name].get_trait(F.AsyncCompletion)
    dialect = name.split(".")[0]
    named = trait.completed_by + ((trait.committed_by,) if trait.committed_by else ())
    for other in named:
        assert other in OPS and other.split(".")[0] == dialect, (name, other)


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_async_proxy_access_declares_its_completion(name):
    op = OPS[name]
    if any(a.proxy == F.ASYNC for a in op.get_traits_of_type(F.MemoryAccess)):
        assert op.has_trait(F.AsyncCompletion), name


def test_memory_effects_name_the_state_space_and_the_proxy():
    address = create_ssa_value(RegisterType("b32", 1))
    st = P.StOp("shared", "b32", address, create_ssa_value(RegisterType("b32", 2)))
    assert F.memory_effects(st) == {
        EffectInstance(MemoryEffectKind.WRITE, address, F.StateSpace("shared", "generic"))}
    assert get_effects(st) is None  # xDSL's CSE and DCE still see an op of unknown effect
    store = TmaStoreOp(create_ssa_value(i32), [], create_ssa_value(SHARED))
    assert {(e.kind.name, e.resource) for e in F.memory_effects(store)} == {
        ("READ", F.StateSpace("shared", "async")), ("WRITE", F.StateSpace("global", "async"))}


def test_a_tcgen05_mma_reads_a_from_shared_memory_or_tensor_memory():
    regs = [create_ssa_value(RegisterType(c, i)) for i, c in enumerate(("b32", "b64", "b64", "b64", "pred"))]
    d, a, b, idesc, enable = regs
    in_shared = Tcgen05MmaOp("f16", d, a, b, idesc, enable)
    in_tmem = Tcgen05MmaOp("f16", d, create_ssa_value(RegisterType("b32", 9)), b, idesc, enable,
                           a_tmem=True)
    reads = lambda op: {(e.value, e.resource.space) for e in F.memory_effects(op)  # noqa: E731
                        if e.kind is MemoryEffectKind.READ}
    assert reads(in_shared) == {(a, "shared"), (b, "shared")}
    assert reads(in_tmem) == {(in_tmem.a, "tensor"), (b, "shared")}


def test_collective_and_pending_register_facts():
    assert F.collective_warps(WgmmaMmaAsyncOp) == 4 and F.collective_warps(P.LdMatrixOp) == 1
    assert F.collective_warps(VoteSyncOp) == 0  # .sync over its member mask, not .aligned
    assert F.accesses_pending_registers(WgmmaWaitGroupOp)
    assert not F.accesses_pending_registers(P.StOp)
    assert F.completed_by(WgmmaMmaAsyncOp) == ("ptx.wgmma_wait_group",)


def test_no_op_with_facts_is_side_effect_free():
    """What `tylo-hoist-invariants` and xDSL's CSE rely on: they move or merge only side-effect
    free ops, and no op that touches memory, is collective or completes later is one."""
    with_facts = [op for op in OPS.values() if any(
        op.get_traits_of_type(t) for t in (F.MemoryAccess, F.Collective, F.AsyncCompletion,
                                           F.PendingRegisterAccess))]
    assert len(with_facts) > 60
    assert not [op.name for op in with_facts if is_side_effect_free(op)]
