/* literal_io.c — inline literal inputs and printed results (literal_io.h).  An inline literal
 * "SHAPE VALUE" is wrapped as `ROOT c = SHAPE constant(VALUE)` in a one-instruction module and
 * read by ir_parse_module, so it accepts exactly what a constant in HLO text accepts; parse
 * errors are mapped back to a column of the argument.  Printing follows the brace and
 * separator rules of XLA's literal printer.
 */
#include "literal_io.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grammar/parse.h"
#include "ir/print.h"

static const char *dtype_name(int32_t dt) {
  return dt >= 0 && dt < IR_ETYPE_COUNT ? ir_etype_table[dt].spelling : "?";
}

void litio_shape_text(int32_t dtype, int rank, const int64_t *dims, char *buf, size_t cap) {
  size_t k = (size_t)snprintf(buf, cap, "%s[", dtype_name(dtype));
  for (int i = 0; i < rank && k < cap; i++)
    k += (size_t)snprintf(buf + k, cap - k, "%s%lld", i ? "," : "", (long long)dims[i]);
  if (k < cap)
    snprintf(buf + k, cap - k, "]");
}

bool litio_looks_inline(const char *arg) {
  size_t n = strcspn(arg, "[");
  if (!arg[n] || n == 0 || n > 16)
    return false;
  for (int t = 0; t < IR_ETYPE_COUNT; t++)
    if (strlen(ir_etype_table[t].spelling) == n && memcmp(arg, ir_etype_table[t].spelling, n) == 0)
      return access(arg, F_OK) != 0; /* a file of that name wins */
  return false;
}

/* Byte offset of (line, col) in text, or len when past it. */
static size_t offset_of(const char *text, size_t len, ir_loc loc) {
  size_t off = 0;
  for (int line = 1; line < loc.line && off < len; off++)
    if (text[off] == '\n')
      line++;
  off += loc.col > 0 ? (size_t)loc.col - 1 : 0;
  return off < len ? off : len;
}

/* The module text and where the shape and the value sit in it. */
typedef struct wrapped {
  char *text;
  size_t len, shape_at, shape_len, value_at, value_len;
} wrapped;

static bool wrap(const char *arg, wrapped *w) {
  static const char head[] = "HloModule input\n\nENTRY %e {\n  ROOT %c = ", mid[] = " constant(", tail[] = ")\n}\n";
  const char *sp = strchr(arg, ' ');
  if (!sp)
    return false;
  w->shape_len = (size_t)(sp - arg);
  w->value_len = strlen(sp + 1);
  w->shape_at = sizeof head - 1;
  w->value_at = w->shape_at + w->shape_len + sizeof mid - 1;
  w->len = w->value_at + w->value_len + sizeof tail - 1;
  w->text = malloc(w->len + 1);
  if (!w->text)
    return false;
  snprintf(w->text, w->len + 1, "%s%.*s%s%s%s", head, (int)w->shape_len, arg, mid, sp + 1, tail);
  return true;
}

/* The argument's 1-based column for a module offset. */
static size_t arg_column(const wrapped *w, size_t off) {
  if (off < w->shape_at)
    return 1;
  if (off < w->shape_at + w->shape_len)
    return off - w->shape_at + 1;
  if (off < w->value_at)
    return w->shape_len + 1;
  if (off < w->value_at + w->value_len)
    return w->shape_len + 1 + (off - w->value_at) + 1;
  return w->shape_len + 1 + w->value_len + 1;
}

static hlo_status parse_error(const char *arg, int k, const hlo_array_desc *d, const wrapped *w,
                              const ir_diag_list *diags) {
  const ir_diag *first = NULL;
  for (int i = 0; i < diags->n && !first; i++)
    if (diags->items[i].severity == IR_DIAG_ERROR)
      first = &diags->items[i];
  if (!first)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "--input '%s' (parameter %d, %%%s): not a valid HLO literal", arg, k,
                           d->name);
  size_t col = arg_column(w, offset_of(w->text, w->len, first->loc));
  return hlo_status_make(HLO_INVALID_ARGUMENT, "--input '%s' (parameter %d, %%%s): column %zu: %s", arg, k, d->name, col,
                         first->message ? first->message : "not a valid HLO literal");
}

