/* rt_fft.c — FFT, IFFT, RFFT and IRFFT for compiled models (hlo_rt_fft, declared in hlo/rt.h).
 * Our own code (no FFTW: Debian's is GPL, and every model.so links this file): a Stockham
 * autosort FFT of mixed radix 2/3/4 plus a generic radix for primes up to FFT_MAX_RADIX, and
 * Bluestein's chirp-z algorithm for lengths with a larger prime factor.  Every transform runs
 * in double precision on a complex work array and is rounded to the result type once.
 * Semantics follow XLA (its HloEvaluator's FftTransform): FFT/IFFT operands are zero-padded or
 * cut to fft_length and results cut or zero-padded to the result shape; a zero fft_length
 * gives zeros.  Tests: runtime/src/kernels/rt_fft_test.c, testdata/golden/fft_*, conformance fft.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/rt.h"
#include "hlo/rt_parallel.h"

/* Primes up to this are butterflies of their own; larger ones go through Bluestein. */
#define FFT_MAX_RADIX 31
#define FFT_MAX_STAGES 64
/* Work (line length x lines) below which an axis pass stays on the calling thread. */
#define FFT_PARALLEL_WORK 65536
#define FFT_PI 3.14159265358979323846

typedef struct fft_c {
  double re, im;
} fft_c;

