"""The kernel language: the builtins a kernel body calls while it is traced, each recording IR
(tiles and pointers, fragments, copies, TMA, WGMMA, tcgen05, mbarriers and pipelines, clusters,
synchronization, shuffles, votes, reductions, softmax, atomics, packing, printing). Each module
declares the names it adds to `tylo` in ``EXPORTS``."""
