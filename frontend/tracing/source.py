"""A kernel's source: parse, rewrite, load as Python; and map errors back to the user's lines.

`TracedSource` holds the rewritten function of a `@tylo.kernel` or `@tylo.func` and the digest of
its source text, which is part of the compile-cache key (the helpers and globals it reads are
found by `dependencies`). The rewritten function reads the module's globals as they are when it
runs (as the original would), and the closure values as they were when it was built:
`invalidate` rebuilds it. `Helper` is ``@tylo.func``. `locate` finds, in a traceback, the
innermost frame of user code that Tylo compiled, and returns its file, line and column for the
error message.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import linecache
import sys
import textwrap
import traceback
from types import CellType, CodeType, FunctionType

from ...compiler.support.errors import CompileError, SourceLocation, UnsupportedError
from .rewrite import RT, KernelRewriter

_FACTORY = "__tylo_factory__"


class TracedSource:
    """The rewritten Python function of a kernel or helper (built once, lazily). A kernel
    (`kernel`, unlike a ``@tylo.func`` helper) returns no value."""

    def __init__(self, fn: FunctionType, kernel: bool = False):
        self.fn = fn
        self.kernel = kernel
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
        KernelRewriter(self.source.splitlines(), self.kernel).transform_kernel(fn_node)
        # Compiled as the body of `def __tylo_factory__(__tylo__, <free variables>)`, so that the
        # rewritten code's free variables are those of the original plus the runtime helpers;
        # the function is then made from that code with the original's globals and closure
        # cells, so that it reads globals and closure variables live, as the original does.
        freevars = self.fn.__code__.co_freevars
        factory = ast.FunctionDef(
            name=_FACTORY,
            args=ast.arguments(posonlyargs=[], args=[ast.arg(n) for n in (RT, *freevars)],
                               kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=[fn_node, ast.Return(ast.Name(fn_node.name, ast.Load()))],
            decorator_list=[], returns=None, type_params=[],
        )
        tree.body = [ast.fix_missing_locations(ast.copy_location(factory, fn_node))]
        if sys.version_info < (3, 12):
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef) and hasattr(node, "type_params"):
                    del node.type_params
        ast.increment_lineno(tree, self.first_line - 1)
        _shift_columns(tree, self.indent)
        module_code = compile(tree, self.filename, "exec")
        factory_code = next(c for c in module_code.co_consts if isinstance(c, CodeType))
        code = next(c for c in factory_code.co_consts
                    if isinstance(c, CodeType) and c.co_name == fn_node.name)
        if sys.version_info >= (3, 11):  # errors name the user's function, not the factory
            code = code.replace(co_qualname=self.fn.__qualname__)
        cells = dict(zip(freevars, self.fn.__closure__ or ()))
        from . import control_flow  # the IR machinery loads with the first kernel traced

        cells[RT] = CellType(control_flow)
        function = FunctionType(code, self.fn.__globals__, fn_node.name, self.fn.__defaults__,
                                tuple(cells[n] for n in code.co_freevars))
        function.__kwdefaults__ = self.fn.__kwdefaults__
        function.__qualname__ = self.fn.__qualname__
        return function

    # -- identity -------------------------------------------------------------------------------
    def digest(self) -> str:
        """SHA-256 of this function's source text."""
        if self._digest is None:
            self._digest = hashlib.sha256(self.source.encode()).hexdigest()
        return self._digest


class Helper:
    """``@tylo.func``: a device helper called from kernels; rewritten like a kernel and inlined
    when traced. Its source (and the globals it reads) are part of the cache key of every kernel
    that calls it, by name or as ``module.helper``."""

    def __init__(self, fn: FunctionType):
        self.fn = fn
        self.source = TracedSource(fn)
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        from .tracing import tracing

        if not tracing():
            raise CompileError(f"{self.fn.__qualname__} is a @tylo.func; call it from a kernel")
        return self.source.function()(*args, **kwargs)


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

