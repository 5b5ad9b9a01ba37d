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

#include "hlo/rt.h"
#include "hlo/status.h"
#include "ir/ir.h"

typedef struct cg_options {
  const char *symbol;     /* SYM; NULL: derived from the module name */
  int opt_level;          /* 0..3 (loop shapes may depend on it) */
  int elided_constants;   /* number of constants filled by pass_fill_elided_constants */
  FILE *assignment;       /* where to write the buffer-assignment report, or NULL */
  /* The buffer plan of m (passes/buffer_plan.h), made by the caller; NULL: made here. */
  const struct buffer_plan *plan;
  /* Loop results of at least this many bytes are written with non-temporal stores where the
   * result buffer is 64-byte aligned (fused.c, cg_mark_nontemporal_stores); 0: the default,
   * CG_NONTEMPORAL_MIN_BYTES; negative: never. */
  int64_t nontemporal_min_bytes;
  int64_t arena_bytes;    /* out: the scratch arena one call of the entry needs */
  /* out: the largest arena buffers of the module (any computation), largest first, for
   * hloc -v and the buffer-assignment report; names point into the IR. */
  struct cg_temporary {
    const char *computation, *instruction;
    int64_t bytes;
  } largest[10];
  int n_largest;
} cg_options;

/* The default of cg_options.nontemporal_min_bytes: 64 MiB.  On the Intel host measured
 * (docs/performance.md, "Non-temporal stores"), a 32 MiB result written with them and read
 * back was slower than with ordinary stores, a 64 MiB one faster written alone and read back. */
#define CG_NONTEMPORAL_MIN_BYTES HLO_RT_NONTEMPORAL_MIN_BYTES

/* After LLVM's optimization of a module cg_emit_module made: in the loop functions fused.c
 * marked for it, every vector store whose alignment LLVM proved to be at least its size
 * becomes non-temporal (!nontemporal: MOVNTPS and its kin on x86), and each such function
 * ends with an sfence, so that the stores are visible before the thread pool reports the
 * loop done.  Only for x86 targets (`x86` false: nothing is changed). */
void cg_mark_nontemporal_stores(LLVMModuleRef mod, bool x86);

/* The LLVM instructions in fn's body (0 for a declaration). */
size_t cg_count_instructions(LLVMValueRef fn);

/* Emits `m` into a new LLVM module in `ctx` targeting `tm`; the caller owns *out_mod. */
HLO_MUST_USE hlo_status cg_emit_module(ir_module *m, cg_options *opts, LLVMContextRef ctx,
                                       LLVMTargetMachineRef tm, LLVMModuleRef *out_mod);

/* The C identifier SYM for a module name ("jit_f.1" -> "jit_f_1"), malloc'd; "hlo_" goes in
 * front of a reserved one ("exp" -> "hlo_exp"). */
char *cg_symbol_for_module(const char *module_name);
/* Whether SYM would clash with a symbol the process or the model's code needs: main, the
 * runtime's hlo_rt_* and hlo_module_describe, or SYM, SYM_run or SYM_describe defined by a
 * loaded library (the C and math libraries: a model named "exp" calling exp, or a process
 * whose libm's powf64 would stand in for the entry point of a model named "powf64"). */
bool cg_symbol_reserved(const char *sym);

#endif
