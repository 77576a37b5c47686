"""Integer (.s8/.u8 -> .s32), tf32 and f16-accumulator WGMMA products on the GPU and the emulator
(`backend`), on fresh random data, and the emulator's models of them against the GPU bit for bit
(the tests marked ``gpu`` alone).

* Integer: every pairing, the n of the integer forms (8..32 step 8, then step 16), every swizzle
  mode, A from registers; exact against int64. ``.satfinite`` against wrapping: C near the int32
  limits loaded into the accumulator, one instruction's products crossing them.
* tf32: Float32 tiles (K = 8 an instruction), within 2**-8 |A| @ |B| of the float64 product of
  the f32 inputs (`relative_bound`: either input rounding); the emulator's model (inputs
  truncated to 10 mantissa bits, `wgmma.TF32_INPUT_ROUNDING`) against the GPU bit for bit, with
  the alternative (round to nearest, ties away) named when the GPU matches it instead.
* f16 accumulator: within k 2**-11 (|A| @ |B| + |C|) of the float64 value (the classic bound of
  half-precision summation); the emulator's model (one f16 rounding per instruction) against the
  GPU bit for bit; ``TYLO_WGMMA_DUMP=<file>`` writes the GPU's results and inputs there, to fit
  the model offline.
"""

from __future__ import annotations

import numpy as np
import pytest
from wgmma_products import (
    accumulate_kernel, check_close, operand_tile, random_operand, run_product,
    wgmma_register_a,
)

import tylo
from tylo import Float16, Float32, Int8, UInt8
from tylo.compiler.support import knobs

INT_PAIRS = [(Int8, Int8), (Int8, UInt8), (UInt8, Int8), (UInt8, UInt8)]
INT_IDS = ["s8xs8", "s8xu8", "u8xs8", "u8xu8"]
INT_NS = (8, 16, 24, 32, 48, 64, 80, 112, 128, 144, 208, 240, 256)
"""Every n below 64 the integer forms have, n mod 64 in {16, 48, 0}, up to 256."""
MODES = [(128, 32), (128, 64), (128, 128), (64, 32), (64, 64), (32, 32), (16, 32), (16, 128)]
"""(swizzle row bytes (16: none), k) of 8-bit K-major operands: the plan's K in one row."""
TF32_NS = (8, 24, 40, 64, 136, 256)
TF32_MODES = [(128, 8), (128, 32), (64, 16), (32, 8), (16, 8), (16, 32)]
"""(swizzle row bytes, k) of tf32 K-major operands (32 four-byte elements a 128-byte row)."""


@pytest.mark.parametrize("a,b", INT_PAIRS, ids=INT_IDS)
def test_integer_every_n(backend, a, b):
    """Each n of `INT_NS` (one per pairing emulated), k = 128 in one 128-byte swizzle row: exact
    s32 sums of full-range operands."""
    for n in backend.size(INT_NS, (INT_NS[INT_PAIRS.index((a, b)) * 3 % len(INT_NS)],)):
        plan = tylo.WGMMA64(a, n, 128, b_dtype=b)
        got, ref, _ = run_product(backend, plan)
        check_close(got, ref, 0.0, f"{plan}")


@pytest.mark.parametrize("row,k", MODES, ids=[f"sw{r}-k{k}" for r, k in MODES])
def test_integer_every_mode(backend, row, k):
    """s8 x u8 and u8 x s8, n in {8, 24, 64, 256} on the GPU; one n and pairing emulated."""
    pick = MODES.index((row, k))
    a, b = INT_PAIRS[1 + pick % 2]
    for n in backend.size((8, 24, 64, 256), ((8, 24, 64)[pick % 3],)):
        plan = tylo.WGMMA64(a, n, k, b_dtype=b)
        got, ref, _ = run_product(backend, plan, row_a=row, row_b=row)
        check_close(got, ref, 0.0, f"{plan} swizzle {row if row > 16 else 'none'} K-major")


