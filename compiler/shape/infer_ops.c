/* infer_ops.c — shape inference for the structured ops: gather and scatter (with batching
 * dimensions), convolution (dim_labels, windows, feature and batch groups), reduce-window,
 * select-and-scatter, fft, cholesky, triangular-solve, the batch-norm ops, and the
 * collectives (replica groups, all-gather, reduce-scatter, collective-permute).  Rules follow
 * the operation semantics document and XLA's shape_inference.cc.  Tests: testdata/verify/err.
 */
#include <stdio.h>
#include <string.h>

#include "shape/shape_internal.h"

#define OP(i) ((i) < in->n_operands ? in->operands[i]->shape : NULL)
#define ERR(...) (shape_error(x, in, __VA_ARGS__), (ir_shape *)NULL)

static bool is_array(const ir_shape *s) { return s && ir_etype_is_array(s->et); }

static bool in_range_unique(const ir_i64_list *l, int rank, bool sorted) {
  uint64_t seen = 0;
  for (int i = 0; i < l->n; i++) {
    int64_t v = l->v[i];
    if (v < 0 || v >= rank || v >= 64 || (seen >> v & 1) || (sorted && i && v <= l->v[i - 1]))
      return false;
    seen |= 1ull << v;
  }
  return true;
}

static bool list_has(const ir_i64_list *l, int64_t v) {
  for (int i = 0; i < l->n; i++)
    if (l->v[i] == v)
      return true;
  return false;
}

/* ---- gather ------------------------------------------------------------------------------ */

ir_shape *shape_infer_gather(shape_ctx *x, ir_instr *in) {
  const ir_shape *op = OP(0), *idx = OP(1);
  if (!is_array(op) || !is_array(idx))
    return ERR("gather needs array operands");
  if (!ir_etype_is_int(idx->et))
    return ERR("gather start indices must be integers, not %s", ir_etype_table[idx->et].spelling);
  typeof(in->attrs.u.gather) *g = &in->attrs.u.gather;
  if (g->index_vector_dim < 0 || g->index_vector_dim > idx->rank)
    return ERR("index_vector_dim %lld is out of range for indices of rank %d", (long long)g->index_vector_dim, idx->rank);
  int64_t nidx = g->index_vector_dim == idx->rank ? 1 : idx->dims[g->index_vector_dim];
  if (g->slice_sizes.n != op->rank)
    return ERR("slice_sizes has %d entries but the operand has rank %d", g->slice_sizes.n, op->rank);
  if (g->start_index_map.n != nidx)
    return ERR("start_index_map has %d entries but the index vector has %lld", g->start_index_map.n, (long long)nidx);
  if (!in_range_unique(&g->start_index_map, op->rank, false))
    return ERR("start_index_map must name distinct operand dimensions");
  if (!in_range_unique(&g->collapsed_slice_dims, op->rank, true))
    return ERR("collapsed_slice_dims must be sorted, distinct operand dimensions");
  if (!in_range_unique(&g->operand_batching_dims, op->rank, true))
    return ERR("operand_batching_dims must be sorted, distinct operand dimensions");
  if (g->operand_batching_dims.n != g->start_indices_batching_dims.n)
    return ERR("operand_batching_dims and start_indices_batching_dims differ in length");
  for (int i = 0; i < op->rank; i++) {
    int64_t s = g->slice_sizes.v[i];
    if (s < 0 || s > op->dims[i])
      return ERR("slice size %lld of dimension %d is larger than the operand's %lld", (long long)s, i, (long long)op->dims[i]);
    if ((list_has(&g->collapsed_slice_dims, i) || list_has(&g->operand_batching_dims, i)) && s > 1)
      return ERR("collapsed or batching dimension %d must have slice size 1, not %lld", i, (long long)s);
    if (list_has(&g->collapsed_slice_dims, i) && list_has(&g->operand_batching_dims, i))
      return ERR("dimension %d is both collapsed and a batching dimension", i);
  }
  int64_t offs[64];
  int noff = 0;
  for (int i = 0; i < op->rank; i++)
    if (!list_has(&g->collapsed_slice_dims, i) && !list_has(&g->operand_batching_dims, i))
      offs[noff++] = g->slice_sizes.v[i];
  if (g->offset_dims.n != noff)
    return ERR("offset_dims has %d entries but %d slice dimensions are kept", g->offset_dims.n, noff);
  int batch_rank = idx->rank - (g->index_vector_dim < idx->rank ? 1 : 0);
  int rank = batch_rank + noff;
  if (rank > 64 || !in_range_unique(&g->offset_dims, rank, true))
    return ERR("offset_dims must be sorted, distinct result dimensions");
  int64_t dims[64];
  for (int d = 0, ko = 0, kb = 0; d < rank; d++) {
    if (list_has(&g->offset_dims, d)) {
      dims[d] = offs[ko++];
    } else {
      if (kb == g->index_vector_dim)
        kb++;
      dims[d] = idx->dims[kb++];
    }
  }
  return ir_shape_array(x->m, op->et, rank, dims);
}

