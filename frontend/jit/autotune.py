"""``@tylo.autotune``: pick, per key, the fastest of several compile-time configurations.

    PLANS = [TiledMMA(atom, warps=(2, 4), repeat=(4, 4), k=16), ...]

    @tylo.autotune(configs=[tylo.Config(plan=p) for p in PLANS], key=["A", "B"])
    @tylo.kernel
    def gemm(C, A, B, plan: tylo.constexpr): ...

    grid = lambda cfg: (M // cfg.plan.tile_shape[0], N // cfg.plan.tile_shape[1])
    gemm[grid, lambda cfg: cfg.plan.threads](C, A, B)

A `Config` holds values of some of the kernel's parameters (tile sizes, plans, stages); the
caller passes the others. ``tuned[grid, block]`` and ``tuned[grid, block, shared_bytes]`` take
values or functions of the `Config`, since a config usually sets the tile and so the grid. The
first launch for a key (the shapes or values of the arguments named in `key`, the dtypes of
every array argument, the target) tunes: each config is compiled, launched `warmup` times and
timed `reps` times with CUDA events on the caller's arguments (`runtime.timing.median_ms`).
A config that fails to compile (ptxas, too much shared memory, a plan error) or to launch is
skipped with its reason; `AutotuneError` lists every reason when all fail. Array arguments are
copied before timing and put back after each config (`restore=None`: every array argument;
a list of names: those; ``[]``: none), so the launch that follows sees the caller's data.

A progress line per config goes to stderr (config i of n, its time, the best so far; off with
``progress=False`` or ``TYLO_AUTOTUNE_PROGRESS=0``). The best config is kept per key in memory
and in the disk cache (``autotune/`` in `knobs.cache.folder`), keyed by the kernel (source and the
globals it reads), the configs, the key, the target, ptxas and Tylo's version; a later process
launches it without timing. The launch functions (grid, block) are not part of that key.
Triton's ``triton.autotune`` (python/triton/runtime/autotuner.py) is the model for the interface.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence

from ...compiler.support import knobs
from ...compiler.support.errors import AutotuneError, TyloError
from ...runtime import arguments, driver, timing
from ...runtime.arrays import DeviceArray, as_device_array
from ...runtime.streams import launch_stream
from . import disk_cache
from .dependencies import stable_token
from .kernel import Kernel, toolchain

Snapshot = timing.Snapshot  # what copies the arguments (a test may stand in for the GPU)


class Config:
    """Values of compile-time parameters of a kernel: ``Config(plan=PLAN, stages=2)``; read
    them as attributes (``cfg.plan``) in the launch functions."""

    def __init__(self, **params):
        if not params:
            raise AutotuneError("Config() needs at least one parameter value")
        self.params = params

    def __getattr__(self, name: str):
        try:
            return self.__dict__["params"][name]
        except KeyError:
            raise AttributeError(f"Config has no parameter {name!r}") from None

    def __repr__(self) -> str:
        return "Config(" + ", ".join(f"{k}={v!r}" for k, v in self.params.items()) + ")"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Config) and self.params == other.params

    def __hash__(self) -> int:
        return hash(repr(self))

    def _key(self) -> tuple:
        """The parameters, for a process-independent token (the disk cache)."""
        return tuple(sorted(self.params.items(), key=lambda kv: kv[0]))


def autotune(configs: Sequence[Config], key: Sequence[str], *, restore: Sequence[str] | None = None,
             warmup: int = 3, reps: int = 20, progress: bool | None = None,
             timer: Callable | None = None) -> Callable[[Kernel], "Autotuned"]:
    """Decorate a `tylo.kernel` (or a function, made one) to tune it over `configs` per `key`
    (see the module docstring). timer: ``timer(run, stream, device) -> milliseconds``, instead
    of CUDA events (``runtime.timing.median_ms`` with `warmup` and `reps`)."""
    def wrap(fn) -> Autotuned:
        kernel = fn if isinstance(fn, Kernel) else Kernel(fn)
        return Autotuned(kernel, configs, key, restore, warmup, reps, progress, timer)

    return wrap


class Autotuned:
    """An autotuned kernel: ``tuned[grid, block](*args)``; `kernel` is the kernel it tunes and
    `best` the config chosen per key in this process. A caller's positional arguments fill the
    kernel's parameters that no config sets, in order (`given_names`)."""

    def __init__(self, kernel: Kernel, configs, key, restore, warmup, reps, progress, timer):
        self.kernel = kernel
        self.configs = list(configs)
        self.key = list(key)
        names = list(kernel.signature.parameters)
        if not self.configs or not all(isinstance(c, Config) for c in self.configs):
            raise AutotuneError(f"autotune {kernel.fn.__name__}: configs must be a non-empty "
                                "list of tylo.Config")
        for what, wanted in (("key", self.key), ("restore", restore or []),
                             ("config", [p for c in self.configs for p in c.params])):
            unknown = [n for n in wanted if n not in names]
            if unknown:
                raise AutotuneError(f"autotune {kernel.fn.__name__}: {what} names {unknown}, "
                                    f"which are not parameters of the kernel ({names})")
        self.restore = None if restore is None else list(restore)
        if reps < 1 or warmup < 0:
            raise AutotuneError(f"autotune {kernel.fn.__name__}: reps must be >= 1 and warmup >= 0")
        self.warmup, self.reps = warmup, reps
        self.progress = progress
        self.timer = timer
        self.best: dict[tuple, Config] = {}
        # the fast path of a positional call: quick key -> (config, full argument order)
        config_names = {n for c in self.configs for n in c.params}
        self.given_names = [n for n in names if n not in config_names]
        self.key_positions = frozenset(i for i, n in enumerate(self.given_names) if n in self.key)
        self.quick: dict[tuple, tuple[Config, tuple]] = {}

    def __repr__(self) -> str:
        return f"<tylo.autotune {self.kernel.fn.__qualname__}: {len(self.configs)} configs>"

    def compile(self, *args, **kwargs):
        """`Kernel.compile` of the tuned kernel: give the config's parameters too (no tuning)."""
        return self.kernel.compile(*args, **kwargs)

    def __getitem__(self, launch) -> "TunedLauncher":
        return self._launcher(launch, emulated=False)

    def _launcher(self, launch, emulated: bool) -> "TunedLauncher":
        if not isinstance(launch, tuple) or len(launch) not in (2, 3):
            raise AutotuneError("launch an autotuned kernel with kernel[grid, block] or "
                                "kernel[grid, block, shared_bytes] (values or functions of the "
                                "Config), kernel.emulate[...] likewise")
        return TunedLauncher(self, *launch, emulated=emulated)

    @property
    def emulate(self) -> "_EmulatedTuning":
        """``tuned.emulate[grid, block](*args)``: run on the CPU emulator with the first config
        (nothing is timed on a CPU); ``TYLO_EMULATE=1`` launches do the same."""
        return _EmulatedTuning(self)

    def quick_key(self, args: tuple) -> tuple | None:
        """The fast path's key of a positional call, or None to take the full path: per argument,
        a torch tensor's dtype, extents, strides and device, a key scalar's value, another
        scalar's type. It refines the tuning key (equal quick keys: equal tuning keys, one
        device, so one target), so a hit launches the config tuned for it; the launch itself
        checks the arguments as every launch does."""
        if len(args) != len(self.given_names):
            return None
        parts = []
        for i, a in enumerate(args):
            t = type(a)
            if t is int or t is float or t is bool:
                parts.append((t, a) if i in self.key_positions else t)
            elif t.__module__.startswith("torch") and hasattr(a, "data_ptr"):
                parts.append((a.dtype, a.shape, a.stride(), a.get_device()))
            else:
                return None
        return tuple(parts)

    def _say(self, text: str) -> None:
        show = knobs.autotune.progress if self.progress is None else self.progress
        if show:
            print(f"tylo.autotune {self.kernel.fn.__name__}: {text}", file=sys.stderr, flush=True)


