/* linear_t_blas.c — Y = X * W^T (X m x k, W n x k, row-major) through OpenBLAS's cblas_sgemm. */
#include "common.h"
#include "blas.h"
int main(int argc, char **argv) {
  BENCH_ARGS(7);
  int m = atoi(argv[4]), n = atoi(argv[5]), k = atoi(argv[6]);
  openblas_set_num_threads(threads);
  float *x = bench_read(dir, 0, (size_t)m * k * 4), *w = bench_read(dir, 1, (size_t)n * k * 4);
  float *y = bench_alloc((size_t)m * n * 4);
  BENCH_LOOP(reps)
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1, x, k, w, k, 0, y, n);
  BENCH_END(reps);
  bench_write(dir, 0, y, (size_t)m * n * 4);
  return 0;
}
