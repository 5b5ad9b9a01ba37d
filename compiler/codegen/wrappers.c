/* wrappers.c — lowering of the ops that wrap a computation or a copy: scan (a loop over the
 * scanned dimension calling the body with the carries, forward or reverse), the async wrappers
 * async-start/-update/-done and their compact spellings (call-start, ...), and
 * copy-start/copy-done.  Async ops run synchronously: the start computes the result, the
 * update forwards it, the done hands it out, so results equal the plain op's.  Values share
 * leaf buffers (no copies) except where a step needs its own storage.
 * Tests: testdata/golden/scan_*, async_*, copy_start_*, call_start_*.
 */
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_internal.h"

static int64_t count(const ir_shape *s) {
  int64_t n;
  ir_shape_num_elements(s, &n);
  return n;
}

/* A value of n leaves taken from src starting at leaf `from` (shared, not copied). */
static cg_value leaf_range(cg_value src, int from, int n) {
  cg_value v = {calloc((size_t)n + 1, sizeof(LLVMValueRef)), calloc((size_t)n + 1, sizeof(ir_shape *)), n};
  for (int i = 0; i < n; i++) {
    v.leaves[i] = src.leaves[from + i];
    v.shapes[i] = src.shapes[from + i];
  }
  return v;
}

/* Appends the leaves of v to dst (which has room) at *k. */
static void append(cg_value *dst, int *k, cg_value v) {
  for (int i = 0; i < v.n; i++) {
    dst->leaves[*k] = v.leaves[i];
    dst->shapes[*k] = v.shapes[i];
    (*k)++;
  }
}

/* Stores zero into every element of v's leaves (async contexts, which nothing reads). */
static void zero_fill(cg_function *f, cg_value v) {
  for (int i = 0; i < v.n; i++) {
    ir_etype et = v.shapes[i]->et;
    if (!v.leaves[i] || et == IR_TOKEN || count(v.shapes[i]) == 0)
      continue;
    cg_loop l = cg_loop_begin(f, cg_i64(f->cm, count(v.shapes[i])), "ctx.zero");
    cg_store(f, et, v.leaves[i], l.i, LLVMConstNull(cg_compute_type(f->cm, et)));
    cg_loop_end(f, &l);
  }
}

static void value_free(cg_value v) {
  free(v.leaves);
  free((void *)v.shapes);
}

/* ---- scan ---------------------------------------------------------------------------------- */

typedef struct scan_geom {
  int64_t len, pre, post; /* the scanned dimension's size, elements before and after it */
} scan_geom;

static scan_geom geom_of(const ir_shape *s, int64_t d) {
  scan_geom g = {s->dims[d], 1, 1};
  for (int i = 0; i < s->rank; i++) {
    if (i < d)
      g.pre *= s->dims[i];
    else if (i > d)
      g.post *= s->dims[i];
  }
  return g;
}

/* Copies slice t of `whole` (along the scanned dimension) into `part`, or back when to_whole. */
static void move_slice(cg_function *f, ir_etype et, scan_geom g, LLVMValueRef whole, LLVMValueRef part,
                       LLVMValueRef t, bool to_whole) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  if (g.pre * g.post == 0)
    return;
  cg_loop l = cg_loop_begin(f, cg_i64(cm, g.pre * g.post), "scan.slice");
  LLVMValueRef post = cg_i64(cm, g.post);
  LLVMValueRef p = LLVMBuildUDiv(b, l.i, post, ""), q = LLVMBuildURem(b, l.i, post, "");
  LLVMValueRef row = LLVMBuildAdd(b, LLVMBuildMul(b, p, cg_i64(cm, g.len), ""), t, "");
  LLVMValueRef wi = LLVMBuildAdd(b, LLVMBuildMul(b, row, post, ""), q, "");
  if (to_whole)
    cg_store(f, et, whole, wi, cg_load(f, et, part, l.i));
  else
    cg_store(f, et, part, l.i, cg_load(f, et, whole, wi));
  cg_loop_end(f, &l);
}

