/* infer.c — shape inference per op family, dispatched through one table indexed by
 * ir_family (STYLE.md 6).  Each rule checks operand counts, element types, dimension rules
 * and attributes as XLA's shape inference does (xla/service/shape_inference.cc, the
 * operation semantics document) and returns the result shape.  Families whose result is
 * only defined by the written shape (custom-call, rng, infeed, ...) return NULL without a
 * diagnostic; the verifier then requires the shape to be written.
 * Tests: testdata/verify/err, shape_test.c.
 */
#include <stdio.h>
#include <string.h>

#include "shape/shape_internal.h"

typedef ir_shape *(*infer_fn)(shape_ctx *x, ir_instr *in);

#define OP(i) ((i) < in->n_operands ? in->operands[i]->shape : NULL)
#define ERR(...) (shape_error(x, in, __VA_ARGS__), (ir_shape *)NULL)

static const char *et_name(ir_etype t) { return ir_etype_table[t].spelling; }

static void fmt(const ir_shape *s, char *buf, size_t cap) { ir_shape_format(s, false, buf, cap); }

static ir_shape *array(shape_ctx *x, ir_etype et, int rank, const int64_t *dims) {
  return ir_shape_array(x->m, et, rank, dims);
}

static bool need_array(shape_ctx *x, ir_instr *in, int k) {
  const ir_shape *s = OP(k);
  if (!s || !ir_etype_is_array(s->et)) {
    shape_error(x, in, "operand %d must be an array, not %s", k,
                s ? (s->et == IR_TUPLE ? "a tuple" : et_name(s->et)) : "missing");
    return false;
  }
  return true;
}

static bool shapes_equal(const ir_shape *a, const ir_shape *b) { return ir_shape_equal(a, b); }

/* ---- leaves ----------------------------------------------------------------------------- */

static ir_shape *infer_given(shape_ctx *x, ir_instr *in) {
  (void)x;
  (void)in;
  return NULL; /* the written shape defines the result */
}

static ir_shape *infer_parameter(shape_ctx *x, ir_instr *in) {
  ir_computation *c = in->parent;
  (void)x;
  (void)c;
  return NULL;
}

static ir_shape *infer_constant(shape_ctx *x, ir_instr *in) {
  ir_literal *lit = in->attrs.u.literal;
  if (lit && in->shape && !shapes_equal(lit->shape, in->shape))
    return ERR("the literal's shape does not match the instruction's shape");
  return NULL;
}

static ir_shape *infer_iota(shape_ctx *x, ir_instr *in) {
  if (!in->shape)
    return NULL;
  if (in->shape->et == IR_TUPLE || in->shape->rank == 0)
    return ERR("iota needs an array result of rank >= 1");
  if (in->attrs.u.iota_dimension < 0 || in->attrs.u.iota_dimension >= in->shape->rank)
    return ERR("iota_dimension %lld is out of range for rank %d", (long long)in->attrs.u.iota_dimension,
               in->shape->rank);
  return NULL;
}

static ir_shape *infer_replica_id(shape_ctx *x, ir_instr *in) {
  return ir_shape_scalar(x->m, IR_U32);
}

static ir_shape *infer_token(shape_ctx *x, ir_instr *in) {
  if (in->op == IR_OP_ADD_DEPENDENCY)
    return ir_shape_clone(x->m, OP(0));
  for (int i = 0; i < in->n_operands; i++)
    if (OP(i)->et != IR_TOKEN)
      return ERR("after-all operand %d must be a token, not %s", i, OP(i)->et == IR_TUPLE ? "a tuple" : et_name(OP(i)->et));
  return ir_shape_scalar(x->m, IR_TOKEN);
}

/* ---- elementwise -------------------------------------------------------------------------- */

static bool is_bitwise_op(ir_opcode op) {
  return op == IR_OP_AND || op == IR_OP_OR || op == IR_OP_XOR || op == IR_OP_NOT;
}

static ir_shape *infer_unary(shape_ctx *x, ir_instr *in) {
  if (!need_array(x, in, 0))
    return NULL;
  const ir_shape *s = OP(0);
  ir_etype et = s->et, out = et;
  ir_opcode op = in->op;
  bool fp = ir_etype_is_float(et), cx = ir_etype_is_complex(et), integer = ir_etype_is_int(et);
  switch (op) {
  case IR_OP_NOT:
    if (!integer && et != IR_PRED)
      return ERR("'not' needs an integer or pred operand, not %s", et_name(et));
    break;
  case IR_OP_POPCNT:
  case IR_OP_CLZ:
    if (!integer)
      return ERR("'%s' needs an integer operand, not %s", ir_opcode_table[op].spelling, et_name(et));
    break;
  case IR_OP_IS_FINITE:
    if (!fp)
      return ERR("'is-finite' needs a floating-point operand, not %s", et_name(et));
    out = IR_PRED;
    break;
  case IR_OP_REAL:
  case IR_OP_IMAG:
    if (!fp && !cx)
      return ERR("'%s' needs a floating-point or complex operand, not %s", ir_opcode_table[op].spelling, et_name(et));
    out = ir_etype_component(et);
    break;
  case IR_OP_ABS:
    if (et == IR_PRED || (!fp && !cx && !integer))
      return ERR("'abs' needs a number, not %s", et_name(et));
    out = ir_etype_component(et);
    break;
  case IR_OP_NEGATE:
  case IR_OP_SIGN:
    if (et == IR_PRED)
      return ERR("'%s' does not take pred", ir_opcode_table[op].spelling);
    break;
  case IR_OP_CEIL:
  case IR_OP_FLOOR:
  case IR_OP_ROUND_AFZ:
  case IR_OP_ROUND_EVEN:
    if (!fp)
      return ERR("'%s' needs a floating-point operand, not %s", ir_opcode_table[op].spelling, et_name(et));
    break;
  default:
    if (!fp && !cx)
      return ERR("'%s' needs a floating-point or complex operand, not %s", ir_opcode_table[op].spelling, et_name(et));
    break;
  }
  return array(x, out, s->rank, s->dims);
}

