/* rt_fft_test.c — hlo_rt_fft at the runtime's C level against a naive O(n^2) DFT written
 * from the definition (X[k] = sum_t x[t] exp(-2 pi i k t / n), the inverse divided by n):
 * every length 1..130 (radix 2/3/4, generic radices, Bluestein for primes > 31), larger
 * lengths (97, 243, 1000, 1024, 4099), batches, 2-D and 3-D transforms on a 4-thread
 * context, RFFT/IRFFT against the complex transform, padding/cutting to fft_length, zero
 * lengths, and a plan slot reused across calls and released.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/rt.h"
#include "hlo/runtime.h"

static int failures;

#define CHECK(cond, ...)                                                                                 \
  do {                                                                                                   \
    if (!(cond)) {                                                                                       \
      failures++;                                                                                        \
      fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                                    \
      fprintf(stderr, __VA_ARGS__);                                                                      \
      fprintf(stderr, "\n");                                                                             \
    }                                                                                                    \
  } while (0)

static double rnd(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return (double)(*s >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* The naive DFT along one axis of a row-major complex double array (interleaved), in place:
 * dims d[0..rank), transformed axis `axis` over the first `len` entries. */
static void naive_axis(double *a, const int64_t *d, int rank, int axis, int inverse) {
  int64_t n = d[axis], stride = 1, outer = 1;
  for (int i = axis + 1; i < rank; i++)
    stride *= d[i];
  for (int i = 0; i < axis; i++)
    outer *= d[i];
  double *tmp = malloc((size_t)(2 * n) * sizeof(double));
  long double *cs = malloc((size_t)(2 * n) * sizeof(long double));
  for (int64_t k = 0; k < n; k++) {
    long double ang = (inverse ? 2.0L : -2.0L) * 3.14159265358979323846264338327950288L * (long double)k / (long double)n;
    cs[2 * k] = cosl(ang);
    cs[2 * k + 1] = sinl(ang);
  }
  for (int64_t o = 0; o < outer; o++)
    for (int64_t s = 0; s < stride; s++) {
      double *base = a + 2 * (o * n * stride + s);
      for (int64_t k = 0; k < n; k++) {
        long double re = 0, im = 0;
        for (int64_t t = 0; t < n; t++) {
          int64_t kt = k * t % n;
          long double c = cs[2 * kt], sn = cs[2 * kt + 1], xr = base[2 * t * stride], xi = base[2 * t * stride + 1];
          re += xr * c - xi * sn;
          im += xr * sn + xi * c;
        }
        tmp[2 * k] = (double)(inverse ? re / n : re);
        tmp[2 * k + 1] = (double)(inverse ? im / n : im);
      }
      for (int64_t k = 0; k < n; k++) {
        base[2 * k * stride] = tmp[2 * k];
        base[2 * k * stride + 1] = tmp[2 * k + 1];
      }
    }
  free(tmp);
  free(cs);
}

/* Largest |got - want| relative to the largest |want| (1 when want is all zero). */
static double rel_err(const double *got, const double *want, int64_t n) {
  double err = 0, mag = 0;
  for (int64_t i = 0; i < n; i++) {
    err = fmax(err, fabs(got[i] - want[i]));
    mag = fmax(mag, fabs(want[i]));
  }
  return err / (mag > 0 ? mag : 1);
}

static int64_t prod(const int64_t *d, int rank) {
  int64_t p = 1;
  for (int i = 0; i < rank; i++)
    p *= d[i];
  return p;
}

