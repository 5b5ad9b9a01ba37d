/* infer_control.c — shape rules of the families that call computations or wrap values:
 * parameter (against the computation's signature), while, conditional (pred and indexed
 * forms), call, fusion, custom-call (result as written; operand layout constraints), the
 * async wrappers (`((operands), result, context...)`), copy-start/-done, opt-barrier and
 * domain.  Tests: testdata/verify/err, shape_test.c.
 */
#include <stdio.h>
#include <string.h>

#include "shape/shape_internal.h"

/* Computation c takes exactly the shapes of ops[0..n) as its parameters. */
static bool params_match(shape_ctx *x, ir_instr *in, const ir_computation *c, ir_instr *const *ops, int n,
                         const char *role) {
  if (c->n_params != n)
    return shape_error(x, in, "%s %%%s takes %d parameter%s but gets %d", role, c->name.p, c->n_params,
                       c->n_params == 1 ? "" : "s", n);
  char a[256], b[256];
  for (int i = 0; i < n; i++)
    if (!shape_compatible(c->params[i]->shape, ops[i]->shape))
      return shape_error(x, in, "%s %%%s parameter %d is %s but the operand is %s", role, c->name.p, i,
                         shape_str(c->params[i]->shape, a, sizeof a), shape_str(ops[i]->shape, b, sizeof b));
  return true;
}

/* ---- parameter ---------------------------------------------------------------------------- */

ir_shape *shape_infer_parameter(shape_ctx *x, ir_instr *in) {
  const ir_computation *c = in->parent;
  int64_t k = in->attrs.u.parameter_number;
  if (!shape_need_operands(x, in, 0) || !in->shape)
    return NULL;
  if (k < 0 || (c->n_params && k >= c->n_params))
    return shape_fail(x, in, "parameter number %lld is out of range", (long long)k);
  if (!c->sig_params || k >= c->n_sig_params || shape_compatible(c->sig_params[k], in->shape))
    return NULL; /* the written shape is the result */
  char a[256], b[256];
  return shape_fail(x, in, "the signature of %%%s gives parameter %lld the shape %s but it is declared %s", c->name.p,
                    (long long)k, shape_str(c->sig_params[k], a, sizeof a), shape_str(in->shape, b, sizeof b));
}

/* ---- while, conditional, call, fusion ----------------------------------------------------- */

ir_shape *shape_infer_while(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 1) || !shape_need_called(x, in, 2, "condition and body"))
    return NULL;
  const ir_computation *cond = in->called[0], *body = in->called[1];
  const ir_shape *state = shape_operand(in, 0);
  if (!params_match(x, in, cond, in->operands, 1, "while condition") ||
      !params_match(x, in, body, in->operands, 1, "while body"))
    return NULL;
  char a[256], b[256];
  if (!shape_is_scalar_of(cond->root->shape, IR_PRED))
    return shape_fail(x, in, "while condition %%%s must return pred[], not %s", cond->name.p,
                      shape_str(cond->root->shape, a, sizeof a));
  if (!shape_compatible(body->root->shape, state))
    return shape_fail(x, in, "while body %%%s returns %s but the loop state is %s", body->name.p,
                      shape_str(body->root->shape, a, sizeof a), shape_str(state, b, sizeof b));
  return ir_shape_clone(x->m, state);
}

ir_shape *shape_infer_conditional(shape_ctx *x, ir_instr *in) {
  if (!shape_need_min_operands(x, in, 1) || !shape_need_array(x, in, 0))
    return NULL;
  const ir_shape *p = shape_operand(in, 0);
  int nb = in->n_called;
  char a[256], b[256];
  if (p->rank != 0 || (p->et != IR_PRED && p->et != IR_S32))
    return shape_fail(x, in, "conditional's first operand must be pred[] or s32[], not %s", shape_str(p, a, sizeof a));
  if (p->et == IR_PRED && nb != 2)
    return shape_fail(x, in, "a pred conditional needs exactly two branches, not %d", nb);
  if (nb < 1)
    return shape_fail(x, in, "an s32 conditional needs at least one branch");
  if (in->n_operands != nb + 1)
    return shape_fail(x, in, "conditional has %d branches but %d branch operands", nb, in->n_operands - 1);
  const ir_shape *r0 = in->called[0]->root->shape;
  for (int i = 0; i < nb; i++) {
    if (!params_match(x, in, in->called[i], &in->operands[i + 1], 1, "branch"))
      return NULL;
    const ir_shape *ri = in->called[i]->root->shape;
    if (!shape_compatible(ri, r0))
      return shape_fail(x, in, "branch %%%s returns %s but branch %%%s returns %s", in->called[i]->name.p,
                        shape_str(ri, a, sizeof a), in->called[0]->name.p, shape_str(r0, b, sizeof b));
  }
  return ir_shape_clone(x->m, r0);
}

