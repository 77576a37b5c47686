"""The Python frontend: decorated kernels, their tracing into the tylo dialect, and launches.

* `language`: the kernel language, the builtins a kernel body calls (tiles, fragments, copies,
  TMA, WGMMA, tcgen05, mbarriers, synchronization, shuffles, votes, reductions, printing ...).
* `tracing`: turning a kernel's Python into IR (the trace context, the AST rewrite, the source
  and its locations, runtime control flow and the values it carries).
* `jit`: ``@tylo.kernel`` and what it compiles and launches (compiled kernels, the build, the
  launcher, the disk cache, autotuning, the compile-cache dependencies, ``kernel.emulate``).
"""