/* ---- scatter ----------------------------------------------------------------------------- */

ir_shape *shape_infer_scatter(shape_ctx *x, ir_instr *in) {
  int n = (in->n_operands - 1) / 2;
  if (in->n_operands < 3 || in->n_operands % 2 == 0)
    return ERR("scatter takes N operands, the indices and N updates");
  const ir_shape *idx = OP(n);
  typeof(in->attrs.u.scatter) *s = &in->attrs.u.scatter;
  if (!is_array(idx) || !ir_etype_is_int(idx->et))
    return ERR("scatter indices must be an integer array");
  if (s->index_vector_dim < 0 || s->index_vector_dim > idx->rank)
    return ERR("index_vector_dim %lld is out of range for indices of rank %d", (long long)s->index_vector_dim, idx->rank);
  int64_t nidx = s->index_vector_dim == idx->rank ? 1 : idx->dims[s->index_vector_dim];
  const ir_shape *op0 = OP(0), *up0 = OP(n + 1);
  if (!is_array(op0) || !is_array(up0))
    return ERR("scatter operands and updates must be arrays");
  if (s->scatter_dims_to_operand_dims.n != nidx)
    return ERR("scatter_dims_to_operand_dims has %d entries but the index vector has %lld",
               s->scatter_dims_to_operand_dims.n, (long long)nidx);
  if (!in_range_unique(&s->scatter_dims_to_operand_dims, op0->rank, false))
    return ERR("scatter_dims_to_operand_dims must name distinct operand dimensions");
  if (!in_range_unique(&s->inserted_window_dims, op0->rank, true))
    return ERR("inserted_window_dims must be sorted, distinct operand dimensions");
  int scatter_rank = idx->rank - (s->index_vector_dim < idx->rank ? 1 : 0);
  if (up0->rank != scatter_rank + s->update_window_dims.n)
    return ERR("updates have rank %d but need %d (scatter dimensions) + %d (window dimensions)", up0->rank, scatter_rank,
               s->update_window_dims.n);
  if (!in_range_unique(&s->update_window_dims, up0->rank, true))
    return ERR("update_window_dims must be sorted, distinct update dimensions");
  if (s->update_window_dims.n + s->inserted_window_dims.n + s->input_batching_dims.n != op0->rank)
    return ERR("window dimensions (%d) + inserted (%d) + batching (%d) must equal the operand rank %d",
               s->update_window_dims.n, s->inserted_window_dims.n, s->input_batching_dims.n, op0->rank);
  for (int i = 0; i < n; i++) {
    if (!is_array(OP(i)) || !ir_shape_equal(OP(i), op0) || !is_array(OP(n + 1 + i)))
      return ERR("all scatter operands must have the same shape");
    if (OP(n + 1 + i)->et != OP(i)->et)
      return ERR("update %d must have the element type of operand %d", i, i);
  }
  if (in->n_called != 1)
    return ERR("scatter needs to_apply");
  const ir_computation *c = in->called[0];
  if (c->n_params != 2 * n)
    return ERR("scatter computation %%%s must take %d parameters", c->name.p, 2 * n);
  if (n == 1)
    return ir_shape_clone(x->m, op0);
  ir_shape *elems[32];
  if (n > 32)
    return ERR("too many scatter operands");
  for (int i = 0; i < n; i++)
    elems[i] = OP(i);
  return ir_shape_tuple(x->m, elems, n);
}