@pytest.mark.parametrize("a,b", INT_PAIRS, ids=INT_IDS)
def test_integer_register_a(backend, a, b):
    """A from registers (the 8-bit register-A fragment, `register_a_ownership`): loaded from
    global; k = 64, n in {8, 48, 256} on the GPU, one n emulated."""
    rng = np.random.default_rng()
    for n in backend.size((8, 48, 256), (16,)):
        plan = tylo.WGMMA64(a, n, 64, b_dtype=b)
        lb, sb = operand_tile(plan, "B", "K", 64)
        A = random_operand((64, 64), a, False, rng)
        B = random_operand(sb, b, False, rng)
        out = backend.full((64, n), -7777, np.int32)
        backend.launch(wgmma_register_a, (1,), (128,), out, backend.put(A), backend.put(B), plan,
                       lb)
        check_close(backend.get(out).astype(np.float64),
               A.astype(np.float64) @ B[:64, :n].astype(np.float64), 0.0,
               f"{plan} register A")


def test_integer_partials_and_two_warpgroups(backend):
    """partials (s32 partial sums added by finish_mma) and two warpgroups stacked along M."""
    for plan in (tylo.WGMMA64(UInt8, 16, 128, 4), tylo.WGMMA64(Int8, backend.size(128, 16), 64,
                                                             warpgroups=2, b_dtype=UInt8)):
        got, ref, _ = run_product(backend, plan)
        check_close(got, ref, 0.0, f"{plan}")


_ACCUMULATE: dict = {}


def _accumulate(backend, plan, A, B, C):
    """D = A @ B + C through `accumulate_kernel` (one kernel per plan, made once); D poisoned
    (NaN, or -7777 for s32) before."""
    if plan not in _ACCUMULATE:
        _ACCUMULATE[plan] = accumulate_kernel(plan, 128 if plan.k * plan.dtype.bytes >= 128
                                              else 32)
    dtype = plan.accumulator.numpy
    D = backend.full((64, plan.n), -7777 if plan.dtype.is_int else np.nan, dtype)
    backend.launch(_ACCUMULATE[plan], 1, 128, D, backend.put(A), backend.put(B),
                   backend.put(C.astype(dtype)))
    return backend.get(D)


@pytest.mark.parametrize("satfinite", [False, True], ids=["wrap", "satfinite"])
def test_integer_overflow_wraps_or_saturates(backend, satfinite):
    """C within 2**20 of MIN_INT32 / MAX_INT32 and one instruction's products (u8 x u8, up to
    32 * 255 * 255 ~ 2**21) pushing past it: wrapped modulo 2**32, or clamped (.satfinite)."""
    rng = np.random.default_rng()
    plan = tylo.WGMMA64(UInt8, 24, 32, satfinite=satfinite)
    A = rng.integers(128, 256, (64, 32)).astype(np.uint8)
    B = rng.integers(128, 256, (32, 24)).astype(np.uint8)
    sign = rng.choice([-1, 1], (64, 24))
    C = np.where(sign > 0, (1 << 31) - 1 - rng.integers(0, 1 << 20, (64, 24)),
                 -(1 << 31) + rng.integers(0, 1 << 20, (64, 24)))
    B[:, sign[0] < 0] = 0  # columns whose first row starts low: their row-0 sums stay put
    exact = A.astype(np.int64) @ B.astype(np.int64) + C
    want = (np.clip(exact, -(1 << 31), (1 << 31) - 1) if satfinite
            else (exact + (1 << 31)) % (1 << 32) - (1 << 31))
    assert (exact > (1 << 31) - 1).any()  # the case the test is about
    got = _accumulate(backend, plan, A, B, C).astype(np.int64)
    bad = got != want
    assert not bad.any(), (f"{plan}: {int(bad.sum())} of {bad.size} wrong, first "
                           f"{np.argwhere(bad)[0]}: got {got[bad][0]}, want {want[bad][0]} "
                           f"(exact {exact[bad][0]})")


