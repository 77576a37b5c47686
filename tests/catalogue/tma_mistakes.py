"""The catalogue's entries for tensor maps: what ``tylo.prepare_tma`` refuses before it calls
cuTensorMapEncodeTiled (each message names the driver rule of docs' tma_constraints R1-R14 and
the values), and a binding used where it cannot be. They are host-side errors raised by the
call itself (``located=False``); a numpy array stands in for a device array (prepare_tma runs
the same checks on it, for ``kernel.emulate``)."""

from __future__ import annotations

from mistakes_base import Mistake

T = "tensor maps (tylo.prepare_tma)"

_PRELUDE = """
import numpy as np
import ml_dtypes
plan = tylo.TMATile(BFloat16, (128, 64), 1)  # A(M, K) boxes: 128 rows of 64 bf16 (128 B)
"""

TMA: list[Mistake] = [
    Mistake("tma-unaligned-address", T, "a device array whose address is not 16-byte aligned (an offset view)", """
class View:  # a device array, known by its __cuda_array_interface__
    __cuda_array_interface__ = {"version": 3, "data": (0x7F0000000008, False), "typestr": "<f2",
                                "shape": (256, 64), "strides": None}
plan = tylo.TMATile(Float16, (128, 64), 1)
tylo.prepare_tma(plan, View())  # <-
""", "TMAError", "address 0x7f0000000008 is not 16-byte aligned (rule R3", located=False),
    Mistake("tma-rank-1", T, "a 1-D array for a tensor map", _PRELUDE + """
tylo.prepare_tma(plan, np.zeros(4096, ml_dtypes.bfloat16))  # <-
""", "TMAError", "has 1 dimensions; a tensor map of", located=False),
    Mistake("tma-bound-zero", T, "a bound of 0 (a global dimension must be 1 .. 2^32)", _PRELUDE + """
tylo.prepare_tma(plan, np.zeros((256, 64), ml_dtypes.bfloat16), bounds=(0, 64))  # <-
""", "TMAError", "bounds[0] = 0 is outside 1 .. 2^32 (rule R4", located=False),
    Mistake("tma-bound-past-the-array", T, "bounds larger than the array", _PRELUDE + """
tylo.prepare_tma(plan, np.zeros((256, 64), ml_dtypes.bfloat16), bounds=(300, 64))  # <-
""", "TMAError", "bounds[0] = 300 exceeds the array's extent 256", located=False),
    Mistake("tma-row-stride-1022", T, "a bf16 [128, 511] row-major matrix (rows of 1022 bytes)", _PRELUDE + """
tylo.prepare_tma(plan, np.zeros((128, 511), ml_dtypes.bfloat16))  # <-
""", "TMAError", "global stride 1022 B (axis 0: 511 elements of 2 B) is not a multiple of 16 "
                 "(rule R5: cuTensorMapEncodeTiled needs 16-byte multiples)", located=False),
    Mistake("tma-strided-inner-axis", T, "a transposed (column-major) view: the inner axis is not contiguous", _PRELUDE + """
tylo.prepare_tma(plan, np.zeros((64, 256), ml_dtypes.bfloat16).T)  # <-
""", "TMAError", "axis i1 of the logical (i0, i1) view must be contiguous (stride 1; rule R5",
        located=False),
    Mistake("tma-k-major-b-given-row-major", T, "a row-major B (K, N) for a B plan whose K axis is contiguous (axis 0): pass Bt.T", """
import numpy as np
import ml_dtypes
plan = tylo.TMATile(BFloat16, (64, 128), 0)  # B (K, N) boxes, K contiguous
B = np.zeros((64, 256), ml_dtypes.bfloat16)  # (K, N) row-major: N is the contiguous axis
tylo.prepare_tma(plan, B)  # <-
""", "TMAError", "axis i0 of the logical (i0, i1) view must be contiguous (stride 1; rule R5: a "
                 "tensor map's dimension 0 is contiguous); pass a view whose K axis is "
                 "contiguous: Bt.T", located=False),
    Mistake("tma-stride-2-pow-40", T, "a row stride of 2^40 bytes or more", _PRELUDE + """
huge = np.lib.stride_tricks.as_strided(np.zeros(64, ml_dtypes.bfloat16), (2, 64), (2**40, 2))
tylo.prepare_tma(plan, huge)  # <-
""", "TMAError", "is not below 2^40 (rule R5)", located=False),
    Mistake("tma-dtype-of-another-plan", T, "an f16 array for a bf16 plan", _PRELUDE + """
tylo.prepare_tma(plan, np.zeros((256, 64), np.float16))  # <-
""", "TMAError", "has dtype Float16, but the plan TMATile(BFloat16, (128, 64), 1, 128) copies "
                 "BFloat16", located=False),
    Mistake("tma-l2-promotion-512", T, "an L2 promotion that is not 0, 64, 128 or 256 bytes", _PRELUDE + """
tylo.prepare_tma(plan, np.zeros((256, 64), ml_dtypes.bfloat16), l2_promotion=512)  # <-
""", "TMAError", "l2_promotion = 512 must be 0 (none), 64, 128 or 256 bytes", located=False),
    Mistake("tma-8-byte-elements", T, "a plan of 8-byte elements (R13: TMA tiles take 1, 2, 4 bytes)", """
tylo.TMATile(Float64, (64, 16), 1)  # <-
""", "PlanError", "dtype Float64 is 64 bits; TMA tiles take elements of 1, 2 or 4 bytes",
        located=False),
    Mistake("tma-box-over-256", T, "a box of more than 256 rows (R6: box extents at most 256)", """
tylo.TMATile(BFloat16, (512, 64), 1)  # <-
""", "GeometryError", "outer extent shape[0] = 512 exceeds 256", located=False),
    Mistake("tma-box-wider-than-the-swizzle", T, "an inner box extent other than one swizzle row (R9: the inner box is at most the swizzle span)", """
tylo.TMATile(BFloat16, (128, 128), 1)  # <-
""", "GeometryError", "inner extent shape[1] = 128 must be exactly one swizzle row, 64 elements "
                      "of 2 bytes", located=False),
    Mistake("tma-host-binding-on-the-gpu", T, "a binding of a host (numpy) array launched on the GPU", _PRELUDE + """
@tylo.kernel
def k(tm):
    tm.address()
tm = tylo.prepare_tma(plan, np.zeros((256, 64), ml_dtypes.bfloat16))
k[1, 32](tm)  # <-
""", "ArgumentError", "argument 'tm': is a tensor map of a host array", located=False),
    Mistake("tma-annotated-parameter", T, "a tensor-map parameter annotated as a Tensor", _PRELUDE + """
@tylo.kernel
def k(tm: tylo.Tensor(BFloat16, 2), out):
    out[0] = 1
tm = tylo.prepare_tma(plan, np.zeros((256, 64), ml_dtypes.bfloat16))
k.emulate[1, 32](tm, np.zeros(1, np.int64))  # <-
""", "ArgumentError", "argument 'tm': is a tensor map", located=False),
]
