/* window.c — lowering of the windowed and indexed ops: reduce-window (padding, strides, base
 * and window dilation; the variadic ones and windows over 64 positions that are not running
 * folds: fused.c's loop kernel takes the others), gather (complex and bounded dynamic shapes:
 * fused.c takes the others; both use cg_gather_source, the index rule), scatter (batching
 * dimensions; one scatter position at a time, a window not wholly inside the operand skipped;
 * in place when its operand dies there), and select-and-scatter (windows over 64 positions,
 * base dilation, complex and dynamic shapes: fused.c takes the others; both use
 * cg_sas_element, the selection and scatter of one source element).  Loops over elements with
 * explicit index arithmetic, as in data.c.
 * cg_window_input, the input index under a window, is shared with convolution (conv.c).
 */
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_internal.h"

static LLVMValueRef leaf(cg_function *f, const ir_instr *op, int k) { return f->values[op->id].leaves[k]; }

static int64_t count_dims(const int64_t *dims, int n) {
  int64_t c = 1;
  for (int i = 0; i < n; i++)
    c *= dims[i];
  return c;
}

/* Branches to a fresh block when `cond` holds; returns the block to continue with after. */
static LLVMBasicBlockRef begin_if(cg_function *f, LLVMValueRef cond, const char *name) {
  cg_module *cm = f->cm;
  LLVMBasicBlockRef yes = LLVMAppendBasicBlockInContext(cm->ctx, f->fn, name);
  LLVMBasicBlockRef after = LLVMAppendBasicBlockInContext(cm->ctx, f->fn, "endif");
  LLVMBuildCondBr(cm->b, cond, yes, after);
  LLVMPositionBuilderAtEnd(cm->b, yes);
  return after;
}

static void end_if(cg_function *f, LLVMBasicBlockRef after) {
  LLVMBuildBr(f->cm->b, after);
  LLVMPositionBuilderAtEnd(f->cm->b, after);
}

bool cg_window_dim_plain(const ir_window_dim *wd) {
  return wd->size == 1 && wd->stride == 1 && wd->pad_lo == 0 && wd->pad_hi == 0 && wd->lhs_dilate == 1 &&
         wd->rhs_dilate == 1;
}

LLVMValueRef cg_window_input(cg_function *f, const ir_window_dim *wd, int64_t in_dim, LLVMValueRef o, LLVMValueRef w,
                             LLVMValueRef *out_idx) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  LLVMValueRef pos = LLVMBuildAdd(b, LLVMBuildMul(b, o, cg_i64(cm, wd->stride), ""),
                                  LLVMBuildMul(b, w, cg_i64(cm, wd->rhs_dilate), ""), "");
  pos = LLVMBuildSub(b, pos, cg_i64(cm, wd->pad_lo), "");
  LLVMValueRef ok = LLVMBuildICmp(b, LLVMIntSGE, pos, cg_i64(cm, 0), "");
  LLVMValueRef safe = LLVMBuildSelect(b, ok, pos, cg_i64(cm, 0), "");
  if (wd->lhs_dilate > 1) {
    LLVMValueRef rem = LLVMBuildURem(b, safe, cg_i64(cm, wd->lhs_dilate), "");
    ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntEQ, rem, cg_i64(cm, 0), ""), "");
    safe = LLVMBuildUDiv(b, safe, cg_i64(cm, wd->lhs_dilate), "");
  }
  ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntSLT, safe, cg_i64(cm, in_dim), ""), "");
  *out_idx = LLVMBuildSelect(b, ok, safe, cg_i64(cm, 0), "");
  return ok;
}

