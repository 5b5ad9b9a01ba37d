/* infer_linalg.c — shape rules of the linear-algebra families: dot (batch, contracting and
 * free dimensions; the written element type may differ: preferred element type), ragged-dot,
 * scaled-dot, convolution (dim_labels, windows, feature and batch groups), fft (FFT, IFFT,
 * RFFT n/2+1, IRFFT), cholesky, triangular-solve and the batch-norm ops.  Rules follow the
 * semantics document and XLA's shape_inference.cc.  Tests: testdata/verify/err, shape_test.c.
 */
#include <stdio.h>
#include <string.h>

#include "shape/shape_internal.h"

/* ---- dot ---------------------------------------------------------------------------------- */

/* Dimension lists of one side are in range and used once; marks them in *used. */
static bool dot_side_ok(shape_ctx *x, ir_instr *in, const ir_shape *s, const ir_i64_list *const *lists, int n,
                        const char *side, uint64_t *used) {
  *used = 0;
  if (s->rank > 63)
    return shape_error(x, in, "%s rank %d is too large", side, s->rank);
  for (int k = 0; k < n; k++)
    for (int i = 0; i < lists[k]->n; i++) {
      int64_t v = lists[k]->v[i];
      if (v < 0 || v >= s->rank || (*used >> v & 1))
        return shape_error(x, in, "%s dimension %lld is out of range or used twice", side, (long long)v);
      *used |= 1ull << v;
    }
  return true;
}

/* Paired dimensions have equal sizes; `what` is "batch" or "contracting". */
static bool dot_pairs_ok(shape_ctx *x, ir_instr *in, const ir_shape *l, const ir_shape *r, const ir_i64_list *lp,
                         const ir_i64_list *rp, const char *what) {
  if (lp->n != rp->n)
    return shape_error(x, in, "lhs has %d %s dimensions but rhs has %d", lp->n, what, rp->n);
  for (int i = 0; i < lp->n; i++)
    if (l->dims[lp->v[i]] != r->dims[rp->v[i]])
      return shape_error(x, in, "lhs %s dimension %lld has size %lld but rhs %s dimension %lld has size %lld", what,
                         (long long)lp->v[i], (long long)l->dims[lp->v[i]], what, (long long)rp->v[i],
                         (long long)r->dims[rp->v[i]]);
  return true;
}

/* The result element type: the written one (preferred element type), else the operands'. */
static bool dot_result_et(shape_ctx *x, ir_instr *in, ir_etype a, ir_etype b, ir_etype *out) {
  if (in->shape && shape_is_array(in->shape)) {
    *out = in->shape->et;
    return true;
  }
  if (a != b)
    return shape_error(x, in, "operands have different element types (%s, %s); write the result shape",
                       shape_et_name(a), shape_et_name(b));
  *out = a;
  return true;
}

/* dims = batch, lhs free, rhs free (rhs dims in rhs_skip also dropped).  Returns the rank. */
static int dot_dims(const ir_shape *l, const ir_shape *r, const ir_dot_dnums *d, uint64_t lused, uint64_t rused,
                    int64_t *dims) {
  int n = 0;
  for (int i = 0; i < d->lhs_batch.n; i++)
    dims[n++] = l->dims[d->lhs_batch.v[i]];
  for (int i = 0; i < l->rank; i++)
    if (!(lused >> i & 1))
      dims[n++] = l->dims[i];
  for (int i = 0; i < r->rank; i++)
    if (!(rused >> i & 1))
      dims[n++] = r->dims[i];
  return n;
}

/* Validates lhs x rhs under d; rhs dims in extra_rhs (ragged-dot's group dim) are excluded
 * from the free dims.  Fills dims and returns the rank, or -1 after a diagnostic. */
static int dot_core(shape_ctx *x, ir_instr *in, const ir_shape *l, const ir_shape *r, const ir_dot_dnums *d,
                    const ir_i64_list *extra_rhs, int64_t *dims) {
  const ir_i64_list *ll[2] = {&d->lhs_batch, &d->lhs_contracting};
  const ir_i64_list *rl[3] = {&d->rhs_batch, &d->rhs_contracting, extra_rhs};
  uint64_t lused, rused;
  if (!dot_side_ok(x, in, l, ll, 2, "lhs", &lused) || !dot_side_ok(x, in, r, rl, 3, "rhs", &rused))
    return -1;
  if (!dot_pairs_ok(x, in, l, r, &d->lhs_batch, &d->rhs_batch, "batch") ||
      !dot_pairs_ok(x, in, l, r, &d->lhs_contracting, &d->rhs_contracting, "contracting"))
    return -1;
  return dot_dims(l, r, d, lused, rused, dims);
}