static ir_shape *broadcast_pair(shape_ctx *x, ir_instr *in) {
  char what[300];
  snprintf(what, sizeof what, "%%%s", in->name.p);
  return shape_broadcast_binary(x->m, OP(0), OP(1), &in->attrs.bc, x->opts, what, in->loc, x->diags);
}

static ir_shape *infer_binary(shape_ctx *x, ir_instr *in) {
  if (!need_array(x, in, 0) || !need_array(x, in, 1))
    return NULL;
  ir_etype a = OP(0)->et, b = OP(1)->et;
  ir_opcode op = in->op;
  if (a != b)
    return ERR("operands of '%s' must have the same element type, but they are %s and %s",
               ir_opcode_table[op].spelling, et_name(a), et_name(b));
  bool fp = ir_etype_is_float(a), cx = ir_etype_is_complex(a), integer = ir_etype_is_int(a);
  if (is_bitwise_op(op) && !integer && a != IR_PRED)
    return ERR("'%s' needs integer or pred operands, not %s", ir_opcode_table[op].spelling, et_name(a));
  if ((op == IR_OP_SHIFT_LEFT || op == IR_OP_SHIFT_RIGHT_ARITHMETIC || op == IR_OP_SHIFT_RIGHT_LOGICAL ||
       op == IR_OP_MULHI) && !integer)
    return ERR("'%s' needs integer operands, not %s", ir_opcode_table[op].spelling, et_name(a));
  if (op == IR_OP_ATAN2 && !fp && !cx)
    return ERR("'atan2' needs floating-point operands, not %s", et_name(a));
  if (op == IR_OP_COMPLEX && a != IR_F32 && a != IR_F64)
    return ERR("'complex' needs f32 or f64 operands, not %s", et_name(a));
  if ((op == IR_OP_ADD || op == IR_OP_SUBTRACT || op == IR_OP_MULTIPLY || op == IR_OP_DIVIDE ||
       op == IR_OP_REMAINDER || op == IR_OP_POWER) && a == IR_PRED && op != IR_OP_ADD && op != IR_OP_MULTIPLY)
    return ERR("'%s' does not take pred operands", ir_opcode_table[op].spelling);
  ir_shape *r = broadcast_pair(x, in);
  if (r && op == IR_OP_COMPLEX)
    r->et = a == IR_F32 ? IR_C64 : IR_C128;
  return r;
}

static ir_shape *infer_compare(shape_ctx *x, ir_instr *in) {
  if (!need_array(x, in, 0) || !need_array(x, in, 1))
    return NULL;
  ir_etype a = OP(0)->et, b = OP(1)->et;
  if (a != b)
    return ERR("compare operands must have the same element type, but they are %s and %s", et_name(a), et_name(b));
  if (ir_etype_is_complex(a) && in->attrs.u.compare.dir != IR_CMP_EQ && in->attrs.u.compare.dir != IR_CMP_NE)
    return ERR("complex numbers can only be compared with EQ or NE");
  if (in->attrs.u.compare.has_type) {
    ir_cmp_type t = in->attrs.u.compare.type;
    bool ok = t == IR_CMPT_DEFAULT ||
              ((t == IR_CMPT_FLOAT || t == IR_CMPT_TOTALORDER) && (ir_etype_is_float(a) || ir_etype_is_complex(a))) ||
              (t == IR_CMPT_SIGNED && (ir_etype_is_signed(a) || a == IR_PRED)) ||
              (t == IR_CMPT_UNSIGNED && (ir_etype_table[a].cls == IR_ETC_UNSIGNED || a == IR_PRED));
    if (!ok)
      return ERR("comparison type does not fit element type %s", et_name(a));
  }
  ir_shape *r = broadcast_pair(x, in);
  if (r)
    r->et = IR_PRED;
  return r;
}

static ir_shape *infer_select(shape_ctx *x, ir_instr *in) {
  for (int i = 0; i < 3; i++)
    if (!need_array(x, in, i))
      return NULL;
  const ir_shape *p = OP(0), *t = OP(1), *f = OP(2);
  if (p->et != IR_PRED)
    return ERR("select's predicate must be pred, not %s", et_name(p->et));
  if (t->et != f->et || !ir_shape_same_dims(t, f)) {
    char a[256], b[256];
    fmt(t, a, sizeof a);
    fmt(f, b, sizeof b);
    return ERR("select's branches must have the same shape, but they are %s and %s", a, b);
  }
  if (p->rank != 0 && !ir_shape_same_dims(p, t)) {
    char a[256], b[256];
    fmt(p, a, sizeof a);
    fmt(t, b, sizeof b);
    return ERR("select's predicate %s must be a scalar or have the shape of the branches %s", a, b);
  }
  return array(x, t->et, t->rank, t->dims);
}