void cg_lower_reduce_window(cg_function *f, ir_instr *in) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  int n = in->n_operands / 2;
  const ir_shape *s = in->operands[0]->shape;
  const ir_window *w = &in->attrs.u.reduce_window.window;
  cg_value out = cg_result_value(f, in);
  f->values[in->id] = out;
  const ir_shape *os = out.shapes[0];
  int rank = s->rank;
  int64_t wsizes[64];
  for (int d = 0; d < rank; d++)
    wsizes[d] = w->dims[d].size;
  ir_etype ets[64];
  LLVMValueRef acc[32];
  for (int i = 0; i < n; i++) {
    ets[i] = ets[n + i] = in->operands[i]->shape->et;
    acc[i] = cg_entry_alloca(f, cg_compute_type(cm, ets[i]), "acc");
  }
  cg_loop outer = cg_loop_begin(f, cg_i64(cm, count_dims(os->dims, rank)), "rw.out");
  LLVMValueRef oi[64], wi[64], ii[64];
  cg_unflatten(f, outer.i, os->dims, rank, oi);
  for (int i = 0; i < n; i++)
    LLVMBuildStore(b, cg_load(f, ets[i], leaf(f, in->operands[n + i], 0), cg_i64(cm, 0)), acc[i]);
  cg_loop inner = cg_loop_begin(f, cg_i64(cm, count_dims(wsizes, rank)), "rw.win");
  cg_unflatten(f, inner.i, wsizes, rank, wi);
  LLVMValueRef ok = LLVMConstInt(cm->i1, 1, 0);
  for (int d = 0; d < rank; d++)
    ok = LLVMBuildAnd(b, ok, cg_window_input(f, &w->dims[d], s->dims[d], oi[d], wi[d], &ii[d]), "");
  LLVMBasicBlockRef after = begin_if(f, ok, "rw.in");
  LLVMValueRef lin = cg_flatten(f, ii, s->dims, rank), vals[64], res[32];
  for (int i = 0; i < n; i++) {
    vals[i] = LLVMBuildLoad2(b, cg_compute_type(cm, ets[i]), acc[i], "a");
    vals[n + i] = cg_load(f, ets[i], leaf(f, in->operands[i], 0), lin);
  }
  cg_call_scalar(f, in->called[0], vals, ets, 2 * n, res, ets, n);
  for (int i = 0; i < n; i++)
    LLVMBuildStore(b, res[i], acc[i]);
  end_if(f, after);
  cg_loop_end(f, &inner);
  for (int i = 0; i < n; i++)
    cg_store(f, ets[i], out.leaves[i], outer.i, LLVMBuildLoad2(b, cg_compute_type(cm, ets[i]), acc[i], "a"));
  cg_loop_end(f, &outer);
}

/* The index-vector component k of the indices at batch position `batch` (indices dims without
 * index_vector_dim), as i64. */
static LLVMValueRef index_component(cg_function *f, const ir_instr *idx_op, int64_t ivd, LLVMValueRef *batch, int k) {
  const ir_shape *is = idx_op->shape;
  LLVMValueRef full[64];
  for (int d = 0, kb = 0; d < is->rank; d++)
    full[d] = d == ivd ? cg_i64(f->cm, k) : batch[kb++];
  LLVMValueRef v = cg_load(f, is->et, leaf(f, idx_op, 0), is->rank ? cg_flatten(f, full, is->dims, is->rank) : cg_i64(f->cm, 0));
  return LLVMBuildIntCast2(f->cm->b, v, f->cm->i64, ir_etype_is_signed(is->et), "start");
}

static LLVMValueRef clamp_i64(cg_function *f, LLVMValueRef v, int64_t hi) {
  LLVMBuilderRef b = f->cm->b;
  LLVMValueRef zero = cg_i64(f->cm, 0), h = cg_i64(f->cm, hi < 0 ? 0 : hi);
  v = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, v, zero, ""), zero, v, "");
  return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSGT, v, h, ""), h, v, "");
}

static bool has(const ir_i64_list *l, int64_t v) { return ir_i64_list_find(l, v) >= 0; }

static int position(const ir_i64_list *l, int64_t v) { return ir_i64_list_find(l, v); }

