/* E-Divisive's split statistic Q(tau) for a batch of orderings of one segment (see
 * changepoints.py, which calls this and says what Q is).
 *
 * Why C: the permutation test scores hundreds of shuffles per segment and each costs an O(n^2)
 * sum of distances; in numpy that sum took three passes over a batch × n × n array (0.44 ms
 * per 25 shuffles of 200 points), here it is one pass over the values (about a fifth of it).
 *
 * Why the sums are written out: the answer must not depend on the compiler or the machine. The
 * additions happen in one fixed order (four running sums per row, joined as (s0 + s1) +
 * (s2 + s3)); pyproject.toml compiles and links this with -ffp-contract=off (no fused
 * multiply-add) and -fno-fast-math last, whatever CFLAGS say (linked with -ffast-math, the
 * library would flush subnormal numbers to zero in the whole process: the import refuses to
 * load then); doubles are computed as doubles (no x87 extra precision); no threads. Every
 * build gives the same bits.
 *
 * The test's shuffles are drawn here too (shuffled_maxima): numpy's Generator.permuted spent
 * as long drawing them as this file spent scoring them (its generic byte-wise swaps), and the
 * gathers and maxima around it as long again. They are numpy's own shuffles, draw for draw:
 * the same Fisher-Yates loop over the same bit generator, through numpy's public C interface
 * (numpy/random/bitgen.h, declared below as numpy documents it), and
 * tests/orchestrator/analysis/test_changepoints_reference.py compares them with Generator.permuted.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "doubles must be evaluated as doubles (FLT_EVAL_METHOD 0): build for SSE2, not x87"
#endif

/* The hot loops built twice on x86-64, for AVX2 and for any CPU, the one to use chosen when the
 * library loads (glibc's ifunc): wider registers for the same IEEE operations on the same
 * doubles, in the same order (no FMA: -ffp-contract=off), so the same bits either way. */
#if defined(__x86_64__) && defined(__GLIBC__) && (defined(__GNUC__) || defined(__clang__))
#define BOTH_WIDTHS __attribute__((target_clones("avx2", "default")))
#else
#define BOTH_WIDTHS
#endif

/* The rest of row i's sum from column j on (its four sums so far in s), in the one order. */
static inline __attribute__((always_inline)) double
finish_row(const double *x, Py_ssize_t i, Py_ssize_t j, double s[4])
{
    const double xi = x[i];
    for (; j + 4 <= i; j += 4)
        for (int k = 0; k < 4; k++)
            s[k] += fabs(xi - x[j + k]);
    for (; j < i; j++)
        s[0] += fabs(xi - x[j]);
    return (s[0] + s[1]) + (s[2] + s[3]);
}

/* sum over j < i of |x[i] - x[j]|, for each i: each point's distance to the points before it.
 * Every row is summed in the one order (finish_row's), but two rows at a time: a row's four
 * sums are one chain of additions, each waiting for the last, and two rows give the CPU two
 * chains to overlap (with AVX2 where the CPU has it, four sums in one register). */
BOTH_WIDTHS
static void distances_to_earlier(const double *x, Py_ssize_t n, double *earlier)
{
    Py_ssize_t i = 0;
    for (; i + 1 < n; i += 2) {
        const double xa = x[i], xb = x[i + 1];
        double a[4] = {0.0, 0.0, 0.0, 0.0}, b[4] = {0.0, 0.0, 0.0, 0.0};
        Py_ssize_t j = 0;
        for (; j + 4 <= i; j += 4)  /* the blocks of four both rows have */
            for (int k = 0; k < 4; k++) {
                a[k] += fabs(xa - x[j + k]);
                b[k] += fabs(xb - x[j + k]);
            }
        earlier[i] = finish_row(x, i, j, a);
        earlier[i + 1] = finish_row(x, i + 1, j, b);
    }
    if (i < n) {
        double s[4] = {0.0, 0.0, 0.0, 0.0};
        earlier[i] = finish_row(x, i, 0, s);
    }
}

