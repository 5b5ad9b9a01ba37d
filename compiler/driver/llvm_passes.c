/* llvm_passes.c — LLVM's pass pipeline as hloc runs it, on a whole module (compile.c) or on
 * one chunk of it on a codegen thread (emit_parallel.c): the passes by name (the new pass
 * manager), the vectorizers from -O2, then non-temporal stores marked (codegen/nontemporal.c)
 * and, with --verify-each, the result verified.  compile.c's make_pipeline says which passes.
 * Tests: every test that compiles a model; cli.hloc.codegen_threads (chunks).
 */
#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "codegen/codegen.h"
#include "driver/driver_internal.h"

hlo_status drv_run_passes(LLVMModuleRef mod, LLVMTargetMachineRef tm, const char *passes, int opt_level) {
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  LLVMPassBuilderOptionsSetLoopVectorization(po, opt_level >= 2);
  LLVMPassBuilderOptionsSetSLPVectorization(po, opt_level >= 2);
  LLVMErrorRef e = LLVMRunPasses(mod, passes, tm, po);
  LLVMDisposePassBuilderOptions(po);
  if (!e)
    return NULL;
  char *msg = LLVMGetErrorMessage(e);
  hlo_status s = hlo_status_make(HLO_INTERNAL, "LLVM optimization failed: %s", msg);
  LLVMDisposeErrorMessage(msg);
  return s;
}

hlo_status drv_run_pipeline(LLVMModuleRef mod, LLVMTargetMachineRef tm, const drv_pipeline *p) {
  HLO_RETURN_IF_ERROR(drv_run_passes(mod, tm, p->passes, p->opt_level));
  cg_mark_nontemporal_stores(mod, p->x86);
  if (!p->verify)
    return NULL;
  char *err = NULL;
  if (!LLVMVerifyModule(mod, LLVMReturnStatusAction, &err)) {
    LLVMDisposeMessage(err);
    return NULL;
  }
  hlo_status s = hlo_status_make(HLO_INTERNAL, "internal error: LLVM's optimizer left invalid LLVM IR: %s",
                                 err ? err : "unknown LLVM error");
  LLVMDisposeMessage(err);
  return s;
}
