"""What a kernel reads besides its arguments, for the compile-cache key: globals, closure values
and ``@tylo.func`` helpers, each with a stable token of its value.

`find` walks a kernel's source (and, recursively, that of each helper it calls) for the names it
reads that are not its own (parameters and names it assigns are its own), with the attribute
chains read from them: ``BLOCK``, ``cfg.BLOCK``, ``module.helper``, ``plan.tile_shape``. A chain
is followed through modules, classes and other objects that have no token of their own, and
stops at the first value that has one; a `Read` records that value. Tylo's own modules and
functions are not recorded (Tylo's version is part of the key); neither are builtins, nor
default values of parameters (the signature gives them to every call).

`stable_token(value)` is a string that stays the same across processes for equal values, or
None when there is none: plain data by value (numbers, strings, containers of them, numpy
arrays by content, dataclasses and Tylo's layouts, atoms and plans by their fields), modules,
classes and functions by qualified name (a Python function also by its bytecode, so that an
edited helper function changes the token; the functions it calls are not followed), helpers
by the digest of their source. A value without a token keeps the kernel out of the disk cache
and is compared by identity in memory.

`Dependencies.changed()` says whether any read gives another value now; launches ask it before
they reuse a compiled kernel. Triton's ``DependenciesFinder`` (python/triton/runtime/jit.py)
records a kernel's globals the same way; Tylo recompiles when one changed instead of raising.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import enum
import functools
import hashlib
from types import BuiltinFunctionType, CellType, CodeType, FunctionType, MethodType, ModuleType


from ...compiler.support.lazy_modules import np
from ..tracing.source import TracedSource

MISSING = object()
_PRIMITIVES = (bool, int, float, complex, str, bytes)


def _qualified(obj) -> str:
    return f"{getattr(obj, '__module__', None)}.{getattr(obj, '__qualname__', repr(obj))}"


def _is_tylo(value) -> bool:
    """Tylo's own modules, functions and classes (covered by Tylo's version in the key)."""
    if isinstance(value, ModuleType):
        name = value.__name__
    elif isinstance(value, (FunctionType, BuiltinFunctionType, type)):
        name = getattr(value, "__module__", None) or ""
    else:
        return False
    return name == "tylo" or name.startswith("tylo.")


@functools.lru_cache(maxsize=4096)
def _code_token(code: CodeType) -> str:
    """A digest of a code object's behaviour: bytecode, names and constants (nested code
    objects by their own digest), not its file or line numbers."""
    h = hashlib.sha256(code.co_code)
    h.update(repr((code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars)).encode())
    for const in code.co_consts:
        h.update((_code_token(const) if isinstance(const, CodeType)
                  else stable_token(const) or repr(type(const))).encode())
    return h.hexdigest()[:24]


def _traced(value) -> TracedSource | None:
    source = getattr(value, "source", None)
    return source if isinstance(source, TracedSource) and hasattr(value, "fn") else None


def stable_token(value, _depth: int = 0) -> str | None:
    """A process-independent string for `value`, or None (see the module docstring)."""
    if _depth > 32:
        return None
    t = type(value)
    if value is None or value is Ellipsis or t in _PRIMITIVES:
        return f"{t.__name__}:{value!r}"
    if isinstance(value, (tuple, list)):
        parts = [stable_token(v, _depth + 1) for v in value]
        name = t.__name__ if t in (tuple, list) else _qualified(t)
        return None if None in parts else f"{name}({','.join(parts)})"  # type: ignore[arg-type]
    if isinstance(value, (set, frozenset)):
        parts = [stable_token(v, _depth + 1) for v in value]
        return None if None in parts else f"{t.__name__}{{{','.join(sorted(parts))}}}"  # type: ignore[arg-type]
    if isinstance(value, dict):
        items = [(stable_token(k, _depth + 1), stable_token(v, _depth + 1)) for k, v in value.items()]
        if any(k is None or v is None for k, v in items):
            return None
        return f"{_qualified(t)}{{{','.join(sorted(f'{k}:{v}' for k, v in items))}}}"
    source = _traced(value)
    if source is not None:
        return f"tylo-function:{_qualified(value.fn)}:{source.digest()}"
    if isinstance(value, ModuleType):
        return f"module:{value.__name__}"
    if isinstance(value, FunctionType):
        return f"function:{_qualified(value)}:{_code_token(value.__code__)}"
    if isinstance(value, (BuiltinFunctionType, type)):
        return f"{t.__name__}:{_qualified(value)}"
    if isinstance(value, MethodType):
        owner = stable_token(value.__self__, _depth + 1)
        return None if owner is None else f"method:{stable_token(value.__func__)}@{owner}"
    if isinstance(value, enum.Enum):
        return f"enum:{_qualified(t)}.{value.name}"
    if isinstance(value, np.ndarray):
        digest = hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()[:24]
        return f"ndarray:{value.dtype.str}:{value.shape}:{digest}"
    if isinstance(value, np.generic):
        return f"{_qualified(t)}:{value!r}"
    key = getattr(value, "_key", None)
    if callable(key) and not isinstance(value, type):  # Tylo's layouts, atoms, plans, ...
        inner = stable_token(key(), _depth + 1)
        return None if inner is None else f"{_qualified(t)}{inner}"
    if dataclasses.is_dataclass(value):
        fields = [(f.name, stable_token(getattr(value, f.name), _depth + 1))
                  for f in dataclasses.fields(value)]
        if any(tok is None for _, tok in fields):
            return None
        return f"{_qualified(t)}({','.join(f'{n}={tok}' for n, tok in fields)})"
    return None


def _immutable(value, _depth: int = 0) -> bool:
    """Whether `value` cannot change without being replaced (then `is` proves "unchanged")."""
    if _depth > 32:
        return False
    if value is None or type(value) in _PRIMITIVES or isinstance(value, np.generic):
        return True
    if isinstance(value, (tuple, frozenset)):
        return all(_immutable(v, _depth + 1) for v in value)
    if isinstance(value, (ModuleType, FunctionType, BuiltinFunctionType, type, enum.Enum)):
        return True
    if _traced(value) is not None or callable(getattr(value, "_key", None)):
        return True
    if dataclasses.is_dataclass(value) and type(value).__dataclass_params__.frozen:
        return all(_immutable(getattr(value, f.name), _depth + 1)
                   for f in dataclasses.fields(value))
    return False


class Read:
    """One name (or attribute chain) a kernel or helper reads, with its value when recorded."""

    __slots__ = ("label", "scope", "name", "path", "value", "token", "fixed", "in_cell")

    def __init__(self, label: str, scope, name: str, path: tuple[str, ...], value):
        self.label = label  # "module:NAME.attr" or "closure of f:NAME"
        self.scope = scope  # the globals dict, or the closure cell
        self.in_cell = isinstance(scope, CellType)
        self.name = name
        self.path = path
        self.value = value
        self.token = "missing" if value is MISSING else stable_token(value)
        self.fixed = value is MISSING or _immutable(value)

    def current(self):
        """The value the read gives now (MISSING when the name or an attribute is gone)."""
        try:
            value = self.scope.cell_contents if self.in_cell else self.scope.get(self.name, MISSING)
            for attr in self.path:
                value = getattr(value, attr)
        except Exception:  # noqa: BLE001 - an empty cell, a missing attribute: "not there"
            return MISSING
        return value

    def unchanged(self) -> bool:
        now = self.current()
        if now is self.value and self.fixed:
            return True
        if self.token is None:
            return now is self.value
        if now is MISSING:
            return self.value is MISSING
        return stable_token(now) == self.token

    def key_part(self):
        return (self.label, self.token if self.token is not None else ("id", id(self.value)))


class Dependencies:
    """The reads of a kernel and of the helpers it calls (see the module docstring).

    reads: the `Read`s, helpers' included. helpers: the `TracedSource` of each helper.
    key: a hashable form for the in-memory key. disk_token: a digest for the disk key, or None
    when some value has no stable token (`unstable` names those reads).
    """

    def __init__(self, reads: list[Read], helpers: list[TracedSource]):
        self.reads = tuple(reads)
        self.helpers = helpers
        self.key = tuple(r.key_part() for r in self.reads)
        self.unstable = [r.label for r in self.reads if r.token is None]
        if self.unstable:
            self.disk_token = None
        else:
            text = "\n".join(f"{r.label}={r.token}" for r in self.reads)
            self.disk_token = hashlib.sha256(text.encode()).hexdigest()

        self._same = _identity_check(self.reads)

    def changed(self) -> bool:
        """Whether any read gives another value than when it was recorded: first the generated
        identity test of every read at once (`_identity_check`, about 0.05 us a read), then,
        when it fails or raises, each read's own test."""
        try:
            if self._same():
                return False
        except Exception:  # noqa: BLE001 - a missing name or attribute: each read says
            pass
        for read in self.reads:
            if not read.unchanged():
                return True
        return False