class TunedLauncher:
    """``tuned[grid, block]``: call it with the kernel's arguments but those the configs set;
    `tune` only picks the config."""

    def __init__(self, tuned: Autotuned, grid, block, shared_bytes=0, emulated: bool = False):
        self.tuned = tuned
        self.launch = (grid, block, shared_bytes)
        self.emulated = emulated

    def __call__(self, *args, **kwargs) -> None:
        try:
            if self.emulated:
                return self._emulate(args, kwargs)
            quick = None if kwargs else self.tuned.quick_key(args)
            hit = self.tuned.quick.get(quick) if quick is not None else None
            if hit is not None:  # a tuned key: the config's arguments in their places
                config, order = hit
                return self._launcher(config)(*[args[i] if i >= 0 else v for i, v in order])
            if knobs.runtime.emulate:  # (read off the quick path: no key is tuned under emulation)
                return self._emulate(args, kwargs)
            config, full = self._tune(args, kwargs)
            if quick is not None and len(self.tuned.quick) < 1024:
                self.tuned.quick[quick] = (config, self._order(config))
            self._launcher(config)(*full)
        except TyloError as e:  # the user's mistake: no Tylo-internal frames in the traceback
            raise e.with_traceback(None) from None

    def _emulate(self, args, kwargs) -> None:
        """The first config, on the CPU emulator (nothing is timed on a CPU)."""
        config = self.tuned.configs[0]
        grid, block, shared = (f(config) if callable(f) else f for f in self.launch)
        full = self._arguments(config, self._given(args, kwargs))
        self.tuned.kernel.emulate[grid, block, shared](*full)

    def _order(self, config: Config) -> tuple:
        """Per kernel parameter: (index of the caller's positional argument, None), or (-1,
        the config's value)."""
        given = iter(range(len(self.tuned.given_names)))
        return tuple((-1, config.params[n]) if n in config.params else (next(given), None)
                     for n in self.tuned.kernel.signature.parameters)

    def tune(self, *args, **kwargs) -> Config:
        """The best config for these arguments (tuning first if this key has none yet)."""
        try:
            return self._tune(args, kwargs)[0]
        except TyloError as e:
            raise e.with_traceback(None) from None

    # -- one config -----------------------------------------------------------------------------
    def _launcher(self, config: Config):
        grid, block, shared = (f(config) if callable(f) else f for f in self.launch)
        return self.tuned.kernel[grid, block, shared]

    def _arguments(self, config: Config, given: dict) -> tuple:
        kernel = self.tuned.kernel
        try:
            bound = kernel.signature.bind(**given, **config.params)
        except TypeError as e:
            raise AutotuneError(f"{kernel.fn.__name__} with {config}: {e}") from None
        bound.apply_defaults()
        return tuple(bound.arguments.values())

    # -- tuning ---------------------------------------------------------------------------------
    def _tune(self, args, kwargs) -> tuple[Config, tuple]:
        tuned = self.tuned
        given = self._given(args, kwargs)
        arrays = {n: a for n, v in given.items() if (a := _array(n, v)) is not None}
        device = arguments.common_device(arrays.items())
        arch = driver.target_arch(device)
        key = (self._key_values(given, arrays), arch)
        config = tuned.best.get(key)
        if config is None:
            config = self._from_disk(key) or self._measure(given, arrays, device, arch, key)
            tuned.best[key] = config
        return config, self._arguments(config, given)

    def _given(self, args, kwargs) -> dict:
        """The caller's arguments by parameter name (the configs set the others)."""
        tuned = self.tuned
        kernel = tuned.kernel
        clash = sorted({n for c in tuned.configs for n in c.params if n in kwargs})
        if clash:
            raise AutotuneError(f"{kernel.fn.__name__}: {clash} are set by the configs; do not "
                                "pass them")
        if len(args) > len(tuned.given_names):
            raise AutotuneError(f"{kernel.fn.__name__}: {len(args)} positional arguments, but "
                                f"the caller passes {len(tuned.given_names)}: {tuned.given_names} "
                                "(the configs set the others)")
        given = dict(zip(tuned.given_names, args))  # positions skip the configs' parameters
        for name, value in kwargs.items():
            if name in given or name not in tuned.given_names:
                why = "given twice" if name in given else "not a parameter of the kernel"
                raise AutotuneError(f"{kernel.fn.__name__}: argument '{name}' is {why}")
            given[name] = value
        return given

    def _key_values(self, given: dict, arrays: dict) -> tuple:
        parts = []
        for name in self.tuned.key:
            if name not in given:
                raise AutotuneError(f"{self.tuned.kernel.fn.__name__}: key argument '{name}' "
                                    "was not given")
            a = arrays.get(name)
            parts.append((a.shape, a.strides) if a is not None else given[name])
        parts.append(tuple((n, a.dtype) for n, a in arrays.items()))
        return tuple(parts)

    def _disk_key(self, key: tuple) -> str | None:
        kernel = self.tuned.kernel
        deps = kernel.dependencies()
        tokens = [stable_token(key), *(stable_token(c.params) for c in self.tuned.configs)]
        if deps.disk_token is None or None in tokens or knobs.cache.folder is None:
            return None
        return disk_cache.digest(["autotune", disk_cache.tylo_digest(), kernel.fn.__module__,
                                  kernel.fn.__qualname__, kernel.source.digest(),
                                  deps.disk_token, *tokens, *toolchain()])

    def _from_disk(self, key: tuple) -> Config | None:
        disk_key = self._disk_key(key)
        entry = disk_cache.load("autotune", disk_key) if disk_key is not None else None
        if entry is None:
            return None
        meta = entry[0]
        configs = self.tuned.configs
        index = meta.get("best")
        if not isinstance(index, int) or not 0 <= index < len(configs):
            return None
        self.tuned._say(f"config {index + 1} of {len(configs)} from the disk cache: "
                        f"{configs[index]} ({meta.get('ms', float('nan')):.4f} ms when tuned)")
        return configs[index]

    def _measure(self, given: dict, arrays: dict, device, arch: str, key: tuple) -> Config:
        tuned = self.tuned
        kernel = tuned.kernel
        configs = tuned.configs
        stream = launch_stream(list(arrays.values()))
        saved = [a for n, a in arrays.items() if tuned.restore is None or n in tuned.restore]
        snapshot = Snapshot(saved, stream, device) if saved else None
        timer = tuned.timer or (lambda run, s, d: timing.median_ms(run, s, d, tuned.warmup,
                                                                   tuned.reps))
        times: list[float | None] = []
        reasons: list[str] = []
        t0 = time.perf_counter()
        try:
            for i, config in enumerate(configs, start=1):
                try:
                    ms = self._time_one(config, given, device, arch, stream, timer)
                except TyloError as e:
                    times.append(None)
                    reasons.append(f"config {i} {config}: {_reason(e)}")
                    tuned._say(f"config {i} of {len(configs)} {config}: skipped, {_reason(e)}")
                    continue
                finally:
                    if snapshot is not None:
                        snapshot.restore()
                times.append(ms)
                best = min(range(len(times)), key=lambda j: _or_inf(times[j]))
                tuned._say(f"config {i} of {len(configs)} {config}: {ms:.4f} ms "
                           f"(best so far: config {best + 1}, {times[best]:.4f} ms)")
        finally:
            if snapshot is not None:
                snapshot.free()
        if all(t is None for t in times):
            raise AutotuneError(f"autotune {kernel.fn.__name__}: every config failed:\n  "
                                + "\n  ".join(reasons))
        best = min(range(len(times)), key=lambda j: _or_inf(times[j]))
        tuned._say(f"chose config {best + 1} of {len(configs)} {configs[best]}: "
                   f"{times[best]:.4f} ms (tuning took {time.perf_counter() - t0:.1f} s)")
        disk_key = self._disk_key(key)
        if disk_key is not None:
            disk_cache.store("autotune", disk_key, {"best": best, "ms": times[best],
                                                    "times": times, "config": repr(configs[best])}, {})
        return configs[best]

    def _time_one(self, config: Config, given: dict, device, arch: str, stream, timer) -> float:
        kernel = self.tuned.kernel
        launcher = self._launcher(config)
        full = self._arguments(config, given)
        specs, values = kernel._bind(full, {}, describe=False)
        kernel._compiled(specs, values, launcher.block, arch)  # compile errors: skipped
        return float(timer(lambda: launcher(*full), stream, device))


def _array(name: str, value) -> DeviceArray | None:
    """`value` as a device array, None if it is no array; `ArgumentError` for a host array."""
    if isinstance(value, (bool, int, float)):
        return None
    return as_device_array(name, value)


def _or_inf(ms: float | None) -> float:
    return float("inf") if ms is None else ms


def _reason(e: TyloError) -> str:
    """The error's first line, and the first later line that says "error" (ptxas's own), and
    where in the kernel's source it was found."""
    lines = [line.strip() for line in e.message.strip().splitlines()] or [""]
    detail = next((line for line in lines[1:] if "error" in line.lower()), None)
    where = f" at {e.location.filename}:{e.location.line}" if e.location is not None else ""
    return f"{type(e).__name__}: {lines[0]}" + (f" ({detail})" if detail else "") + where


class _EmulatedTuning:
    """``tuned.emulate``: index it with the launch configuration (see `Autotuned.emulate`)."""

    def __init__(self, tuned: Autotuned):
        self.tuned = tuned

    def __getitem__(self, launch) -> TunedLauncher:
        return self.tuned._launcher(launch, emulated=True)


EXPORTS = (
    "Config", "autotune",
)
"""Names this module adds to the `tylo` namespace (api/__init__.py finds them)."""