hlo_status litio_parse_input(const char *arg, int k, const hlo_array_desc *d, void *dst) {
  wrapped w;
  if (!wrap(arg, &w))
    return hlo_status_make(HLO_INVALID_ARGUMENT,
                           "--input '%s' (parameter %d, %%%s): expected a file or a literal such as 'f32[2] {1, 2}'", arg,
                           k, d->name);
  ir_diag_list diags;
  ir_diag_init(&diags, "--input", w.text, w.len);
  ir_module *m = NULL;
  hlo_status s = ir_parse_module(w.text, w.len, &diags, &m);
  if (s) {
    hlo_status_free(s);
    s = parse_error(arg, k, d, &w, &diags);
    ir_diag_deinit(&diags);
    free(w.text);
    return s;
  }
  ir_diag_deinit(&diags);
  free(w.text);
  const ir_literal *lit = m->entry && m->entry->root ? m->entry->root->attrs.u.literal : NULL;
  char want[256], got[256] = "?";
  litio_shape_text(d->dtype, d->rank, d->dims, want, sizeof want);
  if (lit && lit->shape)
    ir_shape_format(lit->shape, false, got, sizeof got);
  if (!lit || !lit->data || strcmp(want, got) != 0 || lit->nbytes != d->byte_size)
    s = hlo_status_make(HLO_INVALID_ARGUMENT, "--input '%s': parameter %d (%%%s) expects %s, got %s", arg, k, d->name,
                        want, got);
  else
    memcpy(dst, lit->data, (size_t)lit->nbytes);
  ir_module_destroy(m);
  return s;
}

/* ---- printing ---------------------------------------------------------------------------- */

typedef struct printer {
  FILE *out;
  const hlo_array_desc *d;
  const unsigned char *data;
  int64_t next;        /* linear index of the next element */
  int64_t idx[64];
} printer;

static void print_element(printer *p) {
  int eb = ir_etype_table[p->d->dtype].storage_bytes;
  const unsigned char *e = p->data + p->next++ * eb;
  char buf[128];
  if (p->d->dtype == IR_PRED) /* XLA prints predicate arrays densely, as 1 and 0 */
    snprintf(buf, sizeof buf, "%d", e[0] ? 1 : 0);
  else
    ir_format_element((ir_etype)p->d->dtype, e, buf, sizeof buf);
  fputs(buf, p->out);
}

/* One level of braces: the innermost dimension of a rank >= 2 array is "  { a, b }", outer
 * ones put each child on its own line, and for rank > 3 an opening brace carries a comment
 * naming the index of the level above (i0=1). */
static void print_level(printer *p, int dim) {
  int rank = p->d->rank;
  int64_t n = p->d->dims[dim];
  bool innermost = dim == rank - 1;
  if (rank == 1)
    fputs("{", p->out);
  else if (innermost)
    fputs(n <= 1 ? "  {" : "  { ", p->out);
  else if (rank > 3 && dim > 0)
    fprintf(p->out, "{ /*i%d=%lld*/\n", dim - 1, (long long)p->idx[dim - 1]);
  else
    fputs("{\n", p->out);
  for (int64_t i = 0; i < n; i++) {
    p->idx[dim] = i;
    if (i > 0)
      fputs(innermost ? ", " : ",\n", p->out);
    if (innermost)
      print_element(p);
    else
      print_level(p, dim + 1);
  }
  if (rank == 1)
    fputs("}", p->out);
  else if (innermost)
    fputs(n <= 1 ? "}" : " }", p->out);
  else
    fputs("\n}", p->out);
}

hlo_status litio_print(const hlo_array_desc *d, const void *data, FILE *out) {
  char shape[1024];
  litio_shape_text(d->dtype, d->rank, d->dims, shape, sizeof shape);
  if (d->dtype == IR_TOKEN) {
    fputs("token", out); /* XLA prints a token literal as the bare word */
  } else if (d->rank == 0) {
    fprintf(out, "%s ", shape);
    char buf[128];
    ir_format_element((ir_etype)d->dtype, data, buf, sizeof buf);
    fputs(buf, out);
  } else if (d->rank <= 64) {
    fprintf(out, "%s ", shape);
    printer p = {.out = out, .d = d, .data = data};
    print_level(&p, 0);
  }
  fputs("\n", out);
  return ferror(out) ? hlo_status_make(HLO_IO, "write error while printing a result") : NULL;
}
