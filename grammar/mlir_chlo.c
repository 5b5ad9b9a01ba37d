/* mlir_chlo.c — the CHLO ops JAX emits, expanded as XLA's CHLO legalization does.  Ops the
 * IR has as HLO opcodes (acos, acosh, asin, asinh, atan, atanh, cosh, sinh, tan, erf, top_k)
 * map 1:1.  The others are written out as elementwise HLO instructions over the operand's
 * shape, computed in f32 for f16/bf16 operands (as the legalization upcasts) and rounded
 * once: lgamma and digamma (Lanczos approximation with reflection), erf_inv (Giles'
 * single-precision polynomial; two Newton steps for f64), erfc (a Chebyshev fit of exp(-x^2)-scaled erfc, relative
 * error below 1.2e-7), next_after (bit arithmetic), bessel_i1e (power series below 15,
 * asymptotic expansion above), square, is_inf/is_pos_inf/is_neg_inf, constant_like and the
 * broadcasting binary ops.  The formulas are in docs/stablehlo.md.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mlir_internal.h"

/* An expression builder over one shape: every helper writes one line and returns the name
 * of its value (arena).  NULL propagates: a failed step makes every later step fail. */
typedef struct ex {
  ml_ctx *c;
  ml_comp *k;
  ir_loc loc;
  const ml_type *t;     /* the computation type (operand shape, f32 for f16/bf16) */
  char shape[512];      /* its HLO text */
  char pshape[512];     /* the same dims of pred */
  char ishape[512];     /* the same dims of the same-width unsigned integer */
  ir_etype et;
} ex;

static const char *ex_name(ex *e) {
  char *n = ml_alloc(e->c, 24);
  if (n)
    ml_new_name(e->c, n);
  return n;
}

static void dims_shape(const ml_type *t, ir_etype et, char *out, size_t cap) {
  ml_type u = *t;
  u.et = et;
  ml_buf b = {0};
  ml_shape_text(&u, &b);
  snprintf(out, cap, "%s", b.p ? b.p : "");
  ml_buf_free(&b);
}

static bool ex_init(ex *e, ml_ctx *c, ml_comp *k, const ml_op *op, const ml_type *t, ir_etype et) {
  memset(e, 0, sizeof *e);
  e->c = c;
  e->k = k;
  e->loc = op->loc;
  e->et = et;
  ml_type *u = ml_tensor(c, et, t->rank, t->dims);
  if (!u)
    return false;
  e->t = u;
  dims_shape(t, et, e->shape, sizeof e->shape);
  dims_shape(t, IR_PRED, e->pshape, sizeof e->pshape);
  dims_shape(t, et == IR_F64 ? IR_U64 : IR_U32, e->ishape, sizeof e->ishape);
  return true;
}

/* A constant broadcast to the shape. */
static const char *K(ex *e, double v) {
  const char *s = ex_name(e), *b = ex_name(e);
  if (!s || !b)
    return NULL;
  char num[64];
  if (isinf(v))
    snprintf(num, sizeof num, "%s", v < 0 ? "-inf" : "inf");
  else if (isnan(v))
    snprintf(num, sizeof num, "nan");
  else
    snprintf(num, sizeof num, "%.17g", v);
  ml_line(e->c, e->k, e->loc, "%%%s = %s[] constant(%s)", s, ir_etype_table[e->et].spelling, num);
  ml_line(e->c, e->k, e->loc, "%%%s = %s broadcast(%%%s), dimensions={}", b, e->shape, s);
  return b;
}

/* An unsigned integer constant broadcast to the shape (exact for all 64 bits). */
static const char *KU(ex *e, uint64_t v) {
  const char *s = ex_name(e), *b = ex_name(e);
  if (!s || !b)
    return NULL;
  ml_line(e->c, e->k, e->loc, "%%%s = %s[] constant(%llu)", s, ir_etype_table[e->et].spelling, (unsigned long long)v);
  ml_line(e->c, e->k, e->loc, "%%%s = %s broadcast(%%%s), dimensions={}", b, e->shape, s);
  return b;
}

static const char *un(ex *e, const char *op, const char *a) {
  const char *n = a ? ex_name(e) : NULL;
  if (n)
    ml_line(e->c, e->k, e->loc, "%%%s = %s %s(%%%s)", n, e->shape, op, a);
  return n;
}

static const char *bin(ex *e, const char *op, const char *a, const char *b) {
  const char *n = a && b ? ex_name(e) : NULL;
  if (n)
    ml_line(e->c, e->k, e->loc, "%%%s = %s %s(%%%s, %%%s)", n, e->shape, op, a, b);
  return n;
}

