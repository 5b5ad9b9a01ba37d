/* infer_data.c — shape rules of the data-movement families: iota, broadcast, reshape,
 * dynamic-reshape, transpose, slice, dynamic-slice, dynamic-update-slice, concatenate, pad,
 * reverse, copy, bitcast, gather and scatter (full dimension numbers, batching dimensions
 * included), get/set-dimension-size, tuple and get-tuple-element.  Rules follow the
 * semantics document and XLA's shape_inference.cc.  Tests: testdata/verify/err, shape_test.c.
 */
#include <stdio.h>
#include <string.h>

#include "shape/shape_internal.h"

static bool rank_fits(shape_ctx *x, ir_instr *in, int rank) {
  if (rank <= SHAPE_MAX_RANK)
    return true;
  return shape_error(x, in, "rank %d is larger than the supported %d", rank, SHAPE_MAX_RANK);
}

/* ---- iota, broadcast, reshape -------------------------------------------------------------- */

ir_shape *shape_infer_iota(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 0) || !in->shape)
    return NULL;
  char b[256];
  if (!shape_is_array(in->shape) || in->shape->rank == 0)
    return shape_fail(x, in, "iota needs an array result of rank >= 1, not %s", shape_kind_str(in->shape, b, sizeof b));
  if (in->shape->et == IR_PRED) /* as XLA's verifier: a pred iota has no meaning */
    return shape_fail(x, in, "iota cannot produce pred");
  int64_t d = in->attrs.u.iota_dimension;
  if (d < 0 || d >= in->shape->rank)
    return shape_fail(x, in, "iota_dimension %lld is out of range for rank %d", (long long)d, in->shape->rank);
  return NULL;
}

static ir_shape *broadcast_in_dim(shape_ctx *x, ir_instr *in, const ir_shape *s, const ir_shape *r) {
  const ir_i64_list *d = &in->attrs.dimensions;
  if (d->n != s->rank)
    return shape_fail(x, in, "broadcast dimensions={...} has %d entries but the operand has rank %d", d->n, s->rank);
  for (int i = 0; i < d->n; i++) {
    int64_t k = d->v[i];
    if (k < 0 || k >= r->rank)
      return shape_fail(x, in, "broadcast dimension %lld is out of range for the result rank %d", (long long)k, r->rank);
    if (i && k <= d->v[i - 1])
      return shape_fail(x, in, "broadcast dimensions must be strictly increasing, but %lld follows %lld", (long long)k,
                        (long long)d->v[i - 1]);
    bool degenerate_ok = s->dims[i] == 1 && !x->opts->strict;
    if (s->dims[i] != r->dims[k] && !degenerate_ok)
      return shape_fail(x, in, "operand dimension %d (size %lld) does not match result dimension %lld (size %lld)", i,
                        (long long)s->dims[i], (long long)k, (long long)r->dims[k]);
  }
  if (s->et != r->et)
    return shape_fail(x, in, "broadcast cannot change the element type (%s to %s)", shape_et_name(s->et),
                      shape_et_name(r->et));
  return NULL; /* the written shape is the result */
}

ir_shape *shape_infer_broadcast(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 1) || !shape_need_array(x, in, 0))
    return NULL;
  const ir_shape *s = shape_operand(in, 0);
  if (in->attrs.bc.auto_broadcast == IR_AB_BIDIRECTIONAL) {
    char what[300];
    snprintf(what, sizeof what, "%%%s", in->name.p);
    return shape_broadcast_to_target(x->m, s, &in->attrs.bc.target_shape, x->opts, what, in->loc, x->diags);
  }
  if (!in->shape)
    return NULL;
  char b[256];
  if (!shape_is_array(in->shape))
    return shape_fail(x, in, "the result of broadcast must be an array, not %s", shape_kind_str(in->shape, b, sizeof b));
  return broadcast_in_dim(x, in, s, in->shape);
}

