"""Stable tokens of the values a kernel reads, and which names count as its reads."""

from __future__ import annotations

import ast
import dataclasses
import enum
import subprocess
import sys
import textwrap

import numpy as np

import cache_helpers
import tylo
from tylo import BFloat16, Float32, MMAAtom, TiledMMA
from tylo.frontend.jit.dependencies import free_reads, stable_token

ATOM = MMAAtom((16, 8, 16), BFloat16, Float32)


class Colour(enum.Enum):
    RED = 1


@dataclasses.dataclass
class Tile:
    m: int
    n: int


def test_plain_data_tokens_are_by_value_and_type():
    assert stable_token(1) != stable_token(1.0) != stable_token(True)
    assert stable_token((1, 2)) == stable_token((1, 2)) != stable_token([1, 2])
    assert stable_token({"a": 1, "b": 2}) == stable_token({"b": 2, "a": 1})
    assert stable_token(frozenset({"x", "y"})) == stable_token(frozenset({"y", "x"}))
    assert stable_token(Colour.RED) == f"enum:{__name__}.Colour.RED"
    assert stable_token(Tile(1, 2)) != stable_token(Tile(1, 3))
    assert stable_token(np.arange(4)) != stable_token(np.arange(4) + 1)
    assert stable_token(np.float32(2.0)) != stable_token(np.float64(2.0))
    assert stable_token(object()) is None and stable_token([1, object()]) is None


def test_tylo_values_are_tokens_of_their_fields():
    a = TiledMMA(ATOM, warps=(2, 4), repeat=(4, 4), k=16)
    b = TiledMMA(ATOM, warps=(2, 4), repeat=(4, 4), k=16)
    c = TiledMMA(ATOM, warps=(2, 2), repeat=(4, 4), k=16)
    assert stable_token(a) == stable_token(b) != stable_token(c)
    assert stable_token(tylo.Layout((4, 8), (8, 1))) != stable_token(tylo.Layout((4, 8), (1, 4)))
    assert stable_token(BFloat16) != stable_token(tylo.Float16)


def test_functions_by_name_and_bytecode_helpers_by_source():
    def f(x):
        return x + 1

    def g(x):
        return x + 2

    g.__qualname__ = f.__qualname__
    assert stable_token(f) != stable_token(g)  # same name, another body
    assert stable_token(cache_helpers.twice).endswith(cache_helpers.twice.source.digest())
    assert stable_token(np) == "module:numpy" and stable_token(len) == "builtin_function_or_method:builtins.len"


def test_tokens_do_not_depend_on_the_process():
    code = textwrap.dedent("""
        from tylo.frontend.jit.dependencies import stable_token
        print(stable_token(({"b", "a", "c"}, {"k": frozenset({"x", "y"})}, 1.5)))
    """)
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**__import__("os").environ, "PYTHONHASHSEED": seed}).stdout
            for seed in ("1", "2", "3")}
    assert len(outs) == 1


def test_free_reads_are_globals_with_their_attribute_chains():
    source = textwrap.dedent("""
        def k(out, x, n=DEFAULT):
            global G
            G = 1
            total = cfg.tile.m + x[0]
            for i in range(n):
                total = total + helpers.twice(i) + SCALE
            f = lambda y: y + LAMBDA_GLOBAL
            import math
            return [j for j in range(3)], math.pi, G
    """)
    reads = free_reads(ast.parse(source).body[0])
    assert reads == [("cfg", ("tile", "m")), ("range", ()), ("helpers", ("twice",)),
                     ("SCALE", ()), ("LAMBDA_GLOBAL", ()), ("G", ())]


TABLE = [1, 2, 3]
SCALE = 2.0


def test_changed_sees_a_rebound_global_and_a_mutable_one_changed_in_place():
    """`Dependencies.changed`'s generated identity test: a rebound immutable global, and a
    list changed in place (same object: its token decides) are changes; rebinding to an equal
    value is not; a name deleted is."""
    from tylo.frontend.jit import dependencies

    @tylo.kernel
    def k(out):
        out[0] = SCALE * TABLE[1]

    deps = k.dependencies()
    module = globals()
    assert not deps.changed()
    TABLE[1] = 5
    try:
        assert deps.changed()
    finally:
        TABLE[1] = 2
    assert not deps.changed()
    module["SCALE"] = 3.0
    try:
        assert deps.changed()
        module["SCALE"] = 2.0  # an equal value, another object: unchanged by its token
        assert not deps.changed()
        del module["SCALE"]
        assert deps.changed()
    finally:
        module["SCALE"] = 2.0
    assert isinstance(deps._same, dependencies.FunctionType)