static const char *add(ex *e, const char *a, const char *b) { return bin(e, "add", a, b); }
static const char *sub(ex *e, const char *a, const char *b) { return bin(e, "subtract", a, b); }
static const char *mul(ex *e, const char *a, const char *b) { return bin(e, "multiply", a, b); }
static const char *dvd(ex *e, const char *a, const char *b) { return bin(e, "divide", a, b); }

static const char *cmp(ex *e, const char *dir, const char *a, const char *b) {
  const char *n = a && b ? ex_name(e) : NULL;
  if (n)
    ml_line(e->c, e->k, e->loc, "%%%s = %s compare(%%%s, %%%s), direction=%s", n, e->pshape, a, b, dir);
  return n;
}

static const char *sel(ex *e, const char *p, const char *a, const char *b) {
  const char *n = p && a && b ? ex_name(e) : NULL;
  if (n)
    ml_line(e->c, e->k, e->loc, "%%%s = %s select(%%%s, %%%s, %%%s)", n, e->shape, p, a, b);
  return n;
}

static const char *pred_op(ex *e, const char *op, const char *a, const char *b) {
  const char *n = a && b ? ex_name(e) : NULL;
  if (n)
    ml_line(e->c, e->k, e->loc, "%%%s = %s %s(%%%s, %%%s)", n, e->pshape, op, a, b);
  return n;
}

static const char *is_finite(ex *e, const char *a) {
  const char *n = a ? ex_name(e) : NULL;
  if (n)
    ml_line(e->c, e->k, e->loc, "%%%s = %s is-finite(%%%s)", n, e->pshape, a);
  return n;
}

static const char *is_inf(ex *e, const char *a) {
  return cmp(e, "EQ", un(e, "abs", a), K(e, INFINITY));
}

/* ---- the functions ----------------------------------------------------------------------- */

static const double lanczos_g = 7.0, lanczos_base = 0.99999999999980993227684700473478;
static const double lanczos_coef[8] = {676.520368121885098567009190444019, -1259.13921672240287047156078755283,
                                       771.3234287776530788486528258894,   -176.61502916214059906584551354,
                                       12.507343278686904814458936853,     -0.13857109526572011689554707,
                                       9.984369578019570859563e-6,         1.50563273514931155834e-7};

/* z and the reflection test shared by lgamma and digamma. */
static const char *lanczos_z(ex *e, const char *x, const char **reflect) {
  *reflect = cmp(e, "LT", x, K(e, 0.5));
  return sel(e, *reflect, un(e, "negate", x), sub(e, x, K(e, 1)));
}

static const char *log_t_of(ex *e, const char *z) {
  return add(e, K(e, log(lanczos_g + 0.5)), un(e, "log-plus-one", dvd(e, z, K(e, lanczos_g + 0.5))));
}

static const char *lgamma_of(ex *e, const char *x) {
  const char *reflect;
  const char *z = lanczos_z(e, x, &reflect);
  const char *s = K(e, lanczos_base);
  for (int i = 0; i < 8; i++)
    s = add(e, s, dvd(e, K(e, lanczos_coef[i]), add(e, z, K(e, i + 1))));
  const char *t = add(e, K(e, lanczos_g + 0.5), z);
  const char *log_t = log_t_of(e, z);
  const char *log_y = add(e, add(e, K(e, 0.5 * log(2 * M_PI)), mul(e, sub(e, add(e, z, K(e, 0.5)), dvd(e, t, log_t)), log_t)),
                          un(e, "log", s));
  const char *ax = un(e, "abs", x);
  const char *frac = sub(e, ax, un(e, "floor", ax));
  const char *red = sel(e, cmp(e, "GT", frac, K(e, 0.5)), sub(e, K(e, 1), frac), frac);
  const char *denom = un(e, "log", un(e, "sine", mul(e, K(e, M_PI), red)));
  const char *refl = sel(e, is_finite(e, denom), sub(e, sub(e, K(e, log(M_PI)), denom), log_y), un(e, "negate", denom));
  const char *r = sel(e, reflect, refl, log_y);
  return sel(e, is_inf(e, x), K(e, INFINITY), r);
}

