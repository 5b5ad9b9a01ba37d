/* infer_reduce.c — shape rules of the families that apply a computation over an array:
 * reduce, reduce-window, select-and-scatter (windows with padding and dilations), map, scan,
 * sort (comparator signature) and topk.  Reducer signatures follow XLA's
 * VerifyReducerShape (infer_common.c).  Tests: testdata/verify/err, shape_test.c.
 */
#include <stdio.h>
#include <string.h>

#include "shape/shape_internal.h"

/* N inputs followed by N scalar init values of the inputs' element types; all inputs of one
 * dimensions.  Writes the types to ets and returns N, or 0 after a diagnostic. */
static int inputs_and_inits(shape_ctx *x, ir_instr *in, ir_etype *ets) {
  int n = in->n_operands / 2;
  if (in->n_operands % 2 || n == 0 || n > SHAPE_MAX_OPERANDS / 2)
    return shape_error(x, in, "'%s' needs N inputs followed by N init values, not %d operands",
                       ir_opcode_table[in->op].spelling, in->n_operands), 0;
  for (int i = 0; i < 2 * n; i++)
    if (!shape_need_array(x, in, i))
      return 0;
  char a[256], b[256];
  for (int i = 0; i < n; i++) {
    const ir_shape *s = shape_operand(in, i), *init = shape_operand(in, n + i);
    if (!ir_shape_same_dims(s, shape_operand(in, 0)))
      return shape_error(x, in, "input %d %s must have the dimensions of input 0 %s", i, shape_str(s, a, sizeof a),
                         shape_str(shape_operand(in, 0), b, sizeof b)), 0;
    if (!shape_is_scalar_of(init, s->et))
      return shape_error(x, in, "init value %d must be a %s scalar, not %s", i, shape_et_name(s->et),
                         shape_str(init, a, sizeof a)), 0;
    ets[i] = s->et;
  }
  return n;
}

/* One array per input with the given dims: the array (n == 1) or a tuple. */
static ir_shape *collate_dims(shape_ctx *x, const ir_etype *ets, int n, int rank, const int64_t *dims) {
  if (n == 1)
    return shape_array(x, ets[0], rank, dims);
  ir_shape *elems[SHAPE_MAX_OPERANDS];
  for (int i = 0; i < n; i++)
    elems[i] = shape_array(x, ets[i], rank, dims);
  return shape_tuple_of(x, elems, n);
}

/* ---- reduce ------------------------------------------------------------------------------- */

/* XLA's verifier with allow_mixed_precision (its tests' default, HloTestBase): a reducer whose
 * scalars differ from the inputs only in floating-point precision (a bf16 reduce of an f32 add)
 * is accepted, and the result keeps the inputs' types.  Not under --strict (XLA's CPU compiler
 * verifies without it).  Sets want[] to the reducer's types when that applies. */
static bool mixed_precision_reducer(shape_ctx *x, const ir_instr *in, const ir_etype *ets, int n, ir_etype *want) {
  const ir_computation *c = in->called[0];
  if (x->opts->strict || c->n_params != 2 * n)
    return false;
  bool differs = false;
  for (int i = 0; i < n; i++) {
    const ir_shape *p = c->params[i]->shape;
    if (p->et == IR_TUPLE || p->rank != 0 || !ir_etype_is_float(p->et) || !ir_etype_is_float(ets[i]))
      return false;
    want[i] = p->et;
    differs |= p->et != ets[i];
  }
  return differs;
}

ir_shape *shape_infer_reduce(shape_ctx *x, ir_instr *in) {
  ir_etype ets[SHAPE_MAX_OPERANDS];
  int n = inputs_and_inits(x, in, ets);
  if (!n || !shape_need_called(x, in, 1, "to_apply"))
    return NULL;
  const ir_shape *s = shape_operand(in, 0);
  int64_t bad;
  if (!shape_dims_valid(&in->attrs.dimensions, s->rank, false, &bad))
    return shape_fail(x, in, "reduce dimension %lld is out of range or repeated", (long long)bad);
  ir_etype mixed[SHAPE_MAX_OPERANDS];
  const ir_etype *want = mixed_precision_reducer(x, in, ets, n, mixed) ? mixed : ets;
  if (!shape_check_reducer(x, in, in->called[0], want, n, "reducer"))
    return NULL;
  int64_t dims[SHAPE_MAX_RANK];
  int r = 0;
  for (int i = 0; i < s->rank && r < SHAPE_MAX_RANK; i++)
    if (!shape_list_has(&in->attrs.dimensions, i))
      dims[r++] = s->dims[i];
  return collate_dims(x, ets, n, r, dims);
}

/* ---- windows ------------------------------------------------------------------------------ */

