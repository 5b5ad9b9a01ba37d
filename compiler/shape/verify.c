/* verify.c — shape_verify_module: the structure checks (a root in each computation,
 * operands defined earlier in the same computation, fixed operand counts from opcodes.def,
 * called computations present, no recursion), then per instruction the family's inference
 * rule through the dispatch table below; omitted shapes are filled with the inferred ones and
 * written shapes must equal them (element type and dims; layouts ignored).  Parameters are
 * checked against the written signature and the entry against entry_computation_layout.
 * An instruction that fails is marked and its users are skipped (no cascades).
 * Tests: testdata/verify/err, testdata/broadcast, shape_test.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape/shape_internal.h"

const shape_family_rule shape_family_rules[IR_FAM_COUNT] = {
    [IR_FAM_PARAMETER] = {.infer = shape_infer_parameter},
    [IR_FAM_CONSTANT] = {.infer = shape_infer_constant},
    [IR_FAM_IOTA] = {.infer = shape_infer_iota},
    [IR_FAM_REPLICA_ID] = {.infer = shape_infer_replica_id},
    [IR_FAM_TOKEN] = {.infer = shape_infer_token},
    [IR_FAM_UNARY] = {.infer = shape_infer_unary},
    [IR_FAM_BINARY] = {.infer = shape_infer_binary},
    [IR_FAM_COMPARE] = {.infer = shape_infer_compare},
    [IR_FAM_SELECT] = {.infer = shape_infer_select},
    [IR_FAM_CLAMP] = {.infer = shape_infer_clamp},
    [IR_FAM_CONVERT] = {.infer = shape_infer_convert},
    [IR_FAM_BITCAST_CONVERT] = {.infer = shape_infer_bitcast_convert},
    [IR_FAM_REDUCE_PRECISION] = {.infer = shape_infer_reduce_precision},
    [IR_FAM_STOCHASTIC_CONVERT] = {.infer = shape_infer_stochastic_convert},
    [IR_FAM_BROADCAST] = {.infer = shape_infer_broadcast},
    [IR_FAM_RESHAPE] = {.infer = shape_infer_reshape},
    [IR_FAM_DYNAMIC_RESHAPE] = {.infer = shape_infer_dynamic_reshape},
    [IR_FAM_TRANSPOSE] = {.infer = shape_infer_transpose},
    [IR_FAM_SLICE] = {.infer = shape_infer_slice},
    [IR_FAM_DYNAMIC_SLICE] = {.infer = shape_infer_dynamic_slice},
    [IR_FAM_DYNAMIC_UPDATE_SLICE] = {.infer = shape_infer_dynamic_update_slice},
    [IR_FAM_CONCATENATE] = {.infer = shape_infer_concatenate},
    [IR_FAM_PAD] = {.infer = shape_infer_pad},
    [IR_FAM_REVERSE] = {.infer = shape_infer_reverse},
    [IR_FAM_COPY] = {.infer = shape_infer_copy},
    [IR_FAM_BITCAST] = {.infer = shape_infer_bitcast},
    [IR_FAM_GATHER] = {.infer = shape_infer_gather},
    [IR_FAM_SCATTER] = {.infer = shape_infer_scatter},
    [IR_FAM_DIMENSION_SIZE] = {.infer = shape_infer_dimension_size},
    [IR_FAM_TUPLE] = {.infer = shape_infer_tuple},
    [IR_FAM_GET_TUPLE_ELEMENT] = {.infer = shape_infer_get_tuple_element},
    [IR_FAM_OPT_BARRIER] = {.infer = shape_infer_opt_barrier},
    [IR_FAM_DOMAIN] = {.infer = shape_infer_domain},
    [IR_FAM_REDUCE] = {.infer = shape_infer_reduce},
    [IR_FAM_REDUCE_WINDOW] = {.infer = shape_infer_reduce_window},
    [IR_FAM_SELECT_AND_SCATTER] = {.infer = shape_infer_select_and_scatter},
    [IR_FAM_MAP] = {.infer = shape_infer_map},
    [IR_FAM_SCAN] = {.infer = shape_infer_scan},
    [IR_FAM_SORT] = {.infer = shape_infer_sort},
    [IR_FAM_TOPK] = {.infer = shape_infer_topk},
    [IR_FAM_DOT] = {.infer = shape_infer_dot},
    [IR_FAM_CONVOLUTION] = {.infer = shape_infer_convolution},
    [IR_FAM_FFT] = {.infer = shape_infer_fft},
    [IR_FAM_CHOLESKY] = {.infer = shape_infer_cholesky},
    [IR_FAM_TRIANGULAR_SOLVE] = {.infer = shape_infer_triangular_solve},
    [IR_FAM_BATCH_NORM] = {.infer = shape_infer_batch_norm},
    [IR_FAM_WHILE] = {.infer = shape_infer_while},
    [IR_FAM_CONDITIONAL] = {.infer = shape_infer_conditional},
    [IR_FAM_CALL] = {.infer = shape_infer_call},
    [IR_FAM_FUSION] = {.infer = shape_infer_fusion},
    [IR_FAM_CUSTOM_CALL] = {.infer = shape_infer_custom_call},
    [IR_FAM_RNG] = {.infer = shape_infer_rng},
    [IR_FAM_RNG_BIT_GENERATOR] = {.infer = shape_infer_rng_bit_generator},
    [IR_FAM_RNG_STATE] = {.infer = shape_infer_rng_state},
    [IR_FAM_INFEED] = {.infer = shape_infer_infeed},
    [IR_FAM_OUTFEED] = {.infer = shape_infer_outfeed},
    [IR_FAM_SEND] = {.infer = shape_infer_send},
    [IR_FAM_RECV] = {.infer = shape_infer_recv},
    [IR_FAM_COLLECTIVE] = {.infer = shape_infer_collective},
    [IR_FAM_ASYNC_DONE] = {.infer = shape_infer_async_done},
    [IR_FAM_ASYNC] = {.infer = shape_infer_async},
    [IR_FAM_COPY_ASYNC] = {.infer = shape_infer_copy_async},
    [IR_FAM_MISC] = {.infer = shape_infer_misc},
};

ir_shape *shape_infer_instr(shape_ctx *x, ir_instr *in) {
  shape_infer_fn f = shape_family_rules[ir_opcode_table[in->op].family].infer;
  if (!f)
    return shape_fail(x, in, "no shape rule for '%s'", ir_opcode_table[in->op].spelling);
  return f(x, in);
}

/* ---- structure ------------------------------------------------------------------------------ */

