/* print.c — canonical HLO text of the IR (print.h), in the style of XLA's
 * HloModule::ToString: `%name = shape opcode(shape %operand, ...), attr=value, ...`.
 * print(parse(print(parse(x)))) == print(parse(x)): every typed attribute prints in one
 * fixed order, verbatim ones exactly as written, floats as the shortest decimal that reads
 * back to the same bits.  An instruction's family attributes are written by a loop over
 * ir_attr_table (attributes.h), the rows the parser stores them through.  Output goes to a
 * growable buffer (no line-length limits).
 * Tests: tests/roundtrip.c over testdata/parse/ok and ../shared/models.
 */
#include "ir/print.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ir/attributes.h"
#include "ir/literal.h"

typedef struct sbuf {
  char *p;
  size_t len, cap;
  bool oom;
} sbuf;

static void sb_reserve(sbuf *b, size_t extra) {
  if (b->oom || b->len + extra + 1 <= b->cap)
    return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + extra + 1)
    cap *= 2;
  char *p = realloc(b->p, cap);
  if (!p) {
    b->oom = true;
    return;
  }
  b->p = p;
  b->cap = cap;
}

static void sb_put(sbuf *b, const char *s, size_t n) {
  sb_reserve(b, n);
  if (b->oom)
    return;
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = 0;
}

static void sb_puts(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }
static void sb_str(sbuf *b, ir_str s) { sb_put(b, s.p ? s.p : "", s.p ? s.len : 0); }

static void sb_printf(sbuf *b, const char *fmt, ...) HLO_PRINTF(2, 3);
static void sb_printf(sbuf *b, const char *fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n > 0) {
    sb_reserve(b, (size_t)n);
    if (!b->oom) {
      vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap2);
      b->len += (size_t)n;
    }
  }
  va_end(ap2);
}

static void sb_i64_list(sbuf *b, const ir_i64_list *l) {
  sb_puts(b, "{");
  for (int i = 0; i < l->n; i++)
    sb_printf(b, "%s%" PRId64, i ? "," : "", l->v[i]);
  sb_puts(b, "}");
}

/* ---- shapes ---------------------------------------------------------------------------- */

/* The default (major-to-minor) layout, printed for arrays whose text gave none. */
static void print_default_layout(sbuf *b, const ir_shape *s) {
  if (s->rank == 0)
    return;
  sb_puts(b, "{");
  for (int i = 0; i < s->rank; i++)
    sb_printf(b, "%s%d", i ? "," : "", s->rank - 1 - i);
  sb_puts(b, "}");
}

/* Prints the verbatim layout items (layout->other, e.g. "D(D,C)L(4)M(8)") whose head is one
 * of `heads`, in their written order.  An item is a head followed by "(...)" groups. */
static void print_other_items(sbuf *b, ir_str other, const char *const *heads, int n_heads) {
  size_t i = 0;
  while (i < other.len) {
    size_t start = i;
    while (i < other.len && other.p[i] != '(')
      i++;
    size_t head_len = i - start;
    while (i < other.len && other.p[i] == '(') {
      while (i < other.len && other.p[i] != ')')
        i++;
      if (i < other.len)
        i++;
    }
    for (int h = 0; h < n_heads; h++)
      if (strlen(heads[h]) == head_len && memcmp(heads[h], other.p + start, head_len) == 0)
        sb_put(b, other.p + start, i - start);
    if (i == start)
      i++;
  }
}

/* The layout: minor_to_major, then after ':' the items in the order XLA's Layout printer
 * uses: D, T, L, #, *, E, S, SC, P, M (items hloc keeps verbatim are placed by their head). */
static void print_layout(sbuf *b, const ir_layout *l) {
  static const char *const dim_level[] = {"D"}, *const after_tiles[] = {"L", "#", "*"},
                           *const tail[] = {"SC", "P", "M", "T", "E", "S"}; /* T/E/S: odd forms */
  sb_puts(b, "{");
  for (int i = 0; i < l->minor_to_major.n; i++)
    sb_printf(b, "%s%" PRId64, i ? "," : "", l->minor_to_major.v[i]);
  if (l->n_tiles || l->element_size_bits || l->memory_space || l->other.len) {
    sb_puts(b, ":");
    print_other_items(b, l->other, dim_level, 1);
    if (l->n_tiles)
      sb_puts(b, "T");
    for (int t = 0; t < l->n_tiles; t++) {
      sb_puts(b, "(");
      for (int i = 0; i < l->tiles[t].n; i++) {
        int64_t v = l->tiles[t].v[i];
        if (v < 0)
          sb_puts(b, i ? ",*" : "*");
        else
          sb_printf(b, "%s%" PRId64, i ? "," : "", v);
      }
      sb_puts(b, ")");
    }
    print_other_items(b, l->other, after_tiles, 3);
    if (l->element_size_bits)
      sb_printf(b, "E(%" PRId64 ")", l->element_size_bits);
    if (l->memory_space)
      sb_printf(b, "S(%" PRId64 ")", l->memory_space);
    print_other_items(b, l->other, tail, 6);
  }
  sb_puts(b, "}");
}

