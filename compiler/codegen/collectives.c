/* collectives.c — lowering of collectives between replicas: replica-id and partition-id read
 * the context; all-reduce, all-gather, reduce-scatter, all-to-all, collective-permute and
 * collective-broadcast (and their async -start/-done pairs; collective-permute's combined and
 * in-place forms too), ragged-all-to-all and collective-reduce (XLA's reduce to the group's
 * first member, whose value every member gets here) become one hlo_rt_collective call
 * (hlo/rt.h) with a constant description of the replica groups, the permute pairs and every
 * leaf's shape; the reducer computation is passed as a function pointer, and the description
 * says when it is one plain add/multiply/maximum/minimum/and/or (reducer_code).  All data movement
 * lives behind the runtime's collective backend, so no code here knows about threads or MPI.
 * Tests: testdata/runtime/coll_* (tests/runtime.cmake).
 */
#include <stdio.h>
#include <stdlib.h>

#include "codegen/cg_internal.h"
#include "hlo/rt.h"


void cg_lower_replica_id(cg_function *f, ir_instr *in) {
  cg_module *cm = f->cm;
  cg_rt_fn fn = in->op == IR_OP_REPLICA_ID ? CG_RT_hlo_rt_replica_id : CG_RT_hlo_rt_partition_id;
  LLVMValueRef id = cg_runtime_call(cm, fn, &f->ctx_arg, 1, "id");
  cg_value v = cg_alloc_result(f, in);
  LLVMBuildStore(cm->b, id, v.leaves[0]);
  f->values[in->id] = v;
}

typedef struct desc_buf {
  LLVMValueRef v[4096];
  int n;
} desc_buf;

static void put(cg_module *cm, desc_buf *d, int64_t x) {
  if (d->n < (int)(sizeof d->v / sizeof d->v[0]))
    d->v[d->n] = cg_i64(cm, x);
  d->n++;
}

static int kind_of(const ir_instr *in) {
  switch (in->op) {
  case IR_OP_ALL_REDUCE:
  case IR_OP_ALL_REDUCE_START:
  case IR_OP_COLLECTIVE_REDUCE: return 0; /* every replica gets the root's value */
  case IR_OP_ALL_GATHER:
  case IR_OP_ALL_GATHER_START: return 1;
  case IR_OP_REDUCE_SCATTER: return 2;
  case IR_OP_ALL_TO_ALL: return in->n_operands > 1 ? 4 : 3;
  case IR_OP_COLLECTIVE_PERMUTE:
  case IR_OP_COLLECTIVE_PERMUTE_START: return in->attrs.u.collective.inplace ? 7 : 5;
  case IR_OP_COLLECTIVE_BROADCAST: return 6;
  case IR_OP_RAGGED_ALL_TO_ALL: return 8;
  default: return -1;
  }
}

static void put_groups(cg_module *cm, desc_buf *d, const ir_replica_groups *g) {
  int size = g->n_groups > 0 ? g->groups[0].n : 0;
  for (int i = 0; i < g->n_groups; i++)
    if (g->groups[i].n != size)
      size = -1;
  if (size <= 0) { /* no groups, or an empty {} */
    put(cm, d, 0);
    put(cm, d, 0);
    return;
  }
  put(cm, d, g->n_groups);
  put(cm, d, size);
  for (int i = 0; i < g->n_groups; i++)
    for (int k = 0; k < size; k++)
      put(cm, d, g->groups[i].v[k]);
}

/* The reducer's code for the description (hlo/rt.h, HLO_RT_REDUCER_*): when the computation is
 * one add, multiply, maximum, minimum, and or or of its two distinct scalar parameters of one
 * element type, (operation << 8) | element type, so that the runtime can run it without
 * calling it per element (a plain loop, or an MPI built-in reduction); else -1. */
static int64_t reducer_code(const ir_instr *in, int kind) {
  if ((kind != 0 && kind != 2) || in->n_called < 1)
    return -1;
  const ir_computation *c = in->called[0];
  const ir_instr *root = c->root;
  if (c->n_params != 2 || !root || root->n_operands != 2 || root->operands[0]->op != IR_OP_PARAMETER ||
      root->operands[1]->op != IR_OP_PARAMETER || root->operands[0] == root->operands[1] || root->shape->rank != 0 ||
      root->operands[0]->shape->et != root->shape->et || root->operands[1]->shape->et != root->shape->et)
    return -1;
  int64_t op;
  switch (root->op) {
  case IR_OP_ADD: op = HLO_RT_REDUCER_ADD; break;
  case IR_OP_MULTIPLY: op = HLO_RT_REDUCER_MUL; break;
  case IR_OP_MAXIMUM: op = HLO_RT_REDUCER_MAX; break;
  case IR_OP_MINIMUM: op = HLO_RT_REDUCER_MIN; break;
  case IR_OP_AND: op = HLO_RT_REDUCER_AND; break;
  case IR_OP_OR: op = HLO_RT_REDUCER_OR; break;
  default: return -1;
  }
  return op << 8 | (int64_t)root->shape->et;
}

