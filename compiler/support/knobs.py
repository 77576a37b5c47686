"""Every setting Tylo reads from the environment, as typed knobs grouped by area (`tylo.knobs`).

A knob is an attribute of its group, e.g. ``tylo.knobs.compile.dump_ir``. Reading it gives the
value set in code if there is one, else the value of its environment variable, read and parsed
at that moment (not at import), else its default. Setting it in code wins over the environment
for this process (a child process still reads the environment); ``del`` hands it back to the
environment. A scope sets knobs for a ``with`` block (or a decorated function) and restores them
after::

    tylo.knobs.compile.dump_ir = "dump"             # a folder: one file per stage
    with tylo.knobs.scope(emulate=True, dir=tmp):   # any group's knobs, by their unique names
        ...
    with tylo.knobs.cache.scope(off=False, dir=tmp):  # one group's
        ...

Values are checked both ways: an environment value that does not parse raises `KnobError` when
the knob is read; a value of the wrong type set in code raises `TypeError` when set (and a
string that names no target, for ``compile.arch``, `KnobError`). Flags
read ``1``, ``true``, ``yes``, ``on`` as on and the empty string, ``0``, ``false``, ``no``,
``off`` as off (any case); paths expand ``~``; lists are space separated.

==========================  ==================================================================
Knob / variable             Meaning
==========================  ==================================================================
``compile.dump_ir``         ``1``: print the IR after every pass of every compile, then its
TYLO_DUMP_IR                PTX, to stderr (``"stderr"``). A directory path: write one file per
                            stage there instead (the PTX as ``.ptx``). In code: True, False,
                            None, ``"stderr"`` or a path.
``compile.verify_passes``   ``1``: verify the IR after the frontend and after every pass of a
TYLO_VERIFY_PASSES          compile (default: not verified, a tenth of a large kernel's compile
                            time; the test suite sets it).
``compile.arch``            Target architecture when no GPU is visible (default ``sm_90a``).
TYLO_ARCH
``compile.opt_traceback``   ``1``: ``tylo-opt`` shows Python tracebacks instead of one-line
TYLO_OPT_TRACEBACK          errors.
``toolchain.ptxas``         Path of the ptxas executable (else the nvidia-cuda-nvcc wheel, else
TYLO_PTXAS                  PATH).
``toolchain.ptxas_options`` Extra options for ptxas, space separated (e.g. ``-O0``); part of
TYLO_PTXAS_OPTIONS          the cache key. In code: a list of strings (or one string, split).
``toolchain.nvdisasm``      Path of nvdisasm (else the nvidia-cuda-nvdisasm wheel, else PATH).
TYLO_NVDISASM
``toolchain.keep_dir``      Directory for the .ptx/.cubin files given to ptxas (default:
TYLO_KEEP_DIR               ``files/`` in the cache folder, or ``<temp dir>/tylo-<uid>`` with
                            the cache off).
``cache.dir``               Folder of the disk cache (compiled kernels, autotuning results).
TYLO_CACHE_DIR              Default: the user cache folder, ``$XDG_CACHE_HOME/tylo`` or
                            ``~/.cache/tylo`` (``~/Library/Caches/tylo`` on macOS,
                            ``%LOCALAPPDATA%/tylo`` on Windows). Set but empty (None in code):
                            no disk cache. ``cache.folder`` is the folder in use, or None.
``cache.off``               ``1``: no disk cache (the in-memory cache of a process stays).
TYLO_NO_CACHE
``runtime.emulate``         ``1``: every launch ``kernel[grid, block](...)`` runs on the CPU
TYLO_EMULATE                emulator (`tylo.emulator`) instead of the GPU, on host arrays.
``runtime.native_launch``   ``1``: launches call the driver through Tylo's compiled launcher
TYLO_NATIVE_LAUNCH          (built by the system C compiler on first use) instead of cuda-python
                            (default off until a GPU run has measured and checked it;
                            `tylo.runtime.native.status()` says whether it is in use, and why
                            not).
``autotune.progress``       ``0``: autotuning prints no progress lines (default: a line per
TYLO_AUTOTUNE_PROGRESS      config on stderr).
``testing.wgmma_dump``      A path prefix: tests/gpu/test_wgmma_numerics_gpu.py writes the GPU's
TYLO_WGMMA_DUMP             wgmma inputs and outputs to <prefix>.<type>.npz for an offline fit
                            of the emulator.
``testing.semantics_diffs`` A file path: tests/emulator/test_semantics_vs_gpu.py writes there
TYLO_SEMANTICS_DIFFS        every row (inputs, emulated, GPU) where the emulator and the GPU
                            differ.
``testing.ptx_record``      A folder: the test suite (tests/conftest.py) writes every PTX text
TYLO_PTX_RECORD             it compiles there, named by its hash (compare two with
                            tests/ptx_record.py).
XDG_CACHE_HOME              Read for the default of ``cache.dir`` (XDG base directories).
LOCALAPPDATA                Read for the default of ``cache.dir`` on Windows.
==========================  ==================================================================
"""

from __future__ import annotations

