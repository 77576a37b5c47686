"""The tcgen05 / TMEM builtins compiled for sm_100a (frontend/language/tcgen05.py): the PTX each emits,
ptxas's acceptance (every compile here assembles), the SASS (nvdisasm: UTCHMMA, LDTM, STTM,
UTCATOMSWS, UTCBAR) and the refusal of every tcgen05 builtin on sm_90a and sm_120a at the user's
line, naming the instruction and the target. Kernels: tests/emulator/tcgen05_kernels.py; their
emulated runs: tests/emulator/test_tcgen05_emulation.py; the other rejections: the catalogue
(tests/catalogue/tcgen05_mistakes.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import tylo
from tylo import BFloat16, Float8E4M3, Float16, Float32, Int8, Int32

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "emulator"))
from tcgen05_kernels import ARCH, mma_64xn, mma_128xn, tmem_roundtrip, tmem_shape_roundtrip  # noqa: E402

T = tylo.Tensor


def _roundtrip(arch=ARCH):
    return tmem_roundtrip.compile(T(Float32, 2), T(Float32, 2), 8, 64, block=128, arch=arch)


def _mma(dtype=BFloat16, b_axis=0, a_tmem=False):
    c = Int32 if dtype == Int8 else Float32
    return mma_128xn.compile(T(c, 2), T(dtype, 2), T(dtype, 2), 64, 64, b_axis, dtype,
                             64 * dtype.bytes, a_tmem, block=128, arch=ARCH)


def _lines(ptx: str, word: str) -> list[str]:
    return [line.strip() for line in ptx.splitlines() if word in line]


def test_tmem_builtins_emit_their_ptx():
    ptx = _roundtrip().ptx
    assert ".version 8.7\n.target sm_100a" in ptx
    assert _lines(ptx, "tcgen05.alloc")[0].startswith(
        "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r")
    assert _lines(ptx, "tcgen05.alloc")[0].endswith("], 64;")
    st, = _lines(ptx, "tcgen05.st")
    assert st.startswith("tcgen05.st.sync.aligned.32x32b.x8.b32 [%r") and st.count("%f") == 8
    ld, = _lines(ptx, "tcgen05.ld")
    assert ld.startswith("tcgen05.ld.sync.aligned.32x32b.x8.b32 {%f") and ld.count("%f") == 8
    assert _lines(ptx, "tcgen05.wait") == ["tcgen05.wait::st.sync.aligned;",
                                           "tcgen05.wait::ld.sync.aligned;"]
    assert ptx.index("tcgen05.wait::st") < ptx.index("tcgen05.ld")
    assert _lines(ptx, "tcgen05.fence") == ["tcgen05.fence::before_thread_sync;",
                                            "tcgen05.fence::after_thread_sync;"] * 2
    assert _lines(ptx, "relinquish") == ["tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;"]
    dealloc, = _lines(ptx, "tcgen05.dealloc")
    assert dealloc.startswith("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r")
    assert dealloc.endswith(", 64;")


@pytest.mark.parametrize("arch, version", [
    ("sm_100a", "8.7"), ("sm_100f", "8.8"), ("sm_103a", "8.8"), ("sm_103f", "8.8"),
    ("sm_110a", "9.0"), ("sm_110f", "9.0"),
])
def test_every_tcgen05_target_assembles(arch, version):
    """ptxas 13.0 assembles the TMEM kernel for each datacenter Blackwell target, the family
    forms included (they need PTX ISA 8.8, sm_110 9.0: 8.7 is refused for sm_100f)."""
    compiled = _roundtrip(arch)
    assert f".version {version}\n.target {arch}" in compiled.ptx
    assert compiled.report.registers > 0


def test_sm_101_is_refused_with_its_new_name():
    with pytest.raises(tylo.UnsupportedError, match=r"CUDA 13 renamed sm_101 to sm_110: use "
                                                    r"'sm_110a'"):
        _roundtrip("sm_101a")


@pytest.mark.parametrize("dtype, b_axis, kind, idesc", [
    (BFloat16, 0, "f16", 0x08100490),  # D f32, A = B bf16, K-major, M 128, N 64
    (BFloat16, 1, "f16", 0x08110490),  # B MN-major: transpose-B (bit 16)
    (Int8, 0, "i8", 0x081004A0),       # D s32 (2), A = B s8 (1)
])
def test_mma_emits_k_steps_commit_and_instruction_descriptor(dtype, b_axis, kind, idesc):
    ptx = _mma(dtype, b_axis).ptx
    mmas = _lines(ptx, "tcgen05.mma")
    assert len(mmas) == 64 // (256 // dtype.bits)  # K = 64 in instructions of 256 bits
    assert all(m.startswith(f"tcgen05.mma.cta_group::1.kind::{kind} [%r") for m in mmas)
    assert all(m.split(", ")[1].startswith("%rd") for m in mmas)  # A from a descriptor
    assert "mov.b32 %r" in ptx and f", {idesc};" in ptx
    assert hex(idesc) == hex(tylo.instruction_descriptor(
        tylo.Tcgen05MMA((128, 64, 256 // dtype.bits), dtype, Int32 if dtype == Int8 else Float32),
        "K", "MN" if b_axis else "K"))
    commit, = _lines(ptx, "tcgen05.commit")
    assert commit.startswith("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r")
    assert ptx.index(mmas[-1]) < ptx.index(commit)


@pytest.mark.parametrize("dtype, n, k, idesc", [
    (BFloat16, 64, 32, 0x04100490),  # M >> 4 = 4 in bits 24-28, N >> 3 = 8, bf16, D f32
    (Int8, 16, 64, 0x040404A0),      # N >> 3 = 2, s8, D s32
])
def test_m64_mma_compiles_with_its_instruction_descriptor(dtype, n, k, idesc):
    c = Int32 if dtype == Int8 else Float32
    compiled = mma_64xn.compile(T(c, 2), T(dtype, 2), T(dtype, 2), n, k, 0, dtype, 64,
                                "16x256b", block=128, arch=ARCH)  # ptxas assembles it (sm_100a)
    ptx = compiled.ptx
    mmas = _lines(ptx, "tcgen05.mma")
    assert len(mmas) == k // (256 // dtype.bits) + 1  # K steps, then one more accumulating
    assert f", {idesc};" in ptx
    assert idesc == tylo.instruction_descriptor(tylo.Tcgen05MMA((64, n, 256 // dtype.bits), dtype, c))
    ld, = _lines(ptx, "tcgen05.ld")
    assert ld.startswith(f"tcgen05.ld.sync.aligned.16x256b.x{n // 8}.b32 {{")
    sass = compiled.asm["sass"]
    assert ("UTCHMMA" if dtype == BFloat16 else "UTCIMMA") in sass
    assert f"LDTM.16dp256bit.x{n // 8} " in sass


@pytest.mark.parametrize("dtype, kind", [(Float16, "f16"), (Float8E4M3, "f8f6f4")])
def test_f16_accumulator_compiles_with_d_type_f16(dtype, kind):
    """An F16 D (.kind::f16 with F16 inputs, .kind::f8f6f4): the instruction descriptor's D
    type is 0 (F16, bits 4-5), ptxas assembles it for sm_100a, and D is read by the packed
    16-bit .32x32b load (32 words of 64 columns: 64 registers over the (32, 128) view)."""
    compiled = mma_128xn.compile(T(Float16, 2), T(dtype, 2), T(dtype, 2), 64, 64, 0, dtype,
                                 64 * dtype.bytes, False, None, False, True, block=128,
                                 arch=ARCH)
    ptx = compiled.ptx
    idesc = tylo.instruction_descriptor(tylo.Tcgen05MMA((128, 64, 256 // dtype.bits), dtype,
                                                        Float16), "K", "K")
    assert (idesc >> 4) & 3 == 0 and f", {idesc};" in ptx
    mmas = _lines(ptx, "tcgen05.mma")
    assert len(mmas) == 64 // (256 // dtype.bits)
    assert all(m.startswith(f"tcgen05.mma.cta_group::1.kind::{kind} [%r") for m in mmas)
    ld, = _lines(ptx, "tcgen05.ld")
    assert ld.startswith("tcgen05.ld.sync.aligned.32x32b.x64.b32 {%r")
    assert compiled.report.registers > 0  # ptxas assembled it


def test_mma_with_a_from_tmem_names_it_in_brackets():
    mmas = _lines(_mma(a_tmem=True).ptx, "tcgen05.mma")
    assert len(mmas) == 4 and all(m.split(", ")[0].endswith("]") and "[%r" in m.split(", ")[1]
                                  for m in mmas)


@pytest.mark.parametrize("shape, n, dtype, num, registers, sass", [
    ("16x256b", 16, Float32, 2, 8, "16dp256bit.x2"),
    ("16x128b", 16, Float32, 4, 8, "16dp128bit.x4"),
    ("16x64b", 16, Float32, 8, 8, "16dp64bit.x8"),
    ("16x256b", 64, BFloat16, 4, 16, "16dp256bit.x4"),  # 16-bit: two values a register
    ("16x64b", 2, Float32, 1, 1, "16dp64bit"),
])
def test_16_lane_shapes_emit_their_ptx_and_sass(shape, n, dtype, num, registers, sass):
    k = tmem_shape_roundtrip.compile(T(dtype, 2), T(dtype, 2), T(dtype, 2), n, shape, dtype,
                                     block=128, arch=ARCH)  # ptxas assembles it for sm_100a
    reg = "%f" if dtype == Float32 else "%r"
    st, = [line for line in _lines(k.ptx, "tcgen05.st") if shape in line]
    assert st.startswith(f"tcgen05.st.sync.aligned.{shape}.x{num}.b32 [%r") and st.count(reg) == registers + (reg == "%r")
    ld, = [line for line in _lines(k.ptx, "tcgen05.ld") if shape in line]
    assert ld.startswith(f"tcgen05.ld.sync.aligned.{shape}.x{num}.b32 {{{reg}")
    lines = k.asm["sass"].splitlines()
    assert any(f"STTM.{sass} " in line for line in lines) and any(f"LDTM.{sass} " in line for line in lines)


def test_sass_shows_the_tensor_memory_instructions():
    sass = _mma().asm["sass"]
    for opcode in ("UTCHMMA", "UTCBAR", "LDTM", "UTCATOMSWS"):
        assert opcode in sass, opcode
    assert "gdesc[" in sass and "tmem[" in sass and "idesc[" in sass
    assert "STTM" in _roundtrip().asm["sass"]


@tylo.kernel
def one_builtin(x, which: tylo.constexpr):
    atom = tylo.Tcgen05MMA((128, 64, 16), BFloat16)
    if which == "operand":
        tylo.tcgen05_operand(atom, "A", tylo.shared_tile(tylo.TMATile(BFloat16, (128, 64), 1)))
    elif which == "fence":
        tylo.tcgen05_fence_after_thread_sync()
    elif which == "wait":
        tylo.wait_stores()
    else:
        tylo.commit_mma(tylo.mbarriers(1)[0])


@pytest.mark.parametrize("arch", ["sm_90a", "sm_120a"])
def test_other_targets_are_refused_at_the_users_line(arch):
    with pytest.raises(tylo.UnsupportedError) as info:
        _roundtrip(arch)
    err = info.value
    assert "tcgen05.alloc needs a datacenter Blackwell target" in err.message
    assert f"the target is {arch}" in err.message
    assert err.location is not None and err.location.filename.endswith("tcgen05_kernels.py")
    for which, instruction in (("operand", "tcgen05.mma"),
                               ("fence", "tcgen05.fence::after_thread_sync"),
                               ("wait", "tcgen05.wait::st"), ("commit", "tcgen05.commit")):
        with pytest.raises(tylo.UnsupportedError, match=f"{instruction} needs .* the target is "
                                                        f"{arch}") as info:
            one_builtin.compile(T(Float32, 1), which, block=128, arch=arch)
        assert info.value.location.filename == __file__


def test_the_public_tcgen05_operand_dispatches_on_its_arguments_types(monkeypatch):
    """`tylo.tcgen05_operand` hands a kernel's tile or operand (a class marked
    ``__tylo_kernel_value__``) to the kernel's function, and keeps host values on the host."""
    from tylo.frontend.language import tcgen05 as kernel_module
    from tylo.frontend.language.tiles import Tensor, Tile

    assert Tile.__tylo_kernel_value__ is Tensor.__tylo_kernel_value__ is True
    assert kernel_module.KernelTcgen05Operand.__tylo_kernel_value__ is True
    calls = []
    monkeypatch.setattr(kernel_module, "tcgen05_operand",
                        lambda *args, **kw: calls.append((args, kw)) or "kernel operand")

    class FakeTile:
        __tylo_kernel_value__ = True

    atom = tylo.Tcgen05MMA((128, 64, 16), BFloat16)
    tile = FakeTile()
    assert tylo.tcgen05_operand(atom, "A", tile, inbounds=True) == "kernel operand"
    assert calls == [((atom, "A", tile, (0, 0), 0), {"inbounds": True})]
    assert tylo.tcgen05_operand(FakeTile(), (0, 16)) == "kernel operand"  # a kernel's operand
    layout = tylo.shared_layout(tylo.TMATile(BFloat16, (128, 64), 1))
    host = tylo.tcgen05_operand(atom, "A", layout)
    assert isinstance(host, tylo.Tcgen05Operand) and len(calls) == 2
    assert tylo.tcgen05_operand(host, (0, 16)) == host.at((0, 16))
    with pytest.raises(tylo.PlanError, match="inbounds=True is for a kernel's operand"):
        tylo.tcgen05_operand(atom, "A", layout, inbounds=True)
