/* fusion_siblings.h — multi-output fusion of sibling groups, for fusion.c: which of one
 * computation's fusion groups merge into one fusion with several outputs (a tuple root, XLA's
 * form), and the computation's order once such fusions are built.  fusion_siblings.c;
 * tests: testdata/golden/fusion_mof_* and cli.hloc.fusion.
 */
#ifndef HLOC_PASSES_FUSION_SIBLINGS_H
#define HLOC_PASSES_FUSION_SIBLINGS_H

#include "hlo/status.h"
#include "ir/ir.h"

/* The groups an instruction belongs to (fusion.c): one, or several for cheap producers
 * (broadcasts, iotas, scalar constants) duplicated into every group that reads them. */
typedef struct fusion_membership {
  int *groups;
  int n, cap;
} fusion_membership;

static inline bool fusion_membership_has(const fusion_membership *m, int g) {
  for (int i = 0; i < m->n; i++)
    if (m->groups[i] == g)
      return true;
  return false;
}

typedef enum { FUSION_SIB_NONE, FUSION_SIB_LOOP, FUSION_SIB_REDUCE } fusion_sib_kind;

/* Sets of groups that become one fusion.  A set is named by its representative, the group of
 * its last root (groups are numbered from the computation's end, so the lowest number). */
typedef struct fusion_siblings {
  const ir_computation *c;
  const fusion_membership *mem; /* by instruction position */
  const int *roots;             /* by group: its root's position */
  int n_groups;
  int *parent;                  /* by group: union-find */
  int *next;                    /* by group: the next group of its set in number order, or -1 */
  fusion_sib_kind *kind;        /* by representative */
  const ir_shape **space;       /* by representative: the loop's dimensions (a reduce's input's) */
  uint64_t *reduced;            /* by representative of a reduce set: its reduced dimensions */
  int *n_outs;                  /* by representative */
  int *seen;                    /* by group: search stamp */
  int *visited;                 /* by instruction: search stamp */
  ir_instr **stack;
  int stamp, budget;
} fusion_siblings;

/* Pre: c's use lists are current and positions are ids.  Decides which of the n_groups groups
 * merge (mem: each instruction's groups; roots: each group's root position). */
hlo_status fusion_siblings_merge(fusion_siblings *s, const ir_computation *c, const fusion_membership *mem,
                                 const int *roots, int n_groups);
/* The representative of group g's set. */
int fusion_siblings_find(fusion_siblings *s, int g);
void fusion_siblings_free(fusion_siblings *s);

/* After the fusions are built (a multi-output fusion in its last output's place, its
 * get-tuple-elements appended after the first n_orig positions): sorts c so that each
 * instruction follows its operands and control predecessors, keeping the order otherwise. */
hlo_status fusion_siblings_sort(ir_computation *c, int n_orig);

#endif