static ir_shape *infer_clamp(shape_ctx *x, ir_instr *in) {
  for (int i = 0; i < 3; i++)
    if (!need_array(x, in, i))
      return NULL;
  const ir_shape *lo = OP(0), *v = OP(1), *hi = OP(2);
  if (lo->et != v->et || hi->et != v->et)
    return ERR("clamp operands must have one element type");
  if ((lo->rank && !ir_shape_same_dims(lo, v)) || (hi->rank && !ir_shape_same_dims(hi, v)))
    return ERR("clamp's min and max must be scalars or have the operand's shape");
  return array(x, v->et, v->rank, v->dims);
}

static ir_shape *infer_convert(shape_ctx *x, ir_instr *in) {
  if (!need_array(x, in, 0) || !in->shape)
    return NULL;
  if (!ir_shape_same_dims(OP(0), in->shape))
    return ERR("convert cannot change dimensions");
  return NULL;
}

static ir_shape *infer_bitcast_convert(shape_ctx *x, ir_instr *in) {
  if (!need_array(x, in, 0) || !in->shape)
    return NULL;
  const ir_shape *s = OP(0), *r = in->shape;
  int a = ir_etype_table[s->et].bits, b = ir_etype_table[r->et].bits;
  if (a == b) {
    if (!ir_shape_same_dims(s, r))
      return ERR("bitcast-convert between equal widths keeps the dimensions");
  } else if (a > b) {
    if (r->rank != s->rank + 1 || r->dims[r->rank - 1] != a / b)
      return ERR("bitcast-convert from %s to %s adds a last dimension of size %d", et_name(s->et), et_name(r->et), a / b);
  } else if (s->rank != r->rank + 1 || s->dims[s->rank - 1] != b / a) {
    return ERR("bitcast-convert from %s to %s consumes a last dimension of size %d", et_name(s->et), et_name(r->et), b / a);
  }
  return NULL;
}

static ir_shape *infer_reduce_precision(shape_ctx *x, ir_instr *in) {
  if (!need_array(x, in, 0))
    return NULL;
  if (!ir_etype_is_float(OP(0)->et))
    return ERR("reduce-precision needs a floating-point operand, not %s", et_name(OP(0)->et));
  if (in->attrs.u.reduce_precision.exponent_bits < 1 || in->attrs.u.reduce_precision.mantissa_bits < 0)
    return ERR("reduce-precision needs exponent_bits >= 1 and mantissa_bits >= 0");
  return ir_shape_clone(x->m, OP(0));
}

/* ---- data movement ---------------------------------------------------------------------------- */

static ir_shape *infer_broadcast(shape_ctx *x, ir_instr *in) {
  if (!need_array(x, in, 0))
    return NULL;
  const ir_shape *s = OP(0);
  if (in->attrs.bc.auto_broadcast == IR_AB_BIDIRECTIONAL) {
    char what[300];
    snprintf(what, sizeof what, "%%%s", in->name.p);
    return shape_broadcast_bidirectional(x->m, s, &in->attrs.bc.target_shape, what, in->loc, x->diags);
  }
  if (!in->shape)
    return NULL;
  const ir_i64_list *d = &in->attrs.dimensions;
  if (d->n != s->rank)
    return ERR("broadcast dimensions={...} has %d entries but the operand has rank %d", d->n, s->rank);
  for (int i = 0; i < d->n; i++) {
    int64_t k = d->v[i];
    if (k < 0 || k >= in->shape->rank)
      return ERR("broadcast dimension %lld is out of range for the result rank %d", (long long)k, in->shape->rank);
    if (i && k <= d->v[i - 1])
      return ERR("broadcast dimensions must be strictly increasing");
    if (s->dims[i] != in->shape->dims[k] && s->dims[i] != 1)
      return ERR("operand dimension %d (size %lld) does not match result dimension %lld (size %lld)", i,
                 (long long)s->dims[i], (long long)k, (long long)in->shape->dims[k]);
  }
  if (s->et != in->shape->et)
    return ERR("broadcast cannot change the element type");
  return NULL;
}

static ir_shape *infer_reshape(shape_ctx *x, ir_instr *in) {
  if (!need_array(x, in, 0) || !in->shape)
    return NULL;
  int64_t a, b;
  ir_shape_num_elements(OP(0), &a);
  ir_shape_num_elements(in->shape, &b);
  if (a != b)
    return ERR("reshape cannot change the number of elements (%lld to %lld)", (long long)a, (long long)b);
  if (OP(0)->et != in->shape->et)
    return ERR("reshape cannot change the element type");
  return NULL;
}

