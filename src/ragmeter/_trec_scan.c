/* ragmeter._trec_scan: one pass over a regular TREC run or qrels file (see ragmeter/io/trec_scan.py).
 *
 * A regular file is what trec_eval, the exact reader and pyarrow all split the same way: every
 * line has exactly the expected fields, each of printable ASCII (0x21..0x7E), one delimiter (a
 * space or a tab) between them, and ends at a newline (the last one may not). The scan gives the
 * docno column (Arrow string offsets and bytes), the value column and the topic of each run of
 * lines with one topic, in one pass without the GIL. Anything else (a comment, a blank line, a
 * carriage return, a control or non-ASCII byte, a number beyond the exactly rounded range below)
 * makes it give up, and the caller reads the bytes with pyarrow as before.
 *
 * xor_docno_hashes hashes the strings of any Arrow string column as ragmeter.io.docnos does (the
 * keys of (topic, docno) pairs), in one pass instead of numpy's several.
 *
 * Numbers: a score is [+-]?(digits[.digits]|.digits)([eE][+-]?digits)?, the exact reader's grammar.
 * Its value is w * 10^e with w the significant digits (at most 2^53) and |e| <= 22: both factors
 * are exact doubles, so one IEEE multiplication or division rounds the decimal correctly, as
 * Python's float() and pyarrow do (Clinger's fast path). Other spellings give up. A relevance
 * is [+-]?digits (at most 18), read through int64 as the exact reader does ("-0" is 0).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
#include <stdint.h>
#include <string.h>

#define MIX 0x9E3779B97F4A7C15ULL

static const double POW10[23] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

typedef struct {
    Py_ssize_t start; /* byte offset of the run's topic */
    Py_ssize_t size;  /* its length */
    int32_t lines;    /* lines in the run */
} Run;

/* The first byte at or after p that is not printable ASCII (0x21..0x7E), or end. */
static inline const unsigned char *
field_end(const unsigned char *p, const unsigned char *end)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && (defined(__GNUC__) || defined(__clang__))
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    while (end - p >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        /* A flag in each byte below 0x21 or above 0x7E (its lowest flag is exact). */
        uint64_t low = (v - ones * 0x21) & ~v & highs;
        uint64_t high = ((v + ones * 0x01) | v) & highs;
        uint64_t stop = low | high;
        if (stop) return p + (__builtin_ctzll(stop) >> 3);
        p += 8;
    }
#endif
    while (p < end && (unsigned char)(*p - 0x21) < 0x5E) p++;
    return p;
}

/* A score's value into *out; 0 if its spelling is not plain or not in the exactly rounded range. */
static inline int
decimal(const unsigned char *p, const unsigned char *end, double *out)
{
    int negative = 0;
    if (*p == '+' || *p == '-') negative = *p++ == '-';
    uint64_t w = 0;
    int digits = 0, seen = 0, exponent = 0;
    for (; p < end && (unsigned)(*p - '0') < 10; p++, seen++) {
        if (w == 0 && *p == '0') continue; /* leading zeros */
        if (++digits > 19) return 0;
        w = w * 10 + (*p - '0');
    }
    if (p < end && *p == '.') {
        for (p++; p < end && (unsigned)(*p - '0') < 10; p++, seen++) {
            exponent--;
            if (w == 0 && *p == '0') continue;
            if (++digits > 19) return 0;
            w = w * 10 + (*p - '0');
        }
    }
    if (!seen) return 0; /* "", ".", "+", "e5" */
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        int minus = 0, e = 0, e_digits = 0;
        if (p < end && (*p == '+' || *p == '-')) minus = *p++ == '-';
        for (; p < end && (unsigned)(*p - '0') < 10; p++) {
            if (++e_digits > 4) return 0;
            e = e * 10 + (*p - '0');
        }
        if (!e_digits) return 0;
        exponent += minus ? -e : e;
    }
    if (p != end) return 0;
    double value;
    if (w == 0) {
        value = 0.0;
    }
    else {
        if (w > (1ULL << 53) || exponent < -22 || exponent > 22) return 0;
        value = exponent < 0 ? (double)w / POW10[-exponent] : (double)w * POW10[exponent];
    }
    *out = negative ? -value : value;
    return 1;
}

/* A relevance's value into *out: [+-]?digits, at most 18 of them; else 0. */
static inline int
whole(const unsigned char *p, const unsigned char *end, double *out)
{
    int negative = 0;
    if (*p == '+' || *p == '-') negative = *p++ == '-';
    if (p == end || end - p > 18) return 0;
    int64_t v = 0;
    for (; p < end; p++) {
        if ((unsigned)(*p - '0') >= 10) return 0;
        v = v * 10 + (*p - '0');
    }
    *out = (double)(negative ? -v : v);
    return 1;
}

/* The docno hash of ragmeter.io.docnos (its _chunk_hashes): 8 bytes at a time, little-endian.
 * Bytes up to `end` may be read past the docno (then masked off): one load, not a byte copy. */
