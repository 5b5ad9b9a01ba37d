/* rowsum.c — sum of each row of a rows x cols f32 matrix (rows in parallel, SIMD accumulators). */
#include "common.h"
int main(int argc, char **argv) {
  BENCH_ARGS(6);
  long rows = atol(argv[4]), cols = atol(argv[5]);
  float *x = bench_read(dir, 0, rows * cols * 4), *y = bench_alloc(rows * 4);
  BENCH_LOOP(reps)
#pragma omp parallel for schedule(static)
    for (long r = 0; r < rows; r++) {
      float s = 0;
#pragma omp simd reduction(+ : s)
      for (long j = 0; j < cols; j++) s += x[r * cols + j];
      y[r] = s;
    }
  BENCH_END(reps);
  bench_write(dir, 0, y, rows * 4);
  return 0;
}
