/* fft.c — lowers fft (FFT, IFFT, RFFT, IRFFT over the 1 to 3 trailing axes) to one call of
 * the runtime's hlo_rt_fft (runtime/src/kernels/rt_fft.c: our own Stockham / Bluestein FFT, plans
 * cached per call site).  Each fft instruction gets a constant description global and its own
 * plan slot: a pointer-sized global, null at load, that the first call fills with the site's
 * plan.  The module's destructor (llvm.global_dtors, run at dlclose or process exit) calls
 * hlo_rt_fft_plan_release on every slot, so plans live as long as model.so is loaded.
 * Tests: testdata/golden/fft_* (make_fft.py), conformance fft, unit.codegen_test,
 * fft.plan_release (tests/fft/plan_release.c).
 */
#include <stdio.h>
#include <stdlib.h>

#include "codegen/cg_internal.h"
#include "hlo/rt.h"

#define FFT_RELEASE_FN "hlo.fft.release_plans"
/* The verifier's largest rank (compiler/shape). */
#define FFT_MAX_RANK 64

static int32_t rt_kind(ir_fft_type t) {
  switch (t) {
  case IR_FFT_IFFT: return HLO_RT_FFT_IFFT;
  case IR_FFT_RFFT: return HLO_RT_FFT_RFFT;
  case IR_FFT_IRFFT: return HLO_RT_FFT_IRFFT;
  default: return HLO_RT_FFT_FFT;
  }
}

/* hlo_rt_fft's description of `in` (hlo/rt.h): [kind, is_double, rank, fft_rank, operand
 * dims, result dims, fft_length] as a private constant i64 array. */
static LLVMValueRef fft_desc(cg_module *cm, const ir_instr *in) {
  const ir_shape *s = in->operands[0]->shape, *r = in->shape;
  const ir_i64_list *len = &in->attrs.u.fft.length;
  LLVMValueRef v[4 + 2 * FFT_MAX_RANK + 3];
  int n = 0;
  v[n++] = cg_i64(cm, rt_kind(in->attrs.u.fft.type));
  v[n++] = cg_i64(cm, s->et == IR_F64 || s->et == IR_C128);
  v[n++] = cg_i64(cm, s->rank);
  v[n++] = cg_i64(cm, len->n);
  for (int d = 0; d < s->rank; d++)
    v[n++] = cg_i64(cm, s->dims[d]);
  for (int d = 0; d < r->rank; d++)
    v[n++] = cg_i64(cm, r->dims[d]);
  for (int i = 0; i < len->n; i++)
    v[n++] = cg_i64(cm, len->v[i]);
  LLVMValueRef init = LLVMConstArray2(cm->i64, v, (uint64_t)n);
  char name[300];
  snprintf(name, sizeof name, "fft.desc.%s", in->name.p);
  LLVMValueRef g = cg_const_global(cm, init, name);
  LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
  return g;
}

/* Adds fn to the module's llvm.global_dtors (kept when another lowering made one already). */
static void register_dtor(cg_module *cm, LLVMValueRef fn) {
  LLVMTypeRef entry_t = LLVMStructTypeInContext(cm->ctx, (LLVMTypeRef[]){cm->i32, cm->ptr, cm->ptr}, 3, 0);
  LLVMValueRef old = LLVMGetNamedGlobal(cm->mod, "llvm.global_dtors");
  LLVMValueRef old_init = old ? LLVMGetInitializer(old) : NULL;
  int n = old_init ? LLVMGetNumOperands(old_init) : 0;
  LLVMValueRef *entries = calloc((size_t)n + 1, sizeof *entries);
  if (!entries) {
    cg_fail(cm, NULL, "out of memory registering the fft plans' destructor");
    return;
  }
  for (int i = 0; i < n; i++)
    entries[i] = LLVMGetOperand(old_init, (unsigned)i);
  entries[n] = LLVMConstStructInContext(
      cm->ctx, (LLVMValueRef[]){LLVMConstInt(cm->i32, 65535, 0), fn, LLVMConstNull(cm->ptr)}, 3, 0);
  LLVMValueRef init = LLVMConstArray2(entry_t, entries, (uint64_t)n + 1);
  free(entries);
  if (old)
    LLVMDeleteGlobal(old);
  LLVMValueRef dtors = LLVMAddGlobal(cm->mod, LLVMTypeOf(init), "llvm.global_dtors");
  LLVMSetInitializer(dtors, init);
  LLVMSetLinkage(dtors, LLVMAppendingLinkage);
}

/* The module's plan-releasing destructor, made and registered on first use:
 * void hlo.fft.release_plans() { hlo_rt_fft_plan_release(&slot) for every slot }. */
static LLVMValueRef release_fn(cg_module *cm) {
  LLVMValueRef fn = LLVMGetNamedFunction(cm->mod, FFT_RELEASE_FN);
  if (fn)
    return fn;
  fn = LLVMAddFunction(cm->mod, FFT_RELEASE_FN, LLVMFunctionType(cm->void_t, NULL, 0, 0));
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(cm->ctx);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(cm->ctx, fn, "entry"));
  LLVMBuildRetVoid(b);
  LLVMDisposeBuilder(b);
  register_dtor(cm, fn);
  return fn;
}

/* A new plan slot (ptr, null at load) for `in`, released by the module's destructor. */
static LLVMValueRef plan_slot(cg_module *cm, const ir_instr *in) {
  char name[300];
  snprintf(name, sizeof name, "fft.plan.%s", in->name.p);
  LLVMValueRef slot = LLVMAddGlobal(cm->mod, cm->ptr, name);
  LLVMSetInitializer(slot, LLVMConstNull(cm->ptr));
  LLVMSetLinkage(slot, LLVMInternalLinkage);
  LLVMValueRef fn = release_fn(cm);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(cm->ctx);
  LLVMPositionBuilderBefore(b, LLVMGetBasicBlockTerminator(LLVMGetEntryBasicBlock(fn)));
  cg_runtime_call_at(cm, b, CG_RT_hlo_rt_fft_plan_release, &slot, 1, "");
  LLVMDisposeBuilder(b);
  return slot;
}

void cg_lower_fft(cg_function *f, ir_instr *in) {
  cg_module *cm = f->cm;
  if (in->attrs.u.fft.length.n > 3 || in->operands[0]->shape->rank > FFT_MAX_RANK) {
    cg_fail(cm, in, "fft over %d axes of a rank-%d operand: at most 3 axes are defined", in->attrs.u.fft.length.n,
            in->operands[0]->shape->rank);
    return;
  }
  cg_value r = cg_result_value(f, in);
  LLVMValueRef args[5] = {f->ctx_arg, plan_slot(cm, in), fft_desc(cm, in), f->values[in->operands[0]->id].leaves[0],
                          r.leaves[0]};
  cg_fail_if_status(f, cg_runtime_call(cm, CG_RT_hlo_rt_fft, args, 5, "st"));
  f->values[in->id] = r;
}
