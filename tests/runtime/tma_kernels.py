"""Kernels of tests/runtime/test_tma_host.py (a kernel's source must be in a file)."""
import tylo

@tylo.kernel
def tensor_map_address(tm, out):
    """Writes the generic address of its tensor-map parameter to out[0]."""
    out[0] = tm.address()
