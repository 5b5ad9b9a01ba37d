/* gemm_bench.c — times the runtime's f32 GEMM (hlo_rt_gemm_f32) against an OpenBLAS
 * cblas_sgemm loaded at run time (dlopen, so the build needs no BLAS), in one process,
 * alternating the two, and prints the median of each and their GFLOP/s ratio.  Also checks
 * that both agree.  Not part of CI: `cmake --build build --target gemm_bench`, then
 *   OPENBLAS_CORETYPE=SkylakeX build/gemm_bench [--cpu] [--blas PATH] [--threads T] [--reps R] N...
 * (PATH defaults to libopenblas.so.0; N is a square size, or MxNxK).
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hlo/rt.h"
#include "hlo/rt_parallel.h"
#include "hlo/runtime.h"

typedef void (*sgemm_fn)(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
                         const float *b, int ldb, float beta, float *c, int ldc);
typedef void (*set_threads_fn)(int);

/* Wall-clock time (CLOCK_MONOTONIC), or with --cpu the process's CPU time (steadier on a
 * shared machine for one thread; with several it also counts a BLAS's spinning workers). */
static double now_ms(clockid_t clk) {
  struct timespec ts;
  clock_gettime(clk, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Times one m x n x k size, reps rounds of (ours, blas); prints one line. */
static void bench_size(hlo_context *ctx, clockid_t clk, sgemm_fn sgemm, int m, int n, int k, int reps) {
  float *a = malloc(sizeof(float) * (size_t)m * k), *b = malloc(sizeof(float) * (size_t)k * n);
  float *c1 = malloc(sizeof(float) * (size_t)m * n), *c2 = malloc(sizeof(float) * (size_t)m * n);
  double *t1 = malloc(sizeof(double) * reps), *t2 = malloc(sizeof(double) * reps);
  for (size_t i = 0; i < (size_t)m * k; i++)
    a[i] = (float)((i * 7919 % 1000) / 500.0 - 1.0);
  for (size_t i = 0; i < (size_t)k * n; i++)
    b[i] = (float)((i * 104729 % 1000) / 500.0 - 1.0);
  hlo_rt_gemm_f32(ctx, m, n, k, a, k, b, n, c1, n); /* warm-up */
  if (sgemm)
    sgemm(101, 111, 111, m, n, k, 1.0f, a, k, b, n, 0.0f, c2, n);
  for (int r = 0; r < reps; r++) {
    double s = now_ms(clk);
    hlo_rt_gemm_f32(ctx, m, n, k, a, k, b, n, c1, n);
    t1[r] = now_ms(clk) - s;
    if (sgemm) {
      s = now_ms(clk);
      sgemm(101, 111, 111, m, n, k, 1.0f, a, k, b, n, 0.0f, c2, n);
      t2[r] = now_ms(clk) - s;
    }
  }
  double err = 0;
  if (sgemm)
    for (size_t i = 0; i < (size_t)m * n; i++)
      err = fmax(err, fabs((double)c1[i] - c2[i]));
  double flop = 2.0 * m * n * k, m1 = median(t1, reps), m2 = sgemm ? median(t2, reps) : NAN;
  printf("%5dx%5dx%5d  ours %8.3f ms %7.1f GFLOP/s   blas %8.3f ms %7.1f GFLOP/s   ratio %.3f  maxdiff %.2g\n", m,
         n, k, m1, flop / m1 / 1e6, m2, flop / m2 / 1e6, m2 / m1, err);
  fflush(stdout);
  free(a), free(b), free(c1), free(c2), free(t1), free(t2);
}

int main(int argc, char **argv) {
  const char *blas = "libopenblas.so.0";
  int threads = 2, reps = 11, i = 1;
  clockid_t clk = CLOCK_MONOTONIC;
  for (; i < argc && argv[i][0] == '-'; i += 2) {
    if (!strcmp(argv[i], "--cpu")) {
      clk = CLOCK_PROCESS_CPUTIME_ID;
      i--;
      continue;
    }
    if (i + 1 >= argc)
      return fprintf(stderr, "%s needs a value\n", argv[i]), 2;
    if (!strcmp(argv[i], "--blas"))
      blas = argv[i + 1];
    else if (!strcmp(argv[i], "--threads"))
      threads = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--reps"))
      reps = atoi(argv[i + 1]);
    else
      return fprintf(stderr, "unknown option %s\n", argv[i]), 2;
  }
  /* OpenBLAS's idle workers spin for a while after each call (2^28 cycles by default) and,
   * with as many threads as cores, take the cores from the runtime's call that follows: on 2
   * cores of an AMD EPYC family 25, 256 x 2048 x 2048 measured 0.52x alternating and 1.01x
   * with the spin cut to 2^4 cycles (OpenBLAS reads this when it is loaded). */
  setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0);
  void *lib = dlopen(blas, RTLD_NOW);
  sgemm_fn sgemm = lib ? (sgemm_fn)dlsym(lib, "cblas_sgemm") : NULL;
  set_threads_fn st = lib ? (set_threads_fn)dlsym(lib, "openblas_set_num_threads") : NULL;
  if (!sgemm)
    fprintf(stderr, "no cblas_sgemm in %s: timing ours only\n", blas);
  if (st)
    st(threads);
  hlo_context_options o;
  hlo_context_options_init(&o);
  o.num_threads = threads;
  hlo_context *ctx = NULL;
  if (hlo_context_create(&o, &ctx) != NULL)
    return fprintf(stderr, "cannot create a context\n"), 1;
  for (; i < argc; i++) {
    int m = 0, n = 0, k = 0;
    if (sscanf(argv[i], "%dx%dx%d", &m, &n, &k) != 3)
      m = n = k = atoi(argv[i]);
    if (m > 0 && n > 0 && k > 0)
      bench_size(ctx, clk, sgemm, m, n, k, reps < 1 ? 1 : reps);
  }
  hlo_context_destroy(ctx);
  return 0;
}
