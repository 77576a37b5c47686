"""The disk-cache form of a kernel built for the CPU emulator (``kind = "emulated"``).

`kernel.emulate[grid, block](...)` runs the ``ptx``-dialect module the pass pipeline makes
(`build.ptx_module`: trace and passes, no ptxas). The module is stored, in ``emulated/``, as a
pickle of (module, entry name, device params) under a key made of the kernel's disk key
(`Kernel._disk_key`, that of its GPU entry) and the xDSL and Python versions (`entry_key`:
another version's entry is never looked up, never unpickled), so that a second process
emulates without tracing or running a pass; the warm-up (`tylo.ops.warmup(...,
emulator=True)`) fills it ahead of time.

A module is a linked structure (each op points at the next), which pickle walks recursively:
both directions run in a thread with a large stack. Like a cubin of the GPU entries, an entry
is code that Tylo runs: the cache folder must be writable by its user only (the default,
under the user's cache folder).
"""

from __future__ import annotations

import pickle
import sys
import threading

FORMAT = "emulated entry 1"
_STACK = 256 * 1024 * 1024   # bytes of stack of the thread that pickles (virtual: reserved, not used)
_DEPTH = 1_000_000           # Python recursion limit in that thread


def _versions() -> dict:
    import xdsl

    return {"format": FORMAT, "xdsl": str(getattr(xdsl, "__version__", "?")),
            "python": list(sys.version_info[:2])}


def entry_key(key: str) -> str:
    """The disk key of the emulated entry of a kernel whose disk key is `key`."""
    from .disk_cache import digest

    versions = _versions()
    return digest([key, versions["format"], versions["xdsl"], *versions["python"]])


def _in_big_stack(fn):
    """`fn()` in a thread with a `_STACK`-byte stack and a high recursion limit; its result or
    its exception."""
    out: dict = {}

    def run():
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, _DEPTH))
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread
            out["error"] = e
        finally:
            sys.setrecursionlimit(limit)

    previous = threading.stack_size(_STACK)
    try:
        thread = threading.Thread(target=run, name="tylo-emulated-entry")
        thread.start()
    finally:
        threading.stack_size(previous)
    thread.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


def disk_entry(built: tuple) -> tuple[dict, dict[str, bytes]] | None:
    """(meta, blobs) of `built`, `build.ptx_module`'s (module, entry name, device params), or
    None when it does not pickle (an attribute holding a function, say: kept in memory only)."""
    try:
        data = _in_big_stack(lambda: pickle.dumps(built, protocol=pickle.HIGHEST_PROTOCOL))
    except Exception:  # noqa: BLE001 - not storable is not an error of the kernel
        return None
    return _versions(), {"module": data}


def load(meta: dict, blobs: dict[str, bytes]) -> tuple | None:
    """The (module, entry name, device params) of an entry, or None when it does not unpickle
    (then it is rebuilt and replaced)."""
    try:
        built = _in_big_stack(lambda: pickle.loads(blobs["module"]))
    except Exception:  # noqa: BLE001 - an entry that does not load is a miss
        return None
    return built if isinstance(built, tuple) and len(built) == 3 else None
