/* desugar.c — the text forms XLA's parser rewrites, rewritten the same way while building:
 * an inline computation body (to_apply={...}) becomes a named computation placed before its
 * user; a compact async start (dot-start(...)) gets the wrapped computation XLA builds,
 * marked hidden so that the printer writes the compact form back; single-instruction input
 * becomes an entry computation whose undefined operands are parameters.  Later stages see
 * only ordinary computations.  Tests: testdata/parse/ok (round trip), testdata/parse/err.
 */
#include <stdio.h>
#include <string.h>

#include "ir/build_internal.h"

/* ---- inline computation bodies ----------------------------------------------------------- */

/* An attribute written to_apply={ instructions } (XLA's nested computation): the body becomes
 * a computation of its own, named after the computation it is written in, placed before it so
 * that the printer writes callees first; the attribute then names it. */
void irb_begin_inline(ir_builder *b, ir_loc loc) {
  inline_frame *f = ir_arena_alloc(&b->m->arena, sizeof *f);
  if (!f) {
    irb_oom(b, loc);
    return;
  }
  *f = (inline_frame){b->inl, b->cur, b->instrs, b->cur_has_root, b->sig, b->n_ctrl_refs, b->ctrl_base, loc};
  b->inl = f;
  b->sig = NULL;
  b->cur_has_root = false;
  b->instrs = (name_map){0};
  b->ctrl_base = b->n_ctrl_refs;
  ir_str base = f->cur ? f->cur->name : ir_intern(b->m, "inline", 6);
  char buf[512];
  int n;
  do
    n = snprintf(buf, sizeof buf, "%.*s.inline%d", (int)(base.len > 400 ? 400 : base.len), base.p, ++b->gensym);
  while (irb_map_find(&b->comps, (ir_str){buf, (size_t)n}));
  ir_str name = ir_intern(b->m, buf, (size_t)n);
  ir_computation *c = name.p ? ir_computation_add(b->m, name) : NULL;
  if (!c || !irb_map_put(&b->m->arena, &b->comps, name, c, loc)) {
    irb_oom(b, loc);
    b->cur = NULL;
    return;
  }
  c->loc = loc;
  b->cur = c;
}

/* Moves computation c to just before `before` in the module's text order. */
static void place_before(ir_module *m, ir_computation *c, const ir_computation *before) {
  if (!before || before->id > c->id)
    return;
  int at = before->id;
  memmove(&m->comps[at + 1], &m->comps[at], (size_t)(c->id - at) * sizeof *m->comps);
  m->comps[at] = c;
  for (int i = at; i < m->n_comps; i++)
    m->comps[i]->id = i;
}

ir_av *irb_end_inline(ir_builder *b, ir_loc loc, size_t start, size_t end) {
  inline_frame *f = b->inl;
  ir_computation *c = b->cur;
  ir_attr_list none = {0};
  irb_end_computation(b, &none);
  if (!f)
    return NULL;
  b->inl = f->up;
  b->cur = f->cur;
  b->instrs = f->instrs;
  b->cur_has_root = f->cur_has_root;
  b->sig = f->sig;
  b->n_ctrl_refs = f->n_ctrl_refs;
  b->ctrl_base = f->ctrl_base;
  if (!c)
    return NULL;
  place_before(b->m, c, f->cur);
  ir_av *v = irb_av(b, AV_NAME, loc, start, end);
  if (v)
    v->s = c->name;
  return v;
}

/* ---- single-instruction input ------------------------------------------------------------------ */

/* In single-instruction input, an operand nothing defines becomes the next parameter (XLA's
 * create_missing_instruction hook): named as written, or "_N" when only its shape is. */
ir_instr *irb_single_parameter(ir_builder *b, ir_av *v, ir_str n) {
  int k = b->n_single_params++;
  if (!n.p) {
    char buf[32];
    int len = snprintf(buf, sizeof buf, "_%d", k);
    n = ir_intern(b->m, buf, (size_t)len);
  }
  ir_instr *in = n.p ? irb_make_instr(b, IR_OP_PARAMETER, n, v->loc, v->shape, NULL, 0) : NULL;
  if (!in || !irb_register_instr_as(b, in, false))
    return NULL;
  in->attrs.u.parameter_number = k;
  return in;
}