/* A complex FFT or IFFT of a c128 batch x dims array over its last fft_rank axes. */
static void check_complex(hlo_context *ctx, const int64_t *dims, int rank, int fft_rank, int inverse, uint64_t seed) {
  int64_t n = prod(dims, rank);
  double *x = malloc((size_t)(2 * n + 1) * sizeof(double)), *y = malloc((size_t)(2 * n + 1) * sizeof(double));
  double *want = malloc((size_t)(2 * n + 1) * sizeof(double));
  for (int64_t i = 0; i < 2 * n; i++)
    x[i] = want[i] = rnd(&seed);
  for (int a = rank - fft_rank; a < rank; a++)
    naive_axis(want, dims, rank, a, inverse);
  int64_t desc[4 + 3 * 8];
  desc[0] = inverse ? HLO_RT_FFT_IFFT : HLO_RT_FFT_FFT;
  desc[1] = 1;
  desc[2] = rank;
  desc[3] = fft_rank;
  for (int i = 0; i < rank; i++)
    desc[4 + i] = desc[4 + rank + i] = dims[i];
  for (int i = 0; i < fft_rank; i++)
    desc[4 + 2 * rank + i] = dims[rank - fft_rank + i];
  void *slot = NULL;
  for (int rep = 0; rep < 2; rep++) { /* the second call reuses the plan */
    hlo_status st = hlo_rt_fft(ctx, &slot, desc, x, y);
    CHECK(!st, "fft failed");
    double e = rel_err(y, want, 2 * n);
    CHECK(e < 1e-12, "%s of dims[last]=%lld rank %d fft_rank %d: relative error %g", inverse ? "ifft" : "fft",
          (long long)dims[rank - 1], rank, fft_rank, e);
  }
  CHECK(slot != NULL, "the plan was not kept");
  hlo_rt_fft_plan_release(&slot);
  CHECK(slot == NULL, "the plan was not released");
  free(x);
  free(y);
  free(want);
}

/* c64 FFT with padding/cutting: operand dims differ from fft_length. */
static void check_pad_cut(void) {
  /* operand c64[2,3] transformed with fft_length {4}: rows zero-padded to 4, results cut to 3. */
  float x[12] = {1, 2, 3, 4, 5, 6, -1, 0, 0, 1, 2, -2};
  float y[12];
  int64_t desc[] = {HLO_RT_FFT_FFT, 0, 2, 1, 2, 3, 2, 3, 4};
  void *slot = NULL;
  CHECK(!hlo_rt_fft(NULL, &slot, desc, x, y), "pad fft failed");
  for (int r = 0; r < 2; r++) {
    double row[8] = {0};
    for (int i = 0; i < 6; i++)
      row[i] = x[r * 6 + i];
    int64_t d[1] = {4};
    naive_axis(row, d, 1, 0, 0);
    for (int i = 0; i < 6; i++)
      CHECK(fabs(y[r * 6 + i] - row[i]) < 1e-5, "pad/cut row %d value %d: %g vs %g", r, i, y[r * 6 + i], row[i]);
  }
  hlo_rt_fft_plan_release(&slot);
  /* A zero in fft_length gives zeros (XLA's 3D_FFT_1x0x1 case). */
  float z[2] = {42.24f, 24.42f}, zo[2] = {7, 7};
  int64_t dz[] = {HLO_RT_FFT_FFT, 0, 4, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1};
  CHECK(!hlo_rt_fft(NULL, &slot, dz, z, zo) && zo[0] == 0 && zo[1] == 0, "zero-length transform");
  hlo_rt_fft_plan_release(&slot);
}

