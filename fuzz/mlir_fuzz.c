/* mlir_fuzz.c — libFuzzer entry point over the StableHLO MLIR front end: lexer, parser,
 * translation to HLO text, the HLO parser and the verifier.  Oracle: no crash, leak or
 * sanitizer report on any input, and every error is a "file:line:col: error:" diagnostic.
 * Seeds: testdata/mlir/ and ../shared/stablehlo/testdata.  Build and run: docs/testing.md.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grammar/mlir.h"
#include "shape/shape.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data;
  ir_diag_list d;
  ir_diag_init(&d, "fuzz.mlir", text, size);
  ir_module *m = NULL;
  mlir_checks checks;
  hlo_status s = ir_parse_mlir(text, size, &d, &m, &checks);
  if (!s) {
    shape_options opts = {0};
    (void)shape_verify_module(m, &opts, &d);
    mlir_checks_free(&checks);
  } else if (d.n_errors == 0) {
    fprintf(stderr, "a failed parse with no diagnostic: %s\n", hlo_status_message(s));
    abort();
  }
  for (int i = 0; i < d.n; i++) { /* every diagnostic renders (with its caret) */
    char *r = ir_diag_render(&d, i);
    free(r);
  }
  hlo_status_free(s);
  ir_module_destroy(m);
  ir_diag_deinit(&d);
  return 0;
}