static ir_shape *infer_plain_dot(shape_ctx *x, ir_instr *in) {
  const ir_shape *l = shape_operand(in, 0), *r = shape_operand(in, 1);
  int64_t dims[2 * SHAPE_MAX_RANK];
  ir_i64_list none = {0};
  int n = dot_core(x, in, l, r, &in->attrs.u.dot.dnums, &none, dims);
  ir_etype et;
  if (n < 0 || !dot_result_et(x, in, l->et, r->et, &et))
    return NULL;
  return shape_array(x, et, n, dims);
}

/* ragged-dot(lhs, rhs, group_sizes): lhs_ragged_dims names one lhs dimension.  Non-contracting:
 * rhs has one group dimension (dropped from the result); contracting: the result gains a
 * leading group dimension; batch: the plain dot result. */
static ir_shape *infer_ragged_dot(shape_ctx *x, ir_instr *in) {
  const ir_shape *l = shape_operand(in, 0), *r = shape_operand(in, 1), *gs = shape_operand(in, 2);
  const ir_dot_dnums *d = &in->attrs.u.dot.dnums;
  if (d->lhs_ragged.n != 1)
    return shape_fail(x, in, "ragged-dot needs exactly one lhs_ragged_dims entry, not %d", d->lhs_ragged.n);
  int64_t rd = d->lhs_ragged.v[0];
  if (rd < 0 || rd >= l->rank)
    return shape_fail(x, in, "lhs_ragged_dims %lld is out of range for rank %d", (long long)rd, l->rank);
  bool contracting = shape_list_has(&d->lhs_contracting, rd), batch = shape_list_has(&d->lhs_batch, rd);
  bool free_dim = !contracting && !batch;
  if (free_dim != (d->rhs_group.n == 1) || d->rhs_group.n > 1)
    return shape_fail(x, in, "rhs_group_dims must name one rhs dimension exactly when the ragged dimension is a "
                      "non-contracting lhs dimension");
  if (!ir_etype_is_int(gs->et) || gs->rank < 1)
    return shape_fail(x, in, "group_sizes must be an integer array of rank >= 1, not %s", shape_et_name(gs->et));
  int64_t g = gs->dims[gs->rank - 1];
  int64_t dims[2 * SHAPE_MAX_RANK + 1];
  int n = dot_core(x, in, l, r, d, &d->rhs_group, dims + 1);
  ir_etype et;
  if (n < 0 || !dot_result_et(x, in, l->et, r->et, &et))
    return NULL;
  if (free_dim && r->dims[d->rhs_group.v[0]] != g)
    return shape_fail(x, in, "rhs group dimension %lld has size %lld but group_sizes has %lld groups",
                      (long long)d->rhs_group.v[0], (long long)r->dims[d->rhs_group.v[0]], (long long)g);
  if (!contracting)
    return shape_array(x, et, n, dims + 1);
  dims[0] = g;
  return shape_array(x, et, n + 1, dims);
}

/* A scale operand: rank 0 (per tensor) or the operand's rank with dims dividing it. */
static bool scale_ok(shape_ctx *x, ir_instr *in, int k, const ir_shape *s, const ir_shape *sc) {
  char a[256], b[256];
  if (sc->rank == 0)
    return true;
  bool ok = sc->rank == s->rank;
  for (int i = 0; ok && i < s->rank; i++)
    ok = sc->dims[i] >= 1 && s->dims[i] % sc->dims[i] == 0;
  if (!ok)
    return shape_error(x, in, "scale operand %d %s must be a scalar or divide the dimensions of %s", k,
                       shape_str(sc, a, sizeof a), shape_str(s, b, sizeof b));
  return true;
}

/* scaled-dot(lhs, rhs, lhs_scale, rhs_scale): the dot of lhs and rhs. */
static ir_shape *infer_scaled_dot(shape_ctx *x, ir_instr *in) {
  for (int i = 2; i < 4; i++)
    if (!shape_need_array(x, in, i))
      return NULL;
  if (!scale_ok(x, in, 2, shape_operand(in, 0), shape_operand(in, 2)) ||
      !scale_ok(x, in, 3, shape_operand(in, 1), shape_operand(in, 3)))
    return NULL;
  return infer_plain_dot(x, in);
}

