/* axpy.c — fused a*x + b*x*x - c over n f32 with scalar a, b, c (one pass, OpenMP). */
#include "common.h"
int main(int argc, char **argv) {
  BENCH_ARGS(5);
  long n = atol(argv[4]);
  float *a = bench_read(dir, 0, 4), *b = bench_read(dir, 1, 4), *c = bench_read(dir, 2, 4);
  float *x = bench_read(dir, 3, n * 4), *y = bench_alloc(n * 4);
  float A = *a, B = *b, C = *c;
  BENCH_LOOP(reps)
#pragma omp parallel for simd schedule(static)
    for (long i = 0; i < n; i++) y[i] = A * x[i] + B * x[i] * x[i] - C;
  BENCH_END(reps);
  bench_write(dir, 0, y, n * 4);
  return 0;
}
