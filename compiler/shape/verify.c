/* verify.c — shape_verify_module: walks computations callees-first, infers each
 * instruction's shape with the family's rule (infer.c), fills shapes the text omitted, and
 * checks written shapes against inferred ones; also the structural checks (a root, called
 * computations, parameter shapes against the signature and the entry layout).
 * Diagnostics start with `%name: `.  Tests: testdata/verify/err, testdata/broadcast.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape/shape_internal.h"

static void shape_text(const ir_shape *s, char *buf, size_t cap) {
  if (s)
    ir_shape_format(s, false, buf, cap);
  else
    snprintf(buf, cap, "(none)");
}

/* Same element type and dims; layouts and dynamic markers ignored. */
static bool compatible(const ir_shape *a, const ir_shape *b) {
  if (a->et != b->et)
    return false;
  if (a->et == IR_TUPLE) {
    if (a->n_elems != b->n_elems)
      return false;
    for (int i = 0; i < a->n_elems; i++)
      if (!compatible(a->elems[i], b->elems[i]))
        return false;
    return true;
  }
  return ir_shape_same_dims(a, b);
}

static bool verify_instr(shape_ctx *x, ir_instr *in) {
  for (int i = 0; i < in->n_operands; i++)
    if (!in->operands[i]->shape)
      return false; /* its own error was reported */
  for (int i = 0; i < in->n_called; i++)
    if (!in->called[i] || !in->called[i]->root || !in->called[i]->root->shape)
      return false;
  ir_shape *inferred = shape_infer_instr(x, in);
  if (!inferred) {
    if (x->diags->n_errors == x->errors_at_start_of_instr && !in->shape)
      shape_error(x, in, "the result shape cannot be inferred; write it");
    return in->shape != NULL && x->diags->n_errors == x->errors_at_start_of_instr;
  }
  if (!in->shape) {
    in->shape = inferred;
    return true;
  }
  if (!compatible(in->shape, inferred)) {
    char a[512], b[512];
    shape_text(in->shape, a, sizeof a);
    shape_text(inferred, b, sizeof b);
    shape_error(x, in, "result shape %s does not match the inferred shape %s", a, b);
    return false;
  }
  return true;
}

static bool verify_signature(shape_ctx *x, ir_computation *c) {
  const ir_module *m = c->module;
  if (!c->is_entry || !m->has_entry_layout)
    return true;
  if (m->n_entry_layout_params != c->n_params) {
    ir_diag_error(x->diags, c->loc, "%%%s: entry_computation_layout has %d parameters but the entry has %d",
                  c->name.p, m->n_entry_layout_params, c->n_params);
    return false;
  }
  for (int i = 0; i < c->n_params; i++)
    if (c->params[i]->shape && !compatible(m->entry_layout_params[i], c->params[i]->shape)) {
      char a[256], b[256];
      shape_text(m->entry_layout_params[i], a, sizeof a);
      shape_text(c->params[i]->shape, b, sizeof b);
      shape_error(x, c->params[i], "entry_computation_layout gives parameter %d the shape %s but it is %s", i,
                  a, b);
      return false;
    }
  if (c->root && c->root->shape && !compatible(m->entry_layout_result, c->root->shape)) {
    char a[256], b[256];
    shape_text(m->entry_layout_result, a, sizeof a);
    shape_text(c->root->shape, b, sizeof b);
    shape_error(x, c->root, "entry_computation_layout gives the result the shape %s but the root is %s", a, b);
    return false;
  }
  return true;
}

enum { UNSEEN = 0, IN_PROGRESS = 1, DONE = 2 };

static bool verify_computation(shape_ctx *x, ir_computation *c, unsigned char *state) {
  if (state[c->id] == DONE)
    return true;
  if (state[c->id] == IN_PROGRESS) {
    ir_diag_error(x->diags, c->loc, "computation %%%s calls itself (recursion is not allowed in HLO)", c->name.p);
    return false;
  }
  state[c->id] = IN_PROGRESS;
  bool ok = true;
  for (int i = 0; i < c->n_instrs; i++)
    for (int k = 0; k < c->instrs[i]->n_called; k++)
      if (c->instrs[i]->called[k])
        ok &= verify_computation(x, c->instrs[i]->called[k], state);
  for (int i = 0; i < c->n_instrs && !ir_diag_too_many(x->diags); i++) {
    x->errors_at_start_of_instr = x->diags->n_errors;
    if (!verify_instr(x, c->instrs[i]))
      ok = false;
  }
  ok &= verify_signature(x, c);
  state[c->id] = DONE;
  return ok;
}

bool shape_verify_module(ir_module *m, const shape_options *opts, ir_diag_list *diags) {
  shape_options defaults = {0};
  shape_ctx x = {m, opts ? opts : &defaults, diags, 0};
  unsigned char *state = calloc((size_t)m->n_comps + 1, 1);
  if (!state) {
    ir_diag_error(diags, (ir_loc){0, 0}, "out of memory");
    return false;
  }
  for (int i = 0; i < m->n_comps; i++)
    m->comps[i]->id = i;
  int before = diags->n_errors;
  for (int i = 0; i < m->n_comps; i++)
    verify_computation(&x, m->comps[i], state);
  free(state);
  return diags->n_errors == before;
}

ir_shape *shape_infer(ir_instr *in, const shape_options *opts, ir_diag_list *diags) {
  shape_options defaults = {0};
  shape_ctx x = {in->parent->module, opts ? opts : &defaults, diags, diags->n_errors};
  return shape_infer_instr(&x, in);
}

void shape_error(shape_ctx *x, const ir_instr *in, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  ir_diag_error(x->diags, in->loc, "%%%s: %s", in->name.p, msg);
}
