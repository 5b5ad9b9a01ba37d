/* kernel.c — outlined kernels: an instruction's loops emitted in a function of their own
 * (optimized on its own, called through one argument array per computation), or inlined when
 * the work is a few elements; a result written over a dying operand's buffer where the plan
 * says so.  Lowerings hand it the body to emit (cg_outline, cg_outline_value); it calls the
 * frame (frame.c) and the floor, never a lowering.
 * Tests: the golden suites, tests/arena (reuse), codegen_test.c.
 */
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_internal.h"

/* One kernel call in the making: the kernel's function and state, and where the caller resumes. */
typedef struct {
  LLVMValueRef fn, args;
  LLVMBasicBlockRef resume;
  cg_function kf;
  LLVMValueRef *kouts; /* the result leaves, as seen inside the kernel */
} kernel_call;

/* A kernel over a few elements in a small computation (a while body's state update, say) is
 * inlined: its call, argument array and loop setup would cost more than its work, and the
 * computation stays small enough for LLVM.  Everything else stays its own function. */
enum { CG_INLINE_KERNEL_ELEMENTS = 512, CG_INLINE_KERNEL_COMPUTATION = 200 };

static bool small_kernel(const ir_computation *c, const ir_instr *in) {
  int64_t n = 0;
  if (c->n_instrs > CG_INLINE_KERNEL_COMPUTATION || in->shape->et == IR_TUPLE || !ir_shape_num_elements(in->shape, &n))
    return false;
  for (int i = 0; i < in->n_operands; i++) {
    int64_t k = 0;
    if (in->operands[i]->shape->et == IR_TUPLE || !ir_shape_num_elements(in->operands[i]->shape, &k) ||
        k > CG_INLINE_KERNEL_ELEMENTS)
      return false;
  }
  return n <= CG_INLINE_KERNEL_ELEMENTS;
}

/* Slots the argument array needs for `in`: its operand leaves, then its result leaves. */
static int kernel_arg_count(const ir_instr *in) {
  int n = ir_shape_count_leaves(in->shape);
  for (int j = 0; j < in->n_operands; j++)
    n += ir_shape_count_leaves(in->operands[j]->shape);
  return n;
}

/* In the caller: stores the operand leaves and `outs` into the shared argument array (sized for
 * the widest instruction of the computation); then creates the kernel and positions the builder
 * inside it, with the operands and kc->kouts loaded from its argument array. */
static void kernel_begin(cg_function *f, ir_instr *in, const LLVMValueRef *outs, int n_outs, kernel_call *kc) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  if (!f->kernel_args) {
    int widest = 1;
    for (int i = 0; i < f->comp->n_instrs; i++) {
      int w = kernel_arg_count(f->comp->instrs[i]);
      widest = w > widest ? w : widest;
    }
    f->kernel_args_len = widest;
    f->kernel_args = cg_entry_alloca(f, LLVMArrayType2(cm->ptr, (uint64_t)widest), "kargs");
  }
  kc->args = f->kernel_args;
  int na = 0;
  for (int i = 0; i < in->n_operands; i++) {
    cg_value o = f->values[in->operands[i]->id];
    for (int j = 0; j < o.n; j++, na++)
      LLVMBuildStore(b, o.leaves[j], LLVMBuildGEP2(b, cm->ptr, kc->args, (LLVMValueRef[]){cg_i64(cm, na)}, 1, ""));
  }
  for (int j = 0; j < n_outs; j++, na++)
    LLVMBuildStore(b, outs[j], LLVMBuildGEP2(b, cm->ptr, kc->args, (LLVMValueRef[]){cg_i64(cm, na)}, 1, ""));
  char name[600];
  snprintf(name, sizeof name, "hlo.kernel.%s.%s", f->comp->name.p, in->name.p);
  kc->fn = LLVMAddFunction(cm->mod, name, cm->comp_fn_type);
  LLVMSetLinkage(kc->fn, LLVMInternalLinkage);
  cg_add_attr(cm, kc->fn, LLVMAttributeFunctionIndex, small_kernel(f->comp, in) ? "alwaysinline" : "noinline");
  kc->resume = LLVMGetInsertBlock(b);
  cg_function_begin(&kc->kf, cm, f->comp, kc->fn);
  kc->kf.owns_frame = false; /* its callees get the frame after the caller's */
  LLVMValueRef karr = LLVMGetParam(kc->fn, 1);
  int k = 0;
  for (int i = 0; i < in->n_operands; i++) {
    ir_instr *op = in->operands[i];
    if (!kc->kf.values[op->id].leaves)
      kc->kf.values[op->id] = cg_leaves_from_array(&kc->kf, karr, &k, op->shape, op->name.p);
    else
      k += ir_shape_count_leaves(op->shape);
  }
  kc->kouts = calloc((size_t)n_outs + 1, sizeof *kc->kouts);
  for (int j = 0; j < n_outs; j++, k++)
    kc->kouts[j] = LLVMBuildLoad2(b, cm->ptr, LLVMBuildGEP2(b, cm->ptr, karr, (LLVMValueRef[]){cg_i64(cm, k)}, 1, ""),
                                  "out");
}