/* Element counts of operand and written result, equal (overflow-checked). */
static bool same_element_count(shape_ctx *x, ir_instr *in, const ir_shape *s, const ir_shape *r, const char *op) {
  int64_t a, b;
  if (!shape_elements(s, &a) || !shape_elements(r, &b))
    return shape_error(x, in, "%s: element count overflows", op);
  if (a != b)
    return shape_error(x, in, "%s cannot change the number of elements (%lld to %lld)", op, (long long)a,
                       (long long)b);
  if (s->et != r->et)
    return shape_error(x, in, "%s cannot change the element type (%s to %s)", op, shape_et_name(s->et),
                       shape_et_name(r->et));
  return true;
}

ir_shape *shape_infer_reshape(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 1) || !shape_need_array(x, in, 0) || !in->shape)
    return NULL;
  char b[256];
  if (!shape_is_array(in->shape))
    return shape_fail(x, in, "the result of reshape must be an array, not %s", shape_kind_str(in->shape, b, sizeof b));
  if (!same_element_count(x, in, shape_operand(in, 0), in->shape, "reshape"))
    return NULL;
  int64_t d = in->attrs.u.inferred_dimension;
  if (d >= in->shape->rank || d < -1)
    return shape_fail(x, in, "inferred_dimension %lld is out of range for rank %d", (long long)d, in->shape->rank);
  return NULL;
}

ir_shape *shape_infer_dynamic_reshape(shape_ctx *x, ir_instr *in) {
  if (!shape_need_min_operands(x, in, 1) || !shape_need_array(x, in, 0) || !in->shape)
    return NULL;
  char b[256];
  if (!shape_is_array(in->shape))
    return shape_fail(x, in, "the result of dynamic-reshape must be an array, not %s",
                      shape_kind_str(in->shape, b, sizeof b));
  const ir_shape *v = shape_operand(in, 1);
  bool vector_form = !x->opts->strict && in->n_operands == 2 && shape_is_array(v) && v->rank == 1 &&
                     v->et == IR_S32 && v->dims[0] == in->shape->rank && in->shape->rank != 1;
  if (!vector_form && in->n_operands != in->shape->rank + 1)
    return shape_fail(x, in, "dynamic-reshape needs one s32[] size operand per result dimension (%d) but has %d",
                      in->shape->rank, in->n_operands - 1);
  for (int i = 1; i < in->n_operands && !vector_form; i++)
    if (!shape_is_scalar_of(shape_operand(in, i), IR_S32))
      return shape_fail(x, in, "dynamic-reshape size operand %d must be s32[], not %s", i,
                        shape_kind_str(shape_operand(in, i), b, sizeof b));
  (void)same_element_count(x, in, shape_operand(in, 0), in->shape, "dynamic-reshape");
  return NULL; /* the written shape (bounds) is the result */
}

/* ---- transpose, slice, dynamic slices ----------------------------------------------------- */

ir_shape *shape_infer_transpose(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 1) || !shape_need_array(x, in, 0))
    return NULL;
  const ir_shape *s = shape_operand(in, 0);
  const ir_i64_list *p = &in->attrs.dimensions;
  int64_t bad, dims[SHAPE_MAX_RANK];
  if (p->n != s->rank || !shape_dims_valid(p, s->rank, false, &bad) || !rank_fits(x, in, s->rank))
    return shape_fail(x, in, "transpose dimensions={...} is not a permutation of 0..%d", s->rank - 1);
  for (int i = 0; i < p->n; i++)
    dims[i] = s->dims[p->v[i]];
  return shape_array(x, s->et, s->rank, dims);
}

ir_shape *shape_infer_slice(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 1) || !shape_need_array(x, in, 0))
    return NULL;
  const ir_shape *s = shape_operand(in, 0);
  if (in->attrs.u.slice.n != s->rank)
    return shape_fail(x, in, "slice has %d ranges but the operand has rank %d", in->attrs.u.slice.n, s->rank);
  if (!rank_fits(x, in, s->rank))
    return NULL;
  int64_t dims[SHAPE_MAX_RANK];
  for (int i = 0; i < s->rank; i++) {
    const ir_slice_dim *d = &in->attrs.u.slice.dims[i];
    if (d->start < 0 || d->start > d->limit || d->limit > s->dims[i])
      return shape_fail(x, in, "slice [%lld:%lld:%lld] is out of bounds for dimension %d of size %lld",
                        (long long)d->start, (long long)d->limit, (long long)d->stride, i, (long long)s->dims[i]);
    if (d->stride < 1)
      return shape_fail(x, in, "slice stride %lld of dimension %d must be at least 1", (long long)d->stride, i);
    dims[i] = (d->limit - d->start) / d->stride + ((d->limit - d->start) % d->stride != 0);
  }
  return shape_array(x, s->et, s->rank, dims);
}

