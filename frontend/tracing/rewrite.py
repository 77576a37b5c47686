"""Rewrite a kernel's AST so that control flow on runtime values builds structured IR.

The rewritten function still runs as Python. Only constructs whose condition may be a runtime
value change, and each keeps exact Python semantics when that value turns out static:

* ``if c:`` evaluates `c` once; static -> the original ``if``; runtime -> the branches become
  functions of the names they assign and ``__tylo__.if_`` builds an ``scf.if``.
* ``for i in range(...)`` -> the body becomes a function and ``__tylo__.for_range`` builds an
  ``scf.for`` (use ``tylo.static_range`` or any other iterable for an unrolled Python loop).
* ``while c:`` -> static when `c` and every name the body assigns are static, else ``scf.while``.
* ``a and b``, ``a or b``, ``not a``, ``x if c else y`` and chained comparisons -> calls that
  short-circuit statically and combine runtime booleans.

Generated nodes take the location of the statement they replace, so errors point at user lines.

`ACCEPTED` is the audit of the Python a kernel body may contain: every statement and expression
node type the frontend implements, with how. Any other statement or expression is refused at its
line (`REFUSED` says why for each node type Python 3.10-3.12 has; a node type of a later Python
gets a generic refusal). Nested functions, lambdas and comprehensions are not rewritten: they run
as plain Python while the kernel is traced, on whatever values they are given.
"""

from __future__ import annotations

import ast
import copy
import re

RT = "__tylo__"

_WHILE_TRACING = "runs as Python while the kernel is traced"
ACCEPTED: dict[type, str] = {
    # statements
    ast.Assign: "binds names; a runtime value is an SSA value (tuple targets and a starred "
                "target unpack static tuples and lists)",
    ast.AugAssign: "`x += v` is `x = x + v`; `a[i] += v` loads, adds and stores",
    ast.AnnAssign: "like an assignment; the annotation " + _WHILE_TRACING,
    ast.Expr: "an expression statement (a call such as tylo.barrier())",
    ast.If: "static condition: Python's if; runtime condition: scf.if",
    ast.For: "`for i in range(...)`: scf.for; any other iterable is unrolled while tracing",
    ast.While: "static condition and names: Python's while; else scf.while",
    ast.Return: "ends the kernel (or returns a @tylo.func's value); refused inside runtime "
                "control flow",
    ast.Raise: _WHILE_TRACING + " (a compile error); refused inside runtime control flow",
    ast.Assert: _WHILE_TRACING + ", on static values",
    ast.Break: "in a static loop; refused inside runtime control flow",
    ast.Continue: "in a static loop; refused inside runtime control flow",
    ast.Pass: "nothing",
    ast.Import: _WHILE_TRACING,
    ast.ImportFrom: _WHILE_TRACING,
    ast.FunctionDef: "a nested helper, not rewritten: it " + _WHILE_TRACING,
    # expressions
    ast.Name: "a local, argument, global or closure variable",
    ast.Constant: "a static value (a Python int, float, bool, str, None)",
    ast.Attribute: "an attribute of a static or runtime value",
    ast.Subscript: "indexing a tile, tuple, list or dict; slices of tiles",
    ast.Slice: "a slice in a subscript",
    ast.Call: "a Tylo builtin (emits IR), a @tylo.func (inlined) or any Python callable "
              "(runs while tracing)",
    ast.BinOp: "arithmetic: static operands fold in Python, runtime ones emit IR",
    ast.UnaryOp: "-x, +x, ~x; `not x` short-circuits like and/or",
    ast.BoolOp: "`and`/`or`: Python's short circuit on static values, scf.if on runtime ones",
    ast.Compare: "comparisons; a chain a < b < c is (a < b) and (b < c)",
    ast.IfExp: "`x if c else y`: static c picks in Python, runtime c builds scf.if",
    ast.Tuple: "a tuple (of static or runtime values)",
    ast.List: "a list (of static or runtime values)",
    ast.Dict: "a dict (static keys)",
    ast.Set: "a set of static values",
    ast.Starred: "`*args` in a call, display or assignment target",
    ast.JoinedStr: "an f-string, built while tracing: static values only",
    ast.FormattedValue: "a {value} of an f-string: a static value only (refused for a runtime "
                        "one: use tylo.print)",
    ast.Lambda: "not rewritten: it " + _WHILE_TRACING,
    ast.ListComp: "not rewritten: it " + _WHILE_TRACING + " (an unrolled loop)",
    ast.SetComp: "not rewritten: it " + _WHILE_TRACING,
    ast.DictComp: "not rewritten: it " + _WHILE_TRACING,
    ast.GeneratorExp: "not rewritten: it " + _WHILE_TRACING,
}

