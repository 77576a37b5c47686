"""Tracing a kernel into IR and compiling it: `build_kernel` -> `CompiledKernel`.

`trace` runs the rewritten kernel function on proxy values (`Tracer`) and returns the module of
its IR; `build_kernel` runs the pass pipeline on it, prints PTX and assembles it. This is where
xDSL and the passes are imported: a kernel loaded from the disk cache (`compiled.load_kernel`)
never imports this module unless one of its IR stages is asked for.
"""

from __future__ import annotations

import time

from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, UnitAttr, i32
from xdsl.ir import Block, Region
from xdsl.utils.exceptions import VerifyException

from ...compiler.hardware import dtypes
from ...compiler.support.errors import CompileError, SourceLocation, TyloError
from ...compiler.layout.int_tuple import is_int
from ...compiler.layout.layout import Layout
from ...compiler.params.signature import ConstexprSpec, ScalarSpec, TensorMapSpec, TensorSpec
from ...dialects.builder import CLUSTER_ATTRIBUTE
from ...dialects.locations import file_location, first_invalid, source_location
from ...dialects.scalars import Scalar
from ...dialects.tylo import TensorMapType, element_type
from ...compiler.support import knobs
from ...passes.compile_speed import fast_compile
from ...passes.pipeline import emit_ptx, pipeline, run_pipeline
from .compiled import CompiledKernel, Stages, _constexprs, _device_params, _with_sass
from ..tracing.source import locate
from ..language.tiles import Pointer, Tensor, make_tile, pointer_type
from ..language.tma_params import TensorMap
from ..tracing.tracing import Tracer


def _arg_types(specs) -> list:
    types = []
    for _, spec in specs:
        if isinstance(spec, TensorSpec):
            types.append(pointer_type(spec.dtype, "global"))
            types += [i32] * sum(1 for s in spec.shape if s is None)
            types += [i32] * sum(1 for s in spec.stride if s is None)
        elif isinstance(spec, ScalarSpec):
            types.append(element_type(spec.dtype))
        elif isinstance(spec, TensorMapSpec):
            types.append(TensorMapType(spec.plan, spec.rank))
    return types


def _proxies(specs, values, args) -> dict:
    """Python values the kernel body sees for each parameter (arguments named after them)."""
    out = {}
    args = iter(args)

    def arg(hint: str):
        value = next(args)
        value.name_hint = hint
        return value

    for name, spec in specs:
        if isinstance(spec, ConstexprSpec):
            out[name] = values[name]
        elif isinstance(spec, ScalarSpec):
            out[name] = Scalar(arg(name), spec.dtype)
        elif isinstance(spec, TensorMapSpec):
            out[name] = TensorMap(arg(name), spec.plan, spec.rank)
        else:
            ptr = Pointer(arg(name), spec.dtype, "global", align=spec.align)
            shape = tuple(
                s if is_int(s) else Scalar(arg(f"{name}_shape{i}"), dtypes.Int32, nonneg=True)
                for i, s in enumerate(spec.shape)
            )
            stride = tuple(
                s if is_int(s) else Scalar(arg(f"{name}_stride{i}"), dtypes.Int32, nonneg=True)
                for i, s in enumerate(spec.stride)
            )
            out[name] = make_tile(ptr, Layout(shape, stride), "global", Tensor)
    return out


