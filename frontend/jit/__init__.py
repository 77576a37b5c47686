"""``@tylo.kernel`` and its machinery: the kernel object and compile cache (`kernel`), the build
from a trace to PTX and a cubin (`build`), compiled kernels (`compiled`), launches (`launcher`),
the disk cache (`disk_cache`), what a kernel reads for its cache key (`dependencies`),
autotuning (`autotune`) and runs on the CPU emulator (`emulate`)."""