/* The in-place collective-permute's part of the description: the buffer count, then per
 * buffer whether its input and its output start indices are per pair, and its slice sizes;
 * then whether each start-index leaf is signed. */
static void put_inplace(cg_module *cm, desc_buf *d, const ir_instr *in, const cg_value *ops) {
  const ir_shape *ip = in->operands[0]->shape;
  int nb = ip->et == IR_TUPLE ? ip->n_elems : 1;
  put(cm, d, nb);
  for (int b = 0; b < nb; b++) {
    for (int k = 2; k < 4; k++) {
      const ir_shape *st = in->operands[k]->shape;
      const ir_shape *sb = ip->et == IR_TUPLE ? st->elems[b] : st;
      put(cm, d, sb->n_elems > 0 && sb->elems[0]->et == IR_TUPLE);
    }
    const ir_i64_list *ss = &in->attrs.u.collective.slice_sizes[b];
    for (int k = 0; k < ss->n; k++)
      put(cm, d, ss->v[k]);
  }
  for (int i = 2 * nb; i < ops->n; i++)
    put(cm, d, ir_etype_is_signed(ops->shapes[i]->et));
}

static LLVMValueRef build_desc(cg_module *cm, const ir_instr *in, int kind, const cg_value *ops, const cg_value *res) {
  desc_buf *d = calloc(1, sizeof *d);
  const ir_attrs *a = &in->attrs;
  put(cm, d, kind);
  put(cm, d, ops->n);
  put(cm, d, (kind >= 1 && kind <= 3 && a->dimensions.n > 0) ? a->dimensions.v[0] : -1);
  put_groups(cm, d, &a->u.collective.replica_groups);
  put(cm, d, a->u.collective.n_source_target_pairs);
  for (int p = 0; p < a->u.collective.n_source_target_pairs; p++) {
    put(cm, d, a->u.collective.source_target_pairs[p].v[0]);
    put(cm, d, a->u.collective.source_target_pairs[p].v[1]);
  }
  for (int i = 0; i < ops->n; i++) {
    const ir_shape *s = ops->shapes[i];
    put(cm, d, ir_etype_table[s->et].storage_bytes);
    put(cm, d, s->rank);
    for (int k = 0; k < s->rank; k++)
      put(cm, d, s->dims[k]);
  }
  if (kind == 7)
    put_inplace(cm, d, in, ops);
  for (int i = 0; i < res->n; i++) { /* result leaf sizes: checked against the group size */
    int64_t bytes = 0;
    if (ir_etype_is_array(res->shapes[i]->et))
      ir_shape_byte_size(res->shapes[i], &bytes);
    put(cm, d, bytes);
  }
  put(cm, d, reducer_code(in, kind));
  LLVMValueRef g = NULL;
  if (d->n <= (int)(sizeof d->v / sizeof d->v[0]))
    g = cg_const_global(cm, LLVMConstArray2(cm->i64, d->v, (uint64_t)d->n), "coll.desc");
  else
    cg_fail(cm, in, "collective description too large");
  free(d);
  return g;
}


/* Every operand leaf, in order. */
static cg_value operand_leaves(cg_function *f, const ir_instr *in) {
  int n = 0;
  for (int i = 0; i < in->n_operands; i++)
    n += f->values[in->operands[i]->id].n;
  cg_value v = {calloc((size_t)n + 1, sizeof(LLVMValueRef)), calloc((size_t)n + 1, sizeof(ir_shape *)), n};
  for (int i = 0, k = 0; i < in->n_operands; i++) {
    cg_value o = f->values[in->operands[i]->id];
    for (int j = 0; j < o.n; j++, k++) {
      v.leaves[k] = o.leaves[j];
      v.shapes[k] = o.shapes[j];
    }
  }
  return v;
}

static void emit_call(cg_function *f, ir_instr *in, LLVMValueRef desc, cg_value *ops, LLVMValueRef *res_leaves,
                      int n_res) {
  cg_module *cm = f->cm;
  char name[300];
  int nl = snprintf(name, sizeof name, "%.*s", (int)in->name.len, in->name.p);
  if (nl < 0 || nl >= (int)sizeof name)
    nl = (int)sizeof name - 1;
  LLVMValueRef nm = cg_const_global(cm, LLVMConstStringInContext(cm->ctx, name, (unsigned)nl, 0), "coll.name");
  bool reduces = in->op == IR_OP_ALL_REDUCE || in->op == IR_OP_ALL_REDUCE_START || in->op == IR_OP_REDUCE_SCATTER ||
                 in->op == IR_OP_COLLECTIVE_REDUCE;
  LLVMValueRef red = reduces && in->n_called > 0 ? cm->comp_fns[in->called[0]->id] : LLVMConstNull(cm->ptr);
  LLVMValueRef args[6] = {f->ctx_arg, desc, nm, cg_ptr_table(f, ops->leaves, ops->n, "coll.in"),
                          cg_ptr_table(f, res_leaves, n_res, "coll.out"), red};
  LLVMValueRef st = cg_runtime_call(cm, CG_RT_hlo_rt_collective, args, 6, "st");
  cg_fail_if_status(f, st);
}

