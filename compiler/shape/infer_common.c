/* infer_common.c — helpers every inference rule shares: diagnostics that start with
 * `%name: `, shape printing for messages, operand-count and operand-kind checks, dimension
 * list validation, the reduction-computation signature rule (XLA's VerifyReducerShape) and
 * the windowed output size.  No rule of its own.  Tests: shape_test.c, testdata/verify/err.
 */
#include <stdio.h>
#include <string.h>

#include "shape/shape_internal.h"

static void vdiag(shape_ctx *x, const ir_instr *in, const char *fmt, va_list ap) {
  char msg[1024];
  vsnprintf(msg, sizeof msg, fmt, ap);
  ir_diag_error(x->diags, in->loc, "%%%s: %s", in->name.p ? in->name.p : "?", msg);
}

ir_shape *shape_fail(shape_ctx *x, const ir_instr *in, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vdiag(x, in, fmt, ap);
  va_end(ap);
  return NULL;
}

bool shape_error(shape_ctx *x, const ir_instr *in, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vdiag(x, in, fmt, ap);
  va_end(ap);
  return false;
}

const char *shape_str(const ir_shape *s, char *buf, size_t cap) {
  if (s)
    ir_shape_format(s, false, buf, cap);
  else
    snprintf(buf, cap, "(none)");
  return buf;
}

const char *shape_et_name(ir_etype t) { return ir_etype_table[t].spelling; }

const char *shape_kind_str(const ir_shape *s, char *buf, size_t cap) {
  if (!s)
    return "missing";
  if (s->et == IR_TUPLE) {
    char t[200];
    snprintf(buf, cap, "a tuple %s", shape_str(s, t, sizeof t));
    return buf;
  }
  return shape_str(s, buf, cap);
}

bool shape_need_array(shape_ctx *x, ir_instr *in, int k) {
  const ir_shape *s = shape_operand(in, k);
  if (shape_is_array(s))
    return true;
  char b[256];
  return shape_error(x, in, "operand %d must be an array, not %s", k, shape_kind_str(s, b, sizeof b));
}

bool shape_need_operands(shape_ctx *x, ir_instr *in, int n) {
  if (in->n_operands == n)
    return true;
  return shape_error(x, in, "'%s' takes %d operand%s but has %d", ir_opcode_table[in->op].spelling, n,
                     n == 1 ? "" : "s", in->n_operands);
}

bool shape_need_min_operands(shape_ctx *x, ir_instr *in, int n) {
  if (in->n_operands >= n && in->n_operands <= SHAPE_MAX_OPERANDS)
    return true;
  if (in->n_operands > SHAPE_MAX_OPERANDS)
    return shape_error(x, in, "'%s' has %d operands; at most %d are supported", ir_opcode_table[in->op].spelling,
                       in->n_operands, SHAPE_MAX_OPERANDS);
  return shape_error(x, in, "'%s' takes at least %d operand%s but has %d", ir_opcode_table[in->op].spelling, n,
                     n == 1 ? "" : "s", in->n_operands);
}

bool shape_need_called(shape_ctx *x, ir_instr *in, int n, const char *what) {
  if (in->n_called == n)
    return true;
  return shape_error(x, in, "'%s' needs %s (%d called computation%s) but has %d", ir_opcode_table[in->op].spelling,
                     what, n, n == 1 ? "" : "s", in->n_called);
}

ir_shape *shape_array(shape_ctx *x, ir_etype et, int rank, const int64_t *dims) {
  return ir_shape_array(x->m, et, rank, dims);
}

ir_shape *shape_tuple_of(shape_ctx *x, ir_shape *const *elems, int n) { return ir_shape_tuple(x->m, elems, n); }

ir_shape *shape_with_et(shape_ctx *x, const ir_shape *s, ir_etype et) {
  return ir_shape_array(x->m, et, s->rank, s->dims);
}