def _identity_check(reads) -> "FunctionType":
    """A generated ``same()``: True when every distinct read of an immutable value gives the
    very object it recorded (`Read.unchanged`'s first test, one expression per read) and every
    read of a mutable one is unchanged by its token; False (or an exception: a name or
    attribute gone, an empty cell) sends `Dependencies.changed` to each read's own test
    (tokens: an equal new value is unchanged)."""
    env: dict = {"MISSING": MISSING}
    terms, seen = [], set()
    for i, read in enumerate(reads):
        key = (id(read.scope), read.name, read.path)
        if key in seen:
            continue
        seen.add(key)
        if not read.fixed:  # a mutable value: identity is not enough, its token decides
            env[f"r{i}"] = read
            terms.append(f"r{i}.unchanged()")
            continue
        env[f"s{i}"], env[f"v{i}"] = read.scope, read.value
        expr = (f"s{i}.cell_contents" if read.in_cell
                else f"s{i}.get({read.name!r}, MISSING)")
        for attr in read.path:
            expr = f"{expr}.{attr}"
        terms.append(f"{expr} is v{i}")
    source = "def same():\n    return " + (" and ".join(terms) or "True") + "\n"
    exec(compile(source, "<tylo dependencies>", "exec"), env)  # noqa: S102
    return env["same"]


