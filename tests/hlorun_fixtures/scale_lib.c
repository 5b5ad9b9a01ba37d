/* scale_lib.c — a custom-call library for tests/hlorun_fixtures/feed_model.c: the target
 * hlorun_test_scale doubles an f32[3] (XLA's CPU custom-call form: out, array of inputs). */
#include <stdint.h>

__attribute__((visibility("default"))) void hlorun_test_scale(void *out, const void **in) {
  const float *x = in[0];
  float *y = out;
  for (int i = 0; i < 3; i++)
    y[i] = 2 * x[i];
}
