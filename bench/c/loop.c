/* loop.c — the loop-heavy workload: n iterations of s = max(s*0.9 + x, y) over f32[16] and a
 * counter (single thread: the loop carries a dependence). */
#include "common.h"
int main(int argc, char **argv) {
  BENCH_ARGS(5);
  int n = atoi(argv[4]);
  float *s0 = bench_read(dir, 0, 64), *x = bench_read(dir, 1, 64), *y = bench_read(dir, 2, 64);
  float s[16];
  volatile int count = 0;
  BENCH_LOOP(reps)
    memcpy(s, s0, sizeof s);
    int i = 0;
    for (; i < n; i++) {
      for (int j = 0; j < 16; j++) {
        float a = s[j] * 0.9f + x[j];
        s[j] = a > y[j] ? a : y[j];
      }
      __asm__ volatile("" : : "r"(s) : "memory"); /* keep the loop from being folded away */
    }
    count = i;
  BENCH_END(reps);
  int c = count;
  bench_write(dir, 0, &c, 4);
  bench_write(dir, 1, s, 64);
  return 0;
}
