"""The argument rules of Tylo's ops on 8-bit WGMMA operands (`scaled_matmul`'s FP8,
`int_mm`'s integers): both read a (M, K) and b (K, N) K-major through TMA, as the ISA asks
(PTX ISA 9.7.15.5.2: the 8-bit forms of wgmma.mma_async have no imm-trans) and as torch's
_scaled_mm and _int_mm take them."""

from __future__ import annotations

from tylo import ArgumentError


def check_operands(a, b, op: str, dtypes: dict, rule: str, n_multiple: int, out: str) -> None:
    """ArgumentError naming a or b unless: each is 2-D, of a dtype in `dtypes` (torch dtype ->
    name), on a's device; b's rows match a's K; a is row-major (M, K) and b column-major (K, N),
    K contiguous (`rule`: why, in the op's words); K is a multiple of 16 and N of `n_multiple`
    (`out`: the output's dtype, whose rows TMA stores); the other strides are multiples of 16
    bytes and the data 16-byte aligned (1-byte elements). `op` names the op in the messages.
    An empty product (M, N or K of 0: nothing is read) is not held to the TMA rules."""
    for name, x in (("a", a), ("b", b)):
        if x.dtype not in dtypes:
            raise ArgumentError(name, f"is {x.dtype}; {op} takes "
                                      + " or ".join(f"torch.{t}" for t in dtypes.values()))
        if x.dim() != 2:
            raise ArgumentError(name, f"has {x.dim()} dimensions; {op} takes a (M, K) and b "
                                      "(K, N)")
        if x.device != a.device:
            raise ArgumentError(name, f"is on {x.device}, a on {a.device}")
    (M, K), N = a.shape, b.shape[1]
    if b.shape[0] != K:
        raise ArgumentError("b", f"has shape {tuple(b.shape)}; a {tuple(a.shape)} needs ({K}, N)")
    if a.stride(1) != 1 and K > 1:
        raise ArgumentError("a", f"has strides {tuple(a.stride())}: a must be row-major (M, K), K "
                                 f"contiguous: {rule}")
    if b.stride(0) != 1 and K > 1:
        raise ArgumentError("b", f"has strides {tuple(b.stride())}: b must be column-major (K, "
                                 f"N), K contiguous (b = W.t() of a row-major (N, K) W): {rule}")
    if K % 16:
        raise ArgumentError("a", f"has K = {K}; K must be a multiple of 16 (TMA: the rows of a and "
                                 "b are 16-byte multiples)")
    if N % n_multiple:
        raise ArgumentError("b", f"has N = {N}; N must be a multiple of {n_multiple} (TMA: the "
                                 f"{out} rows of out are 16-byte multiples)")
    if not (M and N and K):
        return
    for name, x, pitch in (("a", a, a.stride(0) if M > 1 else K),
                           ("b", b, b.stride(1) if N > 1 else K)):
        if pitch % 16:
            raise ArgumentError(name, f"has strides {tuple(x.stride())}: its rows of K must lie a "
                                      "multiple of 16 bytes apart (TMA)")
        if x.storage_offset() % 16:  # 1-byte elements; torch's allocations are aligned
            raise ArgumentError(name, f"starts {x.storage_offset()} bytes into its storage: its "
                                      "data must be 16-byte aligned (TMA)")
