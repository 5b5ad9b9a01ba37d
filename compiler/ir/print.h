/* print.h — canonical HLO text of a module, in the form XLA's HloModule::ToString prints and
 * ir_parse_module reads back: print(parse(print(parse(x)))) == print(parse(x)).
 * Tests: testdata/parse/ok round trip (tests/roundtrip.c).
 */
#ifndef HLOC_IR_PRINT_H
#define HLOC_IR_PRINT_H

#include <stdio.h>

#include "hlo/status.h"
#include "ir/ir.h"

/* Writes the module to f.  Fails only on a write error. */
HLO_MUST_USE hlo_status ir_print_module(const ir_module *m, FILE *f);
/* The module as a malloc'd NUL-terminated string (caller frees); NULL when out of memory. */
char *ir_print_module_to_string(const ir_module *m, size_t *out_len);
/* One instruction's line, without indentation or newline, malloc'd. */
char *ir_print_instr_to_string(const ir_instr *in);
/* A literal as XLA's literal printer writes it ("f32[2,2] {{1, 2}, {3, 4}}" when
 * with_shape, else just the value part).  malloc'd. */
char *ir_print_literal_to_string(const ir_literal *lit, int with_shape);
/* Shortest decimal text of one element value of type et that reads back to the same bits;
 * writes into buf (cap >= 64).  `elem` points at storage_bytes bytes. */
void ir_format_element(ir_etype et, const void *elem, char *buf, size_t cap);

#endif
