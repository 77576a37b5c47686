"""Tracing a kernel into IR and compiling it: `build_kernel` -> `CompiledKernel`; and loading a
compiled kernel from the disk cache without tracing: `load_kernel`.

`CompiledKernel.asm` maps each stage to its text: ``"tylo"`` (the frontend's IR), one entry per
pass of the pipeline (its IR after the pass), ``"ptx"``, ``"cubin"`` (bytes) and ``"sass"``
(nvdisasm's text, made on first access). ``report`` is ptxas's resource report (registers,
shared memory, spills); ``timings`` the seconds spent in tracing, passes and ptxas (or in
loading from the disk cache); `sass_counts` counts the SASS instructions by opcode.

A kernel loaded from the disk cache has its PTX, cubin and report; its IR stages are made again
on first access (by tracing and running the passes for the same arguments, without ptxas), so
``compiled.asm["tylo"]`` works the same for both. ``origin`` says which it was.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, UnitAttr, i32
from xdsl.ir import Block, Region
from xdsl.utils.exceptions import VerifyException

from ..compiler import dtypes
from ..compiler.errors import CompileError, TyloError
from ..compiler.int_tuple import is_int
from ..compiler.layout import Layout
from ..compiler.signature import ConstexprSpec, DeviceParam, ScalarSpec, TensorSpec
from ..dialects.scalars import Scalar
from ..dialects.tylo import element_type
from ..passes.pipeline import emit_ptx, run_pipeline
from ..runtime.tools import files_dir, kept_path, write_atomic
from .source import locate
from .tiles import Pointer, Tensor, make_tile, pointer_type
from .tracing import Tracer


class Stages(Mapping):
    """`CompiledKernel.asm`: stage name -> text (bytes for ``"cubin"``), in pipeline order.

    Some stages are made on first access by a maker, called with these stages, that returns
    a dict of stages: ``"sass"`` by nvdisasm; the IR stages of a kernel loaded from the disk
    cache by tracing again.
    """

    def __init__(self, names: list[str], known: dict,
                 makers: list[tuple[tuple[str, ...], Callable[["Stages"], dict]]]):
        self._names = list(names)
        self._known = dict(known)
        self._makers: dict[str, Callable[[Stages], dict]] = {}
        for group, maker in makers:
            self.add_maker(group, maker)

    def add_maker(self, group: tuple[str, ...], maker: Callable[["Stages"], dict]) -> None:
        """Make the stages `group` on first access with ``maker(self)``."""
        self._makers.update(dict.fromkeys(group, maker))

    def __getitem__(self, name: str):
        if name not in self._known and name in self._makers:
            made = self._makers[name](self)
            for key, value in made.items():
                self._known.setdefault(key, value)
        return self._known[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def made(self, name: str) -> bool:
        """Whether stage `name` is there without running its maker."""
        return name in self._known


@dataclass
class SassCounts:
    """SASS instruction counts of a kernel and its spills (`CompiledKernel.sass_counts`).

    opcodes: count per base opcode (``"HMMA"``, ``"LDSM"``, ``"LDG"``); full: per opcode with
    its modifiers (``"HMMA.16816.F32.BF16"``). ``counts["HMMA"]`` reads the first,
    ``counts["LDG.E.128"]`` (a name with a dot) the second. The spill sizes are bytes per
    thread, from ptxas's report.
    """

    opcodes: Counter
    full: Counter
    spill_store_bytes: int
    spill_load_bytes: int

    def __getitem__(self, opcode: str) -> int:
        return (self.full if "." in opcode else self.opcodes)[opcode]

    @property
    def spill_bytes(self) -> int:
        return self.spill_store_bytes + self.spill_load_bytes


@dataclass
class CompiledKernel:
    """A compiled kernel: its stages' text, its cubin, and how to pass its parameters.

    origin: ``"compiled"`` (traced, passes, ptxas in this process) or ``"disk cache"``.
    disk: what the disk cache did: ``"stored"``, ``"loaded"``, ``"off"``, or why the kernel
    is not cached on disk.
    """

    name: str
    asm: Stages
    report: object
    device_params: tuple[DeviceParam, ...]
    specs: tuple
    block: tuple[int, int, int]
    arch: str
    timings: dict = field(default_factory=dict)
    origin: str = "compiled"
    disk: str = "off"
    _paths: dict = field(default_factory=dict, repr=False)

    @property
    def cubin(self) -> bytes:
        return self.asm["cubin"]

    @property
    def ptx(self) -> str:
        return self.asm["ptx"]

    @property
    def ptx_path(self) -> Path:
        """A file holding the PTX (kept in `runtime.tools.files_dir`; written if missing)."""
        return self._kept(".ptx", self.ptx.encode())

    @property
    def cubin_path(self) -> Path:
        """A file holding the cubin (kept in `runtime.tools.files_dir`; written if missing)."""
        return self._kept(".cubin", self.cubin)

    def _kept(self, suffix: str, data: bytes) -> Path:
        path = self._paths.get(suffix)
        if path is None:
            path = self._paths[suffix] = kept_path(self.name, hashlib.sha256(data).hexdigest()[:12],
                                                   suffix)
        if not path.is_file() or path.stat().st_size != len(data):
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, data)
        return path

    def sass_counts(self) -> SassCounts:
        """Counts of the SASS instructions (``asm["sass"]``, by nvdisasm) by opcode, and the
        spill bytes ptxas reported. Needs nvdisasm (no GPU); `TyloError` without it."""
        from ..runtime.nvdisasm import opcode_counts

        base, full = opcode_counts(self.asm["sass"])
        return SassCounts(base, full, self.report.spill_store_bytes, self.report.spill_load_bytes)

    def __repr__(self) -> str:
        return f"<CompiledKernel {self.name} for {self.arch}, block {self.block}: {self.report}>"


def _arg_types(specs) -> list:
    types = []
    for _, spec in specs:
        if isinstance(spec, TensorSpec):
            types.append(pointer_type(spec.dtype, "global"))
            types += [i32] * sum(1 for s in spec.shape if s is None)
            types += [i32] * sum(1 for s in spec.stride if s is None)
        elif isinstance(spec, ScalarSpec):
            types.append(element_type(spec.dtype))
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
        else:
            ptr = Pointer(arg(name), spec.dtype, "global")
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


def trace(kernel, specs, values, block, arch: str = "sm_90a") -> ModuleOp:
    """Run the rewritten kernel function on proxies; return the module of its IR."""
    body = Block(arg_types=_arg_types(specs))
    fn_op = func.FuncOp(kernel.fn.__name__, (body.arg_types, []), Region(body))
    fn_op.attributes["tylo.kernel"] = UnitAttr()
    fn_op.attributes["tylo.block"] = DenseArrayBase.from_list(i32, list(block))
    filenames = {kernel.source.filename} | {h.filename for h in kernel.dependencies().helpers}
    with Tracer(body, block, arch).active():
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
        body.add_op(func.ReturnOp())
    module = ModuleOp([fn_op])
    try:
        module.verify()
    except VerifyException as e:
        raise CompileError(f"kernel {kernel.fn.__name__} produced invalid IR: {e}") from e
    return module


def _with_sass(compiled: CompiledKernel) -> CompiledKernel:
    """`compiled`, whose ``asm["sass"]`` nvdisasm makes on first access, from `cubin_path`."""
    def make(stages: Stages) -> dict:
        from ..runtime.nvdisasm import disassemble

        return {"sass": disassemble(stages["cubin"], compiled.name, compiled.cubin_path)}

    compiled.asm.add_maker(("sass",), make)
    return compiled


def _constexprs(specs, values) -> dict:
    return {n: values[n] for n, spec in specs if isinstance(spec, ConstexprSpec)}


def _ir_stages(kernel, specs, values, block, arch) -> dict:
    module = trace(kernel, specs, values, block, arch)
    return run_pipeline(module, kernel.fn.__name__, arch)


def build_kernel(kernel, specs, values, block, arch) -> CompiledKernel:
    """Trace, run the pipeline, print PTX and assemble it (see the module docstring)."""
    from ..runtime.ptxas import assemble

    name = kernel.fn.__name__
    t0 = time.perf_counter()
    module = trace(kernel, specs, values, block, arch)
    t1 = time.perf_counter()
    stages = run_pipeline(module, name, arch)
    stages["ptx"] = emit_ptx(module)
    t2 = time.perf_counter()
    assembly = assemble(stages["ptx"], arch, name)
    t3 = time.perf_counter()
    stages["cubin"] = assembly.cubin
    return _with_sass(CompiledKernel(
        name=name,
        asm=Stages([*stages, "sass"], stages, []),
        report=assembly.report,
        device_params=_device_params(specs),
        specs=specs,
        block=block,
        arch=arch,
        timings={"trace": t1 - t0, "passes": t2 - t1, "ptxas": t3 - t2},
        _paths={".ptx": assembly.ptx_path, ".cubin": assembly.cubin_path},
    ))


def _device_params(specs) -> tuple[DeviceParam, ...]:
    return tuple(p for n, spec in specs for p in spec.device_params(n))


def disk_entry(compiled: CompiledKernel) -> tuple[dict, dict[str, bytes]]:
    """(meta, blobs) of the disk-cache entry of a kernel compiled in this process."""
    meta = {
        "name": compiled.name,
        "arch": compiled.arch,
        "block": list(compiled.block),
        "report": dataclasses.asdict(compiled.report),
        "stages": list(compiled.asm),
        "timings": compiled.timings,
        "files": {suffix: path.name for suffix, path in compiled._paths.items()},
    }
    return meta, {"ptx": compiled.ptx.encode(), "cubin": compiled.cubin}


def load_kernel(kernel, specs, values, block, arch, meta: dict, blobs: dict,
                seconds: float) -> CompiledKernel:
    """The `CompiledKernel` of a disk-cache entry: no tracing, no pass, no ptxas; its IR stages
    are made on first access (see the module docstring)."""
    from ..runtime.ptxas import ResourceReport

    constexprs = _constexprs(specs, values)
    names = [n for n in meta["stages"] if n not in ("ptx", "cubin", "sass")]
    folder = files_dir()  # the files keep their names (written again on first use if missing)
    paths = {suffix: folder / name for suffix, name in meta["files"].items()}
    return _with_sass(CompiledKernel(
        name=meta["name"],
        asm=Stages(meta["stages"], {"ptx": blobs["ptx"].decode(), "cubin": blobs["cubin"]}, [
            (tuple(names), lambda _: _ir_stages(kernel, specs, constexprs, block, arch)),
        ]),
        report=ResourceReport(**meta["report"]),
        device_params=_device_params(specs),
        specs=specs,
        block=block,
        arch=arch,
        timings={"load": seconds, **{f"first {k}": v for k, v in meta["timings"].items()}},
        origin="disk cache",
        disk="loaded",
        _paths=paths,
    ))
