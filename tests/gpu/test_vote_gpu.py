"""syncwarp and the votes (vote.sync all/any/uni/ballot), run on the GPU and emulated
(`backend`), against numpy on fresh random predicates: full masks, half-warp masks in the two
sides of a branch, a runtime mask from a ballot, and a partial last warp (its missing lanes
count as exited)."""

from __future__ import annotations

import numpy as np
import pytest

import tylo
from tylo import Int32

RNG = np.random.default_rng()


def _ballots(p, mask=0xFFFFFFFF):
    """Per warp of the 0/1 array `p`: the ballot of its lanes in `mask`."""
    w = np.zeros((-(-p.size // 32)) * 32, np.uint64)
    w[: p.size] = p
    bits = w.reshape(-1, 32) * (np.uint64(1) << np.arange(32, dtype=np.uint64))
    return bits.sum(1).astype(np.uint32) & np.uint32(mask)


def _reference(p, mask=0xFFFFFFFF):
    """[all, any, uni, ballot] per thread of `p` (0/1), each over its warp's lanes in `mask`."""
    n = p.size
    ballot = _ballots(p, mask)
    lanes = np.arange(n) % 32
    warp = np.arange(n) // 32
    size = np.minimum(32, n - 32 * warp)
    members = np.array([bin(mask & ((1 << int(s)) - 1)).count("1") for s in size])
    count = np.array([bin(int(b)).count("1") for b in ballot])[warp]
    out = np.stack([count == members, count > 0, (count == 0) | (count == members),
                    ballot[warp].view(np.int32)], 1).astype(np.int32)
    return out, lanes


@tylo.kernel
def votes(Out, P):
    t = tylo.thread_idx()
    p = P[t] != 0
    Out[t, 0] = tylo.vote_all(p).to(Int32)
    Out[t, 1] = tylo.vote_any(p).to(Int32)
    Out[t, 2] = tylo.vote_uni(p).to(Int32)
    Out[t, 3] = tylo.ballot(p).to(Int32)


@pytest.mark.parametrize("threads", [128, 48])
def test_votes_of_random_predicates(backend, threads):
    """48 threads: the second warp has 16 lanes; the full mask's other 16 count as exited."""
    density = RNG.choice([0.0, 0.1, 0.5, 0.9, 1.0], threads // 16)
    p = (RNG.random(threads) < np.repeat(density, 16)).astype(np.int32)
    out = backend.full((threads, 4), -5, np.int32)
    backend.launch(votes, 1, threads, out, backend.put(p))
    want, _ = _reference(p)
    np.testing.assert_array_equal(backend.get(out), want)


@tylo.kernel
def half_warp_votes(Out, P):
    t = tylo.thread_idx()
    p = P[t] != 0
    if t % 32 < 16:
        Out[t, 0] = tylo.vote_all(p, 0x0000FFFF).to(Int32)
        Out[t, 1] = tylo.ballot(p, 0x0000FFFF).to(Int32)
        tylo.syncwarp(0x0000FFFF)
    else:
        Out[t, 0] = tylo.vote_all(p, 0xFFFF0000).to(Int32)
        Out[t, 1] = tylo.ballot(p, 0xFFFF0000).to(Int32)
        tylo.syncwarp(0xFFFF0000)


def test_half_warp_masks_in_the_two_sides_of_a_branch(backend):
    p = (RNG.random(128) < 0.8).astype(np.int32)
    out = backend.full((128, 2), -5, np.int32)
    backend.launch(half_warp_votes, 1, 128, out, backend.put(p))
    got = backend.get(out)
    lanes = np.arange(128) % 32
    for mask, side in ((0x0000FFFF, lanes < 16), (0xFFFF0000, lanes >= 16)):
        want, _ = _reference(p, mask)
        np.testing.assert_array_equal(got[side, 0], want[side, 0])
        np.testing.assert_array_equal(got[side, 1], want[side, 3])


@tylo.kernel
def split_masks(Out, P):
    t = tylo.thread_idx()
    half = tylo.select(t % 32 < 16, 0x0000FFFF, -65536)  # lanes 0-15 / 16-31 (0xffff0000)
    Out[t] = tylo.ballot(P[t] != 0, half).to(Int32)


def test_half_warp_masks_given_by_one_instruction(backend):
    """Lanes of a warp may give different masks that do not overlap (two collectives)."""
    p = (RNG.random(64) < 0.5).astype(np.int32)
    out = backend.full(64, -5, np.int32)
    backend.launch(split_masks, 1, 64, out, backend.put(p))
    low, high = _reference(p, 0x0000FFFF)[0][:, 3], _reference(p, 0xFFFF0000)[0][:, 3]
    np.testing.assert_array_equal(backend.get(out), np.where(np.arange(64) % 32 < 16, low, high))


@tylo.kernel
def runtime_mask(Out, P, Q):
    t = tylo.thread_idx()
    p = P[t] != 0
    q = Q[t] != 0
    m = tylo.ballot(p)
    Out[t] = -1
    if p:
        Out[t] = tylo.ballot(q, m).to(Int32)


def test_a_runtime_mask_from_a_ballot(backend):
    p = (RNG.random(64) < 0.6).astype(np.int32)
    p[::32] = 1  # (every warp has a lane in the mask)
    q = (RNG.random(64) < 0.5).astype(np.int32)
    out = backend.full(64, -5, np.int32)
    backend.launch(runtime_mask, 1, 64, out, backend.put(p), backend.put(q))
    masks = _ballots(p)
    want = np.where(p != 0, (_ballots(q)[np.arange(64) // 32] & masks[np.arange(64) // 32])
                    .view(np.int32), -1)
    np.testing.assert_array_equal(backend.get(out), want)


@tylo.kernel
def warp_exchange(Out, X):
    t = tylo.thread_idx()
    s = tylo.SharedTile(tylo.shared_alloc(Int32, 128), tylo.Layout((128,), (1,)))
    s[t] = X[t]
    tylo.syncwarp()
    Out[t] = s[t ^ 1]


def test_syncwarp_orders_shared_memory_within_the_warp(backend):
    x = RNG.integers(-1000, 1000, 128).astype(np.int32)
    out = backend.full(128, 0, np.int32)
    backend.launch(warp_exchange, 1, 128, out, backend.put(x))
    np.testing.assert_array_equal(backend.get(out), x[np.arange(128) ^ 1])