import abc
import contextlib
import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Generic, TypeVar

from .errors import TyloError

__all__ = ["KnobError", "Knobs", "autotune", "cache", "compile", "reset", "runtime", "scope",
           "testing", "toolchain"]

T = TypeVar("T")

_ON = ("1", "true", "yes", "on")
_OFF = ("", "0", "false", "no", "off")


class KnobError(TyloError, ValueError):
    """A knob's value does not parse: the text of its environment variable (raised when the knob
    is read), or a string set in code that names no value of the knob (raised when set)."""


class Knob(abc.ABC, Generic[T]):
    """A typed setting read from environment variable `env` unless set in code.

    Subclasses say how the variable's text parses (`parse`) and which values code may set
    (`check`, which returns the value stored or raises TypeError). The value set in code lives
    in the group instance, so that a scope can save and restore a group's settings at once."""

    def __init__(self, env: str, default: T | Callable[[], T], doc: str = ""):
        self.env = env
        self.default = default
        self.__doc__ = doc
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, group: Knobs | None, owner: type | None = None) -> Any:
        if group is None:
            return self
        if self.name in group._set:
            return group._set[self.name]
        text = os.environ.get(self.env)
        if text is None:
            return self.default() if callable(self.default) else self.default
        return self.parse(text)

    def __set__(self, group: Knobs, value: Any) -> None:
        group._set[self.name] = self.check(value)

    def __delete__(self, group: Knobs) -> None:
        group._set.pop(self.name, None)

    @abc.abstractmethod
    def parse(self, text: str) -> T:
        """The value of the environment variable's text `text`, or `KnobError`."""

    @abc.abstractmethod
    def check(self, value: Any) -> T:
        """The value stored for `value` set in code, or `TypeError`."""

    def _bad(self, text: str, expected: str) -> KnobError:
        return KnobError(f"{self.env}={text!r}: expected {expected}")

    def _wrong_type(self, value: Any, expected: str) -> TypeError:
        return TypeError(f"knob {self.name} ({self.env}) takes {expected}, not {value!r}")


class Flag(Knob[bool]):
    """On or off."""

    def parse(self, text: str) -> bool:
        word = text.strip().lower()
        if word in _ON or word in _OFF:
            return word in _ON
        raise self._bad(text, f"a flag: one of {', '.join(_ON)} (on) or {', '.join(_OFF[1:])} (off)")

    def check(self, value: Any) -> bool:
        if not isinstance(value, bool):
            raise self._wrong_type(value, "True or False")
        return value


class OptionalPath(Knob["Path | None"]):
    """A path, or None when unset or set to the empty string."""

    def parse(self, text: str) -> Path | None:
        return Path(text.strip()).expanduser() if text.strip() else None

    def check(self, value: Any) -> Path | None:
        if value is None:
            return None
        if not isinstance(value, (str, os.PathLike)):
            raise self._wrong_type(value, "a path (str or os.PathLike) or None")
        return self.parse(os.fspath(value))


class Words(Knob["list[str]"]):
    """A list of strings, space separated in the environment. Read as a fresh list."""

    def __get__(self, group: Knobs | None, owner: type | None = None) -> Any:
        value = super().__get__(group, owner)
        return list(value) if group is not None else value

    def parse(self, text: str) -> list[str]:
        return text.split()

    def check(self, value: Any) -> list[str]:
        if isinstance(value, str):
            return value.split()
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            return list(value)
        raise self._wrong_type(value, "a list of strings (or one string, split at spaces)")


class Arch(Knob[str]):
    """A target architecture such as ``sm_90a``; the empty string means the default."""

    def parse(self, text: str) -> str:
        text = text.strip()
        if not text:
            return self.default  # type: ignore[return-value]
        if not re.fullmatch(r"sm_\d+[a-z]?", text):
            raise self._bad(text, "a target such as sm_80, sm_90a or sm_100a")
        return text

    def check(self, value: Any) -> str:
        if not isinstance(value, str):
            raise self._wrong_type(value, "a target such as 'sm_90a'")
        if not re.fullmatch(r"sm_\d+[a-z]?", value):
            raise self._bad(value, "a target such as sm_80, sm_90a or sm_100a")
        return value


class DumpTarget(Knob["str | None"]):
    """None (off), ``"stderr"``, or a directory path (a string)."""

    def parse(self, text: str) -> str | None:
        word = text.strip()
        if word.lower() in _OFF:
            return None
        if word.lower() in _ON or word == "stderr":
            return "stderr"
        return str(Path(word).expanduser())

    def check(self, value: Any) -> str | None:
        if value is None or value is False:
            return None
        if value is True:
            return "stderr"
        if not isinstance(value, (str, os.PathLike)):
            raise self._wrong_type(value, 'True, False, None, "stderr" or a directory path')
        return self.parse(os.fspath(value)) if os.fspath(value) else None