/* ---- windows ------------------------------------------------------------------------------ */

/* Output size of one windowed dimension; -1 when the window parameters are invalid. */
static int64_t window_out(int64_t in, const ir_window_dim *w) {
  if (w->size < 1 || w->stride < 1 || w->lhs_dilate < 1 || w->rhs_dilate < 1)
    return -1;
  int64_t dilated = in > 0 ? (in - 1) * w->lhs_dilate + 1 : 0;
  int64_t padded = dilated + w->pad_lo + w->pad_hi;
  int64_t win = (w->size - 1) * w->rhs_dilate + 1;
  return padded < win ? 0 : (padded - win) / w->stride + 1;
}

static bool check_scalar_reducer(shape_ctx *x, ir_instr *in, const ir_computation *c, const ir_etype *ets, int n) {
  if (c->n_params != 2 * n) {
    shape_error(x, in, "computation %%%s must take %d parameters but takes %d", c->name.p, 2 * n, c->n_params);
    return false;
  }
  for (int i = 0; i < 2 * n; i++) {
    const ir_shape *p = c->params[i]->shape;
    if (p->et != ets[i % n] || p->rank != 0) {
      shape_error(x, in, "computation %%%s parameter %d must be %s[]", c->name.p, i, ir_etype_table[ets[i % n]].spelling);
      return false;
    }
  }
  return true;
}

ir_shape *shape_infer_reduce_window(shape_ctx *x, ir_instr *in) {
  int n = in->n_operands / 2;
  if (in->n_operands % 2 || n == 0 || n > 32)
    return ERR("reduce-window needs N inputs followed by N init values");
  const ir_window *w = &in->attrs.u.reduce_window.window;
  const ir_shape *s = OP(0);
  ir_etype ets[32];
  for (int i = 0; i < n; i++) {
    if (!is_array(OP(i)) || OP(i)->rank != s->rank)
      return ERR("reduce-window inputs must be arrays of one rank");
    if (!is_array(OP(n + i)) || OP(n + i)->rank != 0 || OP(n + i)->et != OP(i)->et)
      return ERR("init value %d must be a %s scalar", i, ir_etype_table[OP(i)->et].spelling);
    ets[i] = OP(i)->et;
  }
  if (w->n != s->rank)
    return ERR("the window has %d dimension%s but the input has rank %d", w->n, w->n == 1 ? "" : "s", s->rank);
  if (in->n_called != 1 || !check_scalar_reducer(x, in, in->called[0], ets, n))
    return NULL;
  int64_t dims[64];
  for (int d = 0; d < s->rank; d++)
    if ((dims[d] = window_out(s->dims[d], &w->dims[d])) < 0)
      return ERR("window dimension %d has a size, stride or dilation below 1", d);
  if (n == 1)
    return ir_shape_array(x->m, ets[0], s->rank, dims);
  ir_shape *e[32];
  for (int i = 0; i < n; i++)
    e[i] = ir_shape_array(x->m, ets[i], s->rank, dims);
  return ir_shape_tuple(x->m, e, n);
}

ir_shape *shape_infer_select_and_scatter(shape_ctx *x, ir_instr *in) {
  const ir_shape *op = OP(0), *src = OP(1), *init = OP(2);
  const ir_window *w = &in->attrs.u.reduce_window.window;
  if (!is_array(op) || !is_array(src) || !is_array(init) || init->rank != 0 || init->et != op->et)
    return ERR("select-and-scatter takes an operand, a source and a scalar init value of one type");
  if (w->n != op->rank)
    return ERR("the window has %d dimension%s but the operand has rank %d", w->n, w->n == 1 ? "" : "s", op->rank);
  for (int d = 0; d < op->rank; d++) {
    int64_t o = window_out(op->dims[d], &w->dims[d]);
    if (o < 0)
      return ERR("window dimension %d has a size or stride below 1", d);
    if (src->rank != op->rank || src->dims[d] != o)
      return ERR("source dimension %d has size %lld but the window yields %lld", d,
                 (long long)(src->rank == op->rank ? src->dims[d] : -1), (long long)o);
  }
  if (in->n_called != 2)
    return ERR("select-and-scatter needs select and scatter computations");
  const ir_computation *sel = in->called[0], *sc = in->called[1];
  if (sel->n_params != 2 || sel->root->shape->et != IR_PRED || sel->root->shape->rank != 0)
    return ERR("select computation %%%s must take two scalars and return pred[]", sel->name.p);
  ir_etype et[1] = {op->et};
  if (!check_scalar_reducer(x, in, sc, et, 1))
    return NULL;
  return ir_shape_clone(x->m, op);
}

