/* rt.c — the runtime functions compiled models call (hlo/rt.h): buffers and errors. */
#include "hlo/rt.h"

#include <complex.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* glibc defines CMPLX for GCC only; clang (the fuzz build) has the same builtin. */
#ifndef CMPLX
#define CMPLX(x, y) __builtin_complex((double)(x), (double)(y))
#endif

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
  case HLO_RT_C_POW: /* XLA's special cases: z^0 = 1 and 1^w = 1 for every z, w */
    if (b == 0 || a == 1)
      return 1;
    if (a == 0 && cimag(b) == 0 && creal(b) > 0) /* 0^c = 0 for c > 0 */
      return 0;
    return cpow(a, b);
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

/* ---- 8-bit floats -------------------------------------------------------------------------- */

typedef struct f8_format {
  int mbits, bias;
  enum { F8_IEEE, F8_FN, F8_FNUZ } kind; /* IEEE: inf and NaNs; FN: only S.1111.111 is NaN;
                                            FNUZ: 0x80 is the only NaN, no inf, no -0 */
} f8_format;

static bool f8_format_of(int32_t dtype, f8_format *f) {
  switch (dtype) {
  case HLO_DTYPE_IR_F8E4M3FN: *f = (f8_format){3, 7, F8_FN}; return true;
  case HLO_DTYPE_IR_F8E5M2: *f = (f8_format){2, 15, F8_IEEE}; return true;
  case HLO_DTYPE_IR_F8E4M3: *f = (f8_format){3, 7, F8_IEEE}; return true;
  case HLO_DTYPE_IR_F8E3M4: *f = (f8_format){4, 3, F8_IEEE}; return true;
  case HLO_DTYPE_IR_F8E4M3FNUZ: *f = (f8_format){3, 8, F8_FNUZ}; return true;
  case HLO_DTYPE_IR_F8E5M2FNUZ: *f = (f8_format){2, 16, F8_FNUZ}; return true;
  case HLO_DTYPE_IR_F8E4M3B11FNUZ: *f = (f8_format){3, 11, F8_FNUZ}; return true;
  default: return false;
  }
}

/* The largest finite magnitude's bits. */
static unsigned f8_max_bits(const f8_format *f) {
  unsigned all = 0x7Fu;
  if (f->kind == F8_IEEE)
    return all - (1u << f->mbits); /* top exponent is inf/NaN: one below, full mantissa */
  return f->kind == F8_FN ? all - 1 : all;
}

/* f4e2m1fn (in the low 4 bits: sign, 2 exponent bits of bias 1, 1 mantissa bit; no inf or
 * NaN) and f8e8m0fnu (an exponent of bias 127 alone: 2^(e-127); 0xFF is NaN; no sign, no
 * zero), as XLA's elemental IR emitter converts them (EmitF4e2m1fnToF16, EmitF8e8m0fnuToF32):
 * both are exact in f32. */
static float f4e2m1fn_to_f32(uint8_t bits) {
  unsigned e = (bits >> 1) & 3u, m = bits & 1u;
  float v = e ? ldexpf(1.0f + 0.5f * (float)m, (int)e - 1) : 0.5f * (float)m;
  return bits & 8u ? -v : v;
}

static float f8e8m0fnu_to_f32(uint8_t bits) {
  if (bits == 0xFF)
    return NAN;
  return ldexpf(1.0f, (int)bits - 127); /* bits 0: 2^-127, an f32 subnormal */
}

/* XLA's F32 -> F4E2M1FN: to f16 first (round to nearest even), then to nearest even on the f4
 * grid {0, 0.5, 1, 1.5, 2, 3, 4, 6}; |x| >= 7 and infinities saturate to 6; NaN becomes -0
 * (the type has no NaN).  The sign is kept, zeros included. */
static uint8_t f32_to_f4e2m1fn(float x) {
  float h = (float)(_Float16)x;
  uint8_t sign = signbit(h) ? 8u : 0u;
  if (isnan(h))
    return 8u;
  float a = fabsf(h);
  if (a >= 7.0f)
    return sign | 7u;
  if (a < 1.0f) /* 0, 0.5 or 1: ties to the even code (0.25 -> 0, 0.75 -> 1) */
    return sign | (a <= 0.25f ? 0u : a < 0.75f ? 1u : 2u);
  int k;
  frexpf(a, &k); /* a = g * 2^k, g in [0.5, 1): exponent k - 1 in 0..2 */
  int e = k - 1;
  float n = nearbyintf(ldexpf(a, 1 - e)); /* 2..4 halves of 2^e, ties to even */
  if (n >= 4.0f) {
    n = 2.0f;
    e++;
  }
  return (uint8_t)(sign | (unsigned)((e + 1) << 1) | (unsigned)(n - 2.0f));
}

