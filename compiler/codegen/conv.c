/* conv.c — lowering of convolution: any dim_labels, window strides, padding, base (lhs) and
 * window (rhs) dilation, window reversal, feature_group_count and batch_group_count; the
 * result type may differ from the operands' (accumulated in the result's compute type).
 * One loop over output elements, an inner loop over input features x window positions.
 */
#include "codegen/cg_internal.h"

static int64_t product(const int64_t *d, int n) {
  int64_t p = 1;
  for (int i = 0; i < n; i++)
    p *= d[i];
  return p;
}

void cg_lower_convolution(cg_function *f, ir_instr *in, LLVMValueRef out) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  const ir_instr *lop = in->operands[0], *rop = in->operands[1];
  const ir_shape *l = lop->shape, *r = rop->shape, *o = in->shape;
  const typeof(in->attrs.u.conv) *c = &in->attrs.u.conv;
  const ir_conv_dnums *d = &c->dnums;
  int ns = d->input_spatial.n;
  ir_etype et = o->et;
  LLVMTypeRef ct = cg_compute_type(cm, et);
  int64_t k_in = r->dims[d->kernel_input_feature], k_out = r->dims[d->kernel_output_feature];
  int64_t fgc = c->feature_group_count, bgc = c->batch_group_count;
  int64_t out_per_fgroup = k_out / fgc, out_per_bgroup = k_out / bgc, batch_per_group = l->dims[d->input_batch] / bgc;
  ir_window_dim win[64];
  int64_t inner[65];
  inner[0] = k_in;
  for (int i = 0; i < ns; i++) {
    int64_t ks = r->dims[d->kernel_spatial.v[i]];
    win[i] = c->window.n ? c->window.dims[i] : (ir_window_dim){ks, 1, 0, 0, 1, 1, false};
    inner[1 + i] = ks;
  }
  LLVMValueRef acc = cg_entry_alloca(f, ct, "acc");
  cg_loop outer = cg_loop_begin(f, cg_i64(cm, product(o->dims, o->rank)), "conv.out");
  LLVMValueRef oi[64], ki[65], li[64], ri[64];
  cg_unflatten(f, outer.i, o->dims, o->rank, oi);
  LLVMValueRef fo = oi[d->output_feature], bo = oi[d->output_batch];
  LLVMValueRef fgroup = LLVMBuildUDiv(b, fo, cg_i64(cm, out_per_fgroup), "fgroup");
  LLVMValueRef bgroup = LLVMBuildUDiv(b, fo, cg_i64(cm, out_per_bgroup), "bgroup");
  LLVMBuildStore(b, LLVMConstNull(ct), acc);
  cg_loop loop = cg_loop_begin(f, cg_i64(cm, product(inner, ns + 1)), "conv.k");
  cg_unflatten(f, loop.i, inner, ns + 1, ki);
  LLVMValueRef ok = LLVMConstInt(cm->i1, 1, 0);
  li[d->input_batch] = LLVMBuildAdd(b, LLVMBuildMul(b, bgroup, cg_i64(cm, batch_per_group), ""), bo, "ib");
  li[d->input_feature] = LLVMBuildAdd(b, LLVMBuildMul(b, fgroup, cg_i64(cm, k_in), ""), ki[0], "if");
  ri[d->kernel_input_feature] = ki[0];
  ri[d->kernel_output_feature] = fo;
  for (int i = 0; i < ns; i++) {
    const ir_window_dim *w = &win[i];
    LLVMValueRef kpos = ki[1 + i];
    LLVMValueRef pos = LLVMBuildAdd(b, LLVMBuildMul(b, oi[d->output_spatial.v[i]], cg_i64(cm, w->stride), ""),
                                    LLVMBuildMul(b, kpos, cg_i64(cm, w->rhs_dilate), ""), "");
    pos = LLVMBuildSub(b, pos, cg_i64(cm, w->pad_lo), "");
    LLVMValueRef in_range = LLVMBuildICmp(b, LLVMIntSGE, pos, cg_i64(cm, 0), "");
    LLVMValueRef safe = LLVMBuildSelect(b, in_range, pos, cg_i64(cm, 0), "");
    if (w->lhs_dilate > 1) {
      in_range = LLVMBuildAnd(b, in_range,
                              LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildURem(b, safe, cg_i64(cm, w->lhs_dilate), ""),
                                            cg_i64(cm, 0), ""), "");
      safe = LLVMBuildUDiv(b, safe, cg_i64(cm, w->lhs_dilate), "");
    }
    int64_t in_dim = l->dims[d->input_spatial.v[i]];
    in_range = LLVMBuildAnd(b, in_range, LLVMBuildICmp(b, LLVMIntSLT, safe, cg_i64(cm, in_dim), ""), "");
    ok = LLVMBuildAnd(b, ok, in_range, "");
    li[d->input_spatial.v[i]] = safe;
    ri[d->kernel_spatial.v[i]] = w->rhs_reversal ? LLVMBuildSub(b, cg_i64(cm, w->size - 1), kpos, "") : kpos;
  }
  LLVMBasicBlockRef yes = LLVMAppendBasicBlockInContext(cm->ctx, f->fn, "conv.in");
  LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(cm->ctx, f->fn, "conv.next");
  LLVMBuildCondBr(b, ok, yes, next);
  LLVMPositionBuilderAtEnd(b, yes);
  LLVMValueRef x = cg_convert(f, cg_load(f, l->et, f->values[lop->id].leaves[0], cg_flatten(f, li, l->dims, l->rank)),
                              l->et, et);
  LLVMValueRef y = cg_convert(f, cg_load(f, r->et, f->values[rop->id].leaves[0], cg_flatten(f, ri, r->dims, r->rank)),
                              r->et, et);
  LLVMValueRef a = LLVMBuildLoad2(b, ct, acc, "a");
  LLVMValueRef prod = ir_etype_is_int(et) ? LLVMBuildMul(b, x, y, "") : LLVMBuildFMul(b, x, y, "");
  LLVMBuildStore(b, ir_etype_is_int(et) ? LLVMBuildAdd(b, a, prod, "") : LLVMBuildFAdd(b, a, prod, ""), acc);
  LLVMBuildBr(b, next);
  LLVMPositionBuilderAtEnd(b, next);
  cg_loop_end(f, &loop);
  cg_store(f, et, out, outer.i, LLVMBuildLoad2(b, ct, acc, "acc"));
  cg_loop_end(f, &outer);
}