void cg_gather_source(cg_function *f, const ir_instr *in, LLVMValueRef *oi, cg_gather_component_fn *component,
                      void *arg, LLVMValueRef *src) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  const ir_shape *s = in->operands[0]->shape, *r = in->shape;
  typeof(in->attrs.u.gather) *g = &in->attrs.u.gather;
  int64_t ivd = g->index_vector_dim;
  LLVMValueRef batch[64], offs[64], ibatch[64];
  int nb = 0, no = 0;
  for (int d = 0; d < r->rank; d++) {
    if (has(&g->offset_dims, d))
      offs[no++] = oi[d];
    else
      batch[nb++] = oi[d];
  }
  /* Batch positions index the indices array without index_vector_dim. */
  for (int d = 0, kb = 0, k = 0; d < in->operands[1]->shape->rank; d++)
    if (d != ivd)
      ibatch[k++] = batch[kb++];
  for (int d = 0, ko = 0; d < s->rank; d++) {
    int sm = position(&g->start_index_map, d), bd = position(&g->operand_batching_dims, d);
    LLVMValueRef start = cg_i64(cm, 0);
    if (sm >= 0) /* component sm of the index vector, clamped to [0, dim - slice size] */
      start = clamp_i64(f, component(f, sm, ibatch, arg), s->dims[d] - g->slice_sizes.v[d]);
    if (bd >= 0) {
      int64_t idim = g->start_indices_batching_dims.v[bd];
      src[d] = ibatch[idim - (idim > ivd ? 1 : 0)];
    } else if (has(&g->collapsed_slice_dims, d)) {
      src[d] = start;
    } else {
      src[d] = LLVMBuildAdd(b, start, offs[ko++], "");
    }
  }
}

/* cg_gather_source's component: loaded from the indices buffer. */
static LLVMValueRef buffer_component(cg_function *f, int k, LLVMValueRef *ibatch, void *arg) {
  const ir_instr *in = arg;
  return index_component(f, in->operands[1], in->attrs.u.gather.index_vector_dim, ibatch, k);
}

void cg_lower_gather(cg_function *f, ir_instr *in, LLVMValueRef out) {
  cg_module *cm = f->cm;
  const ir_instr *op = in->operands[0];
  const ir_shape *s = op->shape, *r = in->shape;
  cg_loop l = cg_loop_begin(f, cg_i64(cm, count_dims(r->dims, r->rank)), "gather");
  LLVMValueRef oi[64], src[64];
  cg_unflatten(f, l.i, r->dims, r->rank, oi);
  cg_gather_source(f, in, oi, buffer_component, in, src);
  LLVMValueRef v = cg_load(f, s->et, leaf(f, op, 0), cg_flatten(f, src, s->dims, s->rank));
  cg_store(f, r->et, out, l.i, v);
  cg_loop_end(f, &l);
}

/* Scatter, one scatter position at a time (the update's dimensions outside
 * update_window_dims, row-major): its start indices loaded and checked once, not clamped (a
 * window that does not lie wholly inside the operand is skipped, as XLA does), then
 * its window walked by nested loops, the update's and the operand's minor elements
 * contiguous where the window's last dimension is both's last, so that the innermost loop
 * vectorizes.  Two updates of one element apply in scatter-position order (XLA's order).
 * outs[i] may be operand i's own buffer (a scatter of one operand that dies here updates it in
 * place, as a dynamic-update-slice does: buffer_plan.c, lower.c); else operand i is copied. */