class Knobs:
    """A group of knobs (the `Knob` attributes of a subclass) and the values set in code."""

    def __init__(self) -> None:
        self._set: dict[str, Any] = {}

    @classmethod
    def knobs(cls) -> dict[str, Knob]:
        """The group's knobs by name."""
        return {name: value for klass in reversed(cls.__mro__)
                for name, value in vars(klass).items() if isinstance(value, Knob)}

    def values(self) -> dict[str, Any]:
        """Every knob's current value, by name."""
        return {name: getattr(self, name) for name in self.knobs()}

    def reset(self) -> None:
        """Forget every value set in code: the environment decides again."""
        self._set.clear()

    @contextlib.contextmanager
    def scope(self, **values: Any) -> Iterator[Knobs]:
        """Set `values` (knob name = value) for the block; on leaving it, every knob of the
        group is as before, including those set inside the block."""
        saved = dict(self._set)
        try:
            for name, value in values.items():
                self._knob(name).__set__(self, value)
            yield self
        finally:
            self._set = saved

    def _knob(self, name: str) -> Knob:
        knob = self.knobs().get(name)
        if knob is None:
            raise AttributeError(f"{type(self).__name__} has no knob {name!r}; its knobs: "
                                 f"{', '.join(self.knobs())}")
        return knob

    def __setattr__(self, name: str, value: Any) -> None:
        if not name.startswith("_"):
            self._knob(name)  # a misspelt knob is an error, not a new attribute
        super().__setattr__(name, value)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.values()})"


class CompileKnobs(Knobs):
    dump_ir = DumpTarget("TYLO_DUMP_IR", None, "Print (\"stderr\") or write (a folder) the IR "
                         "after every pass")
    verify_passes = Flag("TYLO_VERIFY_PASSES", False, "Verify the IR after every pass")
    arch = Arch("TYLO_ARCH", "sm_90a", "The target when no GPU is visible")
    opt_traceback = Flag("TYLO_OPT_TRACEBACK", False, "tylo-opt shows Python tracebacks")


class ToolchainKnobs(Knobs):
    ptxas = OptionalPath("TYLO_PTXAS", None, "The ptxas executable (else the wheel's, else PATH)")
    ptxas_options = Words("TYLO_PTXAS_OPTIONS", [], "Extra ptxas options")
    nvdisasm = OptionalPath("TYLO_NVDISASM", None, "The nvdisasm executable")
    keep_dir = OptionalPath("TYLO_KEEP_DIR", None, "The folder of the files given to ptxas")


def _user_cache_root() -> Path:
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA", "").strip()
        return Path(local) if local else Path.home() / "AppData" / "Local"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches"
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"


class CacheKnobs(Knobs):
    dir = OptionalPath("TYLO_CACHE_DIR", lambda: _user_cache_root() / "tylo",
                       "The disk cache's folder; None: no disk cache")
    off = Flag("TYLO_NO_CACHE", False, "No disk cache")

    @property
    def folder(self) -> Path | None:
        """The disk cache's folder, or None when the cache is off (`off`, or `dir` None)."""
        return None if self.off else self.dir


class RuntimeKnobs(Knobs):
    emulate = Flag("TYLO_EMULATE", False, "Launches run on the CPU emulator")
    native_launch = Flag("TYLO_NATIVE_LAUNCH", False, "Launches call the compiled launcher (else "
                         "cuda-python)")


class AutotuneKnobs(Knobs):
    progress = Flag("TYLO_AUTOTUNE_PROGRESS", True, "A progress line per config on stderr")


class TestingKnobs(Knobs):
    wgmma_dump = OptionalPath("TYLO_WGMMA_DUMP", None, "Path prefix of the wgmma GPU dumps")
    semantics_diffs = OptionalPath("TYLO_SEMANTICS_DIFFS", None,
                                   "File of the emulator-against-GPU differences")
    ptx_record = OptionalPath("TYLO_PTX_RECORD", None, "Folder of the test suite's PTX record")


compile = CompileKnobs()  # (shadows the builtin in this module only: tylo.knobs.compile)
toolchain = ToolchainKnobs()
cache = CacheKnobs()
runtime = RuntimeKnobs()
autotune = AutotuneKnobs()
testing = TestingKnobs()

GROUPS: dict[str, Knobs] = {"compile": compile, "toolchain": toolchain, "cache": cache,
                            "runtime": runtime, "autotune": autotune, "testing": testing}


def _group_of(name: str) -> Knobs:
    for group in GROUPS.values():
        if name in group.knobs():
            return group
    raise AttributeError(f"no knob named {name!r}; the knobs: "
                         + ", ".join(f"{g}.{k}" for g, grp in GROUPS.items() for k in grp.knobs()))


@contextlib.contextmanager
def scope(**values: Any) -> Iterator[None]:
    """Set knobs of any group for the block, by name (each knob's name is unique across the
    groups: ``scope(emulate=True, dump_ir="dump")``); on leaving it, every knob of every group
    is as before, including those set inside the block."""
    with contextlib.ExitStack() as stack:
        for group in GROUPS.values():
            stack.enter_context(group.scope())
        for name, value in values.items():
            setattr(_group_of(name), name, value)
        yield


def reset() -> None:
    """Forget every value set in code, in every group."""
    for group in GROUPS.values():
        group.reset()
