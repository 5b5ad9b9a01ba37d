/* custom_call.c — lowering of custom-call instructions.  Partitioner markers (Sharding,
 * SPMDFullToShardShape, SPMDShardToFullShape, xla.sdy.*, annotate_device_placement, MoveToHost,
 * MoveToDevice) are what they are on one device: identities, where a shard shape smaller than
 * the operand keeps its leading corner and a full shape larger than the operand is zero-filled.
 * Every other target becomes one call of hlo_rt_custom_call (hlo/rt.h) with a constant
 * description of the operand and result tuple trees, or, for API_VERSION_TYPED_FFI, one call of
 * hlo_rt_ffi_call built by custom_call_ffi.c; output_to_operand_aliasing is honoured by
 * copying the aliased operand into the result buffer and handing the target that buffer.
 * Tests: testdata/runtime/custom_call_* (tests/runtime.cmake).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_internal.h"

static bool starts_with(ir_str s, const char *p) {
  size_t n = strlen(p);
  return s.len >= n && memcmp(s.p, p, n) == 0;
}

/* Is the target one of XLA's partitioner or placement markers? */
static bool is_marker(ir_str t) {
  static const char *const names[] = {"Sharding",         "SPMDFullToShardShape", "SPMDShardToFullShape",
                                      "annotate_device_placement", "MoveToHost", "MoveToDevice",
                                      "LayoutConstraint"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (ir_str_eq(t, names[i]))
      return true;
  return starts_with(t, "xla.sdy.");
}

bool cg_custom_call_needs_target(const ir_instr *in) {
  return in->op == IR_OP_CUSTOM_CALL && !is_marker(in->attrs.custom_text);
}

/* Copies src (shape ss) into dst (shape ds, same element type and rank): the common corner,
 * zeros elsewhere. */
static void copy_corner(cg_function *f, LLVMValueRef dst, const ir_shape *ds, LLVMValueRef src, const ir_shape *ss) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  LLVMTypeRef t = cg_storage_type(cm, ds->et);
  int64_t n;
  ir_shape_num_elements(ds, &n);
  cg_loop l = cg_loop_begin(f, cg_i64(cm, n), "corner");
  LLVMValueRef idx[64];
  cg_unflatten(f, l.i, ds->dims, ds->rank, idx);
  LLVMValueRef inside = LLVMConstInt(cm->i1, 1, 0);
  for (int d = 0; d < ds->rank; d++)
    inside = LLVMBuildAnd(b, inside, LLVMBuildICmp(b, LLVMIntSLT, idx[d], cg_i64(cm, ss->dims[d]), ""), "");
  for (int d = 0; d < ds->rank; d++) /* clamp so the (unused) load stays in bounds */
    idx[d] = LLVMBuildSelect(b, inside, idx[d], cg_i64(cm, 0), "");
  LLVMValueRef si = cg_flatten(f, idx, ss->dims, ss->rank);
  LLVMValueRef v = LLVMBuildLoad2(b, t, LLVMBuildGEP2(b, t, src, &si, 1, ""), "v");
  v = LLVMBuildSelect(b, inside, v, LLVMConstNull(t), "");
  LLVMBuildStore(b, v, LLVMBuildGEP2(b, t, dst, &l.i, 1, ""));
  cg_loop_end(f, &l);
}

static void lower_marker(cg_function *f, ir_instr *in) {
  cg_value o = f->values[in->operands[0]->id];
  int n_res = ir_shape_count_leaves(in->shape);
  if (in->n_operands != 1 || o.n != n_res) {
    cg_fail(f->cm, in, "custom call '%.*s' must have one operand with the result's leaves", (int)in->attrs.custom_text.len,
            in->attrs.custom_text.p);
    return;
  }
  cg_value v = cg_alloc_result(f, in);
  for (int i = 0; i < v.n; i++) {
    const ir_shape *ds = v.shapes[i], *ss = o.shapes[i];
    if (!ir_etype_is_array(ds->et))
      continue;
    if (ds->et != ss->et || ds->rank != ss->rank) {
      cg_fail(f->cm, in, "custom call '%.*s' changes the element type or rank of its operand",
              (int)in->attrs.custom_text.len, in->attrs.custom_text.p);
      free(v.leaves);
      free((void *)v.shapes);
      return;
    }
    bool same = true;
    for (int d = 0; d < ds->rank; d++)
      same = same && ds->dims[d] == ss->dims[d];
    if (same)
      cg_copy_leaf(f, v.leaves[i], o.leaves[i], ds);
    else
      copy_corner(f, v.leaves[i], ds, o.leaves[i], ss);
  }
  f->values[in->id] = v;
}

