"""Every static value Tylo defines has a stable, process-independent token, so that a kernel
whose globals or constexpr arguments hold one is cached on disk (`frontend.jit.dependencies`):
one sample of each public static type, its token equal in a second process; every public class
is either such a type or listed here as a class of another kind (errors, runtime proxies), so that a new one is decided."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

import tylo
from tylo import BFloat16, Float32
from tylo.frontend.jit.dependencies import stable_token

SAMPLES = """
import tylo
from tylo import BFloat16, Float32, Layout
atom = tylo.MMAAtom((16, 8, 16), BFloat16, Float32)
C = atom.operand_layout("C")
sw = tylo.element_swizzle(128, 2)
SAMPLES = {
    "Layout": Layout((64, (64, 2)), (64, (1, 4096))),
    "Swizzle": sw,
    "ComposedLayout": tylo.ComposedLayout(sw, Layout((64, (64, 2)), (64, (1, 4096)))),
    "DType": BFloat16,
    "MMAAtom": atom,
    "TiledMMA": tylo.TiledMMA(atom, warps=(2, 2), repeat=(1, 2), k=16),
    "Ownership": C,
    "CopyAtom": tylo.CopyAtom("load"),
    "CopyPlan": tylo.CopyPlan((8, 8), 16, 1, Float32),
    "MatrixCopyPlan": tylo.matrix_copy_plan(atom.operand_layout("A"), BFloat16, 1),
    "VectorPlan": tylo.vector_plan(atom.operand_layout("A"), BFloat16, 1, 16),
    "ReductionPlan": tylo.reduction_plan(C, 1),
    "WindowPlan": tylo.window_plan(C, (0, 0), (16, 8)),
    "SwizzledStructure": tylo.swizzled_structure(tylo.ComposedLayout(sw, Layout((8, 64), (64, 1))),
                                                 BFloat16, 1),
    "TMATile": tylo.TMATile(BFloat16, (64, 64), 1),
    "WGMMA64": tylo.WGMMA64(BFloat16, 128, 64),
    "Tcgen05MMA": tylo.Tcgen05MMA((128, 64, 16), BFloat16),
    "TmemTransfer": tylo.TmemTransfer((32, 32), 1),
    "Tensor": tylo.Tensor(Float32, 2),
    "Config": tylo.Config(BLOCK=128, num_warps=4),
}
"""

#: Public classes that are not static values a kernel closes over: errors and warnings, runtime
#: proxies and handles (made while a kernel is traced or launched), markers.
NOT_STATIC = {
    "ArgumentError", "AutotuneError", "CompileError", "DeviceError", "EmulationError",
    "GeometryError", "LaunchError", "LayoutError", "NoRasterizerError", "PerformanceWarning",
    "PictureError", "PlanError", "PtxasError", "TyloError", "TypeMismatchError",
    "UnsupportedError",
    "CompiledKernel", "MBarrier", "MBarriers", "PackedFragment", "Pipeline", "PipelineState",
    "Scalar", "SoftmaxState", "Tcgen05Operand", "TmemTile", "Window", "constexpr",
}


def _samples() -> dict:
    space: dict = {}
    exec(SAMPLES, space)
    return space["SAMPLES"]


def test_every_public_class_is_decided():
    classes = {n for n in tylo.__all__ if inspect.isclass(getattr(tylo, n, None))}
    assert classes - NOT_STATIC == set(_samples()), (
        "a public class is neither sampled in SAMPLES nor listed in NOT_STATIC")


@pytest.mark.parametrize("name", sorted(_samples()))
def test_each_static_type_has_a_token(name):
    value = _samples()[name]
    assert type(value).__name__ == name or name in ("Ownership", "DType")
    assert stable_token(value) is not None, f"{name} {value!r} has no stable token"


def test_tokens_are_the_same_in_another_process():
    here = {name: stable_token(value) for name, value in _samples().items()}
    code = (SAMPLES + "\nfrom tylo.frontend.jit.dependencies import stable_token\n"
            "print(repr({n: stable_token(v) for n, v in SAMPLES.items()}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert eval(out) == here  # noqa: S307 - our own repr of a dict of strings


def test_distinct_values_have_distinct_tokens():
    sw = tylo.element_swizzle(128, 2)
    a = tylo.ComposedLayout(sw, tylo.Layout((8, 64), (64, 1)))
    b = tylo.ComposedLayout(tylo.element_swizzle(64, 2), tylo.Layout((8, 64), (64, 1)))
    c = tylo.ComposedLayout(sw, tylo.Layout((8, 64), (1, 8)))
    assert len({stable_token(x) for x in (a, b, c)}) == 3
    assert stable_token(BFloat16) != stable_token(Float32)