/* ---- convolution ---------------------------------------------------------------------------- */

ir_shape *shape_infer_convolution(shape_ctx *x, ir_instr *in) {
  const ir_shape *lhs = OP(0), *rhs = OP(1);
  if (!is_array(lhs) || !is_array(rhs))
    return ERR("convolution needs array operands");
  typeof(in->attrs.u.conv) *c = &in->attrs.u.conv;
  const ir_conv_dnums *d = &c->dnums;
  int ns = d->input_spatial.n;
  if (d->kernel_spatial.n != ns || d->output_spatial.n != ns)
    return ERR("dim_labels name %d, %d and %d spatial dimensions; they must agree", ns, d->kernel_spatial.n,
               d->output_spatial.n);
  if (lhs->rank != ns + 2 || rhs->rank != ns + 2)
    return ERR("dim_labels describe rank %d but the input has rank %d and the kernel rank %d", ns + 2, lhs->rank,
               rhs->rank);
  if (c->window.n && c->window.n != ns)
    return ERR("the window has %d dimensions but there are %d spatial dimensions", c->window.n, ns);
  int64_t fgc = c->feature_group_count, bgc = c->batch_group_count;
  if (fgc < 1 || bgc < 1)
    return ERR("feature_group_count and batch_group_count must be at least 1");
  int64_t in_feat = lhs->dims[d->input_feature], k_in = rhs->dims[d->kernel_input_feature];
  int64_t k_out = rhs->dims[d->kernel_output_feature], batch = lhs->dims[d->input_batch];
  if (in_feat != k_in * fgc)
    return ERR("input feature dimension (size %lld) must equal kernel input features (%lld) x feature_group_count (%lld)",
               (long long)in_feat, (long long)k_in, (long long)fgc);
  if (k_out % fgc)
    return ERR("kernel output features (%lld) must be divisible by feature_group_count (%lld)", (long long)k_out,
               (long long)fgc);
  if (batch % bgc || k_out % bgc)
    return ERR("batch (%lld) and kernel output features (%lld) must be divisible by batch_group_count (%lld)",
               (long long)batch, (long long)k_out, (long long)bgc);
  int64_t dims[64];
  dims[d->output_batch] = batch / bgc;
  dims[d->output_feature] = k_out;
  for (int i = 0; i < ns; i++) {
    int64_t ksize = rhs->dims[d->kernel_spatial.v[i]];
    ir_window_dim w = {ksize, 1, 0, 0, 1, 1, false};
    if (c->window.n) {
      w = c->window.dims[i];
      if (w.size != ksize)
        return ERR("window size %lld of spatial dimension %d differs from the kernel's %lld", (long long)w.size, i,
                   (long long)ksize);
    }
    int64_t o = window_out(lhs->dims[d->input_spatial.v[i]], &w);
    if (o < 0)
      return ERR("window dimension %d has a size, stride or dilation below 1", i);
    dims[d->output_spatial.v[i]] = o;
  }
  return ir_shape_array(x->m, in->shape ? in->shape->et : lhs->et, lhs->rank, dims);
}

/* ---- fft, linear algebra, batch norm ---------------------------------------------------------- */