/* Q at the splits lo .. lo + width - 1, from the sums over the points before each split:
 * pairs_before[t] (of the distances between them) and sum_before[t] (of their row sums). Each
 * split's Q needs only its own sums: none waits for the last one's four divisions. */
BOTH_WIDTHS
static void q_at_splits(const double *pairs_before, const double *sum_before, double total,
                        Py_ssize_t n, Py_ssize_t lo, Py_ssize_t width, double *q)
{
    const double count = (double)n;
    for (Py_ssize_t t = 0; t < width; t++) {
        const double m = (double)(lo + t), k = (double)(n - lo - t);
        const double within_left = 2.0 * pairs_before[t];
        const double between = sum_before[t] - within_left;
        const double within_right = total - 2.0 * sum_before[t] + within_left;
        /* A one-point side has no pairs: its mean distance is 0 (its sum is 0 too). */
        const double pairs_left = m * (m - 1.0) > 1.0 ? m * (m - 1.0) : 1.0;
        const double pairs_right = k * (k - 1.0) > 1.0 ? k * (k - 1.0) : 1.0;
        q[t] = m * k / count * (between * 2.0 / (m * k) - within_left / pairs_left
                                - within_right / pairs_right);
    }
}

/* Q at every split tau in [lo, hi] of one ordering: x its values, row_sums each value's summed
 * distance to all n values (the same in every ordering), q[tau - lo] the result; earlier and
 * before: n doubles of scratch each. */
static void split_statistics_of(const double *x, const double *row_sums, Py_ssize_t n,
                                Py_ssize_t lo, Py_ssize_t hi, double *earlier, double *before,
                                double *q)
{
    distances_to_earlier(x, n, earlier);
    double total = 0.0;
    for (Py_ssize_t i = 0; i < n; i++)
        total += row_sums[i];
    /* The sums over the points before each split, added in the one order (earlier becomes
     * its own running sum). */
    double pairs_sum = 0.0, prefix = 0.0;
    for (Py_ssize_t tau = 0; tau <= hi; tau++) {
        const double pairs = earlier[tau];
        earlier[tau] = pairs_sum;
        before[tau] = prefix;
        pairs_sum += pairs;
        prefix += row_sums[tau];
    }
    q_at_splits(earlier + lo, before + lo, total, n, lo, hi - lo + 1, q);
}