/* Start indices from operand `first` on: `rank` integer scalars of one type, or one integer
 * vector of `rank` entries. */
static bool start_indices_ok(shape_ctx *x, ir_instr *in, int first, int rank) {
  int n = in->n_operands - first;
  const ir_shape *i0 = shape_operand(in, first);
  char b[256];
  if (n == 1 && i0 && i0->rank == 1 && shape_is_array(i0)) {
    if (!ir_etype_is_int(i0->et))
      return shape_error(x, in, "start indices must be integers, not %s", shape_et_name(i0->et));
    if (i0->dims[0] != rank)
      return shape_error(x, in, "the start index vector has %lld entries but the operand has rank %d",
                         (long long)i0->dims[0], rank);
    return true;
  }
  if (n != rank)
    return shape_error(x, in, "needs %d start indices (one per dimension) but has %d", rank, n);
  for (int i = first; i < in->n_operands; i++) {
    const ir_shape *s = shape_operand(in, i);
    if (!shape_is_array(s) || s->rank != 0 || !ir_etype_is_int(s->et) || s->et != i0->et)
      return shape_error(x, in, "start index operand %d must be an integer scalar of the type of operand %d, not %s",
                         i, first, shape_kind_str(s, b, sizeof b));
  }
  return true;
}

ir_shape *shape_infer_dynamic_slice(shape_ctx *x, ir_instr *in) {
  if (!shape_need_min_operands(x, in, 1) || !shape_need_array(x, in, 0))
    return NULL;
  const ir_shape *s = shape_operand(in, 0);
  const ir_i64_list *sz = &in->attrs.u.dynamic_slice_sizes;
  if (!start_indices_ok(x, in, 1, s->rank))
    return NULL;
  if (sz->n != s->rank)
    return shape_fail(x, in, "dynamic_slice_sizes has %d entries but the operand has rank %d", sz->n, s->rank);
  for (int i = 0; i < s->rank; i++)
    if (sz->v[i] < 0 || sz->v[i] > s->dims[i])
      return shape_fail(x, in, "slice size %lld is larger than dimension %d (size %lld)", (long long)sz->v[i], i,
                        (long long)s->dims[i]);
  return shape_array(x, s->et, s->rank, sz->v);
}

ir_shape *shape_infer_dynamic_update_slice(shape_ctx *x, ir_instr *in) {
  if (!shape_need_min_operands(x, in, 2) || !shape_need_array(x, in, 0) || !shape_need_array(x, in, 1))
    return NULL;
  const ir_shape *s = shape_operand(in, 0), *u = shape_operand(in, 1);
  if (u->rank != s->rank)
    return shape_fail(x, in, "the update has rank %d but the operand has rank %d", u->rank, s->rank);
  if (u->et != s->et)
    return shape_fail(x, in, "the update's element type %s differs from the operand's %s", shape_et_name(u->et),
                      shape_et_name(s->et));
  for (int i = 0; i < s->rank; i++)
    if (u->dims[i] > s->dims[i])
      return shape_fail(x, in, "update dimension %d (size %lld) is larger than the operand's (%lld)", i,
                        (long long)u->dims[i], (long long)s->dims[i]);
  if (!start_indices_ok(x, in, 2, s->rank))
    return NULL;
  return ir_shape_clone(x->m, s);
}

/* ---- concatenate, pad, reverse, copy, bitcast ----------------------------------------------- */