static const char *digamma_of(ex *e, const char *x) {
  const char *reflect;
  const char *z = lanczos_z(e, x, &reflect);
  const char *num = K(e, 0), *den = K(e, lanczos_base);
  for (int i = 0; i < 8; i++) {
    const char *zi = add(e, z, K(e, i + 1));
    num = sub(e, num, dvd(e, K(e, lanczos_coef[i]), mul(e, zi, zi)));
    den = add(e, den, dvd(e, K(e, lanczos_coef[i]), zi));
  }
  const char *t = add(e, K(e, lanczos_g + 0.5), z);
  const char *y = sub(e, add(e, log_t_of(e, z), dvd(e, num, den)), dvd(e, K(e, lanczos_g), t));
  const char *rx = add(e, x, un(e, "abs", un(e, "floor", add(e, x, K(e, 0.5)))));
  const char *pr = mul(e, K(e, M_PI), rx);
  const char *refl = sub(e, y, dvd(e, mul(e, K(e, M_PI), un(e, "cosine", pr)), un(e, "sine", pr)));
  const char *r = sel(e, reflect, refl, y);
  const char *pole = pred_op(e, "and", cmp(e, "LE", x, K(e, 0)), cmp(e, "EQ", x, un(e, "floor", x)));
  return sel(e, pole, K(e, NAN), r);
}

static const char *erf_inv_of(ex *e, const char *x) {
  static const double lt5[9] = {2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                                -0.00125372503, -0.00417768164, 0.246640727, 1.50140941};
  static const double ge5[9] = {-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                                -0.0076224613, 0.00943887047, 1.00167406, 2.83297682};
  const char *w = un(e, "negate", un(e, "log-plus-one", mul(e, x, un(e, "negate", x))));
  const char *lt = cmp(e, "LT", w, K(e, 5));
  const char *ww = sel(e, lt, sub(e, w, K(e, 2.5)), sub(e, un(e, "sqrt", w), K(e, 3)));
  const char *p = sel(e, lt, K(e, lt5[0]), K(e, ge5[0]));
  for (int i = 1; i < 9; i++)
    p = add(e, sel(e, lt, K(e, lt5[i]), K(e, ge5[i])), mul(e, p, ww));
  const char *r = mul(e, p, x);
  /* f64: the f32 polynomial is good to ~1e-7; two Newton steps on erf(r) = x make it good to
   * the last bits (XLA uses a longer f64 polynomial instead). */
  for (int i = 0; e->et == IR_F64 && i < 2; i++) {
    const char *d = mul(e, K(e, 2 / sqrt(M_PI)), un(e, "exponential", un(e, "negate", mul(e, r, r))));
    r = sub(e, r, dvd(e, sub(e, un(e, "erf", r), x), d));
  }
  return sel(e, cmp(e, "EQ", un(e, "abs", x), K(e, 1)), mul(e, x, K(e, INFINITY)), r);
}

/* erfc(|x|) = t exp(-x^2 + P(t)), t = 1/(1 + |x|/2) (Numerical Recipes' erfcc); x < 0: 2 - erfc(-x). */
static const char *erfc_of(ex *e, const char *x) {
  static const double c[10] = {-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806,
                               0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277};
  const char *z = un(e, "abs", x);
  const char *t = dvd(e, K(e, 1), add(e, K(e, 1), mul(e, K(e, 0.5), z)));
  const char *p = K(e, c[9]);
  for (int i = 8; i >= 0; i--)
    p = add(e, K(e, c[i]), mul(e, t, p));
  const char *r = mul(e, t, un(e, "exponential", sub(e, p, mul(e, z, z))));
  return sel(e, cmp(e, "LT", x, K(e, 0)), sub(e, K(e, 2), r), r);
}

/* exp(-|x|) I1(x): the power series (x/2) sum y^k / (k! (k+1)!), y = x^2/4, for |x| <= 15,
 * and the asymptotic expansion sign(x)/sqrt(2 pi |x|) sum (-1)^k a_k / |x|^k above. */
static const char *bessel_i1e_of(ex *e, const char *x) {
  const char *ax = un(e, "abs", x);
  const char *h = mul(e, x, K(e, 0.5));
  const char *y = mul(e, h, h);
  double coef[31];
  double f = 1;
  for (int kk = 0; kk <= 30; kk++) { /* 1 / (k! (k+1)!) */
    coef[kk] = 1 / f;
    f *= (kk + 1.0) * (kk + 2.0);
  }
  const char *s = K(e, coef[30]);
  for (int kk = 29; kk >= 0; kk--)
    s = add(e, K(e, coef[kk]), mul(e, y, s));
  const char *small = mul(e, mul(e, h, s), un(e, "exponential", un(e, "negate", ax)));
  double a = 1;
  const char *q = K(e, 1), *inv = dvd(e, K(e, 1), ax), *pw = K(e, 1);
  for (int kk = 1; kk <= 8; kk++) {
    a *= (4.0 - (2.0 * kk - 1) * (2.0 * kk - 1)) / (8.0 * kk);
    pw = mul(e, pw, inv);
    q = add(e, q, mul(e, K(e, (kk % 2 ? -1 : 1) * a), pw));
  }
  const char *big = dvd(e, q, un(e, "sqrt", mul(e, K(e, 2 * M_PI), ax)));
  big = mul(e, big, un(e, "sign", x));
  return sel(e, cmp(e, "LE", ax, K(e, 15)), small, big);
}

