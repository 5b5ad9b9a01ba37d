/* control.c — lowering of instructions that call computations or accumulate: reduce
 * (variadic, any dimensions, any reducer; fused.c takes the single-input ones and the
 * variadic ones whose minor dimension is reduced), dot (general dimension numbers, result type may
 * differ from operand types), map, while, conditional (pred and indexed, out-of-range index
 * runs the last branch) and call.
 */
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_internal.h"
#include "codegen/ops.h"

static LLVMValueRef leaf0(cg_function *f, const ir_instr *op) { return f->values[op->id].leaves[0]; }

static int64_t count(const ir_shape *s) {
  int64_t n;
  ir_shape_num_elements(s, &n);
  return n;
}

void cg_lower_reduce(cg_function *f, ir_instr *in) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  int n = in->n_operands / 2;
  if (n > 32) {
    cg_fail(cm, in, "reduce with more than 32 inputs cannot be compiled");
    return;
  }
  const ir_shape *s = in->operands[0]->shape;
  cg_value outv = cg_result_value(f, in);
  f->values[in->id] = outv;
  /* Kept and reduced dimensions. */
  uint64_t reduced = 0;
  for (int i = 0; i < in->attrs.dimensions.n; i++)
    reduced |= 1ull << in->attrs.dimensions.v[i];
  int64_t rdims[64], kdims[64];
  int nr = 0, nk = 0;
  for (int d = 0; d < s->rank; d++) {
    if (reduced >> d & 1)
      rdims[nr++] = s->dims[d];
    else
      kdims[nk++] = s->dims[d];
  }
  int64_t rcount = 1, kcount = 1;
  for (int i = 0; i < nr; i++)
    rcount *= rdims[i];
  for (int i = 0; i < nk; i++)
    kcount *= kdims[i];
  ir_etype ets[64];
  LLVMValueRef acc[32];
  for (int i = 0; i < n; i++) {
    ets[i] = in->operands[i]->shape->et;
    ets[n + i] = ets[i];
    acc[i] = cg_entry_alloca(f, cg_compute_type(cm, ets[i]), "acc");
  }
  cg_loop outer = cg_loop_begin(f, cg_i64(cm, kcount), "red.out");
  LLVMValueRef kidx[64], ridx[64], full[64];
  cg_unflatten(f, outer.i, kdims, nk, kidx);
  for (int i = 0; i < n; i++)
    LLVMBuildStore(b, cg_load(f, ets[i], leaf0(f, in->operands[n + i]), cg_i64(cm, 0)), acc[i]);
  cg_loop inner = cg_loop_begin(f, cg_i64(cm, rcount), "red.in");
  cg_unflatten(f, inner.i, rdims, nr, ridx);
  for (int d = 0, kr = 0, kk = 0; d < s->rank; d++)
    full[d] = (reduced >> d & 1) ? ridx[kr++] : kidx[kk++];
  LLVMValueRef lin = cg_flatten(f, full, s->dims, s->rank);
  LLVMValueRef vals[64], res[32];
  for (int i = 0; i < n; i++) {
    vals[i] = LLVMBuildLoad2(b, cg_compute_type(cm, ets[i]), acc[i], "a");
    vals[n + i] = cg_load(f, ets[i], leaf0(f, in->operands[i]), lin);
  }
  cg_call_scalar(f, in->called[0], vals, ets, 2 * n, res, ets, n);
  for (int i = 0; i < n; i++)
    LLVMBuildStore(b, res[i], acc[i]);
  cg_loop_end(f, &inner);
  for (int i = 0; i < n; i++)
    cg_store(f, ets[i], outv.leaves[i], outer.i, LLVMBuildLoad2(b, cg_compute_type(cm, ets[i]), acc[i], "a"));
  cg_loop_end(f, &outer);
}

