/* parse.h — the HLO text front end: re2c lexer (hlo.re) + Bison parser (hlo.y) -> IR.
 *
 * Accepts everything XLA's parser accepts (see ../shared/reference/xla-hlo-text.md): a full
 * module, a module without header, computations with/without signatures, both printing
 * styles.  Errors go to `diags` as "file:line:col: error: ..." and the call returns a status
 * that carries the first one rendered.  Never crashes, hangs or leaks on any input.
 * Tests: testdata/parse/ok (round trip), testdata/parse/err (expected messages), fuzz/.
 */
#ifndef HLOC_GRAMMAR_PARSE_H
#define HLOC_GRAMMAR_PARSE_H

#include <stddef.h>

#include "hlo/status.h"
#include "ir/diag.h"
#include "ir/ir.h"

/* Parses `text` (len bytes; need not be NUL-terminated).  On success *out_module owns a new
 * module (free with ir_module_destroy) whose instructions have operands, called computations
 * and user lists resolved; shapes are as written (or NULL where the text omitted one and the
 * verifier must infer it).  On failure *out_module is NULL and diags holds the errors. */
HLO_MUST_USE hlo_status ir_parse_module(const char *text, size_t len, ir_diag_list *diags,
                                        ir_module **out_module);

/* The same, for tests that prove the out-of-memory paths: the module arena fails its
 * fail_alloc_after-th allocation (0: never); *out_fired says whether that happened. */
HLO_MUST_USE hlo_status ir_parse_module_failing(const char *text, size_t len, ir_diag_list *diags,
                                                int64_t fail_alloc_after, bool *out_fired,
                                                ir_module **out_module);

#endif