enum { UNSEEN = 0, IN_PROGRESS = 1, DONE_OK = 2, DONE_BAD = 3 };

typedef struct verifier {
  shape_ctx x;
  unsigned char *comp_state; /* per computation id */
  unsigned char *async_run;  /* per computation id: run by an async-start */
} verifier;

/* Operands exist, live in the same computation and come earlier; the fixed arity holds;
 * called computations exist.  Uses ids as positions (set by the caller). */
static bool structure_ok(shape_ctx *x, const ir_computation *c, ir_instr *in, int pos) {
  int arity = ir_opcode_table[in->op].arity;
  if (arity >= 0 && in->n_operands != arity)
    return shape_error(x, in, "'%s' takes %d operand%s but has %d", ir_opcode_table[in->op].spelling, arity,
                       arity == 1 ? "" : "s", in->n_operands);
  for (int i = 0; i < in->n_operands; i++) {
    const ir_instr *o = in->operands[i];
    if (!o)
      return shape_error(x, in, "operand %d is missing", i);
    if (o->parent != c || o->id >= pos || c->instrs[o->id] != o)
      return shape_error(x, in, "operand %d %%%s is not defined before its use in %%%s", i, o->name.p, c->name.p);
  }
  for (int i = 0; i < in->n_called; i++)
    if (!in->called[i] || !in->called[i]->root)
      return shape_error(x, in, "called computation %d is missing or empty", i);
  return true;
}