ir_shape *shape_infer_call(shape_ctx *x, ir_instr *in) {
  if (!shape_need_called(x, in, 1, "to_apply") ||
      !params_match(x, in, in->called[0], in->operands, in->n_operands, "computation"))
    return NULL;
  return ir_shape_clone(x->m, in->called[0]->root->shape);
}

ir_shape *shape_infer_fusion(shape_ctx *x, ir_instr *in) {
  if (!shape_need_called(x, in, 1, "calls=%computation"))
    return NULL;
  const ir_computation *c = in->called[0];
  if (c->n_params != in->n_operands)
    return shape_fail(x, in, "fused computation %%%s takes %d parameters but fusion has %d operands", c->name.p,
                      c->n_params, in->n_operands);
  for (int i = 0; i < in->n_operands; i++)
    if (!shape_compatible(c->params[i]->shape, shape_operand(in, i)))
      return shape_fail(x, in, "fused computation %%%s parameter %d does not match operand %d", c->name.p, i, i);
  return ir_shape_clone(x->m, c->root->shape);
}

/* ---- custom-call -------------------------------------------------------------------------- */

ir_shape *shape_infer_custom_call(shape_ctx *x, ir_instr *in) {
  typeof(in->attrs.u.custom_call) *cc = &in->attrs.u.custom_call;
  if (!cc->has_operand_layout_constraints)
    return NULL; /* the result is whatever the text says */
  if (cc->n_operand_layout_constraints != in->n_operands)
    return shape_fail(x, in, "operand_layout_constraints has %d shapes but the custom-call has %d operands",
                      cc->n_operand_layout_constraints, in->n_operands);
  char a[256], b[256];
  for (int i = 0; i < in->n_operands; i++)
    if (!shape_compatible(cc->operand_layout_constraints[i], shape_operand(in, i)))
      return shape_fail(x, in, "operand_layout_constraints gives operand %d the shape %s but it is %s", i,
                        shape_str(cc->operand_layout_constraints[i], a, sizeof a),
                        shape_str(shape_operand(in, i), b, sizeof b));
  return NULL;
}

/* ---- async wrappers ------------------------------------------------------------------------ */

/* An async value: a tuple ((operands...), result, context...). */
static bool async_value_ok(shape_ctx *x, ir_instr *in, const ir_shape *s, const char *what) {
  char a[256];
  if (s && s->et == IR_TUPLE && s->n_elems >= 2 && s->elems[0]->et == IR_TUPLE)
    return true;
  return shape_error(x, in, "%s must be a ((operands...), result, context...) tuple, not %s", what,
                     shape_kind_str(s, a, sizeof a));
}

/* The start of an async chain (start -> update... -> done). */
static const ir_instr *chain_start(const ir_instr *in) {
  while (in->op != IR_OP_ASYNC_START && in->n_operands > 0)
    in = in->operands[0];
  return in;
}

/* Whether the chain runs the computation it names: the generic form, or the compact call-start
 * (whose to_apply= is the called computation); other compact forms wrap an opcode whose
 * called computations (a reducer, a comparator) are not what the wrapper runs. */
static const ir_computation *chain_comp(const ir_instr *start) {
  if (start->op != IR_OP_ASYNC_START)
    return NULL;
  if (start->attrs.u.async.wrapped_comp)
    return start->attrs.u.async.wrapped_comp;
  if (start->n_called == 1 && (!start->attrs.u.async.compact || start->attrs.u.async.wrapped_opcode == IR_OP_CALL))
    return start->called[0];
  return NULL;
}

/* A result slot written `()`: the output is bound later in the chain (late binding). */
static bool unbound(const ir_shape *s) { return s->et == IR_TUPLE && s->n_elems == 0; }

/* The result slot holds the computation's result (or that result alone in a 1-tuple). */
static bool result_ok(const ir_shape *slot, const ir_shape *root) {
  return shape_compatible(slot, root) ||
         (slot->et == IR_TUPLE && slot->n_elems == 1 && shape_compatible(slot->elems[0], root));
}

/* The operands bound so far at `in`: the start's, then each update's beyond the first. */
static int bound_operands(const ir_instr *in, ir_instr **out, int cap) {
  int n = in->op == IR_OP_ASYNC_START || in->n_operands == 0 ? 0 : bound_operands(in->operands[0], out, cap);
  for (int i = in->op == IR_OP_ASYNC_START ? 0 : 1; i < in->n_operands && n < cap; i++)
    out[n++] = in->operands[i];
  return n;
}

/* The first element of `in`'s written shape holds exactly the bound operands, which are a
 * prefix of the computation's parameters. */
