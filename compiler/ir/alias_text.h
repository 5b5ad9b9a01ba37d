/* alias_text.h — the syntax of a module's input_output_alias={...} and buffer_donor={...},
 * which the IR keeps as written (compiler/ir/build.c checks them with these). */
#ifndef HLOC_IR_ALIAS_TEXT_H
#define HLOC_IR_ALIAS_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* Checks s[0..n): for input_output_alias (donor false)
 *   { OUT_INDEX: (PARAM, PARAM_INDEX[, may-alias|must-alias]), ... }
 * and for buffer_donor (donor true)
 *   { (PARAM, PARAM_INDEX), ... }
 * where an index is {} or {i,j,...}.  Returns -1 when well formed, else the byte offset of
 * the first character that does not fit. */
long ir_alias_text_check(const char *s, size_t n, bool donor);

struct ir_module;
/* The entry's donated parameters (input_output_alias): result_donor[r] (one entry per result
 * leaf of the entry) is the flat parameter leaf whose buffer result leaf r may share, or -1.
 * Pairs that name no leaf, or whose shapes differ, are left out.  Returns the pair count. */
int ir_alias_pairs(const struct ir_module *m, int *result_donor);

#endif