/* A C-contiguous buffer of doubles, or an error naming `what`. */
static int double_buffer(PyObject *object, Py_buffer *view, int writable, const char *what)
{
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(object, view, flags) < 0)
        return -1;
    if (view->itemsize != (Py_ssize_t)sizeof(double) || view->format == NULL ||
        strcmp(view->format, "d") != 0) {
        PyErr_Format(PyExc_TypeError, "split_statistics: %s must hold float64, not format %s",
                     what, view->format ? view->format : "?");
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* The values and row sums (read) and the out buffer (written) of a call, or -1 with none held. */
static int value_buffers(PyObject *values_object, PyObject *row_sums_object, PyObject *out_object,
                         Py_buffer *values, Py_buffer *row_sums, Py_buffer *out)
{
    if (double_buffer(values_object, values, 0, "values") < 0)
        return -1;
    if (double_buffer(row_sums_object, row_sums, 0, "row_sums") < 0) {
        PyBuffer_Release(values);
        return -1;
    }
    if (double_buffer(out_object, out, 1, "out") < 0) {
        PyBuffer_Release(values);
        PyBuffer_Release(row_sums);
        return -1;
    }
    return 0;
}

static void release_value_buffers(Py_buffer *values, Py_buffer *row_sums, Py_buffer *out)
{
    PyBuffer_Release(values);
    PyBuffer_Release(row_sums);
    PyBuffer_Release(out);
}

static PyObject *split_statistics(PyObject *self, PyObject *args)
{
    PyObject *values_object, *row_sums_object, *out_object;
    Py_ssize_t n, lo, hi;
    if (!PyArg_ParseTuple(args, "OOnnnO", &values_object, &row_sums_object, &n, &lo, &hi,
                          &out_object))
        return NULL;
    if (n < 1 || n > PY_SSIZE_T_MAX / (Py_ssize_t)(2 * sizeof(double)) || lo < 0 || hi >= n ||
        hi < lo) {
        PyErr_Format(PyExc_ValueError, "split_statistics: bad shape (n=%zd, lo=%zd, hi=%zd)",
                     n, lo, hi);
        return NULL;
    }
    Py_buffer values, row_sums, out;
    if (value_buffers(values_object, row_sums_object, out_object, &values, &row_sums, &out) < 0)
        return NULL;
    PyObject *result = NULL;
    /* Counted in doubles, not bytes: n * width cannot overflow once each side is checked. */
    const Py_ssize_t width = hi - lo + 1, count = values.len / (Py_ssize_t)sizeof(double);
    const Py_ssize_t batch = count / n;
    if (count % n || row_sums.len != values.len ||
        out.len / (Py_ssize_t)sizeof(double) / width != batch ||
        out.len / (Py_ssize_t)sizeof(double) % width) {
        PyErr_SetString(PyExc_ValueError,
                        "split_statistics: values, row_sums and out disagree in size");
        goto done;
    }
    double *earlier = PyMem_RawMalloc((size_t)n * 2 * sizeof(double));  /* and `before` */
    if (!earlier) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t b = 0; b < batch; b++)
        split_statistics_of((const double *)values.buf + b * n,
                            (const double *)row_sums.buf + b * n, n, lo, hi, earlier,
                            earlier + n, (double *)out.buf + b * width);
    Py_END_ALLOW_THREADS
    PyMem_RawFree(earlier);
    result = Py_NewRef(Py_None);
done:
    release_value_buffers(&values, &row_sums, &out);
    return result;
}

/* numpy's bit generator interface (numpy/random/bitgen.h: "must match the declaration in
 * numpy/random/<any>.pxd"), reached through BitGenerator.capsule. */
typedef struct {
    void *state;
    uint64_t (*next_uint64)(void *st);
    uint32_t (*next_uint32)(void *st);
    double (*next_double)(void *st);
    uint64_t (*next_raw)(void *st);
} bitgen_t;

/* A value in [0, max], as numpy's random_interval (distributions.c) draws it: the smallest
 * mask >= max, 32-bit draws while max fits in 32 bits, a draw above max thrown away. */
static uint64_t random_interval(bitgen_t *bitgen, uint64_t max)
{
    if (max == 0)
        return 0;
    uint64_t mask = max, value;
    mask |= mask >> 1;
    mask |= mask >> 2;
    mask |= mask >> 4;
    mask |= mask >> 8;
    mask |= mask >> 16;
    mask |= mask >> 32;
    if (max <= 0xffffffffUL) {
        while ((value = (bitgen->next_uint32(bitgen->state) & mask)) > max)
            ;
    } else {
        while ((value = (bitgen->next_uint64(bitgen->state) & mask)) > max)
            ;
    }
    return value;
}

/* One row of Generator.permuted(np.tile(np.arange(n), (b, 1)), axis=1): numpy shuffles each
 * row with first=0 (positions n-1 down to 0; position 0 draws nothing). */
static void shuffle_positions(bitgen_t *bitgen, Py_ssize_t n, Py_ssize_t *order)
{
    for (Py_ssize_t i = 0; i < n; i++)
        order[i] = i;
    for (Py_ssize_t i = n - 1; i >= 0; i--) {
        const Py_ssize_t j = (Py_ssize_t)random_interval(bitgen, (uint64_t)i);
        const Py_ssize_t kept = order[j];
        order[j] = order[i];
        order[i] = kept;
    }
}

/* The largest of q[0..width), NaN if one is (numpy's max). */
static double largest(const double *q, Py_ssize_t width)
{
    double best = q[0];
    for (Py_ssize_t k = 0; k < width; k++) {
        if (q[k] != q[k])
            return q[k];
        if (q[k] > best)
            best = q[k];
    }
    return best;
}

