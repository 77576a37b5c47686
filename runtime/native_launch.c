/* Tylo's compiled launcher: cuLaunchKernel and cuCtxGetCurrent called from C, for the generated
 * launch functions of runtime/binding.py and runtime/prepared.py (runtime/native.py builds and
 * loads this file; read its docstring).
 *
 * The driver's entry points are looked up once, by bind(library, launch_symbol), with dlopen and
 * dlsym, and kept in the module's state (each loaded module object has its own, so a test may
 * bind a second module to a stand-in library). Arguments are read with the vectorcall
 * convention (METH_FASTCALL); every handle and address is a Python int. The GIL is released
 * around cuLaunchKernel, as cuda-python does: the driver may block there (a full launch queue).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <limits.h>

typedef int (*launch_fn)(void *f, unsigned int gx, unsigned int gy, unsigned int gz,
                         unsigned int bx, unsigned int by, unsigned int bz,
                         unsigned int shared_bytes, void *stream, void **params, void **extra);
typedef int (*current_fn)(void **context);

typedef struct {
    void *library;
    launch_fn launch;
    current_fn current;
} state_t;

static state_t *state_of(PyObject *module) { return (state_t *)PyModule_GetState(module); }

static int as_pointer(PyObject *value, const char *what, void **out) {
    if (!PyLong_Check(value)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s", what,
                     Py_TYPE(value)->tp_name);
        return -1;
    }
    *out = PyLong_AsVoidPtr(value);
    return (*out == NULL && PyErr_Occurred()) ? -1 : 0;
}

static int as_uint(PyObject *value, const char *what, unsigned int *out) {
    if (!PyLong_Check(value)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s", what,
                     Py_TYPE(value)->tp_name);
        return -1;
    }
    unsigned long v = PyLong_AsUnsignedLong(value);
    if (v == (unsigned long)-1 && PyErr_Occurred())
        return -1;
    if (v > UINT_MAX) {
        PyErr_Format(PyExc_OverflowError, "%s %lu does not fit an unsigned int", what, v);
        return -1;
    }
    *out = (unsigned int)v;
    return 0;
}

static const char *const NAMES[] = {"function", "grid x", "grid y", "grid z", "block x",
                                    "block y", "block z", "shared_bytes", "stream", "params"};

typedef struct {
    void *function, *stream, *params;
    unsigned int dims[7]; /* grid x, y, z, block x, y, z, shared_bytes */
} call_t;

static state_t *bound(PyObject *module, const char *what) {
    state_t *st = state_of(module);
    if (st == NULL || st->launch == NULL) {
        PyErr_Format(PyExc_RuntimeError, "%s(): bind() has not found the driver", what);
        return NULL;
    }
    return st;
}

/* The 10 arguments of launch() from args[0..9]; -1 with an exception set on a bad one. */
static int read_call(PyObject *const *args, call_t *c) {
    if (as_pointer(args[0], NAMES[0], &c->function) < 0)
        return -1;
    for (int i = 0; i < 7; i++)
        if (as_uint(args[1 + i], NAMES[1 + i], &c->dims[i]) < 0)
            return -1;
    if (as_pointer(args[8], NAMES[8], &c->stream) < 0 || as_pointer(args[9], NAMES[9], &c->params) < 0)
        return -1;
    return 0;
}

static PyObject *call_driver(state_t *st, const call_t *c) {
    int err;
    Py_BEGIN_ALLOW_THREADS
    err = st->launch(c->function, c->dims[0], c->dims[1], c->dims[2], c->dims[3], c->dims[4],
                     c->dims[5], c->dims[6], c->stream, (void **)c->params, NULL);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(err);
}

/* launch(function, gx, gy, gz, bx, by, bz, shared_bytes, stream, params) -> CUresult (int) */
static PyObject *launch(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    call_t c;
    if (nargs != 10) {
        PyErr_Format(PyExc_TypeError, "launch() takes 10 arguments (%zd given)", nargs);
        return NULL;
    }
    state_t *st = bound(module, "launch");
    if (st == NULL || read_call(args, &c) < 0)
        return NULL;
    return call_driver(st, &c);
}

