"""TMA copies in kernels (frontend/language/tma.py): the PTX of loads, stores and bulk groups (assembled
by ptxas for sm_90a, one UTMALDG / UTMASTG each), the runtime origin checks, and the refusals at
the user's line. Runs of the copies: tests/gpu/test_tma_gpu.py (GPU and emulator)."""

import ml_dtypes
import numpy as np
import pytest

import tylo
from tylo import BFloat16, Float32
from tylo.compiler.support.errors import TyloError
from tylo.compiler.plans.tma_tile import TMATile, shared_layout

PLAN = TMATile(BFloat16, (16, 64), 1, 128)


def binding(plan=PLAN, shape=(64, 64)):
    return tylo.prepare_tma(plan, np.zeros(shape, plan.dtype.numpy))


@tylo.kernel
def copy(a_map, c_map, row, col, batch: tylo.constexpr):
    plan = a_map.plan
    t = tylo.thread_idx()
    bars = tylo.mbarriers(1)
    tile = tylo.shared_tile(plan)
    if t == 0:
        bars[0].init(1)
        tylo.fence_mbarrier_init()
    tylo.barrier()
    origin = (row, col, 1) if batch else (row, col)
    if t == 0:
        bars[0].arrive_expect_tx(tylo.transfer_bytes(plan))
        tylo.tma_load(tile, a_map, origin, bars[0])
    bars[0].wait(0)
    if t == 0:
        tylo.tma_store(c_map, tile, origin)
        tylo.commit_tma_stores()
        tylo.wait_tma_reads(0)
        tylo.wait_tma_stores(0)


def _compile(batch=False):
    shape = (2, 64, 64) if batch else (64, 64)
    return copy.compile(binding(shape=shape), binding(shape=shape), 8, 0, batch, block=128,
                        arch="sm_90a")


@pytest.mark.parametrize("batch", [False, True])
def test_copies_assemble(batch):
    """The PTX lines (coordinates inner first: the column, then the row, then the matrix) and
    ptxas's SASS: one TMA load and one TMA store."""
    pytest.importorskip("tylo.runtime.ptxas")
    c = _compile(batch)
    lines = [x.strip() for x in c.ptx.splitlines() if "cp.async.bulk" in x]
    r = 3 if batch else 2
    assert lines[0].startswith(f"cp.async.bulk.tensor.{r}d.shared::cluster.global.tile."
                               "mbarrier::complete_tx::bytes [%r")
    assert lines[1].startswith(f"cp.async.bulk.tensor.{r}d.global.shared::cta.tile.bulk_group")
    assert lines[2:] == ["cp.async.bulk.commit_group;", "cp.async.bulk.wait_group.read 0;",
                         "cp.async.bulk.wait_group 0;"]
    counts = c.sass_counts().opcodes
    assert counts.get("UTMALDG") == 1 and counts.get("UTMASTG") == 1


@tylo.kernel
def reduce(c_map, row, col, op: tylo.constexpr):
    tile = tylo.shared_tile(c_map.plan)
    tile[0, tylo.thread_idx()] = 1
    tylo.barrier()
    if tylo.thread_idx() == 0:
        tylo.tma_reduce(c_map, tile, (row, col), op)
        tylo.commit_tma_stores()
        tylo.wait_tma_stores(0)


@pytest.mark.parametrize("plan, op", [(TMATile(Float32, (16, 32), 1, 128), "add"),
                                      (PLAN, "add"), (PLAN, "min"),
                                      (TMATile(tylo.UInt32, (8, 32), 1, 128), "inc"),
                                      (TMATile(tylo.Int32, (8, 32), 1, 128), "xor")])
def test_reduce_assembles(plan, op):
    """One cp.reduce.async.bulk.tensor line (coordinates inner first, the redOp, no type: the
    map's), after the fence of the generic stores to its source; ptxas: one UTMAREDG."""
    pytest.importorskip("tylo.runtime.ptxas")
    c = reduce.compile(binding(plan), 8, 0, op, block=32, arch="sm_90a")
    lines = [x.strip() for x in c.ptx.splitlines() if "cp.reduce" in x or "fence.proxy" in x]
    assert lines[0] == "fence.proxy.async.shared::cta;"
    assert lines[1].startswith(f"cp.reduce.async.bulk.tensor.2d.global.shared::cta.{op}.tile."
                               "bulk_group [%rd")
    assert c.sass_counts().opcodes.get("UTMAREDG") == 1