/* ---- ops --------------------------------------------------------------------------------- */

typedef const char *(*unary_fn)(ex *e, const char *x);

/* Converts the operand to the computation type, applies fn, converts back, binds. */
static bool emit_unary(ml_ctx *c, ml_comp *k, const ml_op *op, unary_fn fn) {
  ml_type *t = ml_operand_type(c, k, op, 0);
  if (!t)
    return false;
  if (t->kind != MLT_TENSOR || !ir_etype_is_float(t->et))
    return ml_error(c, op->loc, "%.*s: only real floating-point operands are supported", (int)op->name.n, op->name.p),
           false;
  ir_etype et = t->et == IR_F64 ? IR_F64 : IR_F32;
  ex e;
  if (!ex_init(&e, c, k, op, t, et))
    return false;
  const ml_value *v = ml_lookup(c, k, &op->operands[0]);
  if (!v)
    return false;
  const char *x = v->hlo;
  if (t->et != et)
    x = un(&e, "convert", x);
  const char *r = fn(&e, x);
  if (!r)
    return false;
  if (t->et != et) {
    const char *n = ex_name(&e);
    if (!n)
      return false;
    ml_line(c, k, op->loc, "%%%s = %s convert(%%%s)", n, ml_shape_str(c, t), r);
    r = n;
  }
  return ml_bind_results(c, k, op, r);
}

static bool emit_next_after(ml_ctx *c, ml_comp *k, const ml_op *op) {
  ml_type *t = ml_operand_type(c, k, op, 0);
  const ml_value *xv = ml_lookup(c, k, &op->operands[0]);
  const ml_value *yv = op->n_operands > 1 ? ml_lookup(c, k, &op->operands[1]) : NULL;
  if (!t || !xv || !yv)
    return false;
  if (!ir_etype_is_float(t->et))
    return ml_error(c, op->loc, "next_after: only floating-point operands are supported"), false;
  int bits = ir_etype_table[t->et].bits;
  ir_etype ut = bits == 64 ? IR_U64 : bits == 32 ? IR_U32 : bits == 16 ? IR_U16 : IR_U8;
  ex f, u;
  if (!ex_init(&f, c, k, op, t, t->et) || !ex_init(&u, c, k, op, t, ut))
    return false;
  const char *x = xv->hlo, *y = yv->hlo;
  const char *xi = un(&u, "bitcast-convert", x), *yi = un(&u, "bitcast-convert", y);
  uint64_t sign = 1ull << (bits - 1);
  const char *sb = KU(&u, sign), *mag = KU(&u, sign - 1);
  const char *xa = bin(&u, "and", xi, mag), *ya = bin(&u, "and", yi, mag);
  const char *xs = bin(&u, "and", xi, sb), *ys = bin(&u, "and", yi, sb);
  const char *one = KU(&u, 1);
  const char *dec = pred_op(&u, "or", cmp(&u, "GT", xa, ya), cmp(&u, "NE", xs, ys));
  const char *r = sel(&u, dec, sub(&u, xi, one), add(&u, xi, one));
  r = sel(&u, cmp(&u, "EQ", xa, KU(&u, 0)), sel(&u, cmp(&u, "EQ", ya, KU(&u, 0)), yi, bin(&u, "or", ys, one)), r);
  const char *rf = un(&f, "bitcast-convert", r);
  rf = sel(&f, cmp(&f, "EQ", x, y), y, rf);
  const char *nan = pred_op(&f, "or", cmp(&f, "NE", x, x), cmp(&f, "NE", y, y));
  rf = sel(&f, nan, K(&f, NAN), rf);
  return rf && ml_bind_results(c, k, op, rf);
}

