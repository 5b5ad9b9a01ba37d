/* mlir_ops.c — one StableHLO op -> HLO text: the op table (name, HLO opcode, how its
 * attributes are written) and the translators for ops whose form differs from HLO's
 * (dot_general, broadcast_in_dim, slice, pad, windows, scatter/gather dimension numbers,
 * while/if/case over tuples, multi-result ops, custom_call, composite).  Each translator
 * writes its lines into the current computation and binds the op's results; an op it
 * cannot map is a diagnostic at the op.  The mapping table is in docs/stablehlo.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/print.h"
#include "mlir_internal.h"

typedef bool (*op_fn)(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo_op);

typedef struct op_row {
  const char *name;   /* without the stablehlo. prefix */
  const char *hlo;    /* HLO opcode */
  op_fn fn;
} op_row;

/* ---- small helpers ------------------------------------------------------------------------ */

static void ints_text(ml_buf *b, const int64_t *v, int n) {
  ml_buf_put(b, "{", 1);
  for (int i = 0; i < n; i++)
    ml_buf_printf(b, "%s%lld", i ? "," : "", (long long)v[i]);
  ml_buf_put(b, "}", 1);
}

/* An int-list attribute under any of the keys; absent is an empty list when `optional`. */
static bool get_ints(ml_ctx *c, const ml_op *op, const char *k1, const char *k2, bool optional, int64_t **v, int *n) {
  const ml_attr *a = ml_attr_get(op, k1);
  if (!a && k2)
    a = ml_attr_get(op, k2);
  if (!a) {
    *v = NULL;
    *n = 0;
    if (optional)
      return true;
    ml_error(c, op->loc, "%.*s: missing attribute %s", (int)op->name.n, op->name.p, k1);
    return false;
  }
  if (!ml_attr_ints(c, a, v, n)) {
    ml_error(c, a->loc, "%.*s: %s is not a list of integers", (int)op->name.n, op->name.p, k1);
    return false;
  }
  return true;
}

static int64_t get_int(const ml_op *op, const char *k1, const char *k2, int64_t dflt) {
  const ml_attr *a = ml_attr_get(op, k1);
  if (!a && k2)
    a = ml_attr_get(op, k2);
  return a && a->kind == MA_INT ? a->i : dflt;
}

static bool get_bool(const ml_op *op, const char *key) {
  const ml_attr *a = ml_attr_get(op, key);
  return a && ((a->kind == MA_BOOL && a->i) || a->kind == MA_UNIT);
}

/* Writes "%name = SHAPE opcode(operands[from,to))ATTRS" and binds the results. */
static bool emit_line(ml_ctx *c, ml_comp *k, const ml_op *op, const char *opcode, int from, int to, const char *attrs) {
  ml_type *t = ml_result_type(c, op);
  if (!t)
    return false;
  ml_buf args = {0};
  bool ok = ml_operands_text(c, k, op, from, to, &args);
  if (ok) {
    char name[24];
    ml_new_name(c, name);
    ml_line(c, k, op->loc, "%%%s = %s %s(%s)%s", name, ml_shape_str(c, t), opcode, args.p ? args.p : "",
            attrs ? attrs : "");
    ok = ml_bind_results(c, k, op, name);
  }
  ml_buf_free(&args);
  return ok;
}

static bool with_attrs(ml_ctx *c, ml_comp *k, const ml_op *op, const char *opcode, ml_buf *attrs) {
  bool ok = !attrs->oom && emit_line(c, k, op, opcode, 0, op->n_operands, attrs->p);
  ml_buf_free(attrs);
  return ok;
}

static bool op_simple(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  return emit_line(c, k, op, hlo, 0, op->n_operands, NULL);
}

/* ---- constants ------------------------------------------------------------------------------ */

static void literal_text(ml_buf *b, const ml_type *t, const unsigned char *data, int dim, int64_t *index) {
  int eb = ir_etype_table[t->et].storage_bytes;
  if (dim == t->rank) {
    char buf[160];
    ir_format_element(t->et, data + *index * eb, buf, sizeof buf);
    ml_buf_put(b, buf, strlen(buf));
    (*index)++;
    return;
  }
  ml_buf_put(b, "{", 1);
  for (int64_t i = 0; i < t->dims[dim]; i++) {
    if (i)
      ml_buf_put(b, ",", 1);
    literal_text(b, t, data, dim + 1, index);
  }
  ml_buf_put(b, "}", 1);
}

static bool op_constant(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  ml_type *t = ml_result_type(c, op);
  const ml_attr *v = ml_attr_get(op, "value");
  if (!t || !v)
    return v ? false : (ml_error(c, op->loc, "constant without a value"), false);
  if (v->type && v->type->kind == MLT_TENSOR)
    t = v->type;
  unsigned char *data;
  int64_t count;
  if (!ml_dense_bytes(c, v, t, &data, &count))
    return false;
  ml_buf lit = {0};
  int64_t idx = 0;
  literal_text(&lit, t, data, 0, &idx);
  char name[24];
  ml_new_name(c, name);
  if (!lit.oom)
    ml_line(c, k, op->loc, "%%%s = %s constant(%s)", name, ml_shape_str(c, t), lit.p ? lit.p : "");
  bool ok = !lit.oom && ml_bind_results(c, k, op, name);
  ml_buf_free(&lit);
  (void)hlo;
  return ok;
}

/* ---- shape ops ------------------------------------------------------------------------------ */

static bool op_dims_attr(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo, const char *k1, const char *k2) {
  int64_t *v;
  int n;
  if (!get_ints(c, op, k1, k2, false, &v, &n))
    return false;
  ml_buf a = {0};
  ml_buf_put(&a, ", dimensions=", 13);
  ints_text(&a, v, n);
  return with_attrs(c, k, op, hlo, &a);
}

static bool op_broadcast_in_dim(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  return op_dims_attr(c, k, op, hlo, "dims", "broadcast_dimensions");
}
static bool op_transpose(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  return op_dims_attr(c, k, op, hlo, "dims", "permutation");
}
static bool op_reverse(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  return op_dims_attr(c, k, op, hlo, "dims", "dimensions");
}
static bool op_map(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo);

static bool op_broadcast(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  ml_type *in = ml_operand_type(c, k, op, 0);
  int64_t *sizes;
  int n;
  if (!in || !get_ints(c, op, "sizes", "broadcast_sizes", false, &sizes, &n))
    return false;
  ml_buf a = {0};
  ml_buf_put(&a, ", dimensions={", 14);
  for (int i = 0; i < in->rank; i++)
    ml_buf_printf(&a, "%s%d", i ? "," : "", n + i);
  ml_buf_put(&a, "}", 1);
  return with_attrs(c, k, op, hlo, &a);
}

static bool op_concatenate(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  ml_buf a = {0};
  ml_buf_printf(&a, ", dimensions={%lld}", (long long)get_int(op, "dim", "dimension", 0));
  return with_attrs(c, k, op, hlo, &a);
}

static bool op_iota(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  ml_buf a = {0};
  ml_buf_printf(&a, ", iota_dimension=%lld", (long long)get_int(op, "dim", "iota_dimension", 0));
  return with_attrs(c, k, op, hlo, &a);
}

static bool op_slice(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  ml_buf a = {0};
  ml_buf_put(&a, ", slice={", 9);
  const ml_attr *r = ml_attr_get(op, "__ranges");
  if (r) {
    for (int i = 0; i < r->n; i++) {
      const ml_attr *x = r->kids[i];
      if (x->kind != MA_LIST || x->n < 2) {
        ml_buf_free(&a);
        return ml_error(c, x->loc, "slice: expected start:limit(:stride)"), false;
      }
      ml_buf_printf(&a, "%s[%lld:%lld:%lld]", i ? ", " : "", (long long)x->kids[0]->i, (long long)x->kids[1]->i,
                    (long long)(x->n > 2 ? x->kids[2]->i : 1));
    }
  } else {
    int64_t *s, *l, *st;
    int ns, nl, nst;
    if (!get_ints(c, op, "start_indices", NULL, false, &s, &ns) || !get_ints(c, op, "limit_indices", NULL, false, &l, &nl) ||
        !get_ints(c, op, "strides", NULL, true, &st, &nst)) {
      ml_buf_free(&a);
      return false;
    }
    for (int i = 0; i < ns && i < nl; i++)
      ml_buf_printf(&a, "%s[%lld:%lld:%lld]", i ? ", " : "", (long long)s[i], (long long)l[i],
                    (long long)(i < nst ? st[i] : 1));
  }
  ml_buf_put(&a, "}", 1);
  return with_attrs(c, k, op, hlo, &a);
}

static bool op_dynamic_slice(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  int64_t *v;
  int n;
  if (!get_ints(c, op, "sizes", "slice_sizes", false, &v, &n))
    return false;
  ml_buf a = {0};
  ml_buf_put(&a, ", dynamic_slice_sizes=", 22);
  ints_text(&a, v, n);
  return with_attrs(c, k, op, hlo, &a);
}

