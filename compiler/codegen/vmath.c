/* vmath.c — exp, expm1, log, log1p, tanh, erf, logistic, sin, cos, rsqrt and pow as
 * branch-free scalar LLVM IR (fmuladd/fma, select, compares, integer bit operations,
 * llvm.rint/floor/fabs/copysign), which LLVM's loop vectorizer widens: no libm call sits in an
 * elementwise loop.  Range reduction is Cody-Waite (exp, sin, cos) or exponent extraction
 * (log); the polynomials are truncated Taylor series (exactly known coefficients, enough terms
 * for the type) except erf's, which are least-squares fits (tools/vmath/erf_fit.py) written
 * here.  f16 computes in f32; f32 sin, cos and pow compute in f64.  Tested by vmath_test.c.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "codegen/vmath.h"

static const long double LN2L = 0.693147180559945309417232121458176568L;
static const long double PIO2L = 1.570796326794896619231321691639751442L;

/* The builder state for one float type: t is float or double, it the integer of its width. */
typedef struct vm {
  cg_module *cm;
  LLVMBuilderRef b;
  LLVMTypeRef t, it;
  bool dbl;
  bool from_float; /* a double computation of a float (or half) operand */
} vm;

static vm vm_for(cg_module *cm, LLVMTypeRef t) {
  bool dbl = t == cm->f64;
  return (vm){cm, cm->b, t, dbl ? cm->i64 : cm->i32, dbl, false};
}

/* ---- small builders --------------------------------------------------------------------- */

static LLVMValueRef k(const vm *v, double c) { return LLVMConstReal(v->t, c); }
static LLVMValueRef ki(const vm *v, long long c) { return LLVMConstInt(v->it, (unsigned long long)c, 1); }
static LLVMValueRef add(const vm *v, LLVMValueRef a, LLVMValueRef c) { return LLVMBuildFAdd(v->b, a, c, ""); }
static LLVMValueRef sub(const vm *v, LLVMValueRef a, LLVMValueRef c) { return LLVMBuildFSub(v->b, a, c, ""); }
static LLVMValueRef mul(const vm *v, LLVMValueRef a, LLVMValueRef c) { return LLVMBuildFMul(v->b, a, c, ""); }
static LLVMValueRef vdiv(const vm *v, LLVMValueRef a, LLVMValueRef c) { return LLVMBuildFDiv(v->b, a, c, ""); }
static LLVMValueRef sel(const vm *v, LLVMValueRef c, LLVMValueRef a, LLVMValueRef e) {
  return LLVMBuildSelect(v->b, c, a, e, "");
}
static LLVMValueRef fcmp(const vm *v, LLVMRealPredicate p, LLVMValueRef a, LLVMValueRef c) {
  return LLVMBuildFCmp(v->b, p, a, c, "");
}
static LLVMValueRef and1(const vm *v, LLVMValueRef a, LLVMValueRef c) { return LLVMBuildAnd(v->b, a, c, ""); }
static LLVMValueRef or1(const vm *v, LLVMValueRef a, LLVMValueRef c) { return LLVMBuildOr(v->b, a, c, ""); }

static LLVMValueRef intrinsic(const vm *v, const char *name, LLVMValueRef *args, unsigned n) {
  LLVMValueRef fn = cg_intrinsic(v->cm, name, v->t, (int)n);
  return LLVMBuildCall2(v->b, LLVMGlobalGetValueType(fn), fn, args, n, "");
}
static LLVMValueRef intr1(const vm *v, const char *name, LLVMValueRef a) { return intrinsic(v, name, &a, 1); }
static LLVMValueRef fabs_(const vm *v, LLVMValueRef a) { return intr1(v, "llvm.fabs", a); }
static LLVMValueRef rint_(const vm *v, LLVMValueRef a) { return intr1(v, "llvm.rint", a); }
static LLVMValueRef floor_(const vm *v, LLVMValueRef a) { return intr1(v, "llvm.floor", a); }
static LLVMValueRef copysign_(const vm *v, LLVMValueRef mag, LLVMValueRef sgn) {
  return intrinsic(v, "llvm.copysign", (LLVMValueRef[]){mag, sgn}, 2);
}
/* a*b + c, fused where the target has FMA (never a library call). */
static LLVMValueRef mad(const vm *v, LLVMValueRef a, LLVMValueRef c, LLVMValueRef d) {
  return intrinsic(v, "llvm.fmuladd", (LLVMValueRef[]){a, c, d}, 3);
}
/* a*b + c with one rounding (sin/cos reduction relies on it being exact). */
static LLVMValueRef fma_(const vm *v, LLVMValueRef a, LLVMValueRef c, LLVMValueRef d) {
  return intrinsic(v, "llvm.fma", (LLVMValueRef[]){a, c, d}, 3);
}
static LLVMValueRef isnan_(const vm *v, LLVMValueRef x) { return fcmp(v, LLVMRealUNO, x, x); }
static LLVMValueRef inf(const vm *v) { return k(v, INFINITY); }

/* c[0] + c[1] x + ... + c[n-1] x^(n-1) (Horner). */
static LLVMValueRef horner(const vm *v, LLVMValueRef x, const double *c, int n) {
  LLVMValueRef acc = k(v, c[n - 1]);
  for (int i = n - 2; i >= 0; i--)
    acc = mad(v, acc, x, k(v, c[i]));
  return acc;
}

/* 2^n for an integer n of the float's width inside the normal exponent range. */
static LLVMValueRef pow2i(const vm *v, LLVMValueRef n) {
  int mbits = v->dbl ? 52 : 23, bias = v->dbl ? 1023 : 127;
  LLVMValueRef e = LLVMBuildAdd(v->b, n, ki(v, bias), "");
  return LLVMBuildBitCast(v->b, LLVMBuildShl(v->b, e, ki(v, mbits), ""), v->t, "");
}

/* x clamped to [lo, hi]; NaN becomes 0 (so that no NaN reaches a float->int conversion). */
static LLVMValueRef clamp_nan0(const vm *v, LLVMValueRef x, double lo, double hi) {
  LLVMValueRef c = sel(v, fcmp(v, LLVMRealOLT, x, k(v, lo)), k(v, lo), x);
  c = sel(v, fcmp(v, LLVMRealOGT, c, k(v, hi)), k(v, hi), c);
  return sel(v, isnan_(v, x), k(v, 0), c);
}

/* The top `keep` significand bits of d (a constant whose products with small integers are exact). */
static double keep_bits(double d, int keep) {
  uint64_t u;
  memcpy(&u, &d, 8);
  u &= ~((UINT64_C(1) << (52 - keep)) - 1);
  memcpy(&d, &u, 8);
  return d;
}

/* 1/k! for k = from .. from+n-1, alternating in sign when alt (Taylor coefficients). */
static void taylor(double *out, int from, int step, int n, bool alt) {
  for (int i = 0; i < n; i++) {
    int kk = from + i * step;
    long double fact = 1;
    for (int j = 2; j <= kk; j++)
      fact *= j;
    out[i] = (double)((alt && (i & 1) ? -1.0L : 1.0L) / fact);
  }
}

