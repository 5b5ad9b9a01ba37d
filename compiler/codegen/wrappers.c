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

/* async-start (or call-start): ((operands...), result, context...).  The operands are shared,
 * the computation runs now into the result's buffers, the context is zero. */
void cg_lower_async(cg_function *f, ir_instr *in) {
  cg_module *cm = f->cm;
  if (in->op != IR_OP_ASYNC_START) { /* update forwards; done hands out the result element */
    cg_value src = f->values[in->operands[0]->id];
    if (in->op == IR_OP_ASYNC_UPDATE) {
      f->values[in->id] = leaf_range(src, 0, src.n);
      return;
    }
    const ir_shape *s = in->operands[0]->shape;
    f->values[in->id] = leaf_range(src, ir_shape_count_leaves(s->elems[0]), ir_shape_count_leaves(s->elems[1]));
    return;
  }
  if (in->n_called != 1) {
    cg_fail(cm, in, "'%s-start' names no computation (calls=...); hloc runs compact async forms that call one",
            ir_opcode_table[in->attrs.u.async.wrapped_opcode].spelling);
    return;
  }
  const ir_shape *s = in->shape;
  cg_value v = {calloc((size_t)ir_shape_count_leaves(s) + 1, sizeof(LLVMValueRef)),
                calloc((size_t)ir_shape_count_leaves(s) + 1, sizeof(ir_shape *)), ir_shape_count_leaves(s)};
  int k = 0, na = 0;
  LLVMValueRef *args = calloc((size_t)v.n + 1, sizeof *args);
  for (int i = 0; i < in->n_operands; i++) {
    cg_value o = f->values[in->operands[i]->id];
    append(&v, &k, o);
    for (int j = 0; j < o.n; j++)
      args[na++] = o.leaves[j];
  }
  cg_value r = cg_alloc_value(f, s->elems[1]);
  cg_call_computation(f, in->called[0], args, na, r.leaves, r.n);
  append(&v, &k, r);
  for (int e = 2; e < s->n_elems; e++) {
    cg_value c = cg_alloc_value(f, s->elems[e]);
    zero_fill(f, c);
    append(&v, &k, c);
    value_free(c);
  }
  value_free(r);
  free(args);
  f->values[in->id] = v;
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
