/* infer_elementwise.c — shape rules of the elementwise families: constant, unary, binary
 * (through shape_broadcast_binary), compare (direction and comparison type), select, clamp,
 * convert, bitcast-convert (width changes add or drop a last dimension), reduce-precision,
 * stochastic-convert.  Element-type rules are XLA's (shape_inference.cc InferUnaryOpShape,
 * InferBinaryOpShape, ...).  Tests: testdata/verify/err, shape_test.c.
 */
#include <stdio.h>
#include <string.h>

#include "shape/shape_internal.h"

#define OPSPELL(in) (ir_opcode_table[(in)->op].spelling)

/* ---- constant ---------------------------------------------------------------------------- */

ir_shape *shape_infer_constant(shape_ctx *x, ir_instr *in) {
  const ir_literal *lit = in->attrs.u.literal;
  if (!in->shape || !lit || !lit->shape || shape_compatible(lit->shape, in->shape))
    return NULL; /* the written shape is the result */
  char a[256], b[256];
  return shape_fail(x, in, "the literal has shape %s but the instruction is declared %s",
                    shape_str(lit->shape, a, sizeof a), shape_str(in->shape, b, sizeof b));
}

/* ---- unary ------------------------------------------------------------------------------ */

typedef enum unary_class {
  UN_FLOAT,          /* floor ceil round-*: floating point */
  UN_FLOAT_COMPLEX,  /* transcendental functions */
  UN_INT,            /* popcnt, count-leading-zeros */
  UN_PRED_INT,       /* not */
  UN_NUMBER,         /* negate: integers, floats, complex */
  UN_SIGNED,         /* sign: signed integers, floats, complex */
  UN_ABS,            /* abs: signed or complex -> component type */
  UN_PART,           /* real, imag: complex -> component; float -> same */
  UN_IS_FINITE,      /* float -> pred */
} unary_class;

static unary_class unary_class_of(ir_opcode op) {
  switch (op) {
  case IR_OP_FLOOR: case IR_OP_CEIL: case IR_OP_ROUND_AFZ: case IR_OP_ROUND_EVEN:
    return UN_FLOAT;
  case IR_OP_POPCNT: case IR_OP_CLZ:
    return UN_INT;
  case IR_OP_NOT:
    return UN_PRED_INT;
  case IR_OP_NEGATE:
    return UN_NUMBER;
  case IR_OP_SIGN:
    return UN_SIGNED;
  case IR_OP_ABS:
    return UN_ABS;
  case IR_OP_REAL: case IR_OP_IMAG:
    return UN_PART;
  case IR_OP_IS_FINITE:
    return UN_IS_FINITE;
  default:
    return UN_FLOAT_COMPLEX;
  }
}

/* The result element type of unary op class k on et, or IR_ETYPE_COUNT when et is not
 * accepted; *out_need names the accepted types for the message. */
static ir_etype unary_result_et(unary_class k, ir_etype et, bool strict, const char **out_need) {
  bool fp = ir_etype_is_float(et), cx = ir_etype_is_complex(et), in = ir_etype_is_int(et);
  /* abs and sign of unsigned integers (identity, 0/1) are accepted, as XLA's elemental
   * emitter implements them, unless --strict asks for XLA's shape inference (signed only). */
  bool sg = ir_etype_is_signed(et) || fp || (in && !strict);
  static const char *const need[] = {
      [UN_FLOAT] = "a floating-point", [UN_FLOAT_COMPLEX] = "a floating-point or complex",
      [UN_INT] = "an integer", [UN_PRED_INT] = "an integer or pred",
      [UN_NUMBER] = "an integer, floating-point or complex", [UN_SIGNED] = "a signed or complex",
      [UN_ABS] = "a signed or complex", [UN_PART] = "a floating-point or complex",
      [UN_IS_FINITE] = "a floating-point"};
  *out_need = need[k];
  bool ok[] = {[UN_FLOAT] = fp, [UN_FLOAT_COMPLEX] = fp || cx, [UN_INT] = in, [UN_PRED_INT] = in || et == IR_PRED,
               [UN_NUMBER] = in || fp || cx, [UN_SIGNED] = sg || cx, [UN_ABS] = sg || cx,
               [UN_PART] = fp || cx, [UN_IS_FINITE] = fp};
  if (!ok[k])
    return IR_ETYPE_COUNT;
  if (k == UN_IS_FINITE)
    return IR_PRED;
  if (k == UN_ABS || k == UN_PART)
    return ir_etype_component(et);
  return et;
}