/* The 1:1 ops and what they become. */
static const char *const direct[][2] = {
    {"chlo.acos", "acos"},   {"chlo.acosh", "acosh"}, {"chlo.asin", "asin"}, {"chlo.asinh", "asinh"},
    {"chlo.atan", "atan"},   {"chlo.atanh", "atanh"}, {"chlo.cosh", "cosh"}, {"chlo.sinh", "sinh"},
    {"chlo.tan", "tan"},     {"chlo.erf", "erf"},     {"chlo.broadcast_add", "add"},
    {"chlo.broadcast_subtract", "subtract"}, {"chlo.broadcast_multiply", "multiply"},
    {"chlo.broadcast_divide", "divide"}, {"chlo.broadcast_maximum", "maximum"},
    {"chlo.broadcast_minimum", "minimum"}, {"chlo.broadcast_and", "and"}, {"chlo.broadcast_or", "or"},
    {"chlo.broadcast_xor", "xor"}, {"chlo.broadcast_power", "power"}, {"chlo.broadcast_remainder", "remainder"},
    {"chlo.broadcast_atan2", "atan2"}, {"chlo.broadcast_shift_left", "shift-left"},
    {"chlo.broadcast_shift_right_arithmetic", "shift-right-arithmetic"},
    {"chlo.broadcast_shift_right_logical", "shift-right-logical"}, {"chlo.broadcast_complex", "complex"},
    {"chlo.broadcast_select", "select"},
};

static bool emit_top_k(ml_ctx *c, ml_comp *k, const ml_op *op) {
  const ml_attr *kk = ml_attr_get(op, "k");
  if (!kk || kk->kind != MA_INT)
    return ml_error(c, op->loc, "top_k without k"), false;
  ml_type *t = ml_result_type(c, op);
  ml_buf args = {0};
  bool ok = t && ml_operands_text(c, k, op, 0, 1, &args);
  if (ok) {
    char name[24];
    ml_new_name(c, name);
    ml_line(c, k, op->loc, "%%%s = %s topk(%s), k=%lld, largest=true", name, ml_shape_str(c, t), args.p,
            (long long)kk->i);
    ok = ml_bind_results(c, k, op, name);
  }
  ml_buf_free(&args);
  return ok;
}

static const char *square_of(ex *e, const char *x) { return mul(e, x, x); }

bool ml_emit_chlo(ml_ctx *c, ml_comp *k, const ml_op *op, bool *handled) {
  ml_str n = op->name;
  *handled = n.n > 5 && memcmp(n.p, "chlo.", 5) == 0;
  if (!*handled)
    return false;
  for (size_t i = 0; i < sizeof direct / sizeof *direct; i++)
    if (ml_str_is(n, direct[i][0])) {
      ml_type *t = ml_result_type(c, op);
      ml_buf args = {0};
      bool ok = t && ml_operands_text(c, k, op, 0, op->n_operands, &args);
      if (ok) {
        char name[24];
        ml_new_name(c, name);
        ml_line(c, k, op->loc, "%%%s = %s %s(%s)", name, ml_shape_str(c, t), direct[i][1], args.p);
        ok = ml_bind_results(c, k, op, name);
      }
      ml_buf_free(&args);
      return ok;
    }
  if (ml_str_is(n, "chlo.top_k"))
    return emit_top_k(c, k, op);
  if (ml_str_is(n, "chlo.lgamma"))
    return emit_unary(c, k, op, lgamma_of);
  if (ml_str_is(n, "chlo.digamma"))
    return emit_unary(c, k, op, digamma_of);
  if (ml_str_is(n, "chlo.erf_inv"))
    return emit_unary(c, k, op, erf_inv_of);
  if (ml_str_is(n, "chlo.erfc"))
    return emit_unary(c, k, op, erfc_of);
  if (ml_str_is(n, "chlo.bessel_i1e"))
    return emit_unary(c, k, op, bessel_i1e_of);
  if (ml_str_is(n, "chlo.square"))
    return emit_unary(c, k, op, square_of);
  if (ml_str_is(n, "chlo.next_after"))
    return emit_next_after(c, k, op);
  if (ml_str_is(n, "chlo.is_inf") || ml_str_is(n, "chlo.is_pos_inf") || ml_str_is(n, "chlo.is_neg_inf")) {
    ml_type *t = ml_operand_type(c, k, op, 0);
    const ml_value *v = ml_lookup(c, k, &op->operands[0]);
    ex e;
    if (!t || !v || !ex_init(&e, c, k, op, t, t->et))
      return false;
    const char *r = ml_str_is(n, "chlo.is_inf") ? is_inf(&e, v->hlo)
                                                 : cmp(&e, "EQ", v->hlo, K(&e, n.p[8] == 'p' ? INFINITY : -INFINITY));
    return r && ml_bind_results(c, k, op, r);
  }
  ml_error(c, op->loc, "unsupported operation %.*s", (int)n.n, n.p);
  return false;
}