static bool bound_ok(shape_ctx *x, ir_instr *in) {
  ir_instr *ops[SHAPE_MAX_OPERANDS];
  int n = bound_operands(in, ops, SHAPE_MAX_OPERANDS);
  const ir_instr *st = chain_start(in);
  const ir_computation *c = chain_comp(st);
  if (c && n > c->n_params)
    n = c->n_params; /* operands past the parameters bind output buffers (late-bound outputs) */
  ir_shape *e[SHAPE_MAX_OPERANDS];
  for (int i = 0; i < n; i++)
    e[i] = ops[i]->shape;
  ir_shape *want = shape_tuple_of(x, e, n);
  char a[256], b[256];
  if (!want || !shape_compatible(in->shape->elems[0], want))
    return shape_error(x, in, "the first element of the result, %s, must hold the bound operands %s",
                       shape_str(in->shape->elems[0], a, sizeof a), shape_str(want, b, sizeof b));
  for (int i = 0; c && i < n; i++)
    if (!shape_compatible(c->params[i]->shape, ops[i]->shape))
      return shape_error(x, in, "async computation %%%s parameter %d is %s but the operand is %s", c->name.p, i,
                         shape_str(c->params[i]->shape, a, sizeof a), shape_str(ops[i]->shape, b, sizeof b));
  return true;
}

/* A start's or update's slot may hold the first elements of a tuple result only: the rest
 * are bound later in the chain (XLA's verifier: late binding of tuple outputs). */
static bool partial_result_ok(const ir_shape *slot, const ir_shape *root) {
  if (slot->et != IR_TUPLE || root->et != IR_TUPLE || slot->n_elems > root->n_elems)
    return false;
  for (int i = 0; i < slot->n_elems; i++)
    if (!shape_compatible(slot->elems[i], root->elems[i]))
      return false;
  return true;
}

/* The result slot of `slot` (written on a start or update, or a done's result) against the
 * computation the chain runs. */
static bool slot_ok(shape_ctx *x, ir_instr *in, const ir_shape *slot, const char *what) {
  const ir_instr *st = chain_start(in);
  const ir_computation *c = chain_comp(st);
  if (unbound(slot) || !c || !c->root || !c->root->shape || result_ok(slot, c->root->shape) ||
      (in->op != IR_OP_ASYNC_DONE && partial_result_ok(slot, c->root->shape)))
    return true;
  char a[256], b[256];
  return shape_error(x, in, "%s, %s, must be the result of %%%s, %s", what, shape_str(slot, a, sizeof a),
                     c->name.p, shape_str(c->root->shape, b, sizeof b));
}

/* By the done every parameter of the computation has been bound. */
static bool all_bound(shape_ctx *x, ir_instr *in) {
  ir_instr *ops[SHAPE_MAX_OPERANDS];
  int n = bound_operands(in, ops, SHAPE_MAX_OPERANDS);
  const ir_computation *c = chain_comp(chain_start(in));
  if (!c || n >= c->n_params)
    return true;
  return shape_error(x, in, "async computation %%%s takes %d parameter%s but the chain binds %d operand%s", c->name.p,
                     c->n_params, c->n_params == 1 ? "" : "s", n, n == 1 ? "" : "s");
}

/* The operand's result slot holds the whole result (not () or the first elements of a tuple). */
static bool bound_fully(const ir_instr *in, const ir_shape *slot) {
  const ir_computation *c = chain_comp(chain_start(in));
  if (unbound(slot))
    return false;
  return !c || !c->root || !c->root->shape || result_ok(slot, c->root->shape) ||
         !partial_result_ok(slot, c->root->shape);
}

/* XLA's verifier: every async-start and async-update has exactly one consumer, the next link
 * of its chain (the parser accepts a chain left open; compiling it is refused). */
static bool one_consumer(shape_ctx *x, ir_instr *in) {
  int n = 0;
  for (int k = 0; k < in->n_users; k++)
    n += !(in->users[k]->op == IR_OP_CUSTOM_CALL && ir_str_eq(in->users[k]->attrs.custom_text, "control_dep"));
  if (n == 1)
    return true;
  return shape_error(x, in, "the %s instruction requires one consumer, found %d (XLA's verifier; the chain is "
                     "incomplete, so it cannot be compiled)", ir_opcode_table[in->op].spelling, n);
}

/* The start's own operands against the first element of its shape (as XLA's parser builds the
 * chain from it, a mismatch is the verifier's to find; it holds in every parser test). */
