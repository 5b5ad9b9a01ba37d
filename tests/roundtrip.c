/* roundtrip.c — `roundtrip FILE.hlo`: the printer's fixed point, in process.
 *
 * Parses FILE, runs the verifier (which fills omitted shapes; a module that does not verify
 * is printed as parsed, with a note), prints P1; parses P1, verifies, prints P2.  Exit 0 when
 * P1 == P2 byte for byte; exit 1 with the first differing line (unified-diff style, with
 * context) or the parse error of either text.  Registered per file by tests/roundtrip.cmake.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grammar/parse.h"
#include "ir/print.h"
#include "shape/shape.h"

static char *read_file(const char *path, size_t *out_len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 1 << 16, len = 0;
  char *p = malloc(cap);
  while (p) {
    size_t n = fread(p + len, 1, cap - len, f);
    len += n;
    if (len < cap)
      break;
    char *q = cap > SIZE_MAX / 2 ? NULL : realloc(p, cap * 2);
    if (!q) {
      free(p);
      p = NULL;
      break;
    }
    p = q;
    cap *= 2;
  }
  bool err = ferror(f);
  fclose(f);
  if (err) {
    free(p);
    return NULL;
  }
  *out_len = len;
  return p;
}

/* Parses text, verifies, prints; NULL (after reporting) on a parse error. */
static char *parse_and_print(const char *what, const char *text, size_t len, size_t *out_len) {
  ir_diag_list diags;
  ir_diag_init(&diags, what, text, len);
  ir_module *m = NULL;
  hlo_status st = ir_parse_module(text, len, &diags, &m);
  if (st) {
    fprintf(stderr, "roundtrip: %s does not parse:\n", what);
    ir_diag_print(&diags, stderr);
    hlo_status_free(st);
    ir_diag_deinit(&diags);
    return NULL;
  }
  ir_diag_list vdiags;
  ir_diag_init(&vdiags, what, text, len);
  shape_options opts = {.strict = false};
  if (!shape_verify_module(m, &opts, &vdiags) && vdiags.n > 0)
    fprintf(stderr, "roundtrip: note: %s does not verify (printed as parsed): %s\n", what,
            vdiags.items[0].message);
  char *out = ir_print_module_to_string(m, out_len);
  if (!out)
    fprintf(stderr, "roundtrip: out of memory printing %s\n", what);
  ir_diag_deinit(&vdiags);
  ir_diag_deinit(&diags);
  ir_module_destroy(m);
  return out;
}

/* The start of line `n` (0-based) of s, or NULL past the end; *out_len excludes '\n'. */
static const char *nth_line(const char *s, size_t len, int n, size_t *out_len) {
  const char *p = s, *end = s + len;
  for (int i = 0; i < n; i++) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl)
      return NULL;
    p = nl + 1;
  }
  if (p >= end)
    return NULL;
  const char *nl = memchr(p, '\n', (size_t)(end - p));
  *out_len = (size_t)((nl ? nl : end) - p);
  return p;
}

static void show_line(char tag, const char *line, size_t len) {
  if (!line)
    return;
  int shown = len > 400 ? 400 : (int)len;
  printf("%c%.*s%s\n", tag, shown, line, len > 400 ? " [...]" : "");
}

/* Prints the first differing line of a and b with two lines of context before it. */
static void report_difference(const char *a, size_t alen, const char *b, size_t blen) {
  size_t i = 0;
  while (i < alen && i < blen && a[i] == b[i])
    i++;
  int line = 0;
  for (size_t k = 0; k < i; k++)
    line += a[k] == '\n';
  printf("--- P1 (print of the input)\n+++ P2 (print of P1)\n@@ line %d @@\n", line + 1);
  for (int c = line >= 2 ? line - 2 : 0; c < line; c++) {
    size_t n = 0;
    show_line(' ', nth_line(a, alen, c, &n), n);
  }
  size_t na = 0, nb = 0;
  const char *la = nth_line(a, alen, line, &na), *lb = nth_line(b, blen, line, &nb);
  if (!la)
    printf("-<end of P1>\n");
  show_line('-', la, na);
  if (!lb)
    printf("+<end of P2>\n");
  show_line('+', lb, nb);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: roundtrip FILE.hlo\n");
    return 2;
  }
  size_t len = 0, l1 = 0, l2 = 0;
  char *text = read_file(argv[1], &len);
  if (!text) {
    fprintf(stderr, "roundtrip: cannot read %s\n", argv[1]);
    return 1;
  }
  char *p1 = parse_and_print(argv[1], text, len, &l1);
  char *p2 = p1 ? parse_and_print("<P1: the printed module>", p1, l1, &l2) : NULL;
  int rc = 1;
  if (p1 && p2) {
    if (l1 == l2 && memcmp(p1, p2, l1) == 0) {
      printf("ok: %zu bytes print the same twice\n", l1);
      rc = 0;
    } else {
      report_difference(p1, l1, p2, l2);
    }
  }
  free(p2);
  free(p1);
  free(text);
  return rc;
}
