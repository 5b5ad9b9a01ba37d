/* replica_count.c — the replica count of a module whose header does not state it.  Pre:
 * verified.
 *
 * PyTorch/XLA and other exporters write post-partitioning modules whose collectives name
 * replica ids (replica_groups, source_target_pairs) but whose header has no replica_count;
 * run as one replica, their first collective fails.  When the header gives neither
 * replica_count nor more than one partition, every id is a replica id, so the module needs
 * (largest id + 1) replicas: that count goes to m->inferred_replica_count (not printed back;
 * the compiled model reports it as its replica count, docs/abi.md) and the driver says so.
 * Tests: tests/hloc_cli.cmake (cli.hloc.replicas_inferred), tests/hlorun_cli.cmake.
 */
#include "passes/passes.h"

static int64_t largest_id(const ir_instr *in) {
  int64_t top = -1;
  const ir_replica_groups *g = &in->attrs.u.collective.replica_groups;
  for (int i = 0; i < g->n_groups; i++)
    for (int k = 0; k < g->groups[i].n; k++)
      if (g->groups[i].v[k] > top)
        top = g->groups[i].v[k];
  for (int p = 0; p < in->attrs.u.collective.n_source_target_pairs; p++) {
    const ir_i64_list *pair = &in->attrs.u.collective.source_target_pairs[p];
    for (int k = 0; k < pair->n; k++)
      if (pair->v[k] > top)
        top = pair->v[k];
  }
  return top;
}

hlo_status pass_infer_replica_count(ir_module *m, int *out_count) {
  *out_count = 0;
  m->inferred_replica_count = 0;
  if (m->replica_count > 0 || m->num_partitions > 1)
    return NULL;
  int64_t top = -1;
  for (int c = 0; c < m->n_comps; c++)
    for (int i = 0; i < m->comps[c]->n_instrs; i++) {
      const ir_instr *in = m->comps[c]->instrs[i];
      if (ir_opcode_table[in->op].flags & OPF_COLLECTIVE) {
        int64_t t = largest_id(in);
        top = t > top ? t : top;
      }
    }
  if (top >= 1) {
    m->inferred_replica_count = top + 1;
    *out_count = (int)(top + 1 < 1 << 30 ? top + 1 : 1 << 30);
  }
  return NULL;
}