static bool start_operands_ok(shape_ctx *x, ir_instr *in) {
  ir_instr *ops[SHAPE_MAX_OPERANDS];
  int n = bound_operands(in, ops, SHAPE_MAX_OPERANDS);
  ir_shape *e[SHAPE_MAX_OPERANDS];
  for (int i = 0; i < n; i++)
    e[i] = ops[i]->shape;
  ir_shape *want = shape_tuple_of(x, e, n);
  char a[256], b[256];
  if (want && shape_compatible(in->shape->elems[0], want))
    return true;
  return shape_error(x, in, "the first element of the result, %s, must hold the bound operands %s",
                     shape_str(in->shape->elems[0], a, sizeof a), shape_str(want, b, sizeof b));
}

/* async-start: ((bound operands...), result or (), context...); the computation may take more
 * parameters than the start binds (late binding: updates bind the rest). */
static ir_shape *infer_async_start(shape_ctx *x, ir_instr *in) {
  const ir_shape *r = in->shape;
  if (!r || !async_value_ok(x, in, r, "the result of async-start"))
    return NULL;
  if (!x->opts->async_chains) { /* as XLA's parser checks it */
    if (in->attrs.u.async.compact || in->attrs.u.async.wrapped_comp ||
        shape_need_called(x, in, 1, "calls=%computation"))
      start_operands_ok(x, in);
    return NULL;
  }
  if (!one_consumer(x, in))
    return NULL;
  if (in->attrs.u.async.compact && !chain_comp(in)) {
    bound_ok(x, in);
    return NULL; /* a compact form wrapping an op without a computation */
  }
  if ((!in->attrs.u.async.wrapped_comp && !shape_need_called(x, in, 1, "calls=%computation")) || !bound_ok(x, in))
    return NULL;
  slot_ok(x, in, r->elems[1], "the second element of the result");
  return NULL; /* the context elements are as written */
}

/* async-update: the operand's value with further operands bound; async-done: the result.
 * Without async_chains, as XLA's parser: an update is as written (its shape may differ from its
 * operand's, XLA's ShapeMismatch_Allowed), and so is a done. */
ir_shape *shape_infer_async(shape_ctx *x, ir_instr *in) {
  if (in->op == IR_OP_ASYNC_START)
    return infer_async_start(x, in);
  if (!shape_need_min_operands(x, in, 1) || !async_value_ok(x, in, shape_operand(in, 0), "the operand"))
    return NULL;
  if (!x->opts->async_chains) {
    if (in->op == IR_OP_ASYNC_UPDATE && in->shape)
      async_value_ok(x, in, in->shape, "the result of async-update");
    return in->shape ? NULL : ir_shape_clone(x->m, in->op == IR_OP_ASYNC_UPDATE ? shape_operand(in, 0)
                                                                             : shape_operand(in, 0)->elems[1]);
  }
  if (in->op == IR_OP_ASYNC_UPDATE && !one_consumer(x, in))
    return NULL;
  const ir_shape *s = shape_operand(in, 0);
  if (in->op == IR_OP_ASYNC_DONE && !all_bound(x, in))
    return NULL;
  if (in->op == IR_OP_ASYNC_UPDATE) {
    if (in->n_operands == 1 && bound_fully(in, s->elems[1]))
      return ir_shape_clone(x->m, s);
    if (in->shape && async_value_ok(x, in, in->shape, "the result of async-update") && bound_ok(x, in))
      slot_ok(x, in, in->shape->elems[1], "the second element of the result");
    return NULL;
  }
  if (bound_fully(in, s->elems[1]) || !in->shape)
    return ir_shape_clone(x->m, s->elems[1]);
  slot_ok(x, in, in->shape, "the result of async-done");
  return NULL; /* the output is bound here: as written */
}

/* copy-start: (destination, source, u32[] context); copy-done: the destination. */
ir_shape *shape_infer_copy_async(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 1))
    return NULL;
  const ir_shape *s = shape_operand(in, 0);
  if (in->op == IR_OP_COPY_START) {
    ir_shape *e[3] = {ir_shape_clone(x->m, s), ir_shape_clone(x->m, s), ir_shape_scalar(x->m, IR_U32)};
    return shape_tuple_of(x, e, 3);
  }
  char a[256];
  if (s->et != IR_TUPLE || s->n_elems != 3)
    return shape_fail(x, in, "copy-done takes the (destination, source, context) tuple of a copy-start, not %s",
                      shape_kind_str(s, a, sizeof a));
  return ir_shape_clone(x->m, s->elems[0]);
}

/* ---- opt-barrier, domain ------------------------------------------------------------------ */

ir_shape *shape_infer_opt_barrier(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 1))
    return NULL;
  return ir_shape_clone(x->m, shape_operand(in, 0));
}

ir_shape *shape_infer_domain(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 1))
    return NULL;
  return ir_shape_clone(x->m, shape_operand(in, 0));
}
