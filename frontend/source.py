"""A kernel's source: parse, rewrite, load as Python; and map errors back to the user's lines.

`TracedSource` holds the rewritten function of a `@tylo.kernel` or `@tylo.func` and the digest of
its source (with the digests of the `@tylo.func` helpers it names, recursively), which is part of
the compile-cache key. `locate` finds, in a traceback, the innermost frame of user code that
Tylo compiled, and returns its file, line and column for the error message.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import linecache
import sys
import textwrap
import traceback
from types import FunctionType

from ..compiler.errors import SourceLocation, UnsupportedError
from . import control_flow
from .rewrite import RT, KernelRewriter


class TracedSource:
    """The rewritten Python function of a kernel or helper (built once, lazily)."""

    def __init__(self, fn: FunctionType):
        self.fn = fn
        self.filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
        try:
            lines, self.first_line = inspect.getsourcelines(fn)
        except OSError as e:
            raise UnsupportedError(
                f"the source of {fn.__qualname__} is not available ({e}); Tylo compiles kernels "
                "from their source file"
            ) from None
        raw = "".join(lines)
        self.source = textwrap.dedent(raw)
        self.indent = len(raw.splitlines()[0]) - len(raw.splitlines()[0].lstrip())
        self._function: FunctionType | None = None
        self._digest: str | None = None

    # -- the rewritten function -----------------------------------------------------------------
    def function(self) -> FunctionType:
        if self._function is None:
            self._function = self._build()
        return self._function

    def _build(self) -> FunctionType:
        tree = ast.parse(self.source)
        fn_node = tree.body[0]
        if not isinstance(fn_node, ast.FunctionDef):
            raise UnsupportedError(f"{self.fn.__qualname__}: only plain functions can be kernels")
        KernelRewriter(self.source.splitlines()).transform_kernel(fn_node)
        if sys.version_info < (3, 12):
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef) and hasattr(node, "type_params"):
                    del node.type_params
        ast.increment_lineno(tree, self.first_line - 1)
        _shift_columns(tree, self.indent)
        code = compile(tree, self.filename, "exec")
        namespace = dict(self.fn.__globals__)
        if self.fn.__closure__:
            for name, cell in zip(self.fn.__code__.co_freevars, self.fn.__closure__):
                namespace[name] = cell.cell_contents
        namespace[RT] = control_flow
        exec(code, namespace)
        return namespace[fn_node.name]

    # -- identity -------------------------------------------------------------------------------
    def digest(self) -> str:
        """SHA-256 of this source and of the `@tylo.func` helpers it names, recursively."""
        if self._digest is None:
            h = hashlib.sha256(self.source.encode())
            for helper in sorted(self.helpers(), key=lambda s: s.fn.__qualname__):
                h.update(helper.digest().encode())
            self._digest = h.hexdigest()
        return self._digest

    def helpers(self) -> list["TracedSource"]:
        from .kernel import Helper

        found = []
        names = {n.id for n in ast.walk(ast.parse(self.source)) if isinstance(n, ast.Name)}
        scope = dict(self.fn.__globals__)
        if self.fn.__closure__:
            scope.update(zip(self.fn.__code__.co_freevars, (c.cell_contents for c in self.fn.__closure__)))
        for name in sorted(names):
            obj = scope.get(name)
            if isinstance(obj, Helper) and obj.source is not self:
                found.append(obj.source)
        return found


def _shift_columns(tree: ast.AST, indent: int) -> None:
    if not indent:
        return
    for node in ast.walk(tree):
        if hasattr(node, "col_offset") and node.col_offset is not None:
            node.col_offset += indent
        if getattr(node, "end_col_offset", None) is not None:
            node.end_col_offset += indent


def locate(exc: BaseException, filenames: set[str]) -> SourceLocation | None:
    """The innermost traceback frame in `filenames` as a SourceLocation, if any."""
    found = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename in filenames:
            found = frame
    if found is None:
        return None
    line = linecache.getline(found.filename, found.lineno or 0)
    col = getattr(found, "colno", None) or 0
    end = getattr(found, "end_colno", None)
    if getattr(found, "end_lineno", found.lineno) != found.lineno:
        end = None
    return SourceLocation(found.filename, found.lineno or 0, col, line, end)