ir_shape *shape_infer_concatenate(shape_ctx *x, ir_instr *in) {
  if (!shape_need_min_operands(x, in, 1))
    return NULL;
  for (int i = 0; i < in->n_operands; i++)
    if (!shape_need_array(x, in, i))
      return NULL;
  if (in->attrs.dimensions.n != 1)
    return shape_fail(x, in, "concatenate needs exactly one dimension, not %d", in->attrs.dimensions.n);
  const ir_shape *s0 = shape_operand(in, 0);
  int64_t d = in->attrs.dimensions.v[0];
  if (d < 0 || d >= s0->rank)
    return shape_fail(x, in, "concatenate dimension %lld is out of range for rank %d", (long long)d, s0->rank);
  int64_t dims[SHAPE_MAX_RANK];
  if (!rank_fits(x, in, s0->rank))
    return NULL;
  memcpy(dims, s0->dims, (size_t)s0->rank * sizeof(int64_t));
  for (int i = 1; i < in->n_operands; i++) {
    const ir_shape *s = shape_operand(in, i);
    if (s->rank != s0->rank)
      return shape_fail(x, in, "concatenate operand %d has rank %d but operand 0 has rank %d", i, s->rank, s0->rank);
    if (s->et != s0->et)
      return shape_fail(x, in, "concatenate operand %d has element type %s but operand 0 has %s", i,
                        shape_et_name(s->et), shape_et_name(s0->et));
    for (int k = 0; k < s->rank; k++)
      if (k != d && s->dims[k] != s0->dims[k])
        return shape_fail(x, in, "concatenate operand %d has size %lld in dimension %d but operand 0 has %lld", i,
                          (long long)s->dims[k], k, (long long)s0->dims[k]);
    if (__builtin_add_overflow(dims[d], s->dims[d], &dims[d]))
      return shape_fail(x, in, "concatenated dimension %lld overflows", (long long)d);
  }
  return shape_array(x, s0->et, s0->rank, dims);
}

ir_shape *shape_infer_pad(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 2) || !shape_need_array(x, in, 0) || !shape_need_array(x, in, 1))
    return NULL;
  const ir_shape *s = shape_operand(in, 0), *v = shape_operand(in, 1);
  if (v->rank != 0 || v->et != s->et)
    return shape_fail(x, in, "the padding value must be a %s scalar", shape_et_name(s->et));
  if (in->attrs.u.padding.n != s->rank)
    return shape_fail(x, in, "padding has %d dimensions but the operand has rank %d", in->attrs.u.padding.n, s->rank);
  if (!rank_fits(x, in, s->rank))
    return NULL;
  int64_t dims[SHAPE_MAX_RANK];
  for (int i = 0; i < s->rank; i++) {
    const ir_pad_dim *p = &in->attrs.u.padding.dims[i];
    if (p->interior < 0)
      return shape_fail(x, in, "interior padding of dimension %d is negative (%lld)", i, (long long)p->interior);
    int64_t n = s->dims[i], t = 0;
    bool ovf = n > 0 && __builtin_mul_overflow(n - 1, p->interior, &t);
    ovf = ovf || __builtin_add_overflow(t, n, &t) || __builtin_add_overflow(t, p->lo, &t) ||
          __builtin_add_overflow(t, p->hi, &t);
    if (ovf)
      return shape_fail(x, in, "padding of dimension %d overflows", i);
    if (t < 0)
      return shape_fail(x, in, "padding makes dimension %d negative (%lld)", i, (long long)t);
    dims[i] = t;
  }
  return shape_array(x, s->et, s->rank, dims);
}

ir_shape *shape_infer_reverse(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 1) || !shape_need_array(x, in, 0))
    return NULL;
  const ir_shape *s = shape_operand(in, 0);
  int64_t bad;
  if (!shape_dims_valid(&in->attrs.dimensions, s->rank, false, &bad))
    return shape_fail(x, in, "reverse dimension %lld is out of range or repeated", (long long)bad);
  return ir_shape_clone(x->m, s);
}

/* copy: the operand's shape; with XLA's allow_mixed_precision (its tests' verifier; not under
 * --strict), a float operand may be copied into another float type, which converts. */