static bool op_pad(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  int64_t *lo, *hi, *in;
  int nl, nh, ni;
  if (!get_ints(c, op, "low", "edge_padding_low", false, &lo, &nl) ||
      !get_ints(c, op, "high", "edge_padding_high", false, &hi, &nh) ||
      !get_ints(c, op, "interior", "interior_padding", true, &in, &ni))
    return false;
  ml_buf a = {0};
  ml_buf_put(&a, ", padding=", 10);
  for (int i = 0; i < nl && i < nh; i++)
    ml_buf_printf(&a, "%s%lld_%lld_%lld", i ? "x" : "", (long long)lo[i], (long long)hi[i],
                  (long long)(i < ni ? in[i] : 0));
  if (nl == 0)
    ml_buf_put(&a, "0_0", 3);
  return with_attrs(c, k, op, hlo, &a);
}

static bool op_compare(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  ml_str dir = op->n_words ? op->words[0] : ml_enum_word(ml_attr_get(op, "comparison_direction"));
  ml_str type = op->n_words > 1 ? op->words[1] : ml_enum_word(ml_attr_get(op, "compare_type"));
  if (!dir.n)
    return ml_error(c, op->loc, "compare without a direction"), false;
  ml_buf a = {0};
  ml_buf_printf(&a, ", direction=%.*s", (int)dir.n, dir.p);
  if (type.n && !ml_str_is(type, "NOTYPE"))
    ml_buf_printf(&a, ", type=%.*s", (int)type.n, type.p);
  return with_attrs(c, k, op, hlo, &a);
}

static bool op_reduce_precision(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  long long e = get_int(op, "exponent_bits", NULL, -1), m = get_int(op, "mantissa_bits", NULL, -1);
  const ml_attr *f = ml_attr_get(op, "format");
  if (f && f->text.n > 1 && f->text.p[0] == 'e') {
    char buf[32];
    snprintf(buf, sizeof buf, "%.*s", (int)(f->text.n < 31 ? f->text.n : 31), f->text.p);
    if (sscanf(buf, "e%lldm%lld", &e, &m) != 2)
      e = -1;
  }
  if (e < 0 || m < 0)
    return ml_error(c, op->loc, "reduce_precision needs exponent and mantissa bits"), false;
  ml_buf a = {0};
  ml_buf_printf(&a, ", exponent_bits=%lld, mantissa_bits=%lld", e, m);
  return with_attrs(c, k, op, hlo, &a);
}

/* ---- dot, convolution ------------------------------------------------------------------------ */

static bool cross_lists(ml_ctx *c, const ml_attr *a, int64_t **l, int *nl, int64_t **r, int *nr) {
  if (!a || a->kind != MA_CROSS || a->n != 2)
    return false;
  return ml_attr_ints(c, a->kids[0], l, nl) && ml_attr_ints(c, a->kids[1], r, nr);
}

static bool op_dot_general(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  int64_t *lb = NULL, *rb = NULL, *lc = NULL, *rc = NULL;
  int nlb = 0, nrb = 0, nlc = 0, nrc = 0;
  const ml_attr *dn = ml_attr_get(op, "dot_dimension_numbers");
  if (dn) {
    ml_attr *d = ml_hash_dict(c, dn);
    if (!d)
      return false;
    ml_attr_ints(c, ml_dict_get(d, "lhs_batching_dimensions"), &lb, &nlb);
    ml_attr_ints(c, ml_dict_get(d, "rhs_batching_dimensions"), &rb, &nrb);
    ml_attr_ints(c, ml_dict_get(d, "lhs_contracting_dimensions"), &lc, &nlc);
    ml_attr_ints(c, ml_dict_get(d, "rhs_contracting_dimensions"), &rc, &nrc);
  } else {
    const ml_attr *b = ml_attr_get(op, "batching_dims"), *cd = ml_attr_get(op, "contracting_dims");
    if ((b && !cross_lists(c, b, &lb, &nlb, &rb, &nrb)) || (cd && !cross_lists(c, cd, &lc, &nlc, &rc, &nrc)))
      return ml_error(c, op->loc, "dot_general: malformed dimension numbers"), false;
  }
  ml_buf a = {0};
  if (nlb) {
    ml_buf_put(&a, ", lhs_batch_dims=", 17);
    ints_text(&a, lb, nlb);
    ml_buf_put(&a, ", rhs_batch_dims=", 17);
    ints_text(&a, rb, nrb);
  }
  ml_buf_put(&a, ", lhs_contracting_dims=", 23);
  ints_text(&a, lc, nlc);
  ml_buf_put(&a, ", rhs_contracting_dims=", 23);
  ints_text(&a, rc, nrc);
  return with_attrs(c, k, op, hlo, &a);
}

static bool op_dot(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  ml_type *l = ml_operand_type(c, k, op, 0);
  if (!l)
    return false;
  ml_buf a = {0};
  ml_buf_printf(&a, ", lhs_contracting_dims={%d}, rhs_contracting_dims={0}", l->rank - 1);
  return with_attrs(c, k, op, hlo, &a);
}

/* [b, 0, 1, f] -> "b01f" */
static bool labels(const ml_attr *l, ml_buf *b) {
  if (!l || l->kind != MA_LIST)
    return false;
  for (int i = 0; i < l->n; i++) {
    const ml_attr *x = l->kids[i];
    if (x->kind == MA_INT)
      ml_buf_printf(b, "%lld", (long long)x->i);
    else if (x->kind == MA_WORD && x->text.n == 1)
      ml_buf_put(b, x->text.p, 1);
    else
      return false;
  }
  return true;
}

/* The kernel's spatial sizes in spatial-dimension order, from its labels. */
static void kernel_sizes(const ml_attr *kl, const ml_type *kt, int64_t *out, int n) {
  for (int i = 0; kl && i < kl->n && i < kt->rank; i++)
    if (kl->kids[i]->kind == MA_INT && kl->kids[i]->i >= 0 && kl->kids[i]->i < n)
      out[kl->kids[i]->i] = kt->dims[i];
}

static bool window_field(ml_ctx *c, ml_buf *b, const char *name, const ml_attr *v, int n, int64_t dflt) {
  int64_t *x = NULL;
  int nx = 0;
  if (v && !ml_attr_ints(c, v, &x, &nx))
    return false;
  bool any = false;
  for (int i = 0; i < nx; i++)
    any |= x[i] != dflt;
  if (!any)
    return true;
  ml_buf_printf(b, " %s=", name);
  for (int i = 0; i < n; i++)
    ml_buf_printf(b, "%s%lld", i ? "x" : "", (long long)(i < nx ? x[i] : dflt));
  return true;
}

/* padding: [[lo, hi], ...] (pretty) or dense<[[lo, hi], ...]> */
static bool window_pad(ml_ctx *c, ml_buf *b, const ml_attr *v, int n) {
  if (!v)
    return true;
  int64_t *x = NULL;
  int nx = 0;
  if (v->kind == MA_LIST) {
    x = ml_alloc(c, sizeof *x * (size_t)(2 * v->n + 2));
    if (!x)
      return false;
    for (int i = 0; i < v->n; i++) {
      int64_t *p;
      int np;
      if (!ml_attr_ints(c, v->kids[i], &p, &np) || np != 2)
        return false;
      x[nx++] = p[0];
      x[nx++] = p[1];
    }
  } else if (!ml_attr_ints(c, v, &x, &nx)) {
    return false;
  }
  bool any = false;
  for (int i = 0; i < nx; i++)
    any |= x[i] != 0;
  if (!any)
    return true;
  ml_buf_put(b, " pad=", 5);
  for (int i = 0; i < n; i++)
    ml_buf_printf(b, "%s%lld_%lld", i ? "x" : "", (long long)(2 * i < nx ? x[2 * i] : 0),
                  (long long)(2 * i + 1 < nx ? x[2 * i + 1] : 0));
  return true;
}

/* The generic form's #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]> as the pretty
 * form's three label lists (an MA_CROSS). */
