"""Shared memory (static, dynamic, aligned by layout), named barriers, elect_one and setmaxnreg,
run on the GPU and emulated (`backend`): fresh random inputs, poisoned outputs, float64 or exact
references."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tylo
from tylo import BFloat16, Float32, Int32
from tylo.compiler.plans.tma_tile import TMATile

RNG = np.random.default_rng()


# -- dynamic tiles of every swizzle mode, written and read back through the layout -----------
@tylo.kernel
def through_tiles(out, X, plan: tylo.constexpr):
    t = tylo.thread_idx()
    pad = tylo.shared_tile(tylo.Layout((4,), (1,)), Float32)  # 16 static bytes first
    pad[0] = 1.0
    R, C = plan.shape
    gap = tylo.shared_tile(tylo.Layout((8,), (1,)), BFloat16, dynamic=True)  # 16 bytes
    a = tylo.shared_tile(plan, dynamic=True)
    gap[t % 8] = X[0, 0]
    for i in tylo.static_range(R * C // 128):
        idx = t + 128 * i
        a[idx // C, idx % C] = X[idx // C, idx % C]
    tylo.barrier()
    for i in tylo.static_range(R * C // 128):  # another thread reads each element back
        idx = (t + 37) % 128 + 128 * i
        out[idx // C, idx % C] = a[idx // C, idx % C]


@pytest.mark.parametrize("row_bytes", [32, 64, 128])
def test_dynamic_swizzled_tiles_round_trip(backend, row_bytes):
    plan = TMATile(BFloat16, (16, row_bytes // 2), 1, row_bytes)
    x = RNG.standard_normal(plan.shape).astype(ml_dtypes.bfloat16)
    out = backend.full(plan.shape, np.nan, ml_dtypes.bfloat16)
    backend.launch(through_tiles, 1, 128, out, backend.put(x), plan)
    np.testing.assert_array_equal(backend.get(out).view(np.uint16), x.view(np.uint16))


# -- the real addresses of dynamic allocations ---------------------------------------------
@tylo.kernel
def addresses(out):
    pad = tylo.shared_tile(tylo.Layout((4,), (1,)), Int32)
    pad[0] = 0
    p1 = tylo.shared_alloc(BFloat16, 512, align=1024, dynamic=True)
    p2 = tylo.shared_alloc(BFloat16, 8, align=16, dynamic=True)
    p3 = tylo.shared_alloc(BFloat16, 256, align=512, dynamic=True)
    if tylo.thread_idx() == 0:
        out[0] = tylo.shared_address(p1) % 1024
        out[1] = tylo.shared_address(p3) % 512
        out[2] = tylo.shared_address(p2) - tylo.shared_address(p1)
        out[3] = tylo.shared_address(p3) - tylo.shared_address(p1)
        out[4] = tylo.dynamic_smem_size()


def test_dynamic_allocations_sit_at_their_alignment(backend):
    out = backend.full(5, -1, np.int32)
    backend.launch(addresses, 1, 32, out)
    # p1 at 0 (1024 B), p2 at 1024, p3 at 1536; window 2048 + 1024 - 16 bytes of slack
    assert backend.get(out).tolist() == [0, 0, 1024, 1536, 3056]


# -- more than 48 KiB of dynamic shared memory: 200 KiB, every byte written and read ---------
N_BIG = 200 * 1024 // 4


@tylo.kernel
def big_window(out, X):
    t = tylo.thread_idx()
    s = tylo.SharedTile(tylo.shared_alloc(Float32, N_BIG, dynamic=True), tylo.Layout((N_BIG,), (1,)))
    for i in tylo.static_range(N_BIG // 256):
        s[t + 256 * i] = X[t + 256 * i]
    tylo.barrier()
    for i in tylo.static_range(N_BIG // 256):
        out[t + 256 * i] = s[N_BIG - 1 - (t + 256 * i)] * 2.0


def test_200_kib_of_dynamic_shared_memory(backend):
    x = RNG.standard_normal(N_BIG).astype(np.float32)
    out = backend.full(N_BIG, np.nan, np.float32)
    backend.launch(big_window, 1, 256, out, backend.put(x))
    np.testing.assert_array_equal(backend.get(out), (x[::-1].astype(np.float64) * 2).astype(np.float32))


# -- named barriers: a producer warp and two consumer warps, two rounds -----------------------
@tylo.kernel
def producer_consumer(out, X):
    t = tylo.thread_idx()
    w = tylo.warp_id()
    lane = tylo.lane_id()
    s = tylo.SharedTile(tylo.shared_alloc(Float32, 64), tylo.Layout((64,), (1,)))
    if w == 0:
        s[lane] = X[lane] * 2.0
        s[lane + 32] = X[lane + 32] * 2.0
        tylo.barrier_arrive(1, 96)  # data ready
        tylo.barrier(2, 96)  # consumers are done reading
        s[lane] = X[lane + 64] + 1.0
        s[lane + 32] = X[lane + 96] + 1.0
        tylo.barrier_arrive(1, 96)
    else:
        c = t - 32  # 0..63
        tylo.barrier(1, 96)
        out[c] = s[63 - c]
        tylo.barrier_arrive(2, 96)
        tylo.barrier(1, 96)
        out[c + 64] = s[63 - c]


def test_named_barriers_between_a_producer_and_consumers(backend):
    x = RNG.standard_normal(128).astype(np.float32)
    out = backend.full(128, np.nan, np.float32)
    backend.launch(producer_consumer, 1, 96, out, backend.put(x))
    x64 = x.astype(np.float64)
    want = np.concatenate([(x64[:64] * 2)[::-1], (x64[64:] + 1)[::-1]]).astype(np.float32)
    np.testing.assert_array_equal(backend.get(out), want)


# -- elect_one: exactly one lane per warp --------------------------------------------------
@tylo.kernel
def elected(flags, leaders):
    t = tylo.thread_idx()
    if tylo.elect_one():
        flags[t] = 1
        leaders[tylo.warp_id()] = tylo.lane_id()
    else:
        flags[t] = 0


def test_elect_one_picks_one_lane_per_warp(backend):
    flags, leaders = backend.full(128, -1, np.int32), backend.full(4, -1, np.int32)
    backend.launch(elected, 1, 128, flags, leaders)
    f = backend.get(flags).reshape(4, 32)
    assert (f.sum(axis=1) == 1).all() and set(np.unique(f)) == {0, 1}
    lead = backend.get(leaders)
    assert all(f[w, lead[w]] == 1 for w in range(4))


# -- setmaxnreg in a warp-specialized 384-thread kernel ---------------------------------------
@tylo.kernel
def specialized(out, X):
    wg = tylo.warpgroup_id()
    i = tylo.warpgroup_thread_idx()
    s = tylo.SharedTile(tylo.shared_alloc(Float32, 256), tylo.Layout((256,), (1,)))
    if wg == 0:
        tylo.setmaxnreg(40, "dec")
        s[i] = X[i]
        s[i + 128] = X[i + 128]
        tylo.barrier_arrive(1, 384)
    else:
        tylo.setmaxnreg(232, "inc")
        tylo.barrier(1, 384)
        c = (wg - 1) * 128 + i  # 0..255
        out[c] = s[c] * s[255 - c] + 1.0


def test_setmaxnreg_in_a_warp_specialized_kernel(backend):
    x = RNG.standard_normal(256).astype(np.float32)
    out = backend.full(256, np.nan, np.float32)
    backend.launch(specialized, 1, 384, out, backend.put(x))
    x64 = x.astype(np.float64)
    want = x64 * x64[::-1] + 1.0
    np.testing.assert_allclose(backend.get(out), want, rtol=1e-6, atol=1e-6)


# -- what the driver gives the dynamic window's base (the fact the run-time rounding covers) -
RAW_BASE_PTX = """
.version 8.4
.target {arch}
.address_size 64
.extern .shared .align 1024 .b8 dyn[];
.visible .entry raw_base(.param .u64 out)
{{
  .reg .b32 %r<4>;
  .reg .b64 %rd<3>;
  .shared .align 16 .b8 st[16];
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, st;
  mov.u32 %r2, dyn;
  mov.u32 %r3, %dynamic_smem_size;
  st.shared.u32 [%r1], %r3;
  st.shared.u32 [%r2], %r3;
  st.global.u32 [%rd2], %r1;
  st.global.u32 [%rd2+4], %r2;
  st.global.u32 [%rd2+8], %r3;
  ret;
}}
"""


@pytest.mark.gpu
def test_the_raw_dynamic_base_is_16_byte_aligned_and_reported():
    """Tylo assumes only a 16-byte aligned base (compiler/hardware/shared_memory.py) and rounds up the
    rest at run time; this prints what the driver actually gives an extern `.align 1024`
    window after 16 static bytes (informational: `-s` shows it)."""
    torch = pytest.importorskip("torch")
    from tylo.compiler.params.signature import DeviceParam
    from tylo.runtime import as_device_array, assemble, launch, launch_stream, pack, target_arch

    torch.zeros(1, device="cuda")
    arch = target_arch()
    code = assemble(RAW_BASE_PTX.format(arch=arch), arch, "raw_base").cubin
    out = torch.full((3,), -1, dtype=torch.int32, device="cuda")
    a = as_device_array("out", out)
    params = [DeviceParam("out", "ptr", "u64")]
    for extra in (4096, 100 * 1024):
        launch(code, "raw_base", 1, 32, extra, launch_stream([a]), pack(params, {"out": a}),
               a.device)
        torch.cuda.synchronize()
        static, dynamic, size = out.tolist()
        print(f"static array at {static:#x}, dynamic window at {dynamic:#x} "
              f"(mod 1024 = {dynamic % 1024}), %dynamic_smem_size = {size}")
        assert dynamic % 16 == 0 and size == extra