ir_shape *shape_infer_unary(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 1) || !shape_need_array(x, in, 0))
    return NULL;
  const ir_shape *s = shape_operand(in, 0);
  if (in->op == IR_OP_ATAN && x->opts->strict) /* XLA's parser has atan2 only (checked on jaxlib 0.11) */
    return shape_fail(x, in, "'atan' is an hloc extension; XLA writes atan2(x, 1) (rejected by --strict)");
  const char *need;
  ir_etype out = unary_result_et(unary_class_of(in->op), s->et, x->opts->strict, &need);
  if (out == IR_ETYPE_COUNT)
    return shape_fail(x, in, "'%s' needs %s operand, not %s", OPSPELL(in), need, shape_et_name(s->et));
  return shape_with_et(x, s, out);
}

/* ---- binary ------------------------------------------------------------------------------ */

static ir_shape *broadcast_pair(shape_ctx *x, ir_instr *in) {
  char what[300];
  snprintf(what, sizeof what, "%%%s", in->name.p);
  return shape_broadcast_binary(x->m, shape_operand(in, 0), shape_operand(in, 1), &in->attrs.bc, x->opts, what,
                                in->loc, x->diags);
}

/* Element-type rule of a binary op on type a (both operands have it); NULL when fine. */
static const char *binary_type_error(ir_opcode op, ir_etype a) {
  bool fp = ir_etype_is_float(a), cx = ir_etype_is_complex(a), integer = ir_etype_is_int(a);
  switch (op) {
  case IR_OP_AND: case IR_OP_OR: case IR_OP_XOR:
    return integer || a == IR_PRED ? NULL : "integer or pred operands";
  case IR_OP_SHIFT_LEFT: case IR_OP_SHIFT_RIGHT_ARITHMETIC: case IR_OP_SHIFT_RIGHT_LOGICAL: case IR_OP_MULHI:
    return integer ? NULL : "integer operands";
  case IR_OP_ATAN2:
    return fp || cx ? NULL : "floating-point or complex operands";
  case IR_OP_COMPLEX:
    return a == IR_F32 || a == IR_F64 ? NULL : "f32 or f64 operands";
  case IR_OP_SUBTRACT: case IR_OP_DIVIDE: case IR_OP_REMAINDER: case IR_OP_POWER:
    return a != IR_PRED ? NULL : "arithmetic (non-pred) operands";
  default:
    return NULL; /* add, multiply, maximum, minimum: every array type */
  }
}

ir_shape *shape_infer_binary(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 2) || !shape_need_array(x, in, 0) || !shape_need_array(x, in, 1))
    return NULL;
  ir_etype a = shape_operand(in, 0)->et, b = shape_operand(in, 1)->et;
  if (a != b)
    return shape_fail(x, in, "operands of '%s' must have the same element type, but they are %s and %s", OPSPELL(in),
                      shape_et_name(a), shape_et_name(b));
  const char *need = binary_type_error(in->op, a);
  if (need)
    return shape_fail(x, in, "'%s' needs %s, not %s", OPSPELL(in), need, shape_et_name(a));
  ir_shape *r = broadcast_pair(x, in);
  if (r && in->op == IR_OP_COMPLEX)
    r->et = a == IR_F32 ? IR_C64 : IR_C128;
  return r;
}

/* ---- compare ----------------------------------------------------------------------------- */

static const char *const cmp_type_names[] = {"DEFAULT", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};

/* Whether comparison type t fits element type a (XLA's Comparison::Type per primitive type). */
static bool cmp_type_fits(ir_cmp_type t, ir_etype a) {
  bool fp = ir_etype_is_float(a) || ir_etype_is_complex(a);
  switch (t) {
  case IR_CMPT_FLOAT:
  case IR_CMPT_TOTALORDER:
    return fp;
  case IR_CMPT_SIGNED:
    return ir_etype_is_signed(a);
  case IR_CMPT_UNSIGNED:
    return ir_etype_table[a].cls == IR_ETC_UNSIGNED || a == IR_PRED;
  default:
    return true;
  }
}

