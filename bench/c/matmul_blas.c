/* matmul_blas.c — C = A*B for n x n f32 through OpenBLAS's cblas_sgemm. */
#include "common.h"
#include "blas.h"
int main(int argc, char **argv) {
  BENCH_ARGS(5);
  int n = atoi(argv[4]);
  openblas_set_num_threads(threads);
  float *a = bench_read(dir, 0, (size_t)n * n * 4), *b = bench_read(dir, 1, (size_t)n * n * 4);
  float *c = bench_alloc((size_t)n * n * 4);
  BENCH_LOOP(reps)
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a, n, b, n, 0, c, n);
  BENCH_END(reps);
  bench_write(dir, 0, c, (size_t)n * n * 4);
  return 0;
}