/* The windowed output dims of `s` under w; false after a diagnostic. */
static bool window_dims(shape_ctx *x, ir_instr *in, const ir_shape *s, const ir_window *w, int64_t *dims) {
  if (w->n != s->rank)
    return shape_error(x, in, "the window has %d dimension%s but the input has rank %d", w->n, w->n == 1 ? "" : "s",
                       s->rank);
  if (s->rank > SHAPE_MAX_RANK)
    return shape_error(x, in, "rank %d is too large", s->rank);
  for (int d = 0; d < s->rank; d++) {
    dims[d] = shape_window_out(s->dims[d], &w->dims[d]);
    if (dims[d] == -1)
      return shape_error(x, in, "window dimension %d has a size, stride or dilation below 1", d);
    if (dims[d] < 0)
      return shape_error(x, in, "window dimension %d overflows", d);
  }
  return true;
}

ir_shape *shape_infer_reduce_window(shape_ctx *x, ir_instr *in) {
  ir_etype ets[SHAPE_MAX_OPERANDS];
  int n = inputs_and_inits(x, in, ets);
  int64_t dims[SHAPE_MAX_RANK];
  const ir_shape *s = shape_operand(in, 0);
  if (!n || !window_dims(x, in, s, &in->attrs.u.reduce_window.window, dims))
    return NULL;
  if (!shape_need_called(x, in, 1, "to_apply") || !shape_check_reducer(x, in, in->called[0], ets, n, "reducer"))
    return NULL;
  return collate_dims(x, ets, n, s->rank, dims);
}

/* select: (T, T) -> pred[]. */
static bool select_computation_ok(shape_ctx *x, ir_instr *in, const ir_computation *c, ir_etype et) {
  char b[256];
  if (c->n_params != 2)
    return shape_error(x, in, "select computation %%%s must take 2 parameters but takes %d", c->name.p, c->n_params);
  for (int i = 0; i < 2; i++)
    if (!shape_is_scalar_of(c->params[i]->shape, et))
      return shape_error(x, in, "select computation %%%s parameter %d must be %s[], not %s", c->name.p, i,
                         shape_et_name(et), shape_kind_str(c->params[i]->shape, b, sizeof b));
  if (!shape_is_scalar_of(c->root->shape, IR_PRED))
    return shape_error(x, in, "select computation %%%s must return pred[], not %s", c->name.p,
                       shape_kind_str(c->root->shape, b, sizeof b));
  return true;
}

ir_shape *shape_infer_select_and_scatter(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 3))
    return NULL;
  for (int i = 0; i < 3; i++)
    if (!shape_need_array(x, in, i))
      return NULL;
  const ir_shape *op = shape_operand(in, 0), *src = shape_operand(in, 1), *init = shape_operand(in, 2);
  char a[256];
  if (src->et != op->et)
    return shape_fail(x, in, "the source's element type %s differs from the operand's %s", shape_et_name(src->et),
                      shape_et_name(op->et));
  if (!shape_is_scalar_of(init, op->et))
    return shape_fail(x, in, "the init value must be a %s scalar, not %s", shape_et_name(op->et),
                      shape_str(init, a, sizeof a));
  int64_t dims[SHAPE_MAX_RANK];
  if (!window_dims(x, in, op, &in->attrs.u.reduce_window.window, dims))
    return NULL;
  for (int d = 0; d < op->rank; d++)
    if (src->rank != op->rank || src->dims[d] != dims[d])
      return shape_fail(x, in, "source dimension %d has size %lld but the window yields %lld", d,
                        (long long)(d < src->rank ? src->dims[d] : -1), (long long)dims[d]);
  if (!shape_need_called(x, in, 2, "select and scatter"))
    return NULL;
  ir_etype et[1] = {op->et};
  if (!select_computation_ok(x, in, in->called[0], op->et) ||
      !shape_check_reducer(x, in, in->called[1], et, 1, "scatter computation"))
    return NULL;
  return ir_shape_clone(x->m, op);
}

/* ---- map ---------------------------------------------------------------------------------- */