void cg_lower_scatter_into(cg_function *f, ir_instr *in, const LLVMValueRef *outs) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  int n = (in->n_operands - 1) / 2;
  const ir_instr *idx = in->operands[n];
  const ir_shape *s = in->operands[0]->shape, *u = in->operands[n + 1]->shape;
  typeof(in->attrs.u.scatter) *sc = &in->attrs.u.scatter;
  int64_t ivd = sc->index_vector_dim;
  ir_etype ets[64];
  for (int i = 0; i < n; i++) {
    ets[i] = ets[n + i] = in->operands[i]->shape->et;
    cg_copy_leaf_if_distinct(f, outs[i], leaf(f, in->operands[i], 0), s); /* in place: the same buffer */
  }
  /* Sizes of the update window in operand space (for the in-bounds check). */
  int64_t wsize[64], sdims[64];
  for (int d = 0, kw = 0; d < s->rank; d++)
    wsize[d] = has(&sc->inserted_window_dims, d) || has(&sc->input_batching_dims, d)
                   ? 1 : u->dims[sc->update_window_dims.v[kw++]];
  int ns = 0, nw = sc->update_window_dims.n;
  for (int d = 0; d < u->rank; d++)
    if (!has(&sc->update_window_dims, d))
      sdims[ns++] = u->dims[d];
  cg_loop l = cg_loop_begin(f, cg_i64(cm, count_dims(sdims, ns)), "scatter.at");
  LLVMValueRef ui[64], sidx[64], dst[64];
  cg_unflatten(f, l.i, sdims, ns, sidx);
  LLVMValueRef ibatch[64];
  for (int d = 0, ks = 0, k = 0; d < idx->shape->rank; d++)
    if (d != ivd)
      ibatch[k++] = sidx[ks++];
  LLVMValueRef ok = LLVMConstInt(cm->i1, 1, 0);
  for (int d = 0; d < s->rank; d++) {
    int sm = position(&sc->scatter_dims_to_operand_dims, d), bd = position(&sc->input_batching_dims, d);
    LLVMValueRef start = sm >= 0 ? index_component(f, idx, ivd, ibatch, sm) : cg_i64(cm, 0);
    /* The whole window must lie inside the operand, else the update is skipped (XLA). */
    ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntSGE, start, cg_i64(cm, 0), ""), "");
    ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntSLE, start, cg_i64(cm, s->dims[d] - wsize[d]), ""), "");
    if (bd >= 0) {
      int64_t idim = sc->scatter_indices_batching_dims.v[bd];
      dst[d] = ibatch[idim - (idim > ivd ? 1 : 0)];
    } else {
      dst[d] = start;
    }
  }
  LLVMBasicBlockRef after = begin_if(f, ok, "scatter.in");
  cg_loop win[64];
  for (int k = 0; k < nw; k++)
    win[k] = cg_loop_begin(f, cg_i64(cm, u->dims[sc->update_window_dims.v[k]]), "scatter.win");
  LLVMValueRef at[64];
  for (int d = 0, kw = 0; d < s->rank; d++)
    at[d] = has(&sc->inserted_window_dims, d) || has(&sc->input_batching_dims, d)
                ? dst[d] : LLVMBuildAdd(b, dst[d], win[kw++].i, "");
  for (int d = 0, ks = 0, kw = 0; d < u->rank; d++)
    ui[d] = has(&sc->update_window_dims, d) ? win[kw++].i : sidx[ks++];
  LLVMValueRef lin = cg_flatten(f, at, s->dims, s->rank), ulin = cg_flatten(f, ui, u->dims, u->rank);
  LLVMValueRef vals[64], res[32];
  for (int i = 0; i < n; i++) {
    vals[i] = cg_load(f, ets[i], outs[i], lin);
    vals[n + i] = cg_load(f, ets[i], leaf(f, in->operands[n + 1 + i], 0), ulin);
  }
  cg_call_scalar(f, in->called[0], vals, ets, 2 * n, res, ets, n);
  for (int i = 0; i < n; i++)
    cg_store(f, ets[i], outs[i], lin, res[i]);
  for (int k = nw - 1; k >= 0; k--)
    cg_loop_end(f, &win[k]);
  end_if(f, after);
  cg_loop_end(f, &l);
}

void cg_lower_scatter(cg_function *f, ir_instr *in) {
  cg_value out = cg_result_value(f, in);
  f->values[in->id] = out;
  cg_lower_scatter_into(f, in, out.leaves);
}

