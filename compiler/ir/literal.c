/* literal.c — number <-> element storage for every element type (literal.h).
 *
 * Narrow floats are described by one table of formats (exponent/mantissa bits, bias, how
 * they spell infinity and NaN) and encoded by one rounding routine working from a double,
 * so f16, bf16 and the f8/f4 family share code and all round to nearest even.
 */
#include "ir/literal.h"

#include <math.h>
#include <string.h>

typedef enum nan_style {
  NAN_IEEE,      /* exponent all ones: mantissa 0 = inf, else NaN */
  NAN_ALL_ONES,  /* "fn": no infinity; S.1111.111 is NaN; all other codes finite */
  NAN_NEG_ZERO,  /* "fnuz": no infinity, no -0; 0x80 is NaN */
  NAN_NONE,      /* f4e2m1fn: neither */
  NAN_E8M0,      /* f8e8m0fnu: exponent only, 0xFF NaN, no zero, no sign */
} nan_style;

typedef struct minifloat {
  int ebits, mbits, bias;
  nan_style nan;
} minifloat;

static bool minifloat_of(ir_etype et, minifloat *out) {
  switch (et) {
  case IR_F16: *out = (minifloat){5, 10, 15, NAN_IEEE}; return true;
  case IR_BF16: *out = (minifloat){8, 7, 127, NAN_IEEE}; return true;
  case IR_F8E5M2: *out = (minifloat){5, 2, 15, NAN_IEEE}; return true;
  case IR_F8E4M3: *out = (minifloat){4, 3, 7, NAN_IEEE}; return true;
  case IR_F8E3M4: *out = (minifloat){3, 4, 3, NAN_IEEE}; return true;
  case IR_F8E4M3FN: *out = (minifloat){4, 3, 7, NAN_ALL_ONES}; return true;
  case IR_F8E4M3FNUZ: *out = (minifloat){4, 3, 8, NAN_NEG_ZERO}; return true;
  case IR_F8E5M2FNUZ: *out = (minifloat){5, 2, 16, NAN_NEG_ZERO}; return true;
  case IR_F8E4M3B11FNUZ: *out = (minifloat){4, 3, 11, NAN_NEG_ZERO}; return true;
  case IR_F4E2M1FN: *out = (minifloat){2, 1, 1, NAN_NONE}; return true;
  case IR_F8E8M0FNU: *out = (minifloat){8, 0, 127, NAN_E8M0}; return true;
  default: return false;
  }
}

int ir_lit_mantissa_bits(ir_etype et) {
  minifloat f;
  if (minifloat_of(et, &f))
    return f.mbits;
  if (et == IR_F32 || et == IR_C64)
    return 23;
  if (et == IR_F64 || et == IR_C128)
    return 52;
  return 0;
}

/* Largest finite magnitude of a format, as a code (without sign). */
static uint32_t max_finite_code(const minifloat *f) {
  uint32_t all_exp = (1u << f->ebits) - 1, all_man = (1u << f->mbits) - 1;
  switch (f->nan) {
  case NAN_IEEE: return ((all_exp - 1) << f->mbits) | all_man;
  case NAN_ALL_ONES: return (all_exp << f->mbits) | (all_man - 1);
  case NAN_E8M0: return all_exp - 1;
  default: return (all_exp << f->mbits) | all_man;
  }
}

static double code_magnitude(const minifloat *f, uint32_t code) {
  uint32_t e = code >> f->mbits, m = code & ((1u << f->mbits) - 1);
  if (f->nan == NAN_E8M0)
    return ldexp(1.0, (int)e - f->bias);
  if (e == 0)
    return ldexp((double)m, 1 - f->bias - f->mbits);
  return ldexp((double)((1u << f->mbits) | m), (int)e - f->bias - f->mbits);
}

static uint32_t nan_code(const minifloat *f, bool neg, uint64_t payload) {
  uint32_t all_exp = (1u << f->ebits) - 1, all_man = (1u << f->mbits) - 1;
  uint32_t sign = 1u << (f->ebits + f->mbits);
  switch (f->nan) {
  case NAN_IEEE: {
    uint32_t m = payload ? (uint32_t)payload : 1u << (f->mbits - 1);
    return (neg ? sign : 0) | (all_exp << f->mbits) | (m & all_man);
  }
  case NAN_ALL_ONES: return (neg ? sign : 0) | (all_exp << f->mbits) | all_man;
  case NAN_NEG_ZERO: return sign;
  default: return 0xFF;
  }
}