static ir_shape *infer_transpose(shape_ctx *x, ir_instr *in) {
  if (!need_array(x, in, 0))
    return NULL;
  const ir_shape *s = OP(0);
  const ir_i64_list *p = &in->attrs.dimensions;
  uint64_t seen = 0;
  int64_t dims[64];
  if (p->n != s->rank)
    return ERR("transpose dimensions={...} must be a permutation of the %d operand dimensions", s->rank);
  for (int i = 0; i < p->n; i++) {
    if (p->v[i] < 0 || p->v[i] >= s->rank || (seen >> p->v[i] & 1))
      return ERR("transpose dimensions={...} is not a permutation of 0..%d", s->rank - 1);
    seen |= 1ull << p->v[i];
    dims[i] = s->dims[p->v[i]];
  }
  return array(x, s->et, s->rank, dims);
}

static ir_shape *infer_slice(shape_ctx *x, ir_instr *in) {
  if (!need_array(x, in, 0))
    return NULL;
  const ir_shape *s = OP(0);
  if (in->attrs.u.slice.n != s->rank)
    return ERR("slice has %d ranges but the operand has rank %d", in->attrs.u.slice.n, s->rank);
  int64_t dims[64];
  for (int i = 0; i < s->rank; i++) {
    const ir_slice_dim *d = &in->attrs.u.slice.dims[i];
    if (d->start < 0 || d->start > d->limit || d->limit > s->dims[i] || d->stride < 1)
      return ERR("slice [%lld:%lld:%lld] is out of bounds for dimension %d of size %lld", (long long)d->start,
                 (long long)d->limit, (long long)d->stride, i, (long long)s->dims[i]);
    dims[i] = (d->limit - d->start + d->stride - 1) / d->stride;
  }
  return array(x, s->et, s->rank, dims);
}

static bool scalar_int_indices(shape_ctx *x, ir_instr *in, int first, int rank) {
  int n = in->n_operands - first;
  if (n == 1 && OP(first)->rank == 1 && rank != 1) {
    if (OP(first)->dims[0] != rank)
      return shape_error(x, in, "start indices need %d entries", rank), false;
    return true;
  }
  if (n != rank)
    return shape_error(x, in, "needs %d start indices (one per dimension) but has %d", rank, n), false;
  for (int i = first; i < in->n_operands; i++)
    if (OP(i)->rank != 0 || !ir_etype_is_int(OP(i)->et) || OP(i)->et != OP(first)->et)
      return shape_error(x, in, "start index operand %d must be an integer scalar of one type", i), false;
  return true;
}

static ir_shape *infer_dynamic_slice(shape_ctx *x, ir_instr *in) {
  if (in->n_operands < 1 || !need_array(x, in, 0))
    return NULL;
  const ir_shape *s = OP(0);
  const ir_i64_list *sz = &in->attrs.u.dynamic_slice_sizes;
  if (!scalar_int_indices(x, in, 1, s->rank))
    return NULL;
  if (sz->n != s->rank)
    return ERR("dynamic_slice_sizes has %d entries but the operand has rank %d", sz->n, s->rank);
  for (int i = 0; i < s->rank; i++)
    if (sz->v[i] < 0 || sz->v[i] > s->dims[i])
      return ERR("slice size %lld is larger than dimension %d (size %lld)", (long long)sz->v[i], i,
                 (long long)s->dims[i]);
  return array(x, s->et, s->rank, sz->v);
}

static ir_shape *infer_dynamic_update_slice(shape_ctx *x, ir_instr *in) {
  if (in->n_operands < 2 || !need_array(x, in, 0) || !need_array(x, in, 1))
    return NULL;
  const ir_shape *s = OP(0), *u = OP(1);
  if (u->rank != s->rank || u->et != s->et)
    return ERR("the update must have the operand's rank and element type");
  for (int i = 0; i < s->rank; i++)
    if (u->dims[i] > s->dims[i])
      return ERR("update dimension %d (size %lld) is larger than the operand's (%lld)", i,
                 (long long)u->dims[i], (long long)s->dims[i]);
  if (!scalar_int_indices(x, in, 2, s->rank))
    return NULL;
  return ir_shape_clone(x->m, s);
}

static ir_shape *infer_concatenate(shape_ctx *x, ir_instr *in) {
  if (in->n_operands < 1)
    return ERR("concatenate needs at least one operand");
  for (int i = 0; i < in->n_operands; i++)
    if (!need_array(x, in, i))
      return NULL;
  if (in->attrs.dimensions.n != 1)
    return ERR("concatenate needs exactly one dimension");
  const ir_shape *s0 = OP(0);
  int64_t d = in->attrs.dimensions.v[0];
  if (d < 0 || d >= s0->rank)
    return ERR("concatenate dimension %lld is out of range for rank %d", (long long)d, s0->rank);
  int64_t dims[64];
  memcpy(dims, s0->dims, (size_t)s0->rank * sizeof(int64_t));
  for (int i = 1; i < in->n_operands; i++) {
    const ir_shape *s = OP(i);
    if (s->rank != s0->rank || s->et != s0->et)
      return ERR("concatenate operand %d must have the rank and element type of operand 0", i);
    for (int k = 0; k < s->rank; k++)
      if (k != d && s->dims[k] != s0->dims[k])
        return ERR("concatenate operand %d has size %lld in dimension %d but operand 0 has %lld", i,
                   (long long)s->dims[k], k, (long long)s0->dims[k]);
    dims[d] += s->dims[d];
  }
  return array(x, s0->et, s0->rank, dims);
}