/* The result leaves: one per operand leaf, but for the in-place collective-permute one per
 * leaf of its output operand (1), and one for ragged-all-to-all. */
static int result_leaves(const ir_instr *in, const cg_value *ops) {
  int kind = kind_of(in);
  return kind == 7 ? ir_shape_count_leaves(in->operands[1]->shape) : kind == 8 ? 1 : ops->n;
}

/* all-gather-start and collective-permute-start produce (input, result[, scratch...]) with
 * the input's leaves first (n_res of them); the done takes element 1.  Returns where the
 * result leaves start in v. */
static int result_offset(const ir_instr *in, int n_res) {
  bool paired = in->op == IR_OP_ALL_GATHER_START || in->op == IR_OP_COLLECTIVE_PERMUTE_START;
  return paired && in->shape->et == IR_TUPLE ? n_res : 0;
}

/* In-place permutes whose start indices come in per-pair tuples need one tuple per pair: the
 * runtime reads tuple p for pair p.  XLA's multiple read/write form (K sets of start indices,
 * each replica a source up to K times, K != the pair count) verifies, but nothing in XLA's
 * CPU backend says which pair uses which set, so it is refused here, saying so. */
static bool inplace_sets_per_pair(cg_module *cm, const ir_instr *in) {
  if (!in->attrs.u.collective.inplace)
    return true;
  const ir_shape *ip = in->operands[0]->shape;
  int nb = ip->et == IR_TUPLE ? ip->n_elems : 1, n_pairs = in->attrs.u.collective.n_source_target_pairs;
  for (int b = 0; b < nb; b++)
    for (int k = 2; k < 4; k++) {
      const ir_shape *st = ip->et == IR_TUPLE ? in->operands[k]->shape->elems[b] : in->operands[k]->shape;
      if (st->n_elems > 0 && st->elems[0]->et == IR_TUPLE && st->n_elems != n_pairs) {
        cg_fail(cm, in, "in-place collective-permute: buffer %d has %d sets of %s start indices for %d source-target "
                "pairs (several reads or writes per replica); which pair uses which set is not defined for a CPU "
                "backend, so it cannot be compiled", b, st->n_elems, k == 2 ? "input" : "output", n_pairs);
        return false;
      }
    }
  return true;
}

void cg_lower_collective(cg_function *f, ir_instr *in) {
  cg_module *cm = f->cm;
  int kind = kind_of(in);
  if (kind < 0) {
    cg_fail(cm, in, "collective '%s' cannot be compiled", ir_opcode_table[in->op].spelling);
    return;
  }
  if (!inplace_sets_per_pair(cm, in))
    return;
  if (in->op == IR_OP_COLLECTIVE_BROADCAST && in->attrs.u.collective.has_dynamic_root == 1) {
    cg_fail(cm, in, "collective-broadcast with has_dynamic_root=true (a root chosen at run time, new in XLA's GPU "
            "backend) cannot be compiled for a CPU");
    return;
  }
  cg_value ops = operand_leaves(f, in);
  cg_value v = cg_alloc_result(f, in);
  int n_res = result_leaves(in, &ops), off = result_offset(in, n_res);
  if (off + n_res > v.n) {
    cg_fail(cm, in, "the result of '%s' has fewer leaves than its operands", ir_opcode_table[in->op].spelling);
  } else {
    for (int i = 0; i < off; i++) /* the start's copy of its operands */
      cg_copy_leaf(f, v.leaves[i], ops.leaves[i], v.shapes[i]);
    cg_value res = {v.leaves + off, v.shapes + off, n_res};
    LLVMValueRef desc = build_desc(cm, in, kind, &ops, &res);
    if (desc)
      emit_call(f, in, desc, &ops, v.leaves + off, n_res);
  }
  free(ops.leaves);
  free((void *)ops.shapes);
  f->values[in->id] = v;
}

/* The -done of an async collective: all-reduce-start's value itself, or element 1 of the
 * (operand, result, ...) tuple of all-gather-start and collective-permute-start. */
void cg_lower_collective_done(cg_function *f, ir_instr *in) {
  const ir_instr *start = in->operands[0];
  cg_value s = f->values[start->id];
  int off = 0;
  if (start->shape->et == IR_TUPLE &&
      (start->op == IR_OP_ALL_GATHER_START || start->op == IR_OP_COLLECTIVE_PERMUTE_START))
    off = ir_shape_count_leaves(start->shape->elems[0]);
  int n = ir_shape_count_leaves(in->shape);
  cg_value v = {calloc((size_t)n + 1, sizeof(LLVMValueRef)), calloc((size_t)n + 1, sizeof(ir_shape *)), n};
  for (int i = 0; i < n && off + i < s.n; i++) {
    v.leaves[i] = s.leaves[off + i];
    v.shapes[i] = s.shapes[off + i];
  }
  f->values[in->id] = v;
}
