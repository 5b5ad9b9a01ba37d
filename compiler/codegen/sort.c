/* sort.c — lowers sort and topk to the runtime's hlo_rt_sort / hlo_rt_topk (rt_sort.c).
 * A comparator that is one LT/GT compare of operand k's two parameters (optionally through
 * JAX's canonicalisation select(x != x, nan, select(x == 0, 0, x))) becomes a key order the
 * runtime radix-sorts; any other comparator is wrapped in a generated
 *   i32 less(ptr ctx, ptr lines, i64 i, i64 j, ptr out_status)
 * that loads both elements of every operand and calls the comparator computation, and the
 * runtime merge-sorts with it.  Tests: testdata/golden/sort_*, topk_*, conformance sort/topk.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "codegen/cg_internal.h"
#include "hlo/rt.h"

/* ---- recognising simple comparators ---------------------------------------------------- */

typedef struct sort_key {
  int32_t op, kind, descending;
  uint64_t inf_bits;
} sort_key;

static double literal_scalar(const ir_instr *c) {
  if (c->op != IR_OP_CONSTANT || !c->attrs.u.literal || !c->attrs.u.literal->data || c->shape->rank != 0)
    return 1.0; /* neither NaN nor zero */
  const void *d = c->attrs.u.literal->data;
  uint32_t u32;
  uint16_t u16;
  switch (c->shape->et) {
  case IR_F32: { float v; memcpy(&v, d, 4); return v; }
  case IR_F64: { double v; memcpy(&v, d, 8); return v; }
  case IR_BF16: memcpy(&u16, d, 2); u32 = (uint32_t)u16 << 16; { float v; memcpy(&v, &u32, 4); return v; }
  case IR_F16: {
    memcpy(&u16, d, 2);
    int e = (u16 >> 10) & 31, m = u16 & 1023;
    double v = e == 31 ? (m ? NAN : INFINITY) : e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
    return (u16 & 0x8000) ? -v : v;
  }
  default: return 1.0;
  }
}

static bool is_compare(const ir_instr *x, ir_cmp_dir dir, const ir_instr *a, const ir_instr *b) {
  return x->op == IR_OP_COMPARE && x->attrs.u.compare.dir == dir && x->operands[0] == a && x->operands[1] == b;
}

/* The parameter x reads: x itself, or JAX's canonicalisation of it (*canon set). */
static const ir_instr *key_param(const ir_instr *x, bool *canon) {
  if (x->op == IR_OP_PARAMETER)
    return x;
  if (x->op != IR_OP_SELECT)
    return NULL;
  const ir_instr *inner = x->operands[2];
  if (inner->op != IR_OP_SELECT || inner->operands[2]->op != IR_OP_PARAMETER)
    return NULL;
  const ir_instr *p = inner->operands[2];
  const ir_instr *z = inner->operands[0]->n_operands == 2 ? inner->operands[0]->operands[1] : NULL;
  if (!is_compare(x->operands[0], IR_CMP_NE, p, p) || !isnan(literal_scalar(x->operands[1])))
    return NULL;
  if (!z || !is_compare(inner->operands[0], IR_CMP_EQ, p, z) || literal_scalar(z) != 0.0)
    return NULL;
  const ir_instr *zero = inner->operands[1];
  if (zero->op != IR_OP_CONSTANT || literal_scalar(zero) != 0.0 || signbit(literal_scalar(zero)))
    return NULL;
  *canon = true;
  return p;
}

static uint64_t inf_bits_of(ir_etype et) {
  switch (et) {
  case IR_F16: return 0x7c00;
  case IR_BF16: return 0x7f80;
  case IR_F32: return 0x7f800000;
  default: return 0x7ff0000000000000ull;
  }
}

/* The key order of operand et under a compare of type t (canon: through canonicalisation);
 * false when the runtime has no fast order for it. */
static bool key_kind(ir_etype et, ir_cmp_type t, bool canon, int32_t *kind) {
  switch (et) {
  case IR_PRED: case IR_U8: case IR_U16: case IR_U32: case IR_U64:
    *kind = t == IR_CMPT_SIGNED ? HLO_RT_SORT_SINT : HLO_RT_SORT_UINT;
    return et != IR_PRED || t != IR_CMPT_SIGNED;
  case IR_S8: case IR_S16: case IR_S32: case IR_S64:
    *kind = t == IR_CMPT_UNSIGNED ? HLO_RT_SORT_UINT : HLO_RT_SORT_SINT;
    return true;
  case IR_F16: case IR_BF16: case IR_F32: case IR_F64:
    /* A partial-order float compare agrees with the canonical order wherever it is a strict
     * weak order (no NaN); with NaNs its result is unspecified and NaNs go last. */
    *kind = t == IR_CMPT_TOTALORDER && !canon ? HLO_RT_SORT_FLOAT_TOTAL : HLO_RT_SORT_FLOAT_CANON;
    return true;
  default:
    return false;
  }
}

