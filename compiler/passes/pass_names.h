/* pass_names.h — fresh instruction and computation names for passes that add them, and the
 * placement of the instructions they add.
 *
 * XLA wants names unique in the module; a pass that inserts instructions names them after
 * the instruction they serve plus a suffix (".lhs.broadcast", ".rhs.reshape"), adding ".1", ".2",
 * ... when that is taken.  The set holds views of the module's interned names.
 */
#ifndef HLOC_PASSES_PASS_NAMES_H
#define HLOC_PASSES_PASS_NAMES_H

#include "ir/ir.h"

typedef struct pass_names {
  ir_str *slot;
  size_t cap, n;
} pass_names;

/* Adds every instruction and computation name of m; false when out of memory. */
bool pass_names_init(pass_names *s, const ir_module *m);

/* "base.what", or "base.what.N" for the first N that is free, interned in m and added to the
 * set; a NULL name when out of memory. */
ir_str pass_names_fresh(pass_names *s, ir_module *m, ir_str base, const char *what);

void pass_names_free(pass_names *s);

/* Puts the instructions a pass appended to c (from index n0 on, created for the originals in
 * order; made[i] = how many for original i) just before the original they serve; false when
 * out of memory. */
bool pass_place_new_instrs(ir_computation *c, int n0, const int *made);

#endif