/* launch_in(context, function, gx, ..., params) -> CUresult (int), or -1 without launching
 * when `context` is not the thread's current context (or cuCtxGetCurrent fails) */
static PyObject *launch_in(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    call_t c;
    void *expected, *current = NULL;
    if (nargs != 11) {
        PyErr_Format(PyExc_TypeError, "launch_in() takes 11 arguments (%zd given)", nargs);
        return NULL;
    }
    state_t *st = bound(module, "launch_in");
    if (st == NULL || as_pointer(args[0], "context", &expected) < 0 || read_call(args + 1, &c) < 0)
        return NULL;
    if (st->current(&current) != 0 || current != expected)
        return PyLong_FromLong(-1);
    return call_driver(st, &c);
}

/* current_context() -> the thread's current CUcontext as an int (0: none, or the call failed) */
static PyObject *current_context(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    state_t *st = state_of(module);
    void *context = NULL;
    (void)args;
    if (nargs != 0) {
        PyErr_Format(PyExc_TypeError, "current_context() takes no arguments (%zd given)", nargs);
        return NULL;
    }
    if (st == NULL || st->current == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "current_context(): bind() has not found the driver");
        return NULL;
    }
    if (st->current(&context) != 0)
        context = NULL;
    return PyLong_FromVoidPtr(context);
}

/* bind(library, launch_symbol): dlopen the driver library, dlsym its entry points */
static PyObject *bind(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    state_t *st = state_of(module);
    if (st == NULL) { /* module_from_spec without exec_module: no state allocated */
        PyErr_SetString(PyExc_RuntimeError, "bind(): the module was not executed");
        return NULL;
    }
    if (nargs != 2 || !PyUnicode_Check(args[0]) || !PyUnicode_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "bind(library: str, launch_symbol: str)");
        return NULL;
    }
    const char *path = PyUnicode_AsUTF8(args[0]), *symbol = PyUnicode_AsUTF8(args[1]);
    if (path == NULL || symbol == NULL)
        return NULL;
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        PyErr_Format(PyExc_OSError, "dlopen(%s): %s", path, dlerror());
        return NULL;
    }
    void *launch_entry = dlsym(library, symbol), *current_entry = dlsym(library, "cuCtxGetCurrent");
    if (launch_entry == NULL || current_entry == NULL) {
        PyErr_Format(PyExc_OSError, "%s has no %s", path,
                     launch_entry == NULL ? symbol : "cuCtxGetCurrent");
        dlclose(library);
        return NULL;
    }
    /* an earlier library stays open: another thread may be calling into it */
    st->library = library;
    st->current = (current_fn)current_entry;
    st->launch = (launch_fn)launch_entry;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"launch", (PyCFunction)(void (*)(void))launch, METH_FASTCALL,
     "launch(function, gx, gy, gz, bx, by, bz, shared_bytes, stream, params) -> CUresult"},
    {"launch_in", (PyCFunction)(void (*)(void))launch_in, METH_FASTCALL,
     "launch_in(context, function, gx, ..., params) -> CUresult, -1: context not current"},
    {"current_context", (PyCFunction)(void (*)(void))current_context, METH_FASTCALL,
     "current_context() -> the current CUcontext handle (0: none)"},
    {"bind", (PyCFunction)(void (*)(void))bind, METH_FASTCALL,
     "bind(library, launch_symbol): resolve the driver's entry points"},
    {NULL, NULL, 0, NULL},
};

/* No Python object is kept in C statics (the driver's entry points live in the module's
 * state), so the module works in subinterpreters and without the GIL (free-threaded builds). */
static PyModuleDef_Slot slots[] = {
#ifdef Py_mod_multiple_interpreters
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
#ifdef Py_mod_gil
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL},
};

static struct PyModuleDef definition = {
    PyModuleDef_HEAD_INIT, "_tylo_launch", "Tylo's compiled kernel launcher.",
    sizeof(state_t), methods, slots, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__tylo_launch(void) { return PyModuleDef_Init(&definition); }
