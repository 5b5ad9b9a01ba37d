/* driver.h — strings the stages together: text -> IR -> verify -> passes -> LLVM -> object
 * -> shared object / header / printed HLO.  Everything hloc and hlorun do, callable without
 * argv.  The pass order is on one screen in pipeline.c.  Tests: tests/ (driver_test.c, cli).
 */
#ifndef HLOC_DRIVER_DRIVER_H
#define HLOC_DRIVER_DRIVER_H

#include <stdbool.h>
#include <stdio.h>

#include "hlo/status.h"
#include "ir/diag.h"
#include "ir/ir.h"

typedef enum drv_emit {
  DRV_EMIT_SO, DRV_EMIT_OBJ, DRV_EMIT_LLVM, DRV_EMIT_ASM, DRV_EMIT_HLO, DRV_EMIT_HEADER,
  DRV_EMIT_NONE /* verify only */
} drv_emit;

#define DRV_MAX_CODEGEN_THREADS 8 /* the most --codegen-threads takes */

typedef struct drv_options {
  int opt_level;            /* 0..3, default 2 */
  const char *target_cpu;   /* "native" (default), "generic", or an LLVM CPU name */
  bool strict;              /* --strict */
  const char *dump_dir;     /* --dump-dir: module after each pass, LLVM IR before/after opt */
  bool time_passes;         /* --time-passes: timings to stderr */
  bool verify_each;         /* verify the IR (and LLVM IR) after every pass */
  const char *symbol;       /* --entry-name */
  bool after_passes;        /* --after-passes: --emit=hlo prints the module after the passes */
  FILE *diag_out;           /* where diagnostics and notes go (stderr when NULL) */
  const char *header_path;  /* --header: drv_compile_file also writes the C header here */
  struct drv_timings *timings; /* --time-passes rows are collected here (drv_compile_file
                                * sets it and prints one table); NULL: each row is printed */
  bool verbose;             /* -v: say what was decided (the arena size) on stderr */
  int64_t *arena_out;       /* when set, code generation stores the entry's arena bytes here */
  int64_t nontemporal_min_bytes; /* --nontemporal-min-bytes (cg_options'); 0 default, < 0 never */
  int codegen_threads;      /* --codegen-threads: threads optimizing and writing a .so's code (any
                             * module of 2 functions or more); 0: one per CPU this process may
                             * use (at most DRV_MAX_CODEGEN_THREADS) for modules of 4000 LLVM instructions or more */
} drv_options;

void drv_options_init(drv_options *o);

/* Reads, parses and verifies `path`; runs the passes when `run_passes`.  Diagnostics are
 * printed to o->diag_out; the status says whether it worked. */
HLO_MUST_USE hlo_status drv_load(const char *path, const drv_options *o, bool run_passes,
                                 ir_module **out_module);

/* Compiles `path` to `out_path` as `emit` (and the header to o->header_path when set),
 * loading the module once.  With o->time_passes, prints one table of stage times. */
HLO_MUST_USE hlo_status drv_compile_file(const char *path, const char *out_path, drv_emit emit,
                                         const drv_options *o);

/* Lowers a loaded, passed module to native code and writes `out_path` as `emit`
 * (so, obj, llvm, asm, header).  Implemented in compile.c; the header in header.c. */
HLO_MUST_USE hlo_status drv_emit_native(ir_module *m, const char *out_path, drv_emit emit,
                                        const drv_options *o);

/* Is `path` (with contents text) StableHLO MLIR?  By the .mlir suffix, else by its content. */
bool drv_is_mlir(const char *path, const char *text, size_t len);

/* Picks the emit kind from an output file's suffix (.so .o .ll .s .hlo .h); false if none. */
bool drv_emit_from_suffix(const char *out_path, drv_emit *out_emit);

#endif