static ml_attr *conv_labels(ml_ctx *c, const ml_attr *hash) {
  const char *lt = memchr(hash->text.p, '<', hash->text.n);
  if (!lt || hash->text.p[hash->text.n - 1] != '>')
    return ml_error(c, hash->loc, "malformed convolution dimension numbers"), NULL;
  ml_lexer lx;
  ml_lexer_init(&lx, lt + 1, (size_t)(hash->text.p + hash->text.n - 1 - (lt + 1)), hash->loc);
  ml_attr *cross = ml_alloc(c, sizeof *cross);
  if (!cross)
    return NULL;
  cross->kind = MA_CROSS;
  ml_attr *cur = NULL;
  for (ml_tok t = ml_lex(&lx); t.kind != MT_EOF; t = ml_lex(&lx)) {
    if (t.kind == MT_PUNCT && t.c == '[') {
      cur = ml_alloc(c, sizeof *cur);
      if (!cur || !ml_push(c, (void ***)&cross->kids, &cross->n, cur))
        return NULL;
      cur->kind = MA_LIST;
    } else if (t.kind == MT_PUNCT && t.c == ']') {
      cur = NULL;
    } else if (cur && (t.kind == MT_INT || t.kind == MT_BARE)) {
      ml_attr *x = ml_alloc(c, sizeof *x);
      if (!x || !ml_push(c, (void ***)&cur->kids, &cur->n, x))
        return NULL;
      x->kind = t.kind == MT_INT ? MA_INT : MA_WORD;
      x->i = strtoll(t.p, NULL, 10);
      x->text = (ml_str){t.p, t.n};
    } else if (t.kind == MT_ERROR) {
      return ml_error(c, t.loc, "malformed convolution dimension numbers"), NULL;
    }
  }
  return cross;
}

static bool op_convolution(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  ml_type *kt = ml_operand_type(c, k, op, 1);
  if (!kt)
    return false;
  const ml_attr *dn = ml_attr_get(op, "dim_numbers");
  ml_attr *parsed = NULL;
  const ml_attr *gdn = ml_attr_get(op, "dimension_numbers");
  if (!dn && gdn && gdn->kind == MA_HASH) { /* #stablehlo.conv<[b, 0, 1, f]x[..]->[..]> */
    parsed = conv_labels(c, gdn);
    if (!parsed)
      return false;
    dn = parsed;
  }
  if (!dn || dn->kind != MA_CROSS || dn->n != 3)
    return ml_error(c, op->loc, "convolution: unsupported dimension numbers"), false;
  ml_buf a = {0};
  int ns = dn->kids[0]->n - 2;
  if (ns < 0)
    ns = 0;
  int64_t sizes[64] = {0};
  if (ns > 64)
    return ml_error(c, op->loc, "convolution: too many spatial dimensions"), false;
  kernel_sizes(dn->kids[1], kt, sizes, ns);
  const ml_attr *w = ml_attr_get(op, "window");
  const ml_attr *stride = w ? ml_dict_get(w, "stride") : ml_attr_get(op, "window_strides");
  const ml_attr *pad = w ? ml_dict_get(w, "pad") : ml_attr_get(op, "padding");
  const ml_attr *ld = w ? ml_dict_get(w, "lhs_dilate") : ml_attr_get(op, "lhs_dilation");
  const ml_attr *rd = w ? ml_dict_get(w, "rhs_dilate") : ml_attr_get(op, "rhs_dilation");
  const ml_attr *rev = w ? ml_dict_get(w, "reverse") : ml_attr_get(op, "window_reversal");
  if (ns > 0) {
    ml_buf_put(&a, ", window={size=", 15);
    for (int i = 0; i < ns; i++)
      ml_buf_printf(&a, "%s%lld", i ? "x" : "", (long long)sizes[i]);
    bool ok = window_field(c, &a, "stride", stride, ns, 1) && window_pad(c, &a, pad, ns) &&
              window_field(c, &a, "lhs_dilate", ld, ns, 1) && window_field(c, &a, "rhs_dilate", rd, ns, 1) &&
              window_field(c, &a, "rhs_reversal", rev, ns, 0);
    if (!ok) {
      ml_buf_free(&a);
      return ml_error(c, op->loc, "convolution: malformed window"), false;
    }
    ml_buf_put(&a, "}", 1);
  }
  ml_buf_put(&a, ", dim_labels=", 13);
  if (!labels(dn->kids[0], &a) || (ml_buf_put(&a, "_", 1), !labels(dn->kids[1], &a)) ||
      (ml_buf_put(&a, "->", 2), !labels(dn->kids[2], &a))) {
    ml_buf_free(&a);
    return ml_error(c, op->loc, "convolution: malformed dimension labels"), false;
  }
  long long fg = get_int(op, "feature_group_count", NULL, 1), bg = get_int(op, "batch_group_count", NULL, 1);
  if (fg != 1)
    ml_buf_printf(&a, ", feature_group_count=%lld", fg);
  if (bg != 1)
    ml_buf_printf(&a, ", batch_group_count=%lld", bg);
  return with_attrs(c, k, op, hlo, &a);
}

/* ---- regions: reduce, windows, sort, scatter, while, if, case, map --------------------------- */

/* The reducer: a region, or `applies stablehlo.op` (one binary op on scalars). */
static const char *reducer(ml_ctx *c, ml_comp *k, const ml_op *op, int region, const ml_type *et_from) {
  if (op->n_regions > region)
    return ml_region_comp(c, k, op->regions[region], 0, NULL, op->loc);
  if (op->n_words && et_from) {
    ml_str w = op->words[0];
    static const char *const map[][2] = {{"stablehlo.add", "add"}, {"stablehlo.multiply", "multiply"},
                                         {"stablehlo.maximum", "maximum"}, {"stablehlo.minimum", "minimum"},
                                         {"stablehlo.and", "and"}, {"stablehlo.or", "or"}, {"stablehlo.xor", "xor"}};
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
      if (ml_str_is(w, map[i][0]))
        return ml_binary_comp(c, map[i][1], et_from->et, op->loc);
    ml_error(c, op->loc, "reduce applies %.*s: unsupported", (int)w.n, w.p);
    return NULL;
  }
  ml_error(c, op->loc, "%.*s has no body", (int)op->name.n, op->name.p);
  return NULL;
}

static bool op_reduce(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  int64_t *d;
  int nd;
  if (!get_ints(c, op, "dimensions", NULL, false, &d, &nd))
    return false;
  ml_type *init = op->n_operands ? ml_operand_type(c, k, op, op->n_operands - 1) : NULL;
  const char *f = reducer(c, k, op, 0, init);
  if (!f)
    return false;
  ml_buf a = {0};
  ml_buf_put(&a, ", dimensions=", 13);
  ints_text(&a, d, nd);
  ml_buf_printf(&a, ", to_apply=%%%s", f);
  return with_attrs(c, k, op, hlo, &a);
}

static bool window_text(ml_ctx *c, const ml_op *op, ml_buf *a) {
  int64_t *wd;
  int n;
  if (!get_ints(c, op, "window_dimensions", NULL, false, &wd, &n))
    return false;
  ml_buf_put(a, ", window={size=", 15);
  for (int i = 0; i < n; i++)
    ml_buf_printf(a, "%s%lld", i ? "x" : "", (long long)wd[i]);
  if (n == 0)
    ml_buf_put(a, "1", 1);
  bool ok = window_field(c, a, "stride", ml_attr_get(op, "window_strides"), n, 1) &&
            window_pad(c, a, ml_attr_get(op, "padding"), n) &&
            window_field(c, a, "lhs_dilate", ml_attr_get(op, "base_dilations"), n, 1) &&
            window_field(c, a, "rhs_dilate", ml_attr_get(op, "window_dilations"), n, 1);
  ml_buf_put(a, "}", 1);
  if (!ok)
    ml_error(c, op->loc, "%.*s: malformed window attributes", (int)op->name.n, op->name.p);
  return ok;
}

static bool op_reduce_window(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  ml_buf a = {0};
  if (!window_text(c, op, &a)) {
    ml_buf_free(&a);
    return false;
  }
  const char *f = reducer(c, k, op, 0, NULL);
  if (!f) {
    ml_buf_free(&a);
    return false;
  }
  ml_buf_printf(&a, ", to_apply=%%%s", f);
  return with_attrs(c, k, op, hlo, &a);
}

static bool op_select_and_scatter(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  ml_buf a = {0};
  if (!window_text(c, op, &a) || op->n_regions != 2) {
    ml_buf_free(&a);
    return op->n_regions == 2 ? false : (ml_error(c, op->loc, "select_and_scatter needs two regions"), false);
  }
  const char *sel = ml_region_comp(c, k, op->regions[0], 0, NULL, op->loc);
  const char *sc = sel ? ml_region_comp(c, k, op->regions[1], 0, NULL, op->loc) : NULL;
  if (!sc) {
    ml_buf_free(&a);
    return false;
  }
  ml_buf_printf(&a, ", select=%%%s, scatter=%%%s", sel, sc);
  return with_attrs(c, k, op, hlo, &a);
}

static bool op_sort(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  ml_type *t = ml_operand_type(c, k, op, 0);
  if (!t)
    return false;
  long long dim = get_int(op, "dimension", NULL, -1);
  if (dim < 0)
    dim += t->rank;
  const char *f = reducer(c, k, op, 0, NULL);
  if (!f)
    return false;
  ml_buf a = {0};
  ml_buf_printf(&a, ", dimensions={%lld}%s, to_apply=%%%s", dim, get_bool(op, "is_stable") ? ", is_stable=true" : "", f);
  return with_attrs(c, k, op, hlo, &a);
}