def test_runtime_inner_origin_traps_in_the_emulator():
    """A runtime column origin of 4 bf16 elements (8 bytes) does not start a 16-byte chunk: the
    device check traps (the message names it); checked=False would skip the check."""
    a = np.random.default_rng().standard_normal((64, 64)).astype(ml_dtypes.bfloat16)
    with pytest.raises(TyloError, match="inner origin"):
        copy.emulate[1, 128](binding(), tylo.prepare_tma(PLAN, a), 8, 4, False)


def _refusal(kernel, *args) -> str:
    with pytest.raises(TyloError) as e:
        kernel.compile(*args, block=128, arch="sm_90a")
    return str(e.value)


def test_refusals_name_the_line():
    @tylo.kernel
    def wrong_layout(m):
        bars = tylo.mbarriers(1)
        tile = tylo.SharedTile(tylo.shared_alloc(BFloat16, 1024, align=1024),
                               tylo.Layout((16, 64), (64, 1)))
        tylo.tma_load(tile, m, (0, 0), bars[0])

    msg = _refusal(wrong_layout, binding())
    assert "test_tma.py" in msg and "exactly the plan's shared layout" in msg

    @tylo.kernel
    def window(m):
        bars = tylo.mbarriers(1)
        tile = tylo.shared_tile(TMATile(BFloat16, (32, 64), 1, 128))
        tylo.tma_load(tylo.window(tile, (0, 0), (16, 64)), m, (0, 0), bars[0])

    assert "a window of a tile" in _refusal(window, binding())

    @tylo.kernel
    def dtype(m):
        bars = tylo.mbarriers(1)
        tylo.tma_load(tylo.shared_tile(TMATile(Float32, (16, 32), 1, 128)), m, (0, 0), bars[0])

    assert "the tile holds Float32" in _refusal(dtype, binding())

    @tylo.kernel
    def origin(m):
        bars = tylo.mbarriers(1)
        tylo.tma_load(tylo.shared_tile(PLAN), m, (0, 4), bars[0])

    assert "must start a 16-byte chunk" in _refusal(origin, binding())

    @tylo.kernel
    def rank(m):
        bars = tylo.mbarriers(1)
        tylo.tma_load(tylo.shared_tile(PLAN), m, (0, 0, 1), bars[0])

    assert "must have 2 coordinates" in _refusal(rank, binding())

    @tylo.kernel
    def no_barrier(m):
        tylo.tma_load(tylo.shared_tile(PLAN), m, (0, 0), tylo.shared_alloc(tylo.UInt64, 1))

    assert "is not an mbarrier" in _refusal(no_barrier, binding())

    @tylo.kernel
    def unaligned(m):
        p = tylo.shared_alloc(BFloat16, 2048, align=1024)
        tylo.tma_store(m, tylo.SharedTile(p + 64, shared_layout(PLAN)), (0, 0))

    assert "multiple of 1024 bytes" in _refusal(unaligned, binding())

    @tylo.kernel
    def negative_store(m):
        tylo.tma_store(m, tylo.shared_tile(PLAN), (-8, 0))

    assert "must be non-negative" in _refusal(negative_store, binding())

    @tylo.kernel
    def negative_reduce(m):
        tylo.tma_reduce(m, tylo.shared_tile(PLAN), (0, -64))

    assert "reduce origin coordinate 1 = -64 must be non-negative" in _refusal(negative_reduce,
                                                                             binding())

    @tylo.kernel
    def reduce_op(m):
        tylo.tma_reduce(m, tylo.shared_tile(PLAN), (0, 0), op="sub")

    msg = _refusal(reduce_op, binding())
    assert "test_tma.py" in msg and "UnsupportedError" in msg and "op='sub' is not one of" in msg

    for plan, op, want in [(PLAN, "inc", ".inc takes elements .u32, not .bf16"),
                           (TMATile(Float32, (16, 32), 1, 128), "max",
                            ".max takes elements .u32, .s32, .u64, .s64, .f16, .bf16, not .f32"),
                           (TMATile(tylo.Int8, (16, 128), 1, 128), "add", "not .s8"),
                           (TMATile(tylo.Int32, (16, 32), 1, 128), "inc", "not .s32")]:
        @tylo.kernel
        def reduce_type(m, op: tylo.constexpr):
            tylo.tma_reduce(m, tylo.shared_tile(m.plan), (0, 0), op)

        msg = _refusal(reduce_type, binding(plan), op)
        assert "TypeMismatchError" in msg and want in msg and "9.7.9.27.1.3" in msg, msg

    @tylo.kernel
    def wait_count(m):
        tylo.wait_tma_reads(64)

    assert "0 .. 63" in _refusal(wait_count, binding())
