/* rt.c — the runtime functions compiled models call (hlo/rt.h): buffers and errors. */
#include "hlo/rt.h"

#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

HLO_RT_EXPORT void *hlo_rt_alloc(hlo_context *ctx, int64_t bytes) {
  (void)ctx;
  if (bytes < 0)
    return NULL;
  size_t n = ((size_t)bytes + 63) & ~(size_t)63;
  return aligned_alloc(64, n ? n : 64);
}

HLO_RT_EXPORT void hlo_rt_free(hlo_context *ctx, void *p) {
  (void)ctx;
  free(p);
}

HLO_RT_EXPORT hlo_status hlo_rt_error(const char *message) {
  return hlo_status_make(HLO_FAILED_PRECONDITION, "%s", message);
}

/* expm1(z) = exp(z) - 1 and log1p(z) = log(1 + z), written to keep precision near 0. */
static double complex cexpm1(double complex z) {
  double x = creal(z), y = cimag(z);
  double em1 = expm1(x), s = sin(y);
  double cm1 = -2 * sin(y / 2) * sin(y / 2); /* cos(y) - 1 */
  return CMPLX(em1 * cos(y) + cm1, exp(x) * s);
}

static double complex clog1p(double complex z) {
  double x = creal(z), y = cimag(z);
  double r = hypot(x + 1, y);
  double re = fabs(x) < 0.5 && fabs(y) < 0.5 ? 0.5 * log1p(x * (2 + x) + y * y) : log(r);
  return CMPLX(re, atan2(y, x + 1));
}

static double complex apply(int32_t op, double complex a, double complex b) {
  switch (op) {
  case HLO_RT_C_SIN: return csin(a);
  case HLO_RT_C_COS: return ccos(a);
  case HLO_RT_C_TAN: return ctan(a);
  case HLO_RT_C_TANH: return ctanh(a);
  case HLO_RT_C_SINH: return csinh(a);
  case HLO_RT_C_COSH: return ccosh(a);
  case HLO_RT_C_ASIN: return casin(a);
  case HLO_RT_C_ACOS: return cacos(a);
  case HLO_RT_C_ATAN: return catan(a);
  case HLO_RT_C_ASINH: return casinh(a);
  case HLO_RT_C_ACOSH: return cacosh(a);
  case HLO_RT_C_ATANH: return catanh(a);
  case HLO_RT_C_EXPM1: return cexpm1(a);
  case HLO_RT_C_LOG1P: return clog1p(a);
  case HLO_RT_C_RSQRT: return 1.0 / csqrt(a);
  case HLO_RT_C_SIGN: {
    double m = cabs(a);
    return m == 0 || isnan(m) ? (isnan(m) ? CMPLX(NAN, NAN) : a) : a / m;
  }
  case HLO_RT_C_LOGISTIC: return 1.0 / (1.0 + cexp(-a));
  case HLO_RT_C_CBRT: return cpow(a, 1.0 / 3.0);
  case HLO_RT_C_POW: return a == 0 && b == 0 ? 1 : cpow(a, b);
  default: return CMPLX(NAN, NAN);
  }
}

HLO_RT_EXPORT void hlo_rt_complex_op(int32_t op, int32_t is_double, const void *a, const void *b, void *out) {
  double complex x, y = 0, r;
  if (is_double) {
    double v[4] = {0};
    memcpy(v, a, 16);
    if (b)
      memcpy(v + 2, b, 16);
    x = CMPLX(v[0], v[1]); /* not v0 + I*v1: I*inf would make the real part NaN */
    y = CMPLX(v[2], v[3]);
    r = apply(op, x, y);
    double o[2] = {creal(r), cimag(r)};
    memcpy(out, o, 16);
  } else {
    float v[4] = {0};
    memcpy(v, a, 8);
    if (b)
      memcpy(v + 2, b, 8);
    x = CMPLX(v[0], v[1]);
    y = CMPLX(v[2], v[3]);
    r = apply(op, x, y);
    float o[2] = {(float)creal(r), (float)cimag(r)};
    memcpy(out, o, 8);
  }
}