static inline uint64_t
docno_hash(const unsigned char *p, Py_ssize_t size, const unsigned char *end)
{
    uint64_t h = (uint64_t)size * MIX;
    for (Py_ssize_t at = 0; at < size; at += 8) {
        uint64_t word = 0;
        Py_ssize_t n = size - at < 8 ? size - at : 8;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (end - (p + at) >= 8) {
            memcpy(&word, p + at, 8);
            if (n < 8) word &= ~0ULL >> (64 - 8 * n);
        }
        else
#endif
            for (Py_ssize_t i = n - 1; i >= 0; i--) word = (word << 8) | p[at + i];
        h ^= word;
        h *= MIX;
        h ^= h >> 29;
    }
    return h;
}

typedef struct {
    const unsigned char *data;
    Py_ssize_t start, stop;
    int fields, value_field, is_whole;
    unsigned char delimiter;
    int32_t *offsets;   /* lines + 1 */
    unsigned char *bytes;
    double *values;
    Py_ssize_t capacity; /* lines the arrays hold */
    Run *runs;
    Py_ssize_t most_runs;
    /* out */
    Py_ssize_t lines, used, run_count;
} Scan;

/* 1 if the whole piece is regular (the outputs are filled), 0 if not. */
static int
scan(Scan *s)
{
    const unsigned char *base = s->data, *p = base + s->start, *end = base + s->stop;
    Py_ssize_t line = 0, used = 0, runs = 0;
    const unsigned char *topic = NULL;
    Py_ssize_t topic_size = 0;
    s->offsets[0] = 0;
    while (p < end) {
        if (line >= s->capacity) return 0;
        for (int f = 0; f < s->fields; f++) {
            const unsigned char *first = p;
            p = field_end(p, end);
            Py_ssize_t size = p - first;
            if (size == 0) return 0;
            if (f == 0) {
                if (*first == '#') return 0; /* a comment line */
                if (topic == NULL || size != topic_size || memcmp(first, topic, size) != 0) {
                    if (runs >= s->most_runs) return 0;
                    s->runs[runs].start = first - base;
                    s->runs[runs].size = size;
                    s->runs[runs].lines = 0;
                    runs++;
                    topic = first;
                    topic_size = size;
                }
                s->runs[runs - 1].lines++;
            }
            else if (f == 2) {
                memcpy(s->bytes + used, first, size);
                used += size;
                s->offsets[line + 1] = (int32_t)used;
            }
            else if (f == s->value_field) {
                double value;
                if (!(s->is_whole ? whole(first, p, &value) : decimal(first, p, &value))) return 0;
                s->values[line] = value;
            }
            if (f + 1 < s->fields) {
                if (p == end || *p != s->delimiter) return 0;
                p++;
            }
            else if (p < end) {
                if (*p != '\n') return 0;
                p++;
            }
        }
        line++;
    }
    s->lines = line;
    s->used = used;
    s->run_count = runs;
    return 1;
}