static bool simple_comparator(const ir_instr *in, sort_key *out) {
  const ir_computation *c = in->called[0];
  const ir_instr *r = c->root;
  if (r->op != IR_OP_COMPARE || (r->attrs.u.compare.dir != IR_CMP_LT && r->attrs.u.compare.dir != IR_CMP_GT))
    return false;
  bool ca = false, cb = false;
  const ir_instr *pa = key_param(r->operands[0], &ca), *pb = key_param(r->operands[1], &cb);
  if (!pa || !pb || ca != cb)
    return false;
  int64_t a = pa->attrs.u.parameter_number, b = pb->attrs.u.parameter_number;
  if (a / 2 != b / 2 || a == b || a / 2 >= in->n_operands)
    return false;
  out->op = (int32_t)(a / 2);
  ir_etype et = in->operands[out->op]->shape->et;
  if (!key_kind(et, r->attrs.u.compare.type, ca, &out->kind))
    return false;
  bool ascending = (r->attrs.u.compare.dir == IR_CMP_LT) == (a % 2 == 0);
  out->descending = !ascending;
  out->inf_bits = ir_etype_is_float(et) ? inf_bits_of(et) : 0;
  return true;
}

/* ---- the generated comparator for any other computation -------------------------------- */

static LLVMTypeRef less_type(cg_module *cm) {
  return LLVMFunctionType(cm->i32, (LLVMTypeRef[]){cm->ptr, cm->ptr, cm->i64, cm->i64, cm->ptr}, 5, 0);
}

static LLVMValueRef emit_less(cg_function *f, ir_instr *in) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  LLVMBasicBlockRef resume = LLVMGetInsertBlock(b);
  char name[600];
  snprintf(name, sizeof name, "hlo.sortless.%s.%s", f->comp->name.p, in->name.p);
  LLVMValueRef fn = LLVMAddFunction(cm->mod, name, less_type(cm));
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  cg_function lf;
  memset(&lf, 0, sizeof lf);
  lf.cm = cm;
  lf.comp = f->comp;
  lf.fn = fn;
  lf.ctx_arg = LLVMGetParam(fn, 0);
  lf.entry_bb = LLVMAppendBasicBlockInContext(cm->ctx, fn, "entry");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(cm->ctx, fn, "body");
  lf.fail_bb = LLVMAppendBasicBlockInContext(cm->ctx, fn, "fail");
  LLVMPositionBuilderAtEnd(b, lf.entry_bb);
  lf.fail_slot = LLVMBuildAlloca(b, cm->ptr, "status");
  LLVMBuildStore(b, LLVMConstNull(cm->ptr), lf.fail_slot);
  LLVMBuildBr(b, body);
  LLVMPositionBuilderAtEnd(b, body);
  int n = in->n_operands;
  LLVMValueRef vals[64];
  ir_etype ets[64];
  for (int k = 0; k < n && 2 * k + 1 < 64; k++) {
    ir_etype et = in->operands[k]->shape->et;
    LLVMValueRef slot = LLVMBuildGEP2(b, cm->ptr, LLVMGetParam(fn, 1), (LLVMValueRef[]){cg_i64(cm, k)}, 1, "");
    LLVMValueRef line = LLVMBuildLoad2(b, cm->ptr, slot, "line");
    vals[2 * k] = cg_load(&lf, et, line, LLVMGetParam(fn, 2));
    vals[2 * k + 1] = cg_load(&lf, et, line, LLVMGetParam(fn, 3));
    ets[2 * k] = ets[2 * k + 1] = et;
  }
  LLVMValueRef res;
  ir_etype pred = IR_PRED;
  cg_call_scalar(&lf, in->called[0], vals, ets, 2 * n, &res, &pred, 1);
  LLVMBuildRet(b, LLVMBuildZExt(b, res, cm->i32, ""));
  LLVMPositionBuilderAtEnd(b, lf.fail_bb);
  LLVMBuildStore(b, LLVMBuildLoad2(b, cm->ptr, lf.fail_slot, ""), LLVMGetParam(fn, 4));
  LLVMBuildRet(b, LLVMConstInt(cm->i32, (unsigned long long)-1, 1));
  LLVMPositionBuilderAtEnd(b, resume);
  return fn;
}

