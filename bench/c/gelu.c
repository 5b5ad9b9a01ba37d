/* gelu.c — fused tanh-approximation GELU over n f32 (one pass, OpenMP). */
#include "common.h"
#include <math.h>
int main(int argc, char **argv) {
  BENCH_ARGS(5);
  long n = atol(argv[4]);
  float *x = bench_read(dir, 0, n * 4), *y = bench_alloc(n * 4);
  BENCH_LOOP(reps)
#pragma omp parallel for simd schedule(static)
    for (long i = 0; i < n; i++) {
      float v = x[i];
      y[i] = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
    }
  BENCH_END(reps);
  bench_write(dir, 0, y, n * 4);
  return 0;
}
