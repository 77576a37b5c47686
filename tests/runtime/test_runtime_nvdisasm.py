"""nvdisasm discovery, disassembly of a cubin, and counting SASS opcodes (no GPU needed)."""

from __future__ import annotations

import pytest

from tylo.compiler.support.errors import TyloError
from tylo.runtime.nvdisasm import disassemble, loop_opcode_counts, opcode_counts
from tylo.runtime.ptxas import assemble

SASS = """\
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   S2R R0, SR_CTAID.X ;
        /*0290*/              @!P0 BRA `(.L_x_0) ;
        /*02a0*/                   HMMA.16816.F32.BF16 R4, R8, R12, R4 ;
        /*02b0*/               @P1 HMMA.16816.F32.BF16 R4, R8, R14, R4 ;
        /*02c0*/              @UPT LDSM.16.M88.4 R8, [R2] ;
        /*02d0*/                   REDG.E.ADD.F32x2.FTZ.RN.STRONG.GPU desc[UR4][R2.64], R6 ;
        /*2800*/                   NOP;
.L_x_9:
        .global         gemm
"""


def test_opcode_counts_strip_predicates_and_modifiers():
    base, full = opcode_counts(SASS)
    assert base == {"LDC": 1, "S2R": 1, "BRA": 1, "HMMA": 2, "LDSM": 1, "REDG": 1, "NOP": 1}
    assert full["HMMA.16816.F32.BF16"] == 2 and full["LDSM.16.M88.4"] == 1
    assert full["REDG.E.ADD.F32x2.FTZ.RN.STRONG.GPU"] == 1  # (a lower-case modifier: F32x2)
    assert full["S2R"] == 1 and "P0" not in base and "UPT" not in base


LOOPS = """\
        /*0000*/                   MOV R1, RZ ;
.L_x_1:
        /*0010*/                   IADD3 R1, R1, 0x1, RZ ;
        /*0020*/                   ISETP.GE.AND P0, PT, R1, 0x4, PT ;
        /*0030*/              @!P0 BRA `(.L_x_1) ;
.L_x_2:
        /*0040*/                   LDSM.16.M88.4 R8, [R2] ;
        /*0050*/              @P1 BRA `(.L_x_3) ;
        /*0060*/                   LDGSTS.E.BYPASS.128.ZFILL [R3], desc[UR4][R4.64], P2 ;
        /*0070*/                   IMAD R5, R5, 0x2, RZ ;
.L_x_3:
        /*0080*/                   HMMA.16816.F32.BF16 R4, R8, R12, R4 ;
        /*0090*/                   HMMA.16816.F32.BF16 R4, R8, R14, R4 ;
        /*00a0*/              @!P0 BRA `(.L_x_2) ;
        /*00b0*/                   EXIT ;
"""


def test_loop_opcode_counts_take_the_loop_of_the_marker_without_its_cold_blocks():
    assert loop_opcode_counts(LOOPS, "HMMA") == {"LDSM": 1, "BRA": 2, "LDGSTS": 1, "IMAD": 1,
                                                  "HMMA": 2}
    assert loop_opcode_counts(LOOPS, "HMMA", cold=("ZFILL",)) == {"LDSM": 1, "BRA": 2, "HMMA": 2}
    assert loop_opcode_counts(LOOPS, "ISETP") == {"IADD3": 1, "ISETP": 1, "BRA": 1}
    assert loop_opcode_counts(LOOPS, "DEPBAR") == {} and loop_opcode_counts(SASS, "HMMA") == {}


def test_disassemble_vector_add(load_ptx):
    cubin = assemble(load_ptx("vadd"), "sm_90a", "vadd").cubin
    sass = disassemble(cubin, "vadd")
    base, _ = opcode_counts(sass)
    assert base["EXIT"] >= 1 and base["LDG"] == 2 and base["STG"] == 1
    assert base["FFMA"] == 1  # fma.rn.f32


def test_disassemble_reports_a_bad_cubin(tmp_path):
    with pytest.raises(TyloError, match="nvdisasm failed"):
        disassemble(b"not an ELF file", "junk")
