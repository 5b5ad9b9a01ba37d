/* pass_test_util.h — for the passes' unit tests (*_test.c) only: a module parsed and verified
 * from text, or NULL after saying why on stderr and counting a failure. */
#ifndef HLOC_PASSES_PASS_TEST_UTIL_H
#define HLOC_PASSES_PASS_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grammar/parse.h"
#include "shape/shape.h"

static inline ir_module *pass_test_parse(const char *what, const char *text, int *failures) {
  ir_diag_list d;
  ir_diag_init(&d, "t.hlo", text, strlen(text));
  ir_module *m = NULL;
  hlo_status st = ir_parse_module(text, strlen(text), &d, &m);
  shape_options o = {0};
  if (st || !shape_verify_module(m, &o, &d)) {
    char *r = d.n ? ir_diag_render(&d, 0) : NULL;
    fprintf(stderr, "%s: does not parse/verify: %s\n", what, r ? r : "?");
    free(r);
    (*failures)++;
    ir_module_destroy(m);
    m = NULL;
  }
  hlo_status_free(st);
  ir_diag_deinit(&d);
  return m;
}

#endif
