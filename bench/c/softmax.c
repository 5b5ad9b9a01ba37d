/* softmax.c — row softmax of a rows x cols f32 matrix: max, exp-and-sum, scale (rows in parallel). */
#include "common.h"
#include <math.h>
int main(int argc, char **argv) {
  BENCH_ARGS(6);
  long rows = atol(argv[4]), cols = atol(argv[5]);
  float *x = bench_read(dir, 0, rows * cols * 4), *y = bench_alloc(rows * cols * 4);
  BENCH_LOOP(reps)
#pragma omp parallel for schedule(static)
    for (long r = 0; r < rows; r++) {
      const float *xr = x + r * cols;
      float *yr = y + r * cols;
      float m = -INFINITY, s = 0;
#pragma omp simd reduction(max : m)
      for (long j = 0; j < cols; j++) m = xr[j] > m ? xr[j] : m;
#pragma omp simd reduction(+ : s)
      for (long j = 0; j < cols; j++) { yr[j] = expf(xr[j] - m); s += yr[j]; }
      float inv = 1.0f / s;
#pragma omp simd
      for (long j = 0; j < cols; j++) yr[j] *= inv;
    }
  BENCH_END(reps);
  bench_write(dir, 0, y, rows * cols * 4);
  return 0;
}