/* The selection over a window of more than CG_SAS_UNROLL_MAX positions, or of an empty
 * operand: a loop over the positions, the candidate loaded only inside the operand. */
static void sas_select_loop(cg_function *f, const ir_instr *in, LLVMValueRef op, LLVMValueRef *oi,
                            LLVMValueRef *have_out, LLVMValueRef *at_out) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  const ir_shape *s = in->operands[0]->shape;
  const ir_window *w = &in->attrs.u.reduce_window.window;
  ir_etype et = s->et, pair[2] = {et, et}, pred_t = IR_PRED;
  LLVMTypeRef ct = cg_compute_type(cm, et);
  int rank = s->rank;
  int64_t wsizes[64];
  for (int d = 0; d < rank; d++)
    wsizes[d] = w->dims[d].size;
  LLVMValueRef sel_idx = cg_entry_alloca(f, cm->i64, "sel.idx"), sel_val = cg_entry_alloca(f, ct, "sel.val");
  LLVMValueRef have = cg_entry_alloca(f, cm->i1, "sel.have");
  LLVMBuildStore(b, LLVMConstInt(cm->i1, 0, 0), have);
  LLVMBuildStore(b, cg_i64(cm, 0), sel_idx);
  cg_loop inner = cg_loop_begin(f, cg_i64(cm, count_dims(wsizes, rank)), "sas.win");
  LLVMValueRef wi[64], ii[64];
  cg_unflatten(f, inner.i, wsizes, rank, wi);
  LLVMValueRef ok = LLVMConstInt(cm->i1, 1, 0);
  for (int d = 0; d < rank; d++)
    ok = LLVMBuildAnd(b, ok, cg_window_input(f, &w->dims[d], s->dims[d], oi[d], wi[d], &ii[d]), "");
  LLVMBasicBlockRef after = begin_if(f, ok, "sas.in");
  LLVMValueRef lin = cg_flatten(f, ii, s->dims, rank);
  LLVMValueRef cand = cg_load(f, et, op, lin);
  LLVMValueRef cur = LLVMBuildLoad2(b, ct, sel_val, "cur"), keep;
  cg_call_scalar(f, in->called[0], (LLVMValueRef[]){cur, cand}, pair, 2, &keep, &pred_t, 1);
  LLVMValueRef had = LLVMBuildLoad2(b, cm->i1, have, "had");
  LLVMValueRef take = LLVMBuildOr(b, LLVMBuildNot(b, had, ""), LLVMBuildNot(b, keep, ""), "take");
  LLVMBuildStore(b, LLVMBuildSelect(b, take, cand, cur, ""), sel_val);
  LLVMBuildStore(b, LLVMBuildSelect(b, take, lin, LLVMBuildLoad2(b, cm->i64, sel_idx, ""), ""), sel_idx);
  LLVMBuildStore(b, LLVMConstInt(cm->i1, 1, 0), have);
  end_if(f, after);
  cg_loop_end(f, &inner);
  *have_out = LLVMBuildLoad2(b, cm->i1, have, "have");
  *at_out = LLVMBuildLoad2(b, cm->i64, sel_idx, "at");
}

/* The selection over a window of at most CG_SAS_UNROLL_MAX positions of a non-empty operand,
 * unrolled: a position in the padding (or between base-dilated elements) loads a clamped
 * element and a select ignores it. */
