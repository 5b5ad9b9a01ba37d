/* parse_fuzz.c — libFuzzer entry point over the front end: lexer + parser + verifier, and the
 * printer on whatever verifies.  Oracle: no crash, leak or sanitizer report on any input; the
 * printed module parses and verifies again and prints byte-identically (a fixed point).
 * Build and run: docs/testing.md.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grammar/parse.h"
#include "ir/print.h"
#include "shape/shape.h"

/* Parses and verifies `text`; returns its print (malloc'd), or NULL when either step fails. */
static char *parse_verify_print(const char *name, const char *text, size_t len, size_t *out_len) {
  ir_diag_list d;
  ir_diag_init(&d, name, text, len);
  ir_module *m = NULL;
  char *out = NULL;
  hlo_status s = ir_parse_module(text, len, &d, &m);
  if (!s) {
    shape_options opts = {0};
    if (shape_verify_module(m, &opts, &d))
      out = ir_print_module_to_string(m, out_len);
  }
  hlo_status_free(s);
  ir_module_destroy(m);
  ir_diag_deinit(&d);
  return out;
}

/* The printer's output must be a fixed point of parse -> verify -> print. */
static void check_fixed_point(const char *p1, size_t n1) {
  size_t n2 = 0;
  char *p2 = parse_verify_print("printed.hlo", p1, n1, &n2);
  if (!p2) {
    ir_diag_list d;
    ir_diag_init(&d, "printed.hlo", p1, n1);
    ir_module *m = NULL;
    hlo_status s = ir_parse_module(p1, n1, &d, &m);
    if (!s) {
      shape_options opts = {0};
      (void)shape_verify_module(m, &opts, &d);
    }
    fprintf(stderr, "the printed module does not parse and verify:\n%.*s\n", (int)n1, p1);
    ir_diag_print(&d, stderr);
    abort();
  }
  if (n1 != n2 || memcmp(p1, p2, n1) != 0) {
    fprintf(stderr, "print(parse(print)) differs from print:\n--- first\n%.*s\n--- second\n%.*s\n", (int)n1, p1,
            (int)n2, p2);
    abort();
  }
  free(p2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  size_t n1 = 0;
  char *p1 = parse_verify_print("fuzz.hlo", (const char *)data, size, &n1);
  if (p1)
    check_fixed_point(p1, n1);
  free(p1);
  return 0;
}
