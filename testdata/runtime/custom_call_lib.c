/* custom_call_lib.c — the user custom-call library of docs/custom-call.md, built by
 * tests/runtime.cmake and loaded with hlorun --custom-call-lib.  One target per XLA CPU
 * custom-call API: the original form, the status-returning forms (XLA's
 * XlaCustomCallStatusSetFailure, resolved in the process that loads it), tuple operands and
 * results, and an in-place target used with output_to_operand_aliasing. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct XlaCustomCallStatus_ XlaCustomCallStatus;
void XlaCustomCallStatusSetFailure(XlaCustomCallStatus *status, const char *message, size_t message_len);

#define EXPORT __attribute__((visibility("default")))

/* API_VERSION_ORIGINAL: out[i] = in0[i % 2] + in1[i] for f32[2] and f32[4]. */
EXPORT void cc_add_cyclic(void *out, const void **in) {
  const float *a = in[0], *b = in[1];
  float *y = out;
  for (int i = 0; i < 4; i++)
    y[i] = a[i % 2] + b[i];
}

/* API_VERSION_STATUS_RETURNING: y = sqrt-free check: fails when any element is negative. */
EXPORT void cc_check_positive(void *out, const void **in, XlaCustomCallStatus *status) {
  const float *x = in[0];
  float *y = out;
  for (int i = 0; i < 4; i++) {
    if (x[i] < 0) {
      static const char msg[] = "negative input";
      XlaCustomCallStatusSetFailure(status, msg, strlen(msg));
      return;
    }
    y[i] = x[i] * 10;
  }
}

/* API_VERSION_STATUS_RETURNING_UNIFIED: scales f32[4] by the integer written in the opaque
 * backend_config ("3" multiplies by 3). */
EXPORT void cc_scale_opaque(void *out, const void **in, const char *opaque, size_t opaque_len,
                            XlaCustomCallStatus *status) {
  (void)status;
  int k = 0;
  for (size_t i = 0; i < opaque_len && opaque[i] >= '0' && opaque[i] <= '9'; i++)
    k = k * 10 + (opaque[i] - '0');
  const float *x = in[0];
  float *y = out;
  for (int i = 0; i < 4; i++)
    y[i] = x[i] * (float)k;
}

/* Tuples as XLA lays them out: operand 0 is a tuple (s32[2], f32[2]) given as an array of two
 * pointers; the result (f32[2], s32[]) is an array of two pointers. */
EXPORT void cc_tuple_swap(void *out, const void **in) {
  void *const *t = in[0];
  const int32_t *a = t[0];
  const float *b = t[1];
  void **r = out;
  float *rf = r[0];
  int32_t *rs = r[1];
  rf[0] = b[0] + (float)a[0];
  rf[1] = b[1] + (float)a[1];
  *rs = a[0] * a[1];
}

/* In place: doubles the buffer it is given as operand 0, which aliases the result. */
EXPORT void cc_double_in_place(void *out, const void **in) {
  float *x = (float *)in[0];
  for (int i = 0; i < 4; i++)
    x[i] *= 2;
  (void)out;
}