/* XLA's F32 -> F8E8M0FNU: zero, negatives (-0 too), values from 1.5 * 2^127 up, infinities and
 * NaN become NaN (0xFF); values up to 2^-127 become 2^-127 (0x00); otherwise the exponent,
 * rounded up when the mantissa is at least one half (x in [1.5, 3) * 2^e gives 2^(e+1)). */
static uint8_t f32_to_f8e8m0fnu(float x) {
  int32_t i;
  memcpy(&i, &x, sizeof i);
  if (i <= 0 || i >= 0x7F400000)
    return 0xFF;
  if (i <= 0x400000)
    return 0x00;
  return (uint8_t)((i + 0x400000) >> 23);
}

HLO_RT_EXPORT float hlo_rt_f8_to_f32(int32_t dtype, uint8_t bits) {
  if (dtype == HLO_DTYPE_IR_F4E2M1FN)
    return f4e2m1fn_to_f32(bits);
  if (dtype == HLO_DTYPE_IR_F8E8M0FNU)
    return f8e8m0fnu_to_f32(bits);
  f8_format f;
  if (!f8_format_of(dtype, &f))
    return NAN;
  unsigned mag = bits & 0x7Fu, sign = bits >> 7;
  int ebits = 7 - f.mbits;
  unsigned e = mag >> f.mbits, m = mag & ((1u << f.mbits) - 1);
  if (f.kind == F8_FNUZ && bits == 0x80)
    return NAN;
  if (f.kind == F8_FN && mag == 0x7F)
    return sign ? -NAN : NAN;
  if (f.kind == F8_IEEE && e == (1u << ebits) - 1)
    return m ? (sign ? -NAN : NAN) : (sign ? -INFINITY : INFINITY);
  double v = e ? ldexp(1.0 + ldexp(m, -f.mbits), (int)e - f.bias) : ldexp(m, 1 - f.bias - f.mbits);
  return (float)(sign ? -v : v);
}

HLO_RT_EXPORT uint8_t hlo_rt_f32_to_f8(int32_t dtype, float x) {
  if (dtype == HLO_DTYPE_IR_F4E2M1FN)
    return f32_to_f4e2m1fn(x);
  if (dtype == HLO_DTYPE_IR_F8E8M0FNU)
    return f32_to_f8e8m0fnu(x);
  f8_format f;
  if (!f8_format_of(dtype, &f))
    return 0;
  unsigned sign = signbit(x) ? 0x80u : 0u;
  unsigned nan = f.kind == F8_FNUZ ? 0x80u : (sign | 0x7Fu); /* FN and IEEE: all ones */
  if (isnan(x))
    return (uint8_t)nan;
  double a = fabs((double)x);
  unsigned long long q; /* magnitude bits before the overflow check (may exceed 7 bits) */
  if (isinf(a)) {
    q = 0x100;
  } else {
    int k;
    frexp(a, &k); /* a = g * 2^k, g in [0.5, 1) */
    int emin = 1 - f.bias, e = k - 1 < emin ? emin : k - 1;
    double n = nearbyint(ldexp(a, f.mbits - e)); /* round to nearest even at this exponent's step */
    if (n >= ldexp(1.0, f.mbits + 1)) { /* rounded up to the next binade */
      n = ldexp(1.0, f.mbits);
      e++;
    }
    if (n < ldexp(1.0, f.mbits)) /* subnormal (or zero): exponent field 0 */
      q = (unsigned long long)n;
    else
      q = ((unsigned long long)(e + f.bias) << f.mbits) | ((unsigned long long)n - (1ull << f.mbits));
  }
  if (q > f8_max_bits(&f))
    return (uint8_t)(f.kind == F8_IEEE ? (sign | (0x7Fu & ~((1u << f.mbits) - 1))) : nan);
  if (q == 0 && f.kind == F8_FNUZ)
    return 0;
  return (uint8_t)(sign | q);
}
