/* conv_blas.c — 3x3 NHWC convolution with padding 1 as im2col (one fused gather pass into a
 * [N*H*W, 9*C] matrix) and one cblas_sgemm by the HWIO kernel seen as [9*C, K].
 * Dims: N H W C K. */
#include "common.h"
#include "blas.h"
int main(int argc, char **argv) {
  BENCH_ARGS(9);
  long n = atol(argv[4]), h = atol(argv[5]), w = atol(argv[6]), c = atol(argv[7]), k = atol(argv[8]);
  openblas_set_num_threads(threads);
  float *x = bench_read(dir, 0, n * h * w * c * 4), *f = bench_read(dir, 1, 9 * c * k * 4);
  float *col = bench_alloc(n * h * w * 9 * c * 4), *y = bench_alloc(n * h * w * k * 4);
  BENCH_LOOP(reps)
#pragma omp parallel for collapse(2) schedule(static)
  for (long b = 0; b < n; b++)
    for (long i = 0; i < h; i++)
      for (long j = 0; j < w; j++) {
        float *dst = col + ((b * h + i) * w + j) * 9 * c;
        for (int di = 0; di < 3; di++)
          for (int dj = 0; dj < 3; dj++, dst += c) {
            long ii = i + di - 1, jj = j + dj - 1;
            if (ii < 0 || ii >= h || jj < 0 || jj >= w) memset(dst, 0, c * 4);
            else memcpy(dst, x + ((b * h + ii) * w + jj) * c, c * 4);
          }
      }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n * h * w, k, 9 * c, 1, col, 9 * c, f, k,
              0, y, k);
  BENCH_END(reps);
  bench_write(dir, 0, y, n * h * w * k * 4);
  return 0;
}
