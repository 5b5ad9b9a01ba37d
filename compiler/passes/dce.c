/* dce.c — dead code elimination.  Pre: verified.
 *
 * In every computation, keeps what the root, a side-effecting instruction (OPF_SIDE_EFFECT:
 * infeed, outfeed, send/recv, rng, custom-call, collectives, after-all) or a parameter reaches
 * through operands and control edges, and drops the rest; then drops the computations that the
 * entry no longer reaches through called computations, renumbers ids and rebuilds use lists.
 * Marking uses an explicit work list, so a chain of 10^6 instructions needs no deep stack.
 * Tests: tests/hloc_cli.cmake (cli.hloc.dce: the 03-dce.hlo dump of testdata/driver/dce.hlo).
 */
#include <stdlib.h>

#include "passes/passes.h"

static hlo_status out_of_memory(void) {
  return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory in dead code elimination");
}

static void push_live(ir_instr *in, unsigned char *live, ir_instr **work, int *n) {
  if (live[in->id])
    return;
  live[in->id] = 1;
  work[(*n)++] = in; /* each instruction is pushed once: n_instrs slots suffice */
}

/* Marks live[] for everything the roots of liveness reach. */
static void mark_live(ir_computation *c, unsigned char *live, ir_instr **work) {
  int n = 0;
  push_live(c->root, live, work, &n);
  for (int i = 0; i < c->n_instrs; i++) {
    ir_instr *in = c->instrs[i];
    if ((ir_opcode_table[in->op].flags & OPF_SIDE_EFFECT) || in->op == IR_OP_PARAMETER)
      push_live(in, live, work, &n);
  }
  while (n > 0) {
    ir_instr *in = work[--n];
    for (int k = 0; k < in->n_operands; k++)
      push_live(in->operands[k], live, work, &n);
    for (int k = 0; k < in->common.n_control_predecessors; k++)
      push_live(in->common.control_predecessors[k], live, work, &n);
  }
}

static hlo_status dce_computation(ir_computation *c) {
  if (!c->root || c->n_instrs == 0)
    return NULL;
  for (int i = 0; i < c->n_instrs; i++)
    c->instrs[i]->id = i;
  unsigned char *live = calloc((size_t)c->n_instrs, 1);
  ir_instr **work = malloc((size_t)c->n_instrs * sizeof *work);
  if (!live || !work) {
    free(live);
    free(work);
    return out_of_memory();
  }
  mark_live(c, live, work);
  int j = 0;
  for (int i = 0; i < c->n_instrs; i++)
    if (live[i])
      c->instrs[j++] = c->instrs[i];
  c->n_instrs = j;
  for (int i = 0; i < c->n_instrs; i++)
    c->instrs[i]->id = i;
  free(live);
  free(work);
  return NULL;
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
    HLO_RETURN_IF_ERROR(dce_computation(m->comps[i]));
  HLO_RETURN_IF_ERROR(drop_dead_computations(m));
  ir_rebuild_uses(m);
  return NULL;
}
