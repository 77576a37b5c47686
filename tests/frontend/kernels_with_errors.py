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
def break_in_runtime_loop(out, n):
    total = 0
    for k in range(n):
        if k > 3:
            break  # ERR:break
        total = total + k
    out[0] = total


@tylo.kernel
def no_such_atom(out):
    atom = MMAAtom((16, 8, 4), BFloat16, Float32)  # ERR:atom
    out[0] = 0.0


@tylo.kernel
def fragment_tile_mismatch(C, A):
    t = tylo.thread_idx()
    a = tylo.load_a(ATOM, tylo.window(A, (0, 0), (16, 8)), t)  # ERR:shape


@tylo.kernel
def static_window_outside(A: tylo.Tensor(BFloat16, shape=(8, 8))):
    w = tylo.window(A, (4, 0), (8, 8))  # ERR:window


@tylo.kernel
def python_name_error(out):
    out[0] = undefined_name  # ERR:name  # noqa: F821


@tylo.kernel
def static_changed_in_loop(out, n):
    label = "a"
    for k in range(n):
        label = "b"  # a compile-time value cannot change per iteration
    out[0] = 0.0


@tylo.kernel
def one_branch_only(out, n):
    i = tylo.thread_idx()
    if i < n:
        y = 2.0
    out[i] = y  # ERR:unbound


@tylo.kernel
def wrong_operand(C, A, B):
    t = tylo.thread_idx()
    a = tylo.load_b(ATOM, tylo.window(B, (0, 0), (16, 8)), t)
    b = tylo.load_b(ATOM, tylo.window(B, (0, 0), (16, 8)), t)
    acc = tylo.mma(ATOM, a, b, tylo.accumulator(ATOM))  # ERR:operand


@tylo.kernel
def negative_step(out, n):
    for k in range(n, 0, -1):  # ERR:step
        out[k] = 0.0


@tylo.kernel
def return_in_runtime_branch(out, n):
    i = tylo.thread_idx()
    if i >= n:
        return  # ERR:return
    out[i] = 1.0


@tylo.kernel
def bad_tiled_mma(out):
    plan = TiledMMA(ATOM, warps=(2, 2), repeat=(1, 1), k=24)  # ERR:tiled


PLAN = TiledMMA(ATOM, warps=(2, 4), repeat=(1, 1), k=16)  # 256 threads


@tylo.kernel
def block_too_small(C, A):
    t = tylo.thread_idx()
    a = tylo.load_a(PLAN, tylo.window(A, (0, 0), (32, 16)), t)  # ERR:threads


@tylo.kernel
def fp8_on_ampere(C, A, B):
    atom = MMAAtom((16, 8, 32), tylo.Float8E4M3, Float32)
    t = tylo.thread_idx()
    a = tylo.load_a(atom, tylo.window(A, (0, 0), (16, 32)), t)
    b = tylo.load_b(atom, tylo.window(B, (0, 0), (32, 8)), t)
    d = tylo.mma(atom, a, b, tylo.accumulator(atom))  # ERR:min_sm