/* RFFT against the complex FFT of the real input, then IRFFT back to the input. */
static void check_real(hlo_context *ctx, const int64_t *dims, int rank, int fft_rank, uint64_t seed) {
  int64_t n = prod(dims, rank), last = dims[rank - 1], h = last / 2 + 1, nh = n / last * h;
  double *x = malloc((size_t)n * sizeof(double)), *full = malloc((size_t)(2 * n) * sizeof(double));
  double *half = malloc((size_t)(2 * nh) * sizeof(double)), *back = malloc((size_t)n * sizeof(double));
  double *want = malloc((size_t)(2 * nh) * sizeof(double));
  for (int64_t i = 0; i < n; i++) {
    x[i] = rnd(&seed);
    full[2 * i] = x[i];
    full[2 * i + 1] = 0;
  }
  for (int a = rank - fft_rank; a < rank; a++)
    naive_axis(full, dims, rank, a, 0);
  for (int64_t r = 0; r < n / last; r++)
    memcpy(want + 2 * r * h, full + 2 * r * last, (size_t)(2 * h) * sizeof(double));
  int64_t desc[4 + 3 * 8];
  desc[1] = 1;
  desc[2] = rank;
  desc[3] = fft_rank;
  for (int i = 0; i < rank; i++)
    desc[4 + i] = desc[4 + rank + i] = dims[i];
  desc[4 + 2 * rank - 1] = h;
  for (int i = 0; i < fft_rank; i++)
    desc[4 + 2 * rank + i] = dims[rank - fft_rank + i];
  desc[0] = HLO_RT_FFT_RFFT;
  void *slot = NULL;
  CHECK(!hlo_rt_fft(ctx, &slot, desc, x, half), "rfft failed");
  double e = rel_err(half, want, 2 * nh);
  CHECK(e < 1e-12, "rfft last=%lld fft_rank %d: relative error %g", (long long)last, fft_rank, e);
  hlo_rt_fft_plan_release(&slot);
  /* IRFFT: operand dims with the halved last axis, result dims the real ones. */
  for (int i = 0; i < rank; i++) {
    desc[4 + i] = dims[i];
    desc[4 + rank + i] = dims[i];
  }
  desc[4 + rank - 1] = h;
  desc[0] = HLO_RT_FFT_IRFFT;
  CHECK(!hlo_rt_fft(ctx, &slot, desc, half, back), "irfft failed");
  e = rel_err(back, x, n);
  CHECK(e < 1e-12, "irfft round trip last=%lld fft_rank %d: relative error %g", (long long)last, fft_rank, e);
  hlo_rt_fft_plan_release(&slot);
  free(x);
  free(full);
  free(half);
  free(back);
  free(want);
}

int main(void) {
  hlo_context_options opts;
  hlo_context_options_init(&opts);
  opts.num_threads = 4;
  hlo_context *ctx = NULL;
  hlo_status st = hlo_context_create(&opts, &ctx);
  CHECK(!st, "context");
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  for (int64_t n = 1; n <= 130; n++) {
    int64_t d[2] = {3, n};
    check_complex(NULL, d, 2, 1, (int)(n & 1), seed + (uint64_t)n);
  }
  int64_t big[] = {97, 243, 1000, 1024, 4099};
  for (int i = 0; i < 5; i++) {
    int64_t d[2] = {2, big[i]};
    check_complex(ctx, d, 2, 1, i & 1, seed + (uint64_t)i);
  }
  int64_t d2[3] = {3, 12, 37}, d3[4] = {2, 5, 6, 9}, dl[2] = {64, 256};
  check_complex(ctx, d2, 3, 2, 0, 11);
  check_complex(ctx, d2, 3, 2, 1, 12);
  check_complex(ctx, d3, 4, 3, 0, 13);
  check_complex(ctx, d3, 4, 3, 1, 14);
  check_complex(ctx, dl, 2, 2, 0, 15); /* large enough for the thread pool */
  for (int64_t n = 1; n <= 20; n++) {
    int64_t d[2] = {2, n};
    check_real(NULL, d, 2, 1, seed + 100 + (uint64_t)n);
  }
  int64_t r2[3] = {2, 5, 8}, r3[3] = {3, 4, 9}, r4[4] = {1, 3, 4, 7};
  check_real(ctx, r2, 3, 2, 21);
  check_real(ctx, r3, 3, 2, 22);
  check_real(ctx, r4, 4, 3, 23);
  check_pad_cut();
  hlo_context_destroy(ctx);
  if (failures) {
    fprintf(stderr, "%d failures\n", failures);
    return 1;
  }
  printf("rt_fft_test: ok\n");
  return 0;
}
