"""``@tylo.kernel``: JIT compilation, the compile cache, and launches.

    @tylo.kernel
    def scale(out, x, alpha):
        i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
        if i < x.shape[0]:
            out[i] = x[i] * alpha

    scale[grid, block](out, x, 2.0)            # compile on first use, then launch
    compiled = scale.compile(out, x, 2.0, block=128)   # compile only: .asm, .report

A launch binds the arguments, derives each parameter's spec (`tylo.runtime.arguments.prepare`),
and looks the kernel up in an in-memory cache keyed by the kernel's source digest, what it reads
besides its arguments (the globals, closure values and `@tylo.func` helpers it names, by name or
as ``module.helper``, with their values: `dependencies`), the specs (constexpr values included),
the block shape, the target, ptxas (path, version, ``TYLO_PTXAS_OPTIONS``) and Tylo's version.
A hit launches without tracing; a launch that finds a read global changed (``BLOCK = 128``
edited) compiles again. A miss looks in the disk cache (`disk_cache`, keyed by the same things
as stable tokens) and loads the cubin and launch metadata from there without tracing; else it
traces the function (frontend), runs the pass pipeline, prints PTX, assembles it with ptxas and
stores the result on disk. A kernel that reads a value without a stable token (an object
compared by identity) is cached in memory only (``compiled.disk`` says why).

``kernel.emulate`` runs the pipeline's ``ptx``-dialect module, kept under the same key in the
disk cache's ``emulated/`` folder (`emulated_entry`). ``kernel.precompile(*args, block=,
arch=, emulator=)`` compiles ahead of time into both (`tylo.ops.warmup`), without a GPU.
`disk_cache.COUNTS` counts this process's hits, misses and stores.
"""

from __future__ import annotations

import functools
import inspect
import time
from types import FunctionType
from typing import TYPE_CHECKING

from ...compiler.support import knobs
from ...compiler.hardware.cluster import cluster_shape
from ...compiler.hardware.dtypes import as_dtype
from ...compiler.support.errors import (ArgumentError, GeometryError, LaunchError, TyloError,
                                        UnsupportedError, user_location)
from ...compiler.layout.layout import Layout
from ...compiler.atoms.mma_atom import MMAAtom
from ...compiler.ownership.ownership import Ownership
from ...compiler.params.signature import ConstexprSpec, Tensor, TensorSpec, constexpr
from ...compiler.layout.swizzle import ComposedLayout, Swizzle
from ...compiler.atoms.tiled_mma import TiledMMA
from ...compiler.hardware.ptx_types import arch_number
from ...compiler.support.version import VERSION
from ...runtime import arguments, driver
from ...runtime.dispatch import FastPath
from ...runtime.arrays import DeviceArray
from ...runtime.function import launch_dims
from . import dependencies, disk_cache
from .launcher import Launcher

if TYPE_CHECKING:
    from pathlib import Path

    from .compiled import CompiledKernel
from ..tracing.source import Helper, TracedSource

def build_module():
    """`tylo.frontend.jit.build` (tracing, the pass pipeline, ptxas): imported with the first
    compile, so that ``import tylo``, ``@tylo.kernel`` and a disk-cache hit do not load xDSL."""
    from . import build

    return build


def compiled_record():
    """`tylo.frontend.jit.compiled`: the `CompiledKernel` record and its disk-cache form (no xDSL)."""
    from . import compiled

    return compiled


DISK_FORMAT = "kernel entry 3"  # part of the disk key: change it when an entry's content changes
_STATIC_TYPES = (MMAAtom, TiledMMA, Layout, ComposedLayout, Swizzle, Ownership, str, type(None))


def toolchain() -> tuple[str, str, tuple[str, ...]]:
    """(ptxas path, ptxas version, ptxas options): part of every cache key; looked up once per
    value of `knobs.toolchain.ptxas` (``TYLO_PTXAS``) and its options (``TYLO_PTXAS_OPTIONS``)."""
    return _toolchain(knobs.toolchain.ptxas, tuple(knobs.toolchain.ptxas_options))


