"""The disk cache: a kernel compiled in one process loads in the next without tracing; eight
processes compiling the same kernel at once leave one valid entry; a truncated or corrupted
entry is removed and rebuilt; a changed helper source is another key."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tylo
from tylo import Float32, knobs
from tylo.frontend.jit import disk_cache

KERNELS = '''
import tylo
import disk_helpers


@tylo.kernel
def cached(out, x, alpha):
    i = tylo.block_idx() * tylo.block_dim() + tylo.thread_idx()
    if i < x.shape[0]:
        out[i] = disk_helpers.combine(x[i], alpha)
'''

HELPERS = '''
import tylo


@tylo.func
def combine(a, b):
    return a * b
'''

# Counts the traces of this process (tylo.frontend.jit.build.trace is what build_kernel calls,
# and what remaking a disk-loaded kernel's IR stages calls), compiles, and prints a summary.
RUN = '''
import hashlib, json, sys
import tylo
from tylo.frontend.jit import build as compiled_module

traces = []
real_trace = compiled_module.trace


def counting(*args, **kwargs):
    traces.append(1)
    return real_trace(*args, **kwargs)


compiled_module.trace = counting
import disk_kernels

desc = tylo.Tensor(tylo.Float32, 1)
c = disk_kernels.cached.compile(desc, desc, 2.0, block=128)
summary = {"traces": len(traces), "origin": c.origin, "disk": c.disk,
           "cubin": hashlib.sha256(c.cubin).hexdigest(), "ptx": c.ptx,
           "report": str(c.report), "params": [p.field for p in c.device_params]}
if "--ir" in sys.argv:
    summary["tylo_ir"] = c.asm["tylo"]
    summary["traces_after_ir"] = len(traces)
print(json.dumps(summary))
'''


@pytest.fixture
def project(tmp_path):
    """A folder with the kernel and helper modules and the runner, and the cache folder."""
    (tmp_path / "disk_kernels.py").write_text(KERNELS)
    (tmp_path / "disk_helpers.py").write_text(HELPERS)
    (tmp_path / "run.py").write_text(RUN)
    return tmp_path


def _env(project: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "TYLO_NO_CACHE"}
    env["TYLO_CACHE_DIR"] = str(project / "cache")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(project), os.environ.get("PYTHONPATH")) if p)
    return env


def _start(project: Path, *flags: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(project / "run.py"), *flags], cwd=project,
                            env=_env(project), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _finish(proc: subprocess.Popen) -> dict:
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def _run(project: Path, *flags: str) -> dict:
    return _finish(_start(project, *flags))


def _entries(project: Path) -> list[Path]:
    return sorted((project / "cache" / "kernels").glob("*.tylo"))


def test_a_second_process_loads_from_disk_without_tracing(project):
    first = _run(project)
    assert (first["traces"], first["origin"], first["disk"]) == (1, "compiled", "stored")
    (entry,) = _entries(project)
    second = _run(project, "--ir")
    assert (second["traces"], second["origin"], second["disk"]) == (0, "disk cache", "loaded")
    for field in ("cubin", "ptx", "report", "params"):
        assert second[field] == first[field]
    # the IR stages of a loaded kernel are made on first access, by tracing once
    assert second["traces_after_ir"] == 1 and "scf.if" in second["tylo_ir"]
    assert _entries(project) == [entry]


def test_eight_processes_compiling_at_once_leave_one_valid_entry(project):
    procs = [_start(project) for _ in range(8)]
    results = [_finish(p) for p in procs]
    assert len({r["cubin"] for r in results}) == 1
    (entry,) = _entries(project)
    meta, blobs = disk_cache.decode(entry.read_bytes())
    assert hashlib.sha256(blobs["cubin"]).hexdigest() == results[0]["cubin"]
    assert not [p for p in (project / "cache").rglob("*.tmp")]  # no temporary file left
    assert _run(project)["traces"] == 0


def test_a_damaged_entry_is_removed_and_rebuilt(project):
    first = _run(project)
    (entry,) = _entries(project)
    data = entry.read_bytes()
    blobs = disk_cache.decode(data)[1]
    truncated = data[: len(data) // 2]
    flipped = data[:-10] + bytes([data[-10] ^ 0xFF]) + data[-9:]
    for damaged in (truncated, flipped):
        entry.write_bytes(damaged)
        assert disk_cache.decode(entry.read_bytes()) is None
        again = _run(project)
        assert (again["traces"], again["disk"]) == (1, "stored")  # rebuilt, not loaded
        assert again["cubin"] == first["cubin"]
        assert disk_cache.decode(entry.read_bytes())[1] == blobs  # a valid entry again
    assert _run(project)["traces"] == 0


def test_a_changed_helper_source_is_another_entry(project):
    first = _run(project)
    (project / "disk_helpers.py").write_text(HELPERS.replace("a * b", "a * b + a"))
    changed = _run(project)
    assert (changed["traces"], changed["disk"]) == (1, "stored")
    assert changed["ptx"] != first["ptx"] and len(_entries(project)) == 2
    (project / "disk_helpers.py").write_text(HELPERS)
    assert _run(project)["traces"] == 0  # the first entry is still there


def test_a_helper_moved_down_its_file_is_another_entry(project):
    """The PTX's line info names the helper's lines: moving it (same source) recompiles."""
    first = _run(project)
    (project / "disk_helpers.py").write_text(HELPERS.replace("import tylo\n", "import tylo\n\n\n"))
    moved = _run(project)
    assert (moved["traces"], moved["disk"]) == (1, "stored") and len(_entries(project)) == 2
    assert moved["ptx"] != first["ptx"]  # the .loc lines of the helper's multiply moved by 2
    assert moved["ptx"].replace(".loc\t2 9 ", ".loc\t2 7 ") == first["ptx"]
    (project / "disk_helpers.py").write_text(HELPERS)
    assert _run(project)["traces"] == 0  # the first entry is still there
    assert first["traces"] == 1


def test_the_cache_is_off_when_asked(tmp_path):
    @tylo.kernel
    def plain(out, x):
        out[tylo.thread_idx()] = x[tylo.thread_idx()]

    desc = tylo.Tensor(Float32, 1)
    knobs.cache.off, knobs.cache.dir = False, None
    assert plain.compile(desc, desc).disk == "off"
    plain.cache.clear()
    knobs.cache.off, knobs.cache.dir = True, tmp_path
    assert plain.compile(desc, desc).disk == "off"
    assert not (tmp_path / "kernels").exists()
    plain.cache.clear()
    knobs.cache.off = False
    assert plain.compile(desc, desc).disk == "stored"
    assert len(list((tmp_path / "kernels").glob("*.tylo"))) == 1


OPAQUE = object()


def test_a_value_without_a_stable_token_stays_in_memory(tmp_path):
    @tylo.kernel
    def opaque(out, x):
        marker = OPAQUE  # noqa: F841 - read, so part of the key
        out[tylo.thread_idx()] = x[tylo.thread_idx()]

    knobs.cache.off, knobs.cache.dir = False, tmp_path
    desc = tylo.Tensor(Float32, 1)
    compiled = opaque.compile(desc, desc)
    assert compiled.disk == f"not on disk: {__name__}:OPAQUE has no stable value token"
    assert not (tmp_path / "kernels").exists()


def test_entry_format_round_trips_and_rejects_damage():
    data = disk_cache.encode({"key": "k", "n": 1}, {"a": b"xyz", "b": b""})
    assert disk_cache.decode(data) == ({"key": "k", "n": 1}, {"a": b"xyz", "b": b""})
    for bad in (data[:-1], data + b"!", b"", data[:10], data.replace(b"xyz", b"xyZ")):
        assert disk_cache.decode(bad) is None
    assert data.startswith(disk_cache.MAGIC)


def test_tylo_s_own_code_is_part_of_the_key(tmp_path, monkeypatch):
    """An edited Tylo (another digest of its sources) never loads what an older one stored."""
    @tylo.kernel
    def copy(out, x):
        out[tylo.thread_idx()] = x[tylo.thread_idx()]

    digest = disk_cache.tylo_digest()
    assert digest.startswith(tylo.__version__ + "+") and digest == disk_cache.tylo_digest()
    knobs.cache.off, knobs.cache.dir = False, tmp_path
    desc = tylo.Tensor(Float32, 1)
    assert copy.compile(desc, desc).disk == "stored"
    copy.cache.clear()
    monkeypatch.setattr(disk_cache, "tylo_digest", lambda: digest + "-edited")
    assert copy.compile(desc, desc).disk == "stored"  # a new entry, not the old one loaded
    assert len(list((tmp_path / "kernels").glob("*.tylo"))) == 2


LOAD_ONLY = '''
import sys
import tylo
import disk_kernels

desc = tylo.Tensor(tylo.Float32, 1)
c = disk_kernels.cached.compile(desc, desc, 2.0, block=128)
print(c.origin, "xdsl" in sys.modules)
'''


def test_a_disk_cache_hit_does_not_import_the_ir_machinery(project):
    """A first launch from a warm disk cache costs the load, not xDSL's import (0.4 s)."""
    _run(project)  # fills the cache
    (project / "load.py").write_text(LOAD_ONLY)
    done = subprocess.run([sys.executable, str(project / "load.py")], cwd=project,
                          env=_env(project), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["disk", "cache", "False"]


LIBRARY = '''
import json
from tylo.ops.kernels import (ampere_gemm, attention_backward_host, attention_host, gate_up, gemm,
                               gemm_fp8, gemm_fp8_blockwise, projection)

compiles = {
    "gemm": lambda: gemm.compile_for_sm90a(1),
    "gemm_cluster": lambda: gemm.compile_for_sm90a(2),
    "gemm_fp8": gemm_fp8.compile_for_sm90a,
    "gemm_fp8_rowwise": lambda: gemm_fp8.compile_for_sm90a(True),
    "gemm_fp8_blockwise": gemm_fp8_blockwise.compile_for_sm90a,
    "attention": lambda: attention_host.compile_for_sm90a(128, True),
    "attention_backward": lambda: attention_backward_host.compile_for_sm90a(128, True),
    "projection": projection.compile_for_sm90a,
    "gate_up": gate_up.compile_for_sm90a,
    "ampere_gemm": lambda: ampere_gemm.compile_config(ampere_gemm.CONFIG, "sm_80"),
}
print(json.dumps({name: make().disk for name, make in compiles.items()}))
'''


def test_every_library_kernel_loads_from_disk_in_a_second_process(tmp_path):
    """The kernels of tylo.ops.kernels (their globals: composed layouts, plans, tiles,
    configs) all have stable tokens: a second process loads each from the disk cache (the
    flagship GEMM used to be skipped: 'gemm:C_HALF has no stable value token')."""
    env = {k: v for k, v in os.environ.items() if k != "TYLO_NO_CACHE"}
    env["TYLO_CACHE_DIR"] = str(tmp_path)

    def run():
        out = subprocess.run([sys.executable, "-c", LIBRARY], env=env, capture_output=True,
                             text=True, timeout=600)
        assert out.returncode == 0, out.stderr[-2000:]
        return json.loads(out.stdout.strip().splitlines()[-1])

    first = run()
    assert set(first.values()) == {"stored"}, first
    second = run()
    assert set(second.values()) == {"loaded"}, second