/* A scalar prints a layout only when it carries more than the (empty) dimension order. */
static bool scalar_layout_has_items(const ir_layout *l) {
  return l->n_tiles || l->memory_space || l->element_size_bits || l->other.len;
}

/* XLA marks every fifth element of a long list with an index comment before it. */
static void list_sep(sbuf *b, int i) {
  if (i)
    sb_puts(b, ", ");
  if (i && i % 5 == 0)
    sb_printf(b, "/*index=%d*/", i);
}

/* A shape; with_layout false is the form of computation signatures (XLA's HumanString);
 * index_comments: XLA's index=N comments in long tuples (module text, not messages). */
static void print_shape_opts(sbuf *b, const ir_shape *s, bool with_layout, bool index_comments) {
  if (s->is_buffer)
    sb_puts(b, "b(");
  if (s->et == IR_TUPLE) {
    sb_puts(b, "(");
    for (int i = 0; i < s->n_elems; i++) {
      if (index_comments)
        list_sep(b, i);
      else if (i)
        sb_puts(b, ", ");
      print_shape_opts(b, s->elems[i], with_layout, index_comments);
    }
    sb_puts(b, ")");
  } else {
    sb_puts(b, ir_etype_table[s->et].spelling);
    sb_puts(b, "[");
    for (int i = 0; i < s->rank; i++) {
      int dyn = s->dyn ? s->dyn[i] : IR_DIM_STATIC;
      if (i)
        sb_puts(b, ",");
      if (dyn == IR_DIM_UNBOUNDED)
        sb_puts(b, "?");
      else
        sb_printf(b, "%s%" PRId64, dyn == IR_DIM_BOUNDED ? "<=" : "", s->dims[i]);
    }
    sb_puts(b, "]");
    if (with_layout && s->layout && (s->rank > 0 || scalar_layout_has_items(s->layout)))
      print_layout(b, s->layout);
    else if (with_layout && !s->layout)
      print_default_layout(b, s);
  }
  if (s->is_buffer)
    sb_puts(b, ")");
}

static void print_shape_ex(sbuf *b, const ir_shape *s, bool with_layout) { print_shape_opts(b, s, with_layout, true); }

/* The one shape formatter: module text above, messages and reports through this. */
size_t ir_shape_format(const ir_shape *s, bool with_layout, char *buf, size_t cap) {
  sbuf b = {0};
  print_shape_opts(&b, s, with_layout, false);
  size_t n = b.oom ? 0 : b.len;
  if (cap) {
    size_t k = n < cap ? n : cap - 1;
    if (k)
      memcpy(buf, b.p, k);
    buf[k] = 0;
  }
  free(b.p);
  return n;
}

static void print_shape(sbuf *b, const ir_shape *s) { print_shape_ex(b, s, true); }

/* ---- elements and literals -------------------------------------------------------------- */

static bool is_default_nan(ir_etype et, uint64_t bits) {
  int mb = ir_lit_mantissa_bits(et);
  if (mb == 0)
    return true;
  uint64_t man = bits & ((UINT64_C(1) << mb) - 1);
  if (et == IR_F8E4M3FN || et == IR_F8E4M3FNUZ || et == IR_F8E5M2FNUZ ||
      et == IR_F8E4M3B11FNUZ || et == IR_F8E8M0FNU)
    return true;
  return man == UINT64_C(1) << (mb - 1);
}

/* Shortest "%.*g" text of d that reads back to the same element bits. */
static void shortest_float(ir_etype et, double d, const void *elem, char *buf, size_t cap) {
  uint64_t want = ir_lit_float_bits(et, elem);
  if (d == floor(d) && fabs(d) < 1e15 && d != 0) { /* integral: 4000, not 4e+03 */
    snprintf(buf, cap, "%.0f", d);
    return;
  }
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(buf, cap, "%.*g", prec, d);
    unsigned char out[16] = {0};
    if (ir_lit_encode_float(et, strtod(buf, NULL), 0, out) == IR_LIT_OK &&
        ir_lit_float_bits(et, out) == want)
      break;
  }
  if (strpbrk(buf, ".eEn") == NULL && d == 0 && signbit(d))
    strncat(buf, ".0", cap - strlen(buf) - 1); /* "-0" would read back as +0 */
}

