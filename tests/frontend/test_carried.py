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


@tylo.kernel
def packed_in_loop(out, x, n):
    """A PackedFragment (four e4m3 values a word) carried by a runtime loop as its words:
    each iteration packs the running sum again."""
    t = tylo.thread_idx()
    own = ATOM.operand_layout("C")
    f = tylo.load_fragment(own, tylo.window(x, (0, 0), (16, 8)), t)
    p = tylo.pack(f, tylo.Float8E4M3)
    for _ in range(n):
        p = tylo.pack(tylo.unpack(p, Float32) + f, tylo.Float8E4M3)
    tylo.store(tylo.window(out, (0, 0), (16, 8)), tylo.unpack(p, Float32), t)


def test_a_packed_fragment_is_carried_as_its_words():
    import numpy as np

    c = packed_in_loop.compile(F32, F32, 4)
    loop = next(line for line in c.asm["tylo"].splitlines() if "scf.for" in line)
    assert loop.count("!tylo.fragment<i32") == 1  # the words, one iteration argument
    x = np.random.default_rng().integers(-3, 4, (16, 8)).astype(np.float32) / 4
    out = np.full((16, 8), np.nan, np.float32)
    packed_in_loop.emulate[1, 32](out, x, 3)
    np.testing.assert_array_equal(out, 4 * x)  # (exact in e4m3: small multiples of 1/4)