ir_shape *shape_operands_collated(shape_ctx *x, ir_instr *in, int first, int n) {
  if (n == 1)
    return ir_shape_clone(x->m, in->operands[first]->shape);
  ir_shape *elems[SHAPE_MAX_OPERANDS];
  if (n < 0 || n > SHAPE_MAX_OPERANDS)
    return shape_fail(x, in, "too many operands (%d)", n);
  for (int i = 0; i < n; i++)
    elems[i] = in->operands[first + i]->shape;
  return shape_tuple_of(x, elems, n);
}

bool shape_compatible(const ir_shape *a, const ir_shape *b) {
  if (!a || !b || a->et != b->et)
    return false;
  if (a->et == IR_TUPLE) {
    if (a->n_elems != b->n_elems)
      return false;
    for (int i = 0; i < a->n_elems; i++)
      if (!shape_compatible(a->elems[i], b->elems[i]))
        return false;
    return true;
  }
  return ir_shape_same_dims(a, b);
}

bool shape_dims_valid(const ir_i64_list *l, int64_t bound, bool sorted, int64_t *out_bad) {
  for (int i = 0; i < l->n; i++) {
    int64_t v = l->v[i];
    bool bad = v < 0 || v >= bound || (sorted && i && v <= l->v[i - 1]);
    for (int k = 0; k < i && !bad; k++)
      bad = l->v[k] == v;
    if (bad) {
      *out_bad = v;
      return false;
    }
  }
  return true;
}

bool shape_list_has(const ir_i64_list *l, int64_t v) {
  for (int i = 0; i < l->n; i++)
    if (l->v[i] == v)
      return true;
  return false;
}

bool shape_elements(const ir_shape *s, int64_t *out_n) { return ir_shape_num_elements(s, out_n); }

/* One scalar of the reducer's signature against the type it must have. */
static bool reducer_scalar(shape_ctx *x, ir_instr *in, const ir_computation *c, const char *role, const char *what,
                           int k, const ir_shape *s, ir_etype want) {
  if (shape_is_scalar_of(s, want))
    return true;
  char b[256];
  return shape_error(x, in, "%s %%%s %s %d must be %s[], not %s", role, c->name.p, what, k, shape_et_name(want),
                     shape_kind_str(s, b, sizeof b));
}

bool shape_check_reducer(shape_ctx *x, ir_instr *in, const ir_computation *c, const ir_etype *ets, int n,
                         const char *role) {
  if (c->n_params != 2 * n)
    return shape_error(x, in, "%s %%%s must take %d parameters but takes %d", role, c->name.p, 2 * n, c->n_params);
  for (int i = 0; i < 2 * n; i++)
    if (!reducer_scalar(x, in, c, role, "parameter", i, c->params[i]->shape, ets[i % n]))
      return false;
  const ir_shape *r = c->root->shape;
  if (n == 1)
    return reducer_scalar(x, in, c, role, "result", 0, r, ets[0]);
  char b[256];
  if (r->et != IR_TUPLE || r->n_elems != n)
    return shape_error(x, in, "%s %%%s must return a tuple of %d scalars, not %s", role, c->name.p, n,
                       shape_str(r, b, sizeof b));
  for (int i = 0; i < n; i++)
    if (!reducer_scalar(x, in, c, role, "result element", i, r->elems[i], ets[i]))
      return false;
  return true;
}

/* Checked a*b + c for window arithmetic on sizes from the text. */
static bool mul_add(int64_t a, int64_t b, int64_t c, int64_t *out) {
  int64_t t;
  return !__builtin_mul_overflow(a, b, &t) && !__builtin_add_overflow(t, c, out);
}

int64_t shape_window_out(int64_t in, const ir_window_dim *w) {
  if (w->size < 1 || w->stride < 1 || w->lhs_dilate < 1 || w->rhs_dilate < 1)
    return -1;
  int64_t dilated = 0, padded, win;
  if (in > 0 && !mul_add(in - 1, w->lhs_dilate, 1, &dilated))
    return -2;
  if (__builtin_add_overflow(dilated, w->pad_lo, &padded) || __builtin_add_overflow(padded, w->pad_hi, &padded))
    return -2;
  if (!mul_add(w->size - 1, w->rhs_dilate, 1, &win))
    return -2;
  return padded < win ? 0 : (padded - win) / w->stride + 1;
}
