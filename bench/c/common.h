/* common.h — shared helpers of the hand-written C baselines of bench/run.py.
 * Every baseline is `prog DIR REPS THREADS DIMS...`: it reads DIR/in<i>.bin (raw little-endian
 * arrays written by run.py), runs its kernel once as a warm-up and REPS more times, prints
 * `median_ms=X`, and writes its results to DIR/c_out<i>.bin for run.py to check. */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static inline void *bench_read(const char *dir, int i, size_t bytes) {
  char path[4096];
  snprintf(path, sizeof path, "%s/in%d.bin", dir, i);
  FILE *f = fopen(path, "rb");
  void *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!f || !p || fread(p, 1, bytes, f) != bytes) {
    fprintf(stderr, "cannot read %zu bytes from %s\n", bytes, path);
    exit(1);
  }
  fclose(f);
  return p;
}

static inline void bench_write(const char *dir, int i, const void *p, size_t bytes) {
  char path[4096];
  snprintf(path, sizeof path, "%s/c_out%d.bin", dir, i);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(p, 1, bytes, f) != bytes) {
    fprintf(stderr, "cannot write %s\n", path);
    exit(1);
  }
  fclose(f);
}

static inline void *bench_alloc(size_t bytes) {
  void *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!p) { fprintf(stderr, "out of memory\n"); exit(1); }
  memset(p, 0, bytes);
  return p;
}

static inline double bench_now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static inline int bench_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Timing: `BENCH_LOOP(reps) { kernel } BENCH_END(reps);` runs the kernel as a warm-up for
 * BENCH_WARMUP_MS (at least once), then reps times, and prints the median.  hlorun
 * --benchmark and bench/run.py's numpy timing warm up for the same time. */
enum { BENCH_WARMUP_MS = 100 };
static inline void bench_report(double *t, int n) {
  qsort(t, n, sizeof(double), bench_cmp);
  printf("median_ms=%.4f\n", n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]));
  free(t);
}
#define BENCH_LOOP(reps)                                                   \
  double *t_ = malloc(sizeof(double) * ((reps) < 1 ? 1 : (reps)));        \
  double warm_ = bench_now_ms() + BENCH_WARMUP_MS;                         \
  for (int r_ = -1; r_ < ((reps) < 1 ? 1 : (reps)); r_++) {                \
    double s_ = bench_now_ms();
#define BENCH_TIMED_                                                       \
  if (r_ >= 0) t_[r_] = bench_now_ms() - s_;                               \
  else if (s_ < warm_) r_--; /* warming up: run -1 again */                \
  }
#define BENCH_END(reps)                                                    \
  BENCH_TIMED_                                                             \
  bench_report(t_, (reps) < 1 ? 1 : (reps))

/* BENCH_END that stores the median (ms) in `out` instead of printing it. */
static inline double bench_median(double *t, int n) {
  qsort(t, n, sizeof(double), bench_cmp);
  double m = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
  free(t);
  return m;
}
#define BENCH_END_QUIET(reps, out)                                         \
  BENCH_TIMED_                                                             \
  out = bench_median(t_, (reps) < 1 ? 1 : (reps))

#define BENCH_ARGS(min)                                                    \
  if (argc < (min)) { fprintf(stderr, "usage: %s DIR REPS THREADS DIMS...\n", argv[0]); return 2; } \
  const char *dir = argv[1];                                               \
  int reps = atoi(argv[2]);                                                \
  int threads = atoi(argv[3]);                                             \
  (void)threads;                                                           \
  BENCH_SET_THREADS(threads)

#ifdef _OPENMP
#define BENCH_SET_THREADS(n) omp_set_num_threads(n);
#else
#define BENCH_SET_THREADS(n)
#endif
#endif