static void sas_select_unrolled(cg_function *f, const ir_instr *in, LLVMValueRef op, LLVMValueRef *oi,
                                LLVMValueRef *have_out, LLVMValueRef *at_out) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  const ir_shape *s = in->operands[0]->shape;
  const ir_window *w = &in->attrs.u.reduce_window.window;
  ir_etype et = s->et, pt = IR_PRED, pair[2] = {et, et};
  int rank = s->rank;
  int64_t count = 1;
  for (int d = 0; d < rank; d++)
    count *= w->dims[d].size;
  LLVMValueRef ii[64];
  LLVMValueRef have = LLVMConstInt(cm->i1, 0, 0), cur = LLVMConstNull(cg_compute_type(cm, et)), at = cg_i64(cm, 0);
  for (int64_t p = 0; p < count; p++) { /* window position p, the last dimension fastest */
    LLVMValueRef ok = LLVMConstInt(cm->i1, 1, 0);
    int64_t q = p;
    for (int d = rank - 1; d >= 0; d--) {
      const ir_window_dim *wd = &w->dims[d];
      int64_t pos = q % wd->size;
      q /= wd->size;
      if (cg_window_dim_plain(wd))
        ii[d] = oi[d]; /* a dimension the window leaves alone: the source's own index */
      else
        ok = LLVMBuildAnd(b, ok, cg_window_input(f, wd, s->dims[d], oi[d], cg_i64(cm, pos), &ii[d]), "");
    }
    LLVMValueRef lin = cg_flatten(f, ii, s->dims, rank), cand = cg_load(f, et, op, lin), keep;
    cg_call_scalar(f, in->called[0], (LLVMValueRef[]){cur, cand}, pair, 2, &keep, &pt, 1);
    LLVMValueRef take = LLVMBuildAnd(b, ok, LLVMBuildOr(b, LLVMBuildNot(b, have, ""), LLVMBuildNot(b, keep, ""), ""), "take");
    cur = LLVMBuildSelect(b, take, cand, cur, "");
    at = LLVMBuildSelect(b, take, lin, at, "");
    have = LLVMBuildOr(b, have, ok, "");
  }
  *have_out = have;
  *at_out = at;
}

void cg_sas_element(cg_function *f, const ir_instr *in, LLVMValueRef op, LLVMValueRef src, LLVMValueRef res,
                    LLVMValueRef *oi) {
  const ir_shape *s = in->operands[0]->shape, *ss = in->operands[1]->shape;
  const ir_window *w = &in->attrs.u.reduce_window.window;
  ir_etype et = s->et, pair[2] = {et, et};
  int64_t count = 1;
  for (int d = 0; d < s->rank; d++)
    count *= w->dims[d].size;
  LLVMValueRef have, at, sum;
  if (count <= CG_SAS_UNROLL_MAX && count_dims(s->dims, s->rank) > 0)
    sas_select_unrolled(f, in, op, oi, &have, &at);
  else
    sas_select_loop(f, in, op, oi, &have, &at);
  LLVMBasicBlockRef done = begin_if(f, have, "sas.scatter");
  LLVMValueRef vals[2] = {cg_load(f, et, res, at), cg_load(f, et, src, cg_flatten(f, oi, ss->dims, s->rank))};
  cg_call_scalar(f, in->called[1], vals, pair, 2, &sum, &et, 1);
  cg_store(f, et, res, at, sum);
  end_if(f, done);
}

void cg_lower_select_and_scatter(cg_function *f, ir_instr *in, LLVMValueRef out) {
  cg_module *cm = f->cm;
  const ir_instr *op = in->operands[0], *src = in->operands[1], *init = in->operands[2];
  const ir_shape *s = op->shape, *ss = src->shape;
  ir_etype et = s->et;
  int rank = s->rank;
  LLVMValueRef iv = cg_load(f, et, leaf(f, init, 0), cg_i64(cm, 0));
  cg_loop fill = cg_loop_begin(f, cg_i64(cm, count_dims(s->dims, rank)), "sas.fill");
  cg_store(f, et, out, fill.i, iv);
  cg_loop_end(f, &fill);
  cg_loop outer = cg_loop_begin(f, cg_i64(cm, count_dims(ss->dims, rank)), "sas.src");
  LLVMValueRef oi[64];
  cg_unflatten(f, outer.i, ss->dims, rank, oi);
  cg_sas_element(f, in, leaf(f, op, 0), leaf(f, src, 0), out, oi);
  cg_loop_end(f, &outer);
}
