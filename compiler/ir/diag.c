/* diag.c — the diagnostic list (diag.h): collecting, rendering with the source line and a
 * caret, and turning the first error into an hlo_status. */
#include "ir/diag.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void ir_diag_init(ir_diag_list *d, const char *filename, const char *source, size_t len) {
  memset(d, 0, sizeof *d);
  d->filename = filename ? filename : "<input>";
  d->source = source;
  d->source_len = len;
  d->max_errors = 20;
}

void ir_diag_deinit(ir_diag_list *d) {
  for (int i = 0; i < d->n; i++)
    free(d->items[i].message);
  free(d->items);
  d->items = NULL;
  d->n = d->cap = 0;
}

static void diag_addv(ir_diag_list *d, ir_diag_severity sev, ir_loc loc, const char *fmt,
                      va_list ap) {
  if (sev == IR_DIAG_ERROR)
    d->n_errors++;
  if (sev == IR_DIAG_ERROR && d->n_errors > d->max_errors)
    return;
  if (d->n == d->cap) {
    int cap = d->cap ? d->cap * 2 : 8;
    ir_diag *p = realloc(d->items, (size_t)cap * sizeof *p);
    if (!p)
      return;
    d->items = p;
    d->cap = cap;
  }
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  char *msg = malloc(n > 0 ? (size_t)n + 1 : 1);
  if (!msg)
    return;
  vsnprintf(msg, n > 0 ? (size_t)n + 1 : 1, fmt, ap);
  d->items[d->n++] = (ir_diag){sev, loc, msg};
}

void ir_diag_add(ir_diag_list *d, ir_diag_severity sev, ir_loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  diag_addv(d, sev, loc, fmt, ap);
  va_end(ap);
}

void ir_diag_error(ir_diag_list *d, ir_loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  diag_addv(d, IR_DIAG_ERROR, loc, fmt, ap);
  va_end(ap);
}

bool ir_diag_too_many(const ir_diag_list *d) { return d->n_errors >= d->max_errors; }

/* Finds line `line` (1-based) of the source; handles \n, \r\n and lone \r endings. */
static bool find_line(const ir_diag_list *d, int line, const char **out_p, size_t *out_len) {
  if (!d->source || line <= 0)
    return false;
  const char *p = d->source, *end = d->source + d->source_len;
  for (int l = 1; l < line && p < end; l++) {
    while (p < end && *p != '\n' && *p != '\r')
      p++;
    if (p < end && *p == '\r' && p + 1 < end && p[1] == '\n')
      p++;
    if (p < end)
      p++;
  }
  if (p >= end && line > 1)
    return false;
  const char *q = p;
  while (q < end && *q != '\n' && *q != '\r')
    q++;
  *out_p = p;
  *out_len = (size_t)(q - p);
  return true;
}

static const char *severity_name(ir_diag_severity s) {
  return s == IR_DIAG_ERROR ? "error" : s == IR_DIAG_WARNING ? "warning" : "note";
}

char *ir_diag_render(const ir_diag_list *d, int i) {
  const ir_diag *g = &d->items[i];
  const char *lp = NULL;
  size_t ll = 0;
  bool have_line = g->loc.line > 0 && find_line(d, g->loc.line, &lp, &ll);
  /* Quote at most 200 columns around the caret: real dumps have 77 000-character lines. */
  size_t from = 0, col = g->loc.col > 0 ? (size_t)g->loc.col - 1 : 0;
  if (have_line && ll > 200) {
    from = col > 100 ? col - 100 : 0;
    if (from > ll) /* a column past the line's end (fuzz/mlir_fuzz.c found one) */
      from = ll;
    ll = ll - from > 200 ? 200 : ll - from;
  }
  size_t cap = strlen(d->filename) + strlen(g->message) + 2 * ll + 2 * col + 96;
  char *out = malloc(cap);
  if (!out)
    return NULL;
  int n;
  if (g->loc.line > 0)
    n = snprintf(out, cap, "%s:%d:%d: %s: %s\n", d->filename, g->loc.line, g->loc.col,
                 severity_name(g->severity), g->message);
  else
    n = snprintf(out, cap, "%s: %s: %s\n", d->filename, severity_name(g->severity), g->message);
  if (have_line && n > 0 && (size_t)n < cap) {
    size_t pos = (size_t)n;
    memcpy(out + pos, lp + from, ll);
    pos += ll;
    out[pos++] = '\n';
    for (size_t k = from; k < col && k - from < ll; k++)
      out[pos++] = lp[k] == '\t' ? '\t' : ' ';
    out[pos++] = '^';
    out[pos++] = '\n';
    out[pos] = 0;
  }
  return out;
}

void ir_diag_print(const ir_diag_list *d, FILE *f) {
  for (int i = 0; i < d->n; i++) {
    char *s = ir_diag_render(d, i);
    if (s)
      fputs(s, f);
    else
      fprintf(f, "%s: error: %s\n", d->filename, d->items[i].message);
    free(s);
  }
  if (d->n_errors > d->max_errors)
    fprintf(f, "%s: note: %d more errors not shown\n", d->filename, d->n_errors - d->max_errors);
}

hlo_status ir_diag_to_status(const ir_diag_list *d) {
  for (int i = 0; i < d->n; i++) {
    if (d->items[i].severity != IR_DIAG_ERROR)
      continue;
    char *s = ir_diag_render(d, i);
    hlo_status st = hlo_status_make(HLO_INVALID_ARGUMENT, "%s", s ? s : d->items[i].message);
    free(s);
    return st;
  }
  if (d->n_errors)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: %d errors", d->filename, d->n_errors);
  return NULL;
}