ir_shape *shape_infer_fft(shape_ctx *x, ir_instr *in) {
  const ir_shape *s = OP(0);
  const ir_i64_list *len = &in->attrs.u.fft.length;
  if (!is_array(s) || len->n < 1 || len->n > 3 || len->n > s->rank)
    return ERR("fft_length must have 1 to 3 entries, no more than the operand's rank");
  int64_t dims[64];
  memcpy(dims, s->dims, (size_t)s->rank * sizeof(int64_t));
  int first = s->rank - len->n;
  ir_etype et = s->et;
  switch (in->attrs.u.fft.type) {
  case IR_FFT_FFT:
  case IR_FFT_IFFT:
    if (!ir_etype_is_complex(s->et))
      return ERR("FFT and IFFT need a complex operand, not %s", ir_etype_table[s->et].spelling);
    for (int i = 0; i < len->n; i++)
      if (s->dims[first + i] != len->v[i])
        return ERR("fft_length does not match the operand's trailing dimensions");
    break;
  case IR_FFT_RFFT:
    if (s->et != IR_F32 && s->et != IR_F64)
      return ERR("RFFT needs an f32 or f64 operand, not %s", ir_etype_table[s->et].spelling);
    for (int i = 0; i < len->n; i++)
      if (s->dims[first + i] != len->v[i])
        return ERR("fft_length does not match the operand's trailing dimensions");
    dims[s->rank - 1] = len->v[len->n - 1] / 2 + 1;
    et = s->et == IR_F32 ? IR_C64 : IR_C128;
    break;
  case IR_FFT_IRFFT:
    if (!ir_etype_is_complex(s->et))
      return ERR("IRFFT needs a complex operand, not %s", ir_etype_table[s->et].spelling);
    for (int i = 0; i + 1 < len->n; i++)
      if (s->dims[first + i] != len->v[i])
        return ERR("fft_length does not match the operand's trailing dimensions");
    if (s->dims[s->rank - 1] != len->v[len->n - 1] / 2 + 1)
      return ERR("IRFFT's last operand dimension must be fft_length/2+1 = %lld", (long long)(len->v[len->n - 1] / 2 + 1));
    dims[s->rank - 1] = len->v[len->n - 1];
    et = ir_etype_component(s->et);
    break;
  }
  return ir_shape_array(x->m, et, s->rank, dims);
}

ir_shape *shape_infer_cholesky(shape_ctx *x, ir_instr *in) {
  const ir_shape *a = OP(0);
  if (!is_array(a) || a->rank < 2 || a->dims[a->rank - 1] != a->dims[a->rank - 2])
    return ERR("cholesky needs square matrices in the last two dimensions");
  if (!ir_etype_is_float(a->et) && !ir_etype_is_complex(a->et))
    return ERR("cholesky needs a floating-point or complex operand");
  return ir_shape_clone(x->m, a);
}

ir_shape *shape_infer_triangular_solve(shape_ctx *x, ir_instr *in) {
  const ir_shape *a = OP(0), *b = OP(1);
  if (!is_array(a) || !is_array(b) || a->rank < 2 || a->rank != b->rank || a->et != b->et)
    return ERR("triangular-solve needs a and b of one rank (>= 2) and element type");
  int r = a->rank;
  if (a->dims[r - 1] != a->dims[r - 2])
    return ERR("a must be square in its last two dimensions");
  for (int i = 0; i < r - 2; i++)
    if (a->dims[i] != b->dims[i])
      return ERR("a and b have different batch dimensions");
  int64_t m = a->dims[r - 1];
  int64_t bm = in->attrs.u.triangular_solve.left_side ? b->dims[r - 2] : b->dims[r - 1];
  if (bm != m)
    return ERR("b's %s dimension (%lld) must equal a's size %lld", in->attrs.u.triangular_solve.left_side ? "row" : "column",
               (long long)bm, (long long)m);
  return ir_shape_clone(x->m, b);
}

ir_shape *shape_infer_batch_norm(shape_ctx *x, ir_instr *in) {
  const ir_shape *s = OP(0);
  int64_t fi = in->attrs.u.batch_norm.feature_index;
  if (!is_array(s) || !ir_etype_is_float(s->et))
    return ERR("batch norm needs a floating-point operand");
  if (fi < 0 || fi >= s->rank)
    return ERR("feature_index %lld is out of range for rank %d", (long long)fi, s->rank);
  int64_t f = s->dims[fi];
  int n_vec = in->op == IR_OP_BATCH_NORM_TRAINING ? 2 : in->op == IR_OP_BATCH_NORM_INFERENCE ? 4 : 3;
  for (int i = 1; i <= n_vec; i++)
    if (!is_array(OP(i)) || OP(i)->rank != 1 || OP(i)->dims[0] != f || OP(i)->et != s->et)
      return ERR("operand %d must be %s[%lld] (one value per feature)", i, ir_etype_table[s->et].spelling, (long long)f);
  if (in->op == IR_OP_BATCH_NORM_GRAD && !ir_shape_equal(OP(4), s))
    return ERR("the gradient must have the operand's shape");
  if (in->op == IR_OP_BATCH_NORM_INFERENCE)
    return ir_shape_clone(x->m, s);
  ir_shape *e[3] = {ir_shape_clone(x->m, s), ir_shape_array(x->m, s->et, 1, &f), ir_shape_array(x->m, s->et, 1, &f)};
  return ir_shape_tuple(x->m, e, 3);
}