ir_shape *shape_infer_dot(shape_ctx *x, ir_instr *in) {
  int want = in->op == IR_OP_DOT ? 2 : in->op == IR_OP_RAGGED_DOT ? 3 : 4;
  if (!shape_need_operands(x, in, want))
    return NULL;
  for (int i = 0; i < (want == 3 ? 3 : 2); i++)
    if (!shape_need_array(x, in, i))
      return NULL;
  if (in->op == IR_OP_RAGGED_DOT)
    return infer_ragged_dot(x, in);
  if (in->op == IR_OP_SCALED_DOT)
    return infer_scaled_dot(x, in);
  return infer_plain_dot(x, in);
}

/* ---- convolution -------------------------------------------------------------------------- */

/* The dims of one side of dim_labels (two named dims + spatial) are a permutation of 0..r-1. */
static bool labels_perm(int64_t a, int64_t b, const ir_i64_list *sp, int rank) {
  uint64_t seen = 0;
  int64_t all[SHAPE_MAX_RANK + 2];
  if (sp->n + 2 != rank || rank > SHAPE_MAX_RANK)
    return false;
  all[0] = a;
  all[1] = b;
  memcpy(all + 2, sp->v, (size_t)sp->n * sizeof(int64_t));
  for (int i = 0; i < rank; i++) {
    if (all[i] < 0 || all[i] >= rank || (seen >> all[i] & 1))
      return false;
    seen |= 1ull << all[i];
  }
  return true;
}

static bool conv_labels_ok(shape_ctx *x, ir_instr *in, const ir_conv_dnums *d, int lr, int rr) {
  int ns = d->input_spatial.n;
  if (d->kernel_spatial.n != ns || d->output_spatial.n != ns)
    return shape_error(x, in, "dim_labels name %d, %d and %d spatial dimensions; they must agree", ns,
                       d->kernel_spatial.n, d->output_spatial.n);
  if (lr != ns + 2 || rr != ns + 2)
    return shape_error(x, in, "dim_labels describe rank %d but the input has rank %d and the kernel rank %d", ns + 2,
                       lr, rr);
  if (!labels_perm(d->input_batch, d->input_feature, &d->input_spatial, lr) ||
      !labels_perm(d->kernel_input_feature, d->kernel_output_feature, &d->kernel_spatial, rr) ||
      !labels_perm(d->output_batch, d->output_feature, &d->output_spatial, lr))
    return shape_error(x, in, "dim_labels must name each dimension of the input, kernel and output exactly once");
  return true;
}

typedef typeof(((ir_attrs *)0)->u.conv) conv_attrs;

static bool conv_groups_ok(shape_ctx *x, ir_instr *in, const conv_attrs *c, int64_t in_feat, int64_t k_in,
                           int64_t k_out, int64_t batch) {
  int64_t fgc = c->feature_group_count, bgc = c->batch_group_count;
  if (fgc < 1 || bgc < 1)
    return shape_error(x, in, "feature_group_count (%lld) and batch_group_count (%lld) must be at least 1",
                       (long long)fgc, (long long)bgc);
  if (fgc > 1 && bgc > 1)
    return shape_error(x, in, "feature_group_count and batch_group_count cannot both be greater than 1");
  if (in_feat % fgc || in_feat / fgc != k_in)
    return shape_error(x, in, "input feature dimension (size %lld) must equal kernel input features (%lld) x "
                       "feature_group_count (%lld)", (long long)in_feat, (long long)k_in, (long long)fgc);
  if (k_out % fgc)
    return shape_error(x, in, "kernel output features (%lld) must be divisible by feature_group_count (%lld)",
                       (long long)k_out, (long long)fgc);
  if (batch % bgc || k_out % bgc)
    return shape_error(x, in, "batch (%lld) and kernel output features (%lld) must be divisible by "
                       "batch_group_count (%lld)", (long long)batch, (long long)k_out, (long long)bgc);
  return true;
}

