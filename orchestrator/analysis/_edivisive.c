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
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
#include <math.h>
#include <string.h>

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "doubles must be evaluated as doubles (FLT_EVAL_METHOD 0): build for SSE2, not x87"
#endif

/* sum over j < i of |x[i] - x[j]|, for each i: each point's distance to the points before it */
static void distances_to_earlier(const double *x, Py_ssize_t n, double *earlier)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        const double xi = x[i];
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        Py_ssize_t j = 0;
        for (; j + 4 <= i; j += 4) {
            s0 += fabs(xi - x[j]);
            s1 += fabs(xi - x[j + 1]);
            s2 += fabs(xi - x[j + 2]);
            s3 += fabs(xi - x[j + 3]);
        }
        for (; j < i; j++)
            s0 += fabs(xi - x[j]);
        earlier[i] = (s0 + s1) + (s2 + s3);
    }
}

/* Q at every split tau in [lo, hi] of one ordering: x its values, row_sums each value's summed
 * distance to all n values (the same in every ordering), q[tau - lo] the result. */
static void split_statistics_of(const double *x, const double *row_sums, Py_ssize_t n,
                                Py_ssize_t lo, Py_ssize_t hi, double *earlier, double *q)
{
    distances_to_earlier(x, n, earlier);
    double total = 0.0;
    for (Py_ssize_t i = 0; i < n; i++)
        total += row_sums[i];
    double pairs_sum = 0.0, prefix = 0.0;  /* over the points before tau */
    for (Py_ssize_t tau = 0; tau <= hi; tau++) {
        if (tau >= lo) {
            const double m = (double)tau, k = (double)(n - tau);
            const double within_left = 2.0 * pairs_sum;
            const double between = prefix - within_left;
            const double within_right = total - 2.0 * prefix + within_left;
            /* A one-point side has no pairs: its mean distance is 0 (its sum is 0 too). */
            const double pairs_left = m * (m - 1.0) > 1.0 ? m * (m - 1.0) : 1.0;
            const double pairs_right = k * (k - 1.0) > 1.0 ? k * (k - 1.0) : 1.0;
            q[tau - lo] = m * k / (double)n * (between * 2.0 / (m * k)
                                               - within_left / pairs_left
                                               - within_right / pairs_right);
        }
        if (tau < n) {
            pairs_sum += earlier[tau];
            prefix += row_sums[tau];
        }
    }
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

static PyObject *split_statistics(PyObject *self, PyObject *args)
{
    PyObject *values_object, *row_sums_object, *out_object;
    Py_ssize_t n, lo, hi;
    if (!PyArg_ParseTuple(args, "OOnnnO", &values_object, &row_sums_object, &n, &lo, &hi,
                          &out_object))
        return NULL;
    if (n < 1 || n > PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(double) || lo < 0 || hi >= n ||
        hi < lo) {
        PyErr_Format(PyExc_ValueError, "split_statistics: bad shape (n=%zd, lo=%zd, hi=%zd)",
                     n, lo, hi);
        return NULL;
    }
    Py_buffer values, row_sums, out;
    if (double_buffer(values_object, &values, 0, "values") < 0)
        return NULL;
    if (double_buffer(row_sums_object, &row_sums, 0, "row_sums") < 0) {
        PyBuffer_Release(&values);
        return NULL;
    }
    if (double_buffer(out_object, &out, 1, "out") < 0) {
        PyBuffer_Release(&values);
        PyBuffer_Release(&row_sums);
        return NULL;
    }
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
    double *earlier = PyMem_RawMalloc((size_t)n * sizeof(double));
    if (!earlier) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t b = 0; b < batch; b++)
        split_statistics_of((const double *)values.buf + b * n,
                            (const double *)row_sums.buf + b * n, n, lo, hi, earlier,
                            (double *)out.buf + b * width);
    Py_END_ALLOW_THREADS
    PyMem_RawFree(earlier);
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&values);
    PyBuffer_Release(&row_sums);
    PyBuffer_Release(&out);
    return result;
}

static PyMethodDef methods[] = {
    {"split_statistics", split_statistics, METH_VARARGS,
     "split_statistics(values, row_sums, n, lo, hi, out): Q(tau) for tau in [lo, hi] of each "
     "ordering; values and row_sums hold batch × n float64 (C order), out batch × (hi - lo + 1)."},
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