static ir_shape *infer_pad(shape_ctx *x, ir_instr *in) {
  if (!need_array(x, in, 0) || !need_array(x, in, 1))
    return NULL;
  const ir_shape *s = OP(0), *v = OP(1);
  if (v->rank != 0 || v->et != s->et)
    return ERR("the padding value must be a scalar of the operand's element type");
  if (in->attrs.u.padding.n != s->rank)
    return ERR("padding has %d dimensions but the operand has rank %d", in->attrs.u.padding.n, s->rank);
  int64_t dims[64];
  for (int i = 0; i < s->rank; i++) {
    const ir_pad_dim *p = &in->attrs.u.padding.dims[i];
    if (p->interior < 0)
      return ERR("interior padding of dimension %d is negative", i);
    int64_t n = s->dims[i];
    dims[i] = p->lo + p->hi + n + (n > 0 ? (n - 1) * p->interior : 0);
    if (dims[i] < 0)
      return ERR("padding makes dimension %d negative", i);
  }
  return array(x, s->et, s->rank, dims);
}

static ir_shape *infer_reverse(shape_ctx *x, ir_instr *in) {
  if (!need_array(x, in, 0))
    return NULL;
  const ir_shape *s = OP(0);
  uint64_t seen = 0;
  for (int i = 0; i < in->attrs.dimensions.n; i++) {
    int64_t d = in->attrs.dimensions.v[i];
    if (d < 0 || d >= s->rank || (seen >> d & 1))
      return ERR("reverse dimension %lld is out of range or repeated", (long long)d);
    seen |= 1ull << d;
  }
  return ir_shape_clone(x->m, s);
}

static ir_shape *infer_same_as_operand(shape_ctx *x, ir_instr *in) {
  if (in->n_operands < 1)
    return ERR("needs an operand");
  return ir_shape_clone(x->m, OP(0));
}

static ir_shape *infer_bitcast(shape_ctx *x, ir_instr *in) {
  (void)x;
  (void)in;
  return NULL;
}

static ir_shape *infer_tuple(shape_ctx *x, ir_instr *in) {
  ir_shape *elems[1024];
  if (in->n_operands > 1024)
    return NULL;
  for (int i = 0; i < in->n_operands; i++)
    elems[i] = OP(i);
  return ir_shape_tuple(x->m, elems, in->n_operands);
}

static ir_shape *infer_gte(shape_ctx *x, ir_instr *in) {
  const ir_shape *s = OP(0);
  if (s->et != IR_TUPLE)
    return ERR("get-tuple-element needs a tuple operand");
  int64_t k = in->attrs.u.tuple_index;
  if (k < 0 || k >= s->n_elems)
    return ERR("tuple index %lld is out of range for a tuple of %d elements", (long long)k, s->n_elems);
  return ir_shape_clone(x->m, s->elems[k]);
}

/* ---- computations ------------------------------------------------------------------------------- */

static const ir_shape *root_shape(const ir_computation *c) { return c->root->shape; }

static bool is_scalar_of(const ir_shape *s, ir_etype et) {
  return s && s->et == et && s->rank == 0;
}

/* A reducer for N values of types ets: 2N scalar parameters, returns a scalar (N == 1) or a
 * tuple of N scalars. */
static bool check_reducer(shape_ctx *x, ir_instr *in, const ir_computation *c, const ir_etype *ets, int n) {
  if (c->n_params != 2 * n)
    return shape_error(x, in, "reducer %%%s must take %d parameters but takes %d", c->name.p, 2 * n, c->n_params), false;
  for (int i = 0; i < 2 * n; i++)
    if (!is_scalar_of(c->params[i]->shape, ets[i % n]))
      return shape_error(x, in, "reducer %%%s parameter %d must be %s[]", c->name.p, i, et_name(ets[i % n])), false;
  const ir_shape *r = root_shape(c);
  if (n == 1 ? !is_scalar_of(r, ets[0]) : (r->et != IR_TUPLE || r->n_elems != n))
    return shape_error(x, in, "reducer %%%s must return %s", c->name.p, n == 1 ? "a scalar of the reduced type" : "a tuple of scalars"), false;
  return true;
}