static inline fft_c c_mul(fft_c a, fft_c b) { return (fft_c){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }
static inline fft_c c_add(fft_c a, fft_c b) { return (fft_c){a.re + b.re, a.im + b.im}; }
static inline fft_c c_sub(fft_c a, fft_c b) { return (fft_c){a.re - b.re, a.im - b.im}; }
static inline fft_c c_conj(fft_c a) { return (fft_c){a.re, -a.im}; }

/* exp(-2 pi i k / n) for 0 <= k < n. */
static fft_c root_of_unity(int64_t k, int64_t n) {
  if (k == 0)
    return (fft_c){1.0, 0.0};
  if (4 * k == n)
    return (fft_c){0.0, -1.0};
  if (2 * k == n)
    return (fft_c){-1.0, 0.0};
  if (4 * k == 3 * n)
    return (fft_c){0.0, 1.0};
  double a = 2.0 * FFT_PI * (double)k / (double)n;
  return (fft_c){cos(a), -sin(a)};
}

/* ---- plans of one transform length ------------------------------------------------------- */

/* A forward transform of length n: Stockham stages (radix[s], with twiddles at tw + tw_off[s]:
 * for a stage of radix p after l points, omega_{lp}^{jq} at [j(p-1) + q-1], then for a generic
 * radix the p roots omega_p^u), or Bluestein (m > 0) through a direct plan of length m. */
typedef struct fft_line_plan {
  int64_t n;
  int n_stages;
  int32_t radix[FFT_MAX_STAGES];
  int64_t tw_off[FFT_MAX_STAGES];
  fft_c *tw;
  int64_t m;
  struct fft_line_plan *sub;
  fft_c *chirp; /* exp(-pi i k^2 / n), k < n */
  fft_c *bhat;  /* the forward transform of the conjugate chirp, wrapped to length m */
} fft_line_plan;

static void line_plan_destroy(fft_line_plan *p) {
  if (!p)
    return;
  line_plan_destroy(p->sub);
  free(p->tw);
  free(p->chirp);
  free(p->bhat);
  free(p);
}

/* The radices of n, 4s first; false when a prime factor exceeds FFT_MAX_RADIX. */
static bool factor(int64_t n, int32_t *radix, int *n_out) {
  int k = 0;
  while (n % 4 == 0 && k < FFT_MAX_STAGES) {
    radix[k++] = 4;
    n /= 4;
  }
  for (int32_t p = 2; p <= FFT_MAX_RADIX && n > 1; p++)
    while (n % p == 0 && k < FFT_MAX_STAGES) {
      radix[k++] = p;
      n /= p;
    }
  *n_out = k;
  return n == 1;
}

/* The smallest 2^a 3^b 5^c >= n. */
static int64_t smooth_at_least(int64_t n) {
  int64_t best = INT64_MAX;
  for (int64_t a = 1; a < INT64_MAX / 2; a *= 2) {
    for (int64_t b = a; b < INT64_MAX / 3; b *= 3) {
      int64_t c = b;
      while (c < n && c < INT64_MAX / 5)
        c *= 5;
      if (c >= n && c < best)
        best = c;
      if (b >= n)
        break;
    }
    if (a >= n)
      break;
  }
  return best;
}

static void line_forward(const fft_line_plan *p, fft_c *x, fft_c *work);

static fft_line_plan *line_plan_create(int64_t n);

static bool bluestein_init(fft_line_plan *p) {
  int64_t n = p->n, m = smooth_at_least(2 * n - 1);
  p->m = m;
  p->sub = line_plan_create(m);
  p->chirp = malloc((size_t)n * sizeof(fft_c));
  p->bhat = calloc((size_t)m, sizeof(fft_c));
  fft_c *work = malloc((size_t)m * sizeof(fft_c));
  bool ok = p->sub && p->chirp && p->bhat && work;
  if (ok) {
    /* k^2 mod 2n, kept exact by stepping (k+1)^2 = k^2 + 2k + 1. */
    int64_t sq = 0;
    for (int64_t k = 0; k < n; k++) {
      double a = FFT_PI * (double)sq / (double)n;
      p->chirp[k] = (fft_c){cos(a), -sin(a)};
      sq = (sq + 2 * k + 1) % (2 * n);
    }
    p->bhat[0] = c_conj(p->chirp[0]);
    for (int64_t k = 1; k < n; k++)
      p->bhat[k] = p->bhat[m - k] = c_conj(p->chirp[k]);
    line_forward(p->sub, p->bhat, work);
  }
  free(work);
  return ok;
}

static fft_line_plan *line_plan_create(int64_t n) {
  fft_line_plan *p = calloc(1, sizeof *p);
  if (!p)
    return NULL;
  p->n = n;
  if (!factor(n, p->radix, &p->n_stages)) {
    if (!bluestein_init(p)) {
      line_plan_destroy(p);
      return NULL;
    }
    return p;
  }
  int64_t total = 0, l = 1;
  for (int s = 0; s < p->n_stages; s++) {
    int32_t r = p->radix[s];
    p->tw_off[s] = total;
    total += l * (r - 1) + (r > 4 ? r : 0);
    l *= r;
  }
  p->tw = malloc((size_t)(total > 0 ? total : 1) * sizeof(fft_c));
  if (!p->tw) {
    line_plan_destroy(p);
    return NULL;
  }
  l = 1;
  for (int s = 0; s < p->n_stages; s++) {
    int32_t r = p->radix[s];
    fft_c *t = p->tw + p->tw_off[s];
    for (int64_t j = 0; j < l; j++)
      for (int32_t q = 1; q < r; q++)
        t[j * (r - 1) + q - 1] = root_of_unity(j * q, l * r);
    if (r > 4)
      for (int32_t u = 0; u < r; u++)
        t[l * (r - 1) + u] = root_of_unity(u, r);
    l *= r;
  }
  return p;
}

/* Complex values a line transform of p needs beside the line itself. */
static int64_t line_work(const fft_line_plan *p) { return p->m ? 2 * p->m : p->n; }

/* ---- the transform of one line ----------------------------------------------------------- */

/* One Stockham stage of radix r: x holds l-point transforms of the m*r subsequences, y gets
 * the (l*r)-point transforms of the m subsequences (y(k, j + l u) = sum_q omega_r^{uq}
 * omega_{lr}^{jq} x(k + m q, j), element (k, j) stored at k*l + j). */
static void stage(const fft_c *restrict x, fft_c *restrict y, int64_t l, int64_t m, int32_t r, const fft_c *tw) {
  for (int64_t k = 0; k < m; k++) {
    const fft_c *xk = x + k * l;
    fft_c *yk = y + k * l * r;
    for (int64_t j = 0; j < l; j++) {
      const fft_c *w = tw + j * (r - 1);
      fft_c a[FFT_MAX_RADIX];
      a[0] = xk[j];
      for (int32_t q = 1; q < r; q++)
        a[q] = j ? c_mul(xk[j + q * m * l], w[q - 1]) : xk[j + q * m * l];
      switch (r) {
      case 2:
        yk[j] = c_add(a[0], a[1]);
        yk[j + l] = c_sub(a[0], a[1]);
        break;
      case 3: {
        const double h = 0.86602540378443864676; /* sqrt(3)/2 */
        fft_c s = c_add(a[1], a[2]), d = c_sub(a[1], a[2]);
        fft_c c = {a[0].re - 0.5 * s.re, a[0].im - 0.5 * s.im};
        yk[j] = c_add(a[0], s);
        yk[j + l] = (fft_c){c.re + h * d.im, c.im - h * d.re};
        yk[j + 2 * l] = (fft_c){c.re - h * d.im, c.im + h * d.re};
        break;
      }
      case 4: {
        fft_c t0 = c_add(a[0], a[2]), t1 = c_sub(a[0], a[2]), t2 = c_add(a[1], a[3]), d = c_sub(a[1], a[3]);
        fft_c t3 = {d.im, -d.re}; /* -i (a1 - a3) */
        yk[j] = c_add(t0, t2);
        yk[j + l] = c_add(t1, t3);
        yk[j + 2 * l] = c_sub(t0, t2);
        yk[j + 3 * l] = c_sub(t1, t3);
        break;
      }
      default: {
        const fft_c *root = tw + l * (r - 1);
        for (int32_t u = 0; u < r; u++) {
          fft_c s = a[0];
          for (int32_t q = 1; q < r; q++)
            s = c_add(s, c_mul(a[q], root[(int64_t)u * q % r]));
          yk[j + u * l] = s;
        }
        break;
      }
      }
    }
  }
}

static void stockham(const fft_line_plan *p, fft_c *x, fft_c *work) {
  fft_c *src = x, *dst = work;
  int64_t l = 1, m = p->n;
  for (int s = 0; s < p->n_stages; s++) {
    int32_t r = p->radix[s];
    m /= r;
    stage(src, dst, l, m, r, p->tw + p->tw_off[s]);
    fft_c *t = src;
    src = dst;
    dst = t;
    l *= r;
  }
  if (src != x)
    memcpy(x, src, (size_t)p->n * sizeof(fft_c));
}

/* X[k] = w_k sum_t (x_t w_t) conj(w_{k-t}) with the chirp w_k = exp(-pi i k^2 / n): a
 * circular convolution of length m, done with the plan of length m. */
static void bluestein(const fft_line_plan *p, fft_c *x, fft_c *work) {
  int64_t n = p->n, m = p->m;
  fft_c *a = work, *w2 = work + m;
  for (int64_t t = 0; t < n; t++)
    a[t] = c_mul(x[t], p->chirp[t]);
  memset(a + n, 0, (size_t)(m - n) * sizeof(fft_c));
  line_forward(p->sub, a, w2);
  for (int64_t k = 0; k < m; k++)
    a[k] = c_conj(c_mul(a[k], p->bhat[k]));
  line_forward(p->sub, a, w2); /* the inverse, as conj(FFT(conj(.))) */
  double inv = 1.0 / (double)m;
  for (int64_t k = 0; k < n; k++) {
    fft_c c = {a[k].re * inv, -a[k].im * inv};
    x[k] = c_mul(c, p->chirp[k]);
  }
}

/* The forward transform of x (p->n values) in place; work holds line_work(p) values. */
static void line_forward(const fft_line_plan *p, fft_c *x, fft_c *work) {
  if (p->m)
    bluestein(p, x, work);
  else
    stockham(p, x, work);
}

/* The inverse transform (divided by n) of x in place. */
static void line_inverse(const fft_line_plan *p, fft_c *x, fft_c *work) {
  int64_t n = p->n;
  for (int64_t i = 0; i < n; i++)
    x[i].im = -x[i].im;
  line_forward(p, x, work);
  double inv = 1.0 / (double)n;
  for (int64_t i = 0; i < n; i++)
    x[i] = (fft_c){x[i].re * inv, -x[i].im * inv};
}

/* ---- a call site's plan -------------------------------------------------------------------- */

/* The line plans of the (up to three) transform axes, outermost first; NULL for length <= 1. */
typedef struct fft_plan {
  int fft_rank;
  int64_t len[3];
  fft_line_plan *axis[3];
} fft_plan;

static void plan_destroy(fft_plan *p) {
  if (!p)
    return;
  for (int a = 0; a < p->fft_rank; a++) {
    bool shared = false;
    for (int b = 0; b < a; b++)
      shared |= p->axis[b] == p->axis[a];
    if (!shared)
      line_plan_destroy(p->axis[a]);
  }
  free(p);
}

static fft_plan *plan_create(int fft_rank, const int64_t *len) {
  fft_plan *p = calloc(1, sizeof *p);
  if (!p)
    return NULL;
  p->fft_rank = fft_rank;
  for (int a = 0; a < fft_rank; a++) {
    p->len[a] = len[a];
    if (len[a] <= 1)
      continue;
    for (int b = 0; b < a; b++)
      if (len[b] == len[a])
        p->axis[a] = p->axis[b];
    if (!p->axis[a] && !(p->axis[a] = line_plan_create(len[a]))) {
      plan_destroy(p);
      return NULL;
    }
  }
  return p;
}

/* The plan cached in *slot (made by the first call; slots are written once, atomically). */
static fft_plan *plan_get(void **slot, int fft_rank, const int64_t *len) {
  fft_plan *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (p)
    return p;
  p = plan_create(fft_rank, len);
  if (!p)
    return NULL;
  void *expected = NULL;
  if (!__atomic_compare_exchange_n(slot, &expected, (void *)p, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    plan_destroy(p);
    return expected;
  }
  return p;
}

void hlo_rt_fft_plan_release(void **slot) {
  plan_destroy(__atomic_exchange_n(slot, NULL, __ATOMIC_ACQ_REL));
}

/* ---- passes over the work array -------------------------------------------------------------- */

/* A work array of `batch` blocks of d[0] x d[1] x d[2] complex values (unused leading dims 1). */
typedef struct fft_pass {
  const fft_line_plan *plan;
  fft_c *w;
  int64_t n, stride, lines; /* lines of n values, stride apart, each block n*stride values */
  bool inverse;
  atomic_int failed;
} fft_pass;

static void pass_range(void *arg, int64_t begin, int64_t end) {
  fft_pass *a = arg;
  int64_t n = a->n, stride = a->stride;
  fft_c *buf = malloc((size_t)(n + line_work(a->plan)) * sizeof(fft_c));
  if (!buf) {
    atomic_store(&a->failed, 1);
    return;
  }
  for (int64_t li = begin; li < end; li++) {
    int64_t base = li / stride * n * stride + li % stride;
    fft_c *x = buf + line_work(a->plan), *work = buf;
    if (stride == 1)
      x = a->w + base;
    else
      for (int64_t t = 0; t < n; t++)
        x[t] = a->w[base + t * stride];
    if (a->inverse)
      line_inverse(a->plan, x, work);
    else
      line_forward(a->plan, x, work);
    if (stride != 1)
      for (int64_t t = 0; t < n; t++)
        a->w[base + t * stride] = x[t];
  }
  free(buf);
}

static void run_lines(hlo_context *ctx, int64_t lines, int64_t n, hlo_rt_range_fn fn, void *arg) {
  if (lines > 1 && lines * n >= FFT_PARALLEL_WORK)
    hlo_rt_parallel_for(ctx, lines, fn, arg);
  else
    fn(arg, 0, lines);
}

/* Complex transforms along axis `axis` (0..2) of the batch x d[0] x d[1] x d[2] array w. */
static bool pass_axis(hlo_context *ctx, const fft_line_plan *plan, fft_c *w, int64_t batch, const int64_t *d,
                      int axis, bool inverse) {
  if (!plan)
    return true; /* a transform of length 1 is the identity */
  fft_pass a = {.plan = plan, .w = w, .n = d[axis], .stride = 1, .inverse = inverse};
  for (int i = axis + 1; i < 3; i++)
    a.stride *= d[i];
  a.lines = batch * d[0] * d[1] * d[2] / d[axis];
  atomic_init(&a.failed, 0);
  run_lines(ctx, a.lines, a.n, pass_range, &a);
  return !atomic_load(&a.failed);
}

/* ---- element movement ------------------------------------------------------------------------ */

static fft_c load_c(const void *p, bool dbl, int64_t i) {
  if (dbl)
    return (fft_c){((const double *)p)[2 * i], ((const double *)p)[2 * i + 1]};
  return (fft_c){((const float *)p)[2 * i], ((const float *)p)[2 * i + 1]};
}

static void store_c(void *p, bool dbl, int64_t i, fft_c v) {
  if (dbl) {
    ((double *)p)[2 * i] = v.re;
    ((double *)p)[2 * i + 1] = v.im;
  } else {
    ((float *)p)[2 * i] = (float)v.re;
    ((float *)p)[2 * i + 1] = (float)v.im;
  }
}

/* Copies complex array src (batch x s[0] x s[1] x s[2], element type by dbl, or the work
 * array when src_work) into dst (batch x t[0] x t[1] x t[2]), cutting what lies outside dst
 * and zero-filling what src lacks. */
static void copy_block(const void *src, bool src_work, const int64_t *s, void *dst, bool dst_work, const int64_t *t,
                       int64_t batch, bool dbl) {
  for (int64_t b = 0; b < batch; b++)
    for (int64_t i0 = 0; i0 < t[0]; i0++)
      for (int64_t i1 = 0; i1 < t[1]; i1++) {
        int64_t drow = ((b * t[0] + i0) * t[1] + i1) * t[2];
        int64_t k = 0;
        if (i0 < s[0] && i1 < s[1]) {
          int64_t srow = ((b * s[0] + i0) * s[1] + i1) * s[2];
          for (; k < t[2] && k < s[2]; k++) {
            fft_c v = src_work ? ((const fft_c *)src)[srow + k] : load_c(src, dbl, srow + k);
            if (dst_work)
              ((fft_c *)dst)[drow + k] = v;
            else
              store_c(dst, dbl, drow + k, v);
          }
        }
        for (; k < t[2]; k++) {
          if (dst_work)
            ((fft_c *)dst)[drow + k] = (fft_c){0.0, 0.0};
          else
            store_c(dst, dbl, drow + k, (fft_c){0.0, 0.0});
        }
      }
}

/* ---- real transforms along the last axis ------------------------------------------------------ */

typedef struct fft_real_pass {
  const fft_line_plan *plan; /* NULL when n == 1 */
  int64_t n, h;              /* real length, complex length n/2+1 */
  const void *real_in;       /* RFFT: rows of n reals */
  void *real_out;            /* IRFFT: rows of n reals */
  fft_c *w;                  /* rows of h complex values */
  bool dbl;
  atomic_int failed;
} fft_real_pass;

static double load_r(const void *p, bool dbl, int64_t i) {
  return dbl ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

/* RFFT rows: w row = the first h values of the transform of the real row. */
static void rfft_range(void *arg, int64_t begin, int64_t end) {
  fft_real_pass *a = arg;
  int64_t n = a->n, h = a->h, wk = a->plan ? line_work(a->plan) : 0;
  fft_c *buf = malloc((size_t)(n + wk) * sizeof(fft_c));
  if (!buf) {
    atomic_store(&a->failed, 1);
    return;
  }
  fft_c *x = buf + wk;
  for (int64_t r = begin; r < end; r++) {
    for (int64_t t = 0; t < n; t++)
      x[t] = (fft_c){load_r(a->real_in, a->dbl, r * n + t), 0.0};
    if (a->plan)
      line_forward(a->plan, x, buf);
    memcpy(a->w + r * h, x, (size_t)h * sizeof(fft_c));
  }
  free(buf);
}

/* IRFFT rows: the Hermitian completion of the w row, inverted; its real parts. */
static void irfft_range(void *arg, int64_t begin, int64_t end) {
  fft_real_pass *a = arg;
  int64_t n = a->n, h = a->h, wk = a->plan ? line_work(a->plan) : 0;
  fft_c *buf = malloc((size_t)(n + wk) * sizeof(fft_c));
  if (!buf) {
    atomic_store(&a->failed, 1);
    return;
  }
  fft_c *x = buf + wk;
  for (int64_t r = begin; r < end; r++) {
    const fft_c *row = a->w + r * h;
    for (int64_t k = 0; k < h; k++)
      x[k] = row[k];
    for (int64_t k = 1; k < n - h + 1; k++)
      x[n - k] = c_conj(row[k]);
    if (a->plan)
      line_inverse(a->plan, x, buf);
    for (int64_t t = 0; t < n; t++) {
      if (a->dbl)
        ((double *)a->real_out)[r * n + t] = x[t].re;
      else
        ((float *)a->real_out)[r * n + t] = (float)x[t].re;
    }
  }
  free(buf);
}

/* ---- the entry point --------------------------------------------------------------------------- */

/* Dims of the trailing fft_rank axes as three (leading ones 1), and the batch before them. */
static int64_t split_dims(const int64_t *dims, int rank, int fft_rank, int64_t *out3) {
  int64_t batch = 1;
  for (int i = 0; i < rank - fft_rank; i++)
    batch *= dims[i];
  for (int i = 0; i < 3; i++)
    out3[i] = 1;
  for (int i = 0; i < fft_rank; i++)
    out3[3 - fft_rank + i] = dims[rank - fft_rank + i];
  return batch;
}

static int64_t count(const int64_t *d, int64_t batch) { return batch * d[0] * d[1] * d[2]; }

static hlo_status oom(void) { return hlo_rt_error("fft: out of memory"); }

hlo_status hlo_rt_fft(hlo_context *ctx, void **plan_slot, const int64_t *desc, const void *in, void *out) {
  int32_t type = (int32_t)desc[0];
  bool dbl = desc[1] != 0;
  int rank = (int)desc[2], fft_rank = (int)desc[3];
  const int64_t *in_dims = desc + 4, *out_dims = desc + 4 + rank, *len = desc + 4 + 2 * rank;
  int64_t s[3], t[3], L[3];
  int64_t batch = split_dims(in_dims, rank, fft_rank, s);
  split_dims(out_dims, rank, fft_rank, t);
  for (int i = 0; i < 3; i++)
    L[i] = i < 3 - fft_rank ? 1 : len[i - (3 - fft_rank)];
  int64_t n_out = count(t, batch);
  size_t out_elem = (type == HLO_RT_FFT_IRFFT ? 1 : 2) * (dbl ? sizeof(double) : sizeof(float));
  if (n_out == 0)
    return NULL;
  if (L[0] == 0 || L[1] == 0 || L[2] == 0) { /* XLA: an empty transform gives zeros */
    memset(out, 0, (size_t)n_out * out_elem);
    return NULL;
  }
  fft_plan *plan = plan_get(plan_slot, 3, L);
  if (!plan)
    return oom();
  /* The work array: fft_length, with the last axis halved for the real forms. */
  int64_t wd[3] = {L[0], L[1], L[2]};
  if (type == HLO_RT_FFT_RFFT || type == HLO_RT_FFT_IRFFT)
    wd[2] = L[2] / 2 + 1;
  fft_c *w = malloc((size_t)count(wd, batch) * sizeof(fft_c));
  if (!w)
    return oom();
  bool ok = true, inverse = type == HLO_RT_FFT_IFFT || type == HLO_RT_FFT_IRFFT;
  fft_real_pass rp = {.plan = plan->axis[2], .n = L[2], .h = wd[2], .w = w, .dbl = dbl};
  atomic_init(&rp.failed, 0);
  int64_t rows = batch * L[0] * L[1];
  switch (type) {
  case HLO_RT_FFT_RFFT:
    rp.real_in = in;
    run_lines(ctx, rows, L[2], rfft_range, &rp);
    ok = !atomic_load(&rp.failed) && pass_axis(ctx, plan->axis[1], w, batch, wd, 1, false) &&
         pass_axis(ctx, plan->axis[0], w, batch, wd, 0, false);
    break;
  case HLO_RT_FFT_IRFFT:
    copy_block(in, false, s, w, true, wd, batch, dbl);
    ok = pass_axis(ctx, plan->axis[0], w, batch, wd, 0, true) && pass_axis(ctx, plan->axis[1], w, batch, wd, 1, true);
    if (ok) {
      rp.real_out = out;
      run_lines(ctx, rows, L[2], irfft_range, &rp);
      ok = !atomic_load(&rp.failed);
    }
    break;
  default:
    copy_block(in, false, s, w, true, wd, batch, dbl);
    for (int a = 2; a >= 0 && ok; a--)
      ok = pass_axis(ctx, plan->axis[a], w, batch, wd, a, inverse);
    break;
  }
  if (ok && type != HLO_RT_FFT_IRFFT)
    copy_block(w, true, wd, out, false, t, batch, dbl);
  free(w);
  return ok ? NULL : oom();
}
