"""Peer kernels Tylo's benchmarks time in the same run (Triton), imported only on a GPU."""