/* ---- exp, expm1 --------------------------------------------------------------------------- */

/* ln 2 split into hi + lo with hi short enough that n*hi is exact for every n the exponent
 * range produces (9 bits for float, 32 for double). */
static void ln2_split(const vm *v, double *hi, double *lo) {
  *hi = v->dbl ? keep_bits((double)LN2L, 32) : 0.693359375;
  *lo = v->dbl ? (double)(LN2L - *hi) : (double)(float)(LN2L - *hi);
}

/* x = n ln2 + r with |r| <= ln2/2: returns r, *out_n gets n (a whole float). */
static LLVMValueRef exp_reduce(const vm *v, LLVMValueRef x, LLVMValueRef *out_n) {
  double hi, lo;
  ln2_split(v, &hi, &lo);
  LLVMValueRef n = rint_(v, mul(v, x, k(v, (double)(1.0L / LN2L))));
  *out_n = n;
  return mad(v, n, k(v, -lo), mad(v, n, k(v, -hi), x));
}

/* e^(x + lo) for a lo far below ulp(x) (NULL: 0), added to the reduced argument. */
static LLVMValueRef exp_core_lo(const vm *v, LLVMValueRef x, LLVMValueRef lo, bool flush) {
  double c[14];
  int deg = v->dbl ? 13 : 7; /* the first omitted term is below 2^-56 (2^-27) relative */
  taylor(c, 0, 1, deg + 1, false);
  LLVMValueRef xc = clamp_nan0(v, x, v->dbl ? -746.0 : -104.0, v->dbl ? 710.0 : 89.0), n;
  LLVMValueRef r = exp_reduce(v, xc, &n);
  if (lo) /* not where x was clamped: there lo may be large, and the result is 0 or inf */
    r = add(v, r, sel(v, fcmp(v, LLVMRealOEQ, x, xc), lo, k(v, 0)));
  LLVMValueRef p = horner(v, r, c, deg + 1);
  /* 2^n in two halves: n reaches 1024 (128) above and -1076 (-150) below the normal range */
  LLVMValueRef ni = LLVMBuildFPToSI(v->b, n, v->it, "");
  LLVMValueRef n1 = LLVMBuildAShr(v->b, ni, ki(v, 1), "");
  LLVMValueRef n2 = LLVMBuildSub(v->b, ni, n1, "");
  LLVMValueRef res = mul(v, mul(v, p, pow2i(v, n1)), pow2i(v, n2));
  if (flush) /* results below the smallest normal number are 0, as XLA's inline exp gives */
    res = sel(v, fcmp(v, LLVMRealOLT, x, k(v, (double)(float)logl(FLT_MIN))), k(v, 0), res);
  return sel(v, isnan_(v, x), x, res);
}

static LLVMValueRef exp_core(const vm *v, LLVMValueRef x, bool flush) { return exp_core_lo(v, x, NULL, flush); }

static LLVMValueRef expm1_core(const vm *v, LLVMValueRef x) {
  double c[13];
  int deg = v->dbl ? 13 : 7;
  taylor(c, 2, 1, deg - 1, false); /* expm1(r) = r + r^2 (1/2! + r/3! + ...) */
  LLVMValueRef xc = clamp_nan0(v, x, v->dbl ? -60.0 : -30.0, v->dbl ? 709.8 : 88.8), n;
  LLVMValueRef r = exp_reduce(v, xc, &n);
  LLVMValueRef q = mad(v, mul(v, r, r), horner(v, r, c, deg - 1), r);
  LLVMValueRef ni = LLVMBuildFPToSI(v->b, n, v->it, "");
  /* e^x - 1 = 2^n q + (2^n - 1), where 2^n - 1 is exact; above 2^24 (2^53) the 1 no longer
   * counts and 2^(n-1) (2 + 2q) reaches the top of the range without overflowing 2^n. */
  LLVMValueRef t = pow2i(v, ni);
  LLVMValueRef small = mad(v, t, q, sub(v, t, k(v, 1)));
  LLVMValueRef h = pow2i(v, LLVMBuildSub(v->b, ni, ki(v, 1), ""));
  LLVMValueRef big = mul(v, h, mad(v, q, k(v, 2), k(v, 2)));
  LLVMValueRef res = sel(v, LLVMBuildICmp(v->b, LLVMIntSGT, ni, ki(v, v->dbl ? 53 : 24), ""), big, small);
  res = sel(v, fcmp(v, LLVMRealOEQ, x, k(v, 0)), x, res); /* keeps -0 */
  return sel(v, isnan_(v, x), x, res);
}

/* ---- log, log1p ----------------------------------------------------------------------------- */

/* log(x): x = 2^e m with m in [sqrt(1/2), sqrt(2)), f = m - 1 (exact), s = f / (2 + f) and
 * log(1 + f) = 2 atanh(s) = f - f^2/2 + s (f^2/2 + R(s^2)) with R = 2 (z/3 + z^2/5 + ...). */
static LLVMValueRef log_core(const vm *v, LLVMValueRef x) {
  int mbits = v->dbl ? 52 : 23, bias = v->dbl ? 1023 : 127, terms = v->dbl ? 11 : 4;
  LLVMValueRef tiny = fcmp(v, LLVMRealOLT, x, k(v, v->dbl ? DBL_MIN : FLT_MIN));
  LLVMValueRef xs = sel(v, tiny, mul(v, x, k(v, v->dbl ? 0x1p54 : 0x1p24)), x);
  LLVMValueRef bits = LLVMBuildBitCast(v->b, xs, v->it, "");
  LLVMValueRef e = LLVMBuildSub(v->b, LLVMBuildLShr(v->b, bits, ki(v, mbits), ""), ki(v, bias), "");
  LLVMValueRef mant = LLVMBuildAnd(v->b, bits, ki(v, (long long)((UINT64_C(1) << mbits) - 1)), "");
  LLVMValueRef m = LLVMBuildBitCast(v->b, LLVMBuildOr(v->b, mant, ki(v, (long long)bias << mbits), ""), v->t, "");
  LLVMValueRef big = fcmp(v, LLVMRealOGT, m, k(v, (double)sqrtl(2.0L)));
  m = sel(v, big, mul(v, m, k(v, 0.5)), m);
  e = LLVMBuildAdd(v->b, e, LLVMBuildZExt(v->b, big, v->it, ""), "");
  LLVMValueRef ef = add(v, LLVMBuildSIToFP(v->b, e, v->t, ""), sel(v, tiny, k(v, v->dbl ? -54 : -24), k(v, 0)));
  LLVMValueRef f = sub(v, m, k(v, 1));
  LLVMValueRef s = vdiv(v, f, add(v, f, k(v, 2)));
  LLVMValueRef z = mul(v, s, s);
  double c[11];
  for (int i = 0; i < terms; i++)
    c[i] = 2.0 / (2 * i + 3);
  LLVMValueRef R = mul(v, z, horner(v, z, c, terms));
  LLVMValueRef hfsq = mul(v, mul(v, f, f), k(v, 0.5));
  double hi, lo;
  ln2_split(v, &hi, &lo);
  LLVMValueRef t = mad(v, s, add(v, hfsq, R), mul(v, ef, k(v, lo)));
  LLVMValueRef res = mad(v, ef, k(v, hi), sub(v, f, sub(v, hfsq, t)));
  res = sel(v, fcmp(v, LLVMRealOEQ, x, inf(v)), inf(v), res);
  res = sel(v, fcmp(v, LLVMRealOEQ, x, k(v, 0)), k(v, -INFINITY), res);
  res = sel(v, fcmp(v, LLVMRealOLT, x, k(v, 0)), k(v, NAN), res);
  return sel(v, isnan_(v, x), x, res);
}