void ir_format_element(ir_etype et, const void *elem, char *buf, size_t cap) {
  const unsigned char *p = elem;
  if (et == IR_PRED) {
    snprintf(buf, cap, "%s", p[0] ? "true" : "false");
  } else if (ir_etype_is_int(et)) {
    uint64_t raw = 0;
    memcpy(&raw, p, (size_t)ir_etype_table[et].storage_bytes);
    int bits = ir_etype_table[et].storage_bytes * 8;
    if (ir_etype_is_signed(et)) {
      int64_t v = bits == 64 ? (int64_t)raw : (int64_t)(raw << (64 - bits)) >> (64 - bits);
      snprintf(buf, cap, "%" PRId64, v);
    } else {
      snprintf(buf, cap, "%" PRIu64, raw);
    }
  } else if (ir_etype_is_complex(et)) {
    ir_etype ct = ir_etype_component(et);
    char re[64], im[64];
    int half = ir_etype_table[et].storage_bytes / 2;
    ir_format_element(ct, p, re, sizeof re);
    ir_format_element(ct, p + half, im, sizeof im);
    snprintf(buf, cap, "(%s, %s)", re, im);
  } else if (ir_etype_is_float(et)) {
    double d = ir_lit_decode_float(et, p);
    uint64_t bits = ir_lit_float_bits(et, p);
    if (isnan(d)) {
      const char *sign = signbit(d) ? "-" : "";
      int mb = ir_lit_mantissa_bits(et);
      if (is_default_nan(et, bits))
        snprintf(buf, cap, "%snan", sign);
      else
        snprintf(buf, cap, "%snan(0x%" PRIx64 ")", sign, bits & ((UINT64_C(1) << mb) - 1));
    } else if (isinf(d)) {
      snprintf(buf, cap, "%s", d < 0 ? "-inf" : "inf");
    } else {
      shortest_float(et, d, p, buf, cap);
    }
  } else {
    snprintf(buf, cap, "?");
  }
}

static void print_array_values(sbuf *b, const ir_literal *lit, int dim, int64_t *index) {
  const ir_shape *s = lit->shape;
  int eb = ir_etype_table[s->et].storage_bytes;
  char buf[160];
  if (dim == s->rank) {
    ir_format_element(s->et, (const unsigned char *)lit->data + *index * eb, buf, sizeof buf);
    sb_puts(b, buf);
    (*index)++;
    return;
  }
  bool inner = dim == s->rank - 1;
  if (s->dims[dim] == 0) {
    sb_puts(b, "{}");
    return;
  }
  sb_puts(b, inner ? "{" : "{ ");
  for (int64_t i = 0; i < s->dims[dim]; i++) {
    if (i)
      sb_puts(b, ", ");
    print_array_values(b, lit, dim + 1, index);
  }
  sb_puts(b, inner ? "}" : " }");
}

static void print_literal(sbuf *b, const ir_literal *lit, bool shaped_elems) {
  if (lit->shape->et == IR_TUPLE) {
    sb_puts(b, "(");
    for (int i = 0; i < lit->n_elems; i++) {
      if (i)
        sb_puts(b, ", ");
      if (shaped_elems && lit->elems[i]->shape->et != IR_TUPLE) {
        print_shape(b, lit->elems[i]->shape);
        sb_puts(b, " ");
      }
      print_literal(b, lit->elems[i], shaped_elems);
    }
    sb_puts(b, ")");
    return;
  }
  if (lit->elided) {
    sb_puts(b, "{...}");
    return;
  }
  int64_t index = 0;
  if (lit->shape->rank == 0) {
    print_array_values(b, lit, 0, &index);
    return;
  }
  print_array_values(b, lit, 0, &index);
}

/* ---- attributes ------------------------------------------------------------------------- */

/* A string in double quotes with C escapes, as XLA's printer writes it (absl::CEscape). */
static void print_quoted(sbuf *b, ir_str s) {
  sb_puts(b, "\"");
  for (size_t i = 0; i < s.len; i++) {
    unsigned char c = (unsigned char)s.p[i];
    if (c == '"' || c == '\'' || c == '\\')
      sb_printf(b, "\\%c", c);
    else if (c == '\n')
      sb_puts(b, "\\n");
    else if (c == '\t')
      sb_puts(b, "\\t");
    else if (c == '\r')
      sb_puts(b, "\\r");
    else if (c < 0x20 || c >= 0x7f) /* as absl::CEscape: every other non-printable byte */
      sb_printf(b, "\\%03o", c);
    else
      sb_put(b, (const char *)&c, 1);
  }
  sb_puts(b, "\"");
}

static void attr_list(sbuf *b, const char *name, const ir_i64_list *l) {
  sb_printf(b, ", %s=", name);
  sb_i64_list(b, l);
}