@pytest.mark.parametrize("n", TF32_NS)
def test_tf32_every_n(backend, n):
    """Float32 operands read as tf32, k = 32 (one 128-byte row); one n emulated."""
    if backend.emulated and n != 40:
        pytest.skip("one n emulated")
    plan = tylo.WGMMA64(Float32, n, 32)
    got, ref, bound = run_product(backend, plan)
    check_close(got, ref, bound, f"{plan}")


@pytest.mark.parametrize("row,k", TF32_MODES, ids=[f"sw{r}-k{k}" for r, k in TF32_MODES])
def test_tf32_every_mode(backend, row, k):
    """tf32 K-major operands in every swizzle mode (K = 8 four-byte elements an instruction)."""
    n = backend.size(64, 24)
    plan = tylo.WGMMA64(Float32, n, k)
    got, ref, bound = run_product(backend, plan, row_a=row, row_b=row)
    check_close(got, ref, bound, f"{plan} swizzle {row if row > 16 else 'none'}")


@pytest.mark.parametrize("n,k", [(8, 16), (64, 64)])
def test_f16_accumulator(backend, n, k):
    """D (f16) = A @ B + C within k 2**-11 (|A| @ |B| + |C|) of float64 (module text)."""
    rng = np.random.default_rng()
    plan = tylo.WGMMA64(Float16, n, k, accumulator=Float16)
    A = rng.uniform(-1, 1, (64, k)).astype(np.float16)
    B = rng.uniform(-1, 1, (k, n)).astype(np.float16)
    C = rng.uniform(-4, 4, (64, n)).astype(np.float16)
    D = _accumulate(backend, plan, A, B, C).astype(np.float64)
    a, b, c = A.astype(np.float64), B.astype(np.float64), C.astype(np.float64)
    check_close(D, a @ b + c, (np.abs(a) @ np.abs(b) + np.abs(c)) * 2.0 ** -11 * k + 2.0 ** -24,
           f"{plan} + C")


def test_f16_accumulator_chained_and_from_registers(backend):
    """Three mma_async on one pending f16 accumulator (its packed words handed on, one wait), A
    from shared memory and from registers: within the half-precision bound of 64 products."""
    from wgmma_products import run_k_chain

    plans = [tylo.WGMMA64(Float16, 24, k, accumulator=Float16) for k in (16, 32, 16)]
    for register_a in (False, True):
        got, ref, f32_bound, _ = run_k_chain(backend, plans, register_a)
        abs_product = f32_bound * 2.0 ** 16  # run_k_chain's bound is |A| @ |B| 2**-16
        check_close(got, ref, abs_product * 2.0 ** -11 * 64 + 2.0 ** -24,
                    f"{plans} register A {register_a}")


def _adversarial_f32(rng, shape):
    """f32 values over a wide exponent range with every low mantissa bit pattern (the 13 bits
    tf32 drops), signed zeros, and pairs of K terms that cancel."""
    x = rng.uniform(1, 2, shape) * 2.0 ** rng.integers(-30, 30, shape) * rng.choice([-1, 1], shape)
    x[rng.random(shape) < 0.05] = 0.0
    x[rng.random(shape) < 0.03] = -0.0
    return x.astype(np.float32)


def _difference(hw, emu) -> str:
    bad = hw.view(np.uint32) != emu.view(np.uint32)
    return f"{int(bad.sum())} of {bad.size} elements differ"


