/* fold_dot_transposes.c — a dot reads a transposed operand where it lies.  Pre: verified.
 *
 * dot(a, transpose(b, dimensions=perm)) becomes dot(a, b) with the rhs dimension numbers
 * mapped through perm (dimension d of the transpose is dimension perm[d] of b), and likewise
 * for the lhs, as XLA's TransposeFolding does.  Only when the operand's free dimensions (not
 * batch, not contracting) keep their order through perm, since the dot's result lists them in
 * operand order; then the result is the same array, element for element.  The code generator
 * reads any operand layout by strides, so the transpose's copy (gemma3's logits read a
 * 262144 x 1152 bf16 embedding through one: 604 MB written per call) is saved.  A transpose
 * left without users goes with the next dead-code pass.
 * Tests: tests/hloc_cli.cmake (cli.hloc.fold_dot_transposes: the dump of
 * testdata/golden/dotin_folded_transposes/model.hlo), the golden dotin_* cases
 * (testdata/golden/make_dot_operands.py).
 */
#include <stdbool.h>
#include <stdint.h>

#include "passes/passes.h"

enum { FOLD_MAX_RANK = 64 }; /* higher ranks keep their transpose */

/* Whether dimension d is in list l. */
static bool listed(const ir_i64_list *l, int64_t d) {
  for (int i = 0; i < l->n; i++)
    if (l->v[i] == d)
      return true;
  return false;
}

/* Whether the free dimensions of transpose t (those in neither batch nor contracting), in
 * ascending order, map through its permutation to ascending dimensions of its operand. */
static bool keeps_free_order(const ir_instr *t, const ir_i64_list *batch, const ir_i64_list *contracting) {
  const ir_i64_list *perm = &t->attrs.dimensions;
  int64_t last = -1;
  for (int d = 0; d < perm->n; d++) {
    if (listed(batch, d) || listed(contracting, d))
      continue;
    if (perm->v[d] <= last)
      return false;
    last = perm->v[d];
  }
  return true;
}

/* Maps each entry of l through the permutation of transpose t, in the module's arena. */
static bool remap(ir_module *m, const ir_instr *t, ir_i64_list *l) {
  if (l->n == 0)
    return true;
  int64_t v[FOLD_MAX_RANK];
  for (int i = 0; i < l->n; i++)
    v[i] = t->attrs.dimensions.v[l->v[i]];
  ir_i64_list out = ir_i64_list_copy(m, v, l->n);
  if (!out.v)
    return false;
  *l = out;
  return true;
}

/* Folds operand `k` (0: lhs, 1: rhs) of dot x when it is a transpose that can be folded. */
static hlo_status fold_operand(ir_module *m, ir_instr *x, int k) {
  ir_instr *t = x->operands[k];
  /* Dynamic dimensions stay as written: the dynamic padder follows sizes through transposes. */
  if (t->op != IR_OP_TRANSPOSE || t->attrs.dimensions.n != t->shape->rank || t->shape->rank > FOLD_MAX_RANK ||
      t->shape->dyn || t->operands[0]->shape->dyn)
    return NULL;
  ir_dot_dnums *dn = &x->attrs.u.dot.dnums;
  ir_i64_list *batch = k == 0 ? &dn->lhs_batch : &dn->rhs_batch;
  ir_i64_list *contracting = k == 0 ? &dn->lhs_contracting : &dn->rhs_contracting;
  if (!keeps_free_order(t, batch, contracting))
    return NULL;
  if (!remap(m, t, batch) || !remap(m, t, contracting))
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "fold-dot-transposes: out of memory");
  x->operands[k] = t->operands[0];
  return NULL;
}

hlo_status pass_fold_dot_transposes(ir_module *m) {
  bool changed = false;
  for (int c = 0; c < m->n_comps; c++) {
    ir_computation *comp = m->comps[c];
    for (int i = 0; i < comp->n_instrs; i++) {
      ir_instr *x = comp->instrs[i];
      if (x->op != IR_OP_DOT || x->n_operands != 2)
        continue;
      for (int k = 0; k < 2; k++) {
        ir_instr *before = x->operands[k];
        HLO_RETURN_IF_ERROR(fold_operand(m, x, k));
        changed |= x->operands[k] != before;
      }
    }
  }
  if (changed)
    ir_rebuild_uses(m);
  return NULL;
}