static void dict_list(ml_ctx *c, ml_buf *a, const ml_attr *d, const char *mlir_key, const char *hlo_key, bool always) {
  int64_t *v = NULL;
  int n = 0;
  const ml_attr *x = ml_dict_get(d, mlir_key);
  if (x)
    ml_attr_ints(c, x, &v, &n);
  if (!n && !always)
    return;
  ml_buf_printf(a, ", %s=", hlo_key);
  ints_text(a, v, n);
}

static bool op_scatter(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  ml_attr *d = ml_hash_dict(c, ml_attr_get(op, "scatter_dimension_numbers"));
  if (!d)
    return false;
  const char *f = reducer(c, k, op, 0, NULL);
  if (!f)
    return false;
  ml_buf a = {0};
  dict_list(c, &a, d, "update_window_dims", "update_window_dims", true);
  dict_list(c, &a, d, "inserted_window_dims", "inserted_window_dims", true);
  dict_list(c, &a, d, "scatter_dims_to_operand_dims", "scatter_dims_to_operand_dims", true);
  dict_list(c, &a, d, "input_batching_dims", "input_batching_dims", false);
  dict_list(c, &a, d, "scatter_indices_batching_dims", "scatter_indices_batching_dims", false);
  const ml_attr *ivd = ml_dict_get(d, "index_vector_dim"); /* omitted when 0 */
  ml_buf_printf(&a, ", index_vector_dim=%lld", (long long)(ivd ? ivd->i : 0));
  if (get_bool(op, "indices_are_sorted"))
    ml_buf_put(&a, ", indices_are_sorted=true", 25);
  if (get_bool(op, "unique_indices"))
    ml_buf_put(&a, ", unique_indices=true", 21);
  ml_buf_printf(&a, ", to_apply=%%%s", f);
  return with_attrs(c, k, op, hlo, &a);
}

static bool op_gather(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  ml_attr *d = ml_hash_dict(c, ml_attr_get(op, "dimension_numbers"));
  int64_t *ss;
  int nss;
  if (!d || !get_ints(c, op, "slice_sizes", NULL, false, &ss, &nss))
    return false;
  ml_buf a = {0};
  dict_list(c, &a, d, "offset_dims", "offset_dims", true);
  dict_list(c, &a, d, "collapsed_slice_dims", "collapsed_slice_dims", true);
  dict_list(c, &a, d, "start_index_map", "start_index_map", true);
  dict_list(c, &a, d, "operand_batching_dims", "operand_batching_dims", false);
  dict_list(c, &a, d, "start_indices_batching_dims", "start_indices_batching_dims", false);
  const ml_attr *ivd = ml_dict_get(d, "index_vector_dim"); /* omitted when 0 */
  ml_buf_printf(&a, ", index_vector_dim=%lld", (long long)(ivd ? ivd->i : 0));
  ml_buf_put(&a, ", slice_sizes=", 14);
  ints_text(&a, ss, nss);
  if (get_bool(op, "indices_are_sorted"))
    ml_buf_put(&a, ", indices_are_sorted=true", 25);
  return with_attrs(c, k, op, hlo, &a);
}

/* A tuple of the op's operands [from, to): its name in out (24 bytes) and its type. */
static ml_type *tuple_of(ml_ctx *c, ml_comp *k, const ml_op *op, int from, int to, char out[24]) {
  ml_type *t = ml_alloc(c, sizeof *t);
  if (!t)
    return NULL;
  t->kind = MLT_TUPLE;
  for (int i = from; i < to; i++) {
    ml_type *e = ml_operand_type(c, k, op, i);
    if (!e || !ml_push(c, (void ***)&t->elems, &t->n_elems, e))
      return NULL;
  }
  ml_buf args = {0};
  if (!ml_operands_text(c, k, op, from, to, &args)) {
    ml_buf_free(&args);
    return NULL;
  }
  ml_new_name(c, out);
  ml_line(c, k, op->loc, "%%%s = %s tuple(%s)", out, ml_shape_str(c, t), args.p ? args.p : "");
  ml_buf_free(&args);
  return t;
}

/* Binds the results of a tuple-valued instruction `name` of type t to op's results. */
static bool bind_tuple(ml_ctx *c, ml_comp *k, const ml_op *op, const char *name, const ml_type *t) {
  int idx = 0;
  for (int g = 0; g < op->n_result_groups; g++)
    for (int j = 0; j < op->result_counts[g]; j++, idx++) {
      if (idx >= t->n_elems)
        return ml_error(c, op->loc, "more results than values"), false;
      char e[24];
      ml_new_name(c, e);
      ml_line(c, k, op->loc, "%%%s = %s get-tuple-element(%%%s), index=%d", e, ml_shape_str(c, t->elems[idx]), name, idx);
      if (!ml_bind(c, k, op->results[g], op->result_counts[g] > 1 ? j : -1, e, t->elems[idx]))
        return false;
    }
  return true;
}

/* ---- values used inside a region but defined outside it (while, if, case) ----------------- */

typedef struct capture_set {
  const ml_str **defs;
  int n_defs;
  const ml_use **uses;
  int n_uses;
} capture_set;

static bool is_def(const capture_set *s, ml_str n) {
  for (int i = 0; i < s->n_defs; i++)
    if (s->defs[i]->n == n.n && memcmp(s->defs[i]->p, n.p, n.n) == 0)
      return true;
  return false;
}

static bool is_captured(const capture_set *s, const ml_use *u) {
  for (int i = 0; i < s->n_uses; i++)
    if (s->uses[i]->name.n == u->name.n && memcmp(s->uses[i]->name.p, u->name.p, u->name.n) == 0 &&
        s->uses[i]->index == u->index)
      return true;
  return false;
}

static bool collect(ml_ctx *c, const ml_comp *k, const ml_region *r, capture_set *s, int depth) {
  if (depth > 64)
    return true;
  for (int i = 0; i < r->n_args; i++)
    if (!ml_push(c, (void ***)&s->defs, &s->n_defs, (void *)&r->arg_names[i]))
      return false;
  for (int o = 0; o < r->n_ops; o++) {
    const ml_op *op = r->ops[o];
    for (int i = 0; i < op->n_operands; i++) {
      const ml_use *u = &op->operands[i];
      if (!is_def(s, u->name) && !is_captured(s, u) && ml_find(k, u) &&
          !ml_push(c, (void ***)&s->uses, &s->n_uses, (void *)u))
        return false;
    }
    for (int g = 0; g < op->n_regions; g++)
      if (!collect(c, k, op->regions[g], s, depth + 1))
        return false;
    for (int g = 0; g < op->n_result_groups; g++)
      if (!ml_push(c, (void ***)&s->defs, &s->n_defs, (void *)&op->results[g]))
        return false;
  }
  return true;
}

/* A copy of region r whose block takes the captured values as extra arguments; with
 * `pass_through` its final return hands them on unchanged (a while body). */
static ml_region *with_captures(ml_ctx *c, const ml_comp *k, const ml_region *r, const capture_set *s, bool keep_args,
                                bool pass_through) {
  ml_region *n = ml_alloc(c, sizeof *n);
  if (!n)
    return NULL;
  *n = *r;
  int base = keep_args ? r->n_args : 0;
  n->n_args = base + s->n_uses;
  n->arg_names = ml_alloc(c, sizeof(ml_str) * (size_t)(n->n_args + 1));
  n->arg_types = ml_alloc(c, sizeof(ml_type *) * (size_t)(n->n_args + 1));
  if (!n->arg_names || !n->arg_types)
    return NULL;
  for (int i = 0; i < base; i++) {
    n->arg_names[i] = r->arg_names[i];
    n->arg_types[i] = r->arg_types[i];
  }
  for (int i = 0; i < s->n_uses; i++) {
    const ml_value *v = ml_find(k, s->uses[i]);
    if (s->uses[i]->index >= 0)
      return ml_error(c, s->uses[i]->loc, "a region may not capture one result of a multi-result op"), NULL;
    n->arg_names[base + i] = s->uses[i]->name;
    n->arg_types[base + i] = v ? v->type : NULL;
  }
  if (pass_through && r->n_ops) {
    ml_op *ret = ml_alloc(c, sizeof *ret);
    ml_op **ops = ml_alloc(c, sizeof *ops * (size_t)r->n_ops);
    if (!ret || !ops)
      return NULL;
    *ret = *r->ops[r->n_ops - 1];
    ret->operands = ml_alloc(c, sizeof(ml_use) * (size_t)(ret->n_operands + s->n_uses + 1));
    if (!ret->operands)
      return NULL;
    memcpy(ret->operands, r->ops[r->n_ops - 1]->operands, sizeof(ml_use) * (size_t)ret->n_operands);
    for (int i = 0; i < s->n_uses; i++)
      ret->operands[ret->n_operands++] = *s->uses[i];
    memcpy(ops, r->ops, sizeof *ops * (size_t)r->n_ops);
    ops[r->n_ops - 1] = ret;
    n->ops = ops;
  }
  return n;
}