static PyObject *shuffled_maxima(PyObject *self, PyObject *args)
{
    PyObject *values_object, *row_sums_object, *capsule, *out_object;
    Py_ssize_t lo, hi;
    if (!PyArg_ParseTuple(args, "OOnnOO", &values_object, &row_sums_object, &lo, &hi, &capsule,
                          &out_object))
        return NULL;
    bitgen_t *bitgen = PyCapsule_GetPointer(capsule, "BitGenerator");
    if (bitgen == NULL)
        return NULL;
    Py_buffer values, row_sums, out;
    if (value_buffers(values_object, row_sums_object, out_object, &values, &row_sums, &out) < 0)
        return NULL;
    PyObject *result = NULL;
    const Py_ssize_t n = values.len / (Py_ssize_t)sizeof(double);
    const Py_ssize_t batch = out.len / (Py_ssize_t)sizeof(double);
    const Py_ssize_t per_point = (Py_ssize_t)(5 * sizeof(double) + sizeof(Py_ssize_t));
    if (row_sums.len != values.len || n < 1 || n > PY_SSIZE_T_MAX / per_point || lo < 0 ||
        hi >= n || hi < lo) {
        PyErr_Format(PyExc_ValueError, "shuffled_maxima: bad shape (n=%zd, lo=%zd, hi=%zd, "
                     "row_sums of %zd)", n, lo, hi, row_sums.len / (Py_ssize_t)sizeof(double));
        goto done;
    }
    /* the shuffled values, their row sums, each one's distances to the earlier ones, the sums
     * before each split, q, then the order (doubles first: each part stays aligned) */
    double *x = PyMem_RawMalloc((size_t)(n * per_point));
    if (!x) {
        PyErr_NoMemory();
        goto done;
    }
    double *sums = x + n, *earlier = sums + n, *before = earlier + n, *q = before + n;
    Py_ssize_t *order = (Py_ssize_t *)(q + n);
    const double *given = values.buf, *given_sums = row_sums.buf;
    double *maxima = out.buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t b = 0; b < batch; b++) {
        shuffle_positions(bitgen, n, order);
        for (Py_ssize_t i = 0; i < n; i++) {
            x[i] = given[order[i]];
            sums[i] = given_sums[order[i]];
        }
        split_statistics_of(x, sums, n, lo, hi, earlier, before, q);
        maxima[b] = largest(q, hi - lo + 1);
    }
    Py_END_ALLOW_THREADS
    PyMem_RawFree(x);
    result = Py_NewRef(Py_None);
done:
    release_value_buffers(&values, &row_sums, &out);
    return result;
}

static PyMethodDef methods[] = {
    {"split_statistics", split_statistics, METH_VARARGS,
     "split_statistics(values, row_sums, n, lo, hi, out): Q(tau) for tau in [lo, hi] of each "
     "ordering; values and row_sums hold batch × n float64 (C order), out batch × (hi - lo + 1)."},
    {"shuffled_maxima", shuffled_maxima, METH_VARARGS,
     "shuffled_maxima(values, row_sums, lo, hi, capsule, out): for each of len(out) shuffles "
     "that Generator.permuted would draw from the bit generator of `capsule` (hold its lock), "
     "the largest Q(tau) for tau in [lo, hi] of the shuffled values."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_edivisive", "E-Divisive's split statistic (see changepoints.py).",
    -1, methods,
};

PyMODINIT_FUNC PyInit__edivisive(void)
{
    /* Subnormal numbers flushed to zero: this library (or another) was linked with fast-math,
     * which changes every float result of the process, ours included. */
    volatile double smallest = DBL_MIN / 4.0;
    if (smallest * 1.0 == 0.0) {
        PyErr_SetString(PyExc_ImportError,
                        "_edivisive: subnormal floats are flushed to zero in this process (a "
                        "library linked with -ffast-math?); rebuild with `make venv` and plain "
                        "CFLAGS");
        return NULL;
    }
    return PyModule_Create(&module);
}