/* log1p(x) = log(u) + c/u with u = 1 + x rounded and c = x - (u - 1) what the rounding lost. */
static LLVMValueRef log1p_core(const vm *v, LLVMValueRef x) {
  LLVMValueRef u = add(v, x, k(v, 1));
  LLVMValueRef c = sub(v, x, sub(v, u, k(v, 1)));
  LLVMValueRef l = log_core(v, u);
  LLVMValueRef finite_pos = and1(v, fcmp(v, LLVMRealOGT, u, k(v, 0)), fcmp(v, LLVMRealOLT, u, inf(v)));
  LLVMValueRef res = sel(v, finite_pos, add(v, l, vdiv(v, c, u)), l);
  return sel(v, fcmp(v, LLVMRealOEQ, x, k(v, 0)), x, res); /* keeps -0 */
}

/* ---- tanh, logistic, erf ------------------------------------------------------------------ */

/* tanh|x| = e / (e + 2) with e = expm1(2|x|): no cancellation anywhere in the range. */
static LLVMValueRef tanh_core(const vm *v, LLVMValueRef x) {
  double top = v->dbl ? 40.0 : 20.0; /* tanh rounds to 1 well before */
  LLVMValueRef a = fabs_(v, x);
  a = sel(v, fcmp(v, LLVMRealOGT, a, k(v, top)), k(v, top), a);
  LLVMValueRef e = expm1_core(v, add(v, a, a));
  return copysign_(v, vdiv(v, e, add(v, e, k(v, 2))), x);
}

/* 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below: e^-|x| never overflows, so results down
 * to the subnormal range keep their precision. */
static LLVMValueRef logistic_core(const vm *v, LLVMValueRef x) {
  LLVMValueRef e = exp_core(v, LLVMBuildFNeg(v->b, fabs_(v, x), ""), !v->dbl);
  LLVMValueRef num = sel(v, fcmp(v, LLVMRealOLT, x, k(v, 0)), e, k(v, 1));
  return vdiv(v, num, add(v, k(v, 1), e));
}

/* erf for float: |x| < 1: x P(x^2); 1 <= |x| < 2.25 and 2.25 <= |x| < 3.92: polynomials in
 * |x| - centre (coefficients chosen per element); above, 1.  Least-squares fits to erf at
 * 4000 Chebyshev nodes per interval (max error about 1 ulp in float Horner evaluation). */
static const double ERF_SMALL[7] = {1.1283791665932494, -0.37612629877688103, 0.1128362572526528,
                                    -0.026855399461238636, 0.005191218397831539, -0.0008034846855543512,
                                    7.933494649295955e-05};
static const double ERF_MID[11] = {0.9784437331096589, 0.08047224647665016, -0.13076739676689156, 0.11484126171639872,
                                   -0.04971958887592429, -0.002144122631836528, 0.01442278363510517,
                                   -0.006130521760761627, -0.0006166633288345044, 0.0012736252904466852,
                                   -0.00026174831892211253};
static const double ERF_HIGH[11] = {0.9999871619074442, 8.300475345595542e-05, -0.0002560998902772898,
                                    0.000499471060282871, -0.0006846638883327987, 0.0006916296471931311,
                                    -0.0005306496095989096, 0.00031414995155810673, -0.0001240520005767028,
                                    8.12219102718385e-06, 1.230172679076013e-05};

static LLVMValueRef erf_f32(const vm *v, LLVMValueRef x) {
  LLVMValueRef a = fabs_(v, x);
  LLVMValueRef small = mul(v, x, horner(v, mul(v, x, x), ERF_SMALL, 7));
  LLVMValueRef mid = fcmp(v, LLVMRealOLT, a, k(v, 2.25));
  LLVMValueRef t = sub(v, a, sel(v, mid, k(v, 1.625), k(v, 3.085)));
  LLVMValueRef acc = sel(v, mid, k(v, ERF_MID[10]), k(v, ERF_HIGH[10]));
  for (int i = 9; i >= 0; i--)
    acc = mad(v, acc, t, sel(v, mid, k(v, ERF_MID[i]), k(v, ERF_HIGH[i])));
  acc = sel(v, fcmp(v, LLVMRealOGE, a, k(v, 3.92)), k(v, 1), acc);
  return sel(v, fcmp(v, LLVMRealOLT, a, k(v, 1)), small, copysign_(v, acc, x));
}

/* ---- sin, cos ----------------------------------------------------------------------------- */

/* x = n pi/2 + r, |r| <= pi/4 (double): pi/2 in three 53-bit parts, each step an fma, so
 * the first is exact and the whole is accurate while |n| < 2^45 or so (|x| < 5e13); beyond
 * that the reduction loses bits (no Payne-Hanek).  *out_q gets n mod 4 (i64). */
static LLVMValueRef sincos_reduce(const vm *v, LLVMValueRef x, LLVMValueRef *out_q) {
  /* pi/2 = P1 + P2 + P3 to 161 bits (computed from Machin's formula in exact arithmetic) */
  static const double P1 = 0x1.921fb54442d18p+0, P2 = 0x1.1a62633145c07p-54, P3 = -0x1.f1976b7ed8fbcp-110;
  LLVMValueRef n = rint_(v, mul(v, x, k(v, (double)(1.0L / PIO2L))));
  LLVMValueRef nn = LLVMBuildFNeg(v->b, n, "");
  LLVMValueRef r = fma_(v, nn, k(v, P1), x);
  r = fma_(v, nn, k(v, P2), r);
  r = fma_(v, nn, k(v, P3), r);
  LLVMValueRef q = sub(v, n, mul(v, k(v, 4), floor_(v, mul(v, n, k(v, 0.25)))));
  *out_q = LLVMBuildFPToSI(v->b, q, v->it, "");
  return r;
}

/* (2^E 2/pi) mod 4 for E = 1..104 in four 26-bit pieces: generated by
 * tools/vmath/sincos_table.py from pi in exact integer arithmetic. */