/* Closes the kernel; back in the caller, calls it and propagates a failing status. */
static void kernel_end(cg_function *f, kernel_call *kc, bool may_fail) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  cg_function_end(&kc->kf);
  free(kc->kouts);
  LLVMPositionBuilderAtEnd(b, kc->resume);
  LLVMValueRef st = LLVMBuildCall2(b, cm->comp_fn_type, kc->fn,
                                   (LLVMValueRef[]){f->ctx_arg, kc->args, LLVMConstNull(cm->ptr), cg_callee_frame(f)}, 4,
                                   "st");
  if (may_fail)
    cg_fail_if_status(f, st);
}

/* The buffer for `in`'s single array result: the caller's result buffer when `in` writes one. */
static LLVMValueRef result_leaf(cg_function *f, ir_instr *in) { return cg_alloc_result_leaf(f, in, 0, in->shape); }

/* The heap entry of the buffer that operand k of `in` holds when it is a temporary of this
 * function (not a parameter, constant or caller's buffer: those are not in f->heap) that no
 * later instruction reads through any of its holders, nor another operand of `in`; else -1. */
static int dying_buffer(cg_function *f, const ir_instr *in, int k) {
  cg_value o = f->values[in->operands[k]->id];
  if (o.n != 1 || !o.leaves[0])
    return -1;
  for (int j = 0; j < in->n_operands; j++) {
    cg_value other = f->values[in->operands[j]->id];
    for (int l = 0; l < other.n && in->operands[j] != in->operands[k]; l++)
      if (other.leaves[l] == o.leaves[0])
        return -1; /* read through another holder as well */
  }
  for (int h = f->n_heap - 1; h >= 0; h--)
    if (f->heap[h].ptr == o.leaves[0])
      return f->heap[h].until == in->id ? h : -1;
  return -1;
}

/* The operand of `in` whose buffer in's result takes over, or -1: the one the plan chose
 * (a dynamic-update-slice's operand 0, or an operand read only at the element being written,
 * that dies at `in`), when it holds that buffer here too.  The buffer then lives on as in's
 * result, and the arena needs no new range for it. */
static int reused_operand(cg_function *f, const ir_instr *in, int *heap) {
  if ((f->result_buffer && f->result_buffer[in->id]) || !f->heap || !f->plan || !f->owns_frame)
    return -1;
  int k = f->plan->reuse[in->id];
  if (k >= 0 && (*heap = dying_buffer(f, in, k)) >= 0)
    return k;
  return -1;
}

void cg_outline(cg_function *f, ir_instr *in, cg_kernel_fn body, bool may_fail) {
  int h = -1, k = reused_operand(f, in, &h);
  LLVMValueRef out = k >= 0 ? f->values[in->operands[k]->id].leaves[0] : result_leaf(f, in);
  if (k >= 0)
    cg_report_add(f, (cg_report_line){in, in->operands[k], in->shape, h});
  kernel_call kc;
  kernel_begin(f, in, &out, 1, &kc);
  kc.kf.in_place = k >= 0 ? in : NULL;
  kc.kf.in_place_operand = k;
  body(&kc.kf, in, kc.kouts[0]);
  kernel_end(f, &kc, may_fail);
  cg_value v = {calloc(2, sizeof(LLVMValueRef)), calloc(2, sizeof(ir_shape *)), 1};
  v.leaves[0] = out;
  v.shapes[0] = in->shape;
  f->values[in->id] = v;
}

/* The caller's result buffer for leaf k of a tuple-writing kernel (a multi-output fusion, a
 * variadic sort, batch norm, ...: buffer_plan_tuple_writes_results) when the root tuple
 * returns that leaf through a get-tuple-element (the kernel then writes it there, no copy),
 * or NULL. */
static LLVMValueRef returned_leaf(cg_function *f, const ir_instr *in, int k) {
  if (!f->result_buffer || !buffer_plan_tuple_writes_results(in))
    return NULL;
  for (int i = 0; i < f->comp->n_instrs; i++) {
    const ir_instr *g = f->comp->instrs[i];
    if (g->op == IR_OP_GET_TUPLE_ELEMENT && g->operands[0] == in && g->attrs.u.tuple_index == k &&
        f->result_buffer[g->id])
      return f->result_buffer[g->id];
  }
  return NULL;
}

void cg_outline_value(cg_function *f, ir_instr *in, cg_value_lower_fn lower, bool may_fail) {
  cg_value v = {calloc((size_t)ir_shape_count_leaves(in->shape) + 1, sizeof(LLVMValueRef)),
                calloc((size_t)ir_shape_count_leaves(in->shape) + 1, sizeof(ir_shape *)), 0};
  cg_collect_leaves(in->shape, v.shapes, &v.n);
  for (int i = 0; i < v.n; i++)
    if (!(v.leaves[i] = returned_leaf(f, in, i)))
      v.leaves[i] = cg_alloc_result_leaf(f, in, i, v.shapes[i]);
  kernel_call kc;
  kernel_begin(f, in, v.leaves, v.n, &kc);
  kc.kf.result_of = in;
  kc.kf.result_leaves = kc.kouts;
  lower(&kc.kf, in);
  if (!f->cm->error) { /* a lowerer that did not use cg_result_value: copy its result over */
    cg_value r = kc.kf.values[in->id];
    for (int i = 0; i < r.n; i++)
      if (r.leaves[i] && r.leaves[i] != kc.kouts[i])
        cg_copy_leaf(&kc.kf, kc.kouts[i], r.leaves[i], r.shapes[i]);
  }
  kernel_end(f, &kc, may_fail);
  f->values[in->id] = v;
}