ir_shape *shape_infer_copy(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 1))
    return NULL;
  const ir_shape *s = shape_operand(in, 0);
  if (!x->opts->strict && in->shape && shape_is_array(s) && shape_is_array(in->shape) && in->shape->et != s->et &&
      ir_etype_is_float(in->shape->et) && ir_etype_is_float(s->et)) {
    ir_shape *r = ir_shape_clone(x->m, s);
    if (r)
      r->et = in->shape->et;
    return r;
  }
  return ir_shape_clone(x->m, s);
}

ir_shape *shape_infer_bitcast(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 1) || !shape_need_array(x, in, 0) || !in->shape)
    return NULL;
  char a[256], b[256];
  if (!shape_is_array(in->shape))
    return shape_fail(x, in, "the result of bitcast must be an array, not %s", shape_kind_str(in->shape, b, sizeof b));
  int64_t na, nb;
  if (!ir_shape_byte_size(shape_operand(in, 0), &na) || !ir_shape_byte_size(in->shape, &nb))
    return shape_fail(x, in, "bitcast: byte size overflows");
  if (na != nb)
    return shape_fail(x, in, "bitcast from %s (%lld bytes) to %s (%lld bytes) must keep the byte size",
                      shape_str(shape_operand(in, 0), a, sizeof a), (long long)na, shape_str(in->shape, b, sizeof b),
                      (long long)nb);
  return NULL;
}

/* ---- gather ------------------------------------------------------------------------------ */

typedef struct index_space {
  int batch_rank;   /* dims of the indices other than index_vector_dim */
  int64_t nidx;     /* entries of one index vector */
} index_space;

/* index_vector_dim against the indices' shape (it may equal the rank: implicit trailing 1). */
static bool index_space_of(shape_ctx *x, ir_instr *in, const ir_shape *idx, int64_t ivd, index_space *out) {
  if (!ir_etype_is_int(idx->et))
    return shape_error(x, in, "start indices must be integers, not %s", shape_et_name(idx->et));
  if (ivd < 0 || ivd > idx->rank)
    return shape_error(x, in, "index_vector_dim %lld is out of range for indices of rank %d", (long long)ivd,
                       idx->rank);
  out->nidx = ivd == idx->rank ? 1 : idx->dims[ivd];
  out->batch_rank = idx->rank - (ivd < idx->rank ? 1 : 0);
  return true;
}

/* The size of the k-th batch dimension of the indices (index_vector_dim skipped). */
static int64_t batch_dim_size(const ir_shape *idx, int64_t ivd, int k) {
  return idx->dims[k < ivd ? k : k + 1];
}

/* operand_batching_dims vs start_indices_batching_dims (gather) or input_batching_dims vs
 * scatter_indices_batching_dims (scatter): same length, each valid, sizes equal. */
static bool batching_ok(shape_ctx *x, ir_instr *in, const ir_shape *op, const ir_shape *idx, int64_t ivd,
                        const ir_i64_list *ob, const ir_i64_list *ib, const char *on, const char *inm) {
  int64_t bad;
  if (!shape_dims_valid(ob, op->rank, true, &bad))
    return shape_error(x, in, "%s must be sorted, distinct operand dimensions; %lld is not", on, (long long)bad);
  if (!shape_dims_valid(ib, idx->rank, false, &bad) || shape_list_has(ib, ivd))
    return shape_error(x, in, "%s must be distinct index dimensions other than index_vector_dim; %lld is not", inm,
                       (long long)(shape_list_has(ib, ivd) ? ivd : bad));
  if (ob->n != ib->n)
    return shape_error(x, in, "%s has %d entries but %s has %d", on, ob->n, inm, ib->n);
  for (int i = 0; i < ob->n; i++)
    if (op->dims[ob->v[i]] != idx->dims[ib->v[i]])
      return shape_error(x, in, "operand batching dimension %lld has size %lld but index batching dimension %lld has "
                         "size %lld", (long long)ob->v[i], (long long)op->dims[ob->v[i]], (long long)ib->v[i],
                         (long long)idx->dims[ib->v[i]]);
  return true;
}