static ir_shape *infer_reduce(shape_ctx *x, ir_instr *in) {
  int n = in->n_operands / 2;
  if (in->n_operands % 2 || n == 0)
    return ERR("reduce needs N inputs followed by N init values");
  if (in->n_called != 1)
    return ERR("reduce needs to_apply");
  ir_etype ets[64];
  for (int i = 0; i < 2 * n; i++)
    if (!need_array(x, in, i))
      return NULL;
  for (int i = 0; i < n && i < 64; i++) {
    if (!ir_shape_same_dims(OP(i), OP(0)))
      return ERR("reduce inputs must all have the same dimensions");
    if (!is_scalar_of(OP(n + i), OP(i)->et))
      return ERR("init value %d must be a %s scalar", i, et_name(OP(i)->et));
    ets[i] = OP(i)->et;
  }
  if (!check_reducer(x, in, in->called[0], ets, n))
    return NULL;
  const ir_shape *s = OP(0);
  int64_t dims[64];
  int r = 0;
  uint64_t seen = 0;
  for (int i = 0; i < in->attrs.dimensions.n; i++) {
    int64_t d = in->attrs.dimensions.v[i];
    if (d < 0 || d >= s->rank || (seen >> d & 1))
      return ERR("reduce dimension %lld is out of range or repeated", (long long)d);
    seen |= 1ull << d;
  }
  for (int i = 0; i < s->rank; i++)
    if (!(seen >> i & 1))
      dims[r++] = s->dims[i];
  if (n == 1)
    return array(x, ets[0], r, dims);
  ir_shape *elems[64];
  for (int i = 0; i < n; i++)
    elems[i] = array(x, ets[i], r, dims);
  return ir_shape_tuple(x->m, elems, n);
}

static ir_shape *infer_map(shape_ctx *x, ir_instr *in) {
  if (in->n_called != 1 || in->n_operands < 1)
    return ERR("map needs operands and to_apply");
  const ir_computation *c = in->called[0];
  if (c->n_params != in->n_operands)
    return ERR("map computation %%%s takes %d parameter%s but map has %d operand%s", c->name.p, c->n_params,
               c->n_params == 1 ? "" : "s", in->n_operands, in->n_operands == 1 ? "" : "s");
  for (int i = 0; i < in->n_operands; i++) {
    if (!need_array(x, in, i))
      return NULL;
    if (!ir_shape_same_dims(OP(i), OP(0)))
      return ERR("map operands must have the same dimensions");
    if (!is_scalar_of(c->params[i]->shape, OP(i)->et))
      return ERR("map computation parameter %d must be %s[]", i, et_name(OP(i)->et));
  }
  if (root_shape(c)->rank != 0 || !ir_etype_is_array(root_shape(c)->et))
    return ERR("map computation must return a scalar");
  return array(x, root_shape(c)->et, OP(0)->rank, OP(0)->dims);
}

static ir_shape *infer_sort(shape_ctx *x, ir_instr *in) {
  if (in->n_operands < 1 || in->n_called != 1)
    return ERR("sort needs operands and a comparator");
  const ir_computation *c = in->called[0];
  if (c->n_params != 2 * in->n_operands)
    return ERR("sort comparator %%%s must take %d parameters", c->name.p, 2 * in->n_operands);
  for (int i = 0; i < in->n_operands; i++) {
    if (!need_array(x, in, i))
      return NULL;
    if (!ir_shape_same_dims(OP(i), OP(0)))
      return ERR("sort operands must have the same dimensions");
    if (!is_scalar_of(c->params[2 * i]->shape, OP(i)->et) || !is_scalar_of(c->params[2 * i + 1]->shape, OP(i)->et))
      return ERR("sort comparator parameters %d and %d must be %s[]", 2 * i, 2 * i + 1, et_name(OP(i)->et));
  }
  if (!is_scalar_of(root_shape(c), IR_PRED))
    return ERR("sort comparator %%%s must return pred[]", c->name.p);
  if (in->attrs.dimensions.n != 1 || in->attrs.dimensions.v[0] < 0 || in->attrs.dimensions.v[0] >= OP(0)->rank)
    return ERR("sort needs one dimension in range");
  if (in->n_operands == 1)
    return ir_shape_clone(x->m, OP(0));
  return infer_tuple(x, in);
}

static ir_shape *infer_topk(shape_ctx *x, ir_instr *in) {
  if (!need_array(x, in, 0))
    return NULL;
  const ir_shape *s = OP(0);
  if (s->rank < 1)
    return ERR("topk needs an operand of rank >= 1");
  int64_t k = in->attrs.u.topk.k;
  if (k < 0 || k > s->dims[s->rank - 1])
    return ERR("k=%lld is larger than the last dimension (%lld)", (long long)k, (long long)s->dims[s->rank - 1]);
  int64_t dims[64];
  memcpy(dims, s->dims, (size_t)s->rank * sizeof(int64_t));
  dims[s->rank - 1] = k;
  ir_shape *e[2] = {array(x, s->et, s->rank, dims), array(x, IR_S32, s->rank, dims)};
  return ir_shape_tuple(x->m, e, 2);
}