/* op with the values its regions capture added as operands (and as block arguments). */
static const ml_op *capturing(ml_ctx *c, const ml_comp *k, const ml_op *op, bool is_while) {
  capture_set s = {0};
  for (int i = 0; i < op->n_regions; i++)
    if (!collect(c, k, op->regions[i], &s, 0))
      return NULL;
  if (s.n_uses == 0)
    return op;
  ml_op *n = ml_alloc(c, sizeof *n);
  if (!n)
    return NULL;
  *n = *op;
  n->operands = ml_alloc(c, sizeof(ml_use) * (size_t)(op->n_operands + s.n_uses + 1));
  n->regions = ml_alloc(c, sizeof(ml_region *) * (size_t)(op->n_regions + 1));
  if (!n->operands || !n->regions)
    return NULL;
  memcpy(n->operands, op->operands, sizeof(ml_use) * (size_t)op->n_operands);
  for (int i = 0; i < s.n_uses; i++)
    n->operands[n->n_operands++] = *s.uses[i];
  for (int i = 0; i < op->n_regions; i++) {
    n->regions[i] = with_captures(c, k, op->regions[i], &s, is_while, is_while && i == 1);
    if (!n->regions[i])
      return NULL;
  }
  return n;
}

static bool op_while(ml_ctx *c, ml_comp *k, const ml_op *op0, const char *hlo) {
  if (op0->n_regions != 2)
    return ml_error(c, op0->loc, "while needs cond and body regions"), false;
  const ml_op *op = capturing(c, k, op0, true);
  if (!op)
    return false;
  char tup[24];
  ml_type *t = tuple_of(c, k, op, 0, op->n_operands, tup);
  if (!t)
    return false;
  const char *cond = ml_region_comp(c, k, op->regions[0], ML_TUPLE_PARAM, t, op->loc);
  const char *body = cond ? ml_region_comp(c, k, op->regions[1], ML_TUPLE_PARAM | ML_TUPLE_RESULT, t, op->loc) : NULL;
  if (!body)
    return false;
  char w[24];
  ml_new_name(c, w);
  ml_line(c, k, op->loc, "%%%s = %s %s(%%%s), condition=%%%s, body=%%%s", w, ml_shape_str(c, t), hlo, tup, cond, body);
  return bind_tuple(c, k, op, w, t);
}

/* if/case: branches take no arguments in StableHLO; in HLO each gets an empty tuple. */
static bool op_conditional(ml_ctx *c, ml_comp *k, const ml_op *op0, const char *hlo) {
  if (op0->n_regions < 1 || op0->n_operands < 1)
    return ml_error(c, op0->loc, "%.*s needs a predicate or index and branches", (int)op0->name.n, op0->name.p), false;
  const ml_op *op = capturing(c, k, op0, false);
  if (!op)
    return false;
  ml_type *rt = op->n_results ? ml_result_type(c, op) : NULL;
  if (op->n_results && !rt)
    return false;
  ml_buf a = {0}, args = {0};
  bool is_if = ml_str_is(op->name, "stablehlo.if");
  char et[24];
  ml_type *empty = tuple_of(c, k, op, op0->n_operands, op->n_operands, et); /* the captured values */
  if (!empty)
    return false;
  for (int i = 0; i < op->n_regions; i++) {
    ml_region r = *op->regions[i];
    if (op == op0) {
      r.n_args = 0;
      r.arg_names = NULL;
      r.arg_types = NULL;
    }
    const char *b = ml_region_comp(c, k, &r, ML_TUPLE_PARAM, empty, op->loc);
    if (!b) {
      ml_buf_free(&a);
      ml_buf_free(&args);
      return false;
    }
    if (is_if)
      ml_buf_printf(&a, ", %s=%%%s", i == 0 ? "true_computation" : "false_computation", b);
    else
      ml_buf_printf(&a, "%s%%%s", i ? ", " : ", branch_computations={", b);
    ml_buf_printf(&args, ", %%%s", et);
  }
  if (!is_if)
    ml_buf_put(&a, "}", 1);
  const ml_value *p = ml_lookup(c, k, &op->operands[0]);
  bool ok = p && !a.oom && !args.oom;
  if (ok) {
    char name[24];
    ml_new_name(c, name);
    ml_line(c, k, op->loc, "%%%s = %s %s(%%%s%s)%s", name, rt ? ml_shape_str(c, rt) : "()", hlo, p->hlo, args.p, a.p);
    ok = ml_bind_results(c, k, op, name);
  }
  ml_buf_free(&a);
  ml_buf_free(&args);
  return ok;
}

static bool op_map(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  int64_t *d;
  int nd;
  if (!get_ints(c, op, "dimensions", NULL, true, &d, &nd))
    return false;
  const char *f = reducer(c, k, op, 0, NULL);
  if (!f)
    return false;
  ml_buf a = {0};
  ml_buf_put(&a, ", dimensions=", 13);
  ints_text(&a, d, nd);
  ml_buf_printf(&a, ", to_apply=%%%s", f);
  return with_attrs(c, k, op, hlo, &a);
}

/* ---- calls ------------------------------------------------------------------------------- */

static void callee_name(ml_str s, char *out, size_t cap) {
  size_t j = 0;
  for (size_t i = 0; i < s.n && j + 1 < cap; i++) {
    char ch = s.p[i];
    out[j++] = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
                       ch == '.' || ch == '-' ? ch : '_';
  }
  out[j] = 0;
}

static bool op_call(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  ml_str f = op->callee;
  if (!f.n) {
    const ml_attr *a = ml_attr_get(op, "callee");
    if (!a)
      a = ml_attr_get(op, "decomposition");
    if (a)
      f = a->text;
  }
  if (!f.n)
    return ml_error(c, op->loc, "call without a callee"), false;
  char name[64];
  callee_name(f, name, sizeof name);
  ml_buf a = {0};
  ml_buf_printf(&a, ", to_apply=%%%s", name);
  if (op->n_results == 0) { /* a call with no results still runs (side effects): a tuple() */
    ml_buf args = {0};
    bool ok = ml_operands_text(c, k, op, 0, op->n_operands, &args);
    char v[24];
    ml_new_name(c, v);
    if (ok)
      ml_line(c, k, op->loc, "%%%s = () call(%s)%s", v, args.p ? args.p : "", a.p);
    ml_buf_free(&args);
    ml_buf_free(&a);
    return ok;
  }
  return with_attrs(c, k, op, hlo, &a);
}

static bool op_composite(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  ml_op tmp = *op;
  tmp.callee = (ml_str){0};
  return op_call(c, k, &tmp, hlo);
}

static void quote(ml_buf *b, ml_str s) {
  ml_buf_put(b, "\"", 1);
  for (size_t i = 0; i < s.n; i++) {
    if (s.p[i] == '"' && (i == 0 || s.p[i - 1] != '\\'))
      ml_buf_put(b, "\\", 1);
    ml_buf_put(b, &s.p[i], 1);
  }
  ml_buf_put(b, "\"", 1);
}

static bool op_custom_call(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  ml_str target = op->callee;
  const ml_attr *t = ml_attr_get(op, "call_target_name");
  if (!target.n && t)
    target = t->text;
  ml_buf a = {0};
  ml_buf_put(&a, ", custom_call_target=", 21);
  quote(&a, target);
  const ml_attr *bc = ml_attr_get(op, "backend_config");
  if (bc && bc->kind == MA_STRING && bc->text.n) {
    ml_buf_put(&a, ", backend_config=", 17);
    quote(&a, bc->text);
  } else if (bc && bc->kind == MA_DICT) { /* typed FFI attributes: kept as text */
    ml_buf_put(&a, ", backend_config={", 18);
    for (int i = 0; i < bc->n; i++) {
      const ml_attr *x = bc->kids[i];
      ml_buf_printf(&a, "%s%.*s", i ? ", " : "", (int)x->key.n, x->key.p);
      if (x->kind == MA_INT)
        ml_buf_printf(&a, " = %lld : i64", (long long)x->i);
      else if (x->kind == MA_FLOAT)
        ml_buf_printf(&a, " = %.17g : f64", x->f);
      else if (x->kind == MA_BOOL)
        ml_buf_printf(&a, " = %s", x->i ? "true" : "false");
      else if (x->kind == MA_STRING)
        ml_buf_put(&a, " = ", 3), quote(&a, x->text);
    }
    ml_buf_put(&a, "}", 1);
  }
  const ml_attr *api = ml_attr_get(op, "api_version");
  if (api && api->kind == MA_INT && api->i == 4)
    ml_buf_put(&a, ", api_version=API_VERSION_TYPED_FFI", 35);
  if (get_bool(op, "has_side_effect"))
    ml_buf_put(&a, ", custom_call_has_side_effect=true", 34);
  if (op->n_results == 0) {
    ml_buf args = {0};
    bool ok = ml_operands_text(c, k, op, 0, op->n_operands, &args) && !a.oom;
    char v[24];
    ml_new_name(c, v);
    if (ok)
      ml_line(c, k, op->loc, "%%%s = () %s(%s)%s", v, hlo, args.p ? args.p : "", a.p);
    ml_buf_free(&args);
    ml_buf_free(&a);
    return ok;
  }
  return with_attrs(c, k, op, hlo, &a);
}