@functools.lru_cache(maxsize=8)
def _toolchain(_override: Path | None, options: tuple[str, ...]) -> tuple[str, str, tuple[str, ...]]:
    from ...runtime.ptxas import find_ptxas, ptxas_version

    path = find_ptxas()
    return path, ptxas_version(path), options


def _plain_ints(config: tuple) -> bool:
    """Whether a launch configuration holds only ints and tuples of ints (streams aside: the
    fourth entry may be anything hashable), so that a dict lookup finds exactly its launcher."""
    for i, x in enumerate(config):
        t = type(x)
        if t is int or i == 3:
            continue
        if t is tuple:
            for y in x:
                if type(y) is not int:
                    return False
            continue
        return False
    return True


def _is_constexpr(annotation, value) -> bool:
    """Whether a parameter is compile-time: annotated constexpr, or unannotated and given a
    static Tylo object (a layout, atom, plan, ownership, ...)."""
    if annotation is constexpr or isinstance(annotation, constexpr):
        return True
    return annotation is inspect.Parameter.empty and _is_static_object(value)


def _is_static_object(value) -> bool:
    if isinstance(value, tuple):
        return all(_is_static_object(v) or isinstance(v, int) for v in value)
    return isinstance(value, _STATIC_TYPES)


class Kernel:
    """A decorated kernel function (see the module docstring)."""

    def __init__(self, fn: FunctionType, cluster=None):
        self.fn = fn
        # (x, y, z) CTAs per cluster, or None (`compiler.hardware.cluster`; part of every cache key)
        self.cluster = _cluster(cluster)
        self.source = TracedSource(fn, kernel=True)
        try:
            self.signature = inspect.signature(fn, eval_str=True)
        except Exception:  # an annotation that cannot be evaluated yet: keep it as written
            self.signature = inspect.signature(fn)
        self.cache: dict[tuple, CompiledKernel] = {}
        self._emulated: dict[tuple, tuple] = {}  # key -> `build.ptx_module` (kernel.emulate)
        self._launchers: dict[tuple, Launcher] = {}
        self.annotations = [
            (name, p.annotation) for name, p in self.signature.parameters.items()
        ]
        self.positional_only_fast = all(
            p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            for p in self.signature.parameters.values()
        )
        # launch fast path: block -> its dispatches (launcher.py; cleared = rebuilt on demand)
        self.fast: dict[tuple, FastPath] = {}
        self._deps: dependencies.Dependencies | None = None
        functools.update_wrapper(self, fn)

    def __repr__(self) -> str:
        return f"<tylo.kernel {self.fn.__qualname__}>"

    def __call__(self, *args, **kwargs):
        raise LaunchError(
            f"launch {self.fn.__name__} with {self.fn.__name__}[grid, block](...), or compile it "
            f"with {self.fn.__name__}.compile(...)"
        )

    def __getitem__(self, config) -> "Launcher":
        if not isinstance(config, tuple) or len(config) not in (2, 3, 4):
            raise LaunchError("launch configuration is kernel[grid, block], kernel[grid, block, "
                              "shared_bytes] or kernel[grid, block, shared_bytes, stream]")
        plain = _plain_ints(config)
        if plain:  # (8.0 == 8 and True == 1 hash alike: only plain ints are looked up)
            try:
                launcher = self._launchers.get(config)
            except TypeError:  # an unhashable stream object
                launcher, plain = None, False
            if launcher is not None:
                return launcher
        if knobs.runtime.emulate:  # TYLO_EMULATE=1, read when a configuration is first indexed
            launcher = self.emulate[config]
        else:
            launcher = Launcher(self, *config)  # validates: LaunchError for a float, a bool, ...
        if plain:
            if len(self._launchers) >= 256:  # many grids (a grid per problem size): restart
                self._launchers.clear()
            self._launchers[config] = launcher
        return launcher

    # -- binding --------------------------------------------------------------------------------
    def _bind(self, args, kwargs, describe: bool):
        if not kwargs and self.positional_only_fast and len(args) == len(self.annotations):
            items = [(name, value, ann) for (name, ann), value in zip(self.annotations, args)]
        else:
            try:
                bound = self.signature.bind(*args, **kwargs)
            except TypeError as e:
                raise LaunchError(f"{self.fn.__name__}: {e}") from None
            bound.apply_defaults()
            params = self.signature.parameters
            items = [(n, v, params[n].annotation) for n, v in bound.arguments.items()]
        specs, values = [], {}
        for name, value, ann in items:
            if _is_constexpr(ann, value):
                ann = constexpr
            if describe:
                spec, launch_value = describe_argument(name, value, ann)
            else:
                spec, launch_value = arguments.prepare(name, value, ann)
            specs.append((name, spec))
            values[name] = value if isinstance(spec, ConstexprSpec) else launch_value
        return tuple(specs), values

    # -- what the kernel reads, and the cache ----------------------------------------------------
    def dependencies(self) -> dependencies.Dependencies:
        """The globals, closure values and helpers the kernel reads, found again (and the fast
        path's entries dropped) when one of them changed."""
        deps = self._deps
        if deps is None or deps.changed():
            deps = self._deps = dependencies.find(self.source)
            self.fast.clear()
        return deps

    def check_dependencies(self) -> None:
        """Drop the launch fast path's entries when a global the kernel reads changed (every
        launch asks before its fast-path lookup; without recorded reads it costs one test)."""
        deps = self._deps
        if deps is not None and deps.reads and deps.changed():
            self._deps = None
            self.fast.clear()

    def _key(self, specs, block, arch) -> tuple:
        return (self.source.digest(), self.dependencies().key, specs, block, arch, toolchain(),
                VERSION, self.cluster)

    def _disk_key(self, specs, block, arch) -> tuple[str | None, str]:
        """(key of the disk cache, "") or (None, why the kernel is not cached on disk)."""
        if knobs.cache.folder is None:
            return None, "off"
        deps = self.dependencies()
        if deps.disk_token is None:
            return None, f"not on disk: {', '.join(deps.unstable)} has no stable value token"
        spec_token = dependencies.stable_token(specs)
        if spec_token is None:
            return None, "not on disk: a constexpr argument has no stable value token"
        key = disk_cache.digest([
            DISK_FORMAT, disk_cache.tylo_digest(), self.fn.__module__, self.fn.__qualname__,
            self.source.digest(), deps.disk_token, spec_token, block, arch, *toolchain(),
            self.cluster,
            # where the sources are: the PTX's line info (.file/.loc) names these files and lines
            [(s.filename, s.first_line) for s in (self.source, *deps.helpers)],
        ])
        return key, ""

    def _compiled(self, specs, values, block, arch) -> CompiledKernel:
        key = self._key(specs, block, arch)
        hit = self.cache.get(key)
        if hit is None:
            hit = self._load_or_build(specs, values, block, arch)
            self.cache[key] = hit
        return hit

    def _load_or_build(self, specs, values, block, arch) -> CompiledKernel:
        t0 = time.perf_counter()
        key, why = self._disk_key(specs, block, arch)
        # TYLO_DUMP_IR asks to see every stage: compile (and store) rather than load
        load = key is not None and knobs.compile.dump_ir is None
        entry = disk_cache.load("kernels", key) if load else None
        if entry is not None:
            try:
                remake = lambda *a: build_module().ir_stages(*a)  # noqa: E731 - on first use
                return compiled_record().load_kernel(self, specs, values, block, arch, *entry,
                                                     time.perf_counter() - t0, remake)
            except (KeyError, TypeError, ValueError):  # a valid file of another layout: rebuild
                pass
        compiled = build_module().build_kernel(self, specs, values, block, arch)
        if key is not None:
            stored = disk_cache.store("kernels", key, *compiled_record().disk_entry(compiled))
            why = "stored" if stored is not None else "not on disk: the cache folder is not writable"
        compiled.disk = why
        return compiled

    @property
    def emulate(self):
        """``kernel.emulate[grid, block](*args)``: run on the CPU emulator, on host arrays
        (`tylo.frontend.jit.emulate`)."""
        from .emulate import EmulateIndexer

        return EmulateIndexer(self)

    def _emulation_module(self, specs, values, block, arch):
        """(ptx-dialect module, entry name, device params) for these arguments, cached in
        memory and on disk (`emulated_entry`)."""
        key = self._key(specs, block, arch)
        hit = self._emulated.get(key)
        if hit is None:
            hit = self._emulated[key] = self._load_or_build_emulated(specs, values, block, arch)
        return hit

    def _load_or_build_emulated(self, specs, values, block, arch) -> tuple:
        from . import emulated_entry

        key, _ = self._disk_key(specs, block, arch)
        key = emulated_entry.entry_key(key) if key is not None else None
        if key is not None and knobs.compile.dump_ir is None:
            entry = disk_cache.load("emulated", key)
            built = emulated_entry.load(*entry) if entry is not None else None
            if built is not None:
                return built
        built = build_module().ptx_module(self, specs, values, block, arch)
        entry = emulated_entry.disk_entry(built) if key is not None else None
        if entry is not None:
            disk_cache.store("emulated", key, *entry)
        return built

    def precompile(self, *args, block=32, arch: str | None = None, emulator: bool = False,
                   **kwargs) -> CompiledKernel:
        """`compile` (the kernel for `arch` into the disk cache, ahead of its first launch) and,
        with `emulator`, the module `kernel.emulate` runs for these arguments too (host
        arrays or ``tylo.Tensor`` descriptions, as for `compile`). Works without a GPU."""
        compiled = self.compile(*args, block=block, arch=arch, **kwargs)
        if emulator:
            try:
                specs, values = self._bind(args, kwargs, describe=True)
                self._emulation_module(specs, values, launch_dims("block", block),
                                       compiled.arch)
            except TyloError as e:
                raise e.with_traceback(None) from None
        return compiled

    def compile(self, *args, block=32, arch: str | None = None, **kwargs) -> CompiledKernel:
        """Compile for these arguments without launching; works without a GPU.

        Arguments may be device arrays, host (numpy) arrays or ``tylo.Tensor(...)`` descriptions
        of the arrays to come (a description without strides is row-major with stride 1 on its
        last axis and 16-byte alignment, as a fresh torch tensor), scalars and static values.
        Returns a `CompiledKernel` whose ``.asm`` holds every stage's IR, the PTX, the cubin and
        the SASS; it comes from the in-memory or disk cache when one holds it (``.origin``).
        """
        try:
            block = launch_dims("block", block)
            arch = arch or driver.target_arch()
            arch_number(arch)  # an unknown target: UnsupportedError listing the known ones
            specs, values = self._bind(args, kwargs, describe=True)
            return self._compiled(specs, values, block, arch)
        except TyloError as e:  # the user's mistake: no Tylo-internal frames in the traceback
            raise e.with_traceback(None) from None