static ir_shape *infer_dot(shape_ctx *x, ir_instr *in) {
  if (!need_array(x, in, 0) || !need_array(x, in, 1))
    return NULL;
  if (in->op != IR_OP_DOT)
    return NULL; /* ragged-dot and scaled-dot: the written shape */
  const ir_shape *l = OP(0), *r = OP(1);
  const ir_dot_dnums *d = &in->attrs.u.dot.dnums;
  if (d->lhs_batch.n != d->rhs_batch.n)
    return ERR("lhs has %d batch dimensions but rhs has %d", d->lhs_batch.n, d->rhs_batch.n);
  if (d->lhs_contracting.n != d->rhs_contracting.n)
    return ERR("lhs has %d contracting dimensions but rhs has %d", d->lhs_contracting.n, d->rhs_contracting.n);
  uint64_t lused = 0, rused = 0;
  const ir_i64_list *lists[4] = {&d->lhs_batch, &d->lhs_contracting, &d->rhs_batch, &d->rhs_contracting};
  for (int k = 0; k < 4; k++) {
    const ir_shape *s = k < 2 ? l : r;
    uint64_t *used = k < 2 ? &lused : &rused;
    for (int i = 0; i < lists[k]->n; i++) {
      int64_t v = lists[k]->v[i];
      if (v < 0 || v >= s->rank || (*used >> v & 1))
        return ERR("%s dimension %lld is out of range or used twice", k < 2 ? "lhs" : "rhs", (long long)v);
      *used |= 1ull << v;
    }
  }
  for (int i = 0; i < d->lhs_batch.n; i++)
    if (l->dims[d->lhs_batch.v[i]] != r->dims[d->rhs_batch.v[i]])
      return ERR("lhs batch dimension %lld has size %lld but rhs batch dimension %lld has size %lld",
                 (long long)d->lhs_batch.v[i], (long long)l->dims[d->lhs_batch.v[i]], (long long)d->rhs_batch.v[i],
                 (long long)r->dims[d->rhs_batch.v[i]]);
  for (int i = 0; i < d->lhs_contracting.n; i++)
    if (l->dims[d->lhs_contracting.v[i]] != r->dims[d->rhs_contracting.v[i]])
      return ERR("lhs contracting dimension %lld has size %lld but rhs contracting dimension %lld has size %lld",
                 (long long)d->lhs_contracting.v[i], (long long)l->dims[d->lhs_contracting.v[i]],
                 (long long)d->rhs_contracting.v[i], (long long)r->dims[d->rhs_contracting.v[i]]);
  int64_t dims[128];
  int n = 0;
  for (int i = 0; i < d->lhs_batch.n; i++)
    dims[n++] = l->dims[d->lhs_batch.v[i]];
  for (int i = 0; i < l->rank; i++)
    if (!(lused >> i & 1))
      dims[n++] = l->dims[i];
  for (int i = 0; i < r->rank; i++)
    if (!(rused >> i & 1))
      dims[n++] = r->dims[i];
  if (n > 64)
    return ERR("dot result rank is too large");
  /* The result element type may differ from the operands' (preferred element type). */
  ir_etype et = in->shape ? in->shape->et : l->et;
  if (!in->shape && l->et != r->et)
    return ERR("dot operands have different element types (%s, %s); write the result shape", et_name(l->et),
               et_name(r->et));
  return array(x, et, n, dims);
}

static bool params_match(shape_ctx *x, ir_instr *in, const ir_computation *c, ir_instr *const *ops, int n,
                         const char *role) {
  if (c->n_params != n)
    return shape_error(x, in, "%s %%%s takes %d parameter%s but gets %d", role, c->name.p, c->n_params,
                       c->n_params == 1 ? "" : "s", n), false;
  for (int i = 0; i < n; i++)
    if (!ir_shape_equal(c->params[i]->shape, ops[i]->shape)) {
      char a[256], b[256];
      fmt(c->params[i]->shape, a, sizeof a);
      fmt(ops[i]->shape, b, sizeof b);
      return shape_error(x, in, "%s %%%s parameter %d is %s but the operand is %s", role, c->name.p, i, a, b), false;
    }
  return true;
}

static ir_shape *infer_while(shape_ctx *x, ir_instr *in) {
  if (in->n_called != 2)
    return ERR("while needs condition and body");
  const ir_computation *cond = in->called[0], *body = in->called[1];
  if (!params_match(x, in, cond, in->operands, 1, "condition") || !params_match(x, in, body, in->operands, 1, "body"))
    return NULL;
  if (!is_scalar_of(root_shape(cond), IR_PRED)) {
    char a[256];
    fmt(root_shape(cond), a, sizeof a);
    return ERR("while condition %%%s must return pred[], not %s", cond->name.p, a);
  }
  if (!ir_shape_equal(root_shape(body), OP(0))) {
    char a[256], b[256];
    fmt(root_shape(body), a, sizeof a);
    fmt(OP(0), b, sizeof b);
    return ERR("while body %%%s returns %s but the loop state is %s", body->name.p, a, b);
  }
  return ir_shape_clone(x->m, OP(0));
}

static ir_shape *infer_conditional(shape_ctx *x, ir_instr *in) {
  if (in->n_operands < 1 || !need_array(x, in, 0))
    return NULL;
  const ir_shape *p = OP(0);
  int nb = in->n_called;
  if (p->rank != 0 || (p->et != IR_PRED && p->et != IR_S32))
    return ERR("conditional's first operand must be pred[] or s32[]");
  if (p->et == IR_PRED && nb != 2)
    return ERR("a pred conditional needs exactly two branches");
  if (nb < 1 || in->n_operands != nb + 1)
    return ERR("conditional has %d branches but %d branch operands", nb, in->n_operands - 1);
  for (int i = 0; i < nb; i++) {
    if (!params_match(x, in, in->called[i], &in->operands[i + 1], 1, "branch"))
      return NULL;
    if (!ir_shape_equal(root_shape(in->called[i]), root_shape(in->called[0]))) {
      char a[256], b[256];
      fmt(root_shape(in->called[i]), a, sizeof a);
      fmt(root_shape(in->called[0]), b, sizeof b);
      return ERR("branch %%%s returns %s but branch %%%s returns %s", in->called[i]->name.p, a,
                 in->called[0]->name.p, b);
    }
  }
  return ir_shape_clone(x->m, root_shape(in->called[0]));
}