/* scan(inputs..., inits...): the result is (outputs stacked along d..., carries...).  The carry
 * leaves of the result hold the running carries; each step reads input slices into scratch,
 * calls the body, stores its outputs at step t and copies its carries back. */
void cg_lower_scan(cg_function *f, ir_instr *in) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  ir_computation *body = in->called[0];
  int nc = (int)in->attrs.u.scan.num_carries, ni = in->n_operands - nc;
  int64_t d = in->attrs.dimensions.v[0];
  scan_geom g = geom_of(in->operands[0]->shape, d);
  cg_value res = cg_result_value(f, in);
  f->values[in->id] = res;
  int n_carry_leaves = 0;
  for (int i = ni; i < in->n_operands; i++)
    n_carry_leaves += ir_shape_count_leaves(in->operands[i]->shape);
  int no = res.n - n_carry_leaves; /* output leaves: one array each */
  /* Carries start as the inits. */
  for (int i = ni, k = no; i < in->n_operands; i++) {
    cg_value init = f->values[in->operands[i]->id];
    for (int j = 0; j < init.n; j++, k++)
      cg_copy_leaf(f, res.leaves[k], init.leaves[j], res.shapes[k]);
  }
  int n_args = ni + n_carry_leaves;
  LLVMValueRef *args = calloc((size_t)n_args + 1, sizeof *args);
  LLVMValueRef *outs = calloc((size_t)res.n + 1, sizeof *outs);
  const ir_shape **out_shapes = calloc((size_t)res.n + 1, sizeof *out_shapes);
  for (int i = 0; i < ni; i++)
    args[i] = cg_alloc_leaf(f, body->params[i]->shape);
  for (int k = 0; k < n_carry_leaves; k++)
    args[ni + k] = res.leaves[no + k];
  int k = 0;
  const ir_shape *rs = body->root->shape;
  if (rs->et == IR_TUPLE) {
    cg_value step = cg_alloc_value(f, rs);
    for (int i = 0; i < step.n; i++, k++) {
      outs[k] = step.leaves[i];
      out_shapes[k] = step.shapes[i];
    }
    value_free(step);
  } else {
    outs[k] = cg_alloc_leaf(f, rs);
    out_shapes[k++] = rs;
  }
  cg_loop l = cg_loop_begin(f, cg_i64(cm, g.len), "scan");
  LLVMValueRef t = in->attrs.u.scan.is_reverse ? LLVMBuildSub(b, cg_i64(cm, g.len - 1), l.i, "t") : l.i;
  for (int i = 0; i < ni; i++) {
    const ir_shape *s = in->operands[i]->shape;
    move_slice(f, s->et, geom_of(s, d), f->values[in->operands[i]->id].leaves[0], args[i], t, false);
  }
  cg_call_computation(f, body, args, n_args, outs, k);
  for (int i = 0; i < no; i++)
    move_slice(f, res.shapes[i]->et, geom_of(res.shapes[i], d), res.leaves[i], outs[i], t, true);
  for (int i = no; i < res.n; i++)
    cg_copy_leaf(f, res.leaves[i], outs[i], res.shapes[i]);
  cg_loop_end(f, &l);
  free(args);
  free(outs);
  free((void *)out_shapes);
}

/* ---- async wrappers ------------------------------------------------------------------------ */

/* The chain an async op belongs to: start -> update... -> done.  Operands are bound in order,
 * at the start and at updates (late binding); operands past the computation's parameters bind
 * output buffers, which a synchronous run does not need.  The computation runs at the first
 * step where every parameter is bound and the result slot is bound (not written `()`), or at
 * the done. */
static const ir_instr *chain_start(const ir_instr *in) {
  while (in->op != IR_OP_ASYNC_START)
    in = in->operands[0];
  return in;
}

/* The computation the chain runs: the one named, or the one the parser built for a compact
 * form (dot-start, ...). */
