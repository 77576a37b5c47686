"""ptxas discovery, assembly, the -v report, and its failures (no GPU needed)."""

from __future__ import annotations

import os
import re
import shlex

import pytest

from tylo.compiler.support import knobs
from tylo.compiler.support.errors import PerformanceWarning, PtxasError, TyloError
from tylo.runtime.ptxas import (
    ResourceReport,
    assemble,
    find_ptxas,
    parse_report,
    ptxas_version,
    serialized_wgmma,
    warn_serialized,
)


def test_find_ptxas_and_version():
    path = find_ptxas()
    assert os.access(path, os.X_OK)
    assert re.fullmatch(r"\d+\.\d+\.\d+", ptxas_version(path))


def test_assemble_vector_add(load_ptx):
    result = assemble(load_ptx("vadd"), "sm_90a", "vadd")
    assert result.cubin[:4] == b"\x7fELF"
    assert result.cubin_path.read_bytes() == result.cubin
    assert result.ptx_path.read_text() == load_ptx("vadd")
    assert result.command[1:4] == ["-arch=sm_90a", "-v", "-O3"]
    report = result.report
    assert (report.name, report.arch) == ("vadd", "sm_90a")
    assert 0 < report.registers <= 255
    assert (report.shared_bytes, report.stack_frame_bytes) == (0, 0)
    assert (report.spill_store_bytes, report.spill_load_bytes) == (0, 0)
    assert str(report) == (
        f"vadd: {report.registers} registers, 0 bytes smem, 0 bytes stack, "
        "0/0 bytes spill stores/loads"
    )
    assert "Compiling entry function 'vadd'" in result.log


def test_report_of_one_entry_among_several(load_ptx):
    source = load_ptx("resources")
    k1 = assemble(source, "sm_90a", "k1").report
    assert (k1.shared_bytes, k1.barriers, k1.stack_frame_bytes) == (1024, 1, 64)
    k2 = assemble(source, "sm_90a", "k2").report
    assert (k2.shared_bytes, k2.barriers, k2.stack_frame_bytes) == (0, 0, 0)
    with pytest.raises(PtxasError, match=r"no entry function 'k3' \(entries: k2, k1\)"):
        assemble(source, "sm_90a", "k3")


def test_parse_report_older_format():
    log = """\
ptxas info    : 0 bytes gmem, 8 bytes cmem[4]
ptxas info    : Compiling entry function 'gemm' for 'sm_80'
ptxas info    : Function properties for gemm
    24 bytes stack frame, 16 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 255 registers, 49152 bytes smem, 400 bytes cmem[0], 8 bytes cmem[2]
"""
    report = parse_report(log, "gemm")
    assert report == ResourceReport(
        name="gemm", arch="sm_80", registers=255, shared_bytes=49152, stack_frame_bytes=24,
        spill_store_bytes=16, spill_load_bytes=12, constant_bytes=408,
    )
    assert str(report) == (
        "gemm: 255 registers, 49152 bytes smem, 24 bytes stack, 16/12 bytes spill stores/loads"
    )


def test_ptxas_error_names_file_command_and_output(load_ptx):
    with pytest.raises(PtxasError) as info:
        assemble(load_ptx("bad"), "sm_90a", "broken")
    message = str(info.value)
    ptx_files = re.findall(r"\S+broken-[0-9a-f]+\.ptx", message)
    assert ptx_files and os.path.isfile(ptx_files[0])
    command = re.search(r"command: (.*)", message).group(1)
    argv = shlex.split(command)
    assert argv[0] == find_ptxas() and "-arch=sm_90a" in argv and ptx_files[0] in argv
    assert "frobnicate" in message and "line 9" in message


def test_missing_ptxas_override_fails_assemble(tmp_path, load_ptx):
    knobs.toolchain.ptxas = tmp_path / "no-such-ptxas"
    with pytest.raises(TyloError, match="TYLO_PTXAS"):
        assemble(load_ptx("vadd"), "sm_90a", "vadd")