/* ", name={{a,b},{c}}" */
static void attr_lists(sbuf *b, const char *name, const ir_i64_list *l, int n) {
  sb_printf(b, ", %s={", name);
  for (int i = 0; i < n; i++) {
    if (i)
      sb_puts(b, ",");
    sb_i64_list(b, &l[i]);
  }
  sb_puts(b, "}");
}

/* Whether window field f (0 size .. 5 rhs_reversal) differs from its default in some dim. */
static bool window_field_non_default(const ir_window *w, int f) {
  for (int i = 0; i < w->n; i++) {
    const ir_window_dim *d = &w->dims[i];
    switch (f) {
    case 1: if (d->stride != 1) return true; break;
    case 2: if (d->pad_lo || d->pad_hi) return true; break;
    case 3: if (d->lhs_dilate != 1) return true; break;
    case 4: if (d->rhs_dilate != 1) return true; break;
    case 5: if (d->rhs_reversal) return true; break;
    default: return true;
    }
  }
  return false;
}

/* window={size=3x3 stride=2x2 pad=0_1x1_1 ...}: size always, the other fields (XLA's
 * WindowToString) only where some dimension differs from the default. */
static void print_window(sbuf *b, const ir_window *w) {
  static const char *const names[] = {"size", "stride", "pad", "lhs_dilate", "rhs_dilate", "rhs_reversal"};
  sb_puts(b, ", window={");
  bool first = true;
  for (int f = 0; f < 6 && w->n > 0; f++) {
    if (!window_field_non_default(w, f))
      continue;
    sb_printf(b, "%s%s=", first ? "" : " ", names[f]);
    first = false;
    for (int i = 0; i < w->n; i++) {
      const ir_window_dim *d = &w->dims[i];
      if (i)
        sb_puts(b, "x");
      switch (f) {
      case 0: sb_printf(b, "%" PRId64, d->size); break;
      case 1: sb_printf(b, "%" PRId64, d->stride); break;
      case 2: sb_printf(b, "%" PRId64 "_%" PRId64, d->pad_lo, d->pad_hi); break;
      case 3: sb_printf(b, "%" PRId64, d->lhs_dilate); break;
      case 4: sb_printf(b, "%" PRId64, d->rhs_dilate); break;
      default: sb_printf(b, "%d", d->rhs_reversal ? 1 : 0); break;
      }
    }
  }
  sb_puts(b, "}");
}

/* One side of dim_labels: the letter or spatial digit at each position; '?' where the IR names
 * no dimension (positions past the last named one cannot be represented and are not printed). */
static void print_labels(sbuf *b, int64_t a, char ca, int64_t c, char cc, const ir_i64_list *sp) {
  int64_t n = (a > c ? a : c) + 1;
  for (int i = 0; i < sp->n; i++)
    if (sp->v[i] + 1 > n)
      n = sp->v[i] + 1;
  for (int64_t pos = 0; pos < n; pos++) {
    char ch = '?';
    if (pos == a)
      ch = ca;
    else if (pos == c)
      ch = cc;
    for (int i = 0; i < sp->n; i++)
      if (sp->v[i] == pos)
        ch = (char)('0' + i % 10);
    sb_put(b, &ch, 1);
  }
}

static void print_dim_labels(sbuf *b, const ir_conv_dnums *d) {
  sb_puts(b, ", dim_labels=");
  print_labels(b, d->input_batch, 'b', d->input_feature, 'f', &d->input_spatial);
  sb_puts(b, "_");
  print_labels(b, d->kernel_input_feature, 'i', d->kernel_output_feature, 'o',
               &d->kernel_spatial);
  sb_puts(b, "->");
  print_labels(b, d->output_batch, 'b', d->output_feature, 'f', &d->output_spatial);
}

/* operand_precision={...}: printed, as by XLA, only when some operand is not default. */
static void print_precision(sbuf *b, const ir_precision *p, int n) {
  static const char *const names[] = {"default", "high", "highest"};
  bool any = false;
  for (int i = 0; i < n; i++)
    any = any || p[i] != IR_PREC_DEFAULT;
  if (!any)
    return;
  sb_puts(b, ", operand_precision={");
  for (int i = 0; i < n; i++)
    sb_printf(b, "%s%s", i ? "," : "", names[p[i]]);
  sb_puts(b, "}");
}

static void print_comp_name(sbuf *b, const ir_computation *c) {
  sb_puts(b, "%");
  if (c)
    sb_str(b, c->name);
  else
    sb_puts(b, "<unresolved>");
}

