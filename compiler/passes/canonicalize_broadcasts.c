/* canonicalize_broadcasts.c — makes every implicit broadcast explicit.  Pre: verified.
 *
 * For each elementwise binary or compare instruction whose operand dimensions differ from
 * its result's (scalar, degenerate dimensions, broadcast_dimensions, auto_broadcast=numpy or
 * pdpd), each such operand becomes reshape (dropping the size-1 dimensions that broadcast,
 * when there are any) + broadcast(dimensions=...), inserted just before the user; broadcast(x)
 * with auto_broadcast=bidirectional becomes a plain broadcast the same way.  The extension
 * attributes are cleared, so the module verifies under --strict afterwards.  New names are
 * the user's plus ".lhs.broadcast", ".rhs.reshape", ... (made unique in the module).  A copy
 * into another float type (XLA's mixed precision) becomes the convert it is.
 * Tests: canonicalize_broadcasts_test.c; testdata/broadcast (each valid case is
 * canonicalized and verified again with --strict).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/pass_names.h"
#include "passes/passes.h"
#include "shape/shape.h"

/* ---- the rewrite ------------------------------------------------------------------------------ */

typedef struct canon {
  ir_module *m;
  pass_names names;
} canon;

static hlo_status oom(void) { return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "canonicalize-broadcasts: out of memory"); }

/* An array shape with `res`'s dimensions (dynamism included), element type et, no layout. */
static ir_shape *dims_like(ir_module *m, ir_etype et, const ir_shape *res) {
  ir_shape *s = ir_shape_array(m, et, res->rank, res->dims);
  if (s)
    s->dyn = res->dyn;
  return s;
}

static ir_instr *new_instr(canon *k, ir_instr *user, ir_opcode op, const char *what, ir_shape *shape, ir_instr *src) {
  ir_str name = pass_names_fresh(&k->names, k->m, user->name, what);
  ir_instr *in = name.p && shape ? ir_instr_create(user->parent, op, name, shape, &src, 1) : NULL;
  if (in)
    in->loc = user->loc;
  return in;
}

/* Operand `which` of `in`, made explicit: reshape (when size-1 dimensions broadcast or pdpd's
 * trailing 1s are dropped) then broadcast to `res`'s dimensions.  For `in` itself a
 * broadcast, the reshape is its new operand and `in` takes the dimensions instead. */
static hlo_status expand_operand(canon *k, ir_instr *in, int which, const ir_shape *res) {
  const ir_shape *s = in->operands[which]->shape;
  int64_t *map = ir_arena_alloc_array(&k->m->arena, (size_t)(s->rank + 1), sizeof(int64_t));
  int64_t *kept_dims = ir_arena_alloc_array(&k->m->arena, (size_t)(s->rank + 1), sizeof(int64_t));
  int64_t *kept_map = ir_arena_alloc_array(&k->m->arena, (size_t)(s->rank + 1), sizeof(int64_t));
  if (!map || !kept_dims || !kept_map)
    return oom();
  if (!shape_broadcast_operand_map(in, which, map))
    return hlo_status_make(HLO_INTERNAL, "canonicalize-broadcasts: %%%s does not broadcast its operand %d (not verified?)",
                           in->name.p, which);
  int nk = 0;
  for (int i = 0; i < s->rank; i++)
    if (map[i] >= res->rank || (i > 0 && map[i] >= 0 && map[i] <= map[i - 1]))
      return hlo_status_make(HLO_INTERNAL, "canonicalize-broadcasts: %%%s: operand %d maps outside its result", in->name.p,
                             which);
  for (int i = 0; i < s->rank; i++) {
    if (map[i] < 0 || (s->dims[i] == 1 && res->dims[map[i]] != 1))
      continue; /* a degenerate dimension that broadcasts: the reshape drops it */
    kept_dims[nk] = s->dims[i];
    kept_map[nk++] = map[i];
  }
  bool self = in->op == IR_OP_BROADCAST;
  const char *side = which ? "rhs" : "lhs";
  char what[32];
  ir_instr *src = in->operands[which];
  if (nk != s->rank) {
    snprintf(what, sizeof what, "%s%s", self ? "" : side, self ? "reshape" : ".reshape");
    src = new_instr(k, in, IR_OP_RESHAPE, what, ir_shape_array(k->m, s->et, nk, kept_dims), src);
    if (!src)
      return oom();
  }
  if (self) {
    in->operands[0] = src;
    in->attrs.has_dimensions = true;
    in->attrs.dimensions = ir_i64_list_copy(k->m, kept_map, nk);
    return nk && !in->attrs.dimensions.v ? oom() : NULL;
  }
  snprintf(what, sizeof what, "%s.broadcast", side);
  ir_instr *b = new_instr(k, in, IR_OP_BROADCAST, what, dims_like(k->m, s->et, res), src);
  if (!b)
    return oom();
  b->attrs.has_dimensions = true;
  b->attrs.dimensions = ir_i64_list_copy(k->m, kept_map, nk);
  if (nk && !b->attrs.dimensions.v)
    return oom();
  in->operands[which] = b;
  return NULL;
}

static bool has_extension_attrs(const ir_instr *in) {
  const ir_broadcast_attrs *bc = &in->attrs.bc;
  return bc->has_broadcast_dimensions || bc->auto_broadcast != IR_AB_NONE || bc->axis != -1;
}

static hlo_status canonicalize_instr(canon *k, ir_instr *in) {
  if (in->op == IR_OP_COPY && in->shape && in->n_operands == 1 && in->operands[0]->shape &&
      in->shape->et != in->operands[0]->shape->et) {
    in->op = IR_OP_CONVERT; /* a mixed-precision copy (shape/infer_data.c) converts */
    return NULL;
  }
  bool bidir = in->op == IR_OP_BROADCAST && in->attrs.bc.auto_broadcast == IR_AB_BIDIRECTIONAL;
  if (!(ir_opcode_table[in->op].flags & OPF_BROADCASTS) && !bidir)
    return NULL;
  const ir_shape *res = in->shape;
  if (!res || ir_shape_is_tuple(res) || in->n_operands < 1)
    return NULL;
  for (int w = 0; w < (bidir ? 1 : in->n_operands); w++)
    if (bidir || !ir_shape_same_dims(in->operands[w]->shape, res))
      HLO_RETURN_IF_ERROR(expand_operand(k, in, w, res));
  if (has_extension_attrs(in))
    in->attrs.bc = (ir_broadcast_attrs){.axis = -1};
  return NULL;
}

static hlo_status canonicalize_computation(canon *k, ir_computation *c) {
  int n0 = c->n_instrs;
  int *made = calloc((size_t)(n0 ? n0 : 1), sizeof *made);
  if (!made)
    return oom();
  hlo_status st = NULL;
  for (int i = 0; i < n0 && !st; i++) {
    int before = c->n_instrs;
    st = canonicalize_instr(k, c->instrs[i]);
    made[i] = c->n_instrs - before;
  }
  if (!st && c->n_instrs != n0)
    st = pass_place_new_instrs(c, n0, made) ? NULL : oom();
  free(made);
  return st;
}

hlo_status pass_canonicalize_broadcasts(ir_module *m) {
  canon k = {.m = m};
  hlo_status st = pass_names_init(&k.names, m) ? NULL : oom();
  for (int ci = 0; ci < m->n_comps && !st; ci++)
    st = canonicalize_computation(&k, m->comps[ci]);
  pass_names_free(&k.names);
  ir_rebuild_uses(m);
  return st;
}