ir_shape *shape_infer_compare(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 2) || !shape_need_array(x, in, 0) || !shape_need_array(x, in, 1))
    return NULL;
  ir_etype a = shape_operand(in, 0)->et, b = shape_operand(in, 1)->et;
  if (a != b)
    return shape_fail(x, in, "compare operands must have the same element type, but they are %s and %s",
                      shape_et_name(a), shape_et_name(b));
  ir_cmp_dir dir = in->attrs.u.compare.dir;
  if (ir_etype_is_complex(a) && dir != IR_CMP_EQ && dir != IR_CMP_NE)
    return shape_fail(x, in, "complex numbers can only be compared with EQ or NE");
  ir_cmp_type t = in->attrs.u.compare.type;
  if (in->attrs.u.compare.has_type && !cmp_type_fits(t, a))
    return shape_fail(x, in, "comparison type=%s does not fit element type %s", cmp_type_names[t], shape_et_name(a));
  ir_shape *r = broadcast_pair(x, in);
  if (r)
    r->et = IR_PRED;
  return r;
}

/* ---- select and clamp --------------------------------------------------------------------- */

ir_shape *shape_infer_select(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 3) || !shape_need_array(x, in, 0))
    return NULL;
  const ir_shape *p = shape_operand(in, 0), *t = shape_operand(in, 1), *f = shape_operand(in, 2);
  char a[256], b[256];
  if (p->et != IR_PRED)
    return shape_fail(x, in, "select's predicate must be pred, not %s", shape_et_name(p->et));
  if (!shape_compatible(t, f))
    return shape_fail(x, in, "select's branches must have the same shape, but they are %s and %s",
                      shape_str(t, a, sizeof a), shape_str(f, b, sizeof b));
  if (t->et == IR_TUPLE || t->et == IR_TOKEN) {
    /* XLA's verifier takes arrays only (older XLA selected whole tuples: kept outside --strict) */
    if (x->opts->strict)
      return shape_fail(x, in, "select takes array branches (under --strict, as XLA's verifier), not %s",
                        shape_kind_str(t, a, sizeof a));
    if (p->rank != 0)
      return shape_fail(x, in, "selecting between tuples needs a scalar pred, not %s", shape_str(p, a, sizeof a));
    return ir_shape_clone(x->m, t);
  }
  if (p->rank != 0 && !ir_shape_same_dims(p, t))
    return shape_fail(x, in, "select's predicate %s must be a scalar or have the shape of the branches %s",
                      shape_str(p, a, sizeof a), shape_str(t, b, sizeof b));
  return ir_shape_clone(x->m, t);
}

ir_shape *shape_infer_clamp(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 3))
    return NULL;
  for (int i = 0; i < 3; i++)
    if (!shape_need_array(x, in, i))
      return NULL;
  const ir_shape *lo = shape_operand(in, 0), *v = shape_operand(in, 1), *hi = shape_operand(in, 2);
  if (lo->et != v->et || hi->et != v->et)
    return shape_fail(x, in, "clamp operands must have one element type, but they are %s, %s and %s",
                      shape_et_name(lo->et), shape_et_name(v->et), shape_et_name(hi->et));
  if ((lo->rank && !ir_shape_same_dims(lo, v)) || (hi->rank && !ir_shape_same_dims(hi, v)))
    return shape_fail(x, in, "clamp's min and max must be scalars or have the operand's shape");
  return ir_shape_clone(x->m, v);
}

/* ---- conversions -------------------------------------------------------------------------- */

/* The written result must be an array (convert-like ops have no other way to name a type). */
static bool need_written_array(shape_ctx *x, ir_instr *in) {
  if (!in->shape)
    return false; /* the parser requires it; the verifier reports it */
  if (shape_is_array(in->shape))
    return true;
  char b[256];
  return shape_error(x, in, "the result of '%s' must be an array, not %s", OPSPELL(in),
                     shape_kind_str(in->shape, b, sizeof b));
}

ir_shape *shape_infer_convert(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 1) || !shape_need_array(x, in, 0) || !need_written_array(x, in))
    return NULL;
  if (!ir_shape_same_dims(shape_operand(in, 0), in->shape))
    return shape_fail(x, in, "convert cannot change dimensions");
  return shape_with_et(x, shape_operand(in, 0), in->shape->et);
}

