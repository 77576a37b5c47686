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
and in the disk cache (``autotune/`` in `knobs.cache_dir`), keyed by the kernel (source and the
globals it reads), the configs, the key, the target, ptxas and Tylo's version; a later process
launches it without timing. The launch functions (grid, block) are not part of that key.
Triton's ``triton.autotune`` (runtime/autotuner.py) is the model for the interface.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence

from ..compiler import knobs
from ..compiler.errors import AutotuneError, TyloError
from ..runtime import arguments, driver, timing
from ..runtime.arrays import DeviceArray, as_device_array
from ..runtime.streams import launch_stream
from . import disk_cache
from .dependencies import stable_token
from ..compiler.version import VERSION
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
    `best` the config chosen per key in this process."""

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

    def __repr__(self) -> str:
        return f"<tylo.autotune {self.kernel.fn.__qualname__}: {len(self.configs)} configs>"

    def compile(self, *args, **kwargs):
        """`Kernel.compile` of the tuned kernel: give the config's parameters too (no tuning)."""
        return self.kernel.compile(*args, **kwargs)

    def __getitem__(self, launch) -> "TunedLauncher":
        if not isinstance(launch, tuple) or len(launch) not in (2, 3):
            raise AutotuneError("launch an autotuned kernel with kernel[grid, block] or "
                                "kernel[grid, block, shared_bytes] (values or functions of the Config)")
        return TunedLauncher(self, *launch)

    def _say(self, text: str) -> None:
        show = knobs.autotune_progress() if self.progress is None else self.progress
        if show:
            print(f"tylo.autotune {self.kernel.fn.__name__}: {text}", file=sys.stderr, flush=True)


class TunedLauncher:
    """``tuned[grid, block]``: call it with the kernel's arguments but those the configs set;
    `tune` only picks the config."""

    def __init__(self, tuned: Autotuned, grid, block, shared_bytes=0):
        self.tuned = tuned
        self.launch = (grid, block, shared_bytes)

    def __call__(self, *args, **kwargs) -> None:
        try:
            config, full = self._tune(args, kwargs)
            self._launcher(config)(*full)
        except TyloError as e:  # the user's mistake: no Tylo-internal frames in the traceback
            raise e.with_traceback(None) from None

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
        kernel = tuned.kernel
        try:
            given = kernel.signature.bind_partial(*args, **kwargs).arguments
        except TypeError as e:
            raise AutotuneError(f"{kernel.fn.__name__}: {e}") from None
        clash = [n for c in tuned.configs for n in c.params if n in given]
        if clash:
            raise AutotuneError(f"{kernel.fn.__name__}: {sorted(set(clash))} are set by the "
                                "configs; do not pass them")
        arrays = {n: a for n, v in given.items() if (a := _array(n, v)) is not None}
        device = arguments.common_device(arrays.items())
        arch = driver.target_arch(device)
        key = (self._key_values(given, arrays), arch)
        config = tuned.best.get(key)
        if config is None:
            config = self._from_disk(key) or self._measure(given, arrays, device, arch, key)
            tuned.best[key] = config
        return config, self._arguments(config, given)

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
        if deps.disk_token is None or None in tokens or knobs.cache_dir() is None:
            return None
        return disk_cache.digest(["autotune", VERSION, kernel.fn.__module__,
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