/* ---- lowering ------------------------------------------------------------------------------ */

/* A failing status from a runtime call goes to f's failure path. */
static LLVMValueRef array_of(cg_function *f, LLVMTypeRef t, LLVMValueRef *v, int n) {
  cg_module *cm = f->cm;
  LLVMValueRef a = cg_entry_alloca(f, LLVMArrayType2(t, (uint64_t)(n ? n : 1)), "arr");
  for (int i = 0; i < n; i++)
    LLVMBuildStore(cm->b, v[i], LLVMBuildGEP2(cm->b, t, a, (LLVMValueRef[]){cg_i64(cm, i)}, 1, ""));
  return a;
}

static LLVMValueRef i32c(cg_module *cm, int64_t v) { return LLVMConstInt(cm->i32, (unsigned long long)v, 1); }

void cg_lower_sort(cg_function *f, ir_instr *in) {
  cg_module *cm = f->cm;
  int n = in->n_operands;
  if (n > 32) {
    cg_fail(cm, in, "sort of %d operands: at most 32 are supported", n);
    return;
  }
  const ir_shape *s = in->operands[0]->shape;
  int64_t dim = in->attrs.dimensions.n ? in->attrs.dimensions.v[0] : s->rank - 1;
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < s->rank; d++) {
    if (d < dim)
      outer *= s->dims[d];
    else if (d > dim)
      inner *= s->dims[d];
  }
  cg_value r = cg_result_value(f, in);
  LLVMValueRef ins[32], outs[32], bytes[32];
  for (int k = 0; k < n; k++) {
    ins[k] = f->values[in->operands[k]->id].leaves[0];
    outs[k] = r.leaves[k];
    bytes[k] = i32c(cm, ir_etype_table[in->operands[k]->shape->et].storage_bytes);
  }
  sort_key key = {0};
  bool simple = simple_comparator(in, &key);
  LLVMValueRef less = simple ? LLVMConstNull(cm->ptr) : emit_less(f, in);
  LLVMValueRef args[13] = {f->ctx_arg, i32c(cm, n), array_of(f, cm->ptr, ins, n), array_of(f, cm->ptr, outs, n),
                           array_of(f, cm->i32, bytes, n), cg_i64(cm, outer), cg_i64(cm, s->rank ? s->dims[dim] : 1),
                           cg_i64(cm, inner), i32c(cm, key.op), i32c(cm, key.kind), i32c(cm, key.descending),
                           LLVMConstInt(cm->i64, key.inf_bits, 0), less};
  cg_fail_if_status(f, cg_runtime_call(cm, CG_RT_hlo_rt_sort, args, 13, "st"));
  f->values[in->id] = r;
}

void cg_lower_topk(cg_function *f, ir_instr *in) {
  cg_module *cm = f->cm;
  const ir_shape *s = in->operands[0]->shape;
  ir_etype et = s->et;
  int32_t kind;
  if (!key_kind(et, IR_CMPT_TOTALORDER, false, &kind)) {
    cg_fail(cm, in, "topk of %s elements: the element type has no order", ir_etype_table[et].spelling);
    return;
  }
  int64_t n = s->rank ? s->dims[s->rank - 1] : 1, rows = 1;
  for (int d = 0; d + 1 < s->rank; d++)
    rows *= s->dims[d];
  bool largest = in->attrs.u.topk.has_largest ? in->attrs.u.topk.largest : true;
  cg_value r = cg_result_value(f, in);
  LLVMValueRef args[11] = {f->ctx_arg, f->values[in->operands[0]->id].leaves[0], r.leaves[0], r.leaves[1],
                           i32c(cm, ir_etype_table[et].storage_bytes), cg_i64(cm, rows), cg_i64(cm, n),
                           cg_i64(cm, in->attrs.u.topk.k), i32c(cm, kind), i32c(cm, largest),
                           LLVMConstInt(cm->i64, ir_etype_is_float(et) ? inf_bits_of(et) : 0, 0)};
  cg_fail_if_status(f, cg_runtime_call(cm, CG_RT_hlo_rt_topk, args, 11, "st"));
  f->values[in->id] = r;
}
