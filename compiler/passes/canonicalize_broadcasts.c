/* canonicalize_broadcasts.c — makes every implicit broadcast explicit.  Pre: verified.
 *
 * For each elementwise binary or compare instruction whose operand dimensions differ from
 * its result's (scalar, degenerate dimensions, broadcast_dimensions, auto_broadcast=numpy or
 * pdpd), and for broadcast(x) with auto_broadcast=bidirectional, each such operand becomes
 * reshape (dropping the size-1 dimensions that are broadcast) + broadcast(dimensions=...), and
 * the extension attributes are cleared.  Afterwards the module verifies under --strict.
 * Tests: testdata/broadcast (each valid case is canonicalized and re-verified strictly).
 */
#include <stdio.h>
#include <string.h>

#include "passes/passes.h"

/* Where operand dimension i lands in the result (map[i]), by the rule that applies. */
static void dim_map(const ir_instr *in, int which, const ir_shape *op, const ir_shape *res, int64_t *map) {
  const ir_broadcast_attrs *bc = &in->attrs.bc;
  const ir_shape *other = in->n_operands > 1 ? in->operands[1 - which]->shape : NULL;
  if (bc->has_broadcast_dimensions && other && op->rank < other->rank && op->rank == bc->broadcast_dimensions.n) {
    for (int i = 0; i < op->rank; i++)
      map[i] = bc->broadcast_dimensions.v[i];
    return;
  }
  if (bc->auto_broadcast == IR_AB_PDPD && which == 1) {
    int brank = op->rank;
    if (bc->axis == -1)
      while (brank > 0 && op->dims[brank - 1] == 1)
        brank--;
    int64_t start = bc->axis == -1 ? res->rank - brank : bc->axis;
    for (int i = 0; i < op->rank; i++)
      map[i] = i < brank ? start + i : -1; /* trailing 1s beyond the match are dropped */
    return;
  }
  for (int i = 0; i < op->rank; i++) /* right-aligned: numpy, degenerate, bidirectional */
    map[i] = res->rank - op->rank + i;
}

static ir_str fresh_name(ir_module *m, const ir_instr *user, const char *what) {
  char buf[512];
  int n = snprintf(buf, sizeof buf, "%.*s.%s", (int)(user->name.len > 400 ? 400 : user->name.len), user->name.p, what);
  return ir_intern(m, buf, (size_t)n);
}

/* Moves the last instruction of c to just before `user`. */
static void move_before(ir_computation *c, ir_instr *user) {
  ir_instr *last = c->instrs[c->n_instrs - 1];
  int at = user->id;
  memmove(&c->instrs[at + 1], &c->instrs[at], (size_t)(c->n_instrs - 1 - at) * sizeof(ir_instr *));
  c->instrs[at] = last;
  for (int i = at; i < c->n_instrs; i++)
    c->instrs[i]->id = i;
}

static hlo_status expand_operand(ir_module *m, ir_instr *in, int which, const ir_shape *res) {
  ir_computation *c = in->parent;
  ir_instr *op = in->operands[which];
  const ir_shape *s = op->shape;
  int64_t map[64], kept_dims[64], kept_map[64];
  int nk = 0;
  dim_map(in, which, s, res, map);
  for (int i = 0; i < s->rank; i++) {
    if (map[i] < 0 || (s->dims[i] == 1 && res->dims[map[i]] != 1))
      continue; /* a degenerate dimension that broadcasts: dropped by the reshape */
    kept_dims[nk] = s->dims[i];
    kept_map[nk++] = map[i];
  }
  ir_instr *src = op;
  if (nk != s->rank) {
    ir_shape *rs = ir_shape_array(m, s->et, nk, kept_dims);
    ir_instr *r = rs ? ir_instr_create(c, IR_OP_RESHAPE, fresh_name(m, in, which ? "rhs.reshape" : "lhs.reshape"),
                                       rs, &src, 1) : NULL;
    if (!r)
      return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
    r->loc = in->loc;
    move_before(c, in);
    src = r;
  }
  ir_shape *bs = ir_shape_array(m, s->et, res->rank, res->dims);
  ir_instr *b = bs ? ir_instr_create(c, IR_OP_BROADCAST, fresh_name(m, in, which ? "rhs.broadcast" : "lhs.broadcast"),
                                     bs, &src, 1) : NULL;
  if (!b)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  b->loc = in->loc;
  b->attrs.has_dimensions = true;
  b->attrs.dimensions = ir_i64_list_copy(m, kept_map, nk);
  b->attrs.bc.axis = -1;
  move_before(c, in);
  in->operands[which] = b;
  return NULL;
}

static hlo_status canonicalize_instr(ir_module *m, ir_instr *in) {
  unsigned flags = ir_opcode_table[in->op].flags;
  bool bidir = in->op == IR_OP_BROADCAST && in->attrs.bc.auto_broadcast == IR_AB_BIDIRECTIONAL;
  if (!(flags & OPF_BROADCASTS) && !bidir)
    return NULL;
  const ir_shape *res = in->shape;
  if (bidir) {
    /* broadcast(x) bidirectional == broadcast to the result under the right-aligned rule. */
    HLO_RETURN_IF_ERROR(expand_operand(m, in, 0, res));
    in->op = IR_OP_COPY; /* of the explicit broadcast expand_operand put in place */
    in->attrs.bc = (ir_broadcast_attrs){.axis = -1};
    in->attrs.has_dimensions = false;
    return NULL;
  }
  for (int k = 0; k < 2; k++)
    if (!ir_shape_same_dims(in->operands[k]->shape, res))
      HLO_RETURN_IF_ERROR(expand_operand(m, in, k, res));
  in->attrs.bc = (ir_broadcast_attrs){.axis = -1};
  return NULL;
}

hlo_status pass_canonicalize_broadcasts(ir_module *m) {
  for (int ci = 0; ci < m->n_comps; ci++) {
    ir_computation *c = m->comps[ci];
    for (int i = 0; i < c->n_instrs; i++)
      c->instrs[i]->id = i;
    /* Iterate over a snapshot: new instructions are inserted before their users. */
    for (int i = 0; i < c->n_instrs; i++) {
      ir_instr *in = c->instrs[i];
      int before = c->n_instrs;
      HLO_RETURN_IF_ERROR(canonicalize_instr(m, in));
      i += c->n_instrs - before;
    }
  }
  ir_rebuild_uses(m);
  return NULL;
}
