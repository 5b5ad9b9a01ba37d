/* attention_blas.c — softmax(q k^T / sqrt(d)) v per (batch, head): cblas_sgemm for both
 * products and one fused C pass per row for scale, max, exp, sum and normalization.
 * Dims: B H S D. The heads are split over OpenMP threads, each calling single-threaded BLAS. */
#include "common.h"
#include "blas.h"
#include <math.h>
int main(int argc, char **argv) {
  BENCH_ARGS(8);
  long B = atol(argv[4]), H = atol(argv[5]), S = atol(argv[6]), D = atol(argv[7]);
  openblas_set_num_threads(1);
  size_t qb = B * H * S * D * 4;
  float *q = bench_read(dir, 0, qb), *k = bench_read(dir, 1, qb), *v = bench_read(dir, 2, qb);
  float *o = bench_alloc(qb), *s = bench_alloc((size_t)threads * S * S * 4);
  float scale = 1.0f / sqrtf((float)D);
  BENCH_LOOP(reps)
#pragma omp parallel for schedule(dynamic)
  for (long bh = 0; bh < B * H; bh++) {
    int t = 0;
#ifdef _OPENMP
    t = omp_get_thread_num();
#endif
    float *sc = s + (size_t)t * S * S;
    const float *qh = q + bh * S * D, *kh = k + bh * S * D, *vh = v + bh * S * D;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, S, S, D, scale, qh, D, kh, D, 0, sc, S);
    for (long r = 0; r < S; r++) {
      float *row = sc + r * S, m = -INFINITY, sum = 0;
      for (long j = 0; j < S; j++) m = row[j] > m ? row[j] : m;
      for (long j = 0; j < S; j++) { row[j] = expf(row[j] - m); sum += row[j]; }
      float inv = 1.0f / sum;
      for (long j = 0; j < S; j++) row[j] *= inv;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, S, D, S, 1, sc, S, vh, D, 0,
                o + bh * S * D, D);
  }
  BENCH_END(reps);
  bench_write(dir, 0, o, qb);
  return 0;
}