/* ---- collectives --------------------------------------------------------------------------------- */

static int group_size(shape_ctx *x, ir_instr *in) {
  const ir_replica_groups *g = &in->attrs.u.collective.replica_groups;
  uint64_t seen[16] = {0};
  int size = 0;
  for (int i = 0; i < g->n_groups; i++) {
    if (i && g->groups[i].n != size) {
      shape_error(x, in, "replica groups must all have the same size");
      return -1;
    }
    size = g->groups[i].n;
    for (int k = 0; k < g->groups[i].n; k++) {
      int64_t id = g->groups[i].v[k];
      if (id < 0 || id >= 1024 || (seen[id / 64] >> (id % 64) & 1)) {
        shape_error(x, in, "replica id %lld appears twice or is out of range in replica_groups", (long long)id);
        return -1;
      }
      seen[id / 64] |= 1ull << (id % 64);
    }
  }
  if (!g->n_groups || !size)
    size = (int)(x->m->replica_count > 0 ? x->m->replica_count : 1);
  return size;
}

ir_shape *shape_infer_collective(shape_ctx *x, ir_instr *in) {
  int gs = group_size(x, in);
  if (gs < 0)
    return NULL;
  const ir_shape *s = OP(0);
  switch (in->op) {
  case IR_OP_ALL_REDUCE:
    return in->n_operands == 1 ? ir_shape_clone(x->m, s) : NULL;
  case IR_OP_ALL_GATHER:
  case IR_OP_REDUCE_SCATTER: {
    if (in->n_operands != 1 || !is_array(s))
      return NULL;
    if (in->attrs.dimensions.n != 1 || in->attrs.dimensions.v[0] < 0 || in->attrs.dimensions.v[0] >= s->rank)
      return ERR("needs one dimension in range");
    int64_t d = in->attrs.dimensions.v[0];
    int64_t dims[64];
    memcpy(dims, s->dims, (size_t)s->rank * sizeof(int64_t));
    if (in->op == IR_OP_ALL_GATHER) {
      dims[d] *= gs;
    } else {
      if (dims[d] % gs)
        return ERR("dimension %lld (size %lld) is not divisible by the group size %d", (long long)d, (long long)dims[d], gs);
      dims[d] /= gs;
    }
    return ir_shape_array(x->m, s->et, s->rank, dims);
  }
  case IR_OP_ALL_TO_ALL:
    return in->n_operands == 1 ? ir_shape_clone(x->m, s) : NULL;
  case IR_OP_COLLECTIVE_PERMUTE: {
    const typeof(in->attrs.u.collective) *c = &in->attrs.u.collective;
    uint64_t src = 0, dst = 0;
    for (int i = 0; i < c->n_source_target_pairs; i++) {
      int64_t a = c->source_target_pairs[i].v[0], b = c->source_target_pairs[i].v[1];
      if (a < 0 || b < 0 || a >= 64 || b >= 64 || (src >> a & 1) || (dst >> b & 1))
        return ERR("source_target_pairs: each replica may be a source once and a target once");
      src |= 1ull << a;
      dst |= 1ull << b;
    }
    return in->n_operands == 1 ? ir_shape_clone(x->m, s) : NULL;
  }
  default:
    return NULL;
  }
}

/* ---- host transfer, channels, random numbers, fusion ------------------------------------------- */

static bool is_token(const ir_shape *s) { return s && s->et == IR_TOKEN; }