/* A dimension named in two of the lists a (name an) and b (name bn). */
static bool disjoint(shape_ctx *x, ir_instr *in, const ir_i64_list *a, const ir_i64_list *b, const char *an,
                     const char *bn) {
  for (int i = 0; i < a->n; i++)
    if (shape_list_has(b, a->v[i]))
      return shape_error(x, in, "dimension %lld is in both %s and %s", (long long)a->v[i], an, bn);
  return true;
}

typedef typeof(((ir_attrs *)0)->u.gather) gather_attrs;

static bool gather_dnums_ok(shape_ctx *x, ir_instr *in, const ir_shape *op, const ir_shape *idx,
                            const gather_attrs *g, const index_space *is) {
  int64_t bad;
  if (g->start_index_map.n != is->nidx)
    return shape_error(x, in, "start_index_map has %d entries but the index vector has %lld", g->start_index_map.n,
                       (long long)is->nidx);
  if (!shape_dims_valid(&g->start_index_map, op->rank, false, &bad))
    return shape_error(x, in, "start_index_map must name distinct operand dimensions; %lld is not", (long long)bad);
  if (!shape_dims_valid(&g->collapsed_slice_dims, op->rank, true, &bad))
    return shape_error(x, in, "collapsed_slice_dims must be sorted, distinct operand dimensions; %lld is not",
                       (long long)bad);
  if (!batching_ok(x, in, op, idx, g->index_vector_dim, &g->operand_batching_dims, &g->start_indices_batching_dims,
                   "operand_batching_dims", "start_indices_batching_dims"))
    return false;
  return disjoint(x, in, &g->collapsed_slice_dims, &g->operand_batching_dims, "collapsed_slice_dims",
                  "operand_batching_dims") &&
         disjoint(x, in, &g->start_index_map, &g->operand_batching_dims, "start_index_map", "operand_batching_dims");
}

ir_shape *shape_infer_gather(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 2) || !shape_need_array(x, in, 0) || !shape_need_array(x, in, 1))
    return NULL;
  const ir_shape *op = shape_operand(in, 0), *idx = shape_operand(in, 1);
  const gather_attrs *g = &in->attrs.u.gather;
  index_space is;
  if (!rank_fits(x, in, op->rank) || !index_space_of(x, in, idx, g->index_vector_dim, &is) ||
      !gather_dnums_ok(x, in, op, idx, g, &is))
    return NULL;
  if (g->slice_sizes.n != op->rank)
    return shape_fail(x, in, "slice_sizes has %d entries but the operand has rank %d", g->slice_sizes.n, op->rank);
  int64_t offs[SHAPE_MAX_RANK];
  int noff = 0;
  for (int i = 0; i < op->rank; i++) {
    int64_t s = g->slice_sizes.v[i];
    if (s < 0 || s > op->dims[i])
      return shape_fail(x, in, "slice size %lld of dimension %d is larger than the operand's %lld", (long long)s, i,
                        (long long)op->dims[i]);
    bool dropped = shape_list_has(&g->collapsed_slice_dims, i) || shape_list_has(&g->operand_batching_dims, i);
    if (dropped && s > 1)
      return shape_fail(x, in, "collapsed or batching dimension %d must have slice size 1, not %lld", i, (long long)s);
    if (!dropped)
      offs[noff++] = s;
  }
  if (g->offset_dims.n != noff)
    return shape_fail(x, in, "offset_dims has %d entries but %d slice dimensions are kept", g->offset_dims.n, noff);
  int rank = is.batch_rank + noff;
  int64_t bad, dims[SHAPE_MAX_RANK];
  if (!rank_fits(x, in, rank))
    return NULL;
  if (!shape_dims_valid(&g->offset_dims, rank, true, &bad))
    return shape_fail(x, in, "offset_dims must be sorted, distinct result dimensions; %lld is not", (long long)bad);
  for (int d = 0, ko = 0, kb = 0; d < rank; d++)
    dims[d] = shape_list_has(&g->offset_dims, d) ? offs[ko++] : batch_dim_size(idx, g->index_vector_dim, kb++);
  return shape_array(x, op->et, rank, dims);
}