/* Rounds |d| (finite, nonnegative) to the nearest code, ties to even; may exceed the
 * maximum finite code (the caller decides overflow). */
static uint32_t round_to_code(const minifloat *f, double a) {
  if (a == 0)
    return 0;
  if (f->nan == NAN_E8M0) {
    int e;
    double fr = frexp(a, &e); /* a = fr * 2^e, fr in [0.5,1) */
    int k = e - 1;            /* a in [2^k, 2^(k+1)) */
    double lo = ldexp(1.0, k), hi = ldexp(1.0, k + 1);
    (void)fr;
    if (hi - a < a - lo || (hi - a == a - lo && ((k + f->bias) & 1)))
      k++;
    int code = k + f->bias;
    return code < 0 ? 0 : (uint32_t)code;
  }
  int e;
  frexp(a, &e);
  int exp = e - 1; /* a in [2^exp, 2^(exp+1)) */
  int min_exp = 1 - f->bias;
  if (exp < min_exp)
    exp = min_exp; /* subnormal range: fixed quantum */
  double quantum = ldexp(1.0, exp - f->mbits);
  double q = a / quantum;
  double r = nearbyint(q); /* current rounding mode: to nearest even */
  uint64_t steps = (uint64_t)r;
  /* steps counts quanta at exponent `exp`; turn it into a code. */
  if (exp == min_exp && steps < (1ull << f->mbits))
    return (uint32_t)steps; /* subnormal */
  uint64_t biased = (uint64_t)(exp + f->bias);
  if (steps >= (2ull << f->mbits)) { /* rounded up into the next binade */
    steps >>= 1;
    biased++;
  }
  return (uint32_t)((biased << f->mbits) | (steps & ((1ull << f->mbits) - 1)));
}

static ir_lit_status encode_minifloat(const minifloat *f, double d, uint64_t payload,
                                      uint32_t *out) {
  uint32_t sign = 1u << (f->ebits + f->mbits);
  bool neg = signbit(d);
  if (isnan(d)) {
    if (payload && (f->nan != NAN_IEEE || payload >> f->mbits))
      return IR_LIT_BAD_PAYLOAD;
    if (f->nan == NAN_NONE)
      return IR_LIT_OUT_OF_RANGE;
    *out = nan_code(f, neg, payload);
    return IR_LIT_OK;
  }
  if (neg && f->nan == NAN_E8M0)
    return IR_LIT_OUT_OF_RANGE;
  uint32_t maxc = max_finite_code(f);
  if (isinf(d)) {
    if (f->nan != NAN_IEEE)
      return IR_LIT_OUT_OF_RANGE;
    *out = (neg ? sign : 0) | (((1u << f->ebits) - 1) << f->mbits);
    return IR_LIT_OK;
  }
  double a = fabs(d);
  if (a > code_magnitude(f, maxc)) {
    /* Values that round down to the maximum are fine; beyond half an ulp is out of range. */
    uint32_t c = round_to_code(f, a);
    if (c > maxc)
      return IR_LIT_OUT_OF_RANGE;
  }
  uint32_t c = round_to_code(f, a);
  if (f->nan == NAN_E8M0) {
    *out = c;
    return IR_LIT_OK;
  }
  if (c == 0 && f->nan == NAN_NEG_ZERO)
    neg = false;
  *out = (neg ? sign : 0) | c;
  return IR_LIT_OK;
}

