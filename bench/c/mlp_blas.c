/* mlp_blas.c — relu(relu(x W1 + b1) W2 + b2) W3 + b3: three cblas_sgemm calls, each followed by
 * one fused C pass for bias and ReLU. Dims: batch in hidden out. */
#include "common.h"
#include "blas.h"
static void bias_act(float *h, const float *b, int rows, int cols, int relu) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; r++)
#pragma omp simd
    for (int j = 0; j < cols; j++) {
      float v = h[(long)r * cols + j] + b[j];
      h[(long)r * cols + j] = relu && v < 0 ? 0 : v;
    }
}
int main(int argc, char **argv) {
  BENCH_ARGS(8);
  int bt = atoi(argv[4]), in = atoi(argv[5]), hid = atoi(argv[6]), out = atoi(argv[7]);
  openblas_set_num_threads(threads);
  float *x = bench_read(dir, 0, (size_t)bt * in * 4), *w1 = bench_read(dir, 1, (size_t)in * hid * 4);
  float *b1 = bench_read(dir, 2, hid * 4), *w2 = bench_read(dir, 3, (size_t)hid * hid * 4);
  float *b2 = bench_read(dir, 4, hid * 4), *w3 = bench_read(dir, 5, (size_t)hid * out * 4);
  float *b3 = bench_read(dir, 6, out * 4);
  float *h1 = bench_alloc((size_t)bt * hid * 4), *h2 = bench_alloc((size_t)bt * hid * 4);
  float *y = bench_alloc((size_t)bt * out * 4);
  BENCH_LOOP(reps)
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, bt, hid, in, 1, x, in, w1, hid, 0, h1, hid);
  bias_act(h1, b1, bt, hid, 1);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, bt, hid, hid, 1, h1, hid, w2, hid, 0, h2, hid);
  bias_act(h2, b2, bt, hid, 1);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, bt, out, hid, 1, h2, hid, w3, out, 0, y, out);
  bias_act(y, b3, bt, out, 0);
  BENCH_END(reps);
  bench_write(dir, 0, y, (size_t)bt * out * 4);
  return 0;
}