static const double SINCOS_2OPI[104][4] = {
    {0x1.45f3060000000p+0, 0x1.b939100000000p-25, 0x1.529fc20000000p-51, 0x1.d5f47d0000000p-77},
    {0x1.45f3068000000p+1, 0x1.7272208000000p-25, 0x1.4a7f090000000p-52, 0x1.abe8fa8000000p-77},
    {0x1.17cc1b0000000p+0, 0x1.c9c8820000000p-26, 0x1.4a7f098000000p-51, 0x1.57d1f50000000p-77},
    {0x1.17cc1b0000000p+1, 0x1.c9c8828000000p-25, 0x1.29fc270000000p-52, 0x1.5f47d40000000p-78},
    {0x1.7cc1b40000000p-2, 0x1.9391050000000p-25, 0x1.29fc270000000p-51, 0x1.5f47d48000000p-77},
    {0x1.7cc1b60000000p-1, 0x1.27220a8000000p-25, 0x1.4fe13a0000000p-53, 0x1.7d1f530000000p-78},
    {0x1.7cc1b70000000p+0, 0x1.3910540000000p-27, 0x1.4fe13a0000000p-52, 0x1.7d1f530000000p-77},
    {0x1.7cc1b70000000p+1, 0x1.3910540000000p-26, 0x1.4fe13a8000000p-51, 0x1.f47d4d0000000p-78},
    {0x1.f306dc0000000p+0, 0x1.3910548000000p-25, 0x1.3f84ea0000000p-52, 0x1.f47d4d0000000p-77},
    {0x1.f306dc8000000p+1, 0x1.c882a40000000p-27, 0x1.3f84ea8000000p-51, 0x1.e8fa9a0000000p-77},
    {0x1.e60db90000000p+1, 0x1.c882a50000000p-26, 0x1.fc27560000000p-53, 0x1.d1f5348000000p-77},
    {0x1.cc1b720000000p+1, 0x1.c882a50000000p-25, 0x1.fc27570000000p-52, 0x1.a3ea698000000p-77},
    {0x1.9836e48000000p+1, 0x1.91054a0000000p-25, 0x1.fc27578000000p-51, 0x1.47d4d30000000p-77},
    {0x1.306dc98000000p+1, 0x1.220a948000000p-25, 0x1.f84eaf8000000p-51, 0x1.1f534d0000000p-78},
    {0x1.836e4e0000000p-1, 0x1.1054a60000000p-27, 0x1.f09d5f0000000p-51, 0x1.1f534d8000000p-77},
    {0x1.836e4e0000000p+0, 0x1.1054a70000000p-26, 0x1.e13abe8000000p-51, 0x1.f534dc0000000p-80},
    {0x1.836e4e0000000p+1, 0x1.1054a78000000p-25, 0x1.c2757d0000000p-51, 0x1.f534dc0000000p-79},
    {0x1.06dc9c8000000p+1, 0x1.054a7c0000000p-28, 0x1.84eafa0000000p-51, 0x1.f534dd0000000p-78},
    {0x1.b727200000000p-4, 0x1.054a7e0000000p-27, 0x1.09d5f40000000p-51, 0x1.f534dd8000000p-77},
    {0x1.b727200000000p-3, 0x1.054a7f0000000p-26, 0x1.3abe880000000p-55, 0x1.ea69bb8000000p-77},
    {0x1.b727200000000p-2, 0x1.054a7f0000000p-25, 0x1.3abe8c0000000p-54, 0x1.d4d3770000000p-77},
    {0x1.b727220000000p-1, 0x1.529fc00000000p-30, 0x1.3abe8e0000000p-53, 0x1.a9a6ee0000000p-77},
    {0x1.b727220000000p+0, 0x1.529fc00000000p-29, 0x1.3abe8f0000000p-52, 0x1.534ddc0000000p-77},
    {0x1.b727220000000p+1, 0x1.529fc00000000p-28, 0x1.3abe8f8000000p-51, 0x1.4d37700000000p-78},
    {0x1.6e4e440000000p+1, 0x1.529fc20000000p-27, 0x1.d5f47c0000000p-53, 0x1.4d37700000000p-77},
    {0x1.b939100000000p+0, 0x1.529fc20000000p-26, 0x1.d5f47d0000000p-52, 0x1.34ddc00000000p-78},
    {0x1.b939100000000p+1, 0x1.529fc20000000p-25, 0x1.d5f47d0000000p-51, 0x1.34ddc08000000p-77},
    {0x1.7272208000000p+1, 0x1.4a7f090000000p-26, 0x1.abe8fa8000000p-51, 0x1.a6ee060000000p-79},
    {0x1.c9c8820000000p+0, 0x1.4a7f098000000p-25, 0x1.57d1f50000000p-51, 0x1.a6ee060000000p-78},
    {0x1.c9c8828000000p+1, 0x1.29fc270000000p-26, 0x1.5f47d40000000p-52, 0x1.a6ee068000000p-77},
    {0x1.9391050000000p+1, 0x1.29fc270000000p-25, 0x1.5f47d48000000p-51, 0x1.4ddc0d8000000p-77},
    {0x1.27220a8000000p+1, 0x1.4fe13a0000000p-27, 0x1.7d1f530000000p-52, 0x1.3770360000000p-78},
    {0x1.3910540000000p-1, 0x1.4fe13a0000000p-26, 0x1.7d1f530000000p-51, 0x1.3770368000000p-77},
    {0x1.3910540000000p+0, 0x1.4fe13a8000000p-25, 0x1.f47d4d0000000p-52, 0x1.bb81b60000000p-79},
    {0x1.3910548000000p+1, 0x1.3f84ea0000000p-26, 0x1.f47d4d0000000p-51, 0x1.bb81b60000000p-78},
    {0x1.c882a40000000p-1, 0x1.3f84ea8000000p-25, 0x1.e8fa9a0000000p-51, 0x1.bb81b68000000p-77},
    {0x1.c882a50000000p+0, 0x1.fc27560000000p-27, 0x1.d1f5348000000p-51, 0x1.77036d8000000p-77},
    {0x1.c882a50000000p+1, 0x1.fc27570000000p-26, 0x1.a3ea698000000p-51, 0x1.dc0db60000000p-78},
    {0x1.91054a0000000p+1, 0x1.fc27578000000p-25, 0x1.47d4d30000000p-51, 0x1.dc0db60000000p-77},
    {0x1.220a948000000p+1, 0x1.f84eaf8000000p-25, 0x1.1f534d0000000p-52, 0x1.b81b6c0000000p-77},
    {0x1.1054a60000000p-1, 0x1.f09d5f0000000p-25, 0x1.1f534d8000000p-51, 0x1.7036d88000000p-77},
    {0x1.1054a70000000p+0, 0x1.e13abe8000000p-25, 0x1.f534dc0000000p-54, 0x1.c0db620000000p-78},
    {0x1.1054a78000000p+1, 0x1.c2757d0000000p-25, 0x1.f534dc0000000p-53, 0x1.c0db628000000p-77},
    {0x1.054a7c0000000p-2, 0x1.84eafa0000000p-25, 0x1.f534dd0000000p-52, 0x1.81b6c50000000p-77},
    {0x1.054a7e0000000p-1, 0x1.09d5f40000000p-25, 0x1.f534dd8000000p-51, 0x1.036d8a0000000p-77},
    {0x1.054a7f0000000p+0, 0x1.3abe880000000p-29, 0x1.ea69bb8000000p-51, 0x1.b6c5200000000p-83},
    {0x1.054a7f0000000p+1, 0x1.3abe8c0000000p-28, 0x1.d4d3770000000p-51, 0x1.b6c5200000000p-82},
    {0x1.529fc00000000p-4, 0x1.3abe8e0000000p-27, 0x1.a9a6ee0000000p-51, 0x1.b6c5280000000p-81},
    {0x1.529fc00000000p-3, 0x1.3abe8f0000000p-26, 0x1.534ddc0000000p-51, 0x1.b6c5280000000p-80},
    {0x1.529fc00000000p-2, 0x1.3abe8f8000000p-25, 0x1.4d37700000000p-52, 0x1.b6c52a0000000p-79},
    {0x1.529fc20000000p-1, 0x1.d5f47c0000000p-27, 0x1.4d37700000000p-51, 0x1.b6c52b0000000p-78},
    {0x1.529fc20000000p+0, 0x1.d5f47d0000000p-26, 0x1.34ddc00000000p-52, 0x1.b6c52b0000000p-77},
    {0x1.529fc20000000p+1, 0x1.d5f47d0000000p-25, 0x1.34ddc08000000p-51, 0x1.6d8a560000000p-77},
    {0x1.4a7f090000000p+0, 0x1.abe8fa8000000p-25, 0x1.a6ee060000000p-53, 0x1.b629590000000p-78},
    {0x1.4a7f098000000p+1, 0x1.57d1f50000000p-25, 0x1.a6ee060000000p-52, 0x1.b629598000000p-77},
    {0x1.29fc270000000p+0, 0x1.5f47d40000000p-26, 0x1.a6ee068000000p-51, 0x1.6c52b30000000p-77},
    {0x1.29fc270000000p+1, 0x1.5f47d48000000p-25, 0x1.4ddc0d8000000p-51, 0x1.b14acc0000000p-78},
    {0x1.4fe13a0000000p-1, 0x1.7d1f530000000p-26, 0x1.3770360000000p-52, 0x1.b14acc8000000p-77},
    {0x1.4fe13a0000000p+0, 0x1.7d1f530000000p-25, 0x1.3770368000000p-51, 0x1.6295990000000p-77},
    {0x1.4fe13a8000000p+1, 0x1.f47d4d0000000p-26, 0x1.bb81b60000000p-53, 0x1.8a56640000000p-78},
    {0x1.3f84ea0000000p+0, 0x1.f47d4d0000000p-25, 0x1.bb81b60000000p-52, 0x1.8a56648000000p-77},
    {0x1.3f84ea8000000p+1, 0x1.e8fa9a0000000p-25, 0x1.bb81b68000000p-51, 0x1.14acc98000000p-77},
    {0x1.fc27560000000p-1, 0x1.d1f5348000000p-25, 0x1.77036d8000000p-51, 0x1.4acc9c0000000p-80},
    {0x1.fc27570000000p+0, 0x1.a3ea698000000p-25, 0x1.dc0db60000000p-52, 0x1.4acc9e0000000p-79},
    {0x1.fc27578000000p+1, 0x1.47d4d30000000p-25, 0x1.dc0db60000000p-51, 0x1.4acc9e0000000p-78},
    {0x1.f84eaf8000000p+1, 0x1.1f534d0000000p-26, 0x1.b81b6c0000000p-51, 0x1.4acc9e0000000p-77},
    {0x1.f09d5f0000000p+1, 0x1.1f534d8000000p-25, 0x1.7036d88000000p-51, 0x1.2b32780000000p-78},
    {0x1.e13abe8000000p+1, 0x1.f534dc0000000p-28, 0x1.c0db620000000p-52, 0x1.2b32788000000p-77},
    {0x1.c2757d0000000p+1, 0x1.f534dc0000000p-27, 0x1.c0db628000000p-51, 0x1.5993c40000000p-79},
    {0x1.84eafa0000000p+1, 0x1.f534dd0000000p-26, 0x1.81b6c50000000p-51, 0x1.5993c40000000p-78},
    {0x1.09d5f40000000p+1, 0x1.f534dd8000000p-25, 0x1.036d8a0000000p-51, 0x1.5993c40000000p-77},
    {0x1.3abe880000000p-3, 0x1.ea69bb8000000p-25, 0x1.b6c5200000000p-57, 0x1.664f100000000p-78},
    {0x1.3abe8c0000000p-2, 0x1.d4d3770000000p-25, 0x1.b6c5200000000p-56, 0x1.664f108000000p-77},
    {0x1.3abe8e0000000p-1, 0x1.a9a6ee0000000p-25, 0x1.b6c5280000000p-55, 0x1.993c430000000p-78},
    {0x1.3abe8f0000000p+0, 0x1.534ddc0000000p-25, 0x1.b6c5280000000p-54, 0x1.993c438000000p-77},
    {0x1.3abe8f8000000p+1, 0x1.4d37700000000p-26, 0x1.b6c52a0000000p-53, 0x1.3278870000000p-77},
    {0x1.d5f47c0000000p-1, 0x1.4d37700000000p-25, 0x1.b6c52b0000000p-52, 0x1.93c4380000000p-79},
    {0x1.d5f47d0000000p+0, 0x1.34ddc00000000p-26, 0x1.b6c52b0000000p-51, 0x1.93c4390000000p-78},
    {0x1.d5f47d0000000p+1, 0x1.34ddc08000000p-25, 0x1.6d8a560000000p-51, 0x1.93c4390000000p-77},
    {0x1.abe8fa8000000p+1, 0x1.a6ee060000000p-27, 0x1.b629590000000p-52, 0x1.2788720000000p-77},
    {0x1.57d1f50000000p+1, 0x1.a6ee060000000p-26, 0x1.b629598000000p-51, 0x1.3c43900000000p-79},
    {0x1.5f47d40000000p+0, 0x1.a6ee068000000p-25, 0x1.6c52b30000000p-51, 0x1.3c43900000000p-78},
    {0x1.5f47d48000000p+1, 0x1.4ddc0d8000000p-25, 0x1.b14acc0000000p-52, 0x1.3c43900000000p-77},
    {0x1.7d1f530000000p+0, 0x1.3770360000000p-26, 0x1.b14acc8000000p-51, 0x1.e21c820000000p-79},
    {0x1.7d1f530000000p+1, 0x1.3770368000000p-25, 0x1.6295990000000p-51, 0x1.e21c820000000p-78},
    {0x1.f47d4d0000000p+0, 0x1.bb81b60000000p-27, 0x1.8a56640000000p-52, 0x1.e21c820000000p-77},
    {0x1.f47d4d0000000p+1, 0x1.bb81b60000000p-26, 0x1.8a56648000000p-51, 0x1.c439040000000p-77},
    {0x1.e8fa9a0000000p+1, 0x1.bb81b68000000p-25, 0x1.14acc98000000p-51, 0x1.8872080000000p-77},
    {0x1.d1f5348000000p+1, 0x1.77036d8000000p-25, 0x1.4acc9c0000000p-54, 0x1.10e4100000000p-77},
    {0x1.a3ea698000000p+1, 0x1.dc0db60000000p-26, 0x1.4acc9e0000000p-53, 0x1.0e41040000000p-80},
    {0x1.47d4d30000000p+1, 0x1.dc0db60000000p-25, 0x1.4acc9e0000000p-52, 0x1.0e41060000000p-79},
    {0x1.1f534d0000000p+0, 0x1.b81b6c0000000p-25, 0x1.4acc9e0000000p-51, 0x1.0e41070000000p-78},
    {0x1.1f534d8000000p+1, 0x1.7036d88000000p-25, 0x1.2b32780000000p-52, 0x1.0e41078000000p-77},
    {0x1.f534dc0000000p-2, 0x1.c0db620000000p-26, 0x1.2b32788000000p-51, 0x1.c820f80000000p-81},
    {0x1.f534dc0000000p-1, 0x1.c0db628000000p-25, 0x1.5993c40000000p-53, 0x1.c820fc0000000p-80},
    {0x1.f534dd0000000p+0, 0x1.81b6c50000000p-25, 0x1.5993c40000000p-52, 0x1.c820fe0000000p-79},
    {0x1.f534dd8000000p+1, 0x1.036d8a0000000p-25, 0x1.5993c40000000p-51, 0x1.c820ff0000000p-78},
    {0x1.ea69bb8000000p+1, 0x1.b6c5200000000p-31, 0x1.664f100000000p-52, 0x1.c820ff0000000p-77},
    {0x1.d4d3770000000p+1, 0x1.b6c5200000000p-30, 0x1.664f108000000p-51, 0x1.9041fe0000000p-77},
    {0x1.a9a6ee0000000p+1, 0x1.b6c5280000000p-29, 0x1.993c430000000p-52, 0x1.2083fc8000000p-77},
    {0x1.534ddc0000000p+1, 0x1.b6c5280000000p-28, 0x1.993c438000000p-51, 0x1.041fe40000000p-79},
    {0x1.4d37700000000p+0, 0x1.b6c52a0000000p-27, 0x1.3278870000000p-51, 0x1.041fe50000000p-78},
    {0x1.4d37700000000p+1, 0x1.b6c52b0000000p-26, 0x1.93c4380000000p-53, 0x1.041fe50000000p-77},
    {0x1.34ddc00000000p+0, 0x1.b6c52b0000000p-25, 0x1.93c4390000000p-52, 0x1.07f9400000000p-82},
};