@pytest.mark.gpu
def test_emulated_tf32_wgmma_equals_the_hardware_bit_for_bit(monkeypatch):
    """The tf32 model (inputs truncated to 10 mantissa bits, one fused step of 8 products and C,
    emulator/semantics/wgmma.py) against the GPU on adversarial inputs, K = 32, n 8, 64, 256.
    On a mismatch the message says whether rounding the inputs ("rna") would match instead."""
    torch = pytest.importorskip("torch")
    from backends import GPU, Emulator

    from tylo.emulator.semantics import wgmma as semantics

    rng = np.random.default_rng()
    failures, dump = [], {}
    for n in (8, 64, 256):
        plan = tylo.WGMMA64(Float32, n, 32)
        A, B = _adversarial_f32(rng, (64, 32)), _adversarial_f32(rng, (32, n))
        A[:, 1::2] = np.where(rng.random((64, 16)) < 0.5, -A[:, 0::2], A[:, 1::2])
        C = _adversarial_f32(rng, (64, n))
        hw = _accumulate(GPU(torch), plan, A, B, C)
        emu = _accumulate(Emulator(), plan, A, B, C)
        dump.update({f"tf32_n{n}_A": A, f"tf32_n{n}_B": B, f"tf32_n{n}_C": C, f"tf32_n{n}_D": hw})
        if not np.array_equal(hw.view(np.uint32), emu.view(np.uint32)):
            monkeypatch.setattr(semantics, "TF32_INPUT_ROUNDING", "rna")
            rna = _accumulate(Emulator(), plan, A, B, C)
            monkeypatch.undo()
            failures.append(f"n{n}: truncated inputs: {_difference(hw, emu)}; rounded (rna) "
                            f"inputs: {_difference(hw, rna)}")
    if knobs.testing.wgmma_dump:
        np.savez_compressed(f"{knobs.testing.wgmma_dump}.tf32.npz", **dump)
    assert not failures, "\n".join(failures)


@pytest.mark.gpu
def test_emulated_f16_accumulator_equals_the_hardware_bit_for_bit():
    """The .f16 accumulator model (one fused f32 step per instruction, rounded once to f16 to
    nearest even) against the GPU, K = 64 (four instructions), n 8, 64, 256; inputs in
    f16's range with cancelling pairs, C of magnitude up to 2**10."""
    torch = pytest.importorskip("torch")
    from backends import GPU, Emulator

    rng = np.random.default_rng()
    failures, dump = [], {}
    for n in (8, 64, 256):
        plan = tylo.WGMMA64(Float16, n, 64, accumulator=Float16)
        A = (rng.uniform(1, 2, (64, 64)) * 2.0 ** rng.integers(-8, 4, (64, 64))
             * rng.choice([-1, 1], (64, 64))).astype(np.float16)
        A[:, 1::2] = np.where(rng.random((64, 32)) < 0.5, -A[:, 0::2], A[:, 1::2])
        B = (rng.uniform(-2, 2, (64, n))).astype(np.float16)
        C = (rng.uniform(-1, 1, (64, n)) * 2.0 ** rng.integers(-10, 10, (64, n))).astype(np.float16)
        hw = _accumulate(GPU(torch), plan, A, B, C)
        emu = _accumulate(Emulator(), plan, A, B, C)
        dump.update({f"f16acc_n{n}_A": A, f"f16acc_n{n}_B": B, f"f16acc_n{n}_C": C,
                     f"f16acc_n{n}_D": hw})
        bad = hw.view(np.uint16) != emu.view(np.uint16)
        if bad.any():
            failures.append(f"n{n}: {int(bad.sum())} of {bad.size} f16 elements differ")
    if knobs.testing.wgmma_dump:
        np.savez_compressed(f"{knobs.testing.wgmma_dump}.f16acc.npz", **dump)
    assert not failures, "\n".join(failures)


def test_tf32_ignores_the_low_mantissa_bits(backend):
    """Inputs 1 + j 2**-10 + (a pattern of the 13 low bits) times small integers: the products
    and sums are exact in f32, so D is the product of the TRUNCATED inputs exactly on the
    emulator (its model); on the GPU the same (the ISA: "truncate lower 13 bits")."""
    rng = np.random.default_rng()
    plan = tylo.WGMMA64(Float32, 8, 8)
    A = (1 + rng.integers(0, 1024, (64, 8)) * 2.0 ** -10).astype(np.float32)
    A = (A.view(np.uint32) | rng.integers(1, 1 << 13, (64, 8)).astype(np.uint32)).view(np.float32)
    B = rng.integers(-4, 5, (8, 8)).astype(np.float32)
    C = np.zeros((64, 8), np.float32)
    D = _accumulate(backend, plan, A, B, C).astype(np.float64)
    truncated = (A.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    np.testing.assert_array_equal(D, truncated @ B.astype(np.float64))