ir_shape *shape_infer_convolution(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 2) || !shape_need_array(x, in, 0) || !shape_need_array(x, in, 1))
    return NULL;
  const ir_shape *lhs = shape_operand(in, 0), *rhs = shape_operand(in, 1);
  const conv_attrs *c = &in->attrs.u.conv;
  const ir_conv_dnums *d = &c->dnums;
  int ns = d->input_spatial.n;
  if (!conv_labels_ok(x, in, d, lhs->rank, rhs->rank))
    return NULL;
  if (c->window.n && c->window.n != ns)
    return shape_fail(x, in, "the window has %d dimensions but there are %d spatial dimensions", c->window.n, ns);
  int64_t k_out = rhs->dims[d->kernel_output_feature], batch = lhs->dims[d->input_batch];
  if (!conv_groups_ok(x, in, c, lhs->dims[d->input_feature], rhs->dims[d->kernel_input_feature], k_out, batch))
    return NULL;
  int64_t dims[SHAPE_MAX_RANK];
  dims[d->output_batch] = batch / c->batch_group_count;
  dims[d->output_feature] = k_out;
  for (int i = 0; i < ns; i++) {
    int64_t ksize = rhs->dims[d->kernel_spatial.v[i]];
    ir_window_dim w = {ksize, 1, 0, 0, 1, 1, false};
    if (c->window.n)
      w = c->window.dims[i];
    if (w.size != ksize)
      return shape_fail(x, in, "window size %lld of spatial dimension %d differs from the kernel's %lld",
                        (long long)w.size, i, (long long)ksize);
    int64_t o = shape_window_out(lhs->dims[d->input_spatial.v[i]], &w);
    if (o < 0)
      return shape_fail(x, in, "window dimension %d has a size, stride or dilation below 1", i);
    dims[d->output_spatial.v[i]] = o;
  }
  ir_etype et;
  if (!dot_result_et(x, in, lhs->et, rhs->et, &et))
    return NULL;
  return shape_array(x, et, lhs->rank, dims);
}

/* ---- fft ---------------------------------------------------------------------------------- */

/* The trailing dims of s equal the first n entries of len. */
static bool fft_dims_match(const ir_shape *s, const ir_i64_list *len, int n) {
  int first = s->rank - len->n;
  for (int i = 0; i < n; i++)
    if (s->dims[first + i] != len->v[i])
      return false;
  return true;
}

ir_shape *shape_infer_fft(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 1) || !shape_need_array(x, in, 0))
    return NULL;
  const ir_shape *s = shape_operand(in, 0);
  const ir_i64_list *len = &in->attrs.u.fft.length;
  if (len->n < 1 || len->n > 3 || len->n > s->rank || s->rank > SHAPE_MAX_RANK)
    return shape_fail(x, in, "fft_length must have 1 to 3 entries, no more than the operand's rank %d", s->rank);
  for (int i = 0; i < len->n; i++)
    if (len->v[i] < 0)
      return shape_fail(x, in, "fft_length entries must not be negative, not %lld", (long long)len->v[i]);
  int64_t dims[SHAPE_MAX_RANK], last = len->v[len->n - 1];
  memcpy(dims, s->dims, (size_t)s->rank * sizeof(int64_t));
  ir_etype et = s->et;
  bool cx = ir_etype_is_complex(s->et);
  switch (in->attrs.u.fft.type) {
  case IR_FFT_FFT:
  case IR_FFT_IFFT:
    /* As XLA's shape inference: any trailing dims (the operand is zero-padded or cut to
     * fft_length, the result has the operand's shape: runtime/src/kernels/rt_fft.c). */
    if (!cx)
      return shape_fail(x, in, "FFT and IFFT need a complex operand, not %s", shape_et_name(s->et));
    break;
  case IR_FFT_RFFT:
    if (s->et != IR_F32 && s->et != IR_F64)
      return shape_fail(x, in, "RFFT needs an f32 or f64 operand, not %s", shape_et_name(s->et));
    if (!fft_dims_match(s, len, len->n))
      return shape_fail(x, in, "fft_length does not match the operand's trailing dimensions");
    if (last != 0)
      dims[s->rank - 1] = last / 2 + 1;
    et = s->et == IR_F32 ? IR_C64 : IR_C128;
    break;
  case IR_FFT_IRFFT:
    if (!cx)
      return shape_fail(x, in, "IRFFT needs a complex operand, not %s", shape_et_name(s->et));
    if (!fft_dims_match(s, len, len->n - 1))
      return shape_fail(x, in, "fft_length does not match the operand's trailing dimensions");
    if ((s->dims[s->rank - 1] != 0 || last != 0) && s->dims[s->rank - 1] != last / 2 + 1)
      return shape_fail(x, in, "IRFFT's last operand dimension must be fft_length/2+1 = %lld, not %lld",
                        (long long)(last / 2 + 1), (long long)s->dims[s->rank - 1]);
    dims[s->rank - 1] = last;
    et = ir_etype_component(s->et);
    break;
  }
  return shape_array(x, et, s->rank, dims);
}