_COMPILED_ONCE = "a kernel is traced once, as a plain function, while it is compiled"
REFUSED: dict[str, tuple[str, str]] = {
    # node type name: (the keyword the caret marks, the message)
    "With": ("with", "'with' is not supported in kernels: the context manager would run once "
             "while the kernel is compiled, not on the GPU, and one that suppresses exceptions "
             "would hide Tylo's errors; write the body without it"),
    "AsyncWith": ("async", f"'async with' is not supported in kernels: {_COMPILED_ONCE}"),
    "AsyncFor": ("async", f"'async for' is not supported in kernels: {_COMPILED_ONCE}"),
    "AsyncFunctionDef": ("async", f"'async def' is not supported in kernels: {_COMPILED_ONCE}"),
    "Match": ("match", "'match' is not supported in kernels (it has no runtime form): write "
              "if/elif, which becomes scf.if for a runtime value"),
    "Delete": ("del", "'del' is not supported in kernels: a name deleted in runtime control flow "
               "has no value to carry out of it, and tiles have no deletion; assign a new "
               "value, or let the name go unused"),
    "ClassDef": ("class", "a class definition is not supported in a kernel: define the class "
                 "outside it (at module level) and use it from the kernel"),
    "TypeAlias": ("type", "a 'type' alias is not supported in a kernel: define it at module level"),
    "NamedExpr": (":=", "an assignment expression (:=) is not supported in kernels: conditions "
                  "and short circuits are rewritten into functions, so the name it binds would "
                  "not reach the code after it; assign the value on a line of its own"),
}
"""Refusals without a visit_ method of their own (try, yield, await, global and nonlocal have
one, with messages of their own)."""


def _call(func: str, args: list[ast.expr], node: ast.AST) -> ast.Call:
    call = ast.Call(
        func=ast.Attribute(value=ast.Name(RT, ast.Load()), attr=func, ctx=ast.Load()),
        args=args,
        keywords=[],
    )
    return ast.copy_location(call, node)


def _lambda(body: ast.expr) -> ast.Lambda:
    args = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
    return ast.copy_location(ast.Lambda(args=args, body=body), body)


