"""The kernel language's names in `tylo`: declared by their modules (``EXPORTS`` and
``EXPORTS_UNSTARRED`` tuples), found from source text by api/__init__.py without importing."""

from __future__ import annotations

import importlib

import tylo


def test_every_declared_name_is_defined_where_it_is_declared():
    found = tylo._exports()
    assert len(found) > 100
    for name, (module, _) in found.items():
        assert hasattr(importlib.import_module(f"tylo.{module}"), name), (name, module)
        assert getattr(tylo, name) is getattr(importlib.import_module(f"tylo.{module}"), name)


def test_all_is_the_host_names_and_the_starred_exports():
    found = tylo._exports()
    starred = {n for n, (_, s) in found.items() if s}
    assert set(tylo.__all__) == set(tylo._HOST_NAMES) | starred
    assert {"sum", "mma_async", "prepare_tma"} <= set(found) - starred  # EXPORTS_UNSTARRED
    assert not set(tylo._HOST_NAMES) & set(found)
    assert {"tanh", "vote_all", "kernel"} <= starred