def test_keep_dir_and_options(tmp_path, load_ptx):
    knobs.toolchain.keep_dir = tmp_path / "keep"
    knobs.toolchain.ptxas_options = ["-O0", "--warn-on-spills"]
    result = assemble(load_ptx("vadd"), "sm_90a", "vadd")
    assert result.ptx_path.parent == tmp_path / "keep"
    assert result.cubin_path.is_file()
    assert "-O3" not in result.command
    assert result.command[-5:-3] == ["-O0", "--warn-on-spills"]


def test_files_are_kept_once_per_content_not_per_process(monkeypatch, tmp_path, load_ptx):
    """No folder per compile: the files go to one folder, named by their content's digest."""
    import tempfile

    knobs.toolchain.keep_dir, knobs.toolchain.ptxas_options = None, []
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    first = assemble(load_ptx("vadd"), "sm_90a", "vadd")
    again = assemble(load_ptx("vadd"), "sm_90a", "vadd")
    assert (again.ptx_path, again.cubin_path) == (first.ptx_path, first.cubin_path)
    (folder,) = tmp_path.iterdir()  # the cache is off in the tests: <temp dir>/tylo-<uid>
    assert folder.name.startswith("tylo-")
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [first.ptx_path.name, first.cubin_path.name])  # no temporary file left
    knobs.toolchain.ptxas_options = ["-O0"]
    other = assemble(load_ptx("vadd"), "sm_90a", "vadd")
    assert other.cubin_path != first.cubin_path and first.cubin_path.read_bytes() == first.cubin


def test_files_go_to_the_cache_folder_when_it_is_on(tmp_path, load_ptx):
    knobs.toolchain.keep_dir = None
    knobs.cache.off, knobs.cache.dir = False, tmp_path / "cache"
    result = assemble(load_ptx("vadd"), "sm_90a", "vadd")
    assert result.ptx_path.parent == tmp_path / "cache" / "files"
    assert result.cubin_path.read_bytes() == result.cubin
    with pytest.raises(PtxasError) as info:
        assemble(load_ptx("bad"), "sm_90a", "broken")
    kept = re.search(r"on (\S+broken-[0-9a-f]+\.ptx)", str(info.value)).group(1)
    assert os.path.dirname(kept) == str(tmp_path / "cache" / "files")
    assert open(kept).read() == load_ptx("bad")


SERIALIZED_LOG = """\
ptxas info    : Compiling entry function 'gemm' for 'sm_90a'
ptxas info    : (C7511) Potential Performance Loss: wgmma.mma_async instructions are serialized due to insufficient register resources for the wgmma pipeline in the function 'gemm'
ptxas info    : (C7520) Potential Performance Loss: wgmma.mma_async instructions are serialized due to program dependence on compiler-inserted WG.AR in divergent path
ptxas info    : (C7511) Potential Performance Loss: wgmma.mma_async instructions are serialized due to insufficient register resources for the wgmma pipeline in the function 'gemm'
ptxas info    : Used 168 registers, used 1 barriers
"""


def test_serialized_wgmma_causes():
    """ptxas's notes (as printed by ptxas 12.x, the C7511/C7520 forms): one cause per distinct
    note, without the function suffix; none in a clean log."""
    assert serialized_wgmma(SERIALIZED_LOG) == [
        "insufficient register resources for the wgmma pipeline",
        "program dependence on compiler-inserted WG.AR in divergent path"]
    assert serialized_wgmma("ptxas info    : Used 12 registers") == []


def test_serialized_wgmma_warns_naming_the_cause():
    with pytest.warns(PerformanceWarning) as record:
        warn_serialized(SERIALIZED_LOG, "gemm", "sm_90a")
    messages = [str(w.message) for w in record]
    assert len(messages) == 2
    assert messages[0].startswith("gemm (sm_90a): ptxas serializes its wgmma.mma_async "
                                  "instructions due to insufficient register resources")


def test_clean_assembly_gives_no_performance_warning(load_ptx):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", PerformanceWarning)
        assemble(load_ptx("vadd"), "sm_90a", "vadd")
