"""The in-memory compile key covers everything that changes the kernel: ptxas options, the
module globals and closure values a kernel reads (by name or attribute chain), and helpers
called as ``module.helper``; a changed value compiles again, on compile() and on launch."""

from __future__ import annotations

import sys
import types

import pytest

import cache_helpers
import tylo
from tylo import Float32, knobs
from tylo.frontend.jit.dependencies import Read
from tylo.runtime import driver

THIS = sys.modules[__name__]
SCALE = 2.0
CONFIG = types.SimpleNamespace(OFFSET=1.0)
DESC = tylo.Tensor(Float32, 1)


@tylo.kernel
def scaled(out, x):
    i = tylo.thread_idx()
    out[i] = x[i] * SCALE


@tylo.kernel
def offset(out, x):
    i = tylo.thread_idx()
    out[i] = x[i] + CONFIG.OFFSET + cache_helpers.Tiles.SCALE


@tylo.kernel
def helped(out, x):
    i = tylo.thread_idx()
    out[i] = cache_helpers.twice(x[i])


def test_ptxas_options_are_part_of_the_key(builds):
    knobs.toolchain.ptxas_options = []
    scaled.cache.clear()
    first = scaled.compile(DESC, DESC)
    knobs.toolchain.ptxas_options = ["-O0"]
    other = scaled.compile(DESC, DESC)
    assert other is not first and builds == ["scaled", "scaled"]
    assert other.cubin != first.cubin  # -O0 assembles another cubin
    knobs.toolchain.ptxas_options = []
    assert scaled.compile(DESC, DESC) is first and len(builds) == 2


def test_a_changed_module_global_compiles_again(builds, monkeypatch):
    scaled.cache.clear()
    first = scaled.compile(DESC, DESC)
    assert "2.000000e+00" in first.asm["tylo"]
    monkeypatch.setattr(THIS, "SCALE", 3.0)
    second = scaled.compile(DESC, DESC)
    assert second is not first and "3.000000e+00" in second.asm["tylo"]
    monkeypatch.setattr(THIS, "SCALE", 2.0)  # an equal value: the first kernel again
    assert scaled.compile(DESC, DESC) is first and builds == ["scaled", "scaled"]


def test_attribute_chains_are_read_to_their_value(builds, monkeypatch):
    labels = [r.label for r in offset.dependencies().reads]
    assert labels == [f"{__name__}:CONFIG.OFFSET", f"{__name__}:cache_helpers.Tiles.SCALE"]
    first = offset.compile(DESC, DESC)
    monkeypatch.setattr(CONFIG, "OFFSET", 5.0)
    second = offset.compile(DESC, DESC)
    assert second is not first and "5.000000e+00" in second.asm["tylo"]
    monkeypatch.setattr(cache_helpers.Tiles, "SCALE", 7.0)
    third = offset.compile(DESC, DESC)
    assert third is not second and "7.000000e+00" in third.asm["tylo"]


def test_helpers_called_as_module_attributes_are_in_the_key(builds, monkeypatch):
    deps = helped.dependencies()
    assert deps.helpers == [cache_helpers.twice.source]
    first = helped.compile(DESC, DESC)
    assert first.asm["tylo"].count("arith.addf") == 1
    monkeypatch.setattr(cache_helpers, "twice", cache_helpers.thrice)
    second = helped.compile(DESC, DESC)
    assert second is not first and second.asm["tylo"].count("arith.addf") == 2
    assert helped.dependencies().helpers == [cache_helpers.thrice.source]


def _closure_kernel():
    step = 1.0

    @tylo.kernel
    def stepped(out, x):
        i = tylo.thread_idx()
        out[i] = x[i] + step

    def set_step(value):
        nonlocal step
        step = value

    return stepped, set_step


def test_a_changed_closure_value_compiles_again(builds):
    stepped, set_step = _closure_kernel()
    first = stepped.compile(DESC, DESC)
    assert "1.000000e+00" in first.asm["tylo"]
    set_step(4.0)
    second = stepped.compile(DESC, DESC)
    assert second is not first and "4.000000e+00" in second.asm["tylo"]


def test_reads_skip_locals_parameters_builtins_and_tylo():
    @tylo.kernel
    def local_names(out, x, n):
        total = 0.0
        for j in range(4):
            total = total + x[j]
        out[tylo.thread_idx()] = total + SCALE

    assert [r.label for r in local_names.dependencies().reads] == [f"{__name__}:SCALE"]


@pytest.mark.skipif(driver.probe() is None, reason="launches fake pointers: only without a GPU")
def test_a_launch_notices_a_changed_global(builds, monkeypatch):
    from test_cache_and_launch import FakeDeviceArray

    scaled.cache.clear()
    scaled.fast.clear()
    out, x = FakeDeviceArray((32,)), FakeDeviceArray((32,), ptr=0x7F0000010000)
    for _ in range(2):
        with pytest.raises(tylo.DeviceError):
            scaled[(1,), (32,)](out, x)
    assert builds == ["scaled"]  # the second launch took the fast path
    monkeypatch.setattr(THIS, "SCALE", 9.0)
    with pytest.raises(tylo.DeviceError):
        scaled[(1,), (32,)](out, x)
    assert builds == ["scaled", "scaled"]
    assert any("9.000000e+00" in c.asm["tylo"] for c in scaled.cache.values())


def test_a_value_without_a_token_is_compared_by_identity(monkeypatch):
    class Opaque:
        pass

    token = Opaque()
    read = Read("m:OBJ", {"OBJ": token}, "OBJ", (), token)
    assert read.token is None and read.unchanged()
    read.scope["OBJ"] = Opaque()
    assert not read.unchanged()
