/* batchnorm.c — lowering of batch-norm-training (per-feature mean and biased variance over
 * every other dimension, then normalize), batch-norm-inference (normalize with the given
 * mean and variance):  y = (x - mean) / sqrt(var + epsilon) * scale + offset, and
 * batch-norm-grad (the operation semantics' formulas, N elements per feature):
 *   grad_offset = sum(dy),  grad_scale = sum(dy * (x - mean)) / sqrt(var + epsilon),
 *   grad_operand = scale / sqrt(var + epsilon) * (dy - sum(dy) / N
 *                  - (x - mean) * sum(dy * (x - mean)) / (N * (var + epsilon))).
 * Sums over a feature's elements accumulate in f64 (two passes for the variance, so that it is
 * never negative); results are rounded to the element type.
 */
#include "codegen/cg_internal.h"

static int64_t count(const ir_shape *s) {
  int64_t n;
  ir_shape_num_elements(s, &n);
  return n;
}

static LLVMValueRef leaf(cg_function *f, const ir_instr *op) { return f->values[op->id].leaves[0]; }

/* Statistics accumulate in f64 whatever the element type; to_acc widens a compute-type value
 * (f32 or f64), to_compute narrows an accumulator back. */
static LLVMValueRef to_acc(cg_function *f, LLVMValueRef v) {
  return LLVMTypeOf(v) == f->cm->f64 ? v : LLVMBuildFPExt(f->cm->b, v, f->cm->f64, "");
}

static LLVMValueRef to_compute(cg_function *f, LLVMValueRef v, LLVMTypeRef ct) {
  return ct == f->cm->f64 ? v : LLVMBuildFPTrunc(f->cm->b, v, ct, "");
}

/* The elements of one feature k: row-major x is [outer, nf, inner], so the loops over outer and
 * inner visit exactly the elements with index k in the feature dimension (linear work in all). */
typedef struct {
  cg_loop outer, inner;
  LLVMValueRef i; /* the linear index of the element */
} feature_elems;

static feature_elems feature_elems_begin(cg_function *f, const ir_shape *s, int64_t fi, LLVMValueRef k) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < s->rank; d++) {
    if (d < fi)
      outer *= s->dims[d];
    else if (d > fi)
      inner *= s->dims[d];
  }
  feature_elems e;
  e.outer = cg_loop_begin(f, cg_i64(cm, outer), "bn.outer");
  LLVMValueRef row = LLVMBuildAdd(b, LLVMBuildMul(b, e.outer.i, cg_i64(cm, s->dims[fi]), ""), k, "");
  LLVMValueRef base = LLVMBuildMul(b, row, cg_i64(cm, inner), "");
  e.inner = cg_loop_begin(f, cg_i64(cm, inner), "bn.inner");
  e.i = LLVMBuildAdd(b, base, e.inner.i, "bn.i");
  return e;
}

static void feature_elems_end(cg_function *f, feature_elems *e) {
  cg_loop_end(f, &e->inner);
  cg_loop_end(f, &e->outer);
}

static LLVMValueRef var_plus_epsilon(cg_function *f, const ir_instr *in, LLVMTypeRef ct, LLVMValueRef var) {
  return LLVMBuildFAdd(f->cm->b, var, LLVMConstReal(ct, in->attrs.u.batch_norm.epsilon), "var.eps");
}

static LLVMValueRef sqrt_of(cg_function *f, LLVMTypeRef ct, LLVMValueRef x) {
  LLVMValueRef sqrt_fn = cg_intrinsic(f->cm, "llvm.sqrt", ct, 1);
  return LLVMBuildCall2(f->cm->b, LLVMGlobalGetValueType(sqrt_fn), sqrt_fn, &x, 1, "");
}

/* y[i] = (x[i] - mean[f]) * rsqrt(var[f] + eps) * scale[f] + offset[f] over all elements. */
static void normalize(cg_function *f, ir_instr *in, LLVMValueRef out, LLVMValueRef mean, LLVMValueRef var) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  const ir_shape *s = in->operands[0]->shape;
  ir_etype et = s->et;
  LLVMTypeRef ct = cg_compute_type(cm, et);
  int64_t fi = in->attrs.u.batch_norm.feature_index;
  cg_loop l = cg_loop_begin(f, cg_i64(cm, count(s)), "bn.norm");
  LLVMValueRef idx[64];
  cg_unflatten(f, l.i, s->dims, s->rank, idx);
  LLVMValueRef k = idx[fi];
  LLVMValueRef x = cg_load(f, et, leaf(f, in->operands[0]), l.i);
  LLVMValueRef m = cg_load(f, et, mean, k), v = cg_load(f, et, var, k);
  LLVMValueRef sc = cg_load(f, et, leaf(f, in->operands[1]), k), off = cg_load(f, et, leaf(f, in->operands[2]), k);
  LLVMValueRef denom = sqrt_of(f, ct, var_plus_epsilon(f, in, ct, v));
  LLVMValueRef y = LLVMBuildFDiv(b, LLVMBuildFSub(b, x, m, ""), denom, "");
  y = LLVMBuildFAdd(b, LLVMBuildFMul(b, y, sc, ""), off, "");
  cg_store(f, et, out, l.i, y);
  cg_loop_end(f, &l);
}

