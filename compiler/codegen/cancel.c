/* cancel.c — the cancellation point generated code polls: a call of hlo_rt_poll(ctx)
 * (runtime/src/cancel.c) whose non-null status leaves through the function's failure path,
 * which frees the function's buffers and returns the status.  Emitted at every while-loop
 * back-edge (control.c), so an endless loop can be stopped from another thread.
 * Tests: tests/reliability/cancel_test.c, the hostile-input table (tests/hostile/).
 */
#include "codegen/cg_internal.h"

void cg_check_cancel(cg_function *f) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  LLVMTypeRef poll_t = LLVMFunctionType(cm->ptr, (LLVMTypeRef[]){cm->ptr}, 1, 0);
  LLVMValueRef st = LLVMBuildCall2(b, poll_t, cg_runtime_fn(cm, "hlo_rt_poll", poll_t), &f->ctx_arg, 1, "poll");
  cg_fail_if_status(f, st);
}
