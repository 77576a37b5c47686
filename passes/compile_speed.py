"""What a compile does to run faster without changing what it makes: `fast_compile()`.

Measured on the attention kernel at D 256 (causal, varlen; a 2-core machine, CPU seconds of
the compiler's own process, ptxas aside): of about 1.8 s, Python's cyclic garbage collector
took 0.3 s (an IR of ~13,000 ops makes millions of objects, and every few thousand allocations
the collector walks the ones still alive, which are nearly all of them), and xDSL's trait
lookups (`Operation.get_trait`, ~130,000 calls from canonicalize's folding and dead-code tests,
CSE and selection) scan an op class's traits with `isinstance` each time.

Inside ``with fast_compile():`` (reentrant; threads share it):

* the cyclic collector is paused (`gc.disable`) and resumed on leaving when it was on before:
  the compile's garbage (IR of passes already run) is collected after it;
* `Operation.get_trait`, `has_trait` and `get_traits_of_type` answer from a table per (op
  class, trait), filled by xDSL's own scan on first use and emptied when the outermost scope
  is entered (an op class's traits are fixed while a compile runs; one that gains a trait
  between compiles is looked up again): the same answers as xDSL's, by dict lookup. xDSL's
  methods are put back on leaving the outermost scope.
"""

from __future__ import annotations

import contextlib
import gc
import threading

from xdsl.ir import Operation

_LOCK = threading.Lock()
_DEPTH = 0
_GC_WAS_ON = False
_ORIGINAL = {name: Operation.__dict__[name]
             for name in ("get_trait", "has_trait", "get_traits_of_type")}
_SCAN = _ORIGINAL["get_trait"].__func__
_SCAN_TYPE = _ORIGINAL["get_traits_of_type"].__func__
_TRAITS: dict = {}  # (op class, trait type or instance) -> the trait found, or None
_OF_TYPE: dict = {}  # (op class, trait type) -> the traits of that type, a tuple


def _get_trait(cls, trait):
    try:
        return _TRAITS[cls, trait]
    except KeyError:
        found = _TRAITS[cls, trait] = _SCAN(cls, trait)
        return found
    except TypeError:  # an unhashable trait instance: xDSL's scan
        return _SCAN(cls, trait)


def _has_trait(cls, trait, *, value_if_unregistered: bool = True) -> bool:
    return _get_trait(cls, trait) is not None


def _get_traits_of_type(cls, trait_type):
    try:
        return list(_OF_TYPE[cls, trait_type])
    except KeyError:
        found = _SCAN_TYPE(cls, trait_type)
        _OF_TYPE[cls, trait_type] = tuple(found)
        return found


@contextlib.contextmanager
def fast_compile():
    """Pause the garbage collector and answer trait lookups from tables (module docstring)."""
    global _DEPTH, _GC_WAS_ON
    with _LOCK:
        if _DEPTH == 0:
            _GC_WAS_ON = gc.isenabled()
            gc.disable()
            _TRAITS.clear()  # (a class may have gained a trait since the last compile)
            _OF_TYPE.clear()
            Operation.get_trait = classmethod(_get_trait)
            Operation.has_trait = classmethod(_has_trait)
            Operation.get_traits_of_type = classmethod(_get_traits_of_type)
        _DEPTH += 1
    try:
        yield
    finally:
        with _LOCK:
            _DEPTH -= 1
            if _DEPTH == 0:
                for name, method in _ORIGINAL.items():
                    setattr(Operation, name, method)
                if _GC_WAS_ON:
                    gc.enable()
