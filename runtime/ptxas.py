"""Assemble PTX into a cubin with ptxas, and read the resources it reports.

Where ptxas comes from, in order (`find_ptxas`):

1. ``TYLO_PTXAS`` (`tylo.knobs.toolchain.ptxas`), which must name an executable file;
2. the nvidia-cuda-nvcc wheel, found with ``cuda.pathfinder.find_nvidia_binary_utility``;
3. ``ptxas`` on ``PATH``.

`assemble` writes ``<name>-<digest>.ptx`` and ``.cubin`` (the digest covers the target, the
options and the PTX) into `tools.files_dir` (``TYLO_KEEP_DIR``, else ``files/`` in the cache
folder, else ``<temp dir>/tylo-<uid>``) and leaves them there, so that a user can read or re-run
them; compiling the same PTX again reuses the names, so the folder does not grow per process.
It runs ``ptxas -arch=<arch> -v -O3 -lineinfo <TYLO_PTXAS_OPTIONS> file.ptx -o file.cubin`` (the output
goes to a temporary name renamed to ``file.cubin``, so that processes assembling the same PTX
at once never read each other's half-written cubin) and parses the ``-v`` report (printed by
ptxas on stderr; its format is that of ptxas 12.x/13.x, e.g.
``ptxas info    : Used 12 registers, used 1 barriers, 1024 bytes smem``). ``-lineinfo`` keeps the
PTX's ``.loc`` line info (the kernel's Python lines, `tylo.dialects.ptx.target`) in the cubin
for compute-sanitizer and Nsight Compute; it changes no instruction. It is left out when the
options ask for ``-g`` (full debug info) or line info already, and for PTX without ``.loc``
directives (hand-written PTX): ptxas 13.0 aborts ("Fatal glibc error: malloc assertion failure
in sysmalloc") on such PTX with ``-lineinfo`` for some instructions (``add.rn.f32`` in a kernel
of tests/emulator/test_semantics_vs_gpu.py; seen on the H100 machine's ptxas and the wheel's).
A failure raises `PtxasError` with the path of the kept PTX, the command and ptxas's output.
ptxas's "wgmma.mma_async instructions are serialized due to <cause>" notes (C75xx "Potential
Performance Loss", printed as ``ptxas info`` lines; causes seen: insufficient register resources
for the wgmma pipeline, the pipeline crossing a function boundary, non-wgmma instructions
defining accumulator registers, program dependence on compiler-inserted WG.AR in a divergent
path) become a `PerformanceWarning` naming the kernel and the cause (`serialized_wgmma`).
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import subprocess
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

from ..compiler.support import knobs
from ..compiler.support.errors import PerformanceWarning, PtxasError
from .tools import find_tool, kept_path, tool_version, write_atomic


_LINE_INFO = re.compile(r"^\s*\.loc\s", re.M)
"""A ``.loc`` directive (PTX ISA 11.5.4): the PTX has line info for ``-lineinfo`` to keep."""


def find_ptxas() -> str:
    """The path of the ptxas executable; `TyloError` when there is none."""
    return find_tool("ptxas", knobs.toolchain.ptxas, "TYLO_PTXAS", "nvidia-cuda-nvcc")


def ptxas_version(path: str) -> str:
    """The release of the ptxas at `path`, e.g. ``"13.0.88"`` (from ``ptxas --version``)."""
    return tool_version(path)


@dataclass(frozen=True)
class ResourceReport:
    """What ptxas -v reports for one entry function. All sizes are in bytes per thread block,
    except the stack and spill sizes, which are per thread; `registers` is per thread."""

    name: str
    arch: str
    registers: int = 0
    barriers: int = 0
    shared_bytes: int = 0  # static shared memory (dynamic shared memory is chosen at launch)
    stack_frame_bytes: int = 0
    cumulative_stack_bytes: int = 0
    spill_store_bytes: int = 0
    spill_load_bytes: int = 0
    constant_bytes: int = 0  # sum of the cmem[N] banks ptxas prints (recent ptxas prints none)

    def __str__(self) -> str:
        return (
            f"{self.name}: {self.registers} registers, {self.shared_bytes} bytes smem, "
            f"{self.stack_frame_bytes} bytes stack, {self.spill_store_bytes}/"
            f"{self.spill_load_bytes} bytes spill stores/loads"
        )


_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '([^']+)'")
_FRAME = re.compile(
    r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads"
)
_USED = re.compile(r"Used (\d+) registers")
_FIELDS = {
    "barriers": re.compile(r"used (\d+) barriers"),
    "shared_bytes": re.compile(r"(\d+) bytes smem"),
    "cumulative_stack_bytes": re.compile(r"(\d+) bytes cumulative stack size"),
}
_CMEM = re.compile(r"(\d+) bytes cmem\[\d+\]")


def parse_report(log: str, name: str) -> ResourceReport:
    """The `ResourceReport` of entry `name` in a ptxas ``-v`` log; `PtxasError` if it is absent."""
    sections: dict[str, tuple[str, list[str]]] = {}
    current: list[str] | None = None
    for line in log.splitlines():
        entry = _ENTRY.search(line)
        if entry:
            current = []
            sections[entry.group(1)] = (entry.group(2), current)
        elif current is not None:
            current.append(line)
    if name not in sections:
        listed = ", ".join(sections) or "none"
        raise PtxasError(f"ptxas reported no entry function '{name}' (entries: {listed})")
    arch, lines = sections[name]
    values: dict[str, int] = {}
    for line in lines:
        frame = _FRAME.search(line)
        if frame and "stack_frame_bytes" not in values:
            values["stack_frame_bytes"] = int(frame.group(1))
            values["spill_store_bytes"] = int(frame.group(2))
            values["spill_load_bytes"] = int(frame.group(3))
        used = _USED.search(line)
        if used:
            values["registers"] = int(used.group(1))
            for key, pattern in _FIELDS.items():
                found = pattern.search(line)
                if found:
                    values[key] = int(found.group(1))
            values["constant_bytes"] = sum(int(b) for b in _CMEM.findall(line))
    return ResourceReport(name=name, arch=arch, **values)


_SERIALIZED = re.compile(r"wgmma\.mma_async instructions are serialized due to (.+?)"
                         r"(?: in the function '[^']*')?\.?\s*$")


def serialized_wgmma(log: str) -> list[str]:
    """The causes ptxas gives in a log for serializing wgmma.mma_async (one per note, in order,
    each once), e.g. ``["insufficient register resources for the wgmma pipeline"]``."""
    causes: list[str] = []
    for line in log.splitlines():
        found = _SERIALIZED.search(line)
        if found and found.group(1) not in causes:
            causes.append(found.group(1))
    return causes


def warn_serialized(log: str, name: str, arch: str) -> None:
    """A `PerformanceWarning` per cause of `serialized_wgmma` in `log` (kernel `name`)."""
    for cause in serialized_wgmma(log):
        warnings.warn(PerformanceWarning(
            f"{name} ({arch}): ptxas serializes its wgmma.mma_async instructions due to {cause}: "
            "each WGMMA then waits for the previous one (a large loss; keep the accumulators "
            "within the register budget, the wgmma pipeline inside one function and free of "
            "other writes to its accumulator registers)"), stacklevel=2)


@dataclass(frozen=True)
class Assembly:
    """The result of `assemble`: the cubin, ptxas's report and log, and where the files are."""

    cubin: bytes
    report: ResourceReport
    log: str
    command: list[str]
    ptx_path: Path
    cubin_path: Path