def find(source: TracedSource) -> Dependencies:
    """The `Dependencies` of the kernel or helper whose source is `source`."""
    reads: list[Read] = []
    helpers: list[TracedSource] = []
    _collect(source, reads, helpers, {id(source)})
    return Dependencies(reads, helpers)


def _collect(source: TracedSource, reads: list[Read], helpers: list[TracedSource],
             seen: set[int]) -> None:
    fn = source.fn
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    module = fn.__globals__.get("__name__", "?")
    for name, attrs in free_reads(ast.parse(source.source).body[0]):
        if name in cells:
            scope, label = cells[name], f"closure of {fn.__qualname__}:{name}"
            try:
                value = cells[name].cell_contents
            except ValueError:
                value = MISSING
        elif name in fn.__globals__ or not hasattr(builtins, name):
            scope, label, value = fn.__globals__, f"{module}:{name}", fn.__globals__.get(name, MISSING)
        else:
            continue  # a builtin
        if _is_tylo(value):
            continue
        path: list[str] = []
        for attr in attrs:
            if value is MISSING or not _is_namespace(value):
                break
            try:
                value = getattr(value, attr)
            except Exception:  # noqa: BLE001 - recorded as missing
                value = MISSING
            path.append(attr)
        if _is_tylo(value):
            continue
        reads.append(Read(label + "".join(f".{a}" for a in path), scope, name, tuple(path), value))
        helper = _traced(value)
        if helper is not None and id(helper) not in seen:
            seen.add(id(helper))
            helpers.append(helper)
            _collect(helper, reads, helpers, seen)


def _is_namespace(value) -> bool:
    """Whether a chain continues through `value`: modules, classes, and objects without a
    token of their own (a config object's attribute is recorded instead of the object)."""
    if isinstance(value, (ModuleType, type)):
        return True
    if _traced(value) is not None or isinstance(value, (FunctionType, BuiltinFunctionType)):
        return False
    return stable_token(value) is None


def free_reads(fn_node: ast.FunctionDef) -> list[tuple[str, tuple[str, ...]]]:
    """(name, attribute chain) of each read in the body of `fn_node` of a name it does not bind
    itself, in source order, without repeats. ``cfg.tile.m`` gives ("cfg", ("tile", "m"))."""
    local = _bound_names(fn_node)
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(fn_node):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    found: dict[tuple[str, tuple[str, ...]], tuple[int, int]] = {}
    for statement in fn_node.body:
        for node in ast.walk(statement):
            if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)):
                continue
            if node.id in local:
                continue
            attrs: list[str] = []
            child: ast.AST = node
            parent = parents.get(id(child))
            while isinstance(parent, ast.Attribute) and parent.value is child:
                attrs.append(parent.attr)
                child, parent = parent, parents.get(id(parent))
            where = (node.lineno, node.col_offset)
            read = (node.id, tuple(attrs))
            found[read] = min(found.get(read, where), where)
    return sorted(found, key=found.__getitem__)


def _bound_names(fn_node: ast.FunctionDef) -> set[str]:
    """Names the function binds anywhere in its body (Python makes them local throughout), its
    parameters, and those of nested functions and lambdas; minus names declared ``global``."""
    bound: set[str] = set()
    declared_global: set[str] = set()
    for node in ast.walk(fn_node):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not fn_node:
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.Global):
            declared_global.update(node.names)
    return bound - declared_global
