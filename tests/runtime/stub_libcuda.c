/* A stand-in for libcuda.so.1 that records launches, for tests/runtime/test_native_launch.py
 * (compiled there with the C compiler that builds the launcher, runtime/native_launch.c) and
 * bench/native_launch_cpu.py (cuda-python and the compiled launcher calling the same stub).
 *
 * cuLaunchKernel (and its per-thread-stream variant) store their arguments and the first
 * `config.sizes[i]` bytes of each kernelParams entry in `record`, and return `config.result`;
 * cuCtxGetCurrent returns `config.context`. With `config.hold` set, a launch waits (at most
 * 5 s) until `config.hold` is cleared, to show that the caller released the GIL meanwhile.
 * cuInit, cuDriverGetVersion and cuGetProcAddress(_v2) are what cuda-python needs to load it;
 * the device, context, module and function calls below answer what Tylo's runtime/driver.py
 * asks on its way to a launch (one device of compute capability 9.0, whose primary context is
 * 0x1000; every module is 0x2000 and every function 0xF00D), so that a whole Tylo launch path
 * runs through cuda-python on a machine without a GPU (LD_LIBRARY_PATH naming the stub's
 * folder).
 */
#include <stdint.h>
#include <string.h>
#include <time.h>

#define SLOTS 16
#define SLOT_BYTES 128

typedef struct {
    uint64_t context;
    int32_t result;
    int32_t count;             /* kernelParams entries to read */
    int32_t sizes[SLOTS];      /* bytes to copy of each */
    volatile int32_t hold;     /* nonzero: a launch waits until it is cleared */
} config_t;

typedef struct {
    uint64_t calls, function, stream, params, extra;
    uint32_t grid[3], block[3], shared_bytes, per_thread_stream;
    volatile int32_t holding;  /* a launch is waiting on config.hold */
    int32_t held_out;          /* the wait ran out: the caller kept the GIL */
    uint8_t slots[SLOTS][SLOT_BYTES];
} record_t;

config_t config;
record_t record;

static int record_launch(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                         unsigned by, unsigned bz, unsigned smem, void *stream, void **params,
                         void **extra, unsigned per_thread) {
    record.calls++;
    record.function = (uint64_t)(uintptr_t)f;
    record.grid[0] = gx, record.grid[1] = gy, record.grid[2] = gz;
    record.block[0] = bx, record.block[1] = by, record.block[2] = bz;
    record.shared_bytes = smem;
    record.stream = (uint64_t)(uintptr_t)stream;
    record.params = (uint64_t)(uintptr_t)params;
    record.extra = (uint64_t)(uintptr_t)extra;
    record.per_thread_stream = per_thread;
    for (int i = 0; i < config.count && i < SLOTS && params != NULL; i++) {
        int n = config.sizes[i] < SLOT_BYTES ? config.sizes[i] : SLOT_BYTES;
        memcpy(record.slots[i], params[i], (size_t)n);
    }
    if (config.hold) {
        struct timespec ms = {0, 1000000};
        record.holding = 1;
        for (int waited = 0; config.hold && waited < 5000; waited++)
            nanosleep(&ms, NULL);
        record.held_out = config.hold != 0;
        record.holding = 0;
    }
    return config.result;
}

int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned smem, void *stream, void **params, void **extra) {
    return record_launch(f, gx, gy, gz, bx, by, bz, smem, stream, params, extra, 0);
}

int cuLaunchKernel_ptsz(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned smem, void *stream, void **params,
                        void **extra) {
    return record_launch(f, gx, gy, gz, bx, by, bz, smem, stream, params, extra, 1);
}

int cuCtxGetCurrent(void **context) {
    *context = (void *)(uintptr_t)config.context;
    return config.context == UINT64_MAX ? 201 : 0; /* all ones: CUDA_ERROR_INVALID_CONTEXT */
}

int cuInit(unsigned flags) { (void)flags; return 0; }

static uint64_t pushed = 0;

