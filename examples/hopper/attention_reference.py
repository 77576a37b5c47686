"""The references examples/hopper/attention.py's checks compare against, and their judge:
torch's attention in float32 (on the GPU's arrays), numpy's in float64 (for the emulator's
runs), and `report`, which prints and judges one check. Loaded by path from attention.py (the
examples are scripts, not a package)."""

from __future__ import annotations

import math


def reference(torch, Q, K, V, causal: bool, seq: int):
    """O and lse in float32 over the first `seq` rows (torch, on the arrays' device)."""
    q, k, v = (x[:, :, :seq].float() for x in (Q, K, V))
    z = q @ k.transpose(-1, -2) / math.sqrt(Q.shape[-1])
    if causal:
        z = z.masked_fill(torch.ones(seq, seq, device=z.device, dtype=torch.bool).triu(1),
                          -math.inf)
    return torch.softmax(z, dim=-1) @ v, torch.logsumexp(z, dim=-1)


def numpy_reference(Q, K, V, causal: bool, seq: int):
    """O and lse in float64 over the first `seq` rows (numpy arrays (B, H, S, D))."""
    import numpy as np

    q, k, v = (x[:, :, :seq].astype(np.float64) for x in (Q, K, V))
    z = q @ k.swapaxes(-1, -2) / math.sqrt(Q.shape[-1])
    if causal:
        z = np.where(np.triu(np.ones((seq, seq), bool), 1), -np.inf, z)
    lse = np.log(np.exp(z - z.max(-1, keepdims=True)).sum(-1)) + z.max(-1)
    return np.exp(z - lse[..., None]) @ v, lse


def report(name, O, lse, ref_o, ref_lse, seq, host) -> bool:
    """Print and judge one check: O within 1e-2 relative (bf16 output and P), lse within 2e-3,
    every row < seq written, every row >= seq untouched (NaN)."""
    import numpy as np

    o, l = host(O), host(lse)
    ro, rl = host(ref_o).astype(np.float64), host(ref_lse).astype(np.float64)
    written = not np.isnan(o[:, :, :seq]).any() and not np.isnan(l[:, :, :seq]).any()
    untouched = np.isnan(o[:, :, seq:]).all() and np.isnan(l[:, :, seq:]).all()
    err = float(np.linalg.norm(o[:, :, :seq] - ro) / np.linalg.norm(ro)) if written else math.inf
    lse_err = float(np.abs(l[:, :, :seq] - rl).max()) if written else math.inf
    good = written and untouched and err < 1e-2 and lse_err < 2e-3
    print(f"check {name}: O relative error {err:.2e}, lse max error {lse_err:.2e} (rows < seq "
          f"written: {written}, rows >= seq untouched: {untouched}) {'ok' if good else 'FAILED'}")
    return good