static ir_computation *chain_comp(const ir_instr *start) {
  if (start->attrs.u.async.wrapped_comp)
    return start->attrs.u.async.wrapped_comp;
  if (start->n_called == 1 && (!start->attrs.u.async.compact || start->attrs.u.async.wrapped_opcode == IR_OP_CALL))
    return start->called[0];
  return NULL;
}

/* The result slot of a start or update is not bound yet: written () or, for a tuple result,
 * as its first elements only (the rest are bound later in the chain). */
static bool slot_unbound(const ir_instr *step) {
  const ir_shape *s = step->shape->elems[1];
  const ir_computation *c = chain_comp(chain_start(step));
  const ir_shape *r = c && c->root ? c->root->shape : NULL;
  return s->et == IR_TUPLE && (s->n_elems == 0 || (r && r->et == IR_TUPLE && s->n_elems < r->n_elems));
}

static int n_bound(const ir_instr *in) {
  if (in->op == IR_OP_ASYNC_START)
    return in->n_operands;
  return n_bound(in->operands[0]) + in->n_operands - 1;
}

/* Whether the computation has run by the end of step `in` (a start or update). */
static bool has_run(const ir_instr *in, int n_params) {
  if (n_bound(in) >= n_params && !slot_unbound(in))
    return true;
  return in->op == IR_OP_ASYNC_UPDATE && has_run(in->operands[0], n_params);
}

/* The leaves of the bound operands at step `in`, in order, into out (room for cap). */
static int bound_leaves(cg_function *f, const ir_instr *in, LLVMValueRef *out, const ir_shape **shapes, int cap) {
  int k = in->op == IR_OP_ASYNC_START ? 0 : bound_leaves(f, in->operands[0], out, shapes, cap);
  for (int i = in->op == IR_OP_ASYNC_START ? 0 : 1; i < in->n_operands; i++) {
    cg_value o = f->values[in->operands[i]->id];
    for (int j = 0; j < o.n && k < cap; j++, k++) {
      out[k] = o.leaves[j];
      shapes[k] = o.shapes[j];
    }
  }
  return k;
}

static int param_leaves(const ir_computation *c) {
  int n = 0;
  for (int i = 0; i < c->n_params; i++)
    n += ir_shape_count_leaves(c->params[i]->shape);
  return n;
}

/* Runs the chain's computation on the operands bound at `at`, writing `slot`. */
static void run_chain(cg_function *f, const ir_instr *at, cg_value slot) {
  ir_computation *c = chain_comp(chain_start(at));
  int cap = 0;
  for (const ir_instr *p = at; p; p = p->op == IR_OP_ASYNC_START ? NULL : p->operands[0])
    for (int i = 0; i < p->n_operands; i++)
      cap += ir_shape_count_leaves(p->operands[i]->shape);
  LLVMValueRef *args = calloc((size_t)cap + 1, sizeof *args);
  const ir_shape **shapes = calloc((size_t)cap + 1, sizeof *shapes);
  bound_leaves(f, at, args, shapes, cap);
  cg_call_computation(f, c, args, param_leaves(c), slot.leaves, slot.n);
  free(args);
  free((void *)shapes);
}

/* async-start/-update: ((bound operands...), result, context...), the operands shared, the
 * result computed when this step completes the binding, the context zero. */