static void print_called(sbuf *b, const ir_instr *in) {
  const char *const *roles = NULL;
  static const char *const while_roles[] = {"condition", "body"};
  static const char *const cond_roles[] = {"true_computation", "false_computation"};
  static const char *const sas_roles[] = {"select", "scatter"};
  int nc = in->n_called;
  if (!nc)
    return;
  ir_family fam = ir_opcode_table[in->op].family;
  if (fam == IR_FAM_ASYNC && in->attrs.u.async.compact) /* call-start: the wrapped call's to_apply= */
    fam = ir_opcode_table[in->attrs.u.async.wrapped_opcode].family;
  const char *list_name = NULL;
  if (fam == IR_FAM_WHILE && nc == 2)
    roles = while_roles;
  else if (fam == IR_FAM_SELECT_AND_SCATTER && nc == 2)
    roles = sas_roles;
  else if (fam == IR_FAM_CONDITIONAL) {
    bool pred_form = in->n_operands && in->operands[0]->shape && in->operands[0]->shape->et == IR_PRED &&
                     nc == 2;
    if (pred_form)
      roles = cond_roles;
    else
      list_name = "branch_computations";
  } else if (fam == IR_FAM_FUSION || fam == IR_FAM_ASYNC) {
    list_name = "calls";
  } else if (fam == IR_FAM_CUSTOM_CALL && in->attrs.called_list_form) {
    list_name = "called_computations";
  }
  if (roles) {
    for (int i = 0; i < nc; i++) {
      sb_printf(b, ", %s=", roles[i]);
      print_comp_name(b, in->called[i]);
    }
  } else if (list_name) {
    if (nc == 1 && (fam == IR_FAM_FUSION || fam == IR_FAM_ASYNC)) {
      sb_printf(b, ", %s=", list_name);
      print_comp_name(b, in->called[0]);
      return;
    }
    sb_printf(b, ", %s={", list_name);
    for (int i = 0; i < nc; i++) {
      if (i)
        sb_puts(b, ", ");
      print_comp_name(b, in->called[i]);
    }
    sb_puts(b, "}");
  } else {
    sb_puts(b, ", to_apply=");
    print_comp_name(b, in->called[0]);
  }
}

static void print_replica_groups(sbuf *b, const ir_replica_groups *g) {
  if (!g->present)
    return;
  sb_puts(b, ", replica_groups=");
  if (g->mesh_text.p) {
    sb_str(b, g->mesh_text);
    return;
  }
  if (g->iota_form) {
    sb_puts(b, "[");
    for (int i = 0; i < g->iota_group_shape.n; i++)
      sb_printf(b, "%s%" PRId64, i ? "," : "", g->iota_group_shape.v[i]);
    sb_puts(b, "]<=[");
    for (int i = 0; i < g->iota_reshape.n; i++)
      sb_printf(b, "%s%" PRId64, i ? "," : "", g->iota_reshape.v[i]);
    sb_puts(b, "]");
    if (g->iota_transpose.n) {
      sb_puts(b, "T(");
      for (int i = 0; i < g->iota_transpose.n; i++)
        sb_printf(b, "%s%" PRId64, i ? "," : "", g->iota_transpose.v[i]);
      sb_puts(b, ")");
    }
    return;
  }
  sb_puts(b, "{");
  for (int i = 0; i < g->n_groups; i++) {
    if (i)
      sb_puts(b, ",");
    sb_i64_list(b, &g->groups[i]);
  }
  sb_puts(b, "}");
}

/* ---- family attributes: a loop over ir_attr_table ------------------------------------------ */

#define AT(type, off) (*(const type *)(const void *)((const char *)a + (off)))

static bool window_written(const ir_window *w) { return w->written || w->n; }

static bool precision_any(const ir_precision *p, int n) {
  for (int i = 0; i < n; i++)
    if (p[i] != IR_PREC_DEFAULT)
      return true;
  return false;
}

/* Whether row d of `a` holds something to print (IR_AW_SET). */
static bool attr_set(const ir_attr_desc *d, const ir_attrs *a) {
  switch (d->kind) {
  case IR_AK_I64: return AT(int64_t, d->at) != 0;
  case IR_AK_LIST: return AT(ir_i64_list, d->at).n > 0;
  case IR_AK_LISTS: case IR_AK_SHAPES: return AT(int, d->n_at) > 0;
  case IR_AK_BOOL: return AT(bool, d->at);
  case IR_AK_TEXT: case IR_AK_QUOTED: return AT(ir_str, d->at).len > 0;
  case IR_AK_WINDOW: return window_written(&AT(ir_window, d->at));
  case IR_AK_DIM_LABELS: return AT(ir_conv_dnums, d->at).present;
  case IR_AK_PRECISION: return precision_any(&AT(ir_precision, d->at), AT(int, d->n_at));
  case IR_AK_SHAPE: return AT(ir_shape *, d->at) != NULL;
  case IR_AK_LITERAL: return AT(ir_literal *, d->at) != NULL;
  case IR_AK_REPLICA_GROUPS: return AT(ir_replica_groups, d->at).present;
  default: return true;
  }
}

