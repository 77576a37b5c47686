"""The compile pipeline: the passes every kernel goes through, with IR dumps between them.

`pipeline(arch)` lists the passes in order. `run_pipeline` applies them to a module and returns the
textual IR after every stage (the frontend's output first, as ``"tylo"``); with
``TYLO_DUMP_IR=1`` each stage is also printed to stderr, and with ``TYLO_DUMP_IR=<dir>`` written
to ``<dir>/<kernel>.<index>.<stage>.mlir`` (``<kernel>-2.<index>...`` for the second compile of a
kernel of that name in the process, and so on), then the PTX as ``<dir>/<kernel>.<index>.ptx.ptx``
(printed to stderr with ``TYLO_DUMP_IR=1``). `emit_ptx` prints the final module as PTX text.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.ir import Operation
from xdsl.pattern_rewriter import (GreedyRewritePatternApplier, PatternRewriter, PatternRewriteWalker,
                                   RewritePattern)
from xdsl.traits import HasCanonicalizationPatternsTrait
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.dead_code_elimination import region_dce
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
from xdsl.utils.exceptions import DiagnosticException, PassFailedException, VerifyException

from ..compiler.support import knobs
from ..compiler.support.errors import CompileError, TyloError
from ..dialects.locations import (LocatedPattern, failed_op, fill_unknown, first_invalid, reset_handled,
                                  source_location)
from ..dialects.ptx.target import print_ptx
from .hoist_invariants import HoistInvariants
from .insert_async_fences import InsertAsyncFences
from .lower_fragments import LowerFragments
from .lower_scf import LowerScf
from .lower_tiles import LowerTiles
from .lower_to_ptx import LowerToPtx
from .plan_copies import PlanCopies
from .plan_reductions import PlanReductions
from .recognize_swizzles import RecognizeSwizzles
from .universe import make_context


class TypeCanonicalization(RewritePattern):
    """xDSL's `CanonicalizationRewritePattern` (the patterns of each op's
    `HasCanonicalizationPatternsTrait`s, in the same order) behind `LocatedPattern`, with the
    patterns of each op type found once: xDSL looks the traits up and builds the patterns again
    for every op it visits (about 13,000 visits in a large kernel, most of them of ops that have
    none, which now cost one dict lookup)."""

    def __init__(self):
        self.by_type: dict[type, RewritePattern | None] = {}

    def pattern(self, kind: type[Operation]) -> RewritePattern | None:
        if kind in self.by_type:
            return self.by_type[kind]
        patterns = [pattern for trait in kind.get_traits_of_type(HasCanonicalizationPatternsTrait)
                    for pattern in trait.get_patterns(kind)]
        found = None if not patterns else LocatedPattern(
            patterns[0] if len(patterns) == 1 else GreedyRewritePatternApplier(patterns))
        self.by_type[kind] = found
        return found

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        pattern = self.pattern(type(op))
        if pattern is not None:
            pattern.match_and_rewrite(op, rewriter)


class LocatedCanonicalize(CanonicalizePass):
    """xDSL's canonicalize (same name, same patterns and folding), whose patterns give the ops
    they make the location of the op they matched (`LocatedPattern`, `TypeCanonicalization`);
    a folded constant is left to `fill_unknown`."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pattern = GreedyRewritePatternApplier([TypeCanonicalization()], ctx=ctx,
                                              folding_enabled=True)
        PatternRewriteWalker(pattern, post_walk_func=region_dce).rewrite_module(op)


def pipeline(arch: str) -> list[ModulePass]:
    """The passes of a compile for `arch`, in order."""
    return [
        RecognizeSwizzles(),
        PlanCopies(arch=arch),
        PlanReductions(arch=arch),  # before tylo-lower-fragments, which expands its slot ops
        LowerFragments(arch=arch),
        LowerTiles(arch=arch),
        LocatedCanonicalize(),
        CommonSubexpressionElimination(),
        HoistInvariants(),
        CommonSubexpressionElimination(),
        InsertAsyncFences(),
        LowerScf(),
        LowerToPtx(arch=arch),
    ]


_COMPILES: dict[str, int] = {}  # kernel name -> compiles dumped so far in this process


def _dump_name(kernel: str) -> str:
    """The file stem of a compile's dump: the kernel's name for its first compile in the
    process, ``name-2``, ``name-3``, ... for the next ones (autotuning compiles several)."""
    n = _COMPILES[kernel] = _COMPILES.get(kernel, 0) + 1
    return kernel if n == 1 else f"{kernel}-{n}"


def _dump(kernel: str, index: int, stage: str, text: str, suffix: str = ".mlir") -> None:
    target = knobs.compile.dump_ir
    if target is None:
        return
    if target == "stderr":
        print(f"// ----- {kernel}: IR after {stage} -----\n{text}", file=sys.stderr)
        return
    path = Path(target)
    path.mkdir(parents=True, exist_ok=True)
    (path / f"{kernel}.{index:02d}.{stage}{suffix}").write_text(text)


def run_pipeline(module: ModuleOp, kernel: str, arch: str, ctx: Context | None = None,
                 texts: bool = True) -> dict[str, str]:
    """Apply the pipeline in place; return {stage name: IR text}, starting with "tylo".
    ``texts=False`` (the emulator's build) prints no stage and returns {}, unless TYLO_DUMP_IR
    asks for the stages."""
    ctx = ctx or make_context()
    texts = texts or knobs.compile.dump_ir is not None
    stages = {"tylo": str(module)} if texts else {}
    stem = _dump_name(kernel) if knobs.compile.dump_ir not in (None, "stderr") else kernel
    if texts:
        _dump(stem, 0, "tylo", stages["tylo"])
    passes = pipeline(arch)
    every = knobs.compile.verify_passes
    for i, p in enumerate(passes, start=1):
        reset_handled()
        try:
            p.apply(ctx, module)
            fill_unknown(module.body.block)
            if every:  # (off by default: 0.2 s of a 2 s compile at D 256; the suite sets it)
                module.verify()
        except (PassFailedException, VerifyException, DiagnosticException) as e:
            raise pass_error(p.name, kernel, module, e) from e
        except TyloError as e:  # a plan or geometry refusal inside a pass: at the op's line
            if e.location is None:
                e.location = source_location(failed_op(e))
            raise
        if texts:
            stages[p.name] = str(module)
            _dump(stem, i, p.name, stages[p.name])
    if knobs.compile.dump_ir is not None:  # and the PTX it prints, with its line info
        _dump(stem, len(passes) + 1, "ptx", emit_ptx(module), ".ptx")
    return stages


def pass_error(name: str, kernel: str, module: ModuleOp, e: Exception) -> CompileError:
    """The CompileError of pass `name` failing on `kernel` with `e`, located at the user's line
    of the op it failed on (`failed_op`: an `OpFailure`'s op, else the op the pass was handling),
    else of the first op that fails verification (named in the message)."""
    op = failed_op(e)
    message = str(e).removeprefix(f"{name}: ")  # the pass's own prefix, said once
    if op is None and isinstance(e, (VerifyException, DiagnosticException)):
        found = first_invalid(module)
        if found is not None:
            op, inner = found
            message = f"{op.name}: {' '.join(str(inner).split())}"
    return CompileError(f"pass {name} failed on kernel '{kernel}': {message}",
                        location=source_location(op) if op is not None else None)


def emit_ptx(module: ModuleOp) -> str:
    out = io.StringIO()
    print_ptx(module, out)
    return out.getvalue()
