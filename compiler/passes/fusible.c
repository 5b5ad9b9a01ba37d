/* fusible.c — the one fusibility predicate: which instructions a fused loop kernel can
 * compute element by element from its operands (fusion_member_ok).  The fusion pass groups
 * only such instructions (and adds cost choices of its own: fusion.c), and the code generator
 * (compiler/codegen/fused.c) asks the same predicate which members of a fusion, written or
 * made, and which single instructions it emits as loop kernels.
 * fusion_inline_reduce_ok: which reduces a loop computes inline, asked by both too;
 * fusion_variadic_reduce_ok: which variadic reduces a loop kernel folds (and fusion.c gives
 * their iota inputs).
 * Tests: the golden suites (fused and unfused forms of every op), tests/hloc_cli_cases.sh.
 */
#include "passes/passes.h"

bool fusion_member_ok(const ir_instr *x) {
  if (x->shape->et == IR_TUPLE || !ir_etype_is_array(x->shape->et) || x->shape->dyn)
    return false;
  if (ir_is_elementwise(x))
    return true;
  switch (ir_opcode_table[x->op].family) {
  case IR_FAM_BROADCAST: case IR_FAM_TRANSPOSE: case IR_FAM_SLICE: case IR_FAM_REVERSE: case IR_FAM_IOTA:
  case IR_FAM_PAD: case IR_FAM_DYNAMIC_SLICE:
    return true;
  case IR_FAM_RESHAPE: case IR_FAM_BITCAST: case IR_FAM_COPY:
    return x->operands[0]->shape->et == x->shape->et;
  case IR_FAM_CONCATENATE: return x->n_operands <= FUSION_KERNEL_MAX_CONCAT_OPERANDS;
  case IR_FAM_CONSTANT: return x->attrs.u.literal && x->attrs.u.literal->data && x->attrs.u.literal->n_elems == 0;
  case IR_FAM_REDUCE: return x->n_operands == 2 && x->n_called == 1;
  default: return false;
  }
}

bool fusion_variadic_reduce_ok(const ir_instr *x) {
  int n = x->n_operands / 2;
  if (x->op != IR_OP_REDUCE || n < 2 || n > FUSION_VARIADIC_MAX || x->n_operands != 2 * n || x->n_called != 1 ||
      x->shape->et != IR_TUPLE || ir_shape_count_leaves(x->shape) != n)
    return false;
  const ir_shape *s = x->operands[0]->shape;
  if (s->dyn || s->rank < 1 || s->rank > 64)
    return false;
  bool minor = false;
  for (int i = 0; i < x->attrs.dimensions.n; i++)
    minor |= x->attrs.dimensions.v[i] == s->rank - 1;
  for (int i = 0; i < 2 * n; i++) {
    const ir_shape *o = x->operands[i]->shape;
    if (!ir_etype_is_array(o->et) || ir_etype_is_complex(o->et) || o->dyn ||
        (i < n ? !ir_shape_same_dims(o, s) : o->rank != 0))
      return false;
  }
  return minor;
}

bool fusion_inline_reduce_ok(const ir_instr *x) {
  if (x->op != IR_OP_REDUCE || x->n_operands != 2 || x->n_called != 1 || x->shape->et == IR_TUPLE ||
      !ir_etype_is_array(x->shape->et) || ir_etype_is_complex(x->shape->et) || x->shape->dyn)
    return false;
  const ir_shape *in = x->operands[0]->shape;
  if (in->dyn || in->et != x->shape->et)
    return false;
  int64_t n = 1;
  for (int i = 0; i < x->attrs.dimensions.n; i++)
    n *= in->dims[x->attrs.dimensions.v[i]];
  const ir_computation *c = x->called[0];
  const ir_instr *root = c->root;
  return n >= 1 && n <= FUSION_INLINE_REDUCE_MAX && c->n_params == 2 && root && root->n_operands == 2 &&
         ir_is_elementwise(root) && ir_opcode_table[root->op].family == IR_FAM_BINARY &&
         root->shape->et == x->shape->et && root->operands[0]->op == IR_OP_PARAMETER &&
         root->operands[1]->op == IR_OP_PARAMETER && root->operands[0] != root->operands[1];
}
