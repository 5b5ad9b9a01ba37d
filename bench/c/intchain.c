/* intchain.c — fused s32 chain: t = x*1664525 + 1013904223; y = ((t ^ (t >>> 13)) & 65535) + x. */
#include "common.h"
#include <stdint.h>
int main(int argc, char **argv) {
  BENCH_ARGS(5);
  long n = atol(argv[4]);
  uint32_t *x = bench_read(dir, 0, n * 4), *y = bench_alloc(n * 4);
  BENCH_LOOP(reps)
#pragma omp parallel for simd schedule(static)
    for (long i = 0; i < n; i++) {
      uint32_t t = x[i] * 1664525u + 1013904223u;
      y[i] = ((t ^ (t >> 13)) & 65535u) + x[i];
    }
  BENCH_END(reps);
  bench_write(dir, 0, y, n * 4);
  return 0;
}
