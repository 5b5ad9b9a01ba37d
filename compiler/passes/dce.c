/* dce.c — dead code elimination.  Pre: verified.
 *
 * In every computation, keeps what the root, a side-effecting instruction (OPF_SIDE_EFFECT:
 * infeed, outfeed, send/recv, rng, custom-call, collectives, after-all) or a parameter reaches
 * through operands and control edges, and drops the rest; then drops the computations that the
 * entry no longer reaches through called computations, renumbers ids and rebuilds use lists.
 * The instructions go by ir_computation_remove_dead (compiler/ir/ir.c, the one dead-code
 * removal, which other passes call after their rewrites too); marking uses an explicit work
 * list, so a chain of 10^6 instructions needs no deep stack.
 * Tests: tests/hloc_cli.cmake (cli.hloc.dce: the 03-dce.hlo dump of testdata/driver/dce.hlo).
 */
#include <stdlib.h>

#include "passes/passes.h"

static hlo_status out_of_memory(void) {
  return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory in dead code elimination");
}

/* Keeps the computations reachable from the entry (text order kept), renumbering ids. */
static hlo_status drop_dead_computations(ir_module *m) {
  if (!m->entry || m->n_comps == 0)
    return NULL;
  for (int i = 0; i < m->n_comps; i++)
    m->comps[i]->id = i;
  unsigned char *live = calloc((size_t)m->n_comps, 1);
  ir_computation **work = malloc((size_t)m->n_comps * sizeof *work);
  if (!live || !work) {
    free(live);
    free(work);
    return out_of_memory();
  }
  int n = 0;
  live[m->entry->id] = 1;
  work[n++] = m->entry;
  while (n > 0) {
    ir_computation *c = work[--n];
    for (int i = 0; i < c->n_instrs; i++) {
      const ir_instr *in = c->instrs[i];
      /* A compact async start (dot-start, ...) runs the computation the parser built for it. */
      ir_computation *wrapped = ir_opcode_table[in->op].family == IR_FAM_ASYNC ? in->attrs.u.async.wrapped_comp : NULL;
      for (int k = 0; k <= in->n_called; k++) {
        ir_computation *callee = k < in->n_called ? in->called[k] : wrapped;
        if (callee && !live[callee->id]) {
          live[callee->id] = 1;
          work[n++] = callee;
        }
      }
    }
  }
  int j = 0;
  for (int i = 0; i < m->n_comps; i++)
    if (live[i])
      m->comps[j++] = m->comps[i];
  m->n_comps = j;
  for (int i = 0; i < m->n_comps; i++)
    m->comps[i]->id = i;
  free(live);
  free(work);
  return NULL;
}

hlo_status pass_dce(ir_module *m) {
  for (int i = 0; i < m->n_comps; i++)
    if (!ir_computation_remove_dead(m->comps[i]))
      return out_of_memory();
  HLO_RETURN_IF_ERROR(drop_dead_computations(m));
  ir_rebuild_uses(m);
  return NULL;
}
