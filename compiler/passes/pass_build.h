/* pass_build.h — making new instructions in a pass: each is named after the instruction it
 * serves (pass_names), placed at the end of that instruction's computation (the pass puts
 * it before its user with pass_place_new_instrs) and given the user's source location, so
 * errors about it point at the text that caused it.  All return NULL when out of memory.
 */
#ifndef HLOC_PASSES_PASS_BUILD_H
#define HLOC_PASSES_PASS_BUILD_H

#include "ir/ir.h"
#include "passes/pass_names.h"

typedef struct pass_builder {
  ir_module *m;
  pass_names names;
  ir_instr *user; /* the instruction new ones are made for */
} pass_builder;

/* false when out of memory. */
bool pass_builder_init(pass_builder *b, ir_module *m);
void pass_builder_deinit(pass_builder *b);

/* An array shape with the default layout. */
ir_shape *pass_build_array(pass_builder *b, ir_etype et, int rank, const int64_t *dims);
/* A new instruction named "<user>.<what>". */
ir_instr *pass_build_instr(pass_builder *b, ir_opcode op, const char *what, ir_shape *shape, ir_instr *const *ops, int n);
/* broadcast(x) to `to`, operand dimension i going to map[i]. */
ir_instr *pass_build_broadcast(pass_builder *b, ir_instr *x, ir_shape *to, const int64_t *map, const char *what);
ir_instr *pass_build_binary(pass_builder *b, ir_opcode op, const char *what, ir_shape *s, ir_instr *x, ir_instr *y);
ir_instr *pass_build_compare(pass_builder *b, const char *what, ir_shape *s, ir_instr *x, ir_instr *y, ir_cmp_dir dir);
ir_instr *pass_build_iota(pass_builder *b, const char *what, ir_shape *s, int64_t dim);
/* A constant of shape s holding `data` (storage bytes, row-major), or zeros when data is NULL. */
ir_instr *pass_build_constant(pass_builder *b, const char *what, ir_shape *s, const void *data);

/* Runs rewrite on every instruction of c that `wants` (with b->user set to it), places the new
 * instructions before their users and drops the rewritten ones when dead.  `pass` names the
 * pass in an out-of-memory status. */
hlo_status pass_build_rewrite_each(pass_builder *b, ir_computation *c, bool (*wants)(const ir_instr *),
                                   hlo_status (*rewrite)(pass_builder *, ir_instr *), const char *pass);

#endif