/* The reduction of a float |x| >= 2^24 (held in a double) without loss: x = m 2^E with m a
 * 24-bit integer, and x 2/pi mod 4 = m ((2^E 2/pi) mod 4) mod 4 from the table, each m*piece
 * exact; r = (that - nearest integer n) pi/2.  Returns r, *out_q gets n mod 4; sign of x kept. */
static LLVMValueRef sincos_reduce_large(const vm *v, LLVMValueRef x, LLVMValueRef *out_q) {
  cg_module *cm = v->cm;
  LLVMTypeRef row_t = LLVMArrayType2(cm->f64, 4), tab_t = LLVMArrayType2(row_t, 104);
  LLVMValueRef tab = LLVMGetNamedGlobal(cm->mod, "hlo.vmath.sincos_2opi");
  if (!tab) {
    LLVMValueRef rows[104];
    for (int e = 0; e < 104; e++) {
      LLVMValueRef el[4];
      for (int j = 0; j < 4; j++)
        el[j] = LLVMConstReal(cm->f64, SINCOS_2OPI[e][j]);
      rows[e] = LLVMConstArray2(cm->f64, el, 4);
    }
    tab = cg_const_global(cm, LLVMConstArray2(row_t, rows, 104), "hlo.vmath.sincos_2opi");
  }
  LLVMValueRef ax = fabs_(v, x);
  LLVMValueRef bits = LLVMBuildBitCast(v->b, ax, v->it, "");
  LLVMValueRef e = LLVMBuildSub(v->b, LLVMBuildLShr(v->b, bits, ki(v, 52), ""), ki(v, 1023 + 23), "");
  e = LLVMBuildSelect(v->b, LLVMBuildICmp(v->b, LLVMIntSLT, e, ki(v, 1), ""), ki(v, 1), e, "");
  e = LLVMBuildSelect(v->b, LLVMBuildICmp(v->b, LLVMIntSGT, e, ki(v, 104), ""), ki(v, 104), e, "");
  LLVMValueRef m = mul(v, ax, pow2i(v, LLVMBuildNeg(v->b, e, "")));
  LLVMValueRef row = LLVMBuildSub(v->b, e, ki(v, 1), ""), piece[4];
  for (int j = 0; j < 4; j++) {
    LLVMValueRef idx[3] = {ki(v, 0), row, ki(v, j)};
    piece[j] = LLVMBuildLoad2(v->b, cm->f64, LLVMBuildInBoundsGEP2(v->b, tab_t, tab, idx, 3, ""), "");
  }
  LLVMValueRef p0 = mul(v, m, piece[0]);
  p0 = sub(v, p0, mul(v, k(v, 4), floor_(v, mul(v, p0, k(v, 0.25)))));
  LLVMValueRef p1 = mul(v, m, piece[1]);
  LLVMValueRef n = rint_(v, add(v, p0, p1));
  LLVMValueRef fr = add(v, add(v, sub(v, p0, n), p1), add(v, mul(v, m, piece[2]), mul(v, m, piece[3])));
  LLVMValueRef r = mul(v, fr, k(v, (double)PIO2L));
  LLVMValueRef q = LLVMBuildAnd(v->b, LLVMBuildFPToSI(v->b, n, v->it, ""), ki(v, 3), "");
  LLVMValueRef neg = fcmp(v, LLVMRealOLT, x, k(v, 0));
  *out_q = LLVMBuildSelect(v->b, neg, LLVMBuildAnd(v->b, LLVMBuildNeg(v->b, q, ""), ki(v, 3), ""), q, "");
  return sel(v, neg, LLVMBuildFNeg(v->b, r, ""), r);
}

