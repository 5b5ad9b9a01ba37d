/* diag_check.c — the error-test driver at library level (no hloc, no LLVM):
 *
 *   diag_check [--verify] [--strict] [--compiling] FILE.hlo EXPECTED.err
 *
 * Parses FILE (diagnostics name it by its basename), with --verify also runs
 * shape_verify_module (--strict: hloc's broadcasting extensions rejected), renders the FIRST
 * error with ir_diag_render and compares its first line with the first line of EXPECTED.err.
 * Exit 0 on a match; 1 (printing both lines) on a mismatch, when there is no error at all, or
 * when a file cannot be read; 2 on bad usage.  Registered by tests/errors.cmake.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grammar/parse.h"
#include "shape/shape.h"

/* Reads a whole file into a malloc'd buffer; NULL on failure. */
static char *read_file(const char *path, size_t *out_len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap)
      break;
    char *bigger = realloc(buf, cap * 2);
    if (!bigger) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = bigger;
    cap *= 2;
  }
  bool bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    return NULL;
  }
  *out_len = n;
  return buf;
}

/* The first line of s (without its line ending), copied into a malloc'd string. */
static char *first_line(const char *s, size_t len) {
  size_t n = 0;
  while (n < len && s[n] != '\n' && s[n] != '\r')
    n++;
  char *out = malloc(n + 1);
  if (out) {
    memcpy(out, s, n);
    out[n] = 0;
  }
  return out;
}

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* The first line of the first error diagnostic after parse (+ verify), or NULL if none. */
static char *first_error(const char *path, const char *text, size_t len, bool verify, bool strict, bool compiling) {
  ir_diag_list d;
  ir_diag_init(&d, base_name(path), text, len);
  ir_module *m = NULL;
  hlo_status st = ir_parse_module(text, len, &d, &m);
  if (!st && verify) {
    shape_options opts = {.strict = strict, .async_chains = compiling};
    (void)shape_verify_module(m, &opts, &d);
  }
  hlo_status_free(st);
  ir_module_destroy(m);
  char *line = NULL;
  for (int i = 0; i < d.n && !line; i++) {
    if (d.items[i].severity != IR_DIAG_ERROR)
      continue;
    char *r = ir_diag_render(&d, i);
    line = r ? first_line(r, strlen(r)) : NULL;
    free(r);
  }
  ir_diag_deinit(&d);
  return line;
}

int main(int argc, char **argv) {
  bool verify = false, strict = false, compiling = false;
  int i = 1;
  for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
    if (strcmp(argv[i], "--verify") == 0) {
      verify = true;
    } else if (strcmp(argv[i], "--strict") == 0) {
      strict = true;
    } else if (strcmp(argv[i], "--compiling") == 0) {
      compiling = true;
    } else {
      fprintf(stderr, "diag_check: unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  if (argc - i != 2) {
    fprintf(stderr, "usage: diag_check [--verify] [--strict] [--compiling] FILE.hlo EXPECTED.err\n");
    return 2;
  }
  size_t hlen = 0, elen = 0;
  char *text = read_file(argv[i], &hlen);
  char *expected = read_file(argv[i + 1], &elen);
  if (!text || !expected) {
    fprintf(stderr, "diag_check: cannot read %s\n", !text ? argv[i] : argv[i + 1]);
    free(text);
    free(expected);
    return 1;
  }
  char *want = first_line(expected, elen);
  char *got = first_error(argv[i], text, hlen, verify, strict, compiling);
  int rc = 0;
  if (!got || !want || strcmp(got, want) != 0) {
    printf("expected: %s\n", want ? want : "(out of memory)");
    printf("got:      %s\n", got ? got : "(no error)");
    rc = 1;
  }
  free(got);
  free(want);
  free(text);
  free(expected);
  return rc;
}
