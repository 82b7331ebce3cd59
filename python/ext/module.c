/* The voxa._voxa module: its method table comes from methods.h. */
#include "common.h"

static PyMethodDef methods[] = {
#define VX_METHOD(name, doc) {#name, (PyCFunction)(void (*)(void))vx_py_##name, METH_VARARGS | METH_KEYWORDS, doc},
#include "methods.h"
#undef VX_METHOD
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_voxa", "voxa C extension (use the voxa package)", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__voxa(void) { return PyModule_Create(&module); }