ir_shape *shape_infer_bitcast_convert(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 1) || !shape_need_array(x, in, 0) || !need_written_array(x, in))
    return NULL;
  const ir_shape *s = shape_operand(in, 0);
  ir_etype to = in->shape->et;
  /* XLA counts a pred as its storage, one byte (primitive_util::StorageBitWidth). */
  int a = s->et == IR_PRED ? 8 : ir_etype_table[s->et].bits, b = to == IR_PRED ? 8 : ir_etype_table[to].bits;
  const char *from_n = shape_et_name(s->et), *to_n = shape_et_name(to);
  if (ir_etype_is_complex(s->et) != ir_etype_is_complex(to))
    return shape_fail(x, in, "bitcast-convert cannot convert between complex and real types (%s to %s)", from_n, to_n);
  int64_t dims[SHAPE_MAX_RANK + 1];
  if (s->rank >= SHAPE_MAX_RANK)
    return shape_fail(x, in, "operand rank %d is too large", s->rank);
  if (s->rank) /* a scalar's dims may be NULL, and memcpy from NULL is undefined even for 0 bytes */
    memcpy(dims, s->dims, (size_t)s->rank * sizeof(int64_t));
  if (a == b)
    return shape_array(x, to, s->rank, dims);
  int big = a > b ? a : b, small = a > b ? b : a;
  if (big % small)
    return shape_fail(x, in, "bitcast-convert from %s to %s: bit widths %d and %d do not divide", from_n, to_n, a, b);
  int ratio = big / small;
  if (a > b) {
    if (in->shape->rank != s->rank + 1 || in->shape->dims[s->rank] != ratio)
      return shape_fail(x, in, "bitcast-convert from %s to %s adds a last dimension of size %d", from_n, to_n, ratio);
    dims[s->rank] = ratio;
    return shape_array(x, to, s->rank + 1, dims);
  }
  if (s->rank < 1 || s->dims[s->rank - 1] != ratio)
    return shape_fail(x, in, "bitcast-convert from %s to %s needs a last operand dimension of size %d", from_n, to_n,
                      ratio);
  return shape_array(x, to, s->rank - 1, dims);
}

ir_shape *shape_infer_reduce_precision(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 1) || !shape_need_array(x, in, 0))
    return NULL;
  const ir_shape *s = shape_operand(in, 0);
  if (!ir_etype_is_float(s->et))
    return shape_fail(x, in, "reduce-precision needs a floating-point operand, not %s", shape_et_name(s->et));
  int64_t e = in->attrs.u.reduce_precision.exponent_bits, mb = in->attrs.u.reduce_precision.mantissa_bits;
  if (e < 1)
    return shape_fail(x, in, "reduce-precision needs exponent_bits >= 1, not %lld", (long long)e);
  if (mb < 0)
    return shape_fail(x, in, "reduce-precision needs mantissa_bits >= 0, not %lld", (long long)mb);
  return ir_shape_clone(x->m, s);
}

ir_shape *shape_infer_stochastic_convert(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 2) || !shape_need_array(x, in, 0) || !shape_need_array(x, in, 1) ||
      !need_written_array(x, in))
    return NULL;
  const ir_shape *s = shape_operand(in, 0), *r = shape_operand(in, 1);
  if (!ir_etype_is_float(s->et))
    return shape_fail(x, in, "stochastic-convert needs a floating-point operand, not %s", shape_et_name(s->et));
  if (ir_etype_table[r->et].cls != IR_ETC_UNSIGNED || ir_etype_table[r->et].bits != ir_etype_table[s->et].bits)
    return shape_fail(x, in, "stochastic-convert's random operand must be unsigned integers of %d bits, not %s",
                      ir_etype_table[s->et].bits, shape_et_name(r->et));
  char a[256], b[256];
  if (!ir_shape_same_dims(s, r))
    return shape_fail(x, in, "stochastic-convert's random operand %s must have the operand's dimensions %s",
                      shape_str(r, a, sizeof a), shape_str(s, b, sizeof b));
  return shape_with_et(x, s, in->shape->et);
}