/* The operands and callees verified cleanly (so this instruction can be checked). */
static bool inputs_ready(const verifier *v, const ir_instr *in, const unsigned char *bad) {
  for (int i = 0; i < in->n_operands; i++)
    if (bad[in->operands[i]->id] || !in->operands[i]->shape)
      return false;
  for (int i = 0; i < in->n_called; i++)
    if (v->comp_state[in->called[i]->id] != DONE_OK || !in->called[i]->root->shape)
      return false;
  return true;
}

/* Infers, fills or compares the result shape of one instruction. */
static bool check_result(shape_ctx *x, ir_instr *in) {
  x->errors_at_start_of_instr = x->diags->n_errors;
  ir_shape *inferred = shape_infer_instr(x, in);
  bool clean = x->diags->n_errors == x->errors_at_start_of_instr;
  if (!inferred) {
    if (clean && !in->shape)
      return shape_error(x, in, "the result shape of '%s' cannot be inferred; write it",
                         ir_opcode_table[in->op].spelling);
    return clean && in->shape;
  }
  if (!in->shape) {
    in->shape = inferred;
    return true;
  }
  if (shape_compatible(in->shape, inferred) || x->keep_written_shapes)
    return true;
  char a[512], b[512];
  return shape_error(x, in, "result shape %s does not match the inferred shape %s", shape_str(in->shape, a, sizeof a),
                     shape_str(inferred, b, sizeof b));
}

/* The written signature "(params) -> result" against parameters and root. */
static bool signature_ok(shape_ctx *x, const ir_computation *c) {
  char a[256], b[256];
  if (!c->sig_params && !c->sig_result)
    return true;
  if (c->n_sig_params != c->n_params) {
    ir_diag_error(x->diags, c->loc, "computation %%%s: the signature has %d parameters but the body has %d",
                  c->name.p, c->n_sig_params, c->n_params);
    return false;
  }
  if (c->sig_result && c->root->shape && !shape_compatible(c->sig_result, c->root->shape))
    return shape_error(x, c->root, "the signature of %%%s gives the result the shape %s but the root is %s", c->name.p,
                       shape_str(c->sig_result, a, sizeof a), shape_str(c->root->shape, b, sizeof b));
  return true;
}

static bool entry_layout_ok(shape_ctx *x, const ir_computation *c) {
  const ir_module *m = c->module;
  if (!c->is_entry || !m->has_entry_layout)
    return true;
  char a[256], b[256];
  if (m->n_entry_layout_params != c->n_params) {
    ir_diag_error(x->diags, c->loc, "%%%s: entry_computation_layout has %d parameters but the entry has %d",
                  c->name.p, m->n_entry_layout_params, c->n_params);
    return false;
  }
  for (int i = 0; i < c->n_params; i++)
    if (c->params[i]->shape && !shape_compatible(m->entry_layout_params[i], c->params[i]->shape))
      return shape_error(x, c->params[i], "entry_computation_layout gives parameter %d the shape %s but it is %s", i,
                         shape_str(m->entry_layout_params[i], a, sizeof a), shape_str(c->params[i]->shape, b, sizeof b));
  if (m->entry_layout_result && c->root->shape && !shape_compatible(m->entry_layout_result, c->root->shape))
    return shape_error(x, c->root, "entry_computation_layout gives the result the shape %s but the root is %s",
                       shape_str(m->entry_layout_result, a, sizeof a), shape_str(c->root->shape, b, sizeof b));
  return true;
}

static bool verify_computation(verifier *v, ir_computation *c);

/* Callees first, so their root shapes are known when a caller is checked. */
static bool verify_callees(verifier *v, ir_computation *c) {
  bool ok = true;
  for (int i = 0; i < c->n_instrs; i++)
    for (int k = 0; k < c->instrs[i]->n_called; k++)
      if (c->instrs[i]->called[k])
        ok &= verify_computation(v, c->instrs[i]->called[k]);
  return ok;
}

