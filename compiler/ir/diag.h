/* diag.h — diagnostics as data (STYLE.md 11): the parser and the verifier append here and go
 * on where cheap; tools print the list.  Format of one rendered diagnostic:
 *
 *   file:line:col: error: message
 *   <the source line>
 *   <spaces>^
 *
 * The list owns its messages (heap); it keeps a pointer to the source text, which the
 * caller keeps alive.  Thread-compatible.
 */
#ifndef HLOC_IR_DIAG_H
#define HLOC_IR_DIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "hlo/status.h"
#include "ir/ir.h"

typedef enum ir_diag_severity { IR_DIAG_ERROR, IR_DIAG_WARNING, IR_DIAG_NOTE } ir_diag_severity;

typedef struct ir_diag {
  ir_diag_severity severity;
  ir_loc loc;
  char *message;
} ir_diag;

typedef struct ir_diag_list {
  const char *filename;  /* as the user named it */
  const char *source;    /* the text (for quoting lines); may be NULL */
  size_t source_len;
  ir_diag *items;
  int n, cap;
  int n_errors;
  int max_errors;        /* stop collecting after this many errors (default 20) */
} ir_diag_list;

void ir_diag_init(ir_diag_list *d, const char *filename, const char *source, size_t len);
void ir_diag_deinit(ir_diag_list *d);
/* Appends a diagnostic (printf format). Out of memory drops it but still counts errors. */
void ir_diag_add(ir_diag_list *d, ir_diag_severity sev, ir_loc loc, const char *fmt, ...)
    HLO_PRINTF(4, 5);
void ir_diag_error(ir_diag_list *d, ir_loc loc, const char *fmt, ...) HLO_PRINTF(3, 4);
bool ir_diag_too_many(const ir_diag_list *d);
/* Renders every diagnostic to f in the format above. */
void ir_diag_print(const ir_diag_list *d, FILE *f);
/* Renders diagnostic i ("file:line:col: error: msg\nline\n   ^\n") into a malloc'd string. */
char *ir_diag_render(const ir_diag_list *d, int i);
/* A status carrying the first error's rendering, or NULL when there are no errors. */
hlo_status ir_diag_to_status(const ir_diag_list *d);

#endif