/* sin r and cos r for |r| <= pi/4 (double; Taylor to r^17 / r^16). */
static void sincos_poly(const vm *v, LLVMValueRef r, LLVMValueRef *out_s, LLVMValueRef *out_c) {
  double sc[8], cc[7];
  taylor(sc, 3, 2, 8, true); /* 1/3!, -1/5!, ... negated below */
  for (int i = 0; i < 8; i++)
    sc[i] = -sc[i];
  taylor(cc, 4, 2, 7, false); /* 1/4!, -1/6!, ... (signs below) */
  for (int i = 1; i < 7; i += 2)
    cc[i] = -cc[i];
  LLVMValueRef z = mul(v, r, r);
  *out_s = mad(v, mul(v, r, z), horner(v, z, sc, 8), r);
  *out_c = mad(v, mul(v, z, z), horner(v, z, cc, 7), mad(v, z, k(v, -0.5), k(v, 1)));
}

/* sin or cos of x (double); from_float: x is a float's value, reduced exactly when large. */
static LLVMValueRef sincos_core(const vm *v, LLVMValueRef x, bool cosine, bool from_float) {
  LLVMValueRef finite = fcmp(v, LLVMRealOLT, fabs_(v, x), inf(v));
  LLVMValueRef q, s, c, xs = sel(v, finite, x, k(v, 0));
  LLVMValueRef r = sincos_reduce(v, xs, &q);
  if (from_float) {
    LLVMValueRef ql, rl = sincos_reduce_large(v, xs, &ql);
    LLVMValueRef large = fcmp(v, LLVMRealOGE, fabs_(v, xs), k(v, 0x1p24));
    r = sel(v, large, rl, r);
    q = LLVMBuildSelect(v->b, large, ql, q, "");
  }
  sincos_poly(v, r, &s, &c);
  if (cosine)
    q = LLVMBuildAdd(v->b, q, ki(v, 1), "");
  LLVMValueRef odd = LLVMBuildTrunc(v->b, q, v->cm->i1, "");
  LLVMValueRef neg = LLVMBuildICmp(v->b, LLVMIntNE, LLVMBuildAnd(v->b, q, ki(v, 2), ""), ki(v, 0), "");
  LLVMValueRef res = sel(v, odd, c, s);
  res = sel(v, neg, LLVMBuildFNeg(v->b, res, ""), res);
  if (!cosine)
    res = sel(v, fcmp(v, LLVMRealOEQ, x, k(v, 0)), x, res); /* keeps -0 */
  return sel(v, finite, res, sub(v, x, x));
}