static bool attr_printed(const ir_attr_desc *d, const ir_attrs *a) {
  switch (d->when) {
  case IR_AW_ALWAYS: return true;
  case IR_AW_SET: return attr_set(d, a);
  case IR_AW_NOT_ONE: return AT(int64_t, d->at) != 1;
  case IR_AW_NONNEG: return d->kind == IR_AK_TRISTATE ? AT(int, d->at) >= 0 : AT(int64_t, d->at) >= 0;
  case IR_AW_FLAG: return AT(bool, d->flag_at);
  }
  return false;
}

static void print_slice(sbuf *b, const ir_slice_dim *dims, int n) {
  sb_puts(b, "{");
  for (int i = 0; i < n; i++) {
    const ir_slice_dim *d = &dims[i];
    sb_printf(b, "%s[%" PRId64 ":%" PRId64, i ? ", " : "", d->start, d->limit);
    if (d->stride != 1)
      sb_printf(b, ":%" PRId64, d->stride);
    sb_puts(b, "]");
  }
  sb_puts(b, "}");
}

static void print_padding(sbuf *b, const ir_pad_dim *dims, int n) {
  for (int i = 0; i < n; i++) {
    const ir_pad_dim *d = &dims[i];
    sb_printf(b, "%s%" PRId64 "_%" PRId64, i ? "x" : "", d->lo, d->hi);
    if (d->interior)
      sb_printf(b, "_%" PRId64, d->interior);
  }
  if (!n)
    sb_puts(b, "{}");
}

/* XLA writes epsilon with a decimal point: 0.001, 1.0, 1e-05. */
static void print_float_attr(sbuf *b, double v) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.9g", v);
  if (!strpbrk(buf, ".eEn"))
    strcat(buf, ".0");
  sb_puts(b, buf);
}

static void print_shape_list(sbuf *b, const ir_shape **shapes, int n) {
  sb_puts(b, "{");
  for (int i = 0; i < n; i++) {
    if (i)
      sb_puts(b, ", ");
    print_shape(b, shapes[i]);
  }
  sb_puts(b, "}");
}

/* The kinds whose printer writes its own ", name=" (or nothing). */
static bool attr_prints_name(const ir_attr_desc *d) {
  return d->kind == IR_AK_WINDOW || d->kind == IR_AK_DIM_LABELS || d->kind == IR_AK_PRECISION ||
         d->kind == IR_AK_REPLICA_GROUPS || d->kind == IR_AK_LIST || d->kind == IR_AK_LISTS;
}

static void print_attr_value(sbuf *b, const ir_attr_desc *d, const ir_attrs *a) {
  switch (d->kind) {
  case IR_AK_I64: sb_printf(b, "%" PRId64, AT(int64_t, d->at)); break;
  case IR_AK_BOOL: sb_puts(b, AT(bool, d->at) ? "true" : "false"); break;
  case IR_AK_TRISTATE: sb_puts(b, AT(int, d->at) ? "true" : "false"); break;
  case IR_AK_ENUM: sb_puts(b, d->names[AT(int, d->at)]); break;
  case IR_AK_TEXT: sb_str(b, AT(ir_str, d->at)); break;
  case IR_AK_QUOTED: print_quoted(b, AT(ir_str, d->at)); break;
  case IR_AK_SLICE: print_slice(b, AT(ir_slice_dim *, d->at), AT(int, d->n_at)); break;
  case IR_AK_PADDING: print_padding(b, AT(ir_pad_dim *, d->at), AT(int, d->n_at)); break;
  case IR_AK_SHAPE: print_shape(b, AT(ir_shape *, d->at)); break;
  case IR_AK_SHAPES: print_shape_list(b, AT(ir_shape **, d->at), AT(int, d->n_at)); break;
  case IR_AK_LITERAL: { /* XLA: the literal with its shape and layout */
    const ir_literal *lit = AT(ir_literal *, d->at);
    print_shape(b, lit->shape);
    sb_puts(b, " ");
    print_literal(b, lit, true);
    break;
  }
  case IR_AK_FLOAT: print_float_attr(b, AT(double, d->at)); break;
  default: break;
  }
}