/* ---- other ops ------------------------------------------------------------------------------ */

static bool op_get_tuple_element(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  long long idx = get_int(op, "index", NULL, -1);
  const ml_attr *v = ml_attr_get(op, "value");
  if (idx < 0 && v && v->kind == MA_LIST && v->n == 1)
    idx = v->kids[0]->i;
  if (idx < 0)
    return ml_error(c, op->loc, "get_tuple_element without an index"), false;
  ml_buf a = {0};
  ml_buf_printf(&a, ", index=%lld", idx);
  return with_attrs(c, k, op, hlo, &a);
}

static bool op_opt_barrier(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  char tup[24];
  ml_type *t = tuple_of(c, k, op, 0, op->n_operands, tup);
  if (!t)
    return false;
  char b[24];
  ml_new_name(c, b);
  ml_line(c, k, op->loc, "%%%s = %s %s(%%%s)", b, ml_shape_str(c, t), hlo, tup);
  return bind_tuple(c, k, op, b, t);
}

static bool op_fft(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  ml_str type = op->n_words ? op->words[0] : ml_enum_word(ml_attr_get(op, "fft_type"));
  const ml_attr *ty = ml_attr_get(op, "type");
  if (ty)
    type = ty->kind == MA_HASH ? ml_enum_word(ty) : ty->text;
  int64_t *len;
  int n;
  if (!type.n || !get_ints(c, op, "length", "fft_length", false, &len, &n))
    return type.n ? false : (ml_error(c, op->loc, "fft without a type"), false);
  ml_buf a = {0};
  ml_buf_printf(&a, ", fft_type=%.*s, fft_length=", (int)type.n, type.p);
  ints_text(&a, len, n);
  return with_attrs(c, k, op, hlo, &a);
}

static bool op_rng_bit_generator(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  const ml_attr *al = ml_attr_get(op, "algorithm");
  ml_str w = al ? (al->kind == MA_HASH ? ml_enum_word(al) : al->text) : (ml_str){"DEFAULT", 7};
  const char *alg = ml_str_is(w, "THREE_FRY") ? "rng_three_fry" : ml_str_is(w, "PHILOX") ? "rng_philox" : "rng_default";
  ml_buf a = {0};
  ml_buf_printf(&a, ", algorithm=%s", alg);
  return with_attrs(c, k, op, hlo, &a);
}

static bool op_rng(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  const ml_attr *d = ml_attr_get(op, "rng_distribution");
  if (!d)
    d = ml_attr_get(op, "distribution");
  ml_str w = d ? (d->kind == MA_HASH ? ml_enum_word(d) : d->text) : (ml_str){"UNIFORM", 7};
  ml_buf a = {0};
  ml_buf_printf(&a, ", distribution=%s", ml_str_is(w, "NORMAL") ? "rng_normal" : "rng_uniform");
  bool ok = !a.oom && emit_line(c, k, op, hlo, 0, 2, a.p);
  ml_buf_free(&a);
  return ok;
}

static bool op_triangular_solve(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  ml_str tr = ml_enum_word(ml_attr_get(op, "transpose_a"));
  ml_buf a = {0};
  ml_buf_printf(&a, ", left_side=%s, lower=%s, unit_diagonal=%s, transpose_a=%.*s",
                get_bool(op, "left_side") ? "true" : "false", get_bool(op, "lower") ? "true" : "false",
                get_bool(op, "unit_diagonal") ? "true" : "false", tr.n ? (int)tr.n : 12, tr.n ? tr.p : "NO_TRANSPOSE");
  return with_attrs(c, k, op, hlo, &a);
}

static bool op_cholesky(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  ml_buf a = {0};
  ml_buf_printf(&a, ", lower=%s", get_bool(op, "lower") ? "true" : "false");
  return with_attrs(c, k, op, hlo, &a);
}

static bool op_batch_norm(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  const ml_attr *e = ml_attr_get(op, "epsilon");
  ml_buf a = {0};
  ml_buf_printf(&a, ", epsilon=%.9g, feature_index=%lld", e ? e->f : 0.001, (long long)get_int(op, "feature_index", NULL, 0));
  return with_attrs(c, k, op, hlo, &a);
}

static bool op_dimension_size(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  ml_buf a = {0};
  ml_buf_printf(&a, ", dimensions={%lld}", (long long)get_int(op, "dimension", NULL, 0));
  return with_attrs(c, k, op, hlo, &a);
}

/* ", replica_groups={{..},{..}}" from a 2-D dense replica_groups attribute (nothing when
 * absent: every replica in one group). */
static bool replica_groups_text(ml_ctx *c, const ml_op *op, ml_buf *a) {
  const ml_attr *rg = ml_attr_get(op, "replica_groups");
  int64_t *g = NULL;
  int n = 0;
  if (!rg)
    return true;
  if (!rg->type || rg->type->rank != 2 || !ml_attr_ints(c, rg, &g, &n)) {
    ml_error(c, rg->loc, "%.*s: replica_groups is not a 2-D list of integers", (int)op->name.n, op->name.p);
    return false;
  }
  int64_t cols = rg->type->dims[1];
  if (!n || cols <= 0)
    return true;
  ml_buf_put(a, ", replica_groups={", 18);
  for (int i = 0; i < n; i++) {
    if (i % cols == 0)
      ml_buf_printf(a, "%s{", i ? "," : "");
    if (g[i] >= 0) /* -1 pads ragged groups */
      ml_buf_printf(a, "%s%lld", i % cols && g[i - 1] >= 0 ? "," : "", (long long)g[i]);
    if ((i + 1) % cols == 0)
      ml_buf_put(a, "}", 1);
  }
  ml_buf_put(a, "}", 1);
  return true;
}

/* ", channel_id=N" from channel_handle = #stablehlo.channel_handle<handle = N, type = T>. */
static void channel_text(ml_ctx *c, const ml_op *op, ml_buf *a) {
  const ml_attr *ch = ml_attr_get(op, "channel_handle");
  const ml_attr *d = ch && ch->kind == MA_HASH ? ml_hash_dict(c, ch) : ch && ch->kind == MA_DICT ? ch : NULL;
  const ml_attr *h = d ? ml_dict_get(d, "handle") : NULL;
  if (h && h->kind == MA_INT && h->i > 0)
    ml_buf_printf(a, ", channel_id=%lld", (long long)h->i);
  if (get_bool(op, "use_global_device_ids"))
    ml_buf_printf(a, ", use_global_device_ids=true");
}

static bool op_all_reduce(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  ml_type *t = op->n_operands ? ml_operand_type(c, k, op, 0) : NULL;
  const char *f = t ? reducer(c, k, op, 0, t) : NULL;
  if (!f)
    return false;
  ml_buf a = {0};
  bool ok = replica_groups_text(c, op, &a);
  channel_text(c, op, &a);
  ml_buf_printf(&a, ", to_apply=%%%s", f);
  return ok ? with_attrs(c, k, op, hlo, &a) : (ml_buf_free(&a), false);
}

/* all_gather (all_gather_dim), reduce_scatter (scatter_dimension, a reducer region): one
 * dimension, replica groups, channel. */
static bool op_gather_scatter_collective(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  bool scatter = strcmp(hlo, "reduce-scatter") == 0;
  const char *key = scatter ? "scatter_dimension" : "all_gather_dim";
  const ml_attr *d = ml_attr_get(op, key);
  if (!d || d->kind != MA_INT) {
    ml_error(c, op->loc, "%.*s: missing attribute %s", (int)op->name.n, op->name.p, key);
    return false;
  }
  const char *f = NULL;
  if (scatter) {
    ml_type *t = op->n_operands ? ml_operand_type(c, k, op, 0) : NULL;
    if (!t || !(f = reducer(c, k, op, 0, t)))
      return false;
  }
  ml_buf a = {0};
  ml_buf_printf(&a, ", dimensions={%lld}", (long long)d->i);
  bool ok = replica_groups_text(c, op, &a);
  channel_text(c, op, &a);
  if (f)
    ml_buf_printf(&a, ", to_apply=%%%s", f);
  return ok ? with_attrs(c, k, op, hlo, &a) : (ml_buf_free(&a), false);
}

