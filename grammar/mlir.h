/* mlir.h — the StableHLO MLIR front end: StableHLO (and the CHLO ops JAX emits) in MLIR's
 * pretty-printed or generic text -> the same IR the HLO front end builds, with no MLIR
 * library.  The text is translated op by op into HLO text (each StableHLO op as the HLO
 * instruction with the attributes HLO text would write), which the HLO parser then reads,
 * so attribute interpretation, shape inference and verification are shared; every
 * instruction keeps the MLIR line:col it came from, and diagnostics quote the MLIR source.
 * The check dialect's custom calls (check.expect_eq/_close/_almost_eq) become extra results
 * of the entry computation plus a side table that hlorun evaluates (docs/stablehlo.md).
 * Tests: tests/stablehlo.cmake, testdata/mlir/, tests/hostile/, fuzz/mlir_fuzz.c.
 */
#ifndef HLOC_GRAMMAR_MLIR_H
#define HLOC_GRAMMAR_MLIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hlo/status.h"
#include "ir/diag.h"
#include "ir/ir.h"

typedef enum mlir_check_kind {
  MLIR_CHECK_EQ,        /* every element equal (floats: ==, so NaN fails and -0 == +0) */
  MLIR_CHECK_CLOSE,     /* ULP distance within [min_ulp, max_ulp] (NaN vs NaN: 0) */
  MLIR_CHECK_ALMOST_EQ, /* |actual - expected| <= tolerance (NaN vs NaN holds) */
} mlir_check_kind;

/* One check: entry results `actual` and `expected` (indices into the entry's results). */
typedef struct mlir_check {
  mlir_check_kind kind;
  int line, col;        /* of the check op in the .mlir file */
  int actual, expected;
  uint64_t min_ulp, max_ulp;
  double tolerance;
} mlir_check;

typedef struct mlir_checks {
  mlir_check *items;    /* malloc'd; free with mlir_checks_free */
  int n;
  int first_check_result; /* entry results before this index are the function's own */
} mlir_checks;

void mlir_checks_free(mlir_checks *c);

/* Does the text look like MLIR (module, func.func, #loc or "builtin.module" first, after
 * comments)?  HLO text starts with HloModule or a computation. */
bool ir_text_is_mlir(const char *text, size_t len);

/* Translates MLIR text to HLO text.  On success *out_hlo (malloc'd, NUL-terminated) holds
 * the module, *out_locs (malloc'd; may be NULL when not wanted) the MLIR location of each of
 * its lines (index 0 is line 1), and out_checks (may be NULL) the checks.  Errors go to diags
 * (which quote the MLIR text) and the status carries the first. */
HLO_MUST_USE hlo_status ir_mlir_to_hlo(const char *text, size_t len, ir_diag_list *diags, char **out_hlo,
                                       size_t *out_len, ir_loc **out_locs, int *out_n_locs,
                                       mlir_checks *out_checks);

/* Parses MLIR text into a module as ir_parse_module does for HLO text (grammar/parse.h);
 * instruction locations point into the MLIR text.  out_checks may be NULL. */
HLO_MUST_USE hlo_status ir_parse_mlir(const char *text, size_t len, ir_diag_list *diags, ir_module **out_module,
                                      mlir_checks *out_checks);

#endif
