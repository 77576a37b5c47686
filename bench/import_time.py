"""How long ``import tylo`` takes in a fresh process, beside ``import triton``, in one run.

    python bench/import_time.py [--runs 15]

Each figure is the median over `--runs` fresh interpreters of the wall time of the import
statement alone (measured inside the process, so interpreter start-up is not counted). Also:
``import tylo`` plus decorating a kernel (what importing a module of kernels costs), and the
first compile of a small kernel in a fresh process with the disk cache off (where xDSL and the
passes load). Issue 8's goal: ``import tylo`` under 0.15 s. triton is timed when installed.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys

CASES = {
    "import tylo": "import tylo",
    "import tylo + @tylo.kernel": (
        "import tylo\n"
        "@tylo.kernel\n"
        "def copy(out, x):\n"
        "    out[tylo.thread_idx()] = x[tylo.thread_idx()]\n"),
    "import triton": "import triton",
}
FIRST_COMPILE = (
    "import tylo\n"
    "@tylo.kernel\n"
    "def copy(out, x):\n"
    "    out[tylo.thread_idx()] = x[tylo.thread_idx()]\n"
    "copy.compile(tylo.Tensor(tylo.Float32, 1), tylo.Tensor(tylo.Float32, 1))\n")


def seconds(code: str, path: str) -> float:
    """Wall time of running `code` (from file `path`, so kernels have a source) in a fresh
    interpreter, measured inside it."""
    with open(path, "w") as f:
        f.write("import time\n_t0 = time.perf_counter()\n" + code
                + "\nprint(time.perf_counter() - _t0)\n")
    env = dict(os.environ, TYLO_NO_CACHE="1")
    out = subprocess.run([sys.executable, path], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise SystemExit(f"{code!r} failed:\n{out.stderr}")
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"tylo_import_{os.getpid()}.py")
    cases = dict(CASES)
    if importlib.util.find_spec("triton") is None:
        del cases["import triton"]
    cases["import tylo + first compile"] = FIRST_COMPILE
    try:
        t = {name: statistics.median(seconds(code, path) for _ in range(args.runs))
             for name, code in cases.items()}
    finally:
        if os.path.exists(path):
            os.remove(path)
    print(f"seconds, median of {args.runs} fresh processes:")
    for name, s in t.items():
        print(f"  {name:32s} {s:7.3f}")
    if "import triton" in t:
        print(f"ratio import tylo / import triton: {t['import tylo'] / t['import triton']:.2f}")
    print(f"import tylo under 0.15 s: {'yes' if t['import tylo'] < 0.15 else 'no'}")


if __name__ == "__main__":
    main()
