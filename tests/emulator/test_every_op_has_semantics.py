"""Every op of the ptx dialect has its emulation: an xDSL implementation in
`tylo.emulator.semantics`, or, for declarations and no-ops, the scheduler's handling. A new
instruction without one fails here, before any kernel meets it."""

from tylo.dialects.ptx import PTX
from tylo.emulator.scheduler import Program, _implementations

SCHEDULER = {"ptx.bar_sync", "ptx.bar", "ptx.barrier_cluster"} | set(Program.NOPS)
"""Ops the scheduler handles itself (barriers, labels, register reads, array declarations)."""
MODULE_SCOPE = {"ptx.entry", "ptx.extern_func", "ptx.global_string", "ptx.extern_shared_decl"}
"""Module-level ops: the entry the scheduler runs, declarations `Machine.declare` lays out."""


def test_every_ptx_op_is_emulated():
    registered = {t.name for t in _implementations()._impls._impl_dict}
    missing = [op.name for op in PTX.operations
               if op.name not in registered | SCHEDULER | MODULE_SCOPE]
    assert not missing, f"ptx ops without emulation: {missing}"


def test_nothing_is_both_registered_and_skipped():
    registered = {t.name for t in _implementations()._impls._impl_dict}
    assert not registered & (SCHEDULER | MODULE_SCOPE)
