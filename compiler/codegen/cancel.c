/* cancel.c — the cancellation point generated code polls: a call of hlo_rt_poll(ctx)
 * (runtime/src/context/cancel.c) whose non-null status leaves through the function's failure path,
 * which frees the function's buffers and returns the status.  Emitted at every while-loop
 * back-edge (control.c), so an endless loop can be stopped from another thread.
 * Tests: tests/reliability/cancel_test.c, the hostile-input table (tests/hostile/).
 */
#include "codegen/cg_internal.h"

void cg_check_cancel(cg_function *f) {
  cg_module *cm = f->cm;
  LLVMValueRef st = cg_runtime_call(cm, CG_RT_hlo_rt_poll, &f->ctx_arg, 1, "poll");
  cg_fail_if_status(f, st);
}