static ir_shape *infer_call(shape_ctx *x, ir_instr *in) {
  if (in->n_called != 1)
    return ERR("call needs to_apply");
  if (!params_match(x, in, in->called[0], in->operands, in->n_operands, "computation"))
    return NULL;
  return ir_shape_clone(x->m, root_shape(in->called[0]));
}

static ir_shape *infer_dimension_size(shape_ctx *x, ir_instr *in) {
  if (!need_array(x, in, 0))
    return NULL;
  if (in->attrs.dimensions.n != 1 || in->attrs.dimensions.v[0] < 0 || in->attrs.dimensions.v[0] >= OP(0)->rank)
    return ERR("dimension is out of range");
  if (in->op == IR_OP_GET_DIMENSION_SIZE)
    return ir_shape_scalar(x->m, IR_S32);
  return ir_shape_clone(x->m, OP(0));
}

static const infer_fn infer_table[IR_FAM_COUNT] = {
    [IR_FAM_PARAMETER] = infer_parameter,
    [IR_FAM_CONSTANT] = infer_constant,
    [IR_FAM_IOTA] = infer_iota,
    [IR_FAM_REPLICA_ID] = infer_replica_id,
    [IR_FAM_TOKEN] = infer_token,
    [IR_FAM_UNARY] = infer_unary,
    [IR_FAM_BINARY] = infer_binary,
    [IR_FAM_COMPARE] = infer_compare,
    [IR_FAM_SELECT] = infer_select,
    [IR_FAM_CLAMP] = infer_clamp,
    [IR_FAM_CONVERT] = infer_convert,
    [IR_FAM_BITCAST_CONVERT] = infer_bitcast_convert,
    [IR_FAM_REDUCE_PRECISION] = infer_reduce_precision,
    [IR_FAM_BROADCAST] = infer_broadcast,
    [IR_FAM_RESHAPE] = infer_reshape,
    [IR_FAM_TRANSPOSE] = infer_transpose,
    [IR_FAM_SLICE] = infer_slice,
    [IR_FAM_DYNAMIC_SLICE] = infer_dynamic_slice,
    [IR_FAM_DYNAMIC_UPDATE_SLICE] = infer_dynamic_update_slice,
    [IR_FAM_CONCATENATE] = infer_concatenate,
    [IR_FAM_PAD] = infer_pad,
    [IR_FAM_REVERSE] = infer_reverse,
    [IR_FAM_COPY] = infer_same_as_operand,
    [IR_FAM_BITCAST] = infer_bitcast,
    [IR_FAM_TUPLE] = infer_tuple,
    [IR_FAM_GET_TUPLE_ELEMENT] = infer_gte,
    [IR_FAM_OPT_BARRIER] = infer_same_as_operand,
    [IR_FAM_DOMAIN] = infer_same_as_operand,
    [IR_FAM_REDUCE] = infer_reduce,
    [IR_FAM_MAP] = infer_map,
    [IR_FAM_SORT] = infer_sort,
    [IR_FAM_TOPK] = infer_topk,
    [IR_FAM_DOT] = infer_dot,
    [IR_FAM_WHILE] = infer_while,
    [IR_FAM_CONDITIONAL] = infer_conditional,
    [IR_FAM_CALL] = infer_call,
    [IR_FAM_DIMENSION_SIZE] = infer_dimension_size,
    [IR_FAM_COLLECTIVE] = shape_infer_collective,
    [IR_FAM_GATHER] = shape_infer_gather,
    [IR_FAM_SCATTER] = shape_infer_scatter,
    [IR_FAM_REDUCE_WINDOW] = shape_infer_reduce_window,
    [IR_FAM_SELECT_AND_SCATTER] = shape_infer_select_and_scatter,
    [IR_FAM_CONVOLUTION] = shape_infer_convolution,
    [IR_FAM_FFT] = shape_infer_fft,
    [IR_FAM_CHOLESKY] = shape_infer_cholesky,
    [IR_FAM_TRIANGULAR_SOLVE] = shape_infer_triangular_solve,
    [IR_FAM_BATCH_NORM] = shape_infer_batch_norm,
    [IR_FAM_INFEED] = shape_infer_infeed,
    [IR_FAM_OUTFEED] = shape_infer_outfeed,
    [IR_FAM_SEND] = shape_infer_send_recv,
    [IR_FAM_RECV] = shape_infer_send_recv,
    [IR_FAM_RNG] = shape_infer_rng,
    [IR_FAM_RNG_BIT_GENERATOR] = shape_infer_rng_bit_generator,
    [IR_FAM_FUSION] = shape_infer_fusion,
};

ir_shape *shape_infer_instr(shape_ctx *x, ir_instr *in) {
  infer_fn f = infer_table[ir_opcode_table[in->op].family];
  return f ? f(x, in) : infer_given(x, in);
}