/* ---- the description ---------------------------------------------------------------------- */

typedef struct i64_buf {
  int64_t *v;
  int n, cap;
} i64_buf;

static void buf_push(i64_buf *b, int64_t x) {
  if (b->n == b->cap) {
    int cap = b->cap ? b->cap * 2 : 32;
    int64_t *g = realloc(b->v, (size_t)cap * sizeof *g);
    if (!g)
      return;
    b->v = g;
    b->cap = cap;
  }
  b->v[b->n++] = x;
}

static void push_tree(i64_buf *b, const ir_shape *s) {
  if (s->et != IR_TUPLE) {
    buf_push(b, -1);
    return;
  }
  buf_push(b, s->n_elems);
  for (int i = 0; i < s->n_elems; i++)
    push_tree(b, s->elems[i]);
}


static LLVMValueRef desc_global(cg_module *cm, const ir_instr *in, int n_op_leaves, int n_res_leaves) {
  i64_buf b = {0};
  /* not written: API_VERSION_ORIGINAL, XLA's default (the enum's 0 is UNSPECIFIED) */
  buf_push(&b, in->attrs.u.custom_call.has_api_version ? (int64_t)in->attrs.u.custom_call.api_version
                                                       : (int64_t)IR_CC_API_ORIGINAL);
  buf_push(&b, in->n_operands);
  buf_push(&b, n_op_leaves);
  buf_push(&b, n_res_leaves);
  for (int i = 0; i < in->n_operands; i++)
    push_tree(&b, in->operands[i]->shape);
  push_tree(&b, in->shape);
  LLVMValueRef *c = calloc((size_t)b.n + 1, sizeof *c);
  for (int i = 0; c && i < b.n; i++)
    c[i] = cg_i64(cm, b.v[i]);
  LLVMValueRef g = cg_const_global(cm, LLVMConstArray2(cm->i64, c, (uint64_t)b.n), "cc.desc");
  free(c);
  free(b.v);
  return g;
}

static LLVMValueRef string_global(cg_module *cm, const char *s, size_t len, const char *name) {
  return cg_const_global(cm, LLVMConstStringInContext(cm->ctx, s, (unsigned)len, 0), name);
}

/* backend_config as the target sees it: a quoted string unescaped, anything else verbatim. */
static char *opaque_text(const ir_instr *in, size_t *out_len) {
  ir_str raw = in->common.backend_config;
  char *out = malloc(raw.len + 1);
  size_t n = 0;
  if (!out) {
    *out_len = 0;
    return NULL;
  }
  if (raw.len < 2 || raw.p[0] != '"') {
    memcpy(out, raw.p ? raw.p : "", raw.len);
    n = raw.len;
  } else {
    for (size_t i = 1; i + 1 < raw.len; i++) {
      char c = raw.p[i];
      if (c == '\\' && i + 2 < raw.len) {
        c = raw.p[++i];
        c = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
      }
      out[n++] = c;
    }
  }
  out[n] = 0;
  *out_len = n;
  return out;
}

/* ---- output_to_operand_aliasing={{out}: (operand, {in}), ...} ------------------------------ */

/* The flat leaf number of the shape index written in p (e.g. "1, 0") within s; -1 if bad. */
static int leaf_of_index(const ir_shape *s, const char **p) {
  int base = 0;
  while (**p == ' ')
    (*p)++;
  while (**p >= '0' && **p <= '9') {
    long k = strtol(*p, (char **)p, 10);
    if (s->et != IR_TUPLE || k >= s->n_elems)
      return -1;
    for (long j = 0; j < k; j++)
      base += ir_shape_count_leaves(s->elems[j]);
    s = s->elems[k];
    while (**p == ' ' || **p == ',')
      (*p)++;
  }
  return s->et == IR_TUPLE ? -1 : base;
}