static void lower_async_step(cg_function *f, ir_instr *in) {
  const ir_shape *s = in->shape;
  const ir_instr *st = chain_start(in);
  int n_params = chain_comp(st)->n_params;
  int total = ir_shape_count_leaves(s), n_ops = ir_shape_count_leaves(s->elems[0]);
  cg_value v = {calloc((size_t)total + 1, sizeof(LLVMValueRef)), calloc((size_t)total + 1, sizeof(ir_shape *)), total};
  int cap = 0;
  for (const ir_instr *p = in; p; p = p->op == IR_OP_ASYNC_START ? NULL : p->operands[0])
    for (int i = 0; i < p->n_operands; i++)
      cap += ir_shape_count_leaves(p->operands[i]->shape);
  LLVMValueRef *ops = calloc((size_t)cap + 1, sizeof *ops);
  const ir_shape **op_shapes = calloc((size_t)cap + 1, sizeof *op_shapes);
  bound_leaves(f, in, ops, op_shapes, cap);
  int k = 0;
  append(&v, &k, (cg_value){ops, op_shapes, n_ops}); /* the bound parameters; output buffers are not kept */
  free(ops);
  free((void *)op_shapes);
  const ir_instr *prev = in->op == IR_OP_ASYNC_UPDATE ? in->operands[0] : NULL;
  cg_value slot;
  if (prev && !slot_unbound(prev)) {
    cg_value pv = f->values[prev->id];
    slot = leaf_range(pv, ir_shape_count_leaves(prev->shape->elems[0]), ir_shape_count_leaves(prev->shape->elems[1]));
  } else {
    slot = cg_alloc_value(f, s->elems[1]);
  }
  if (has_run(in, n_params) && !(prev && has_run(prev, n_params)))
    run_chain(f, in, slot);
  append(&v, &k, slot);
  value_free(slot);
  for (int e = 2; e < s->n_elems; e++) {
    cg_value c = cg_alloc_value(f, s->elems[e]);
    zero_fill(f, c);
    append(&v, &k, c);
    value_free(c);
  }
  f->values[in->id] = v;
}

/* async-done: the result slot of its operand, run there if the chain has not run yet, or new
 * buffers for an output bound only here. */
static void lower_async_done(cg_function *f, ir_instr *in) {
  const ir_instr *prev = in->operands[0];
  int n_params = chain_comp(chain_start(in))->n_params;
  if (slot_unbound(prev)) {
    cg_value out = cg_alloc_result(f, in);
    run_chain(f, prev, out);
    f->values[in->id] = out;
    return;
  }
  cg_value pv = f->values[prev->id];
  cg_value slot = leaf_range(pv, ir_shape_count_leaves(prev->shape->elems[0]), ir_shape_count_leaves(prev->shape->elems[1]));
  if (!has_run(prev, n_params))
    run_chain(f, prev, slot);
  f->values[in->id] = slot;
}

void cg_lower_async(cg_function *f, ir_instr *in) {
  const ir_instr *st = chain_start(in);
  if (!chain_comp(st)) {
    cg_fail(f->cm, in, "'%s-start' binds its result late and names no computation, so nothing defines what it "
            "runs", ir_opcode_table[st->attrs.u.async.wrapped_opcode].spelling);
    return;
  }
  if (in->op == IR_OP_ASYNC_DONE)
    lower_async_done(f, in);
  else
    lower_async_step(f, in);
}

/* copy-start: (destination, source, context) with the copy made now; copy-done: the
 * destination. */
void cg_lower_copy_async(cg_function *f, ir_instr *in) {
  cg_value src = f->values[in->operands[0]->id];
  if (in->op == IR_OP_COPY_DONE) {
    f->values[in->id] = leaf_range(src, 0, ir_shape_count_leaves(in->shape));
    return;
  }
  const ir_shape *s = in->shape;
  cg_value v = {calloc((size_t)ir_shape_count_leaves(s) + 1, sizeof(LLVMValueRef)),
                calloc((size_t)ir_shape_count_leaves(s) + 1, sizeof(ir_shape *)), ir_shape_count_leaves(s)};
  int k = 0;
  cg_value dst = cg_alloc_value(f, s->elems[0]);
  for (int i = 0; i < src.n; i++)
    cg_copy_leaf(f, dst.leaves[i], src.leaves[i], dst.shapes[i]);
  append(&v, &k, dst);
  append(&v, &k, src);
  for (int e = 2; e < s->n_elems; e++) {
    cg_value c = cg_alloc_value(f, s->elems[e]);
    zero_fill(f, c);
    append(&v, &k, c);
    value_free(c);
  }
  value_free(dst);
  f->values[in->id] = v;
}