ir_shape *shape_infer_infeed(shape_ctx *x, ir_instr *in) {
  if (in->n_operands != 1 || !is_token(OP(0)))
    return ERR("infeed takes one token operand");
  const ir_shape *r = in->shape;
  if (r && (r->et != IR_TUPLE || r->n_elems != 2 || !is_token(r->elems[1])))
    return ERR("the result of infeed must be a (data, token) tuple");
  return NULL;
}

ir_shape *shape_infer_outfeed(shape_ctx *x, ir_instr *in) {
  if (in->n_operands != 2 || !is_token(OP(1)))
    return ERR("outfeed takes the data and a token");
  const ir_shape *os = in->attrs.u.outfeed.outfeed_shape;
  if (os && !ir_shape_equal(os, OP(0)))
    return ERR("outfeed_shape differs from the shape of the data");
  return ir_shape_scalar(x->m, IR_TOKEN);
}

ir_shape *shape_infer_send_recv(shape_ctx *x, ir_instr *in) {
  ir_module *m = x->m;
  switch (in->op) {
  case IR_OP_SEND: {
    if (!is_token(OP(1)))
      return ERR("send takes the data and a token");
    ir_shape *e[3] = {ir_shape_clone(m, OP(0)), ir_shape_scalar(m, IR_U32), ir_shape_scalar(m, IR_TOKEN)};
    return ir_shape_tuple(m, e, 3);
  }
  case IR_OP_SEND_DONE:
    if (OP(0)->et != IR_TUPLE || OP(0)->n_elems != 3)
      return ERR("send-done takes the (data, context, token) tuple of a send");
    return ir_shape_scalar(m, IR_TOKEN);
  case IR_OP_RECV:
    if (!is_token(OP(0)))
      return ERR("recv takes a token");
    return NULL; /* the received shape is written */
  case IR_OP_RECV_DONE: {
    const ir_shape *s = OP(0);
    if (s->et != IR_TUPLE || s->n_elems != 3)
      return ERR("recv-done takes the (data, context, token) tuple of a recv");
    ir_shape *e[2] = {ir_shape_clone(m, s->elems[0]), ir_shape_scalar(m, IR_TOKEN)};
    return ir_shape_tuple(m, e, 2);
  }
  default:
    return NULL;
  }
}

ir_shape *shape_infer_rng(shape_ctx *x, ir_instr *in) {
  const ir_shape *a = OP(0), *b = OP(1), *r = in->shape;
  if (!is_array(a) || !is_array(b) || a->rank || b->rank || a->et != b->et)
    return ERR("rng takes two scalars of one element type");
  if (r && r->et != a->et)
    return ERR("rng's result element type must be its parameters' (%s)", ir_etype_table[a->et].spelling);
  if (in->attrs.u.rng.distribution == IR_RNG_NORMAL && !ir_etype_is_float(a->et))
    return ERR("rng_normal needs floating-point parameters");
  return NULL;
}

ir_shape *shape_infer_rng_bit_generator(shape_ctx *x, ir_instr *in) {
  const ir_shape *st = OP(0), *r = in->shape;
  if (!is_array(st) || st->rank != 1 || (st->et != IR_U64 && st->et != IR_U32))
    return ERR("rng-bit-generator's state must be a u64 (or u32) vector");
  if (r && (r->et != IR_TUPLE || r->n_elems != 2 || !ir_shape_equal(r->elems[0], st)))
    return ERR("rng-bit-generator returns (state, data) with the state's shape first");
  if (r && ir_etype_table[r->elems[1]->et].cls != IR_ETC_UNSIGNED)
    return ERR("rng-bit-generator's data must be unsigned integers");
  return NULL;
}

ir_shape *shape_infer_fusion(shape_ctx *x, ir_instr *in) {
  if (in->n_called != 1)
    return ERR("fusion needs calls=%%computation");
  const ir_computation *c = in->called[0];
  if (c->n_params != in->n_operands)
    return ERR("fused computation %%%s takes %d parameters but fusion has %d operands", c->name.p, c->n_params,
               in->n_operands);
  for (int i = 0; i < in->n_operands; i++)
    if (!ir_shape_equal(c->params[i]->shape, OP(i)))
      return ERR("fused computation %%%s parameter %d does not match operand %d", c->name.p, i, i);
  return ir_shape_clone(x->m, c->root->shape);
}