/* Applies the aliasing pairs: result leaf r takes operand leaf (op, idx)'s value and the
 * target sees the result buffer in the operand's place. */
static bool apply_aliasing(cg_function *f, const ir_instr *in, cg_value *res, LLVMValueRef *op_leaves,
                           const int *op_first) {
  ir_str a = in->common.output_to_operand_aliasing;
  if (!a.len)
    return true;
  char *text = strndup(a.p, a.len);
  const char *p = text;
  bool ok = text != NULL;
  while (ok && (p = strchr(p, '{')) != NULL) {
    if (p == text) { p++; continue; } /* the outer brace */
    p++;
    int r = leaf_of_index(in->shape, &p);
    const char *q = strchr(p, '(');
    long op = q ? strtol(q + 1, (char **)&p, 10) : -1;
    const char *br = strchr(p, '{');
    if (r < 0 || op < 0 || op >= in->n_operands || !br) { ok = false; break; }
    p = br + 1;
    int l = leaf_of_index(in->operands[op]->shape, &p);
    if (l < 0) { ok = false; break; }
    int k = op_first[op] + l;
    cg_copy_leaf(f, res->leaves[r], op_leaves[k], res->shapes[r]);
    op_leaves[k] = res->leaves[r];
    p = strchr(p, ')');
    if (!p) break;
  }
  free(text);
  if (!ok)
    cg_fail(f->cm, in, "cannot read output_to_operand_aliasing=%.*s", (int)a.len, a.p);
  return ok;
}

/* ---- the call ------------------------------------------------------------------------------ */

static void emit_call(cg_function *f, ir_instr *in, LLVMValueRef *args) {
  cg_module *cm = f->cm;
  LLVMValueRef st = cg_runtime_call(cm, CG_RT_hlo_rt_custom_call, args, 8, "st");
  cg_fail_if_status(f, st);
}

void cg_lower_custom_call(cg_function *f, ir_instr *in) {
  cg_module *cm = f->cm;
  ir_str target = in->attrs.custom_text;
  if (is_marker(target)) {
    lower_marker(f, in);
    return;
  }
  int n_op = 0, op_first[256];
  if (in->n_operands > 256) {
    cg_fail(cm, in, "custom call with more than 256 operands");
    return;
  }
  for (int i = 0; i < in->n_operands; i++) {
    op_first[i] = n_op;
    n_op += f->values[in->operands[i]->id].n;
  }
  LLVMValueRef *op_leaves = calloc((size_t)n_op + 1, sizeof *op_leaves);
  for (int i = 0, k = 0; i < in->n_operands; i++) {
    cg_value o = f->values[in->operands[i]->id];
    for (int j = 0; j < o.n; j++)
      op_leaves[k++] = o.leaves[j];
  }
  cg_value res = cg_alloc_result(f, in);
  bool aliased = apply_aliasing(f, in, &res, op_leaves, op_first);
  if (aliased && in->attrs.u.custom_call.api_version == IR_CC_API_TYPED_FFI) {
    cg_lower_ffi_call(f, in, op_leaves, n_op, &res);
  } else if (aliased) {
    size_t olen;
    char *opaque = opaque_text(in, &olen);
    char name[300], tname[300];
    snprintf(name, sizeof name, "%.*s", (int)in->name.len, in->name.p);
    snprintf(tname, sizeof tname, "%.*s", (int)target.len, target.p);
    LLVMValueRef args[8] = {
        f->ctx_arg,
        desc_global(cm, in, n_op, res.n),
        string_global(cm, tname, strlen(tname) + 1, "cc.target"),
        string_global(cm, name, strlen(name) + 1, "cc.name"),
        string_global(cm, opaque ? opaque : "", olen + 1, "cc.opaque"),
        cg_i64(cm, (int64_t)olen),
        cg_ptr_table(f, op_leaves, n_op, "cc.in"),
        cg_ptr_table(f, res.leaves, res.n, "cc.out"),
    };
    free(opaque);
    emit_call(f, in, args);
  }
  free(op_leaves);
  f->values[in->id] = res;
}