/* ---- scatter ----------------------------------------------------------------------------- */

typedef typeof(((ir_attrs *)0)->u.scatter) scatter_attrs;

static bool scatter_dnums_ok(shape_ctx *x, ir_instr *in, const ir_shape *op, const ir_shape *idx,
                             const ir_shape *up, const scatter_attrs *s, const index_space *is) {
  int64_t bad;
  if (up->rank != is->batch_rank + s->update_window_dims.n)
    return shape_error(x, in, "updates have rank %d but need %d (scatter dimensions) + %d (window dimensions)",
                       up->rank, is->batch_rank, s->update_window_dims.n);
  if (!shape_dims_valid(&s->update_window_dims, up->rank, true, &bad))
    return shape_error(x, in, "update_window_dims must be sorted, distinct update dimensions; %lld is not",
                       (long long)bad);
  if (!shape_dims_valid(&s->inserted_window_dims, op->rank, true, &bad))
    return shape_error(x, in, "inserted_window_dims must be sorted, distinct operand dimensions; %lld is not",
                       (long long)bad);
  if (!batching_ok(x, in, op, idx, s->index_vector_dim, &s->input_batching_dims, &s->scatter_indices_batching_dims,
                   "input_batching_dims", "scatter_indices_batching_dims") ||
      !disjoint(x, in, &s->inserted_window_dims, &s->input_batching_dims, "inserted_window_dims",
                "input_batching_dims"))
    return false;
  if (s->update_window_dims.n + s->inserted_window_dims.n + s->input_batching_dims.n != op->rank)
    return shape_error(x, in, "window dimensions (%d) + inserted (%d) + batching (%d) must equal the operand rank %d",
                       s->update_window_dims.n, s->inserted_window_dims.n, s->input_batching_dims.n, op->rank);
  if (s->scatter_dims_to_operand_dims.n != is->nidx)
    return shape_error(x, in, "scatter_dims_to_operand_dims has %d entries but the index vector has %lld",
                       s->scatter_dims_to_operand_dims.n, (long long)is->nidx);
  if (!shape_dims_valid(&s->scatter_dims_to_operand_dims, op->rank, false, &bad))
    return shape_error(x, in, "scatter_dims_to_operand_dims must name distinct operand dimensions; %lld is not",
                       (long long)bad);
  return disjoint(x, in, &s->scatter_dims_to_operand_dims, &s->input_batching_dims, "scatter_dims_to_operand_dims",
                  "input_batching_dims");
}

/* Window dims of the updates fit the operand; scatter dims equal the indices' batch dims. */
static bool scatter_bounds_ok(shape_ctx *x, ir_instr *in, const ir_shape *op, const ir_shape *idx,
                              const ir_shape *up, const scatter_attrs *s) {
  int k = 0, kb = 0;
  for (int d = 0; d < op->rank; d++) {
    if (shape_list_has(&s->inserted_window_dims, d) || shape_list_has(&s->input_batching_dims, d))
      continue;
    int64_t ud = s->update_window_dims.v[k++];
    if (up->dims[ud] > op->dims[d])
      return shape_error(x, in, "update window dimension %lld (size %lld) is larger than operand dimension %d (%lld)",
                         (long long)ud, (long long)up->dims[ud], d, (long long)op->dims[d]);
  }
  for (int d = 0; d < up->rank; d++) {
    if (shape_list_has(&s->update_window_dims, d))
      continue;
    int64_t want = batch_dim_size(idx, s->index_vector_dim, kb++);
    if (up->dims[d] != want)
      return shape_error(x, in, "update scatter dimension %d has size %lld but the indices give %lld", d,
                         (long long)up->dims[d], (long long)want);
  }
  return true;
}

