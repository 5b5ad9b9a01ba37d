/* batchnorm.c — lowering of batch-norm-training (per-feature mean and biased variance over
 * every other dimension, then normalize) and batch-norm-inference (normalize with the given
 * mean and variance):  y = (x - mean) / sqrt(var + epsilon) * scale + offset.
 * Statistics accumulate in the element type's compute type, as the operation semantics define.
 */
#include "codegen/cg_internal.h"

static int64_t count(const ir_shape *s) {
  int64_t n;
  ir_shape_num_elements(s, &n);
  return n;
}

static LLVMValueRef leaf(cg_function *f, const ir_instr *op) { return f->values[op->id].leaves[0]; }

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
  LLVMValueRef denom = LLVMBuildFAdd(b, v, LLVMConstReal(ct, in->attrs.u.batch_norm.epsilon), "");
  LLVMValueRef sqrt_fn = cg_intrinsic(cm, "llvm.sqrt", ct, 1);
  denom = LLVMBuildCall2(b, LLVMGlobalGetValueType(sqrt_fn), sqrt_fn, &denom, 1, "");
  LLVMValueRef y = LLVMBuildFDiv(b, LLVMBuildFSub(b, x, m, ""), denom, "");
  y = LLVMBuildFAdd(b, LLVMBuildFMul(b, y, sc, ""), off, "");
  cg_store(f, et, out, l.i, y);
  cg_loop_end(f, &l);
}

void cg_lower_batch_norm(cg_function *f, ir_instr *in) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  const ir_shape *s = in->operands[0]->shape;
  ir_etype et = s->et;
  LLVMTypeRef ct = cg_compute_type(cm, et);
  if (in->op == IR_OP_BATCH_NORM_INFERENCE) {
    LLVMValueRef out = cg_alloc_leaf(f, in->shape);
    normalize(f, in, out, leaf(f, in->operands[3]), leaf(f, in->operands[4]));
    cg_value v = cg_alloc_value(f, in->shape);
    cg_copy_leaf(f, v.leaves[0], out, in->shape);
    f->values[in->id] = v;
    return;
  }
  if (in->op != IR_OP_BATCH_NORM_TRAINING) {
    cg_fail(cm, in, "opcode 'batch-norm-grad' cannot be compiled yet (it belongs to a later milestone)");
    return;
  }
  cg_value v = cg_alloc_value(f, in->shape); /* (normalized, mean, variance) */
  f->values[in->id] = v;
  int64_t fi = in->attrs.u.batch_norm.feature_index, nf = s->dims[fi];
  int64_t per_feature = nf ? count(s) / nf : 0;
  LLVMValueRef sum = cg_entry_alloca(f, ct, "bn.sum"), sq = cg_entry_alloca(f, ct, "bn.sq");
  /* Per feature: mean = E[x], variance = E[x^2] - mean^2 (two accumulations over x). */
  cg_loop lf = cg_loop_begin(f, cg_i64(cm, nf), "bn.feat");
  LLVMBuildStore(b, LLVMConstNull(ct), sum);
  LLVMBuildStore(b, LLVMConstNull(ct), sq);
  cg_loop le = cg_loop_begin(f, cg_i64(cm, count(s)), "bn.elem");
  LLVMValueRef idx[64];
  cg_unflatten(f, le.i, s->dims, s->rank, idx);
  LLVMValueRef mine = LLVMBuildICmp(b, LLVMIntEQ, idx[fi], lf.i, "");
  LLVMValueRef x = cg_load(f, et, leaf(f, in->operands[0]), le.i);
  LLVMValueRef x0 = LLVMBuildSelect(b, mine, x, LLVMConstNull(ct), "");
  LLVMBuildStore(b, LLVMBuildFAdd(b, LLVMBuildLoad2(b, ct, sum, ""), x0, ""), sum);
  LLVMBuildStore(b, LLVMBuildFAdd(b, LLVMBuildLoad2(b, ct, sq, ""), LLVMBuildFMul(b, x0, x0, ""), ""), sq);
  cg_loop_end(f, &le);
  LLVMValueRef n = LLVMConstReal(ct, (double)(per_feature ? per_feature : 1));
  LLVMValueRef mean = LLVMBuildFDiv(b, LLVMBuildLoad2(b, ct, sum, ""), n, "mean");
  LLVMValueRef var = LLVMBuildFSub(b, LLVMBuildFDiv(b, LLVMBuildLoad2(b, ct, sq, ""), n, ""),
                                   LLVMBuildFMul(b, mean, mean, ""), "var");
  cg_store(f, et, v.leaves[1], lf.i, mean);
  cg_store(f, et, v.leaves[2], lf.i, var);
  cg_loop_end(f, &lf);
  normalize(f, in, v.leaves[0], v.leaves[1], v.leaves[2]);
}
