/* pass_build.c — new instructions for passes (pass_build.h). */
#include <stdlib.h>
#include <string.h>

#include "passes/pass_build.h"

bool pass_builder_init(pass_builder *b, ir_module *m) {
  memset(b, 0, sizeof *b);
  b->m = m;
  return pass_names_init(&b->names, m);
}

void pass_builder_deinit(pass_builder *b) { pass_names_free(&b->names); }

ir_shape *pass_build_array(pass_builder *b, ir_etype et, int rank, const int64_t *dims) {
  ir_shape *s = ir_shape_array(b->m, et, rank, dims);
  if (s)
    ir_shape_set_default_layout(b->m, s);
  return s;
}

ir_instr *pass_build_instr(pass_builder *b, ir_opcode op, const char *what, ir_shape *shape, ir_instr *const *ops, int n) {
  ir_str name = pass_names_fresh(&b->names, b->m, b->user->name, what);
  ir_instr *in = name.p && shape ? ir_instr_create(b->user->parent, op, name, shape, ops, n) : NULL;
  if (in)
    in->loc = b->user->loc;
  return in;
}

ir_instr *pass_build_broadcast(pass_builder *b, ir_instr *x, ir_shape *to, const int64_t *map, const char *what) {
  ir_instr *r = pass_build_instr(b, IR_OP_BROADCAST, what, to, &x, 1);
  if (r) {
    r->attrs.has_dimensions = true;
    r->attrs.dimensions = ir_i64_list_copy(b->m, map, x->shape->rank);
    if (x->shape->rank && !r->attrs.dimensions.v)
      return NULL;
  }
  return r;
}

ir_instr *pass_build_binary(pass_builder *b, ir_opcode op, const char *what, ir_shape *s, ir_instr *x, ir_instr *y) {
  ir_instr *ops[2] = {x, y};
  return pass_build_instr(b, op, what, s, ops, 2);
}

ir_instr *pass_build_compare(pass_builder *b, const char *what, ir_shape *s, ir_instr *x, ir_instr *y, ir_cmp_dir dir) {
  ir_instr *c = pass_build_binary(b, IR_OP_COMPARE, what, s, x, y);
  if (c)
    c->attrs.u.compare.dir = dir;
  return c;
}

ir_instr *pass_build_iota(pass_builder *b, const char *what, ir_shape *s, int64_t dim) {
  ir_instr *r = pass_build_instr(b, IR_OP_IOTA, what, s, NULL, 0);
  if (r)
    r->attrs.u.iota_dimension = dim;
  return r;
}

ir_instr *pass_build_constant(pass_builder *b, const char *what, ir_shape *s, const void *data) {
  int64_t n, nb;
  if (!s || !ir_shape_num_elements(s, &n) || !ir_shape_byte_size(s, &nb))
    return NULL;
  ir_literal *lit = ir_arena_alloc(&b->m->arena, sizeof *lit);
  void *bytes = ir_arena_alloc(&b->m->arena, (size_t)(nb ? nb : 1));
  if (!lit || !bytes)
    return NULL;
  memset(lit, 0, sizeof *lit);
  if (data)
    memcpy(bytes, data, (size_t)nb);
  else
    memset(bytes, 0, (size_t)(nb ? nb : 1)); /* all-zero bits are zero in every numeric type */
  lit->shape = s;
  lit->data = bytes;
  lit->nbytes = nb;
  ir_instr *c = pass_build_instr(b, IR_OP_CONSTANT, what, s, NULL, 0);
  if (c)
    c->attrs.u.literal = lit;
  return c;
}

hlo_status pass_build_rewrite_each(pass_builder *b, ir_computation *c, bool (*wants)(const ir_instr *),
                                   hlo_status (*rewrite)(pass_builder *, ir_instr *), const char *pass) {
  int n0 = c->n_instrs;
  int *made = calloc((size_t)(n0 ? n0 : 1), sizeof *made);
  if (!made)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "%s: out of memory", pass);
  hlo_status st = NULL;
  bool any = false;
  for (int i = 0; i < n0 && !st; i++) {
    ir_instr *in = c->instrs[i];
    if (!wants(in))
      continue;
    int before = c->n_instrs;
    b->user = in;
    st = rewrite(b, in);
    any = true;
    made[i] = c->n_instrs - before;
  }
  if (!st && c->n_instrs != n0 && !pass_place_new_instrs(c, n0, made))
    st = hlo_status_make(HLO_RESOURCE_EXHAUSTED, "%s: out of memory", pass);
  free(made);
  if (!st && any && !ir_computation_remove_dead(c)) /* the rewritten instructions */
    st = hlo_status_make(HLO_RESOURCE_EXHAUSTED, "%s: out of memory", pass);
  return st;
}