ir_shape *shape_infer_scatter(shape_ctx *x, ir_instr *in) {
  if (!shape_need_min_operands(x, in, 3))
    return NULL;
  if (in->n_operands % 2 == 0)
    return shape_fail(x, in, "scatter takes N operands, the indices and N updates (an odd count), not %d",
                      in->n_operands);
  int n = (in->n_operands - 1) / 2;
  for (int i = 0; i < in->n_operands; i++)
    if (!shape_need_array(x, in, i))
      return NULL;
  const ir_shape *op0 = shape_operand(in, 0), *idx = shape_operand(in, n), *up0 = shape_operand(in, n + 1);
  const scatter_attrs *s = &in->attrs.u.scatter;
  index_space is;
  if (!index_space_of(x, in, idx, s->index_vector_dim, &is))
    return NULL;
  ir_etype ets[SHAPE_MAX_OPERANDS];
  for (int i = 0; i < n; i++) {
    const ir_shape *op = shape_operand(in, i), *up = shape_operand(in, n + 1 + i);
    if (!ir_shape_same_dims(op, op0) || !ir_shape_same_dims(up, up0))
      return shape_fail(x, in, "all scatter operands (and all updates) must have the same dimensions");
    if (up->et != op->et)
      return shape_fail(x, in, "update %d has element type %s but operand %d has %s", i, shape_et_name(up->et), i,
                        shape_et_name(op->et));
    ets[i] = op->et;
  }
  if (!scatter_dnums_ok(x, in, op0, idx, up0, s, &is) || !scatter_bounds_ok(x, in, op0, idx, up0, s))
    return NULL;
  if (!shape_need_called(x, in, 1, "to_apply") || !shape_check_reducer(x, in, in->called[0], ets, n, "update computation"))
    return NULL;
  return shape_operands_collated(x, in, 0, n);
}

/* ---- dimension sizes, tuples --------------------------------------------------------------- */

ir_shape *shape_infer_dimension_size(shape_ctx *x, ir_instr *in) {
  bool set = in->op == IR_OP_SET_DIMENSION_SIZE;
  if (!shape_need_operands(x, in, set ? 2 : 1) || !shape_need_array(x, in, 0))
    return NULL;
  const ir_shape *s = shape_operand(in, 0);
  const ir_i64_list *d = &in->attrs.dimensions;
  if (d->n != 1 || d->v[0] < 0 || d->v[0] >= s->rank)
    return shape_fail(x, in, "dimensions={...} must name one dimension in [0, %d)", s->rank);
  if (s->dims[d->v[0]] > INT32_MAX)
    return shape_fail(x, in, "dimension %lld (size %lld) exceeds the s32 range", (long long)d->v[0],
                      (long long)s->dims[d->v[0]]);
  if (!set)
    return ir_shape_scalar(x->m, IR_S32);
  char b[256];
  if (!shape_is_scalar_of(shape_operand(in, 1), IR_S32))
    return shape_fail(x, in, "the size operand must be s32[], not %s", shape_kind_str(shape_operand(in, 1), b, sizeof b));
  return ir_shape_clone(x->m, s);
}

ir_shape *shape_infer_tuple(shape_ctx *x, ir_instr *in) {
  if (in->n_operands > SHAPE_MAX_OPERANDS)
    return shape_fail(x, in, "tuple has %d elements; at most %d are supported", in->n_operands, SHAPE_MAX_OPERANDS);
  ir_shape *elems[SHAPE_MAX_OPERANDS];
  for (int i = 0; i < in->n_operands; i++)
    elems[i] = in->operands[i]->shape;
  return shape_tuple_of(x, elems, in->n_operands);
}

ir_shape *shape_infer_get_tuple_element(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 1))
    return NULL;
  const ir_shape *s = shape_operand(in, 0);
  char b[256];
  if (s->et != IR_TUPLE)
    return shape_fail(x, in, "get-tuple-element needs a tuple operand, not %s", shape_str(s, b, sizeof b));
  int64_t k = in->attrs.u.tuple_index;
  if (k < 0 || k >= s->n_elems)
    return shape_fail(x, in, "tuple index %lld is out of range for a tuple of %d elements", (long long)k, s->n_elems);
  return ir_shape_clone(x->m, s->elems[k]);
}
