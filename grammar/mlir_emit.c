/* mlir_emit.c — the translator's frame: the context (arena, diagnostics, output buffers),
 * types as HLO shapes, value scopes, computations (functions and regions) as HLO text with
 * one MLIR location per line, the check table, and the public entry points of mlir.h (translate to HLO text; parse through the HLO
 * parser, moving every instruction's location back to the MLIR line:col).
 * Per-op translation lives in mlir_ops.c, CHLO expansions in mlir_chlo.c, attribute values
 * and dense constants in mlir_attr.c.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grammar/parse.h"
#include "ir/literal.h"
#include "ir/print.h"
#include "mlir_internal.h"

/* ---- context ----------------------------------------------------------------------------- */

void ml_error(ml_ctx *c, ir_loc loc, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  ir_diag_error(c->diags, loc, "%s", msg);
}

bool ml_failed(const ml_ctx *c) { return c->diags->n_errors > 0; }

void *ml_alloc(ml_ctx *c, size_t n) {
  void *p = ir_arena_alloc(&c->arena, n ? n : 1);
  if (!p && !ml_failed(c))
    ir_diag_error(c->diags, (ir_loc){0, 0}, "out of memory");
  return p;
}

/* Capacity is the next power of two at or above n, so growing only at powers of two keeps
 * appends amortised O(1) without storing a capacity. */
bool ml_push(ml_ctx *c, void ***arr, int *n, void *item) {
  int k = *n;
  if (k >= (1 << 28))
    return ml_error(c, (ir_loc){0, 0}, "too many items"), false;
  if (k == 0 || (k & (k - 1)) == 0) {
    void **grown = ml_alloc(c, sizeof(void *) * (size_t)(k ? 2 * k : 1));
    if (!grown)
      return false;
    if (k)
      memcpy(grown, *arr, sizeof(void *) * (size_t)k);
    *arr = grown;
  }
  (*arr)[k] = item;
  *n = k + 1;
  return true;
}

void ml_buf_put(ml_buf *b, const char *s, size_t n) {
  if (b->oom)
    return;
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + n + 1)
      cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
      b->oom = true;
      return;
    }
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = 0;
}

void ml_buf_printf(ml_buf *b, const char *fmt, ...) {
  char small[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0)
    return;
  if ((size_t)n < sizeof small) {
    ml_buf_put(b, small, (size_t)n);
    return;
  }
  char *big = malloc((size_t)n + 1);
  if (!big) {
    b->oom = true;
    return;
  }
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  ml_buf_put(b, big, (size_t)n);
  free(big);
}