void irb_single_instruction(ir_builder *b, ir_av *name, ir_shape *shape, ir_av *opcode, ir_av *args,
                            ir_attr_list *attrs) {
  if (!opcode)
    return;
  ir_av *cname = irb_av(b, AV_NAME, opcode->loc, opcode->start, opcode->start);
  if (!cname)
    return;
  cname->s = b->m->name.p ? b->m->name : ir_intern(b->m, "module", 6);
  irb_begin_computation(b, cname, true, NULL, NULL);
  b->single = true;
  irb_instruction(b, true, name ? name : cname, shape, opcode, args, attrs);
  b->single = false;
  ir_attr_list none = {0};
  irb_end_computation(b, &none);
}

/* ---- compact async starts ------------------------------------------------------------------------ */

/* A compact start (dot-start(...), custom-call-start(...)) wraps one op: as XLA's parser does,
 * build the computation that runs it (one parameter per operand, the op as ROOT with the
 * start's attributes), hidden from the printer, which writes the compact form back. */
void irb_desugar_compact_start(ir_builder *b, ir_instr *in, ir_opcode wrapped, ir_attr_list *attrs) {
  const ir_shape *s = in->shape;
  if (!s || s->et != IR_TUPLE || s->n_elems < 2 || s->elems[0]->et != IR_TUPLE ||
      (s->elems[1]->et == IR_TUPLE && s->elems[1]->n_elems == 0) || s->elems[0]->n_elems != in->n_operands)
    return; /* the verifier reports the shape; a late-bound form has no op to build yet */
  irb_begin_inline(b, in->loc);
  ir_computation *c = b->cur;
  if (!c) {
    irb_end_inline(b, in->loc, 0, 0);
    return;
  }
  ir_instr *params[64];
  int n = in->n_operands < 64 ? in->n_operands : 64;
  for (int i = 0; i < n; i++) {
    char buf[32];
    int len = snprintf(buf, sizeof buf, "p%d", i);
    params[i] = irb_make_instr(b, IR_OP_PARAMETER, ir_intern(b->m, buf, (size_t)len), in->loc, s->elems[0]->elems[i],
                           NULL, 0);
    if (!params[i] || !irb_register_instr_as(b, params[i], false))
      break;
    params[i]->attrs.u.parameter_number = i;
  }
  ir_instr *r = irb_make_instr(b, wrapped, ir_intern(b->m, ir_opcode_table[wrapped].spelling,
                                                  strlen(ir_opcode_table[wrapped].spelling)),
                           in->loc, s->elems[1], params, n);
  if (r && irb_register_instr_as(b, r, false)) {
    r->attrs.bc.axis = -1;
    if (fam_of(r) == IR_FAM_CONVOLUTION)
      r->attrs.u.conv.feature_group_count = r->attrs.u.conv.batch_group_count = 1;
    else if (fam_of(r) == IR_FAM_CUSTOM_CALL)
      r->attrs.u.custom_call.feature_group_count = r->attrs.u.custom_call.batch_group_count = 1;
    else if (fam_of(r) == IR_FAM_TOPK)
      r->attrs.u.topk.largest = true;
    ir_attr_list own = {0};
    for (int i = 0; i < attrs->n; i++) /* the wrapper's own attributes stay on the start */
      if (!ir_str_eq(attrs->items[i].name, "async_execution_thread"))
        irb_attr_append(b, &own, attrs->items[i].name, attrs->items[i].loc, attrs->items[i].value);
    irb_apply_attrs(b, r, &own);
    irb_check_required(b, r, &own);
    c->root = r;
    b->cur_has_root = true;
  }
  c->hidden = true;
  irb_end_inline(b, in->loc, 0, 0);
  in->attrs.u.async.wrapped_comp = c;
}