/* acc + x*y in the result's compute type. */
static LLVMValueRef mul_add(cg_function *f, ir_etype et, LLVMValueRef acc, LLVMValueRef x, LLVMValueRef y) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  if (ir_etype_is_complex(et)) {
    LLVMValueRef xr = LLVMBuildExtractValue(b, x, 0, ""), xi = LLVMBuildExtractValue(b, x, 1, "");
    LLVMValueRef yr = LLVMBuildExtractValue(b, y, 0, ""), yi = LLVMBuildExtractValue(b, y, 1, "");
    LLVMValueRef re = LLVMBuildFSub(b, LLVMBuildFMul(b, xr, yr, ""), LLVMBuildFMul(b, xi, yi, ""), "");
    LLVMValueRef im = LLVMBuildFAdd(b, LLVMBuildFMul(b, xr, yi, ""), LLVMBuildFMul(b, xi, yr, ""), "");
    LLVMValueRef ar = LLVMBuildFAdd(b, LLVMBuildExtractValue(b, acc, 0, ""), re, "");
    LLVMValueRef ai = LLVMBuildFAdd(b, LLVMBuildExtractValue(b, acc, 1, ""), im, "");
    LLVMValueRef z = LLVMBuildInsertValue(b, LLVMGetUndef(LLVMTypeOf(acc)), ar, 0, "");
    return LLVMBuildInsertValue(b, z, ai, 1, "");
  }
  if (et == IR_PRED)
    return LLVMBuildOr(b, acc, LLVMBuildAnd(b, x, y, ""), "");
  if (ir_etype_is_int(et))
    return LLVMBuildAdd(b, acc, LLVMBuildMul(b, x, y, ""), "");
  return LLVMBuildFAdd(b, acc, LLVMBuildFMul(b, x, y, ""), "");
}

void cg_lower_dot(cg_function *f, ir_instr *in, LLVMValueRef out) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  if (in->op != IR_OP_DOT) {
    cg_fail(cm, in, "internal error: opcode '%s' reached the dot lowering", ir_opcode_table[in->op].spelling);
    return;
  }
  if (cg_dot_gemm(f, in, out)) /* large f32/f64 products: the runtime's blocked kernel (dot.c) */
    return;
  const ir_shape *l = in->operands[0]->shape, *r = in->operands[1]->shape, *o = in->shape;
  const ir_dot_dnums *d = &in->attrs.u.dot.dnums;
  ir_etype et = o->et;
  /* Result dims: batch, lhs free, rhs free.  Map each to operand dims. */
  int lmap[64], rmap[64]; /* operand dim -> result dim index, or -1 - contracting position */
  int nb = d->lhs_batch.n, pos = nb;
  for (int i = 0; i < l->rank; i++)
    lmap[i] = -1000;
  for (int i = 0; i < r->rank; i++)
    rmap[i] = -1000;
  for (int i = 0; i < nb; i++) {
    lmap[d->lhs_batch.v[i]] = i;
    rmap[d->rhs_batch.v[i]] = i;
  }
  int nc = d->lhs_contracting.n;
  int64_t cdims[64];
  for (int i = 0; i < nc; i++) {
    lmap[d->lhs_contracting.v[i]] = -1 - i;
    rmap[d->rhs_contracting.v[i]] = -1 - i;
    cdims[i] = l->dims[d->lhs_contracting.v[i]];
  }
  for (int i = 0; i < l->rank; i++)
    if (lmap[i] == -1000)
      lmap[i] = pos++;
  for (int i = 0; i < r->rank; i++)
    if (rmap[i] == -1000)
      rmap[i] = pos++;
  int64_t ccount = 1;
  for (int i = 0; i < nc; i++)
    ccount *= cdims[i];
  LLVMTypeRef ct = cg_compute_type(cm, et);
  LLVMValueRef acc = cg_entry_alloca(f, ct, "acc");
  cg_loop outer = cg_loop_begin(f, cg_i64(cm, count(o)), "dot.out");
  LLVMValueRef oidx[64], cidx[64], li[64], ri[64];
  cg_unflatten(f, outer.i, o->dims, o->rank, oidx);
  LLVMBuildStore(b, LLVMConstNull(ct), acc);
  cg_loop inner = cg_loop_begin(f, cg_i64(cm, ccount), "dot.k");
  cg_unflatten(f, inner.i, cdims, nc, cidx);
  for (int i = 0; i < l->rank; i++)
    li[i] = lmap[i] >= 0 ? oidx[lmap[i]] : cidx[-1 - lmap[i]];
  for (int i = 0; i < r->rank; i++)
    ri[i] = rmap[i] >= 0 ? oidx[rmap[i]] : cidx[-1 - rmap[i]];
  LLVMValueRef x = cg_convert(f, cg_load(f, l->et, leaf0(f, in->operands[0]), cg_flatten(f, li, l->dims, l->rank)), l->et, et);
  LLVMValueRef y = cg_convert(f, cg_load(f, r->et, leaf0(f, in->operands[1]), cg_flatten(f, ri, r->dims, r->rank)), r->et, et);
  LLVMBuildStore(b, mul_add(f, et, LLVMBuildLoad2(b, ct, acc, "acc"), x, y), acc);
  cg_loop_end(f, &inner);
  cg_store(f, et, out, outer.i, LLVMBuildLoad2(b, ct, acc, "acc"));
  cg_loop_end(f, &outer);
}

