/* transpose.c — out-of-place transpose of a rows x cols f32 matrix in 32x32 tiles (OpenMP). */
#include "common.h"
#define T 32
int main(int argc, char **argv) {
  BENCH_ARGS(6);
  long rows = atol(argv[4]), cols = atol(argv[5]);
  float *x = bench_read(dir, 0, rows * cols * 4), *y = bench_alloc(rows * cols * 4);
  BENCH_LOOP(reps)
#pragma omp parallel for collapse(2) schedule(static)
    for (long i0 = 0; i0 < rows; i0 += T)
      for (long j0 = 0; j0 < cols; j0 += T)
        for (long i = i0; i < i0 + T && i < rows; i++)
          for (long j = j0; j < j0 + T && j < cols; j++) y[j * rows + i] = x[i * cols + j];
  BENCH_END(reps);
  bench_write(dir, 0, y, rows * cols * 4);
  return 0;
}