ir_shape *shape_infer_map(shape_ctx *x, ir_instr *in) {
  if (!shape_need_min_operands(x, in, 1) || !shape_need_called(x, in, 1, "to_apply"))
    return NULL;
  const ir_computation *c = in->called[0];
  int n = in->n_operands;
  if (c->n_params != n)
    return shape_fail(x, in, "map computation %%%s takes %d parameter%s but map has %d operand%s", c->name.p,
                      c->n_params, c->n_params == 1 ? "" : "s", n, n == 1 ? "" : "s");
  char a[256], b[256];
  for (int i = 0; i < n; i++) {
    if (!shape_need_array(x, in, i))
      return NULL;
    if (!ir_shape_same_dims(shape_operand(in, i), shape_operand(in, 0)))
      return shape_fail(x, in, "map operand %d %s must have the dimensions of operand 0 %s", i,
                        shape_str(shape_operand(in, i), a, sizeof a), shape_str(shape_operand(in, 0), b, sizeof b));
    if (!shape_is_scalar_of(c->params[i]->shape, shape_operand(in, i)->et))
      return shape_fail(x, in, "map computation parameter %d must be %s[], not %s", i,
                        shape_et_name(shape_operand(in, i)->et), shape_kind_str(c->params[i]->shape, a, sizeof a));
  }
  const ir_shape *s = shape_operand(in, 0), *r = c->root->shape;
  if (!shape_is_array(r) || r->rank != 0)
    return shape_fail(x, in, "map computation %%%s must return a scalar, not %s", c->name.p, shape_kind_str(r, a, sizeof a));
  const ir_i64_list *d = &in->attrs.dimensions;
  if (in->attrs.has_dimensions) {
    bool ok = d->n == s->rank;
    for (int i = 0; ok && i < d->n; i++)
      ok = d->v[i] == i;
    if (!ok)
      return shape_fail(x, in, "map dimensions={...} must be 0..%d in order (maps over every dimension)", s->rank - 1);
  }
  return shape_with_et(x, s, r->et);
}

/* ---- scan --------------------------------------------------------------------------------- */

/* s without dimension d (one scanned element), in scratch. */
static ir_shape *drop_dim(shape_ctx *x, const ir_shape *s, int64_t d) {
  int64_t dims[SHAPE_MAX_RANK];
  int r = 0;
  for (int i = 0; i < s->rank && r < SHAPE_MAX_RANK; i++)
    if (i != d)
      dims[r++] = s->dims[i];
  return shape_array(x, s->et, r, dims);
}

/* s with a dimension of size len inserted at d (stacked outputs). */
static ir_shape *insert_dim(shape_ctx *x, const ir_shape *s, int64_t d, int64_t len) {
  int64_t dims[SHAPE_MAX_RANK + 1];
  int r = 0;
  for (int i = 0; i <= s->rank && r <= SHAPE_MAX_RANK; i++) {
    if (i == d)
      dims[r++] = len;
    if (i < s->rank)
      dims[r++] = s->dims[i];
  }
  return shape_array(x, s->et, r, dims);
}

/* The body's results: the root's elements (or the root itself when not a tuple). */
static int body_results(const ir_shape *r, const ir_shape **out, int cap) {
  if (r->et != IR_TUPLE) {
    out[0] = r;
    return 1;
  }
  int n = r->n_elems < cap ? r->n_elems : cap;
  for (int i = 0; i < n; i++)
    out[i] = r->elems[i];
  return n;
}

/* scan(inputs..., inits...), num_carries=C, dimensions={d}, as XLA reads it (HloScanInstruction):
 * the last C operands are the initial carries; the body takes one element of each input along
 * d followed by the carries and returns (outputs..., carries...); the result is (outputs
 * stacked along d..., final carries...), a tuple exactly when the body returns one. */
static bool scan_check_params(shape_ctx *x, ir_instr *in, int64_t d, int64_t len) {
  const ir_computation *c = in->called[0];
  int nc = (int)in->attrs.u.scan.num_carries, ni = in->n_operands - nc;
  char a[256], b[256];
  if (c->n_params != in->n_operands)
    return shape_error(x, in, "scan computation %%%s takes %d parameters but scan has %d operands", c->name.p,
                       c->n_params, in->n_operands);
  for (int i = 0; i < in->n_operands; i++) {
    const ir_shape *s = shape_operand(in, i);
    bool carry = i >= ni;
    if (!carry && (!shape_need_array(x, in, i) || s->rank <= d || s->dims[d] != len))
      return shape_error(x, in, "scanned input %d must have dimension %lld of size %lld", i, (long long)d,
                         (long long)len);
    ir_shape *want = carry ? (ir_shape *)s : drop_dim(x, s, d);
    if (!shape_compatible(c->params[i]->shape, want))
      return shape_error(x, in, "scan computation %%%s parameter %d is %s but must be %s", c->name.p, i,
                         shape_str(c->params[i]->shape, a, sizeof a), shape_str(want, b, sizeof b));
  }
  return true;
}

