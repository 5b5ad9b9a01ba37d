/* codegen_fuzz.c — libFuzzer entry point over the middle and back end: parse -> verify ->
 * the pipeline's passes -> LLVM IR generation (cg_emit_module) -> LLVMVerifyModule, as hloc
 * -O0 does before it emits object code (no LLVM optimization, no linking, nothing runs).
 * Oracle: whatever verifies either lowers to LLVM IR that LLVM's verifier accepts or fails
 * with a status; never a crash, leak or sanitizer report.  Build and run: docs/testing.md.
 */
#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "codegen/codegen.h"
#include "grammar/parse.h"
#include "passes/passes.h"
#include "shape/shape.h"

/* One target machine for the whole run (fuzz harness state, not library state). */
static LLVMTargetMachineRef target_machine(void) {
  static LLVMTargetMachineRef tm;
  if (tm)
    return tm;
  LLVMInitializeNativeTarget();
  LLVMInitializeNativeAsmPrinter();
  char *triple = LLVMGetDefaultTargetTriple(), *err = NULL;
  LLVMTargetRef target;
  if (LLVMGetTargetFromTriple(triple, &target, &err)) {
    fprintf(stderr, "no target: %s\n", err);
    abort();
  }
  tm = LLVMCreateTargetMachine(target, triple, "generic", "", LLVMCodeGenLevelNone, LLVMRelocPIC,
                               LLVMCodeModelDefault);
  LLVMDisposeMessage(triple);
  return tm;
}

static hlo_status run_passes(ir_module *m) {
  int filled = 0;
  HLO_RETURN_IF_ERROR(pass_fill_elided_constants(m, &filled));
  HLO_RETURN_IF_ERROR(pass_canonicalize_broadcasts(m));
  HLO_RETURN_IF_ERROR(pass_dce(m));
  HLO_RETURN_IF_ERROR(pass_expand_dots(m));
  HLO_RETURN_IF_ERROR(pass_expand_shuffle(m));
  return pass_dynamic_padder(m);
}

static void lower(ir_module *m) {
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef mod = NULL;
  cg_options co = {.symbol = NULL, .opt_level = 0, .elided_constants = m->n_filled_constants};
  hlo_status s = cg_emit_module(m, &co, ctx, target_machine(), &mod);
  if (!s) {
    char *err = NULL;
    if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &err)) {
      fprintf(stderr, "LLVM IR does not verify:\n%s\n", err);
      abort();
    }
    LLVMDisposeMessage(err);
  }
  hlo_status_free(s);
  if (mod)
    LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ir_diag_list d;
  ir_diag_init(&d, "fuzz.hlo", (const char *)data, size);
  ir_module *m = NULL;
  hlo_status s = ir_parse_module((const char *)data, size, &d, &m);
  shape_options opts = {.async_chains = true}; /* as hloc verifies before compiling */
  if (!s && shape_verify_module(m, &opts, &d)) {
    s = run_passes(m);
    if (!s)
      lower(m);
  }
  hlo_status_free(s);
  ir_module_destroy(m);
  ir_diag_deinit(&d);
  return 0;
}
