/* driver_internal.h — what the driver's files share and nothing else sees: stage timing
 * for --time-passes (pipeline.c owns the table), LLVM's pipeline (llvm_passes.c) and the
 * chunks that run it on several threads (emit_parallel.c), and the C header writer (header.c).
 */
#ifndef HLOC_DRIVER_INTERNAL_H
#define HLOC_DRIVER_INTERNAL_H

#include "driver/driver.h"

#define DRV_MAX_TIMINGS 32

/* One row per stage, in the order the stages ran; stage names are static strings. */
typedef struct drv_timings {
  int n;
  struct { const char *stage; double ms; } rows[DRV_MAX_TIMINGS];
} drv_timings;

/* Monotonic clock in milliseconds. */
double drv_now_ms(void);

/* Records that `stage` ran from t0 until now, when o->time_passes: into o->timings, or
 * printed to stderr at once when o->timings is NULL. */
void drv_time_stage(const drv_options *o, const char *stage, double t0);

/* ---- emit_parallel.c: a shared object optimized and its code generated on several threads ---- */

#include <llvm-c/TargetMachine.h>

#define DRV_MAX_CODEGEN_CHUNKS (3 * DRV_MAX_CODEGEN_THREADS)

/* The threads to write mod's code on, given up to `threads`: 0 (one object) for one thread,
 * a module of one function or with aliases, or, unless the caller `asked` for the threads, a
 * small module; else the thread count, at most one per function. */
int drv_codegen_threads(LLVMModuleRef mod, int threads, bool asked);

/* How many object files a .so is linked from with `threads` threads (drv_codegen_threads):
 * one for 0, else the data and 3 chunks per thread (drv_emit_partitioned). */
int drv_codegen_objects(int threads);

/* ---- llvm_passes.c: LLVM's pipeline, on a whole module or a chunk ---- */

/* LLVM's optimization pipeline as hloc runs it (compile.c make_pipeline): the pass text,
 * vectorizers at -O2 and up, then non-temporal stores marked (on x86) and, with `verify`, the
 * result verified. */
typedef struct drv_pipeline {
  char passes[64];
  int opt_level;
  bool x86;
  bool verify;
} drv_pipeline;

/* Runs `passes` (the new pass manager's text) on mod for tm's target, the vectorizers on from
 * opt_level 2 (llvm_passes.c).  Any thread, on a module of its own context. */
HLO_MUST_USE hlo_status drv_run_passes(LLVMModuleRef mod, LLVMTargetMachineRef tm, const char *passes, int opt_level);

/* Runs p on mod for tm's target (llvm_passes.c).  Any thread, on a module of its own context. */
HLO_MUST_USE hlo_status drv_run_pipeline(LLVMModuleRef mod, LLVMTargetMachineRef tm, const drv_pipeline *p);

/* Writes mod's code on `threads` threads (this one included) as drv_codegen_objects(threads)
 * object files objs[], to be linked together: objs[0] the data (global initializers), the
 * others chunks of functions, each run through `pipeline` first unless it is NULL (mod came
 * optimized).  tm writes objs[0]; the other threads use target machines like it at `level`.
 * mod keeps the data and no function body afterwards. */
HLO_MUST_USE hlo_status drv_emit_partitioned(LLVMTargetMachineRef tm, LLVMCodeGenOptLevel level,
                                             const drv_pipeline *pipeline, LLVMModuleRef mod, int threads,
                                             const char *const *objs);

/* Writes the C header of m's typed entry point to `path` ("-": standard output). */
HLO_MUST_USE hlo_status drv_write_header(const ir_module *m, const drv_options *o, const char *path);

#endif
