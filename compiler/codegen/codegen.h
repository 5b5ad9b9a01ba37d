/* codegen.h — lowering of a verified, canonicalized module to LLVM IR (LLVM C API, LLVM 19).
 *
 * Input: a module after compiler/driver/pipeline.c's passes (no implicit broadcasts, no
 * elided constants).  Output: an LLVM module that defines, per hlo/abi.h, SYM_describe,
 * SYM_run (generic entry), SYM (typed entry) and a weak hlo_module_describe, and calls only
 * functions declared in runtime/include/hlo/rt.h.  Tests: testdata/golden via hlorun,
 * conformance, codegen_test.c.
 */
#ifndef HLOC_CODEGEN_CODEGEN_H
#define HLOC_CODEGEN_CODEGEN_H

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>
#include <stdbool.h>
#include <stdio.h>

#include "hlo/status.h"
#include "ir/ir.h"

typedef struct cg_options {
  const char *symbol;     /* SYM; NULL: derived from the module name */
  int opt_level;          /* 0..3 (loop shapes may depend on it) */
  int elided_constants;   /* number of constants filled by pass_fill_elided_constants */
  FILE *assignment;       /* where to write the buffer-assignment report, or NULL */
  /* The buffer plan of m (passes/buffer_plan.h), made by the caller; NULL: made here. */
  const struct buffer_plan *plan;
  int64_t arena_bytes;    /* out: the scratch arena one call of the entry needs */
  /* out: the largest arena buffers of the module (any computation), largest first, for
   * hloc -v and the buffer-assignment report; names point into the IR. */
  struct cg_temporary {
    const char *computation, *instruction;
    int64_t bytes;
  } largest[10];
  int n_largest;
} cg_options;

/* Emits `m` into a new LLVM module in `ctx` targeting `tm`; the caller owns *out_mod. */
HLO_MUST_USE hlo_status cg_emit_module(ir_module *m, cg_options *opts, LLVMContextRef ctx,
                                       LLVMTargetMachineRef tm, LLVMModuleRef *out_mod);

/* The C identifier SYM for a module name ("jit_f.1" -> "jit_f_1"), malloc'd. */
char *cg_symbol_for_module(const char *module_name);

#endif