/* batch-norm-grad(x, scale, mean, var, dy) -> (grad_operand, grad_scale, grad_offset), one
 * feature at a time: the two sums over its elements, then its c, d and scale / sqrt(var + eps)
 * as scalars, then its elements of grad_operand. */
static void lower_grad(cg_function *f, ir_instr *in) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  const ir_shape *s = in->operands[0]->shape;
  ir_etype et = s->et;
  LLVMTypeRef ct = cg_compute_type(cm, et);
  LLVMValueRef x_buf = leaf(f, in->operands[0]), scale_buf = leaf(f, in->operands[1]);
  LLVMValueRef mean_buf = leaf(f, in->operands[2]), var_buf = leaf(f, in->operands[3]);
  LLVMValueRef dy_buf = leaf(f, in->operands[4]);
  cg_value v = cg_result_value(f, in);
  f->values[in->id] = v;
  int64_t fi = in->attrs.u.batch_norm.feature_index, nf = s->dims[fi];
  int64_t per_feature = nf ? count(s) / nf : 0;
  LLVMValueRef n = LLVMConstReal(ct, (double)(per_feature ? per_feature : 1));
  LLVMTypeRef acc_t = cm->f64;
  LLVMValueRef sum_dy = cg_entry_alloca(f, acc_t, "bn.sdy"), sum_dyxm = cg_entry_alloca(f, acc_t, "bn.sdyxm");
  cg_loop lf = cg_loop_begin(f, cg_i64(cm, nf), "bn.feat");
  LLVMBuildStore(b, LLVMConstNull(acc_t), sum_dy);
  LLVMBuildStore(b, LLVMConstNull(acc_t), sum_dyxm);
  LLVMValueRef mean = cg_load(f, et, mean_buf, lf.i), var = cg_load(f, et, var_buf, lf.i);
  LLVMValueRef mean_acc = to_acc(f, mean);
  feature_elems e = feature_elems_begin(f, s, fi, lf.i);
  LLVMValueRef dy = to_acc(f, cg_load(f, et, dy_buf, e.i));
  LLVMValueRef xm = LLVMBuildFSub(b, to_acc(f, cg_load(f, et, x_buf, e.i)), mean_acc, "");
  LLVMBuildStore(b, LLVMBuildFAdd(b, LLVMBuildLoad2(b, acc_t, sum_dy, ""), dy, ""), sum_dy);
  LLVMBuildStore(b, LLVMBuildFAdd(b, LLVMBuildLoad2(b, acc_t, sum_dyxm, ""), LLVMBuildFMul(b, dy, xm, ""), ""), sum_dyxm);
  feature_elems_end(f, &e);
  LLVMValueRef sdy = to_compute(f, LLVMBuildLoad2(b, acc_t, sum_dy, ""), ct);
  LLVMValueRef sdyxm = to_compute(f, LLVMBuildLoad2(b, acc_t, sum_dyxm, ""), ct);
  LLVMValueRef var_eps = var_plus_epsilon(f, in, ct, var);
  LLVMValueRef rs = LLVMBuildFDiv(b, LLVMConstReal(ct, 1.0), sqrt_of(f, ct, var_eps), "rsqrt");
  cg_store(f, et, v.leaves[2], lf.i, sdy);
  cg_store(f, et, v.leaves[1], lf.i, LLVMBuildFMul(b, sdyxm, rs, ""));
  LLVMValueRef c = LLVMBuildFDiv(b, sdyxm, LLVMBuildFMul(b, n, var_eps, ""), "c");
  LLVMValueRef d = LLVMBuildFDiv(b, sdy, n, "d");
  LLVMValueRef g = LLVMBuildFMul(b, cg_load(f, et, scale_buf, lf.i), rs, "g");
  e = feature_elems_begin(f, s, fi, lf.i);
  LLVMValueRef x_mean = LLVMBuildFSub(b, cg_load(f, et, x_buf, e.i), mean, "");
  LLVMValueRef t = LLVMBuildFSub(b, LLVMBuildFSub(b, cg_load(f, et, dy_buf, e.i), d, ""), LLVMBuildFMul(b, c, x_mean, ""), "");
  cg_store(f, et, v.leaves[0], e.i, LLVMBuildFMul(b, g, t, ""));
  feature_elems_end(f, &e);
  cg_loop_end(f, &lf);
}

/* f32: the runtime's kernels (runtime/src/kernels/rt_batchnorm.c): the same formulas, split
 * over the thread pool by feature, each feature's f64 sums in 16 fixed lanes (the same bits for
 * any thread count and CPU; the loops below keep one sequential sum for the other types). */
