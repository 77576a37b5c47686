"""A compiled kernel, `CompiledKernel` (what `frontend.jit.build.build_kernel` makes), its disk-cache
form (`disk_entry`), and loading one from the disk cache without tracing (`load_kernel`); no
xDSL here, so that a disk-cache hit does not import the IR machinery.

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
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path


from ...compiler.support.errors import SourceLocation
from ...compiler.hardware.shared_memory import SharedLayout
from ...compiler.params.signature import ConstexprSpec, DeviceParam
from ...runtime.tools import files_dir, kept_path, write_atomic


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
    shared: the kernel's shared allocations (`compiler.hardware.shared_memory.SharedLayout`): see
    `shared_bytes`, `dynamic_shared_bytes`, `shared_allocations` and `shared_report`.
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
    shared: SharedLayout = field(default_factory=SharedLayout)
    _paths: dict = field(default_factory=dict, repr=False)

    @property
    def shared_bytes(self) -> int:
        """Shared memory per block in bytes: static arrays (in declaration order, each at its
        alignment) + the dynamic window (with its run-time alignment slack)."""
        return self.shared.total_bytes

    @property
    def dynamic_shared_bytes(self) -> int:
        """Dynamic shared bytes every launch passes (`kernel[grid, block]` adds them itself;
        an explicit shared_bytes in the brackets is extra, on top)."""
        return self.shared.dynamic_bytes

    @property
    def shared_allocations(self) -> tuple:
        """Each allocation (`compiler.hardware.shared_memory.SharedAllocation`: name, bytes, align,
        offset, dynamic, location: the user's line), in the order the kernel made them."""
        return tuple(self.shared.allocations)

    def shared_report(self) -> str:
        """The allocations and totals as a table to print."""
        return self.shared.report()

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
        from ...runtime.nvdisasm import opcode_counts

        base, full = opcode_counts(self.asm["sass"])
        return SassCounts(base, full, self.report.spill_store_bytes, self.report.spill_load_bytes)

    def __repr__(self) -> str:
        return (f"<CompiledKernel {self.name} for {self.arch}, block {self.block}: {self.report}; "
                f"{self.shared_bytes} bytes of shared memory per block "
                f"({self.dynamic_shared_bytes} dynamic)>")


def _with_sass(compiled: CompiledKernel) -> CompiledKernel:
    """`compiled`, whose ``asm["sass"]`` nvdisasm makes on first access, from `cubin_path`."""
    def make(stages: Stages) -> dict:
        from ...runtime.nvdisasm import disassemble

        return {"sass": disassemble(stages["cubin"], compiled.name, compiled.cubin_path)}

    compiled.asm.add_maker(("sass",), make)
    return compiled


def _constexprs(specs, values) -> dict:
    return {n: values[n] for n, spec in specs if isinstance(spec, ConstexprSpec)}


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
        "shared": [dataclasses.asdict(a) for a in compiled.shared.allocations],
    }
    return meta, {"ptx": compiled.ptx.encode(), "cubin": compiled.cubin}


def _shared_layout(entries: list[dict]) -> SharedLayout:
    """The `SharedLayout` of a disk-cache entry's allocations (`disk_entry`)."""
    layout = SharedLayout()
    for e in entries:
        where = e.get("location")
        layout.add(e["bytes"], e["align"], e["dynamic"],
                   SourceLocation(**where) if where else None)
    return layout


def load_kernel(kernel, specs, values, block, arch, meta: dict, blobs: dict,
                seconds: float, ir_stages) -> CompiledKernel:
    """The `CompiledKernel` of a disk-cache entry: no tracing, no pass, no ptxas; its IR stages
    are made on first access by `ir_stages(kernel, specs, constexpr values, block, arch)`
    (`frontend.jit.build.ir_stages`, passed in: the IR machinery loads only then)."""
    from ...runtime.ptxas import ResourceReport

    constexprs = _constexprs(specs, values)
    names = [n for n in meta["stages"] if n not in ("ptx", "cubin", "sass")]
    folder = files_dir()  # the files keep their names (written again on first use if missing)
    paths = {suffix: folder / name for suffix, name in meta["files"].items()}
    return _with_sass(CompiledKernel(
        name=meta["name"],
        asm=Stages(meta["stages"], {"ptx": blobs["ptx"].decode(), "cubin": blobs["cubin"]}, [
            (tuple(names), lambda _: ir_stages(kernel, specs, constexprs, block, arch)),
        ]),
        report=ResourceReport(**meta["report"]),
        device_params=_device_params(specs),
        specs=specs,
        block=block,
        arch=arch,
        timings={"load": seconds, **{f"first {k}": v for k, v in meta["timings"].items()}},
        origin="disk cache",
        disk="loaded",
        shared=_shared_layout(meta.get("shared", [])),
        _paths=paths,
    ))


EXPORTS = (
    "CompiledKernel",
)
"""Names this module adds to the `tylo` namespace (api/__init__.py finds them)."""