/* all_to_all: HLO's array form splits and concatenates along one dimension. */
static bool op_all_to_all(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  int64_t split = get_int(op, "split_dimension", NULL, -1), concat = get_int(op, "concat_dimension", NULL, -1);
  if (split < 0 || concat < 0) {
    ml_error(c, op->loc, "%.*s: missing split_dimension or concat_dimension", (int)op->name.n, op->name.p);
    return false;
  }
  if (split != concat || op->n_operands != 1)
    return ml_error(c, op->loc,
                    "%.*s is not supported: split_dimension %lld differs from concat_dimension %lld (or several "
                    "operands); HLO's all-to-all splits and concatenates along one dimension",
                    (int)op->name.n, op->name.p, (long long)split, (long long)concat),
           false;
  ml_buf a = {0};
  ml_buf_printf(&a, ", dimensions={%lld}", (long long)split);
  bool ok = replica_groups_text(c, op, &a);
  channel_text(c, op, &a);
  return ok ? with_attrs(c, k, op, hlo, &a) : (ml_buf_free(&a), false);
}

/* collective_permute: source_target_pairs, an N x 2 dense list. */
static bool op_collective_permute(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  const ml_attr *st = ml_attr_get(op, "source_target_pairs");
  int64_t *v = NULL;
  int n = 0;
  if (!st || !ml_attr_ints(c, st, &v, &n) || n % 2) {
    ml_error(c, op->loc, "%.*s: source_target_pairs must be a list of pairs", (int)op->name.n, op->name.p);
    return false;
  }
  ml_buf a = {0};
  ml_buf_put(&a, ", source_target_pairs={", 23);
  for (int i = 0; i < n; i += 2)
    ml_buf_printf(&a, "%s{%lld,%lld}", i ? "," : "", (long long)v[i], (long long)v[i + 1]);
  ml_buf_put(&a, "}", 1);
  channel_text(c, op, &a);
  return with_attrs(c, k, op, hlo, &a);
}

static bool op_collective_broadcast(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  ml_buf a = {0};
  bool ok = replica_groups_text(c, op, &a);
  channel_text(c, op, &a);
  return ok ? with_attrs(c, k, op, hlo, &a) : (ml_buf_free(&a), false);
}

/* ---- tokens: infeed, outfeed, send, recv ----------------------------------------------- */

/* A string attribute as HLO text ("" when absent). */
static void string_attr(ml_buf *a, const ml_op *op, const char *key, const char *hlo_key) {
  const ml_attr *v = ml_attr_get(op, key);
  ml_buf_printf(a, ", %s=", hlo_key);
  quote(a, v && v->kind == MA_STRING ? v->text : (ml_str){"", 0});
}

/* The handle of channel_handle = #stablehlo.channel_handle<handle = N, type = T>, or -1. */
static int64_t channel_of(ml_ctx *c, const ml_op *op) {
  const ml_attr *ch = ml_attr_get(op, "channel_handle");
  const ml_attr *d = ch && ch->kind == MA_HASH ? ml_hash_dict(c, ch) : ch && ch->kind == MA_DICT ? ch : NULL;
  const ml_attr *h = d ? ml_dict_get(d, "handle") : NULL;
  return h && h->kind == MA_INT ? h->i : -1;
}

/* The data of an op's results but the last (the token): one type, or a tuple of several. */
static ml_type *data_type(ml_ctx *c, const ml_type *results) {
  if (results->kind != MLT_TUPLE || results->n_elems < 2)
    return NULL;
  if (results->n_elems == 2)
    return results->elems[0];
  ml_type *t = ml_alloc(c, sizeof *t);
  if (!t)
    return NULL;
  t->kind = MLT_TUPLE;
  for (int i = 0; i + 1 < results->n_elems; i++)
    if (!ml_push(c, (void ***)&t->elems, &t->n_elems, results->elems[i]))
      return NULL;
  return t;
}

/* Binds op's results (data..., token) from `pair`, an HLO (data, token) tuple whose data is
 * one value or a tuple of several. */
static bool bind_data_and_token(ml_ctx *c, ml_comp *k, const ml_op *op, const char *pair, const ml_type *results,
                                const ml_type *data) {
  char d[24], e[24];
  int n = results->n_elems - 1;
  ml_new_name(c, d);
  ml_line(c, k, op->loc, "%%%s = %s get-tuple-element(%%%s), index=0", d, ml_shape_str(c, data), pair);
  int idx = 0;
  for (int g = 0; g < op->n_result_groups; g++)
    for (int j = 0; j < op->result_counts[g]; j++, idx++) {
      const char *from = d;
      if (idx == n) {
        ml_new_name(c, e);
        ml_line(c, k, op->loc, "%%%s = token[] get-tuple-element(%%%s), index=1", e, pair);
        from = e;
      } else if (n > 1) {
        ml_new_name(c, e);
        ml_line(c, k, op->loc, "%%%s = %s get-tuple-element(%%%s), index=%d", e, ml_shape_str(c, results->elems[idx]), d, idx);
        from = e;
      }
      if (!ml_bind(c, k, op->results[g], op->result_counts[g] > 1 ? j : -1, from, results->elems[idx]))
        return false;
    }
  return true;
}

/* The operands but the last (data) as one value: itself, or a tuple of several. */
static bool data_operand(ml_ctx *c, ml_comp *k, const ml_op *op, char name[24], ml_type **type) {
  int n = op->n_operands - 1;
  if (n < 1)
    return ml_error(c, op->loc, "%.*s: no data operand", (int)op->name.n, op->name.p), false;
  if (n > 1)
    return (*type = tuple_of(c, k, op, 0, n, name)) != NULL;
  ml_buf b = {0};
  bool ok = ml_operands_text(c, k, op, 0, 1, &b) && b.p && b.p[0] == '%';
  if (ok)
    snprintf(name, 24, "%s", b.p + 1);
  ml_buf_free(&b);
  *type = ok ? ml_operand_type(c, k, op, 0) : NULL;
  return ok && *type;
}

static char *token_operand(ml_ctx *c, ml_comp *k, const ml_op *op) {
  ml_buf b = {0};
  if (!op->n_operands || !ml_operands_text(c, k, op, op->n_operands - 1, op->n_operands, &b)) {
    ml_buf_free(&b);
    return NULL;
  }
  return b.p;
}

/* infeed(token) -> (data..., token): HLO's ((data), token) infeed. */
static bool op_infeed(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  ml_type *r = ml_result_type(c, op), *data = r ? data_type(c, r) : NULL;
  char *tok = data ? token_operand(c, k, op) : NULL;
  if (!tok)
    return ml_error(c, op->loc, "%.*s: expected a token operand and data and token results", (int)op->name.n,
                    op->name.p), free(tok), false;
  ml_buf a = {0};
  string_attr(&a, op, "infeed_config", "infeed_config");
  char pair[24];
  ml_new_name(c, pair);
  ml_line(c, k, op->loc, "%%%s = (%s, token[]) %s(%s)%s", pair, ml_shape_str(c, data), hlo, tok, a.p ? a.p : "");
  free(tok);
  ml_buf_free(&a);
  return bind_data_and_token(c, k, op, pair, r, data);
}

/* outfeed(data..., token) -> token. */
static bool op_outfeed(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  char d[24], o[24];
  ml_type *dt = NULL;
  char *tok = data_operand(c, k, op, d, &dt) ? token_operand(c, k, op) : NULL;
  if (!tok)
    return false;
  ml_buf a = {0};
  string_attr(&a, op, "outfeed_config", "outfeed_config");
  ml_new_name(c, o);
  ml_line(c, k, op->loc, "%%%s = token[] %s(%%%s, %s), outfeed_shape=%s%s", o, hlo, d, tok, ml_shape_str(c, dt),
          a.p ? a.p : "");
  free(tok);
  ml_buf_free(&a);
  return ml_bind_results(c, k, op, o);
}

/* send(data..., token) -> token: HLO's send + send-done on the channel. */
static bool op_send(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  (void)hlo;
  char d[24], s[24], done[24];
  ml_type *dt = NULL;
  int64_t ch = channel_of(c, op);
  char *tok = data_operand(c, k, op, d, &dt) ? token_operand(c, k, op) : NULL;
  if (!tok)
    return false;
  const char *host = get_bool(op, "is_host_transfer") ? ", is_host_transfer=true" : "";
  ml_new_name(c, s);
  ml_line(c, k, op->loc, "%%%s = (%s, u32[], token[]) send(%%%s, %s), channel_id=%lld%s", s, ml_shape_str(c, dt), d,
          tok, (long long)(ch > 0 ? ch : 1), host);
  ml_new_name(c, done);
  ml_line(c, k, op->loc, "%%%s = token[] send-done(%%%s), channel_id=%lld%s", done, s, (long long)(ch > 0 ? ch : 1),
          host);
  free(tok);
  return ml_bind_results(c, k, op, done);
}