void ml_buf_free(ml_buf *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

/* ---- types as HLO shapes ----------------------------------------------------------------- */

void ml_shape_text(const ml_type *t, ml_buf *b) {
  if (!t) {
    ml_buf_put(b, "()", 2);
    return;
  }
  if (t->kind == MLT_TOKEN) {
    ml_buf_put(b, "token[]", 7);
    return;
  }
  if (t->kind == MLT_TUPLE) {
    ml_buf_put(b, "(", 1);
    for (int i = 0; i < t->n_elems; i++) {
      if (i)
        ml_buf_put(b, ", ", 2);
      ml_shape_text(t->elems[i], b);
    }
    ml_buf_put(b, ")", 1);
    return;
  }
  ml_buf_printf(b, "%s[", ir_etype_table[t->et].spelling);
  for (int i = 0; i < t->rank; i++) {
    if (i)
      ml_buf_put(b, ",", 1);
    if (t->dims[i] >= 0)
      ml_buf_printf(b, "%lld", (long long)t->dims[i]);
    else if (t->bounds && t->bounds[i] >= 0)
      ml_buf_printf(b, "<=%lld", (long long)t->bounds[i]);
    else
      ml_buf_put(b, "?", 1);
  }
  ml_buf_put(b, "]", 1);
}

char *ml_shape_str(ml_ctx *c, const ml_type *t) {
  ml_buf b = {0};
  ml_shape_text(t, &b);
  char *s = NULL;
  if (!b.oom && b.p) {
    s = ml_alloc(c, b.n + 1);
    if (s)
      memcpy(s, b.p, b.n + 1);
  }
  ml_buf_free(&b);
  return s ? s : (char *)"()";
}

ml_type *ml_result_type(ml_ctx *c, const ml_op *op) {
  if (!op->has_types || op->n_out == 0) {
    ml_error(c, op->loc, "%.*s: the result type is missing", (int)op->name.n, op->name.p);
    return NULL;
  }
  if (op->n_results <= 1)
    return op->out_types[op->n_out - 1];
  if (op->n_out != op->n_results) {
    ml_error(c, op->loc, "%.*s has %d results but %d result types", (int)op->name.n, op->name.p, op->n_results,
             op->n_out);
    return NULL;
  }
  ml_type *t = ml_alloc(c, sizeof *t);
  if (!t)
    return NULL;
  t->kind = MLT_TUPLE;
  t->elems = op->out_types;
  t->n_elems = op->n_out;
  return t;
}

/* ---- computations and values ---------------------------------------------------------------- */

void ml_new_name(ml_ctx *c, char out[24]) { snprintf(out, 24, "v%d", c->next_value++); }

void ml_line(ml_ctx *c, ml_comp *k, ir_loc loc, const char *fmt, ...) {
  if (k->n_lines == k->cap_lines) {
    int cap = k->cap_lines ? 2 * k->cap_lines : 16;
    int *ls = realloc(k->line_starts, sizeof *ls * (size_t)cap);
    if (ls)
      k->line_starts = ls;
    ir_loc *ll = realloc(k->line_locs, sizeof *ll * (size_t)cap);
    if (ll)
      k->line_locs = ll;
    if (!ls || !ll) {
      k->text.oom = true;
      return;
    }
    k->cap_lines = cap;
  }
  k->line_starts[k->n_lines] = (int)k->text.n;
  k->line_locs[k->n_lines++] = loc;
  char small[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n >= 0 && (size_t)n < sizeof small) {
    ml_buf_put(&k->text, small, (size_t)n);
  } else if (n >= 0) {
    char *big = malloc((size_t)n + 1);
    if (!big) {
      k->text.oom = true;
      return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    ml_buf_put(&k->text, big, (size_t)n);
    free(big);
  }
  ml_buf_put(&k->text, "\n", 1);
  (void)c;
}

void ml_comp_init(ml_ctx *c, ml_comp *k, ml_comp *outer, const char *name) {
  memset(k, 0, sizeof *k);
  k->outer = outer;
  k->root_line = -1;
  snprintf(k->name, sizeof k->name, "%s", name);
  (void)c;
}

void ml_comp_free(ml_comp *k) {
  ml_buf_free(&k->text);
  free(k->line_starts);
  free(k->line_locs);
  free(k->vals);
  memset(k, 0, sizeof *k);
}

static void add_line_loc(ml_ctx *c, ir_loc **locs, int *n, int *cap, ir_loc l) {
  if (*n == *cap) {
    int nc = *cap ? 2 * *cap : 256;
    ir_loc *g = realloc(*locs, sizeof *g * (size_t)nc);
    if (!g) {
      c->module.oom = true;
      return;
    }
    *locs = g;
    *cap = nc;
  }
  (*locs)[(*n)++] = l;
}

/* Writes the computation into the module text (the entry into its own buffer, placed last). */
void ml_comp_finish(ml_ctx *c, ml_comp *k, bool entry) {
  ml_buf *out = entry ? &c->entry : &c->module;
  ir_loc **locs = entry ? &c->entry_line_locs : &c->module_line_locs;
  int *nl = entry ? &c->entry_lines : &c->module_lines;
  int *cap = entry ? &c->cap_entry_lines : &c->cap_module_lines;
  ir_loc first = k->n_lines ? k->line_locs[0] : (ir_loc){0, 0};
  ml_buf_printf(out, "%s%s {\n", entry ? "ENTRY " : "", k->name);
  add_line_loc(c, locs, nl, cap, first);
  for (int i = 0; i < k->n_lines; i++) {
    size_t s = (size_t)k->line_starts[i];
    size_t e = i + 1 < k->n_lines ? (size_t)k->line_starts[i + 1] : k->text.n;
    ml_buf_put(out, i == k->root_line ? "  ROOT " : "  ", i == k->root_line ? 7 : 2);
    ml_buf_put(out, k->text.p + s, e - s);
    add_line_loc(c, locs, nl, cap, k->line_locs[i]);
  }
  ml_buf_put(out, "}\n\n", 3);
  add_line_loc(c, locs, nl, cap, first);
  add_line_loc(c, locs, nl, cap, first);
  if (k->text.oom)
    out->oom = true;
}

bool ml_bind(ml_ctx *c, ml_comp *k, ml_str name, int index, const char *hlo, ml_type *t) {
  if (k->n_vals == k->cap_vals) {
    int cap = k->cap_vals ? 2 * k->cap_vals : 32;
    ml_value *v = realloc(k->vals, sizeof *v * (size_t)cap);
    if (!v)
      return ml_error(c, (ir_loc){0, 0}, "out of memory"), false;
    k->vals = v;
    k->cap_vals = cap;
  }
  ml_value *v = &k->vals[k->n_vals++];
  memset(v, 0, sizeof *v);
  v->mlir = name;
  v->index = index;
  snprintf(v->hlo, sizeof v->hlo, "%s", hlo);
  v->type = t;
  v->line = k->n_lines - 1;
  return true;
}

static const ml_value *find(const ml_comp *k, const ml_use *u) {
  for (int i = k->n_vals - 1; i >= 0; i--) {
    const ml_value *v = &k->vals[i];
    if (v->mlir.n == u->name.n && memcmp(v->mlir.p, u->name.p, u->name.n) == 0 &&
        (v->index == u->index || (u->index == 0 && v->index == -1)))
      return v;
  }
  return NULL;
}

const ml_value *ml_find(const ml_comp *k, const ml_use *u) {
  for (const ml_comp *o = k; o; o = o->outer) {
    const ml_value *v = find(o, u);
    if (v)
      return v;
  }
  return NULL;
}

const ml_value *ml_lookup(ml_ctx *c, ml_comp *k, const ml_use *u) {
  const ml_value *v = find(k, u);
  if (v)
    return v;
  for (ml_comp *o = k->outer; o; o = o->outer)
    if (find(o, u)) {
      ml_error(c, u->loc, "%.*s is defined outside this region; regions that use outer values are not supported here",
               (int)u->name.n, u->name.p);
      return NULL;
    }
  if (u->index >= 0)
    ml_error(c, u->loc, "use of undefined value %.*s#%d", (int)u->name.n, u->name.p, u->index);
  else
    ml_error(c, u->loc, "use of undefined value %.*s", (int)u->name.n, u->name.p);
  return NULL;
}

ml_type *ml_operand_type(ml_ctx *c, ml_comp *k, const ml_op *op, int i) {
  if (i >= op->n_operands) {
    ml_error(c, op->loc, "%.*s needs at least %d operands", (int)op->name.n, op->name.p, i + 1);
    return NULL;
  }
  const ml_value *v = ml_lookup(c, k, &op->operands[i]);
  return v ? v->type : NULL;
}

bool ml_operands_text(ml_ctx *c, ml_comp *k, const ml_op *op, int from, int to, ml_buf *out) {
  for (int i = from; i < to; i++) {
    const ml_value *v = ml_lookup(c, k, &op->operands[i]);
    if (!v)
      return false;
    ml_buf_printf(out, "%s%%%s", i > from ? ", " : "", v->hlo);
  }
  return !out->oom;
}

bool ml_bind_results(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  if (op->n_results == 0)
    return true;
  ml_type *t = ml_result_type(c, op);
  if (!t)
    return false;
  if (op->n_results == 1)
    return ml_bind(c, k, op->results[0], -1, hlo, t);
  int idx = 0;
  for (int g = 0; g < op->n_result_groups; g++)
    for (int j = 0; j < op->result_counts[g]; j++, idx++) {
      char name[24];
      ml_new_name(c, name);
      ml_line(c, k, op->loc, "%%%s = %s get-tuple-element(%%%s), index=%d", name, ml_shape_str(c, t->elems[idx]), hlo,
              idx);
      if (!ml_bind(c, k, op->results[g], op->result_counts[g] > 1 ? j : -1, name, t->elems[idx]))
        return false;
    }
  return true;
}

bool ml_emit_ops(ml_ctx *c, ml_comp *k, ml_op **ops, int n) {
  for (int i = 0; i < n; i++) {
    if (!ml_emit_op(c, k, ops[i]))
      return false;
    if (ml_failed(c))
      return false;
  }
  return true;
}

/* The values a return op names, written as the root: the defining line when there is one
 * value (no copy), a tuple otherwise.  `extra` values (check pairs) are appended. */
static bool emit_return(ml_ctx *c, ml_comp *k, const ml_op *ret, const ml_value **extra, int n_extra) {
  int n = ret ? ret->n_operands : 0;
  if (n == 1 && n_extra == 0) {
    const ml_value *v = ml_lookup(c, k, &ret->operands[0]);
    if (!v)
      return false;
    if (v->line < 0 || v->line >= k->n_lines) {
      char name[24];
      ml_new_name(c, name);
      ml_line(c, k, ret->loc, "%%%s = %s copy(%%%s)", name, ml_shape_str(c, v->type), v->hlo);
    } else {
      /* the value's line may already be the root of nothing else; a value defined by a
       * multi-line op is its last line */
      k->root_line = v->line;
      return true;
    }
    k->root_line = k->n_lines - 1;
    return true;
  }
  ml_buf shape = {0}, args = {0};
  ml_buf_put(&shape, "(", 1);
  for (int i = 0; i < n + n_extra; i++) {
    const ml_value *v = i < n ? ml_lookup(c, k, &ret->operands[i]) : extra[i - n];
    if (!v) {
      ml_buf_free(&shape);
      ml_buf_free(&args);
      return false;
    }
    if (i)
      ml_buf_put(&shape, ", ", 2), ml_buf_put(&args, ", ", 2);
    ml_shape_text(v->type, &shape);
    ml_buf_printf(&args, "%%%s", v->hlo);
  }
  ml_buf_put(&shape, ")", 1);
  char name[24];
  ml_new_name(c, name);
  ml_line(c, k, ret ? ret->loc : (ir_loc){0, 0}, "%%%s = %s tuple(%s)", name, shape.p ? shape.p : "()",
          args.p ? args.p : "");
  k->root_line = k->n_lines - 1;
  ml_buf_free(&shape);
  ml_buf_free(&args);
  return true;
}

/* Block arguments as parameters (one tuple parameter when `tuple_param`). */
static bool bind_params(ml_ctx *c, ml_comp *k, const ml_region *r, bool tuple_param, const ml_type *tuple_type,
                        ir_loc loc) {
  if (tuple_param) {
    char tn[24];
    ml_new_name(c, tn);
    ml_line(c, k, loc, "%%%s = %s parameter(0)", tn, ml_shape_str(c, tuple_type));
    for (int i = 0; i < r->n_args; i++) {
      char name[24];
      ml_new_name(c, name);
      ml_line(c, k, loc, "%%%s = %s get-tuple-element(%%%s), index=%d", name, ml_shape_str(c, r->arg_types[i]), tn, i);
      if (!ml_bind(c, k, r->arg_names[i], -1, name, r->arg_types[i]))
        return false;
    }
    return true;
  }
  for (int i = 0; i < r->n_args; i++) {
    char name[24];
    ml_new_name(c, name);
    ml_line(c, k, loc, "%%%s = %s parameter(%d)", name, ml_shape_str(c, r->arg_types[i]), i);
    if (!ml_bind(c, k, r->arg_names[i], -1, name, r->arg_types[i]))
      return false;
  }
  return true;
}

static bool is_return(const ml_op *op) {
  return ml_str_is(op->name, "return") || ml_str_is(op->name, "func.return") || ml_str_is(op->name, "stablehlo.return");
}

const char *ml_region_comp(ml_ctx *c, ml_comp *outer, const ml_region *r, int mode,
                           const ml_type *tuple_type, ir_loc loc) {
  char name[64];
  snprintf(name, sizeof name, "region_%d", c->next_region++);
  ml_comp k;
  ml_comp_init(c, &k, outer, name);
  bool ok = bind_params(c, &k, r, mode & ML_TUPLE_PARAM, tuple_type, r->loc.line ? r->loc : loc);
  int n = r->n_ops;
  const ml_op *ret = n && is_return(r->ops[n - 1]) ? r->ops[n - 1] : NULL;
  ok = ok && ml_emit_ops(c, &k, r->ops, ret ? n - 1 : n);
  if (ok && !ret)
    ok = (ml_error(c, r->loc, "the region does not end with a return"), false);
  if (ok && (mode & ML_TUPLE_RESULT) && ret->n_operands == 1) { /* a loop of one state value */
    const ml_value *v = ml_lookup(c, &k, &ret->operands[0]);
    ok = v && emit_return(c, &k, NULL, &v, 1);
  } else if (ok) {
    ok = emit_return(c, &k, ret, NULL, 0);
  }
  if (ok)
    ml_comp_finish(c, &k, false);
  ml_comp_free(&k);
  if (!ok)
    return NULL;
  char *s = ml_alloc(c, strlen(name) + 1);
  if (s)
    strcpy(s, name);
  return s;
}

const char *ml_binary_comp(ml_ctx *c, const char *opcode, ir_etype et, ir_loc loc) {
  char name[64];
  snprintf(name, sizeof name, "region_%d", c->next_region++);
  ml_comp k;
  ml_comp_init(c, &k, NULL, name);
  const char *sp = ir_etype_table[et].spelling;
  ml_line(c, &k, loc, "%%a = %s[] parameter(0)", sp);
  ml_line(c, &k, loc, "%%b = %s[] parameter(1)", sp);
  ml_line(c, &k, loc, "%%r = %s[] %s(%%a, %%b)", sp, opcode);
  k.root_line = 2;
  ml_comp_finish(c, &k, false);
  ml_comp_free(&k);
  char *s = ml_alloc(c, strlen(name) + 1);
  if (s)
    strcpy(s, name);
  return s;
}

/* ---- checks ------------------------------------------------------------------------------- */

void ml_add_check(ml_ctx *c, const mlir_check *chk) {
  if (c->n_checks == c->cap_checks) {
    int cap = c->cap_checks ? 2 * c->cap_checks : 8;
    mlir_check *g = realloc(c->checks, sizeof *g * (size_t)cap);
    if (!g) {
      ml_error(c, (ir_loc){chk->line, chk->col}, "out of memory");
      return;
    }
    c->checks = g;
    c->cap_checks = cap;
  }
  c->checks[c->n_checks++] = *chk;
}

void mlir_checks_free(mlir_checks *c) {
  if (!c)
    return;
  free(c->items);
  memset(c, 0, sizeof *c);
}

/* ---- functions and the module --------------------------------------------------------------- */

static ml_str func_name(const ml_op *f) {
  if (f->callee.n)
    return f->callee;
  const ml_attr *a = ml_attr_get(f, "sym_name");
  return a ? a->text : (ml_str){"", 0};
}

static bool func_public(const ml_op *f) {
  const ml_attr *v = ml_attr_get(f, "sym_visibility");
  return !v || ml_str_is(v->text, "public");
}

static void sanitize(ml_str s, char *out, size_t cap) {
  size_t j = 0;
  for (size_t i = 0; i < s.n && j + 1 < cap; i++) {
    char ch = s.p[i];
    out[j++] = isalnum((unsigned char)ch) || ch == '_' || ch == '.' || ch == '-' ? ch : '_';
  }
  out[j] = 0;
}

/* check ops of the entry function: the pairs go to `pairs`, the table to c->checks. */
/* The checked values, copied (pointers into a computation's value table would dangle once
 * later ops grow it). */
typedef struct check_pairs {
  ml_value *v;
  int n, cap;
} check_pairs;

static bool check_kind(const ml_op *op, mlir_check *chk, bool *is_const) {
  ml_str target = op->callee;
  bool custom = ml_str_is(op->name, "stablehlo.custom_call");
  if (custom && !target.n) {
    const ml_attr *t = ml_attr_get(op, "call_target_name");
    if (t)
      target = t->text;
  }
  if (!custom)
    target = op->name;
  *is_const = false;
  memset(chk, 0, sizeof *chk);
  chk->line = op->loc.line;
  chk->col = op->loc.col;
  chk->max_ulp = 3; /* the interpreter's custom_call tolerance (StablehloTranslateMain.cpp) */
  chk->tolerance = 0.001;
  if (ml_str_is(target, "check.expect_eq") || ml_str_is(target, "check.eq")) {
    chk->kind = MLIR_CHECK_EQ;
  } else if (ml_str_is(target, "check.expect_eq_const")) {
    chk->kind = MLIR_CHECK_EQ;
    *is_const = true;
  } else if (ml_str_is(target, "check.expect_close")) {
    chk->kind = MLIR_CHECK_CLOSE;
    if (!custom) { /* the check dialect's own op: max_ulp_difference defaults to 1 */
      const ml_attr *mx = ml_attr_get(op, "max_ulp_difference"), *mn = ml_attr_get(op, "min_ulp_difference");
      chk->max_ulp = mx ? (uint64_t)mx->i : 1;
      chk->min_ulp = mn ? (uint64_t)mn->i : 0;
    }
  } else if (ml_str_is(target, "check.expect_almost_eq") || ml_str_is(target, "check.expect_almost_eq_const")) {
    chk->kind = MLIR_CHECK_ALMOST_EQ;
    *is_const = ml_str_is(target, "check.expect_almost_eq_const");
    if (!custom) {
      const ml_attr *tol = ml_attr_get(op, "tolerance");
      chk->tolerance = tol ? tol->f : 1e-4;
    }
  } else {
    return false;
  }
  return true;
}

static bool push_pair(ml_ctx *c, check_pairs *p, const ml_value *a, const ml_value *b) {
  if (p->n + 2 > p->cap) {
    int cap = p->cap ? 2 * p->cap : 8;
    ml_value *g = realloc(p->v, sizeof *g * (size_t)cap);
    if (!g)
      return ml_error(c, (ir_loc){0, 0}, "out of memory"), false;
    p->v = g;
    p->cap = cap;
  }
  p->v[p->n++] = *a;
  p->v[p->n++] = *b;
  return true;
}

/* A check op in the entry: records it and its (actual, expected) values. */
static bool emit_check(ml_ctx *c, ml_comp *k, const ml_op *op, const mlir_check *proto, bool is_const,
                       check_pairs *pairs) {
  mlir_check chk = *proto;
  if (op->n_operands < 1 || (!is_const && op->n_operands < 2))
    return ml_error(c, op->loc, "a check needs an actual and an expected value"), false;
  const ml_value *found = ml_lookup(c, k, &op->operands[0]);
  if (!found)
    return false;
  ml_value actual = *found; /* emitting the expected constant may move the value table */
  const ml_value *a = &actual, *e = NULL;
  if (is_const) {
    const ml_attr *v = ml_attr_get(op, "value");
    if (!v)
      return ml_error(c, op->loc, "the check has no expected value"), false;
    ml_op tmp = *op;
    ml_str res = {"%__check", 8};
    int one = 1;
    tmp.results = &res;
    tmp.result_counts = &one;
    tmp.n_result_groups = 1;
    tmp.n_results = 1;
    tmp.name = (ml_str){"stablehlo.constant", 18};
    tmp.n_operands = 0;
    ml_type *t = a->type;
    tmp.out_types = &t;
    tmp.n_out = 1;
    tmp.has_types = true;
    if (!ml_emit_op(c, k, &tmp))
      return false;
    ml_use u = {.name = res, .index = -1, .loc = op->loc};
    e = ml_lookup(c, k, &u);
  } else {
    e = ml_lookup(c, k, &op->operands[1]);
  }
  if (!e)
    return false;
  chk.actual = c->n_checks * 2;
  chk.expected = c->n_checks * 2 + 1;
  ml_add_check(c, &chk);
  return push_pair(c, pairs, a, e);
}

static bool emit_func(ml_ctx *c, const ml_op *f, bool entry) {
  if (f->n_regions != 1) {
    ml_error(c, f->loc, "function without a body");
    return false;
  }
  const ml_region *r = f->regions[0];
  char name[64];
  sanitize(func_name(f), name, sizeof name);
  ml_comp k;
  ml_comp_init(c, &k, NULL, name);
  check_pairs pairs = {0};
  bool ok = bind_params(c, &k, r, false, NULL, f->loc);
  int n = r->n_ops;
  const ml_op *ret = n && is_return(r->ops[n - 1]) ? r->ops[n - 1] : NULL;
  for (int i = 0; ok && i < (ret ? n - 1 : n); i++) {
    mlir_check proto;
    bool is_const;
    if (entry && check_kind(r->ops[i], &proto, &is_const))
      ok = emit_check(c, &k, r->ops[i], &proto, is_const, &pairs);
    else
      ok = ml_emit_op(c, &k, r->ops[i]) && !ml_failed(c);
  }
  if (ok && entry) {
    c->entry_results = ret ? ret->n_operands : 0;
    for (int i = 0; i < c->n_checks; i++) {
      c->checks[i].actual += c->entry_results;
      c->checks[i].expected += c->entry_results;
    }
  }
  const ml_value **extra = ok && pairs.n ? malloc(sizeof *extra * (size_t)pairs.n) : NULL;
  if (ok && pairs.n && !extra)
    ok = (ml_error(c, f->loc, "out of memory"), false);
  for (int i = 0; ok && i < pairs.n; i++)
    extra[i] = &pairs.v[i];
  if (ok)
    ok = emit_return(c, &k, ret, extra, pairs.n);
  free(extra);
  if (ok)
    ml_comp_finish(c, &k, entry);
  free(pairs.v);
  ml_comp_free(&k);
  return ok;
}

static int module_int_attr(const ml_op *m, const char *key, int dflt) {
  const ml_attr *a = ml_attr_get(m, key);
  return a && a->kind == MA_INT && a->i > 0 && a->i < 1 << 20 ? (int)a->i : dflt;
}

static bool translate(ml_ctx *c, const ml_op *m) {
  if (m->n_regions != 1)
    return ml_error(c, m->loc, "module without a body"), false;
  const ml_region *r = m->regions[0];
  const ml_op *entry = NULL, *first_public = NULL;
  for (int i = 0; i < r->n_ops; i++) {
    const ml_op *f = r->ops[i];
    if (f->name.n > 4 && memcmp(f->name.p, "sdy.", 4) == 0) /* shardy meshes: one device computes the same */
      continue;
    if (!ml_str_is(f->name, "func.func"))
      return ml_error(c, f->loc, "unsupported top-level operation %.*s", (int)f->name.n, f->name.p), false;
    if (ml_str_is(func_name(f), "main"))
      entry = f;
    if (!first_public && func_public(f))
      first_public = f;
  }
  if (!entry)
    entry = first_public ? first_public : r->n_ops ? r->ops[0] : NULL;
  if (!entry)
    return ml_error(c, m->loc, "the module has no function"), false;
  c->num_replicas = module_int_attr(m, "mhlo.num_replicas", 1);
  c->num_partitions = module_int_attr(m, "mhlo.num_partitions", 1);
  for (int i = 0; i < r->n_ops; i++)
    if (r->ops[i] != entry && ml_str_is(r->ops[i]->name, "func.func") && r->ops[i]->n_regions == 1 && r->ops[i]->regions[0]->n_ops &&
        !emit_func(c, r->ops[i], false))
      return false;
  return emit_func(c, entry, true);
}

/* ---- public entry points ---------------------------------------------------------------------- */

bool ir_text_is_mlir(const char *text, size_t len) {
  size_t i = 0;
  for (;;) {
    while (i < len && isspace((unsigned char)text[i]))
      i++;
    if (i + 1 < len && text[i] == '/' && text[i + 1] == '/') {
      while (i < len && text[i] != '\n')
        i++;
      continue;
    }
    break;
  }
  const char *s = text + i;
  size_t n = len - i;
  static const char *const starts[] = {"module", "func.func", "#loc", "\"builtin.module\"", "\"func.func\"", "#"};
  for (size_t k = 0; k < sizeof starts / sizeof *starts; k++) {
    size_t m = strlen(starts[k]);
    if (n >= m && memcmp(s, starts[k], m) == 0 && (n == m || !isalnum((unsigned char)s[m]) || s[0] == '#'))
      return true;
  }
  return false;
}

hlo_status ir_mlir_to_hlo(const char *text, size_t len, ir_diag_list *diags, char **out_hlo, size_t *out_len,
                          ir_loc **out_locs, int *out_n_locs, mlir_checks *out_checks) {
  *out_hlo = NULL;
  if (out_len)
    *out_len = 0;
  if (out_locs)
    *out_locs = NULL;
  if (out_n_locs)
    *out_n_locs = 0;
  if (out_checks)
    memset(out_checks, 0, sizeof *out_checks);
  char *copy = malloc(len + 1);
  if (!copy)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory reading %s", diags->filename);
  memcpy(copy, text, len);
  copy[len] = 0;
  ml_ctx c;
  memset(&c, 0, sizeof c);
  ir_arena_init(&c.arena);
  c.diags = diags;
  c.text = copy;
  c.len = len;
  ml_op *m = ml_parse(&c, copy, len);
  bool ok = m && !ml_failed(&c) && translate(&c, m) && !ml_failed(&c);
  ml_buf out = {0};
  ir_loc *locs = NULL;
  int nl = 0, cap = 0;
  if (ok) {
    char header[160];
    snprintf(header, sizeof header, "HloModule %s, replica_count=%d, num_partitions=%d\n\n",
             m->callee.n ? "jit" : "module", c.num_replicas, c.num_partitions);
    if (m->callee.n) {
      char nm[64];
      sanitize(m->callee, nm, sizeof nm);
      snprintf(header, sizeof header, "HloModule %s, replica_count=%d, num_partitions=%d\n\n", nm, c.num_replicas,
               c.num_partitions);
    }
    ml_buf_put(&out, header, strlen(header));
    add_line_loc(&c, &locs, &nl, &cap, m->loc);
    add_line_loc(&c, &locs, &nl, &cap, m->loc);
    if (c.module.p)
      ml_buf_put(&out, c.module.p, c.module.n);
    for (int i = 0; i < c.module_lines; i++)
      add_line_loc(&c, &locs, &nl, &cap, c.module_line_locs[i]);
    if (c.entry.p)
      ml_buf_put(&out, c.entry.p, c.entry.n);
    for (int i = 0; i < c.entry_lines; i++)
      add_line_loc(&c, &locs, &nl, &cap, c.entry_line_locs[i]);
    if (out.oom || c.module.oom || c.entry.oom) {
      ok = false;
      ir_diag_error(diags, (ir_loc){0, 0}, "out of memory");
    }
  }
  hlo_status s = NULL;
  if (ok) {
    *out_hlo = out.p ? out.p : calloc(1, 1);
    if (out_len)
      *out_len = out.n;
    out.p = NULL;
    if (out_locs) {
      *out_locs = locs;
      locs = NULL;
    }
    if (out_n_locs)
      *out_n_locs = nl;
    if (out_checks) {
      out_checks->items = c.checks;
      out_checks->n = c.n_checks;
      out_checks->first_check_result = c.entry_results;
      c.checks = NULL;
    }
  } else {
    if (diags->n_errors == 0)
      ir_diag_error(diags, (ir_loc){0, 0}, "cannot translate the module");
    s = ir_diag_to_status(diags);
  }
  ml_buf_free(&out);
  free(locs);
  free(c.checks);
  ml_buf_free(&c.module);
  ml_buf_free(&c.entry);
  free(c.module_line_locs);
  free(c.entry_line_locs);
  ir_arena_deinit(&c.arena);
  free(copy);
  return s;
}

static ir_loc map_loc(ir_loc l, const ir_loc *locs, int n) {
  if (l.line >= 1 && l.line <= n && locs[l.line - 1].line > 0)
    return locs[l.line - 1];
  return (ir_loc){0, 0};
}

hlo_status ir_parse_mlir(const char *text, size_t len, ir_diag_list *diags, ir_module **out_module,
                         mlir_checks *out_checks) {
  *out_module = NULL;
  char *hlo = NULL;
  size_t hlo_len = 0;
  ir_loc *locs = NULL;
  int n_locs = 0;
  HLO_RETURN_IF_ERROR(ir_mlir_to_hlo(text, len, diags, &hlo, &hlo_len, &locs, &n_locs, out_checks));
  ir_diag_list hd;
  ir_diag_init(&hd, diags->filename, hlo, hlo_len);
  ir_module *m = NULL;
  hlo_status s = ir_parse_module(hlo, hlo_len, &hd, &m);
  for (int i = 0; i < hd.n; i++) /* errors in the translation, placed at the MLIR op */
    ir_diag_add(diags, hd.items[i].severity, map_loc(hd.items[i].loc, locs, n_locs), "%s", hd.items[i].message);
  if (s) {
    hlo_status_free(s);
    s = ir_diag_to_status(diags);
    if (!s)
      s = hlo_status_make(HLO_INVALID_ARGUMENT, "%s: cannot translate the module", diags->filename);
    if (out_checks)
      mlir_checks_free(out_checks);
  } else {
    for (int ci = 0; ci < m->n_comps; ci++) {
      ir_computation *k = m->comps[ci];
      k->loc = map_loc(k->loc, locs, n_locs);
      for (int i = 0; i < k->n_instrs; i++)
        k->instrs[i]->loc = map_loc(k->instrs[i]->loc, locs, n_locs);
    }
    *out_module = m;
  }
  ir_diag_deinit(&hd);
  free(locs);
  free(hlo);
  return s;
}