static void lower_f32_by_runtime(cg_function *f, ir_instr *in) {
  cg_module *cm = f->cm;
  const ir_shape *s = in->operands[0]->shape;
  int64_t fi = in->attrs.u.batch_norm.feature_index, outer = 1, inner = 1;
  for (int d = 0; d < s->rank; d++) {
    if (d < fi)
      outer *= s->dims[d];
    else if (d > fi)
      inner *= s->dims[d];
  }
  LLVMValueRef dims[4] = {cg_i64(cm, outer), cg_i64(cm, s->dims[fi]), cg_i64(cm, inner),
                          LLVMConstReal(cm->f32, in->attrs.u.batch_norm.epsilon)};
  cg_value v = cg_result_value(f, in);
  f->values[in->id] = v;
  LLVMValueRef a[13] = {f->ctx_arg};
  int n = 1;
  int n_in = in->op == IR_OP_BATCH_NORM_TRAINING ? 3 : 5;
  for (int k = 0; k < n_in; k++)
    a[n++] = leaf(f, in->operands[k]);
  for (int k = 0; k < 4; k++)
    a[n++] = dims[k];
  for (int k = 0; k < v.n; k++)
    a[n++] = v.leaves[k];
  cg_rt_fn fn = in->op == IR_OP_BATCH_NORM_TRAINING    ? CG_RT_hlo_rt_batch_norm_training_f32
                : in->op == IR_OP_BATCH_NORM_INFERENCE ? CG_RT_hlo_rt_batch_norm_inference_f32
                                                       : CG_RT_hlo_rt_batch_norm_grad_f32;
  cg_runtime_call(cm, fn, a, (unsigned)n, "");
}

void cg_lower_batch_norm(cg_function *f, ir_instr *in) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  const ir_shape *s = in->operands[0]->shape;
  ir_etype et = s->et;
  LLVMTypeRef ct = cg_compute_type(cm, et);
  if (et == IR_F32) {
    lower_f32_by_runtime(f, in);
    return;
  }
  if (in->op == IR_OP_BATCH_NORM_INFERENCE) {
    cg_value v = cg_result_value(f, in);
    f->values[in->id] = v;
    normalize(f, in, v.leaves[0], leaf(f, in->operands[3]), leaf(f, in->operands[4]));
    return;
  }
  if (in->op == IR_OP_BATCH_NORM_GRAD) {
    lower_grad(f, in);
    return;
  }
  cg_value v = cg_result_value(f, in); /* (normalized, mean, variance) */
  f->values[in->id] = v;
  int64_t fi = in->attrs.u.batch_norm.feature_index, nf = s->dims[fi];
  int64_t per_feature = nf ? count(s) / nf : 0;
  /* Per feature, two passes accumulated in f64: mean = E[x], then variance = E[(x - mean)^2],
   * which cannot come out negative (E[x^2] - mean^2 can, by cancellation, for a feature that is
   * nearly constant, such as a saturated ReLU6) and is as close to the exact value as f64 sums
   * of the inputs allow. */
  LLVMTypeRef acc_t = cm->f64;
  LLVMValueRef sum = cg_entry_alloca(f, acc_t, "bn.sum"), sq = cg_entry_alloca(f, acc_t, "bn.sq");
  LLVMValueRef n = LLVMConstReal(acc_t, (double)(per_feature ? per_feature : 1));
  cg_loop lf = cg_loop_begin(f, cg_i64(cm, nf), "bn.feat");
  LLVMBuildStore(b, LLVMConstNull(acc_t), sum);
  LLVMBuildStore(b, LLVMConstNull(acc_t), sq);
  feature_elems e = feature_elems_begin(f, s, fi, lf.i);
  LLVMValueRef x = to_acc(f, cg_load(f, et, leaf(f, in->operands[0]), e.i));
  LLVMBuildStore(b, LLVMBuildFAdd(b, LLVMBuildLoad2(b, acc_t, sum, ""), x, ""), sum);
  feature_elems_end(f, &e);
  LLVMValueRef mean = LLVMBuildFDiv(b, LLVMBuildLoad2(b, acc_t, sum, ""), n, "mean");
  e = feature_elems_begin(f, s, fi, lf.i);
  LLVMValueRef xm = LLVMBuildFSub(b, to_acc(f, cg_load(f, et, leaf(f, in->operands[0]), e.i)), mean, "");
  LLVMBuildStore(b, LLVMBuildFAdd(b, LLVMBuildLoad2(b, acc_t, sq, ""), LLVMBuildFMul(b, xm, xm, ""), ""), sq);
  feature_elems_end(f, &e);
  LLVMValueRef var = LLVMBuildFDiv(b, LLVMBuildLoad2(b, acc_t, sq, ""), n, "var");
  cg_store(f, et, v.leaves[1], lf.i, to_compute(f, mean, ct));
  cg_store(f, et, v.leaves[2], lf.i, to_compute(f, var, ct));
  cg_loop_end(f, &lf);
  normalize(f, in, v.leaves[0], v.leaves[1], v.leaves[2]);
}