/* ---- pow ------------------------------------------------------------------------------------ */

/* A double-double value hi + lo, |lo| <= ulp(hi)/2 (or close to it). */
typedef struct dd {
  LLVMValueRef hi, lo;
} dd;

/* a + b exactly as hi + lo (Knuth's TwoSum: no assumption on the magnitudes). */
static dd two_sum(const vm *v, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef s = add(v, a, b), bb = sub(v, s, a);
  LLVMValueRef err = add(v, sub(v, a, sub(v, s, bb)), sub(v, b, bb));
  return (dd){s, err};
}

/* a * b exactly as hi + lo (one fma). */
static dd two_prod(const vm *v, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef p = mul(v, a, b);
  return (dd){p, fma_(v, a, b, LLVMBuildFNeg(v->b, p, ""))};
}

/* log x for a positive double x as a double-double accurate to about 2^-64 relative, the
 * precision exp(y log x) needs for a result within an ulp when |y log x| reaches 745.
 * x = 2^e m with m in [sqrt(1/2), sqrt(2)), f = m - 1 (exact), s = f / (2 + f) in double-double,
 * log m = 2s + 2s^3/3 + s^5 (2/5 + 2/7 s^2 + ...): the first two terms in double-double, the
 * rest (below 2^-12 of the whole) in double.  e ln2 with ln 2 in two parts, e ln2_hi exact.
 * 0 gives -inf, inf gives inf (lo 0), NaN NaN. */
static dd log_dd(const vm *v, LLVMValueRef x) {
  LLVMValueRef tiny = fcmp(v, LLVMRealOLT, x, k(v, DBL_MIN));
  LLVMValueRef xs = sel(v, tiny, mul(v, x, k(v, 0x1p54)), x);
  LLVMValueRef bits = LLVMBuildBitCast(v->b, xs, v->it, "");
  LLVMValueRef e = LLVMBuildSub(v->b, LLVMBuildLShr(v->b, bits, ki(v, 52), ""), ki(v, 1023), "");
  LLVMValueRef mant = LLVMBuildAnd(v->b, bits, ki(v, (long long)((UINT64_C(1) << 52) - 1)), "");
  LLVMValueRef m = LLVMBuildBitCast(v->b, LLVMBuildOr(v->b, mant, ki(v, 1023LL << 52), ""), v->t, "");
  LLVMValueRef big = fcmp(v, LLVMRealOGT, m, k(v, (double)sqrtl(2.0L)));
  m = sel(v, big, mul(v, m, k(v, 0.5)), m);
  e = LLVMBuildAdd(v->b, e, LLVMBuildZExt(v->b, big, v->it, ""), "");
  LLVMValueRef ef = add(v, LLVMBuildSIToFP(v->b, e, v->t, ""), sel(v, tiny, k(v, -54), k(v, 0)));
  LLVMValueRef f = sub(v, m, k(v, 1));
  /* s = f / u, u = 2 + f = u_hi + u_lo exactly (|f| < 2) */
  LLVMValueRef u_hi = add(v, f, k(v, 2));
  LLVMValueRef u_lo = sub(v, f, sub(v, u_hi, k(v, 2)));
  LLVMValueRef s_hi = vdiv(v, f, u_hi);
  LLVMValueRef r = fma_(v, LLVMBuildFNeg(v->b, s_hi, ""), u_hi, f);
  LLVMValueRef s_lo = vdiv(v, sub(v, r, mul(v, s_hi, u_lo)), u_hi);
  /* s^2 and s^3 in double-double */
  dd z = two_prod(v, s_hi, s_hi);
  z.lo = mad(v, mul(v, k(v, 2), s_hi), s_lo, z.lo);
  dd s3 = two_prod(v, s_hi, z.hi);
  s3.lo = add(v, s3.lo, add(v, mul(v, s_hi, z.lo), mul(v, s_lo, z.hi)));
  double c3_hi = 2.0 / 3.0, c3_lo = (double)(2.0L / 3.0L - (long double)c3_hi);
  dd t3 = two_prod(v, k(v, c3_hi), s3.hi);
  t3.lo = add(v, t3.lo, add(v, mul(v, k(v, c3_hi), s3.lo), mul(v, k(v, c3_lo), s3.hi)));
  double c[13];
  for (int i = 0; i < 13; i++)
    c[i] = (double)(2.0L / (2 * i + 5));
  LLVMValueRef rest = mul(v, mul(v, s3.hi, z.hi), horner(v, z.hi, c, 13));
  /* log m = 2 s_hi + t3_hi + (2 s_lo + t3_lo + rest) */
  dd lm = two_sum(v, mul(v, k(v, 2), s_hi), t3.hi);
  lm.lo = add(v, lm.lo, add(v, mad(v, k(v, 2), s_lo, t3.lo), rest));
  /* + e ln2: ln 2 = hi (32 bits, e hi exact) + lo */
  double hi, lo;
  ln2_split(v, &hi, &lo);
  dd sum = two_sum(v, mul(v, ef, k(v, hi)), lm.hi);
  sum.lo = add(v, sum.lo, mad(v, ef, k(v, lo), lm.lo));
  dd res = two_sum(v, sum.hi, sum.lo);
  LLVMValueRef is_inf = fcmp(v, LLVMRealOEQ, x, inf(v)), is_zero = fcmp(v, LLVMRealOEQ, x, k(v, 0));
  res.hi = sel(v, is_inf, inf(v), sel(v, is_zero, k(v, -INFINITY), sel(v, isnan_(v, x), x, res.hi)));
  res.lo = sel(v, or1(v, is_inf, is_zero), k(v, 0), res.lo);
  return res;
}

/* e^(y log|x|).  A float pow (computed in double): exp(y log|x|) in double is accurate to far
 * below a float ulp.  A double pow: y log|x| = z_hi + z_lo from log_dd, z_lo joining exp's
 * reduced argument (so that exact results such as 2^10 come out exact). */
