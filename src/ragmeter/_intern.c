/* ragmeter._intern: distinct values, each with an int32 code (see ragmeter/interning.py).
 *
 * The fast agentic reader gives every URL, title and snippet of a million results a code into
 * a table of the distinct ones. In Python that is a dict lookup per value, and each lookup
 * waits on memory three times (the dict's index, its entry, the stored string to compare);
 * this table takes the values a block at a time and asks the memory for the slots, then for
 * the stored values, before it looks at any of them. Same codes as interning.PyInterner, which
 * is the reference and the fallback when this module is not built.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

typedef struct {
    int32_t code;     /* 0: an empty slot (code 0 is None, which is never stored) */
    uint32_t tag;     /* the high half of the value's hash */
    PyObject *known;  /* values[code], borrowed: the list holds it */
} Slot;

#define TAG(h) ((uint32_t)((uint64_t)(h) >> 32))
#define BLOCK 32

typedef struct {
    PyObject_HEAD
    PyObject *values; /* list: values[code]; values[0] is None */
    Slot *slots;
    size_t mask;      /* slots - 1 (a power of two) */
} Interner;

/* At least 2 slots per value up to `wanted` values: called when half full, it doubles the table. */
static int
grow(Interner *self, size_t wanted)
{
    size_t size = 16;
    while (size < 2 * wanted) size <<= 1;
    Slot *slots = PyMem_Calloc(size, sizeof(Slot));
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    if (self->slots != NULL) {
        for (size_t i = 0; i <= self->mask; i++) {
            Slot s = self->slots[i];
            if (s.code == 0) continue;
            /* Hashed before, so this does not fail (and a str keeps its hash). */
            size_t j = (size_t)PyObject_Hash(s.known) & (size - 1);
            while (slots[j].code != 0) j = (j + 1) & (size - 1);
            slots[j] = s;
        }
        PyMem_Free(self->slots);
    }
    self->slots = slots;
    self->mask = size - 1;
    return 0;
}

static int
equal(PyObject *known, PyObject *value)
{
    if (known == value) return 1;
    if (PyUnicode_CheckExact(known) && PyUnicode_CheckExact(value)) {
        /* Python keeps every str in its narrowest kind, so equal ones have equal kinds. */
        Py_ssize_t length = PyUnicode_GET_LENGTH(known);
        return length == PyUnicode_GET_LENGTH(value) && PyUnicode_KIND(known) == PyUnicode_KIND(value)
               && memcmp(PyUnicode_DATA(known), PyUnicode_DATA(value), length * PyUnicode_KIND(known)) == 0;
    }
    return PyObject_RichCompareBool(known, value, Py_EQ);
}

/* The slot of `value` whose hash is `hash`: its own, or the empty one where it would go; -1 with an
 * exception set. A comparison that runs Python code which changes this table starts the search again. */
static Py_ssize_t
find(Interner *self, PyObject *value, Py_hash_t hash)
{
restart:;
    Slot *slots = self->slots;
    size_t i = (size_t)hash & self->mask;
    for (;;) {
        Slot s = slots[i];
        if (s.code == 0 || s.tag == TAG(hash)) {
            if (s.code == 0) return (Py_ssize_t)i;
            Py_INCREF(s.known);
            int eq = equal(s.known, value);
            Py_DECREF(s.known);
            if (eq < 0) return -1;
            if (self->slots != slots) goto restart;
            if (eq) return (Py_ssize_t)i;
        }
        i = (i + 1) & self->mask;
    }
}

/* The code of `value` whose hash is `hash` (added when new), or -1 with an exception set. */
static int32_t
code_of(Interner *self, PyObject *value, Py_hash_t hash)
{
    if (value == Py_None) return 0;
    Py_ssize_t i = find(self, value, hash);
    if (i < 0) return -1;
    if (self->slots[i].code != 0) return self->slots[i].code;
    Py_ssize_t n = PyList_GET_SIZE(self->values);
    if (n >= INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "more than 2**31 - 1 distinct values");
        return -1;
    }
    if (PyList_Append(self->values, value) < 0) return -1;
    self->slots[i] = (Slot){(int32_t)n, TAG(hash), value};
    if ((size_t)(n + 1) * 2 > self->mask + 1 && grow(self, (size_t)(n + 1)) < 0) return -1;
    return (int32_t)n;
}

/* Empty the table: code 0 (None) only. Unchanged when memory runs out. */
static int
reset(Interner *self)
{
    PyObject *values = PyList_New(1);
    if (values == NULL) return -1;
    Slot *slots = PyMem_Calloc(16, sizeof(Slot));
    if (slots == NULL) {
        Py_DECREF(values);
        PyErr_NoMemory();
        return -1;
    }
    PyList_SET_ITEM(values, 0, Py_NewRef(Py_None));
    Py_XSETREF(self->values, values);
    PyMem_Free(self->slots);
    self->slots = slots;
    self->mask = 15;
    return 0;
}

static PyObject *
Interner_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, ":Interner", kwlist)) return NULL;
    Interner *self = (Interner *)type->tp_alloc(type, 0);
    if (self != NULL && reset(self) < 0) Py_CLEAR(self);
    return (PyObject *)self;
}

