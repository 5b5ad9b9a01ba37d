/* rt_linalg.c — cholesky and triangular-solve for compiled models (declared in hlo/rt.h).
 * Matrices are row-major, batched over the leading dimensions; f32, f64, c64 and c128 are
 * computed in double (complex) precision and stored back in their own type (the code generator
 * widens f16/bf16 to f32 around the call).  Cholesky follows XLA's CholeskyExpander: the upper
 * form factors the transposed matrix and transposes back, the unread triangle is zero, and a
 * matrix whose pivot's square root is NaN (negative or NaN pivot) becomes all NaN.
 * Tests: testdata/golden/cholesky_*, triangular_solve_*, conformance triangular-solve.
 */
#include <complex.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "hlo/rt.h"

typedef double complex la_t;

static la_t la_load(int32_t kind, const void *p, int64_t i) {
  switch (kind) {
  case HLO_RT_LA_F32: return ((const float *)p)[i];
  case HLO_RT_LA_F64: return ((const double *)p)[i];
  case HLO_RT_LA_C64: return ((const float complex *)p)[i];
  default: return ((const double complex *)p)[i];
  }
}

static void la_store(int32_t kind, void *p, int64_t i, la_t v) {
  switch (kind) {
  case HLO_RT_LA_F32: ((float *)p)[i] = (float)creal(v); break;
  case HLO_RT_LA_F64: ((double *)p)[i] = creal(v); break;
  case HLO_RT_LA_C64: ((float complex *)p)[i] = (float complex)v; break;
  default: ((double complex *)p)[i] = v; break;
  }
}

static bool la_complex(int32_t kind) { return kind == HLO_RT_LA_C64 || kind == HLO_RT_LA_C128; }

/* x / y with real division for real kinds (so 1/0 is inf, not a complex NaN). */
static la_t la_div(int32_t kind, la_t x, la_t y) { return la_complex(kind) ? x / y : creal(x) / creal(y); }

/* ---- cholesky ------------------------------------------------------------------------------ */

/* L (n x n, zero above the diagonal) of the lower triangle of m; false when a pivot's square
 * root is NaN. */
static bool cholesky_lower(la_t *m, la_t *l, int64_t n) {
  for (int64_t j = 0; j < n; j++) {
    la_t d = m[j * n + j];
    for (int64_t k = 0; k < j; k++)
      d -= l[j * n + k] * conj(l[j * n + k]);
    double piv = sqrt(creal(d));
    if (isnan(piv))
      return false;
    l[j * n + j] = piv;
    for (int64_t i = j + 1; i < n; i++) {
      la_t s = m[i * n + j];
      for (int64_t k = 0; k < j; k++)
        s -= l[i * n + k] * conj(l[j * n + k]);
      l[i * n + j] = s / piv;
    }
    for (int64_t i = 0; i < j; i++)
      l[i * n + j] = 0;
  }
  return true;
}

hlo_status hlo_rt_cholesky(hlo_context *ctx, int32_t kind, int64_t batch, int64_t n, const void *a, void *out,
                           int32_t lower) {
  (void)ctx;
  if (n <= 0 || batch <= 0)
    return NULL;
  la_t *m = malloc((size_t)(2 * n * n) * sizeof *m);
  if (!m)
    return hlo_rt_error("out of memory in cholesky");
  la_t *l = m + n * n;
  for (int64_t t = 0; t < batch; t++) {
    int64_t base = t * n * n;
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) /* the upper form reads the transpose */
        m[i * n + j] = la_load(kind, a, base + (lower ? i * n + j : j * n + i));
    bool ok = cholesky_lower(m, l, n);
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++)
        la_store(kind, out, base + (lower ? i * n + j : j * n + i), ok ? l[i * n + j] : NAN);
  }
  free(m);
  return NULL;
}

/* ---- triangular solve ------------------------------------------------------------------------ */

/* T = op(A) restricted to A's `lower`/upper triangle (unit diagonal when asked); returns
 * whether T is lower triangular. */
static bool load_op_a(int32_t kind, const void *a, int64_t base, int64_t m, la_t *tm, int32_t lower, int32_t unit,
                      int32_t transpose_a) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < m; j++) {
      bool in_tri = lower ? i >= j : i <= j;
      la_t v = i == j && unit ? 1 : in_tri ? la_load(kind, a, base + i * m + j) : 0;
      if (transpose_a == 2)
        v = conj(v);
      if (transpose_a)
        tm[j * m + i] = v;
      else
        tm[i * m + j] = v;
    }
  return transpose_a ? !lower : lower;
}

/* T x = b in place (x, b of length m with stride s). */
static void solve_left(int32_t kind, const la_t *tm, int64_t m, bool lower, la_t *x, int64_t s) {
  for (int64_t q = 0; q < m; q++) {
    int64_t i = lower ? q : m - 1 - q;
    la_t acc = x[i * s];
    for (int64_t k = lower ? 0 : i + 1; k < (lower ? i : m); k++)
      acc -= tm[i * m + k] * x[k * s];
    x[i * s] = la_div(kind, acc, tm[i * m + i]);
  }
}

/* x T = b in place (x, b a row of length m). */
static void solve_right(int32_t kind, const la_t *tm, int64_t m, bool lower, la_t *x) {
  for (int64_t q = 0; q < m; q++) {
    int64_t j = lower ? m - 1 - q : q;
    la_t acc = x[j];
    for (int64_t i = lower ? j + 1 : 0; i < (lower ? m : j); i++)
      acc -= x[i] * tm[i * m + j];
    x[j] = la_div(kind, acc, tm[j * m + j]);
  }
}

hlo_status hlo_rt_triangular_solve(hlo_context *ctx, int32_t kind, int64_t batch, int64_t m, int64_t rows,
                                   int64_t cols, const void *a, const void *b, void *out, int32_t left_side,
                                   int32_t lower, int32_t unit_diagonal, int32_t transpose_a) {
  (void)ctx;
  if (batch <= 0 || rows <= 0 || cols <= 0)
    return NULL;
  size_t mm = m > 0 ? (size_t)(m * m) : 1;
  la_t *tm = malloc((mm + (size_t)(rows * cols)) * sizeof *tm);
  if (!tm)
    return hlo_rt_error("out of memory in triangular-solve");
  la_t *x = tm + mm;
  for (int64_t t = 0; t < batch; t++) {
    bool tl = load_op_a(kind, a, t * m * m, m, tm, lower, unit_diagonal, transpose_a);
    int64_t bb = t * rows * cols;
    for (int64_t i = 0; i < rows * cols; i++)
      x[i] = la_load(kind, b, bb + i);
    if (left_side)
      for (int64_t c = 0; c < cols; c++)
        solve_left(kind, tm, m, tl, x + c, cols);
    else
      for (int64_t r = 0; r < rows; r++)
        solve_right(kind, tm, m, tl, x + r * cols);
    for (int64_t i = 0; i < rows * cols; i++)
      la_store(kind, out, bb + i, x[i]);
  }
  free(tm);
  return NULL;
}
