/* parse.c — ir_parse_module: sets up the lexer over a NUL-terminated copy of the text, runs
 * the Bison parser, and finishes the module (name resolution).  On any error the module is
 * destroyed; the arena makes that leak-free whatever state the parse stopped in. */
#include "grammar/parse.h"

#include <stdlib.h>
#include <string.h>

#include "lexer.h"
#include "hlo_parser.h"

hlo_status ir_parse_module(const char *text, size_t len, ir_diag_list *diags, ir_module **out_module) {
  return ir_parse_module_failing(text, len, diags, 0, NULL, out_module);
}

hlo_status ir_parse_module_failing(const char *text, size_t len, ir_diag_list *diags, int64_t fail_alloc_after,
                                   bool *out_fired, ir_module **out_module) {
  *out_module = NULL;
  if (out_fired)
    *out_fired = false;
  ir_module *m = ir_module_create();
  if (m)
    m->arena.fail_after = fail_alloc_after;
  unsigned char *copy = malloc(len + 1);
  if (!m || !copy) {
    free(copy);
    ir_module_destroy(m);
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory reading %s", diags->filename);
  }
  memcpy(copy, text, len);
  copy[len] = 0;
  hlo_parser p;
  memset(&p, 0, sizeof p);
  p.lx.base = p.lx.cur = p.lx.line_start = copy;
  p.lx.lim = copy + len;
  p.lx.line = 1;
  p.b = irb_create(m, diags, text, len);
  int rc = p.b ? hlo_parse(&p) : 2;
  bool ok = rc == 0 && p.b && !irb_failed(p.b) && irb_finish(p.b);
  free(copy);
  if (out_fired)
    *out_fired = m->arena.fail_after == -1;
  if (m->arena.fail_after == -1 && ok) { /* an allocation failed somewhere: never trust the module */
    ok = false;
    ir_diag_error(diags, (ir_loc){0, 0}, "out of memory");
  }
  if (!ok) {
    if (diags->n_errors == 0)
      ir_diag_error(diags, (ir_loc){0, 0}, rc == 2 ? "out of memory" : "syntax error");
    ir_module_destroy(m);
    return ir_diag_to_status(diags);
  }
  *out_module = m;
  return NULL;
}