class _Assigned(ast.NodeVisitor):
    """Names bound by statements, not descending into nested scopes."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def _add(self, name: str) -> None:
        if name not in self.names and not name.startswith("__tylo"):
            self.names.append(name)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            self._add(node.id)

    def _item(self, node) -> None:
        """``accs[j] = v`` and ``box.v = v`` change the container a name holds: carry the name
        (a tuple or list of runtime values crosses runtime control flow as its leaves)."""
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            base = node.value
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name):
                self._add(base.id)
        self.generic_visit(node)

    visit_Subscript = visit_Attribute = _item

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._add(node.name)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._add(node.name)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        pass

    def _skip(self, node) -> None:
        pass

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _skip


def assigned_names(stmts: list[ast.stmt]) -> list[str]:
    v = _Assigned()
    for s in stmts:
        v.visit(s)
    return v.names


class _Jumps(ast.NodeVisitor):
    """Finds return/raise/break/continue that would leave a runtime region (not inside nested
    loops or functions for break/continue; not inside nested functions for return and raise)."""

    def __init__(self) -> None:
        self.found: list[tuple[str, ast.AST]] = []
        self.loop_depth = 0

    def visit_Return(self, node):
        self.found.append(("return", node))

    def visit_Raise(self, node):
        self.found.append(("raise", node))

    def visit_Break(self, node):
        if self.loop_depth == 0:
            self.found.append(("break", node))

    def visit_Continue(self, node):
        if self.loop_depth == 0:
            self.found.append(("continue", node))

    def _loop(self, node):
        self.loop_depth += 1
        self.generic_visit(node)
        self.loop_depth -= 1

    visit_For = visit_While = visit_AsyncFor = _loop

    def _scope(self, node):
        pass

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = _scope


def _first_jump(stmts: list[ast.stmt]):
    v = _Jumps()
    for s in stmts:
        v.visit(s)
    return v.found[0] if v.found else None


class KernelRewriter(ast.NodeTransformer):
    """The transformation described in the module docstring."""

    def __init__(self, source_lines: list[str] | None = None, kernel: bool = False) -> None:
        self.counter = 0
        self.lines = source_lines or []
        self.kernel = kernel  # a kernel's return value is checked to be None (a helper's is used)

    def _fresh(self, what: str) -> str:
        self.counter += 1
        return f"__tylo_{what}_{self.counter}"

    # -- helpers --------------------------------------------------------------------------------
    def _values(self, names: list[str], node: ast.AST) -> ast.Tuple:
        """(get(lambda: a), get(lambda: b), ...): current values, UNBOUND when unassigned."""
        elts = [_call("get", [_lambda(ast.Name(n, ast.Load()))], node) for n in names]
        return ast.copy_location(ast.Tuple(elts=elts, ctx=ast.Load()), node)

    def _names_const(self, names: list[str], node: ast.AST) -> ast.Tuple:
        elts = [ast.copy_location(ast.Constant(n), node) for n in names]
        return ast.copy_location(ast.Tuple(elts=elts, ctx=ast.Load()), node)

    def _function(self, name: str, params: list[str], body: list[ast.stmt], returns: list[str], node) -> ast.FunctionDef:
        ret = ast.Return(
            value=ast.Tuple(elts=[ast.Name(n, ast.Load()) for n in returns], ctx=ast.Load())
        )
        fn = ast.FunctionDef(
            name=name,
            args=ast.arguments(
                posonlyargs=[],
                args=[ast.arg(arg=p) for p in params],
                kwonlyargs=[],
                kw_defaults=[],
                defaults=[],
            ),
            body=(body or [ast.Pass()]) + [ret],
            decorator_list=[],
            returns=None,
            type_params=[],
        )
        return ast.fix_missing_locations(ast.copy_location(fn, node))

    def _assign(self, names: list[str], value: ast.expr, node) -> ast.stmt:
        if not names:
            return ast.copy_location(ast.Expr(value=value), node)
        target = ast.Tuple(elts=[ast.Name(n, ast.Store()) for n in names], ctx=ast.Store())
        return ast.fix_missing_locations(ast.copy_location(ast.Assign(targets=[target], value=value), node))

    def _refusal(self, message: str, at: ast.AST, width: int = 0) -> ast.stmt:
        """A statement raising UnsupportedError(message), located on one line at `at` (a node,
        or a (line, column) pair), `width` characters wide (0: the node's own width)."""
        line, col = (at.lineno, at.col_offset) if isinstance(at, ast.AST) else at
        end = col + width if width else getattr(at, "end_col_offset", col + 1)
        if not width and getattr(at, "end_lineno", line) != line:
            end = col + 1
        stmt = ast.Expr(value=_call("unsupported", [ast.Constant(message)], ast.Pass()))
        for node in ast.walk(stmt):
            node.lineno, node.end_lineno, node.col_offset, node.end_col_offset = line, line, col, end
        return stmt

    def _keyword(self, word: str, after: ast.AST, before: ast.AST) -> tuple[int, int]:
        """(line, column) of the keyword `word` between the end of `after` and the start of
        `before` (e.g. the `else` of a loop), else the start of `before`."""
        start, stop = after.end_lineno or after.lineno, before.lineno
        for line in range(stop, start - 1, -1):
            text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
            if line == stop:
                text = text[: before.col_offset]
            found = re.search(rf"\b{word}\b\s*:", text.split("#")[0])
            if found:
                return line, found.start()
        return before.lineno, before.col_offset

    def _refuse(self, stmts: list[ast.stmt], what: str, node) -> list[ast.stmt] | None:
        """A raise of UnsupportedError at the first jump leaving a runtime region, if any.

        `what` is "if", "for" or "while"; the message says what to write instead."""
        jump = _first_jump(stmts)
        if jump is None:
            return None
        kind, where = jump
        region = {
            "if": "a branch of an if on a runtime value",
            "for": "a runtime loop (for ... in range(...))",
            "while": "a runtime while loop",
        }[what]
        advice = {
            "return": "put the rest of the kernel under the opposite condition (if i < n: ...)",
            "raise": "the region is traced once whatever the value, so the raise would always run "
                     "while compiling; check static values outside runtime control flow",
        }.get(kind, "loop with while and a flag, or use tylo.static_range for an unrolled loop")
        msg = f"'{kind}' inside {region} is not supported (it becomes structured IR): {advice}"
        return [self._refusal(msg, where, len(kind))]

    # -- the audit ------------------------------------------------------------------------------
    def visit(self, node: ast.AST):
        """Refuse every statement and expression whose type is not in `ACCEPTED` and has no
        refusal of its own below (try, yield, await, global, nonlocal)."""
        kind = type(node)
        if isinstance(node, (ast.stmt, ast.expr)) and kind not in ACCEPTED \
                and not hasattr(self, "visit_" + kind.__name__):
            word, message = REFUSED.get(kind.__name__, (None, None))
            if message is None:
                word = ""
                message = f"the Python construct {kind.__name__} is not supported in kernels"
            if isinstance(node, ast.stmt):
                at = self._word(word, node) if word else node
                return self._refusal(message, at, len(word) if word else 1)
            return _call("unsupported", [ast.Constant(message)], node)
        return super().visit(node)

    def _word(self, word: str, node: ast.AST) -> tuple[int, int]:
        """(line, column) of `word` where `node` starts (after its decorators), else of `node`."""
        text = self.lines[node.lineno - 1] if 0 < node.lineno <= len(self.lines) else ""
        found = text.find(word, node.col_offset)
        return (node.lineno, found) if found >= 0 else (node.lineno, node.col_offset)

    # -- statements -----------------------------------------------------------------------------
    def visit_FunctionDef(self, node: ast.FunctionDef):
        # nested helper functions are left as Python; the kernel's own body is transformed
        return node

    def _body(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for s in stmts:
            r = self.visit(s)
            out.extend(r if isinstance(r, list) else [r])
        return out

    def transform_kernel(self, fn: ast.FunctionDef) -> ast.FunctionDef:
        fn.body = self._body(fn.body)
        fn.decorator_list = []
        return ast.fix_missing_locations(fn)

    def visit_If(self, node: ast.If):
        loc = node.test  # errors about a runtime if point at its condition
        cond = self._fresh("cond")
        static_if = ast.If(test=ast.Name(cond, ast.Load()), body=self._body(copy.deepcopy(node.body)),
                           orelse=self._body(copy.deepcopy(node.orelse)))
        names = assigned_names(node.body + node.orelse)
        then_name, else_name = self._fresh("then"), self._fresh("else")
        refused = self._refuse(node.body + node.orelse, "if", node)
        if refused is not None:
            runtime = refused
        else:
            then_fn = self._function(then_name, names, self._body(copy.deepcopy(node.body)), names, loc)
            else_fn = self._function(else_name, names, self._body(copy.deepcopy(node.orelse)), names, loc)
            call = _call("if_", [ast.Name(cond, ast.Load()), ast.Name(then_name, ast.Load()),
                                 ast.Name(else_name, ast.Load()), self._names_const(names, loc),
                                 self._values(names, loc)], loc)
            runtime = [then_fn, else_fn, self._assign(names, call, loc)]
        test = _call("is_static", [ast.Name(cond, ast.Load())], loc)
        out = [
            ast.Assign(targets=[ast.Name(cond, ast.Store())], value=self.visit(node.test)),
            ast.If(test=test, body=[static_if], orelse=runtime),
        ]
        return [ast.fix_missing_locations(ast.copy_location(s, loc)) for s in out]

    def visit_For(self, node: ast.For):
        it = node.iter
        is_range = (
            isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
            and not it.keywords
        )
        if not is_range:
            node.iter = self.visit(node.iter)
            node.body = self._body(node.body)
            node.orelse = self._body(node.orelse)
            return node
        if node.orelse:
            return self._refusal(
                "'for ... else' over a runtime range(...) is not supported (there is no break to "
                "skip the else): write the else body after the loop",
                self._keyword("else", node.body[-1], node.orelse[0]), 4)
        if not isinstance(node.target, ast.Name):
            return self._refusal("a runtime 'for ... in range(...)' needs a single loop variable "
                                 "(unpack inside the body)", node.target)
        refused = self._refuse(node.body, "for", node)
        if refused is not None:
            return refused
        loc = it  # errors about a runtime loop point at its range(...)
        target = node.target.id
        names = [n for n in assigned_names(node.body) if n != target]
        body_name = self._fresh("body")
        body_fn = self._function(body_name, [target] + names, self._body(node.body), names, loc)
        args = ast.Tuple(elts=[self.visit(a) for a in it.args], ctx=ast.Load())
        call = _call("for_range", [args, ast.Name(body_name, ast.Load()),
                                   self._names_const(names, loc), self._values(names, loc)], loc)
        unbind = _call("unbound", [ast.Constant(target)], loc)
        return [body_fn, self._assign(names, call, loc),
                self._assign([target], ast.Tuple(elts=[unbind], ctx=ast.Load()), loc)]

    def visit_While(self, node: ast.While):
        if node.orelse:
            return self._refusal(
                "'while ... else' is not supported in kernels (there is no break to skip the "
                "else): write the else body after the loop",
                self._keyword("else", node.body[-1], node.orelse[0]), 4)
        loc = node.test
        names = assigned_names(node.body)
        cond_name, body_name = self._fresh("cond"), self._fresh("body")
        cond_fn = self._function(cond_name, names, [], [], loc)
        cond_fn.body = [ast.copy_location(ast.Return(value=self.visit(copy.deepcopy(node.test))), loc)]
        static_loop = ast.While(test=self.visit(copy.deepcopy(node.test)),
                                body=self._body(copy.deepcopy(node.body)), orelse=[])
        refused = self._refuse(node.body, "while", node)
        if refused is not None:
            runtime = refused
        else:
            body_fn = self._function(body_name, names, self._body(copy.deepcopy(node.body)), names, loc)
            call = _call("while_", [ast.Name(cond_name, ast.Load()), ast.Name(body_name, ast.Load()),
                                    self._names_const(names, loc), self._values(names, loc)], loc)
            runtime = [body_fn, self._assign(names, call, loc)]
        test = _call("static_while", [ast.Name(cond_name, ast.Load()), self._values(names, loc)], loc)
        out = [cond_fn, ast.If(test=test, body=[static_loop], orelse=runtime)]
        return [ast.fix_missing_locations(ast.copy_location(s, loc)) for s in out]

    def visit_Return(self, node: ast.Return):
        """A kernel's ``return v`` goes through ``__tylo__.no_result``: a kernel returns nothing
        (its results are what it stores), so a value other than None is refused."""
        node = self.generic_visit(node)
        if self.kernel and node.value is not None:
            node.value = ast.fix_missing_locations(_call("no_result", [node.value], node.value))
        return node

    def visit_Try(self, node: ast.Try):
        return self._refusal(
            "try/except is not supported in kernels: a kernel raises no exceptions at run time, "
            "and compile-time errors are Tylo's to report; check conditions with if instead",
            node, 3)

    visit_TryStar = visit_Try

    def visit_Global(self, node):
        word = "global" if isinstance(node, ast.Global) else "nonlocal"
        return self._refusal(
            f"'{word}' is not supported in kernels: the kernel runs once while it is compiled, so "
            f"assigning {', '.join(node.names)} would change the Python variable to a runtime "
            "value of this trace; pass values in as arguments and write results to arrays",
            node, len(word))

    visit_Nonlocal = visit_Global

    # -- expressions ----------------------------------------------------------------------------
    def _no_generator(self, node):
        word = {ast.Yield: "yield", ast.YieldFrom: "yield from", ast.Await: "await"}[type(node)]
        return _call("unsupported", [ast.Constant(
            f"'{word}' is not supported in kernels: a kernel is traced once, as a plain function")], node)

    visit_Yield = visit_YieldFrom = visit_Await = _no_generator

    def visit_FormattedValue(self, node: ast.FormattedValue):
        """``{v}`` in an f-string goes through ``__tylo__.formatted``, which refuses a runtime
        value (formatting it would write its placeholder text, not its value)."""
        node = self.generic_visit(node)
        node.value = ast.fix_missing_locations(_call("formatted", [node.value], node.value))
        return node

    def visit_Call(self, node: ast.Call):
        """``print(...)`` goes through ``__tylo__.checked_print`` (which refuses runtime values
        and names tylo.print); every other call is left as it is."""
        node = self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "print":
            node.args = [node.func, *node.args]
            node.func = ast.copy_location(
                ast.Attribute(value=ast.Name(RT, ast.Load()), attr="checked_print", ctx=ast.Load()),
                node.func)
            ast.fix_missing_locations(node)
        return node

    def visit_BoolOp(self, node: ast.BoolOp):
        values = [_lambda(self.visit(v)) for v in node.values]
        return _call("and_" if isinstance(node.op, ast.And) else "or_", values, node)

    def visit_UnaryOp(self, node: ast.UnaryOp):
        node.operand = self.visit(node.operand)
        if isinstance(node.op, ast.Not):
            return _call("not_", [node.operand], node)
        return node

    def visit_IfExp(self, node: ast.IfExp):
        return _call("ifexp", [self.visit(node.test), _lambda(self.visit(node.body)),
                               _lambda(self.visit(node.orelse))], node)

    def visit_Compare(self, node: ast.Compare):
        node = self.generic_visit(node)
        if len(node.ops) == 1:
            return node
        parts = []
        left = node.left
        for op, right in zip(node.ops, node.comparators):
            parts.append(_lambda(ast.copy_location(ast.Compare(left=left, ops=[op], comparators=[right]), node)))
            left = right
        return _call("and_", parts, node)

    def visit_Lambda(self, node):
        return node

    def _comprehension(self, node):
        return node

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension
