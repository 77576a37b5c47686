"""Tuples and lists of runtime values cross runtime loops and branches as their leaves: a list of
accumulators updated as ``accs[j] = tylo.mma(...)`` in a runtime loop is carried (before, every
iteration multiplied onto the first one's zeros and nothing said so)."""

import re

import tylo
from tylo import BFloat16, Float32, MMAAtom

ATOM = MMAAtom((16, 8, 16), BFloat16, Float32)
F32, BF16 = tylo.Tensor(Float32, 2), tylo.Tensor(BFloat16, 2)


@tylo.kernel
def two_accumulators(C, A, B):
    t = tylo.thread_idx()
    accs = [tylo.accumulator(ATOM), tylo.accumulator(ATOM)]
    for k in range(0, A.shape[1], 16):
        a = tylo.load_a(ATOM, tylo.window(A, (0, k), (16, 16)), t)
        for j in tylo.static_range(2):
            b = tylo.load_b(ATOM, tylo.window(B, (k, 8 * j), (16, 8)), t)
            accs[j] = tylo.mma(ATOM, a, b, accs[j])
    for j in tylo.static_range(2):
        tylo.store(tylo.window(C, (0, 8 * j), (16, 8)), accs[j], t)


@tylo.kernel
def pair_in_branch(out, x, n):
    i = tylo.thread_idx()
    lo_hi = (x[i], x[i] * 2.0)
    if i < n:
        lo_hi = (lo_hi[1], lo_hi[0] + 1.0)
    out[i] = lo_hi[0] - lo_hi[1]


@tylo.kernel
def nested_in_while(out, x, n):
    state = [(x[0], 0), (x[1], 0)]
    while state[0][1] < n:
        state = [(state[0][0] * 0.5, state[0][1] + 1), (state[1][0] + 1.0, state[1][1] + 2)]
    out[0] = state[0][0] + state[1][0]


def test_a_list_of_accumulators_is_carried_by_the_loop():
    c = two_accumulators.compile(F32, BF16, BF16)
    loop = next(line for line in c.asm["tylo"].splitlines() if "scf.for" in line)
    assert loop.count("!tylo.fragment<f32") == 2  # both accumulators are iteration arguments
    assert c.ptx.count("mma.sync.aligned") == 2


def test_a_tuple_rebuilt_in_a_runtime_if_is_a_result_of_the_if():
    ir = pair_in_branch.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1), 4).asm["tylo"]
    assert re.search(r"= scf\.if .* -> \(f32, f32\)", ir)


def test_nested_containers_are_carried_leaf_by_leaf():
    ir = nested_in_while.compile(tylo.Tensor(Float32, 1), tylo.Tensor(Float32, 1), 4).asm["tylo"]
    assert re.search(r"scf\.while .*: \(f32, i32, f32, i32\) -> \(f32, i32, f32, i32\)", ir)
