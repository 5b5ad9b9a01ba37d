/* own_element.c — which operands of an instruction its kernel reads only at the element it
 * writes (buffer_plan_reads_only_own_element): the IR fact behind buffer assignment's in-place
 * elementwise results (buffer_plan.c), where a result takes over the buffer of an operand that
 * dies at it.
 *
 * Element i of the result may overwrite element i of the operand when the kernel reads that
 * operand only at linear index i while computing element i, and both have the same element
 * size (so element i occupies the same bytes in both).  Then, whatever order the loop and
 * the thread pool run the elements in, every element of the operand is read before it is
 * overwritten and by no other element's computation.  For a fused computation (codegen's
 * fused loop kernels) that means: every path from the root to the parameter goes through
 * elementwise instructions (array operands), reshape, bitcast or copy (read at the same
 * linear index), or through a row reduction of a row fusion, whose row pass reads the row
 * at its own indices before any element of that row is written.  Broadcast, transpose,
 * slice, pad, concatenate, reverse and dynamic-slice read other indices; a dot or
 * convolution (kOutput fusion) writes the result buffer before the epilogue reads.
 * Tests: testdata/golden/reuse_* (make_reuse.py), tests/arena/reuse.sh.
 */
#include <stdlib.h>

#include "passes/buffer_plan.h"

/* How a fused instruction is evaluated: not at all, only at the root's own linear index, or
 * (also) at other indices. */
enum { EVAL_NONE = 0, EVAL_OWN = 1, EVAL_OTHER = 2 };

static void eval_at(unsigned char *ev, const ir_instr *x, unsigned char how) {
  if (how > ev[x->id])
    ev[x->id] = how;
}

/* Whether y reads operand x (of y's element count) at y's own linear index. */
static bool same_index_reader(const ir_instr *y, const ir_instr *x) {
  int64_t ny = 0, nx = 0;
  if (!ir_shape_num_elements(y->shape, &ny) || !ir_shape_num_elements(x->shape, &nx) || nx != ny)
    return false;
  if (ir_is_elementwise(y))
    return x->shape->rank == y->shape->rank || ny == 1;
  switch (ir_opcode_table[y->op].family) {
  case IR_FAM_RESHAPE: case IR_FAM_BITCAST: case IR_FAM_COPY: return true;
  default: return false;
  }
}

/* Marks, from the root down, how each instruction of fused computation c is evaluated. */
static void mark_evaluation(const ir_computation *c, unsigned char *ev) {
  ev[c->root->id] = EVAL_OWN;
  for (int i = c->n_instrs - 1; i >= 0; i--) {
    const ir_instr *y = c->instrs[i];
    if (ev[y->id] == EVAL_NONE)
      continue;
    for (int k = 0; k < y->n_operands; k++) {
      const ir_instr *x = y->operands[k];
      unsigned char how = EVAL_OTHER;
      if (y->op == IR_OP_REDUCE && y != c->root)
        how = k == 0 && ir_shape_same_dims(x->shape, c->root->shape) ? EVAL_OWN : EVAL_OTHER; /* row pass */
      else if (ev[y->id] == EVAL_OWN && same_index_reader(y, x))
        how = EVAL_OWN;
      eval_at(ev, x, how);
    }
  }
}

/* Whether fused computation c reads its parameter p only at the root's own linear index. */
static bool fused_param_own_element(const ir_computation *c, int p) {
  if (c->root->op == IR_OP_REDUCE || c->root->shape->et == IR_TUPLE || p >= c->n_params)
    return false;
  for (int i = 0; i < c->n_instrs; i++)
    if (c->instrs[i]->op == IR_OP_DOT || c->instrs[i]->op == IR_OP_CONVOLUTION || c->instrs[i]->id != i)
      return false;
  unsigned char *ev = calloc((size_t)c->n_instrs + 1, 1);
  if (!ev)
    return false;
  mark_evaluation(c, ev);
  bool ok = ev[c->params[p]->id] != EVAL_OTHER;
  free(ev);
  return ok;
}

bool buffer_plan_reads_only_own_element(const ir_instr *in, int k) {
  const ir_shape *r = in->shape, *o = in->operands[k]->shape;
  int64_t rb = 0, ob = 0, rn = 0, on = 0;
  if (r->et == IR_TUPLE || o->et == IR_TUPLE || !ir_etype_is_array(r->et) || !ir_etype_is_array(o->et) || r->dyn ||
      o->dyn || !ir_shape_byte_size(r, &rb) || !ir_shape_byte_size(o, &ob) || !ir_shape_num_elements(r, &rn) ||
      !ir_shape_num_elements(o, &on) || rb != ob || rn != on)
    return false;
  if (ir_is_elementwise(in))
    return o->rank == r->rank;
  if (in->op == IR_OP_FUSION && in->n_called == 1) {
    for (int j = 0; j < in->n_operands; j++)
      if (j != k && in->operands[j] == in->operands[k])
        return false; /* one buffer behind two parameters: the kernel would see two pointers */
    return fused_param_own_element(in->called[0], k);
  }
  return false;
}
