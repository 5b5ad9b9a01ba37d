/* colsum.c — sum of each column of a rows x cols f32 matrix: each thread owns a strip of
 * columns and streams down the rows, vectorized across the kept dimension. */
#include "common.h"
#define STRIP 512
int main(int argc, char **argv) {
  BENCH_ARGS(6);
  long rows = atol(argv[4]), cols = atol(argv[5]);
  float *x = bench_read(dir, 0, rows * cols * 4), *y = bench_alloc(cols * 4);
  BENCH_LOOP(reps)
#pragma omp parallel for schedule(static)
    for (long c0 = 0; c0 < cols; c0 += STRIP) {
      long c1 = c0 + STRIP < cols ? c0 + STRIP : cols;
      float acc[STRIP] = {0};
      for (long r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
#pragma omp simd
        for (long j = c0; j < c1; j++) acc[j - c0] += xr[j];
      }
      for (long j = c0; j < c1; j++) y[j] = acc[j - c0];
    }
  BENCH_END(reps);
  bench_write(dir, 0, y, cols * 4);
  return 0;
}
