/* stream.c — STREAM triad a[i] = b[i] + q*c[i] over three f64 arrays (OpenMP); prints the best
 * bandwidth in GB/s counting 24 bytes per element, as STREAM does. */
#include "common.h"
int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 20000000;
  int reps = argc > 2 ? atoi(argv[2]) : 10;
  BENCH_SET_THREADS(argc > 3 ? atoi(argv[3]) : 2)
  double *a = bench_alloc(n * 8), *b = bench_alloc(n * 8), *c = bench_alloc(n * 8);
#pragma omp parallel for
  for (long i = 0; i < n; i++) { b[i] = 1.0; c[i] = 2.0; }
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    double t = bench_now_ms();
#pragma omp parallel for simd schedule(static)
    for (long i = 0; i < n; i++) a[i] = b[i] + 3.0 * c[i];
    t = bench_now_ms() - t;
    if (t < best) best = t;
  }
  printf("triad_gbs=%.2f check=%g\n", 24.0 * n / (best * 1e6), a[n / 2]);
  return 0;
}