/* One row of the table for `a`, when its condition holds. */
static void print_attr(sbuf *b, const ir_attr_desc *d, const ir_attrs *a) {
  if (d->kind == IR_AK_OTHER || !attr_printed(d, a))
    return;
  if (!attr_prints_name(d)) {
    sb_printf(b, ", %s=", d->name);
    print_attr_value(b, d, a);
    return;
  }
  switch (d->kind) {
  case IR_AK_LIST: attr_list(b, d->name, &AT(ir_i64_list, d->at)); break;
  case IR_AK_LISTS: attr_lists(b, d->name, AT(ir_i64_list *, d->at), AT(int, d->n_at)); break;
  case IR_AK_WINDOW: print_window(b, &AT(ir_window, d->at)); break;
  case IR_AK_DIM_LABELS: print_dim_labels(b, &AT(ir_conv_dnums, d->at)); break;
  case IR_AK_PRECISION: print_precision(b, &AT(ir_precision, d->at), AT(int, d->n_at)); break;
  case IR_AK_REPLICA_GROUPS: print_replica_groups(b, &AT(ir_replica_groups, d->at)); break;
  default: break;
  }
}

/* The attributes of in's family, in the table's order (XLA's). */
static void print_family_attrs(sbuf *b, const ir_instr *in) {
  int fam = (int)ir_opcode_table[in->op].family;
  for (int i = 0; i < ir_attr_table_n; i++)
    if (ir_attr_table[i].family == fam)
      print_attr(b, &ir_attr_table[i], &in->attrs);
}

#undef AT

static void print_bc_attrs(sbuf *b, const ir_broadcast_attrs *bc) {
  static const char *const modes[] = {"", "none", "numpy", "pdpd", "bidirectional"};
  if (bc->has_broadcast_dimensions)
    attr_list(b, "broadcast_dimensions", &bc->broadcast_dimensions);
  if (bc->auto_broadcast != IR_AB_NONE)
    sb_printf(b, ", auto_broadcast=%s", modes[bc->auto_broadcast]);
  if (bc->axis != -1)
    sb_printf(b, ", axis=%" PRId64, bc->axis);
  if (bc->target_shape.n || bc->auto_broadcast == IR_AB_BIDIRECTIONAL)
    attr_list(b, "target_shape", &bc->target_shape);
}

static void verbatim(sbuf *b, const char *name, ir_str v) {
  if (!v.len)
    return;
  sb_printf(b, ", %s=", name);
  sb_str(b, v);
}

static void print_common(sbuf *b, const ir_instr *in) {
  const ir_common_attrs *c = &in->common;
  verbatim(b, "sharding", c->sharding);
  verbatim(b, "frontend_attributes", c->frontend_attributes);
  verbatim(b, "statistics", c->statistics);
  verbatim(b, "origin", c->origin);
  verbatim(b, "result_accuracy", c->result_accuracy);
  verbatim(b, "parameter_replication", c->parameter_replication);
  verbatim(b, "output_to_operand_aliasing", c->output_to_operand_aliasing);
  if (c->n_control_predecessors) {
    sb_puts(b, ", control-predecessors={");
    for (int i = 0; i < c->n_control_predecessors; i++) {
      sb_puts(b, i ? ", %" : "%");
      sb_str(b, c->control_predecessors[i] ? c->control_predecessors[i]->name : (ir_str){"?", 1});
    }
    sb_puts(b, "}");
  }
  verbatim(b, "metadata", c->metadata);
  verbatim(b, "backend_config", c->backend_config);
  for (int i = 0; i < c->n_unknown; i++)
    verbatim(b, c->unknown[i].name.p, c->unknown[i].value);
}

static void print_opcode(sbuf *b, const ir_instr *in) {
  if (ir_opcode_table[in->op].family == IR_FAM_ASYNC && in->attrs.u.async.compact) {
    sb_puts(b, ir_opcode_table[in->attrs.u.async.wrapped_opcode].spelling);
    sb_puts(b, in->op == IR_OP_ASYNC_START ? "-start" : in->op == IR_OP_ASYNC_UPDATE ? "-update" : "-done");
    return;
  }
  sb_puts(b, ir_opcode_table[in->op].spelling);
}

static void print_instr(sbuf *b, const ir_instr *in) {
  sb_puts(b, "%");
  sb_str(b, in->name);
  sb_puts(b, " = ");
  if (in->shape) { /* omitted in the text and not inferred yet */
    print_shape(b, in->shape);
    sb_puts(b, " ");
  }
  print_opcode(b, in);
  sb_puts(b, "(");
  if (in->op == IR_OP_PARAMETER) {
    sb_printf(b, "%" PRId64, in->attrs.u.parameter_number);
  } else if (in->op == IR_OP_CONSTANT) {
    print_literal(b, in->attrs.u.literal, true);
  } else {
    for (int i = 0; i < in->n_operands; i++) {
      list_sep(b, i);
      if (in->operands[i]->shape) {
        print_shape(b, in->operands[i]->shape);
        sb_puts(b, " ");
      }
      sb_puts(b, "%");
      sb_str(b, in->operands[i]->name);
    }
  }
  sb_puts(b, ")");
  if (in->attrs.has_dimensions)
    attr_list(b, "dimensions", &in->attrs.dimensions);
  if (in->attrs.channel_id)
    sb_printf(b, ", channel_id=%" PRId64, in->attrs.channel_id);
  print_family_attrs(b, in);
  print_bc_attrs(b, &in->attrs.bc);
  print_called(b, in);
  print_common(b, in);
}