void cg_lower_map(cg_function *f, ir_instr *in, LLVMValueRef out) {
  cg_module *cm = f->cm;
  int n = in->n_operands;
  if (n > 32) {
    cg_fail(cm, in, "map with more than 32 operands cannot be compiled");
    return;
  }
  ir_etype ets[32], oet = in->shape->et;
  for (int i = 0; i < n; i++)
    ets[i] = in->operands[i]->shape->et;
  cg_loop l = cg_loop_begin(f, cg_i64(cm, count(in->shape)), "map");
  LLVMValueRef vals[32], res;
  for (int i = 0; i < n; i++)
    vals[i] = cg_load(f, ets[i], leaf0(f, in->operands[i]), l.i);
  cg_call_scalar(f, in->called[0], vals, ets, n, &res, &oet, 1);
  cg_store(f, oet, out, l.i, res);
  cg_loop_end(f, &l);
}

void cg_lower_call(cg_function *f, ir_instr *in) {
  LLVMValueRef args[1024];
  int na = 0;
  for (int i = 0; i < in->n_operands; i++) {
    cg_value o = f->values[in->operands[i]->id];
    for (int j = 0; j < o.n && na < 1024; j++)
      args[na++] = o.leaves[j];
  }
  cg_value out = cg_alloc_result(f, in);
  cg_call_computation(f, in->called[0], args, na, out.leaves, out.n);
  f->values[in->id] = out;
}