def describe_argument(name: str, value, annotation):
    """(spec, value) for `compile`: like a launch, but arrays may be descriptions or host arrays.

    A numpy array stands for a device array of its dtype, shape and strides at a 16-byte aligned
    address and goes through the launch rules; a ``tylo.Tensor(...)`` description gives the spec
    itself (without strides: row-major, stride 1 on the last axis, 16-byte aligned). Both are
    checked against the parameter's annotation (ArgumentError when they disagree).
    """
    import numpy as np

    if isinstance(value, np.ndarray):
        strides = tuple(s // value.itemsize for s in value.strides)
        array = DeviceArray(0, as_dtype(value.dtype), tuple(value.shape), strides, kind="host")
        return arguments.prepare(name, array, annotation)[0], None
    if isinstance(value, Tensor):
        return _described_spec(name, value, annotation), None
    return arguments.prepare(name, value, annotation)


def _described_spec(name: str, d: Tensor, annotation) -> TensorSpec:
    shape = list(d.shape or (None,) * d.ndim)
    stride = list(d.stride or (None,) * (d.ndim - 1) + (1,))
    align = d.align or 16
    if isinstance(annotation, Tensor):
        if (annotation.dtype, annotation.ndim) != (d.dtype, d.ndim):
            raise ArgumentError(name, f"is described as {d.dtype} of rank {d.ndim}, but the "
                                      f"annotation asks for {annotation.dtype} of rank {annotation.ndim}")
        for what, mine, fixed in (("shape", shape, annotation.shape), ("stride", stride, annotation.stride)):
            for axis, want in enumerate(fixed or ()):
                if want is None:
                    continue
                if mine[axis] not in (None, want):
                    raise ArgumentError(name, f"{what} {mine[axis]} on axis {axis} differs from the "
                                              f"annotation's {want}")
                mine[axis] = want
        align = annotation.align or align
    return TensorSpec(d.dtype, tuple(shape), tuple(stride), align)


def _decorated(fn, what: str):
    """`fn` if it is a plain function; else UnsupportedError saying what was decorated."""
    if isinstance(fn, FunctionType):
        for p in inspect.signature(fn).parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                star = "*" if p.kind is p.VAR_POSITIONAL else "**"
                raise UnsupportedError(
                    f"{what} {fn.__qualname__}: a {star}{p.name} parameter is not supported; a "
                    "kernel's parameters are named (pass a tuple as one constexpr parameter, or "
                    "several arrays by name)")
        return fn
    if type(fn).__name__ in ("Kernel", "Autotuned", "Helper"):
        hint = ("put @tylo.autotune(...) above @tylo.kernel" if type(fn).__name__ == "Autotuned"
                else "decorate the function once")
        raise UnsupportedError(f"{what} decorates a plain function, not a {type(fn).__name__} object: "
                               f"{hint}")
    raise UnsupportedError(f"{what} decorates a function defined with def, not {fn!r}")


def _cluster(value) -> tuple[int, int, int] | None:
    """`compiler.hardware.cluster.cluster_shape` of a decorator's ``cluster=``; GeometryError if bad."""
    try:
        return cluster_shape(value, "cluster")
    except ValueError as e:
        raise GeometryError(f"@tylo.kernel(cluster=...): {e}") from None


def _decorate(fn, cls, what: str):
    """`cls(fn)` for a plain function (`_decorated`), errors located at the decorator's line."""
    try:
        return cls(_decorated(fn, what))
    except TyloError as e:
        raise e.with_location(e.location or user_location(3)).with_traceback(None) from None


def kernel(fn: FunctionType | None = None, *, cluster=None) -> Kernel:
    """Decorate a Python function as a Tylo kernel (see the module docstring); ``@tylo.kernel``
    and ``@tylo.kernel()`` are the same. UnsupportedError for anything but a plain function
    with named parameters (its source must be in a file).

    cluster: CTAs per thread block cluster, an int or 1 to 3 ints (x, y, z), at most 8 in all
    (``@tylo.kernel(cluster=(2, 1, 1))``, sm_90+): the entry gets ``.reqnctapercluster`` and
    launches as usual (``kernel[grid, block]``; each grid extent a multiple of the cluster's,
    else a LaunchError naming the grid). `compiler.hardware.cluster`; docs/kernel_language.md 12.5.
    GeometryError for a bad shape."""
    if fn is None:
        if cluster is None:
            return kernel
        try:
            _cluster(cluster)
        except TyloError as e:
            raise e.with_location(e.location or user_location(2)).with_traceback(None) from None
        return functools.partial(kernel, cluster=cluster)
    return _decorate(fn, functools.partial(Kernel, cluster=cluster), "@tylo.kernel")


def func(fn: FunctionType | None = None) -> Helper:
    """Decorate a device helper that kernels call (see `Helper`); ``@tylo.func()`` too."""
    return func if fn is None else _decorate(fn, Helper, "@tylo.func")


EXPORTS = (
    "func", "kernel",
)
"""Names this module adds to the `tylo` namespace (api/__init__.py finds them)."""

__all__ = ["kernel", "func", "Kernel", "Helper", "Launcher"]
