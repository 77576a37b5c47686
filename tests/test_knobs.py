"""`tylo.knobs`: a value set in code wins over the environment, the environment is read at each
use, scopes restore what they changed, and values are checked both ways."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import tylo
from tylo.compiler.support import knobs


def test_public_as_tylo_knobs():
    assert tylo.knobs is knobs and "knobs" in tylo.__all__


def test_the_environment_is_read_at_each_use(monkeypatch):
    monkeypatch.delenv("TYLO_EMULATE", raising=False)
    assert knobs.runtime.emulate is False
    monkeypatch.setenv("TYLO_EMULATE", "on")
    assert knobs.runtime.emulate is True
    monkeypatch.setenv("TYLO_EMULATE", "0")
    assert knobs.runtime.emulate is False


def test_a_value_set_in_code_wins_until_deleted(monkeypatch):
    monkeypatch.setenv("TYLO_ARCH", "sm_80")
    with knobs.scope():
        knobs.compile.arch = "sm_100a"
        assert knobs.compile.arch == "sm_100a"
        del knobs.compile.arch
        assert knobs.compile.arch == "sm_80"
    monkeypatch.delenv("TYLO_ARCH")
    assert knobs.compile.arch == "sm_90a"  # the default


def test_scopes_restore_every_knob_of_their_group(monkeypatch):
    monkeypatch.setenv("TYLO_ARCH", "sm_80")
    with knobs.compile.scope(arch="sm_90a") as group:
        assert group is knobs.compile and knobs.compile.arch == "sm_90a"
        knobs.compile.verify_passes = False  # set inside: undone too
        with knobs.compile.scope(arch="sm_100a"):
            assert knobs.compile.arch == "sm_100a"
        assert knobs.compile.arch == "sm_90a"
    assert knobs.compile.arch == "sm_80"
    assert knobs.compile.verify_passes is True  # the suite's TYLO_VERIFY_PASSES=1


def test_the_top_level_scope_finds_each_knob_by_name(tmp_path):
    with knobs.scope(emulate=True, dir=tmp_path, off=False, dump_ir=True):
        assert knobs.runtime.emulate is True and knobs.compile.dump_ir == "stderr"
        assert knobs.cache.folder == tmp_path
        knobs.autotune.progress = False
    assert knobs.runtime.emulate is False and knobs.cache.folder is None  # TYLO_NO_CACHE=1
    assert knobs.autotune.progress is True


def test_a_scope_works_as_a_decorator():
    @knobs.scope(emulate=True)
    def emulated():
        return knobs.runtime.emulate

    assert emulated() is True and knobs.runtime.emulate is False


def test_unknown_names_are_errors():
    with pytest.raises(AttributeError, match="no knob named 'emulated'"):
        with knobs.scope(emulated=True):
            pass
    with pytest.raises(AttributeError, match="RuntimeKnobs has no knob 'emulated'"):
        knobs.runtime.emulated = True
    with pytest.raises(AttributeError, match="has no knob 'dump'"):
        with knobs.compile.scope(dump=True):
            pass


@pytest.mark.parametrize("text, value", [
    ("1", True), ("true", True), ("YES", True), (" on ", True),
    ("", False), ("0", False), ("False", False), ("no", False), ("off", False)])
def test_flags_parse(monkeypatch, text, value):
    monkeypatch.setenv("TYLO_AUTOTUNE_PROGRESS", text)
    assert knobs.autotune.progress is value


def test_bad_environment_values_name_the_variable(monkeypatch):
    monkeypatch.setenv("TYLO_EMULATE", "maybe")
    with pytest.raises(knobs.KnobError, match=r"TYLO_EMULATE='maybe': expected a flag"):
        knobs.runtime.emulate  # noqa: B018 - the read raises
    monkeypatch.setenv("TYLO_ARCH", "hopper")
    with pytest.raises(tylo.TyloError, match=r"TYLO_ARCH='hopper': expected a target"):
        knobs.compile.arch  # noqa: B018


def test_values_set_in_code_are_type_checked():
    with knobs.scope():
        with pytest.raises(TypeError, match=r"emulate \(TYLO_EMULATE\) takes True or False"):
            knobs.runtime.emulate = "1"
        with pytest.raises(TypeError, match="a list of strings"):
            knobs.toolchain.ptxas_options = ["-O0", 3]
        with pytest.raises(TypeError, match="a path"):
            knobs.toolchain.keep_dir = 3
        with pytest.raises(knobs.KnobError, match="expected a target"):
            knobs.compile.arch = "90"
        assert knobs.toolchain.ptxas_options == []  # nothing was stored


def test_paths_and_lists(monkeypatch):
    monkeypatch.setenv("TYLO_KEEP_DIR", "~/kept")
    assert knobs.toolchain.keep_dir == Path.home() / "kept"
    monkeypatch.setenv("TYLO_PTXAS_OPTIONS", " -O0  --warn-on-spills ")
    assert knobs.toolchain.ptxas_options == ["-O0", "--warn-on-spills"]
    with knobs.toolchain.scope(ptxas_options="-O1 -v", keep_dir=None):
        assert knobs.toolchain.ptxas_options == ["-O1", "-v"]
        knobs.toolchain.ptxas_options.append("-x")  # a fresh list each read
        assert knobs.toolchain.ptxas_options == ["-O1", "-v"]
        assert knobs.toolchain.keep_dir is None  # None set in code wins over the variable


def test_dump_ir_values(monkeypatch, tmp_path):
    for text, value in [("1", "stderr"), ("stderr", "stderr"), ("0", None), ("", None),
                        (str(tmp_path), str(tmp_path))]:
        monkeypatch.setenv("TYLO_DUMP_IR", text)
        assert knobs.compile.dump_ir == value
    for code, value in [(True, "stderr"), (False, None), (None, None), (tmp_path, str(tmp_path))]:
        with knobs.compile.scope(dump_ir=code):
            assert knobs.compile.dump_ir == value


def test_the_cache_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("TYLO_NO_CACHE")
    monkeypatch.setenv("TYLO_CACHE_DIR", "")
    assert knobs.cache.dir is None and knobs.cache.folder is None  # set but empty: off
    monkeypatch.delenv("TYLO_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    if sys.platform not in ("win32", "darwin"):
        assert knobs.cache.folder == tmp_path / "tylo"
    with knobs.cache.scope(dir=tmp_path / "c", off=True):
        assert knobs.cache.dir == tmp_path / "c" and knobs.cache.folder is None


def test_the_docstring_lists_every_knob_and_variable():
    for group_name, group in knobs.GROUPS.items():
        for name, knob in group.knobs().items():
            assert f"``{group_name}.{name}``" in knobs.__doc__
            assert knob.env in knobs.__doc__