def assemble(ptx: str, arch: str, name: str) -> Assembly:
    """Run ptxas on `ptx` for `arch` (e.g. ``"sm_90a"``) and report on entry function `name`.

    Raises `PtxasError` (ptxas failed: the message has the path of the kept .ptx, the
    shell-quoted command and ptxas's output) or `TyloError` (no ptxas).
    """
    ptxas = find_ptxas()
    extra = knobs.toolchain.ptxas_options
    opt = [] if any(re.fullmatch(r"-O\d|--opt-level(=.*)?", o) for o in extra) else ["-O3"]
    if not set(extra) & {"-lineinfo", "--generate-line-info", "-g", "--device-debug"} \
            and _LINE_INFO.search(ptx):
        opt.append("-lineinfo")
    digest = hashlib.sha256("\0".join([arch, *opt, *extra, ptx]).encode()).hexdigest()[:12]
    ptx_path = kept_path(name, digest, ".ptx")
    cubin_path = kept_path(name, digest, ".cubin")
    write_atomic(ptx_path, ptx.encode())
    fd, scratch = tempfile.mkstemp(dir=cubin_path.parent, prefix=f".{cubin_path.name}.",
                                   suffix=".tmp")
    os.close(fd)
    # the command as a user would re-run it: its output is the kept cubin
    command = [ptxas, f"-arch={arch}", "-v", *opt, *extra, str(ptx_path), "-o", str(cubin_path)]
    try:
        try:
            done = subprocess.run(command[:-1] + [scratch], capture_output=True, text=True,
                                  check=False)
        except OSError as exc:
            raise PtxasError(
                f"cannot run ptxas on {ptx_path}: {exc}\n  command: {shlex.join(command)}"
            ) from None
        log = done.stderr + done.stdout
        cubin = Path(scratch).read_bytes() if done.returncode == 0 else b""
        if done.returncode != 0 or not cubin:
            raise PtxasError(
                f"ptxas failed (exit status {done.returncode}) on {ptx_path}\n"
                f"  command: {shlex.join(command)}\n"
                + "\n".join("  " + line for line in log.rstrip().splitlines())
            )
        os.replace(scratch, cubin_path)
        warn_serialized(log, name, arch)
    finally:
        if os.path.exists(scratch):
            os.unlink(scratch)
    return Assembly(
        cubin=cubin,
        report=parse_report(log, name),
        log=log,
        command=command,
        ptx_path=ptx_path,
        cubin_path=cubin_path,
    )
