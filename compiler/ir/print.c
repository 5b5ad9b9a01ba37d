/* print.c — canonical HLO text of the IR (print.h), in the style of XLA's
 * HloModule::ToString: `%name = shape opcode(shape %operand, ...), attr=value, ...`.
 * print(parse(print(parse(x)))) == print(parse(x)): every typed attribute prints in one
 * fixed order, verbatim ones exactly as written, floats as the shortest decimal that reads
 * back to the same bits.  Output goes to a growable buffer (no line-length limits).
 * Tests: tests/roundtrip.c over testdata/parse/ok and ../shared/models.
 */
#include "ir/print.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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

static void attr_list_if(sbuf *b, const char *name, const ir_i64_list *l) {
  if (l->n)
    attr_list(b, name, l);
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

/* custom-call attributes in the order of XLA's HloCustomCallInstruction printer. */
static void print_custom_call_attrs(sbuf *b, const ir_attrs *a) {
  static const char *const apis[] = {"API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL",
                                     "API_VERSION_STATUS_RETURNING",
                                     "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"};
  if (a->u.custom_call.window.written || a->u.custom_call.window.n)
    print_window(b, &a->u.custom_call.window);
  if (a->u.custom_call.dnums.present)
    print_dim_labels(b, &a->u.custom_call.dnums);
  if (a->u.custom_call.feature_group_count != 1)
    sb_printf(b, ", feature_group_count=%" PRId64, a->u.custom_call.feature_group_count);
  if (a->u.custom_call.batch_group_count != 1)
    sb_printf(b, ", batch_group_count=%" PRId64, a->u.custom_call.batch_group_count);
  if (a->u.custom_call.padding_type.len) {
    sb_puts(b, ", padding_type=");
    sb_str(b, a->u.custom_call.padding_type);
  }
  sb_puts(b, ", custom_call_target=");
  print_quoted(b, a->custom_text);
  if (a->u.custom_call.has_operand_layout_constraints) {
    sb_puts(b, ", operand_layout_constraints={");
    for (int i = 0; i < a->u.custom_call.n_operand_layout_constraints; i++) {
      if (i)
        sb_puts(b, ", ");
      print_shape(b, a->u.custom_call.operand_layout_constraints[i]);
    }
    sb_puts(b, "}");
  }
  if (a->u.custom_call.has_side_effect)
    sb_puts(b, ", custom_call_has_side_effect=true");
  if (a->u.custom_call.literal) { /* XLA: the literal with its shape and layout */
    sb_puts(b, ", literal=");
    print_shape(b, a->u.custom_call.literal->shape);
    sb_puts(b, " ");
    print_literal(b, a->u.custom_call.literal, true);
  }
  if (a->u.custom_call.schedule.len) {
    sb_puts(b, ", schedule=");
    sb_str(b, a->u.custom_call.schedule);
  }
  if (a->u.custom_call.has_api_version)
    sb_printf(b, ", api_version=%s", apis[a->u.custom_call.api_version]);
}

static void print_family_attrs(sbuf *b, const ir_instr *in) {
  const ir_attrs *a = &in->attrs;
  switch (ir_opcode_table[in->op].family) {
  case IR_FAM_IOTA: sb_printf(b, ", iota_dimension=%" PRId64, a->u.iota_dimension); break;
  case IR_FAM_GET_TUPLE_ELEMENT: sb_printf(b, ", index=%" PRId64, a->u.tuple_index); break;
  case IR_FAM_RESHAPE:
    if (a->u.inferred_dimension >= 0)
      sb_printf(b, ", inferred_dimension=%" PRId64, a->u.inferred_dimension);
    break;
  case IR_FAM_SLICE:
    sb_puts(b, ", slice={");
    for (int i = 0; i < a->u.slice.n; i++) {
      const ir_slice_dim *d = &a->u.slice.dims[i];
      sb_printf(b, "%s[%" PRId64 ":%" PRId64, i ? ", " : "", d->start, d->limit);
      if (d->stride != 1)
        sb_printf(b, ":%" PRId64, d->stride);
      sb_puts(b, "]");
    }
    sb_puts(b, "}");
    break;
  case IR_FAM_DYNAMIC_SLICE: attr_list(b, "dynamic_slice_sizes", &a->u.dynamic_slice_sizes); break;
  case IR_FAM_PAD:
    sb_puts(b, ", padding=");
    for (int i = 0; i < a->u.padding.n; i++) {
      const ir_pad_dim *d = &a->u.padding.dims[i];
      sb_printf(b, "%s%" PRId64 "_%" PRId64, i ? "x" : "", d->lo, d->hi);
      if (d->interior)
        sb_printf(b, "_%" PRId64, d->interior);
    }
    if (!a->u.padding.n)
      sb_puts(b, "{}");
    break;
  case IR_FAM_COMPARE: {
    static const char *const dirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
    static const char *const types[] = {"DEFAULT", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};
    sb_printf(b, ", direction=%s", dirs[a->u.compare.dir]);
    if (a->u.compare.has_type)
      sb_printf(b, ", type=%s", types[a->u.compare.type]);
    break;
  }
  case IR_FAM_REDUCE_PRECISION:
    sb_printf(b, ", exponent_bits=%" PRId64 ", mantissa_bits=%" PRId64, a->u.reduce_precision.exponent_bits,
              a->u.reduce_precision.mantissa_bits);
    break;
  case IR_FAM_REDUCE_WINDOW:
  case IR_FAM_SELECT_AND_SCATTER:
    if (a->u.reduce_window.window.written || a->u.reduce_window.window.n)
      print_window(b, &a->u.reduce_window.window);
    break;
  case IR_FAM_SCAN:
    sb_printf(b, ", num_carries=%" PRId64, a->u.scan.num_carries);
    if (a->u.scan.is_reverse)
      sb_puts(b, ", is_reverse=true");
    if (a->u.scan.is_associative)
      sb_puts(b, ", is_associative=true");
    break;
  case IR_FAM_SORT:
    if (a->u.sort.is_stable)
      sb_puts(b, ", is_stable=true");
    break;
  case IR_FAM_TOPK:
    sb_printf(b, ", k=%" PRId64, a->u.topk.k);
    if (a->u.topk.has_largest)
      sb_printf(b, ", largest=%s", a->u.topk.largest ? "true" : "false");
    break;
  case IR_FAM_DOT:
    attr_list_if(b, "lhs_batch_dims", &a->u.dot.dnums.lhs_batch);
    attr_list_if(b, "lhs_contracting_dims", &a->u.dot.dnums.lhs_contracting);
    attr_list_if(b, "rhs_batch_dims", &a->u.dot.dnums.rhs_batch);
    attr_list_if(b, "rhs_contracting_dims", &a->u.dot.dnums.rhs_contracting);
    attr_list_if(b, "lhs_ragged_dims", &a->u.dot.dnums.lhs_ragged);
    attr_list_if(b, "rhs_group_dims", &a->u.dot.dnums.rhs_group);
    if (a->u.dot.n_precision)
      print_precision(b, a->u.dot.precision, a->u.dot.n_precision);
    if (a->u.dot.algorithm.len) {
      sb_puts(b, ", algorithm=");
      sb_str(b, a->u.dot.algorithm);
    }
    break;
  case IR_FAM_CONVOLUTION:
    if (a->u.conv.window.written || a->u.conv.window.n)
      print_window(b, &a->u.conv.window);
    if (a->u.conv.dnums.present)
      print_dim_labels(b, &a->u.conv.dnums);
    if (a->u.conv.feature_group_count != 1)
      sb_printf(b, ", feature_group_count=%" PRId64, a->u.conv.feature_group_count);
    if (a->u.conv.batch_group_count != 1)
      sb_printf(b, ", batch_group_count=%" PRId64, a->u.conv.batch_group_count);
    if (a->u.conv.n_precision)
      print_precision(b, a->u.conv.precision, a->u.conv.n_precision);
    if (a->u.conv.conv_kind.len) {
      sb_puts(b, ", conv_kind=");
      sb_str(b, a->u.conv.conv_kind);
    }
    break;
  case IR_FAM_GATHER:
    attr_list(b, "offset_dims", &a->u.gather.offset_dims);
    attr_list(b, "collapsed_slice_dims", &a->u.gather.collapsed_slice_dims);
    attr_list(b, "start_index_map", &a->u.gather.start_index_map);
    attr_list_if(b, "operand_batching_dims", &a->u.gather.operand_batching_dims);
    attr_list_if(b, "start_indices_batching_dims", &a->u.gather.start_indices_batching_dims);
    sb_printf(b, ", index_vector_dim=%" PRId64, a->u.gather.index_vector_dim);
    attr_list(b, "slice_sizes", &a->u.gather.slice_sizes);
    if (a->u.gather.indices_are_sorted)
      sb_puts(b, ", indices_are_sorted=true");
    break;
  case IR_FAM_SCATTER:
    attr_list(b, "update_window_dims", &a->u.scatter.update_window_dims);
    attr_list(b, "inserted_window_dims", &a->u.scatter.inserted_window_dims);
    attr_list(b, "scatter_dims_to_operand_dims", &a->u.scatter.scatter_dims_to_operand_dims);
    attr_list_if(b, "input_batching_dims", &a->u.scatter.input_batching_dims);
    attr_list_if(b, "scatter_indices_batching_dims", &a->u.scatter.scatter_indices_batching_dims);
    sb_printf(b, ", index_vector_dim=%" PRId64, a->u.scatter.index_vector_dim);
    if (a->u.scatter.indices_are_sorted)
      sb_puts(b, ", indices_are_sorted=true");
    if (a->u.scatter.unique_indices)
      sb_puts(b, ", unique_indices=true");
    break;
  case IR_FAM_FFT: {
    static const char *const types[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
    sb_printf(b, ", fft_type=%s", types[a->u.fft.type]);
    attr_list(b, "fft_length", &a->u.fft.length);
    break;
  }
  case IR_FAM_CHOLESKY:
    if (a->u.cholesky.lower)
      sb_puts(b, ", lower=true");
    break;
  case IR_FAM_TRIANGULAR_SOLVE: {
    static const char *const ta[] = {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
    if (a->u.triangular_solve.left_side)
      sb_puts(b, ", left_side=true");
    if (a->u.triangular_solve.lower)
      sb_puts(b, ", lower=true");
    if (a->u.triangular_solve.unit_diagonal)
      sb_puts(b, ", unit_diagonal=true");
    sb_printf(b, ", transpose_a=%s", ta[a->u.triangular_solve.transpose_a]);
    break;
  }
  case IR_FAM_BATCH_NORM: {
    char buf[64];
    snprintf(buf, sizeof buf, "%.9g", a->u.batch_norm.epsilon);
    if (!strpbrk(buf, ".eEn"))
      strcat(buf, ".0");
    sb_printf(b, ", epsilon=%s, feature_index=%" PRId64, buf, a->u.batch_norm.feature_index);
    break;
  }
  case IR_FAM_RNG:
    sb_printf(b, ", distribution=%s", a->u.rng.distribution == IR_RNG_NORMAL ? "rng_normal" : "rng_uniform");
    break;
  case IR_FAM_RNG_BIT_GENERATOR: {
    static const char *const algs[] = {"rng_default", "rng_three_fry", "rng_philox"};
    sb_printf(b, ", algorithm=%s", algs[a->u.rng_bit_generator.algorithm]);
    break;
  }
  case IR_FAM_RNG_STATE: sb_printf(b, ", delta=%" PRId64, a->u.rng_state.delta); break;
  case IR_FAM_CALL:
    if (a->u.call.is_composite)
      sb_puts(b, ", is_composite=true");
    break;
  case IR_FAM_FUSION:
    if (a->u.fusion.kind.len) {
      sb_puts(b, ", kind=");
      sb_str(b, a->u.fusion.kind);
    }
    break;
  case IR_FAM_CUSTOM_CALL: print_custom_call_attrs(b, a); break;
  case IR_FAM_INFEED:
    if (a->custom_text.len) {
      sb_puts(b, ", infeed_config=");
      print_quoted(b, a->custom_text);
    }
    break;
  case IR_FAM_OUTFEED:
    if (a->u.outfeed.outfeed_shape) {
      sb_puts(b, ", outfeed_shape=");
      print_shape(b, a->u.outfeed.outfeed_shape);
    }
    if (a->custom_text.len) {
      sb_puts(b, ", outfeed_config=");
      print_quoted(b, a->custom_text);
    }
    break;
  case IR_FAM_SEND:
  case IR_FAM_RECV:
    if (a->u.send_recv.is_host_transfer)
      sb_puts(b, ", is_host_transfer=true");
    break;
  case IR_FAM_DOMAIN:
    sb_puts(b, ", domain=");
    sb_str(b, a->custom_text);
    break;
  case IR_FAM_COLLECTIVE:
    print_replica_groups(b, &a->u.collective.replica_groups);
    if (a->u.collective.constrain_layout)
      sb_puts(b, ", constrain_layout=true");
    if (a->u.collective.use_global_device_ids)
      sb_puts(b, ", use_global_device_ids=true");
    if (a->u.collective.n_source_target_pairs)
      attr_lists(b, "source_target_pairs", a->u.collective.source_target_pairs, a->u.collective.n_source_target_pairs);
    if (a->u.collective.inplace)
      attr_lists(b, "slice_sizes", a->u.collective.slice_sizes, a->u.collective.n_slice_sizes);
    if (a->u.collective.has_dynamic_root >= 0)
      sb_printf(b, ", has_dynamic_root=%s", a->u.collective.has_dynamic_root ? "true" : "false");
    break;
  case IR_FAM_ASYNC:
    if (a->u.async.execution_thread.len) {
      sb_puts(b, ", async_execution_thread=");
      print_quoted(b, a->u.async.execution_thread);
    }
    break;
  case IR_FAM_COPY_ASYNC:
    if (a->u.copy_start.has_index)
      sb_printf(b, ", cross_program_prefetch_index=%" PRId64, a->u.copy_start.cross_program_prefetch_index);
    break;
  default:
    break;
  }
}

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