/* ---- cholesky, triangular-solve ------------------------------------------------------------- */

ir_shape *shape_infer_cholesky(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 1) || !shape_need_array(x, in, 0))
    return NULL;
  const ir_shape *a = shape_operand(in, 0);
  if (!ir_etype_is_float(a->et) && !ir_etype_is_complex(a->et))
    return shape_fail(x, in, "cholesky needs a floating-point or complex operand, not %s", shape_et_name(a->et));
  if (a->rank < 2 || a->dims[a->rank - 1] != a->dims[a->rank - 2])
    return shape_fail(x, in, "cholesky needs square matrices in the last two dimensions");
  return ir_shape_clone(x->m, a);
}

ir_shape *shape_infer_triangular_solve(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 2) || !shape_need_array(x, in, 0) || !shape_need_array(x, in, 1))
    return NULL;
  const ir_shape *a = shape_operand(in, 0), *b = shape_operand(in, 1);
  if ((!ir_etype_is_float(a->et) && !ir_etype_is_complex(a->et)) || a->et != b->et)
    return shape_fail(x, in, "triangular-solve needs a and b of one floating-point or complex type, not %s and %s",
                      shape_et_name(a->et), shape_et_name(b->et));
  if (a->rank < 2 || a->rank != b->rank)
    return shape_fail(x, in, "triangular-solve needs a and b of one rank (>= 2), not %d and %d", a->rank, b->rank);
  int r = a->rank;
  if (a->dims[r - 1] != a->dims[r - 2])
    return shape_fail(x, in, "a must be square in its last two dimensions");
  for (int i = 0; i < r - 2; i++)
    if (a->dims[i] != b->dims[i])
      return shape_fail(x, in, "a and b have different batch dimensions (dimension %d: %lld vs %lld)", i,
                        (long long)a->dims[i], (long long)b->dims[i]);
  bool left = in->attrs.u.triangular_solve.left_side;
  int64_t m = a->dims[r - 1], bm = left ? b->dims[r - 2] : b->dims[r - 1];
  if (bm != m)
    return shape_fail(x, in, "b's %s dimension (%lld) must equal a's size %lld", left ? "row" : "column",
                      (long long)bm, (long long)m);
  return ir_shape_clone(x->m, b);
}

/* ---- batch norm --------------------------------------------------------------------------- */

ir_shape *shape_infer_batch_norm(shape_ctx *x, ir_instr *in) {
  int n_ops = in->op == IR_OP_BATCH_NORM_TRAINING ? 3 : 5;
  if (!shape_need_operands(x, in, n_ops))
    return NULL;
  for (int i = 0; i < n_ops; i++)
    if (!shape_need_array(x, in, i))
      return NULL;
  const ir_shape *s = shape_operand(in, 0);
  int64_t fi = in->attrs.u.batch_norm.feature_index;
  if (!ir_etype_is_float(s->et))
    return shape_fail(x, in, "batch norm needs a floating-point operand, not %s", shape_et_name(s->et));
  if (fi < 0 || fi >= s->rank)
    return shape_fail(x, in, "feature_index %lld is out of range for rank %d", (long long)fi, s->rank);
  int64_t f = s->dims[fi];
  int n_vec = in->op == IR_OP_BATCH_NORM_GRAD ? 3 : n_ops - 1;
  for (int i = 1; i <= n_vec; i++) {
    const ir_shape *v = shape_operand(in, i);
    if (v->rank != 1 || v->dims[0] != f || v->et != s->et)
      return shape_fail(x, in, "operand %d must be %s[%lld] (one value per feature)", i, shape_et_name(s->et),
                        (long long)f);
  }
  char a[256], b[256];
  if (in->op == IR_OP_BATCH_NORM_GRAD && !shape_compatible(shape_operand(in, 4), s))
    return shape_fail(x, in, "the output gradient %s must have the operand's shape %s",
                      shape_str(shape_operand(in, 4), a, sizeof a), shape_str(s, b, sizeof b));
  if (in->op == IR_OP_BATCH_NORM_INFERENCE)
    return ir_shape_clone(x->m, s);
  ir_shape *e[3] = {ir_shape_clone(x->m, s), shape_array(x, s->et, 1, &f), shape_array(x, s->et, 1, &f)};
  return shape_tuple_of(x, e, 3);
}
