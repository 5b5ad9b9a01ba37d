/* parse_fuzz.c — libFuzzer entry point over the front end: lexer + parser + verifier, and the
 * printer on whatever parses (print -> parse must succeed again).  Build and run: docs/testing.md.
 */
#include <stdint.h>
#include <stdlib.h>

#include "grammar/parse.h"
#include "ir/print.h"
#include "shape/shape.h"

static void reparse(const char *text, size_t len) {
  ir_diag_list d;
  ir_diag_init(&d, "printed", text, len);
  ir_module *m = NULL;
  hlo_status s = ir_parse_module(text, len, &d, &m);
  if (s)
    abort(); /* the printer produced text the parser rejects */
  ir_module_destroy(m);
  ir_diag_deinit(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ir_diag_list d;
  ir_diag_init(&d, "fuzz.hlo", (const char *)data, size);
  ir_module *m = NULL;
  hlo_status s = ir_parse_module((const char *)data, size, &d, &m);
  if (!s) {
    shape_options opts = {0};
    if (shape_verify_module(m, &opts, &d)) {
      size_t n;
      char *text = ir_print_module_to_string(m, &n);
      if (text)
        reparse(text, n);
      free(text);
    }
  }
  hlo_status_free(s);
  ir_module_destroy(m);
  ir_diag_deinit(&d);
  return 0;
}
