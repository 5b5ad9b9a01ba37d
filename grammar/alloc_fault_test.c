/* alloc_fault_test.c — proves the parser's out-of-memory paths (STYLE.md 19): for every
 * N up to the number of arena allocations a file needs, make the Nth allocation fail and
 * check that parsing reports an error (never crashes, never succeeds with a broken module).
 * Runs over a few files of testdata/parse/ok, under the normal build and the sanitizers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grammar/parse.h"
#include "ir/ir.h"


static char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)len + 1);
  if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *n = (size_t)len;
  return buf;
}

int main(void) {
  const char *files[] = {"testdata/parse/ok/control_flow.hlo", "testdata/parse/ok/literals.hlo",
                         "testdata/parse/ok/gather_scatter.hlo", "testdata/parse/ok/stack_frames.hlo"};
  int failures = 0, runs = 0;
  for (size_t k = 0; k < sizeof files / sizeof *files; k++) {
    size_t n;
    char *text = slurp(files[k], &n);
    if (!text) {
      fprintf(stderr, "cannot read %s\n", files[k]);
      return 1;
    }
    for (int64_t fail = 1;; fail++) {
      ir_diag_list d;
      ir_diag_init(&d, files[k], text, n);
      ir_module *m = NULL;
      bool injected = false;
      hlo_status s = ir_parse_module_failing(text, n, &d, fail, &injected, &m);
      runs++;
      if (injected && !s) {
        fprintf(stderr, "%s: allocation %lld failed but parsing succeeded\n", files[k], (long long)fail);
        failures++;
      }
      hlo_status_free(s);
      ir_module_destroy(m);
      ir_diag_deinit(&d);
      if (!injected)
        break; /* the file needs fewer allocations than `fail`: all paths covered */
    }
    free(text);
  }
  printf("alloc_fault_test: %d runs, %s\n", runs, failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