/* recv(token) -> (data..., token): HLO's recv + recv-done on the channel. */
static bool op_recv(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  (void)hlo;
  ml_type *r = ml_result_type(c, op), *data = r ? data_type(c, r) : NULL;
  char *tok = data ? token_operand(c, k, op) : NULL;
  if (!tok)
    return ml_error(c, op->loc, "%.*s: expected a token operand and data and token results", (int)op->name.n,
                    op->name.p), free(tok), false;
  int64_t ch = channel_of(c, op);
  const char *host = get_bool(op, "is_host_transfer") ? ", is_host_transfer=true" : "";
  char rv[24], done[24];
  ml_new_name(c, rv);
  ml_line(c, k, op->loc, "%%%s = (%s, u32[], token[]) recv(%s), channel_id=%lld%s", rv, ml_shape_str(c, data), tok,
          (long long)(ch > 0 ? ch : 1), host);
  ml_new_name(c, done);
  ml_line(c, k, op->loc, "%%%s = (%s, token[]) recv-done(%%%s), channel_id=%lld%s", done, ml_shape_str(c, data), rv,
          (long long)(ch > 0 ? ch : 1), host);
  free(tok);
  return bind_data_and_token(c, k, op, done, r, data);
}

static bool op_unsupported(ml_ctx *c, ml_comp *k, const ml_op *op, const char *why) {
  (void)k;
  ml_error(c, op->loc, "%.*s is not supported: %s", (int)op->name.n, op->name.p, why);
  return false;
}

static bool op_dynamic(ml_ctx *c, ml_comp *k, const ml_op *op, const char *hlo) {
  (void)hlo;
  return op_unsupported(c, k, op, "dynamic shapes computed at run time have no HLO instruction");
}

static const op_row op_table[] = {
    {"abs", "abs", op_simple}, {"add", "add", op_simple}, {"and", "and", op_simple},
    {"atan2", "atan2", op_simple}, {"cbrt", "cbrt", op_simple}, {"ceil", "ceil", op_simple},
    {"complex", "complex", op_simple}, {"cosine", "cosine", op_simple},
    {"count_leading_zeros", "count-leading-zeros", op_simple}, {"divide", "divide", op_simple},
    {"exponential", "exponential", op_simple}, {"exponential_minus_one", "exponential-minus-one", op_simple},
    {"floor", "floor", op_simple}, {"imag", "imag", op_simple}, {"is_finite", "is-finite", op_simple},
    {"log", "log", op_simple}, {"log_plus_one", "log-plus-one", op_simple}, {"logistic", "logistic", op_simple},
    {"maximum", "maximum", op_simple}, {"minimum", "minimum", op_simple}, {"multiply", "multiply", op_simple},
    {"negate", "negate", op_simple}, {"not", "not", op_simple}, {"or", "or", op_simple},
    {"popcnt", "popcnt", op_simple}, {"power", "power", op_simple}, {"real", "real", op_simple},
    {"remainder", "remainder", op_simple}, {"round_nearest_afz", "round-nearest-afz", op_simple},
    {"round_nearest_even", "round-nearest-even", op_simple}, {"rsqrt", "rsqrt", op_simple},
    {"select", "select", op_simple}, {"shift_left", "shift-left", op_simple},
    {"shift_right_arithmetic", "shift-right-arithmetic", op_simple},
    {"shift_right_logical", "shift-right-logical", op_simple}, {"sign", "sign", op_simple},
    {"sine", "sine", op_simple}, {"sqrt", "sqrt", op_simple}, {"subtract", "subtract", op_simple},
    {"tan", "tan", op_simple}, {"tanh", "tanh", op_simple}, {"xor", "xor", op_simple},
    {"clamp", "clamp", op_simple}, {"convert", "convert", op_simple},
    {"bitcast_convert", "bitcast-convert", op_simple}, {"reshape", "reshape", op_simple},
    {"dynamic_update_slice", "dynamic-update-slice", op_simple}, {"tuple", "tuple", op_simple},
    {"after_all", "after-all", op_simple}, {"replica_id", "replica-id", op_simple},
    {"partition_id", "partition-id", op_simple}, {"create_token", "after-all", op_simple},
    {"constant", "constant", op_constant}, {"iota", "iota", op_iota}, {"compare", "compare", op_compare},
    {"broadcast_in_dim", "broadcast", op_broadcast_in_dim}, {"broadcast", "broadcast", op_broadcast},
    {"transpose", "transpose", op_transpose}, {"reverse", "reverse", op_reverse},
    {"concatenate", "concatenate", op_concatenate}, {"slice", "slice", op_slice},
    {"dynamic_slice", "dynamic-slice", op_dynamic_slice}, {"pad", "pad", op_pad},
    {"reduce_precision", "reduce-precision", op_reduce_precision},
    {"dot_general", "dot", op_dot_general}, {"dot", "dot", op_dot}, {"convolution", "convolution", op_convolution},
    {"reduce", "reduce", op_reduce}, {"reduce_window", "reduce-window", op_reduce_window},
    {"select_and_scatter", "select-and-scatter", op_select_and_scatter}, {"sort", "sort", op_sort},
    {"scatter", "scatter", op_scatter}, {"gather", "gather", op_gather}, {"while", "while", op_while},
    {"if", "conditional", op_conditional}, {"case", "conditional", op_conditional}, {"map", "map", op_map},
    {"custom_call", "custom-call", op_custom_call}, {"composite", "call", op_composite},
    {"get_tuple_element", "get-tuple-element", op_get_tuple_element},
    {"optimization_barrier", "opt-barrier", op_opt_barrier}, {"fft", "fft", op_fft},
    {"rng_bit_generator", "rng-bit-generator", op_rng_bit_generator}, {"rng", "rng", op_rng},
    {"triangular_solve", "triangular-solve", op_triangular_solve}, {"cholesky", "cholesky", op_cholesky},
    {"batch_norm_training", "batch-norm-training", op_batch_norm},
    {"batch_norm_inference", "batch-norm-inference", op_batch_norm},
    {"batch_norm_grad", "batch-norm-grad", op_batch_norm},
    {"get_dimension_size", "get-dimension-size", op_dimension_size},
    {"set_dimension_size", "set-dimension-size", op_dimension_size},
    {"all_reduce", "all-reduce", op_all_reduce},
    {"all_gather", "all-gather", op_gather_scatter_collective},
    {"reduce_scatter", "reduce-scatter", op_gather_scatter_collective},
    {"all_to_all", "all-to-all", op_all_to_all},
    {"collective_permute", "collective-permute", op_collective_permute},
    {"collective_broadcast", "collective-broadcast", op_collective_broadcast},
    {"infeed", "infeed", op_infeed}, {"outfeed", "outfeed", op_outfeed}, {"send", "send", op_send},
    {"recv", "recv", op_recv},
    {"dynamic_broadcast_in_dim", "", op_dynamic}, {"dynamic_iota", "", op_dynamic},
    {"dynamic_pad", "", op_dynamic}, {"dynamic_gather", "", op_dynamic}, {"dynamic_conv", "", op_dynamic},
    {"real_dynamic_slice", "", op_dynamic}, {"dynamic_reshape", "", op_dynamic},
};

/* "stablehlo.add", "\"stablehlo.add\"" (generic) and "mhlo.add" all name the row "add". */
static ml_str short_name(ml_str n, const char *prefix) {
  size_t k = strlen(prefix);
  if (n.n > k && memcmp(n.p, prefix, k) == 0)
    return (ml_str){n.p + k, n.n - k};
  return (ml_str){NULL, 0};
}

bool ml_emit_op(ml_ctx *c, ml_comp *k, const ml_op *op) {
  ml_str name = op->name;
  if (ml_str_is(name, "func.call") || ml_str_is(name, "call"))
    return op_call(c, k, op, "call");
  bool handled = false;
  bool ok = ml_emit_chlo(c, k, op, &handled);
  if (handled)
    return ok;
  ml_str s = short_name(name, "stablehlo.");
  if (!s.p)
    s = short_name(name, "mhlo.");
  if (s.p)
    for (size_t i = 0; i < sizeof op_table / sizeof *op_table; i++)
      if (ml_str_is(s, op_table[i].name))
        return op_table[i].fn(c, k, op, op_table[i].hlo);
  if (ml_str_is(name, "stablehlo.return") || ml_str_is(name, "return") || ml_str_is(name, "func.return"))
    return ml_error(c, op->loc, "return before the end of a region"), false;
  ml_error(c, op->loc, "unsupported operation %.*s", (int)(name.n > 60 ? 60 : name.n), name.p);
  return false;
}
