"""A runtime value where a static one is needed: the error says what is runtime (a parameter, an
array's extent, the thread index, a loop variable), what needed it static, and how to make it
static (the ``tylo.constexpr`` annotation, the array's annotation, or static values only), at
the user's line."""

import pytest

import tylo
from tylo import BFloat16, Float32, Layout, LocalOwnership, MMAAtom, TiledMMA, tile
from tylo.compiler.layout.dynamic import first_static_hint, static_hint

F32 = tylo.Tensor(Float32, 1)


@tylo.kernel
def needs_static(out, a: tylo.Tensor(Float32, 2), n, use: tylo.constexpr):
    i = tylo.thread_idx()
    use(out, a, n, i)


def error(use, *, a=tylo.Tensor(Float32, 2)) -> tylo.TyloError:
    with pytest.raises(tylo.TyloError) as info:
        needs_static.compile(F32, a, 4, use)
    err = info.value
    assert err.location is not None and err.location.line > 0
    return err


def static_range(out, a, n, i):
    for j in tylo.static_range(n):
        out[j] = 0.0


def static_range_computed(out, a, n, i):
    for j in tylo.static_range(2 * n + 1):
        out[j] = 0.0


def static_range_of_thread(out, a, n, i):
    for j in tylo.static_range(i // 2):
        out[j] = 0.0


def window_extent(out, a, n, i):
    tylo.window(a, (0, 0), (a.shape[0], 8))


def shared_alloc(out, a, n, i):
    tylo.shared_alloc(Float32, n * 4)


def ownership(out, a, n, i):
    LocalOwnership(n, 0)


@tylo.kernel
def ownership_in_loop(out, n):
    for j in range(n):  # a runtime loop: the kernel's own code is rewritten
        LocalOwnership(j + 1, 0)


def range_in_helper(out, a, n, i):
    for j in range(n):  # a plain Python helper: range() needs an int
        out[j] = 0.0


def tuple_index(out, a, n, i):
    out[0] = (1.0, 2.0)[n]


def layout_tile(out, a, n, i):
    tile(Layout((16, 32), (32, 1)), (n, 16))


def tiled_mma(out, a, n, i):
    TiledMMA(MMAAtom((16, 8, 16), BFloat16, Float32), warps=(n, 1), repeat=(1, 1), k=16)


def mma_atom(out, a, n, i):
    MMAAtom((16, 8, n), BFloat16, Float32)


def stride_and_parameter(out, a, n, i):
    for j in tylo.static_range(a.stride[0] + n):
        out[j] = 0.0


PARAMETER_FIX = "annotate the parameter `n: tylo.constexpr` (the kernel then compiles once per value)"


@pytest.mark.parametrize("use, error_type, needed, what", [
    (static_range, tylo.GeometryError, "static_range bounds must be static ints",
     "the bound is the kernel parameter 'n', a runtime Int32"),
    (static_range_computed, tylo.GeometryError, "static_range bounds",
     "the bound is a runtime Int32 computed from the kernel parameter 'n'"),
    (shared_alloc, tylo.GeometryError, "shared_alloc: <runtime Int32> elements must be a positive static int",
     "the element count is a runtime Int32 computed from the kernel parameter 'n'"),
    (ownership, tylo.GeometryError, "LocalOwnership: n = <runtime Int32> must be a positive static",
     "n is the kernel parameter 'n'"),
    (tuple_index, tylo.CompileError, "where Python needs a static integer (a tuple or list index",
     "it is the kernel parameter 'n'"),
    (layout_tile, tylo.LayoutError, "tile extent 0 is the runtime value <runtime Int32>",
     "tile extent 0 is the kernel parameter 'n'"),
    (tiled_mma, tylo.PlanError, "TiledMMA: warps (<runtime Int32>, 1) must be two positive static",
     "warps entry 0 is the kernel parameter 'n'"),
    (mma_atom, tylo.PlanError, "MMAAtom: shape", "shape entry 2 is the kernel parameter 'n'"),
])
def test_a_parameter_is_made_static_with_constexpr(use, error_type, needed, what):
    err = error(use)
    assert type(err) is error_type
    for part in (needed, what, PARAMETER_FIX):
        assert part in err.message, err.message


def test_an_array_extent_is_fixed_in_its_annotation():
    err = error(window_extent)
    assert "window extents must be positive static ints" in err.message
    assert ("the extent of axis 0 is the extent of axis 0 of array 'a', known only at launch (fix "
            "it in the annotation, `a: tylo.Tensor(Float32, shape=(...))` with an int at index 0)"
            in err.message)


def test_an_annotated_extent_is_static():
    needs_static.compile(F32, tylo.Tensor(Float32, 2, shape=(16, 8)), 4, window_extent)


def test_sources_are_listed_with_every_fix():
    err = error(stride_and_parameter, a=tylo.Tensor(Float32, 2, stride=(None, 1)))
    assert "the stride of axis 0 of array 'a'" in err.message and "stride=(...)" in err.message
    assert PARAMETER_FIX in err.message


def test_per_thread_values_cannot_be_static():
    err = error(static_range_of_thread)
    assert "the thread index (tylo.thread_idx), which differs per thread" in err.message
    assert "it cannot be made static" in err.message
    assert "tylo.constexpr parameters, tylo.block_dim()" in err.message


def test_loop_variables_cannot_be_static():
    with pytest.raises(tylo.GeometryError) as info:
        ownership_in_loop.compile(F32, 4)
    message = info.value.message
    assert "the variable of, or a value carried by, a runtime loop" in message
    assert "it cannot be made static" in message and "tylo.static_range(...)" in message


def test_range_in_a_plain_helper():
    err = error(range_in_helper)
    assert "range() in a plain Python function" in err.message and PARAMETER_FIX in err.message


def test_static_hint_protocol_is_plain_python():
    class Runtime:
        def __tylo_static_hint__(self, role):
            return f"{role} is runtime"

    assert static_hint(3, "n") == "" and first_static_hint((1, 2), "x{i}") == ""
    assert static_hint(Runtime(), "n") == "; n is runtime"
    assert first_static_hint((1, Runtime()), "entry {i}") == "; entry 1 is runtime"
    with pytest.raises(tylo.GeometryError, match="n is runtime"):
        LocalOwnership(Runtime(), 0)