static void
Interner_dealloc(Interner *self)
{
    Py_XDECREF(self->values);
    PyMem_Free(self->slots);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static void
release(PyObject **values, Py_ssize_t count)
{
    for (Py_ssize_t k = 0; k < count; k++) Py_DECREF(values[k]);
}

/* codes(items, attr=None) -> bytes: the native int32 code of each item, or of its attribute. */
static PyObject *
Interner_codes(Interner *self, PyObject *args)
{
    PyObject *items, *attr = Py_None;
    if (!PyArg_ParseTuple(args, "O|O:codes", &items, &attr)) return NULL;
    if (attr != Py_None && !PyUnicode_Check(attr)) {
        PyErr_SetString(PyExc_TypeError, "attr must be a str or None");
        return NULL;
    }
    PyObject *seq = PySequence_Fast(items, "items must be a list or tuple");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *out = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int32_t));
    if (out == NULL) {
        Py_DECREF(seq);
        return NULL;
    }
    int32_t *codes = (int32_t *)PyBytes_AS_STRING(out);
    PyObject *values[BLOCK];
    Py_hash_t hashes[BLOCK];
    for (Py_ssize_t start = 0; start < n; start += BLOCK) {
        Py_ssize_t m = n - start < BLOCK ? n - start : BLOCK;
        /* 1. each value and its hash; ask for its home slot */
        for (Py_ssize_t k = 0; k < m; k++) {
            /* Read again each time: a value's __hash__, __eq__ or attribute may change the list. */
            if (start + k >= PySequence_Fast_GET_SIZE(seq)) {
                PyErr_SetString(PyExc_RuntimeError, "the items changed size while they were coded");
                release(values, k);
                goto fail;
            }
            PyObject *value = Py_NewRef(PySequence_Fast_GET_ITEM(seq, start + k));
            if (attr != Py_None) {
                PyObject *item = value;
                value = PyObject_GetAttr(item, attr);
                Py_DECREF(item);
                if (value == NULL) {
                    release(values, k);
                    goto fail;
                }
            }
            values[k] = value;
            hashes[k] = value == Py_None ? 0 : PyObject_Hash(value);
            if (hashes[k] == -1) {
                release(values, k + 1);
                goto fail;
            }
            PREFETCH(&self->slots[(size_t)hashes[k] & self->mask]);
        }
        /* 2. ask for the stored value a home slot names, when it may be equal */
        for (Py_ssize_t k = 0; k < m; k++) {
            Slot *home = &self->slots[(size_t)hashes[k] & self->mask];
            if (home->code != 0 && home->tag == TAG(hashes[k])) {
                PREFETCH(home->known);
                PREFETCH((char *)home->known + 64);
            }
        }
        /* 3. the codes */
        for (Py_ssize_t k = 0; k < m; k++) {
            int32_t code = code_of(self, values[k], hashes[k]);
            if (code < 0) {
                release(values, m);
                goto fail;
            }
            codes[start + k] = code;
        }
        release(values, m);
    }
    Py_DECREF(seq);
    return out;
fail:
    Py_DECREF(seq);
    Py_DECREF(out);
    return NULL;
}

/* get(value) -> int | None: the code of a value, without adding it. */
static PyObject *
Interner_get(Interner *self, PyObject *value)
{
    if (value == Py_None) return PyLong_FromLong(0);
    Py_hash_t hash = PyObject_Hash(value);
    if (hash == -1) return NULL;
    Py_ssize_t i = find(self, value, hash);
    if (i < 0) return NULL;
    int32_t code = self->slots[i].code;
    if (code == 0) Py_RETURN_NONE;
    return PyLong_FromLong(code);
}

static PyObject *
Interner_take(Interner *self, PyObject *Py_UNUSED(ignored))
{
    PyObject *values = Py_NewRef(self->values);
    if (reset(self) < 0) {
        Py_DECREF(values);
        return NULL;
    }
    return values;
}

static PyObject *
Interner_values(Interner *self, void *Py_UNUSED(closure))
{
    return PyList_GetSlice(self->values, 0, PyList_GET_SIZE(self->values));
}

static Py_ssize_t
Interner_len(Interner *self)
{
    return PyList_GET_SIZE(self->values);
}

static PyMethodDef Interner_methods[] = {
    {"codes", (PyCFunction)Interner_codes, METH_VARARGS,
     "codes(items, attr=None) -> bytes: the native int32 code of each item (or of its attribute attr)."},
    {"get", (PyCFunction)Interner_get, METH_O, "get(value) -> int | None: a value's code, without adding it."},
    {"take", (PyCFunction)Interner_take, METH_NOARGS, "take() -> list: the distinct values by code; the table is emptied."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Interner_getset[] = {
    {"values", (getter)Interner_values, NULL, "The distinct values by code (a new list).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods Interner_as_sequence = {
    .sq_length = (lenfunc)Interner_len,
};

static PyTypeObject InternerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ragmeter._intern.Interner",
    .tp_basicsize = sizeof(Interner),
    .tp_dealloc = (destructor)Interner_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Distinct values, each with an int32 code; code 0 is None.",
    .tp_methods = Interner_methods,
    .tp_getset = Interner_getset,
    .tp_as_sequence = &Interner_as_sequence,
    .tp_new = Interner_new,
};

/* _equal(a, b) -> bool: the table's comparison (two strs reach it only when half their hashes agree). */
static PyObject *
module_equal(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "_equal takes two values");
        return NULL;
    }
    int eq = equal(args[0], args[1]);
    if (eq < 0) return NULL;
    return PyBool_FromLong(eq);
}

static PyMethodDef module_methods[] = {
    {"_equal", (PyCFunction)(void (*)(void))module_equal, METH_FASTCALL, "The table's comparison of two values (for tests)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef intern_module = {
    PyModuleDef_HEAD_INIT, "ragmeter._intern", "Distinct values with int32 codes (see ragmeter.interning).",
    -1, module_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__intern(void)
{
    if (PyType_Ready(&InternerType) < 0) return NULL;
    PyObject *module = PyModule_Create(&intern_module);
    if (module == NULL) return NULL;
    if (PyModule_AddObjectRef(module, "Interner", (PyObject *)&InternerType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