static LLVMValueRef pow_abs(const vm *v, LLVMValueRef ax, LLVMValueRef y) {
  if (v->from_float)
    return exp_core(v, mul(v, y, log_core(v, ax)), false);
  dd l = log_dd(v, ax);
  LLVMValueRef z_hi = mul(v, y, l.hi);
  LLVMValueRef z_lo = mad(v, y, l.lo, fma_(v, y, l.hi, LLVMBuildFNeg(v->b, z_hi, "")));
  LLVMValueRef finite = fcmp(v, LLVMRealOLT, fabs_(v, z_lo), inf(v)); /* not for z_hi = +-inf */
  LLVMValueRef r = exp_core_lo(v, z_hi, sel(v, finite, z_lo, k(v, 0)), false);
  /* |x|^1 and |x|^2 exactly, as a correctly rounded pow gives them */
  r = sel(v, fcmp(v, LLVMRealOEQ, y, k(v, 2)), mul(v, ax, ax), r);
  return sel(v, fcmp(v, LLVMRealOEQ, y, k(v, 1)), ax, r);
}

/* x^y in double (a float pow's arguments widened, or a double pow), then C99's special
 * cases. */
static LLVMValueRef pow_core(const vm *v, LLVMValueRef x, LLVMValueRef y) {
  LLVMValueRef ax = fabs_(v, x);
  LLVMValueRef r = pow_abs(v, ax, y);
  LLVMValueRef fy = floor_(v, y), hy = mul(v, y, k(v, 0.5));
  LLVMValueRef yint = fcmp(v, LLVMRealOEQ, fy, y);
  LLVMValueRef yodd = and1(v, yint, fcmp(v, LLVMRealONE, floor_(v, hy), hy));
  LLVMValueRef xneg = LLVMBuildICmp(v->b, LLVMIntSLT, LLVMBuildBitCast(v->b, x, v->it, ""), ki(v, 0), "");
  r = sel(v, and1(v, xneg, yodd), LLVMBuildFNeg(v->b, r, ""), r);
  LLVMValueRef neg_finite = and1(v, fcmp(v, LLVMRealOLT, x, k(v, 0)), fcmp(v, LLVMRealOGT, x, k(v, -INFINITY)));
  r = sel(v, and1(v, neg_finite, LLVMBuildNot(v->b, yint, "")), k(v, NAN), r);
  LLVMValueRef one_inf = and1(v, fcmp(v, LLVMRealOEQ, ax, k(v, 1)), fcmp(v, LLVMRealOEQ, fabs_(v, y), inf(v)));
  r = sel(v, one_inf, k(v, 1), r);
  LLVMValueRef unit = or1(v, fcmp(v, LLVMRealOEQ, y, k(v, 0)), fcmp(v, LLVMRealOEQ, x, k(v, 1)));
  return sel(v, unit, k(v, 1), r);
}

/* ---- entry points: type dispatch ---------------------------------------------------------- */

typedef LLVMValueRef (*vm_fn1)(const vm *v, LLVMValueRef x);

/* Applies fn in `work` precision (float for half; double when wide and x is float). */
static LLVMValueRef apply1(cg_function *f, LLVMValueRef x, vm_fn1 fn, bool wide) {
  cg_module *cm = f->cm;
  LLVMTypeRef t = LLVMTypeOf(x), w = t;
  if (t == cm->f16)
    w = cm->f32;
  if (wide && w == cm->f32)
    w = cm->f64;
  vm v = vm_for(cm, w);
  v.from_float = w != t && w == cm->f64;
  LLVMValueRef r = fn(&v, w == t ? x : LLVMBuildFPExt(cm->b, x, w, ""));
  return w == t ? r : LLVMBuildFPTrunc(cm->b, r, t, "");
}

/* A scalar libm call for what has no vector form here (f64 erf and pow). */
static LLVMValueRef libm(cg_function *f, const char *name, LLVMValueRef *args, unsigned n) {
  cg_module *cm = f->cm;
  LLVMTypeRef ats[2] = {cm->f64, cm->f64};
  LLVMTypeRef ft = LLVMFunctionType(cm->f64, ats, n, 0);
  return LLVMBuildCall2(cm->b, ft, cg_libm_fn(cm, name, ft), args, n, "");
}

static LLVMValueRef exp_flush(const vm *v, LLVMValueRef x) { return exp_core(v, x, !v->dbl); }
/* f32 sin/cos arrive here widened to double; f64 ones are double already. */
static LLVMValueRef sin_core(const vm *v, LLVMValueRef x) { return sincos_core(v, x, false, v->from_float); }
static LLVMValueRef cos_core(const vm *v, LLVMValueRef x) { return sincos_core(v, x, true, v->from_float); }
static LLVMValueRef rsqrt_core(const vm *v, LLVMValueRef x) { return vdiv(v, k(v, 1), intr1(v, "llvm.sqrt", x)); }

LLVMValueRef cg_vmath_exp(cg_function *f, LLVMValueRef x) { return apply1(f, x, exp_flush, false); }
LLVMValueRef cg_vmath_expm1(cg_function *f, LLVMValueRef x) { return apply1(f, x, expm1_core, false); }
LLVMValueRef cg_vmath_log(cg_function *f, LLVMValueRef x) { return apply1(f, x, log_core, false); }
LLVMValueRef cg_vmath_log1p(cg_function *f, LLVMValueRef x) { return apply1(f, x, log1p_core, false); }
LLVMValueRef cg_vmath_tanh(cg_function *f, LLVMValueRef x) { return apply1(f, x, tanh_core, false); }
LLVMValueRef cg_vmath_logistic(cg_function *f, LLVMValueRef x) { return apply1(f, x, logistic_core, false); }
LLVMValueRef cg_vmath_sin(cg_function *f, LLVMValueRef x) { return apply1(f, x, sin_core, true); }
LLVMValueRef cg_vmath_cos(cg_function *f, LLVMValueRef x) { return apply1(f, x, cos_core, true); }
LLVMValueRef cg_vmath_rsqrt(cg_function *f, LLVMValueRef x) { return apply1(f, x, rsqrt_core, false); }

LLVMValueRef cg_vmath_erf(cg_function *f, LLVMValueRef x) {
  if (LLVMTypeOf(x) == f->cm->f64)
    return libm(f, "erf", &x, 1);
  return apply1(f, x, erf_f32, false);
}

LLVMValueRef cg_vmath_pow(cg_function *f, LLVMValueRef x, LLVMValueRef y) {
  cg_module *cm = f->cm;
  LLVMTypeRef t = LLVMTypeOf(x);
  vm v = vm_for(cm, cm->f64);
  if (t == cm->f64)
    return pow_core(&v, x, y);
  v.from_float = true;
  LLVMValueRef r = pow_core(&v, LLVMBuildFPExt(cm->b, x, cm->f64, ""), LLVMBuildFPExt(cm->b, y, cm->f64, ""));
  return LLVMBuildFPTrunc(cm->b, r, t, "");
}