def trace(kernel, specs, values, block, arch: str = "sm_90a", shared: list | None = None) -> ModuleOp:
    """Run the rewritten kernel function on proxies; return the module of its IR. `shared`, a
    list, receives the kernel's `compiler.hardware.shared_memory.SharedLayout`."""
    body = Block(arg_types=_arg_types(specs))
    fn_op = func.FuncOp(kernel.fn.__name__, (body.arg_types, []), Region(body))
    fn_op.attributes["tylo.kernel"] = UnitAttr()
    fn_op.attributes["tylo.block"] = DenseArrayBase.from_list(i32, list(block))
    cluster = getattr(kernel, "cluster", None)
    if cluster is not None:  # (`passes.select.kernel` writes .reqnctapercluster from it)
        fn_op.attributes[CLUSTER_ATTRIBUTE] = DenseArrayBase.from_list(i32, list(cluster))
    filenames = {kernel.source.filename} | {h.filename for h in kernel.dependencies().helpers}
    lines = kernel.source.source.splitlines()
    def_line = next((i for i, t in enumerate(lines) if t.startswith("def ")), 0)
    home = SourceLocation(kernel.source.filename, kernel.source.first_line + def_line,
                          kernel.source.indent)
    fn_op.location = file_location(home)
    tracer = Tracer(body, block, arch, cluster, frozenset(filenames), home)
    if shared is not None:
        shared.append(tracer.shared)
    with tracer.active():
        try:
            proxies = _proxies(specs, values, body.args)
            kernel.source.function()(**proxies)
        except TyloError as e:
            if e.location is None:
                e.location = locate(e, filenames)
            raise e.with_traceback(None) from None
        except Exception as e:  # a Python error in the kernel's code
            err = CompileError(f"{type(e).__name__}: {e}", location=locate(e, filenames))
            raise err from e
        ret = func.ReturnOp()
        ret.location = tracer.home
        body.add_op(ret)
    module = ModuleOp([fn_op])
    if not knobs.compile.verify_passes:  # the pipeline verifies its output (and the suite, this)
        return module
    try:
        module.verify()
    except VerifyException as e:
        found = first_invalid(module)  # the op, at the user's line that made it
        where = source_location(found[0]) if found is not None else None
        raise CompileError(f"kernel {kernel.fn.__name__} produced invalid IR: {e}",
                           location=where) from e
    return module


def ir_stages(kernel, specs, values, block, arch) -> dict:
    with fast_compile():
        module = trace(kernel, specs, values, block, arch)
        return run_pipeline(module, kernel.fn.__name__, arch)


def ptx_module(kernel, specs, values, block, arch) -> tuple[ModuleOp, str, tuple]:
    """(the kernel's module in the ptx dialect, the entry's name, its `DeviceParam`s): the
    pipeline's output before PTX is printed, which the emulator runs."""
    with fast_compile():
        module = trace(kernel, specs, values, block, arch)
        run_pipeline(module, kernel.fn.__name__, arch, texts=False)
    return module, kernel.fn.__name__, _device_params(specs)


def build_kernel(kernel, specs, values, block, arch) -> CompiledKernel:
    """Trace, run the pipeline, print PTX and assemble it (see the module docstring)."""
    from ...runtime.ptxas import assemble

    name = kernel.fn.__name__
    t0 = time.perf_counter()
    shared: list = []
    with fast_compile():
        module = trace(kernel, specs, values, block, arch, shared)
        t1 = time.perf_counter()
        run_pipeline(module, name, arch, texts=False)
        stages = {"ptx": emit_ptx(module)}
    t2 = time.perf_counter()
    assembly = assemble(stages["ptx"], arch, name)
    t3 = time.perf_counter()
    stages["cubin"] = assembly.cubin
    # the IR stages are printed only when asked for (printing a large module after every pass
    # costs more than the passes): traced again then, as for a disk-cache entry
    names = ["tylo", *(p.name for p in pipeline(arch))]
    constexprs = _constexprs(specs, values)  # (not the launch's arrays: kept alive otherwise)
    return _with_sass(CompiledKernel(
        name=name,
        asm=Stages([*names, "ptx", "cubin", "sass"], stages, [
            (tuple(names), lambda _: ir_stages(kernel, specs, constexprs, block, arch)),
        ]),
        report=assembly.report,
        device_params=_device_params(specs),
        specs=specs,
        block=block,
        arch=arch,
        timings={"trace": t1 - t0, "passes": t2 - t1, "ptxas": t3 - t2},
        shared=shared[0],
        _paths={".ptx": assembly.ptx_path, ".cubin": assembly.cubin_path},
    ))