ir_lit_status ir_lit_encode_float(ir_etype et, double d, uint64_t payload, void *out) {
  minifloat f;
  if (et == IR_F64 || et == IR_C128) {
    if (isnan(d) && payload) {
      if (payload >> 52)
        return IR_LIT_BAD_PAYLOAD;
      uint64_t bits = (signbit(d) ? 1ull << 63 : 0) | (0x7FFull << 52) | payload;
      memcpy(out, &bits, 8);
    } else {
      memcpy(out, &d, 8);
    }
    return IR_LIT_OK;
  }
  if (et == IR_F32 || et == IR_C64) {
    if (isnan(d)) {
      uint32_t m = payload ? (uint32_t)payload : 1u << 22;
      if (payload >> 23)
        return IR_LIT_BAD_PAYLOAD;
      uint32_t bits = (signbit(d) ? 1u << 31 : 0) | (0xFFu << 23) | m;
      memcpy(out, &bits, 4);
      return IR_LIT_OK;
    }
    if (isfinite(d) && fabs(d) >= 3.4028235677973366e38) /* FLT_MAX + half an ulp rounds to inf */
      return IR_LIT_OUT_OF_RANGE;
    float v = (float)d;
    memcpy(out, &v, 4);
    return IR_LIT_OK;
  }
  if (!minifloat_of(et, &f))
    return IR_LIT_BAD_TYPE;
  uint32_t code;
  ir_lit_status st = encode_minifloat(&f, d, payload, &code);
  if (st != IR_LIT_OK)
    return st;
  if (ir_etype_table[et].storage_bytes == 2) {
    uint16_t c16 = (uint16_t)code;
    memcpy(out, &c16, 2);
  } else {
    *(uint8_t *)out = (uint8_t)code;
  }
  return IR_LIT_OK;
}

ir_lit_status ir_lit_encode_int(ir_etype et, int64_t v, uint64_t u, bool is_unsigned, void *out) {
  int bits = ir_etype_table[et].bits;
  int bytes = ir_etype_table[et].storage_bytes;
  if (et == IR_PRED) {
    if (is_unsigned ? u > 1 : (v < 0 || v > 1))
      return IR_LIT_OUT_OF_RANGE;
    *(uint8_t *)out = (uint8_t)(is_unsigned ? u : (uint64_t)v);
    return IR_LIT_OK;
  }
  uint64_t raw;
  if (ir_etype_is_signed(et)) {
    int64_t lo = bits == 64 ? INT64_MIN : -(INT64_C(1) << (bits - 1));
    int64_t hi = bits == 64 ? INT64_MAX : (INT64_C(1) << (bits - 1)) - 1;
    if (is_unsigned) {
      if (u > (uint64_t)hi)
        return IR_LIT_OUT_OF_RANGE;
      v = (int64_t)u;
    }
    if (v < lo || v > hi)
      return IR_LIT_OUT_OF_RANGE;
    raw = (uint64_t)v;
  } else {
    uint64_t hi = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    uint64_t x = is_unsigned ? u : (uint64_t)v;
    if ((!is_unsigned && v < 0) || x > hi)
      return IR_LIT_OUT_OF_RANGE;
    raw = x;
  }
  memcpy(out, &raw, (size_t)bytes); /* little-endian host */
  return IR_LIT_OK;
}

uint64_t ir_lit_float_bits(ir_etype et, const void *p) {
  uint64_t bits = 0;
  int n = ir_etype_table[et].storage_bytes;
  if (et == IR_C64)
    n = 4;
  if (et == IR_C128)
    n = 8;
  memcpy(&bits, p, (size_t)n);
  return bits;
}

double ir_lit_decode_float(ir_etype et, const void *p) {
  if (et == IR_F64 || et == IR_C128) {
    double d;
    memcpy(&d, p, 8);
    return d;
  }
  if (et == IR_F32 || et == IR_C64) {
    float f;
    memcpy(&f, p, 4);
    return f;
  }
  minifloat f;
  if (!minifloat_of(et, &f))
    return 0;
  uint32_t code = (uint32_t)ir_lit_float_bits(et, p);
  if (f.nan == NAN_E8M0)
    return code == 0xFF ? NAN : ldexp(1.0, (int)code - f.bias);
  uint32_t sign = 1u << (f.ebits + f.mbits);
  bool neg = (code & sign) != 0;
  uint32_t mag = code & (sign - 1);
  uint32_t all_exp = (1u << f.ebits) - 1;
  uint32_t e = mag >> f.mbits, m = mag & ((1u << f.mbits) - 1);
  switch (f.nan) {
  case NAN_IEEE:
    if (e == all_exp)
      return m ? (neg ? -NAN : NAN) : (neg ? -INFINITY : INFINITY);
    break;
  case NAN_ALL_ONES:
    if (e == all_exp && m == (1u << f.mbits) - 1)
      return neg ? -NAN : NAN;
    break;
  case NAN_NEG_ZERO:
    if (code == sign)
      return -NAN; /* the one NaN has the sign bit set; XLA prints it as -nan */
    break;
  default:
    break;
  }
  double v = code_magnitude(&f, mag);
  return neg ? -v : v;
}