static int
get(PyObject *obj, Py_buffer *view, int writable, Py_ssize_t least, const char *what)
{
    if (PyObject_GetBuffer(obj, view, writable ? PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS : PyBUF_C_CONTIGUOUS) < 0)
        return -1;
    if (view->len < least) {
        PyErr_Format(PyExc_ValueError, "%s holds %zd bytes, needs %zd", what, view->len, least);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static PyObject *
module_scan(PyObject *module, PyObject *args)
{
    PyObject *data_obj, *offsets_obj, *bytes_obj, *values_obj;
    Py_ssize_t start, stop, most_runs;
    int fields, value_field, is_whole, delimiter;
    if (!PyArg_ParseTuple(args, "OnniipiOOOn:scan", &data_obj, &start, &stop, &fields, &value_field,
                          &is_whole, &delimiter, &offsets_obj, &bytes_obj, &values_obj,
                          &most_runs))
        return NULL;
    if (fields < 3 || value_field <= 2 || value_field >= fields || most_runs < 1
        || (delimiter != ' ' && delimiter != '\t')) {
        PyErr_SetString(PyExc_ValueError, "scan: a layout with fields topic, ?, docno, ... and a space or tab");
        return NULL;
    }
    Py_buffer data, offsets, bytes, values;
    if (get(data_obj, &data, 0, 0, "data") < 0) return NULL;
    PyObject *result = NULL;
    Run *runs = NULL;
    if (start < 0 || stop < start || stop > data.len || stop - start > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "scan: start and stop must lie in data, less than 2 GiB apart");
        PyBuffer_Release(&data);
        return NULL;
    }
    Py_ssize_t capacity = (stop - start) / (2 * fields - 1) + 1; /* the shortest line: "a b c d e f" */
    if (get(offsets_obj, &offsets, 1, (capacity + 1) * 4, "offsets") < 0) goto no_offsets;
    if (get(bytes_obj, &bytes, 1, stop - start, "bytes") < 0) goto no_bytes;
    if (get(values_obj, &values, 1, capacity * 8, "values") < 0) goto no_values;
    runs = PyMem_RawMalloc((size_t)most_runs * sizeof(Run));
    if (runs == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Scan s = {data.buf, start, stop, fields, value_field, is_whole, (unsigned char)delimiter,
              offsets.buf, bytes.buf, values.buf, capacity, runs, most_runs, 0, 0, 0};
    int regular;
    Py_BEGIN_ALLOW_THREADS
#if FLT_EVAL_METHOD == 0
    regular = scan(&s);
#else
    regular = 0; /* doubles rounded through a wider type: no exactly rounded fast path */
#endif
    Py_END_ALLOW_THREADS
    if (!regular) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    PyObject *names = PyList_New(s.run_count);
    PyObject *lengths = PyBytes_FromStringAndSize(NULL, s.run_count * (Py_ssize_t)sizeof(int32_t));
    if (names == NULL || lengths == NULL) {
        Py_XDECREF(names);
        Py_XDECREF(lengths);
        goto done;
    }
    int32_t *length = (int32_t *)PyBytes_AS_STRING(lengths);
    for (Py_ssize_t i = 0; i < s.run_count; i++) {
        PyObject *name = PyUnicode_DecodeASCII((const char *)data.buf + runs[i].start, runs[i].size, NULL);
        if (name == NULL) {
            Py_DECREF(names);
            Py_DECREF(lengths);
            goto done;
        }
        PyList_SET_ITEM(names, i, name);
        length[i] = runs[i].lines;
    }
    result = Py_BuildValue("nnNN", s.lines, s.used, names, lengths);
done:
    PyMem_RawFree(runs);
    PyBuffer_Release(&values);
no_values:
    PyBuffer_Release(&bytes);
no_bytes:
    PyBuffer_Release(&offsets);
no_offsets:
    PyBuffer_Release(&data);
    return result;
}


/* xor_docno_hashes(bounds, wide, data, out): out[i] ^= the hash of data[bounds[i]:bounds[i + 1]]. */
static PyObject *
module_xor_docno_hashes(PyObject *module, PyObject *args)
{
    PyObject *bounds_obj, *data_obj, *out_obj;
    int wide;
    if (!PyArg_ParseTuple(args, "OpOO:xor_docno_hashes", &bounds_obj, &wide, &data_obj, &out_obj)) return NULL;
    Py_buffer bounds, data, out;
    if (get(bounds_obj, &bounds, 0, 0, "bounds") < 0) return NULL;
    Py_ssize_t width = wide ? 8 : 4, n = bounds.len / width - 1;
    PyObject *result = NULL;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "xor_docno_hashes: bounds must hold at least one offset");
        PyBuffer_Release(&bounds);
        return NULL;
    }
    if (get(data_obj, &data, 0, 0, "data") < 0) goto no_data;
    if (get(out_obj, &out, 1, n * 8, "out") < 0) goto no_out;
    const unsigned char *text = data.buf, *end = text + data.len;
    uint64_t *hashes = out.buf;
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n && !bad; i++) {
        int64_t a, b;
        if (wide) {
            a = ((const int64_t *)bounds.buf)[i];
            b = ((const int64_t *)bounds.buf)[i + 1];
        }
        else {
            a = ((const int32_t *)bounds.buf)[i];
            b = ((const int32_t *)bounds.buf)[i + 1];
        }
        if (a < 0 || b < a || b > data.len) bad = 1;
        else hashes[i] ^= docno_hash(text + a, (Py_ssize_t)(b - a), end);
    }
    Py_END_ALLOW_THREADS
    if (bad) PyErr_SetString(PyExc_ValueError, "xor_docno_hashes: an offset outside the data");
    else result = Py_NewRef(Py_None);
    PyBuffer_Release(&out);
no_out:
    PyBuffer_Release(&data);
no_data:
    PyBuffer_Release(&bounds);
    return result;
}

static PyMethodDef methods[] = {
    {"scan", module_scan, METH_VARARGS,
     "scan(data, start, stop, fields, value_field, whole, delimiter, offsets, bytes, values, most_runs)"
     " -> (lines, docno_bytes, run_topics, run_lengths) | None: see ragmeter.io.trec_scan."},
    {"xor_docno_hashes", module_xor_docno_hashes, METH_VARARGS,
     "xor_docno_hashes(bounds, wide, data, out): XOR each docno's hash into out (see ragmeter.io.docnos)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef trec_scan_module = {
    PyModuleDef_HEAD_INIT, "ragmeter._trec_scan", "One pass over a regular TREC file (see ragmeter.io.trec_scan).",
    0, methods,
};

PyMODINIT_FUNC
PyInit__trec_scan(void)
{
    return PyModule_Create(&trec_scan_module);
}