void cg_lower_while(cg_function *f, ir_instr *in) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  cg_value init = f->values[in->operands[0]->id];
  cg_value state = cg_value_of_shape(in->shape);
  int n = state.n;
  cg_value next = {calloc((size_t)n + 1, sizeof(LLVMValueRef)), NULL, n};
  plan_state_leaf *kind = buffer_plan_while_state(in, n);
  if (!kind || !state.leaves || !state.shapes || !next.leaves || init.n != n) {
    cg_fail(cm, in, "out of memory");
    free(kind);
    free(next.leaves);
    return;
  }
  for (int i = 0; i < n; i++) {
    if (kind[i] == PLAN_STATE_PASSED) {
      state.leaves[i] = init.leaves[i];
    } else {
      state.leaves[i] = cg_alloc_result_leaf(f, in, i, state.shapes[i]);
      cg_copy_leaf(f, state.leaves[i], init.leaves[i], state.shapes[i]);
    }
    next.leaves[i] = kind[i] != PLAN_STATE_COPIED ? state.leaves[i] : cg_alloc_temp_leaf(f, in, i, state.shapes[i]);
  }
  LLVMValueRef pred = cg_alloc_leaf(f, &(ir_shape){.et = IR_PRED});
  LLVMBasicBlockRef cond = LLVMAppendBasicBlockInContext(cm->ctx, f->fn, "while.cond");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(cm->ctx, f->fn, "while.body");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(cm->ctx, f->fn, "while.done");
  LLVMValueRef counter = cg_entry_alloca(f, cm->i64, "while.trips");
  LLVMBuildStore(b, cg_i64(cm, 0), counter);
  LLVMBuildBr(b, cond);
  LLVMPositionBuilderAtEnd(b, cond);
  cg_call_computation(f, in->called[0], state.leaves, state.n, &pred, 1);
  LLVMBuildCondBr(b, cg_load(f, IR_PRED, pred, cg_i64(cm, 0)), body, done);
  LLVMPositionBuilderAtEnd(b, body);
  cg_call_computation(f, in->called[1], state.leaves, state.n, next.leaves, next.n);
  for (int i = 0; i < state.n; i++)
    if (kind[i] == PLAN_STATE_COPIED)
      cg_copy_leaf(f, state.leaves[i], next.leaves[i], state.shapes[i]);
  /* The back-edge: hlo_context_cancel / hlorun --timeout stop here, checked after the first
   * iteration and then every 1024, so that a tight loop stays register code between checks. */
  LLVMValueRef trips = LLVMBuildAdd(b, LLVMBuildLoad2(b, cm->i64, counter, "trips"), cg_i64(cm, 1), "");
  LLVMBuildStore(b, trips, counter);
  LLVMBasicBlockRef poll = LLVMAppendBasicBlockInContext(cm->ctx, f->fn, "while.poll");
  LLVMValueRef due = LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, trips, cg_i64(cm, 1023), ""), cg_i64(cm, 1), "");
  LLVMBuildCondBr(b, due, poll, cond);
  LLVMPositionBuilderAtEnd(b, poll);
  cg_check_cancel(f);
  LLVMBuildBr(b, cond);
  LLVMPositionBuilderAtEnd(b, done);
  free(next.leaves);
  free(kind);
  f->values[in->id] = state;
}

void cg_lower_conditional(cg_function *f, ir_instr *in) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  cg_value out = cg_alloc_result(f, in);
  f->values[in->id] = out;
  const ir_instr *sel = in->operands[0];
  int nb = in->n_called;
  LLVMValueRef index;
  if (sel->shape->et == IR_PRED) /* true -> branch 0 (true_computation), false -> branch 1 */
    index = LLVMBuildSelect(b, cg_load(f, IR_PRED, leaf0(f, sel), cg_i64(cm, 0)), LLVMConstInt(cm->i32, 0, 0),
                            LLVMConstInt(cm->i32, 1, 0), "");
  else
    index = cg_load(f, IR_S32, leaf0(f, sel), cg_i64(cm, 0));
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(cm->ctx, f->fn, "cond.done");
  LLVMBasicBlockRef dflt = LLVMAppendBasicBlockInContext(cm->ctx, f->fn, "cond.default");
  /* Out-of-range indices (negative or >= N) run the last branch. */
  LLVMValueRef sw = LLVMBuildSwitch(b, index, dflt, (unsigned)nb);
  for (int k = 0; k <= nb; k++) {
    LLVMBasicBlockRef bb = k < nb ? LLVMAppendBasicBlockInContext(cm->ctx, f->fn, "cond.case") : dflt;
    if (k < nb)
      LLVMAddCase(sw, LLVMConstInt(cm->i32, (unsigned long long)k, 0), bb);
    LLVMPositionBuilderAtEnd(b, bb);
    int branch = k < nb ? k : nb - 1;
    cg_value arg = f->values[in->operands[branch + 1]->id];
    cg_call_computation(f, in->called[branch], arg.leaves, arg.n, out.leaves, out.n);
    LLVMBuildBr(b, done);
  }
  LLVMPositionBuilderAtEnd(b, done);
}
