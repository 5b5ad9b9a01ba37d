/* checks.h — hlorun's evaluation of a StableHLO file's check ops on a run's results
 * (checks.c; the tolerances are in docs/stablehlo.md).
 */
#ifndef HLOC_TOOLS_CHECKS_H
#define HLOC_TOOLS_CHECKS_H

#include <stdio.h>

#include "grammar/mlir.h"
#include "hlo/abi.h"
#include "hlo/status.h"

/* The check table of a StableHLO file (its check.expect_* ops and the entry results they
 * compare), read by translating the file again (grammar/mlir.h: no compiler, no LLVM); empty
 * for HLO text.  Free with mlir_checks_free. */
HLO_MUST_USE hlo_status checks_read(const char *path, mlir_checks *out);

/* Evaluates every check of `ch` on `results` (the entry's result leaves, as desc describes
 * them).  Each failing check is one line on err ("FILE:LINE:COL: check.expect_close failed:
 * worst element [i,j] actual X expected Y ..."); the status is FAILED_PRECONDITION when any
 * failed.  When all hold, "N checks passed" goes to out (when out is not NULL). */
HLO_MUST_USE hlo_status checks_evaluate(const char *model, const mlir_checks *ch, const hlo_module_desc *desc,
                                        void *const *results, FILE *out, FILE *err);

#endif
