"""Kernels with one mistake each, for test_errors.py. Each mistake's line carries `# ERR:<name>`;
the test finds the line by that marker and checks that the error points there."""

import tylo
from tylo import BFloat16, Float32, MMAAtom, TiledMMA

ATOM = MMAAtom((16, 8, 16), BFloat16, Float32)


@tylo.kernel
def truth_of_runtime(out, n):
    i = tylo.thread_idx()
    if bool(i < n):  # ERR:truth
        out[i] = 1.0


@tylo.kernel
def float_into_int(out, n):
    i = tylo.thread_idx()
    out[i] = i + 1.5  # ERR:float_int


@tylo.kernel
def static_changed_in_loop(out, n):
    label = "a"
    for k in range(n):  # ERR:changed  # noqa: B007
        label = "b"  # a compile-time value cannot change per iteration  # noqa: F841
    out[0] = 0.0


PLAN = TiledMMA(ATOM, warps=(2, 4), repeat=(1, 1), k=16)  # 256 threads


@tylo.kernel
def block_too_small(C, A):
    t = tylo.thread_idx()
    a = tylo.load_a(PLAN, tylo.window(A, (0, 0), (32, 16)), t)  # ERR:threads  # noqa: F841


@tylo.kernel
def fp8_on_ampere(C, A, B):
    atom = MMAAtom((16, 8, 32), tylo.Float8E4M3, Float32)
    t = tylo.thread_idx()
    a = tylo.load_a(atom, tylo.window(A, (0, 0), (16, 32)), t)
    b = tylo.load_b(atom, tylo.window(B, (0, 0), (32, 8)), t)
    d = tylo.mma(atom, a, b, tylo.accumulator(atom))  # ERR:min_sm  # noqa: F841