ir_shape *shape_infer_scan(shape_ctx *x, ir_instr *in) {
  int64_t nc = in->attrs.u.scan.num_carries;
  if (!shape_need_min_operands(x, in, 1) || !shape_need_called(x, in, 1, "to_apply"))
    return NULL;
  if (nc < 0 || nc >= in->n_operands)
    return shape_fail(x, in, "num_carries=%lld must leave at least one of the %d operands to scan", (long long)nc,
                      in->n_operands);
  const ir_i64_list *dl = &in->attrs.dimensions;
  if (!shape_need_array(x, in, 0))
    return NULL;
  const ir_shape *x0 = shape_operand(in, 0);
  if (dl->n != 1 || dl->v[0] < 0 || dl->v[0] >= x0->rank)
    return shape_fail(x, in, "scan needs one dimension in [0, %d)", x0->rank);
  int64_t d = dl->v[0], len = x0->dims[d];
  if (!scan_check_params(x, in, d, len))
    return NULL;
  const ir_computation *c = in->called[0];
  int ni = in->n_operands - (int)nc;
  const ir_shape *res[SHAPE_MAX_OPERANDS];
  int nr = body_results(c->root->shape, res, SHAPE_MAX_OPERANDS), no = nr - (int)nc;
  char a[256], b[256];
  if (no < 0)
    return shape_fail(x, in, "scan computation %%%s must return its outputs and the %lld carries", c->name.p,
                      (long long)nc);
  ir_shape *out[SHAPE_MAX_OPERANDS];
  for (int i = 0; i < nr; i++) {
    bool carry = i >= no;
    const ir_shape *init = carry ? shape_operand(in, ni + i - no) : NULL;
    if (carry && !shape_compatible(res[i], init))
      return shape_fail(x, in, "scan computation %%%s result %d is %s but carry %d is %s", c->name.p, i,
                        shape_str(res[i], a, sizeof a), i - no, shape_str(init, b, sizeof b));
    if (!carry && !shape_is_array(res[i]))
      return shape_fail(x, in, "scan output %d must be an array, not %s", i, shape_kind_str(res[i], a, sizeof a));
    out[i] = carry ? ir_shape_clone(x->m, res[i]) : insert_dim(x, res[i], d, len);
  }
  return c->root->shape->et == IR_TUPLE ? shape_tuple_of(x, out, nr) : out[0];
}

/* ---- sort and topk ------------------------------------------------------------------------ */

ir_shape *shape_infer_sort(shape_ctx *x, ir_instr *in) {
  if (!shape_need_min_operands(x, in, 1) || !shape_need_called(x, in, 1, "a comparator (to_apply)"))
    return NULL;
  const ir_computation *c = in->called[0];
  int n = in->n_operands;
  if (c->n_params != 2 * n)
    return shape_fail(x, in, "sort comparator %%%s must take %d parameters but takes %d", c->name.p, 2 * n,
                      c->n_params);
  char a[256], b[256];
  for (int i = 0; i < n; i++) {
    if (!shape_need_array(x, in, i))
      return NULL;
    const ir_shape *s = shape_operand(in, i);
    if (!ir_shape_same_dims(s, shape_operand(in, 0)))
      return shape_fail(x, in, "sort operand %d %s must have the dimensions of operand 0 %s", i,
                        shape_str(s, a, sizeof a), shape_str(shape_operand(in, 0), b, sizeof b));
    for (int k = 2 * i; k <= 2 * i + 1; k++)
      if (!shape_is_scalar_of(c->params[k]->shape, s->et))
        return shape_fail(x, in, "sort comparator %%%s parameter %d must be %s[], not %s", c->name.p, k,
                          shape_et_name(s->et), shape_kind_str(c->params[k]->shape, a, sizeof a));
  }
  if (!shape_is_scalar_of(c->root->shape, IR_PRED))
    return shape_fail(x, in, "sort comparator %%%s must return pred[]", c->name.p);
  const ir_i64_list *d = &in->attrs.dimensions;
  if (d->n != 1 || d->v[0] < 0 || d->v[0] >= shape_operand(in, 0)->rank)
    return shape_fail(x, in, "sort needs one dimension in [0, %d)", shape_operand(in, 0)->rank);
  return shape_operands_collated(x, in, 0, n);
}

ir_shape *shape_infer_topk(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 1) || !shape_need_array(x, in, 0))
    return NULL;
  const ir_shape *s = shape_operand(in, 0);
  if (s->rank < 1 || s->rank > SHAPE_MAX_RANK)
    return shape_fail(x, in, "topk needs an operand of rank >= 1");
  int64_t k = in->attrs.u.topk.k, last = s->dims[s->rank - 1];
  if (k < 0 || k > last)
    return shape_fail(x, in, "k=%lld is larger than the last dimension (%lld)", (long long)k, (long long)last);
  int64_t dims[SHAPE_MAX_RANK];
  memcpy(dims, s->dims, (size_t)s->rank * sizeof(int64_t));
  dims[s->rank - 1] = k;
  ir_shape *e[2] = {shape_array(x, s->et, s->rank, dims), shape_array(x, IR_S32, s->rank, dims)};
  return shape_tuple_of(x, e, 2);
}
