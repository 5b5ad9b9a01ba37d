/* layernorm.c — row layer normalization (eps 1e-5) with gamma and beta; two passes per row. */
#include "common.h"
#include <math.h>
int main(int argc, char **argv) {
  BENCH_ARGS(6);
  long rows = atol(argv[4]), cols = atol(argv[5]);
  float *x = bench_read(dir, 0, rows * cols * 4), *g = bench_read(dir, 1, cols * 4);
  float *b = bench_read(dir, 2, cols * 4), *y = bench_alloc(rows * cols * 4);
  BENCH_LOOP(reps)
#pragma omp parallel for schedule(static)
    for (long r = 0; r < rows; r++) {
      const float *xr = x + r * cols;
      float *yr = y + r * cols;
      float s = 0, s2 = 0;
#pragma omp simd reduction(+ : s)
      for (long j = 0; j < cols; j++) s += xr[j];
      float mean = s / cols;
#pragma omp simd reduction(+ : s2)
      for (long j = 0; j < cols; j++) { float d = xr[j] - mean; s2 += d * d; }
      float rs = 1.0f / sqrtf(s2 / cols + 1e-5f);
#pragma omp simd
      for (long j = 0; j < cols; j++) yr[j] = (xr[j] - mean) * rs * g[j] + b[j];
    }
  BENCH_END(reps);
  bench_write(dir, 0, y, rows * cols * 4);
  return 0;
}
