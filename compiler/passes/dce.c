/* dce.c — dead code elimination.  Pre: verified.  Removes instructions that no root,
 * side effect or control edge reaches, in every computation, then rebuilds use lists. */
#include "passes/passes.h"

hlo_status pass_dce(ir_module *m) {
  for (int i = 0; i < m->n_comps; i++)
    ir_computation_remove_dead(m->comps[i]);
  ir_rebuild_uses(m);
  return NULL;
}