static bool verify_body(verifier *v, ir_computation *c) {
  shape_ctx *x = &v->x;
  if (!c->root || c->root->parent != c) {
    ir_diag_error(x->diags, c->loc, "computation %%%s has no ROOT instruction", c->name.p);
    return false;
  }
  for (int i = 0; i < c->n_instrs; i++)
    c->instrs[i]->id = i;
  unsigned char *bad = calloc((size_t)c->n_instrs + 1, 1);
  if (!bad) {
    ir_diag_error(x->diags, c->loc, "out of memory");
    return false;
  }
  bool ok = true;
  /* XLA's parser builds an async chain's computation from the chain's shapes and leaves it
   * unverified (its tests parse a dot-start with no contracting dimensions, a late-bound call
   * whose body's shapes were never reconciled); compiling verifies it in full. */
  x->keep_written_shapes = !x->opts->async_chains && v->async_run && v->async_run[c->id];
  for (int i = 0; i < c->n_instrs && !ir_diag_too_many(x->diags); i++) {
    ir_instr *in = c->instrs[i];
    bool good = structure_ok(x, c, in, i) && inputs_ready(v, in, bad) && check_result(x, in);
    bad[i] = !good;
    ok &= good;
  }
  free(bad);
  bool sig = x->keep_written_shapes || signature_ok(x, c);
  x->keep_written_shapes = false;
  return ok && sig && entry_layout_ok(x, c);
}

static bool verify_computation(verifier *v, ir_computation *c) {
  unsigned char *st = &v->comp_state[c->id];
  if (*st == DONE_OK || *st == DONE_BAD)
    return *st == DONE_OK;
  if (*st == IN_PROGRESS) {
    ir_diag_error(v->x.diags, c->loc, "computation %%%s calls itself (recursion is not allowed in HLO)", c->name.p);
    return false;
  }
  *st = IN_PROGRESS;
  bool ok = verify_callees(v, c);
  ok = verify_body(v, c) && ok;
  v->comp_state[c->id] = ok ? DONE_OK : DONE_BAD;
  return ok;
}

bool shape_verify_module(ir_module *m, const shape_options *opts, ir_diag_list *diags) {
  static const shape_options defaults = {0};
  verifier v = {{m, opts ? opts : &defaults, diags, 0, false}, calloc((size_t)m->n_comps + 1, 1), NULL};
  if (!v.comp_state) {
    ir_diag_error(diags, (ir_loc){0, 0}, "out of memory");
    return false;
  }
  for (int i = 0; i < m->n_comps; i++)
    m->comps[i]->id = i;
  v.async_run = calloc((size_t)m->n_comps + 1, 1);
  for (int i = 0; v.async_run && i < m->n_comps; i++)
    for (int k = 0; k < m->comps[i]->n_instrs; k++) {
      const ir_instr *in = m->comps[i]->instrs[k];
      for (int j = 0; in->op == IR_OP_ASYNC_START && j < in->n_called; j++)
        if (in->called[j])
          v.async_run[in->called[j]->id] = 1;
      if (in->op == IR_OP_ASYNC_START && in->attrs.u.async.wrapped_comp)
        v.async_run[in->attrs.u.async.wrapped_comp->id] = 1;
    }
  int before = diags->n_errors;
  for (int i = 0; i < m->n_comps && !ir_diag_too_many(diags); i++)
    verify_computation(&v, m->comps[i]);
  free(v.comp_state);
  free(v.async_run);
  return diags->n_errors == before;
}

ir_shape *shape_infer(ir_instr *in, const shape_options *opts, ir_diag_list *diags) {
  static const shape_options defaults = {0};
  shape_ctx x = {in->parent->module, opts ? opts : &defaults, diags, diags->n_errors, false};
  return shape_infer_instr(&x, in);
}