int cuCtxSetCurrent(void *context) { config.context = (uint64_t)(uintptr_t)context; return 0; }
int cuCtxPushCurrent(void *context) { pushed = config.context; return cuCtxSetCurrent(context); }
int cuCtxPopCurrent(void **context) {
    *context = (void *)(uintptr_t)config.context;
    config.context = pushed;
    return 0;
}
int cuCtxGetDevice(int *device) { *device = 0; return 0; }
int cuDeviceGetCount(int *count) { *count = 1; return 0; }
int cuDeviceGet(int *device, int ordinal) { *device = ordinal; return ordinal == 0 ? 0 : 101; }
int cuDeviceGetAttribute(int *value, int attribute, int device) {
    (void)device; /* 75, 76: compute capability; 97: shared memory per block, opt-in */
    *value = attribute == 75 ? 9 : attribute == 76 ? 0 : attribute == 97 ? 232448 : 0;
    return 0;
}
int cuDevicePrimaryCtxRetain(void **context, int device) {
    *context = (void *)(uintptr_t)(0x1000 + device);
    return 0;
}
int cuModuleLoadData(void **module, const void *image) { (void)image; *module = (void *)0x2000; return 0; }
int cuModuleGetFunction(void **function, void *module, const char *name) {
    (void)module, (void)name;
    *function = (void *)0xF00D;
    return 0;
}
int cuFuncGetAttribute(int *value, int attribute, void *function) {
    (void)function; /* 0: max threads per block; 1: static shared bytes */
    *value = attribute == 0 ? 1024 : 0;
    return 0;
}
int cuFuncSetAttribute(void *function, int attribute, int value) {
    (void)function, (void)attribute, (void)value;
    return 0;
}
int cuGetErrorString(int error, const char **text) { (void)error; *text = "stub error"; return 0; }
int cuGetErrorName(int error, const char **text) { (void)error; *text = "CUDA_ERROR_STUB"; return 0; }

int cuDriverGetVersion(int *version) { *version = 13000; return 0; }

int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags,
                        int *status) {
    (void)version;
    struct { const char *name; void *entry; } table[] = {
        {"cuLaunchKernel", (void *)(flags & 2 ? cuLaunchKernel_ptsz : cuLaunchKernel)},
        {"cuCtxGetCurrent", (void *)cuCtxGetCurrent},
        {"cuInit", (void *)cuInit},
        {"cuDriverGetVersion", (void *)cuDriverGetVersion},
        {"cuGetProcAddress", (void *)cuGetProcAddress_v2},
        {"cuCtxSetCurrent", (void *)cuCtxSetCurrent},
        {"cuCtxPushCurrent", (void *)cuCtxPushCurrent},
        {"cuCtxPopCurrent", (void *)cuCtxPopCurrent},
        {"cuCtxGetDevice", (void *)cuCtxGetDevice},
        {"cuDeviceGetCount", (void *)cuDeviceGetCount},
        {"cuDeviceGet", (void *)cuDeviceGet},
        {"cuDeviceGetAttribute", (void *)cuDeviceGetAttribute},
        {"cuDevicePrimaryCtxRetain", (void *)cuDevicePrimaryCtxRetain},
        {"cuModuleLoadData", (void *)cuModuleLoadData},
        {"cuModuleGetFunction", (void *)cuModuleGetFunction},
        {"cuFuncGetAttribute", (void *)cuFuncGetAttribute},
        {"cuFuncSetAttribute", (void *)cuFuncSetAttribute},
        {"cuGetErrorString", (void *)cuGetErrorString},
        {"cuGetErrorName", (void *)cuGetErrorName},
    };
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
        if (strcmp(symbol, table[i].name) == 0) {
            *pfn = table[i].entry;
            if (status != NULL)
                *status = 0;
            return 0;
        }
    *pfn = NULL;
    if (status != NULL)
        *status = 1; /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */
    return 500;      /* CUDA_ERROR_NOT_FOUND */
}

int cuGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags) {
    return cuGetProcAddress_v2(symbol, pfn, version, flags, NULL);
}
