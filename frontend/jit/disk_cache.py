"""The disk cache: compiled kernels and autotuning results that persist across processes.

Entries live under `knobs.cache.folder` (``TYLO_CACHE_DIR``, default the user cache folder, e.g.
``~/.cache/tylo``; ``TYLO_CACHE_DIR=`` or ``TYLO_NO_CACHE=1`` turn the cache off):
``kernels/<key>.tylo`` (a cubin, its PTX and the launch metadata) and ``autotune/<key>.tylo``
(the best config of one tuning). A key is the SHA-256 of everything the entry depends on
(`digest`), Tylo's own code included (`tylo_digest`); the kernel key is made in
`frontend.jit.kernel`.

An entry file is ``MAGIC``, the SHA-256 of the rest, then a JSON header line (the metadata and
the length of each blob) and the blobs. It is written to a temporary file in the same folder
and renamed into place (`tools.write_atomic`), so concurrent processes that store the same key
never read a half-written entry: each reader sees none, or one whole file. An entry whose
checksum, header or key does not match (a truncated or corrupted file) is removed and reported
as a miss, never loaded. Temporary files of a process killed while writing are left behind
as ``.<name>.*.tmp``; they are never read.
"""

from __future__ import annotations

import collections
import functools
import hashlib
import json
import os
from pathlib import Path

from ...compiler.support import knobs
from ...runtime.tools import write_atomic

MAGIC = b"TYLO-CACHE 1\n"
_SHA = 32

#: What this process's disk cache did, by ``"<kind> hit"``, ``"<kind> miss"`` and ``"<kind>
#: stored"`` (kind: ``kernels``, ``emulated``, ``autotune``): a miss is a lookup that found no
#: valid entry (the kernel is then compiled); nothing is counted while the cache is off.
COUNTS: collections.Counter = collections.Counter()


@functools.lru_cache(maxsize=1)
def tylo_digest() -> str:
    """Tylo's release and a SHA-256 of its own code: every ``.py`` file of every Tylo package
    (`compiler.support.version.PACKAGES`, found without importing them), so that an edited Tylo (an
    editable install) never loads what an older one compiled. Computed once per process, when
    the disk cache is first used (a few milliseconds: files are read, not imported)."""
    import importlib.util

    from ...compiler.support.version import PACKAGES, VERSION

    h = hashlib.sha256(VERSION.encode())
    for package in PACKAGES:
        spec = importlib.util.find_spec(package)
        for folder in sorted(spec.submodule_search_locations or ()):
            for path in sorted(Path(folder).glob("*.py")):
                h.update(f"{package}/{path.name}".encode())
                h.update(hashlib.sha256(path.read_bytes()).digest())
    return f"{VERSION}+{h.hexdigest()[:16]}"


def digest(parts) -> str:
    """The SHA-256 (hex) of a sequence of strings, each length-prefixed so that no two
    different sequences collide by concatenation."""
    h = hashlib.sha256()
    for part in parts:
        data = str(part).encode()
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def entry_path(kind: str, key: str) -> Path | None:
    """``<cache dir>/<kind>/<key>.tylo``, or None when the disk cache is off."""
    root = knobs.cache.folder
    return None if root is None else root / kind / f"{key}.tylo"


def encode(meta: dict, blobs: dict[str, bytes]) -> bytes:
    """The bytes of an entry file holding `meta` (JSON-able) and `blobs`."""
    header = json.dumps({"meta": meta, "blobs": [[k, len(v)] for k, v in blobs.items()]},
                        sort_keys=True).encode()
    body = header + b"\n" + b"".join(blobs.values())
    return MAGIC + hashlib.sha256(body).digest() + body


def decode(data: bytes) -> tuple[dict, dict[str, bytes]] | None:
    """(meta, blobs) of an entry file's bytes, or None when they are not a whole, valid entry."""
    start = len(MAGIC) + _SHA
    if len(data) < start or not data.startswith(MAGIC):
        return None
    body = data[start:]
    if hashlib.sha256(body).digest() != data[len(MAGIC):start]:
        return None
    end = body.find(b"\n")
    try:
        header = json.loads(body[:end])
        meta, layout = header["meta"], header["blobs"]
    except (ValueError, KeyError, TypeError):
        return None
    blobs, offset = {}, end + 1
    for name, size in layout:
        blobs[name] = body[offset:offset + size]
        offset += size
    return (meta, blobs) if offset == len(body) else None


def store(kind: str, key: str, meta: dict, blobs: dict[str, bytes]) -> Path | None:
    """Write an entry (atomically); its path, or None when the cache is off or not writable."""
    path = entry_path(kind, key)
    if path is None:
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, encode({**meta, "key": key}, blobs))
    except OSError:  # a read-only or full cache folder: the kernel still works, uncached
        return None
    COUNTS[f"{kind} stored"] += 1
    return path


def load(kind: str, key: str) -> tuple[dict, dict[str, bytes]] | None:
    """(meta, blobs) of the entry for `key`, or None (off, missing, or invalid: then removed)."""
    path = entry_path(kind, key)
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            data = f.read()
            inode = os.fstat(f.fileno()).st_ino
    except OSError:
        COUNTS[f"{kind} miss"] += 1
        return None
    entry = decode(data)
    if entry is not None and entry[0].get("key") == key:
        COUNTS[f"{kind} hit"] += 1
        return entry
    COUNTS[f"{kind} miss"] += 1
    _remove(path, inode)
    return None


def _remove(path: Path, inode: int) -> None:
    """Remove the invalid entry at `path` unless another process has replaced it since."""
    try:
        if os.stat(path).st_ino == inode:
            os.unlink(path)
    except OSError:
        pass
