/* parse_verify_all.c — `parse_verify_all DIR`: parses and verifies every DIR/<case>/model.hlo
 * in process (the conformance suite's modules), printing each failure's first diagnostic and
 * a final "N passed, M failed".  Exit 1 when any failed or none was found.
 * Registered as conformance.parse_verify_all by tests/roundtrip.cmake.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grammar/parse.h"
#include "shape/shape.h"

static char *read_file(const char *path, size_t *out_len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 1 << 16, len = 0;
  char *p = malloc(cap);
  while (p) {
    len += fread(p + len, 1, cap - len, f);
    if (len < cap)
      break;
    char *q = realloc(p, cap * 2);
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

/* Parses and verifies one file; prints why when it fails. */
static bool check_one(const char *path) {
  size_t len = 0;
  char *text = read_file(path, &len);
  if (!text) {
    printf("FAIL %s: cannot read\n", path);
    return false;
  }
  ir_diag_list diags;
  ir_diag_init(&diags, path, text, len);
  ir_module *m = NULL;
  hlo_status st = ir_parse_module(text, len, &diags, &m);
  bool ok = st == NULL;
  if (ok) {
    shape_options opts = {.strict = false};
    ok = shape_verify_module(m, &opts, &diags);
  }
  if (!ok) {
    printf("FAIL %s\n", path);
    char *first = diags.n ? ir_diag_render(&diags, 0) : NULL;
    printf("%s", first ? first : "(no diagnostic)\n");
    free(first);
  }
  hlo_status_free(st);
  ir_module_destroy(m);
  ir_diag_deinit(&diags);
  free(text);
  return ok;
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: parse_verify_all DIR\n");
    return 2;
  }
  DIR *d = opendir(argv[1]);
  if (!d) {
    fprintf(stderr, "parse_verify_all: cannot open %s\n", argv[1]);
    return 1;
  }
  char **names = NULL;
  size_t n = 0, cap = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.')
      continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      char **q = realloc(names, cap * sizeof *names);
      if (!q)
        break;
      names = q;
    }
    names[n] = strdup(e->d_name);
    if (names[n])
      n++;
  }
  closedir(d);
  qsort(names, n, sizeof *names, cmp_names);
  int pass = 0, fail = 0;
  for (size_t i = 0; i < n; i++) {
    size_t plen = strlen(argv[1]) + strlen(names[i]) + 16;
    char *path = malloc(plen);
    if (path) {
      snprintf(path, plen, "%s/%s/model.hlo", argv[1], names[i]);
      FILE *f = fopen(path, "rb");
      if (f) {
        fclose(f);
        if (check_one(path))
          pass++;
        else
          fail++;
      }
    }
    free(path);
    free(names[i]);
  }
  free(names);
  printf("%d passed, %d failed\n", pass, fail);
  return fail == 0 && pass > 0 ? 0 : 1;
}
