"""``import tylo`` loads the host-side model only: xDSL, the passes, numpy (`compiler.support.lazy_modules`),
torch and the CUDA driver's bindings load when a kernel is first compiled or launched, or the
host model first computes, not at import (see bench/import_time.py for the figures).
``import tylo.ops`` (Tylo kernels as torch custom ops) imports torch, and still no xDSL."""

import subprocess
import sys

import pytest

HEAVY = ("xdsl", "numpy", "ml_dtypes", "torch", "cupy", "cuda.bindings.driver", "tylo.passes",
         "tylo.dialects")

CHECK = """
import sys
{code}
print(sorted(m for m in {heavy!r} if m in sys.modules))
"""


def _loaded(code: str, tmp_path, heavy: tuple[str, ...] = HEAVY) -> str:
    path = tmp_path / "probe.py"
    path.write_text(CHECK.format(code=code, heavy=heavy))
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_import_tylo_loads_no_ir_machinery(tmp_path):
    assert _loaded("import tylo", tmp_path) == "[]"


def test_decorating_a_kernel_loads_no_ir_machinery(tmp_path):
    code = ("import tylo\n@tylo.kernel\ndef k(out, x):\n"
            "    out[tylo.thread_idx()] = x[tylo.thread_idx()]\n"
            "layout = tylo.Layout((4, 8), (8, 1))\n")
    assert _loaded(code, tmp_path) == "[]"


def test_a_host_tcgen05_operand_loads_no_kernel_language(tmp_path):
    """`tylo.tcgen05_operand` tells host values from a kernel's by their types, importing
    nothing of the frontend for host ones."""
    code = ("import tylo\natom = tylo.Tcgen05MMA((128, 64, 16), tylo.BFloat16)\n"
            "layout = tylo.shared_layout(tylo.TMATile(tylo.BFloat16, (128, 64), 1))\n"
            "tylo.tcgen05_operand(tylo.tcgen05_operand(atom, 'A', layout), (0, 16))\n")
    assert _loaded(code, tmp_path, HEAVY + ("tylo.frontend",)) == "[]"


def test_the_first_compile_loads_it(tmp_path):
    code = ("import tylo\n@tylo.kernel\ndef k(out, x):\n"
            "    out[tylo.thread_idx()] = x[tylo.thread_idx()]\n"
            "k.compile(tylo.Tensor(tylo.Float32, 1), tylo.Tensor(tylo.Float32, 1))\n")
    assert "xdsl" in _loaded(code, tmp_path)


def test_import_tylo_ops_loads_torch_and_no_ir_machinery(tmp_path):
    pytest.importorskip("torch")
    code = "import tylo.ops\nassert callable(tylo.ops.custom_op)\n"
    assert _loaded(code, tmp_path, ("torch", "xdsl", "tylo.passes", "tylo.dialects")) == "['torch']"


def test_the_library_kernels_and_the_harness_load_no_torch(tmp_path):
    """tylo.testing and the kernels of tylo.ops.kernels take torch inside the functions that
    use it: importing them loads neither torch nor Triton."""
    code = ("import tylo.testing, tylo.testing.peers\n"
            "from tylo.ops.kernels import attention, gemm, gemm_fp8, gemm_fp8_blockwise, projection\n")
    assert _loaded(code, tmp_path, ("torch", "triton")) == "[]"