static void print_computation(sbuf *b, const ir_computation *c) {
  if (c->is_entry)
    sb_puts(b, "ENTRY ");
  sb_puts(b, "%");
  sb_str(b, c->name);
  bool typed = c->root && c->root->shape;
  for (int i = 0; i < c->n_params; i++)
    typed = typed && c->params[i]->shape;
  if (!typed) {
    sb_puts(b, " {\n");
    goto body;
  }
  sb_puts(b, " (");
  for (int i = 0; i < c->n_params; i++) {
    if (i)
      sb_puts(b, ", ");
    sb_str(b, c->params[i]->name);
    sb_puts(b, ": ");
    print_shape_ex(b, c->params[i]->shape, false);
  }
  sb_puts(b, ") -> ");
  print_shape_ex(b, c->root->shape, false);
  sb_puts(b, " {\n");
body:
  for (int i = 0; i < c->n_instrs; i++) {
    const ir_instr *in = c->instrs[i];
    sb_puts(b, in == c->root ? "  ROOT " : "  ");
    print_instr(b, in);
    sb_puts(b, "\n");
  }
  sb_puts(b, "}");
  if (c->execution_thread.len) {
    sb_puts(b, ", execution_thread=");
    print_quoted(b, c->execution_thread);
  }
  sb_puts(b, "\n");
}

static void print_header(sbuf *b, const ir_module *m) {
  sb_puts(b, "HloModule ");
  sb_str(b, m->name);
  if (m->is_scheduled >= 0)
    sb_printf(b, ", is_scheduled=%s", m->is_scheduled ? "true" : "false");
  if (m->has_entry_layout) {
    sb_puts(b, ", entry_computation_layout={(");
    for (int i = 0; i < m->n_entry_layout_params; i++) { /* XLA joins the parameters with "," */
      if (i)
        sb_puts(b, ",");
      print_shape(b, m->entry_layout_params[i]);
    }
    sb_puts(b, ")->");
    print_shape(b, m->entry_layout_result);
    sb_puts(b, "}");
  }
  verbatim(b, "input_output_alias", m->input_output_alias);
  verbatim(b, "buffer_donor", m->buffer_donor);
  if (m->alias_passthrough_params >= 0)
    sb_printf(b, ", alias_passthrough_params=%s", m->alias_passthrough_params ? "true" : "false");
  verbatim(b, "frontend_attributes", m->frontend_attributes);
  if (m->replica_count)
    sb_printf(b, ", replica_count=%" PRId64, m->replica_count);
  if (m->num_partitions)
    sb_printf(b, ", num_partitions=%" PRId64, m->num_partitions);
  for (int i = 0; i < m->n_header_unknown; i++)
    verbatim(b, m->header_unknown[i].name.p, m->header_unknown[i].value);
  sb_puts(b, "\n");
  if (m->stack_frames.len) {
    sb_str(b, m->stack_frames);
    sb_puts(b, "\n");
  }
}

char *ir_print_module_to_string(const ir_module *m, size_t *out_len) {
  sbuf b = {0};
  print_header(&b, m);
  for (int i = 0; i < m->n_comps; i++) {
    if (m->comps[i]->hidden)
      continue;
    sb_puts(&b, "\n");
    print_computation(&b, m->comps[i]);
  }
  if (b.oom) {
    free(b.p);
    return NULL;
  }
  if (out_len)
    *out_len = b.len;
  return b.p;
}

hlo_status ir_print_module(const ir_module *m, FILE *f) {
  size_t n;
  char *s = ir_print_module_to_string(m, &n);
  if (!s)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory printing the module");
  size_t w = fwrite(s, 1, n, f);
  free(s);
  if (w != n)
    return hlo_status_make(HLO_IO, "write error while printing the module");
  return NULL;
}

char *ir_print_instr_to_string(const ir_instr *in) {
  sbuf b = {0};
  print_instr(&b, in);
  if (b.oom) {
    free(b.p);
    return NULL;
  }
  return b.p;
}

char *ir_print_literal_to_string(const ir_literal *lit, int with_shape) {
  sbuf b = {0};
  if (with_shape) {
    print_shape(&b, lit->shape);
    sb_puts(&b, " ");
  }
  print_literal(&b, lit, true);
  if (b.oom) {
    free(b.p);
    return NULL;
  }
  return b.p;
}
