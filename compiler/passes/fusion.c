/* fusion.c — groups instructions into XLA's `fusion` form.  Pre: verified, broadcasts canonical.
 *
 * Walking each computation from its last instruction to its first, an array instruction of
 * more than one element that no group has taken becomes the root of a new group: kLoop for an
 * elementwise or data-movement root, kInput for a single-input reduce.  A producer joins the
 * group of its users when every user is in that group (elementwise, convert, broadcast,
 * reshape, bitcast, copy, transpose, slice, pad, concatenate of at most 8 operands, iota,
 * reverse, dynamic-slice, scalar constants).  Broadcasts, iotas and scalar constants are cheap
 * to recompute and join every group that reads them.  An expensive producer (exp, divide, ...)
 * is never fused under a broadcast, which would recompute it per output element; a cheap
 * elementwise producer (not expensive) read by two or three groups is computed in each (the
 * pairwise differences of an N-body sum, read by two reductions, are never materialized;
 * copies give the same bits, the softmax trap of xla-cpu-performance.md needing FP contraction,
 * which elementwise code never gets), one read by more groups or an expensive one is computed
 * once; and a producer other than those cheap ones that two users read
 * at different indices (slices, transposes, ...) is computed once too: nested, such reads
 * multiply the work of the fused loop per level.  Each group of two or more becomes a computation
 * `<root>.fused_computation` and a `fusion` instruction in the root's place; DCE then drops
 * the members.  A dot or convolution read by one elementwise member of a loop group at its own
 * index (bias, activation) joins it: kOutput.  Then siblings merge (multi-output fusion,
 * fusion_siblings.c): groups reading the same operand at its elements' own index whose outputs
 * one loop computes (kLoop roots of one shape, reductions of one input shape over the same
 * dimensions, a kLoop root of the shape of a row reduction's input) and neither of which
 * reaches the other; their fusion's root is a tuple and users read get-tuple-elements.
 * A reduce of at most 8 elements per result read by one group joins it (inline_reducible)
 * and is computed where it is read; read by two or three such groups, it joins each
 * (join_inline_copies).  A variadic reduce that reads an iota (argmax) is a kInput root that
 * only iotas join (variadic_fusible): its kernel computes the indices.
 * Existing fusions (XLA's optimized dumps) are kept as written.
 * Tests: testdata/golden/fusion_* (make_fusion.py; cli.hloc.fusion checks the printed modules),
 * the golden and conformance suites.
 */
#include <stdlib.h>
#include <string.h>

#include "passes/fusion_siblings.h"
#include "passes/pass_names.h"
#include "passes/passes.h"

/* A cost choice, below what the kernel can do (FUSION_KERNEL_MAX_CONCAT_OPERANDS): a
 * concatenate of more operands is left unfused, its branch per element not worth it. */
enum { FUSION_MAX_CONCAT_OPERANDS = 8 };

/* A cost choice: a cheap elementwise producer read by up to this many groups is computed in
 * each of them (its buffer's write and reads cost more than the arithmetic); read by more, it
 * is computed once. */
enum { FUSION_MAX_COPIES = 3 };

typedef fusion_membership membership;

typedef struct fuser {
  ir_module *m;
  pass_names names;
  ir_computation *c;
  membership *mem;       /* by instruction id */
  ir_computation **made; /* fused computations created for c, in order */
  int n_made, cap_made;
  int *roots;            /* by group: the root's position in c */
} fuser;

static hlo_status oom(void) { return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "fusion: out of memory"); }

static bool computable_array(const ir_shape *s) {
  return s && s->et != IR_TUPLE && ir_etype_is_array(s->et) && !s->dyn;
}

static int64_t elements(const ir_shape *s) {
  int64_t n = 0;
  return ir_shape_num_elements(s, &n) ? n : 0;
}

/* Whether `in` may be computed inside a loop fusion from its operands' elements: what the
 * kernel can compute (fusion_member_ok), but reduces (input fusions, below), concatenates of
 * many operands and array constants. */
static bool loop_fusible(const ir_instr *in) {
  if (!computable_array(in->shape) || in->common.n_control_predecessors || in->n_called)
    return false;
  for (int i = 0; i < in->n_operands; i++)
    if (!computable_array(in->operands[i]->shape))
      return false;
  if (!fusion_member_ok(in) || in->op == IR_OP_REDUCE)
    return false;
  if (in->op == IR_OP_CONCATENATE)
    return in->n_operands <= FUSION_MAX_CONCAT_OPERANDS;
  if (ir_opcode_table[in->op].family == IR_FAM_CONSTANT)
    return in->shape->rank == 0;
  return true;
}

/* A reduce of one input to one array result, with a reducer computation. */
static bool input_fusible(const ir_instr *in) {
  return in->op == IR_OP_REDUCE && in->n_operands == 2 && in->n_called == 1 && computable_array(in->shape) &&
         computable_array(in->operands[0]->shape) && !in->common.n_control_predecessors;
}

/* A variadic reduce that reads an iota (argmax's indices): the root of a kInput group that
 * the iota joins, so that the kernel computes the indices instead of reading them. */
static bool variadic_fusible(const ir_instr *in) {
  if (!fusion_variadic_reduce_ok(in) || in->common.n_control_predecessors)
    return false;
  for (int i = 0; i < in->n_operands / 2; i++)
    if (in->operands[i]->op == IR_OP_IOTA)
      return true;
  return false;
}

/* Cheap enough to recompute in every group that reads it. */
static bool cheap(const ir_instr *in) {
  return in->op == IR_OP_BROADCAST || in->op == IR_OP_IOTA || in->op == IR_OP_CONSTANT;
}

static bool expensive(const ir_instr *in) {
  if (ir_etype_is_complex(in->shape->et))
    return true;
  switch (in->op) {
  case IR_OP_EXP: case IR_OP_EXPM1: case IR_OP_LOG: case IR_OP_LOG1P: case IR_OP_TANH: case IR_OP_LOGISTIC:
  case IR_OP_ERF: case IR_OP_POWER: case IR_OP_SQRT: case IR_OP_RSQRT: case IR_OP_CBRT: case IR_OP_SIN:
  case IR_OP_COS: case IR_OP_TAN: case IR_OP_ATAN2: case IR_OP_REMAINDER:
    return true;
  case IR_OP_DIVIDE: return in->operands[1]->op != IR_OP_CONSTANT && in->operands[1]->op != IR_OP_BROADCAST;
  default: return false;
  }
}

static bool in_group(const membership *m, int g) { return fusion_membership_has(m, g); }

/* Cheap enough to compute again in each of a few groups that read it (FUSION_MAX_COPIES):
 * an elementwise op that is not expensive.  Two copies give the same bits: elementwise
 * arithmetic is emitted without FP contraction, so a copy never fuses differently into its
 * neighbours (the softmax trap of xla-cpu-performance.md cannot arise). */
static bool duplicable(const ir_instr *in) {
  return (ir_opcode_table[in->op].flags & OPF_ELEMENTWISE) && !expensive(in);
}

/* The number of distinct groups p's users belong to (counted up to FUSION_MAX_COPIES + 1). */
static int groups_of_users(const fuser *z, const ir_instr *p) {
  int seen[FUSION_MAX_COPIES + 1], n = 0;
  for (int u = 0; u < p->n_users; u++) {
    const membership *mu = &z->mem[p->users[u]->id];
    for (int k = 0; k < mu->n; k++) {
      bool known = false;
      for (int i = 0; i < n && !known; i++)
        known = seen[i] == mu->groups[k];
      if (!known && (seen[n++] = mu->groups[k], n > FUSION_MAX_COPIES))
        return n;
    }
  }
  return n;
}

static bool add_group(membership *m, int g) {
  if (in_group(m, g))
    return true;
  if (m->n == m->cap) {
    int cap = m->cap ? m->cap * 2 : 2;
    int *p = realloc(m->groups, (size_t)cap * sizeof *p);
    if (!p)
      return false;
    m->groups = p;
    m->cap = cap;
  }
  m->groups[m->n++] = g;
  return true;
}

/* Row fusion: a reduce of the minor dimension whose result only reaches the group's root
 * through row-level elementwise ops and broadcasts back along the minor dimension (softmax's
 * max and sum, layernorm's mean and variance).  The fused kernel then computes it once per
 * row of the root, while the row is in cache, and the whole group reads its input once. */
static bool same_dims(const ir_shape *a, const int64_t *dims, int rank) {
  if (a->rank != rank)
    return false;
  for (int d = 0; d < rank; d++)
    if (a->dims[d] != dims[d])
      return false;
  return true;
}

static bool row_users_ok(const ir_instr *v, const ir_shape *full, int depth) {
  if (depth > 64)
    return false;
  for (int u = 0; u < v->n_users; u++) {
    const ir_instr *user = v->users[u];
    if (user->op == IR_OP_BROADCAST) {
      if (!ir_shape_same_dims(user->shape, full) || user->attrs.dimensions.n != full->rank - 1)
        return false;
      for (int k = 0; k < full->rank - 1; k++)
        if (user->attrs.dimensions.v[k] != k)
          return false;
      continue;
    }
    if (!(ir_opcode_table[user->op].flags & OPF_ELEMENTWISE) || !same_dims(user->shape, full->dims, full->rank - 1) ||
        !row_users_ok(user, full, depth + 1))
      return false;
  }
  return true;
}

static bool row_reduce_fusible(const fuser *z, const ir_instr *p, int g) {
  if (!input_fusible(p) || p->attrs.dimensions.n != 1)
    return false;
  const ir_shape *x = p->operands[0]->shape;
  const ir_instr *root = z->c->instrs[z->roots[g]];
  if (x->rank < 2 || p->attrs.dimensions.v[0] != x->rank - 1 || root->op == IR_OP_REDUCE ||
      !ir_shape_same_dims(root->shape, x) || x->dims[x->rank - 1] < 2)
    return false;
  return row_users_ok(p, root->shape, 0);
}

/* A broadcast of an array to the leading dimensions of its result (a value per row): the row's
 * value is loop-invariant along the minor dimension, so an expensive operand is computed once
 * per row (LLVM hoists it), not once per element. */
static bool row_broadcast(const ir_instr *b) {
  const ir_shape *o = b->operands[0]->shape;
  if (o->rank == 0 || o->rank != b->shape->rank - 1)
    return false;
  for (int k = 0; k < o->rank; k++)
    if (b->attrs.dimensions.v[k] != k)
      return false;
  return true;
}

/* A dot or convolution whose one user is an elementwise member of a loop group, read (directly
 * or not) only by group members that are elementwise with its dimensions, the root among them
 * with its shape and type: it joins that group as a kOutput fusion's producer
 * (code generation computes it into the fusion's result buffer, then applies the epilogue in
 * place, each element read at its own index).  Its group through *g. */
static bool output_fusible(const fuser *z, const ir_instr *p, int *g) {
  if ((p->op != IR_OP_DOT && p->op != IR_OP_CONVOLUTION) || p->n_users != 1 || p->common.n_control_predecessors ||
      (p->shape->et != IR_F32 && p->shape->et != IR_F64) || elements(p->shape) <= 1)
    return false;
  const ir_instr *u = p->users[0];
  const membership *mu = &z->mem[u->id];
  if (mu->n != 1 || !(ir_opcode_table[u->op].flags & OPF_ELEMENTWISE) || !ir_shape_same_dims(u->shape, p->shape))
    return false;
  const ir_instr *root = z->c->instrs[z->roots[mu->groups[0]]];
  if (root->shape->et != p->shape->et || !ir_shape_same_dims(root->shape, p->shape))
    return false;
  /* Everything in the group that reads p, directly or not, reads it at the element's index. */
  bool *reads = calloc((size_t)z->c->n_instrs + 1, sizeof *reads);
  bool ok = reads != NULL;
  if (reads)
    reads[p->id] = true;
  for (int i = p->id + 1; ok && i < z->c->n_instrs; i++) {
    const ir_instr *x = z->c->instrs[i];
    if (!in_group(&z->mem[i], mu->groups[0]))
      continue; /* outside the group: it reads the fusion's result, not p */
    for (int k = 0; k < x->n_operands && !reads[i]; k++)
      reads[i] = reads[x->operands[k]->id];
    if (reads[i] && (!(ir_opcode_table[x->op].flags & OPF_ELEMENTWISE) || !ir_shape_same_dims(x->shape, p->shape)))
      ok = false;
  }
  free(reads);
  *g = mu->groups[0];
  return ok;
}

/* A small reduce (fusion_inline_reduce_ok) read only by group g, which computes it at each
 * element read: not where the code generator would take it for a row fusion's reduction (the
 * minor dimension of an array of the root's dimensions), not under a broadcast that would
 * recompute it per element other than a row's, not for a dot or convolution. */
static bool inline_reducible(const fuser *z, const ir_instr *p, int g) {
  const ir_instr *root = z->c->instrs[z->roots[g]];
  const ir_shape *in = p->operands[0]->shape;
  if (!fusion_inline_reduce_ok(p) || p->common.n_control_predecessors)
    return false;
  if (root->op != IR_OP_REDUCE && p->attrs.dimensions.n == 1 && in->rank >= 2 &&
      p->attrs.dimensions.v[0] == in->rank - 1 && ir_shape_same_dims(in, root->shape))
    return false;
  for (int u = 0; u < p->n_users; u++) {
    const ir_instr *user = p->users[u];
    if (user->op == IR_OP_DOT || user->op == IR_OP_CONVOLUTION || (user->op == IR_OP_BROADCAST && !row_broadcast(user)))
      return false;
  }
  return true;
}

/* Whether p has users and every one belongs to exactly the one group of the first. */
static bool same_group_users(const fuser *z, const ir_instr *p) {
  if (p->n_users == 0 || z->mem[p->users[0]->id].n != 1)
    return false;
  int g = z->mem[p->users[0]->id].groups[0];
  for (int u = 1; u < p->n_users; u++) {
    const membership *mu = &z->mem[p->users[u]->id];
    if (mu->n != 1 || mu->groups[0] != g)
      return false;
  }
  return true;
}

/* p joins every group its users belong to (false: out of memory). */
static bool join_user_groups(fuser *z, const ir_instr *p) {
  for (int u = 0; u < p->n_users; u++) {
    const membership *mu = &z->mem[p->users[u]->id];
    for (int k = 0; k < mu->n; k++)
      if (!add_group(&z->mem[p->id], mu->groups[k]))
        return false;
  }
  return true;
}

/* A small reduce read by two or three groups (FUSION_MAX_COPIES), each able to compute it
 * inline: it joins them all, computed in each as a cheap elementwise producer is.  Else it
 * stays a group of its own. */
static bool join_inline_copies(fuser *z, ir_instr *p) {
  for (int u = 0; u < p->n_users; u++)
    if (z->mem[p->users[u]->id].n == 0)
      return true; /* read outside every group */
  if (!fusion_inline_reduce_ok(p) || groups_of_users(z, p) > FUSION_MAX_COPIES)
    return true;
  for (int u = 0; u < p->n_users; u++) {
    const membership *mu = &z->mem[p->users[u]->id];
    for (int k = 0; k < mu->n; k++)
      if (!inline_reducible(z, p, mu->groups[k]))
        return true;
  }
  return join_user_groups(z, p);
}

/* Decides the groups of producer p from its users' (all users already decided). */
static bool join_users(fuser *z, ir_instr *p) {
  if (p == z->c->root || p->n_users == 0)
    return true;
  int og;
  if (output_fusible(z, p, &og))
    return add_group(&z->mem[p->id], og);
  if (!loop_fusible(p)) {
    if (p->op != IR_OP_REDUCE)
      return true;
    if (!same_group_users(z, p))
      return join_inline_copies(z, p); /* read by several groups */
    int g = z->mem[p->users[0]->id].groups[0];
    if (row_reduce_fusible(z, p, g) || inline_reducible(z, p, g))
      return add_group(&z->mem[p->id], g);
    return true;
  }
  int first = -1;
  bool several = false;
  for (int u = 0; u < p->n_users; u++) {
    const ir_instr *user = p->users[u];
    const membership *mu = &z->mem[user->id];
    if (mu->n == 0)
      return true; /* read outside every group: p is materialized */
    if (user->op == IR_OP_DOT || user->op == IR_OP_CONVOLUTION)
      return true; /* a kOutput producer reads its operands from buffers */
    if (fusion_variadic_reduce_ok(user) && p->op != IR_OP_IOTA)
      return true; /* a variadic reduce's group computes only iotas */
    if (expensive(p) && user->op == IR_OP_BROADCAST && !row_broadcast(user))
      return true;
    if (first < 0)
      first = mu->groups[0];
    several = several || mu->n != 1 || mu->groups[0] != first;
  }
  if (several && !cheap(p) && (!duplicable(p) || groups_of_users(z, p) > FUSION_MAX_COPIES))
    return true; /* read by two groups: computed once, not duplicated */
  /* Read at different indices by two users (a slice and another slice, a transpose...), p
   * would be recomputed once per index path, and nested such reads multiply: materialize it.
   * (Cheap producers are recomputed as before.) */
  if (!cheap(p) && p->n_users > 1)
    for (int u = 0; u < p->n_users; u++)
      if (!(ir_opcode_table[p->users[u]->op].flags & OPF_ELEMENTWISE) && p->users[u]->op != IR_OP_REDUCE)
        return true; /* would be recomputed at different indices */
  return join_user_groups(z, p);
}

/* ---- building a group's computation ------------------------------------------------------ */

typedef struct group_build {
  ir_instr **members; /* in computation order; the root last */
  int n_members;
  ir_instr **outside; /* operands read from outside the group, in first-use order */
  int n_outside;
  ir_instr **clone;   /* by instruction id of c: the member's copy, or the parameter */
} group_build;

static int outside_index(group_build *g, ir_instr *op) {
  for (int i = 0; i < g->n_outside; i++)
    if (g->outside[i] == op)
      return i;
  g->outside[g->n_outside] = op;
  return g->n_outside++;
}

static ir_instr *make_param(fuser *z, ir_computation *fc, ir_instr *op, int k) {
  ir_str name = pass_names_fresh(&z->names, z->m, op->name, "param");
  ir_instr *p = name.p ? ir_instr_create(fc, IR_OP_PARAMETER, name, op->shape, NULL, 0) : NULL;
  if (p) {
    p->attrs.u.parameter_number = k;
    p->loc = op->loc;
  }
  return p;
}

static ir_instr *make_clone(fuser *z, ir_computation *fc, ir_instr *in, ir_instr **ops) {
  ir_str name = pass_names_fresh(&z->names, z->m, in->name, "f");
  ir_instr *cl = name.p ? ir_instr_create(fc, in->op, name, in->shape, ops, in->n_operands) : NULL;
  if (!cl)
    return NULL;
  cl->attrs = in->attrs;
  cl->common = in->common;
  cl->common.control_predecessors = NULL;
  cl->common.n_control_predecessors = 0;
  cl->called = in->called;
  cl->n_called = in->n_called;
  cl->loc = in->loc;
  return cl;
}

static hlo_status remember_made(fuser *z, ir_computation *fc) {
  if (z->n_made == z->cap_made) {
    int cap = z->cap_made ? 2 * z->cap_made : 8;
    ir_computation **p = realloc(z->made, (size_t)cap * sizeof *p);
    if (!p)
      return oom();
    z->made = p;
    z->cap_made = cap;
  }
  z->made[z->n_made++] = fc;
  return NULL;
}

/* A multi-output fusion's outputs: its fused computation's root becomes a tuple of the
 * outputs' copies, and each output's users in c read it through a get-tuple-element of the
 * fusion instruction (appended to c; fuse_computation sorts c afterwards). */
static hlo_status tuple_outputs(fuser *z, ir_computation *fc, group_build *g, ir_instr **outs, int n_outs,
                                ir_shape **shape) {
  ir_module *m = z->m;
  ir_shape **elems = ir_arena_alloc_array(&m->arena, (size_t)n_outs, sizeof *elems);
  ir_instr **ops = malloc((size_t)n_outs * sizeof *ops);
  hlo_status st = elems && ops ? NULL : oom();
  for (int k = 0; k < n_outs && !st; k++) {
    elems[k] = outs[k]->shape;
    ops[k] = g->clone[outs[k]->id];
  }
  *shape = st ? NULL : ir_shape_tuple(m, elems, n_outs);
  ir_str name = st || !*shape ? (ir_str){0} : pass_names_fresh(&z->names, m, outs[n_outs - 1]->name, "tuple");
  ir_instr *t = name.p ? ir_instr_create(fc, IR_OP_TUPLE, name, *shape, ops, n_outs) : NULL;
  free(ops);
  if (!t)
    return st ? st : oom();
  t->loc = outs[n_outs - 1]->loc;
  fc->root = t;
  return NULL;
}

static hlo_status read_outputs(fuser *z, ir_instr *fu, ir_instr **outs, int n_outs) {
  for (int k = 0; k < n_outs; k++) {
    ir_str name = pass_names_fresh(&z->names, z->m, outs[k]->name, "gte");
    ir_instr *gte = name.p ? ir_instr_create(z->c, IR_OP_GET_TUPLE_ELEMENT, name, outs[k]->shape, &fu, 1) : NULL;
    if (!gte)
      return oom();
    gte->attrs.u.tuple_index = k;
    gte->loc = outs[k]->loc;
    ir_replace_all_uses(z->c, outs[k], gte);
  }
  return NULL;
}

/* Creates the fused computation of group g (members known) and its fusion instruction, which
 * takes the last member's place in c.  One output: the last member, the fused computation's
 * root.  Several (sibling groups merged): a tuple of them, each read through a
 * get-tuple-element. */
static hlo_status build_group(fuser *z, group_build *g, const char *kind, ir_instr **outs, int n_outs) {
  ir_module *m = z->m;
  ir_instr *root = g->members[g->n_members - 1];
  g->n_outside = 0;
  ir_str cname = pass_names_fresh(&z->names, m, root->name, "fused_computation");
  ir_computation *fc = cname.p ? ir_computation_add(m, cname) : NULL;
  if (!fc)
    return oom();
  /* Parameters first, in first-use order, then the members' copies. */
  bool *member = calloc((size_t)z->c->n_instrs + 1, sizeof *member);
  if (!member)
    return oom();
  for (int i = 0; i < g->n_members; i++)
    member[g->members[i]->id] = true;
  for (int i = 0; i < g->n_members; i++)
    for (int k = 0; k < g->members[i]->n_operands; k++)
      if (!member[g->members[i]->operands[k]->id])
        outside_index(g, g->members[i]->operands[k]);
  fc->params = ir_arena_alloc_array(&m->arena, (size_t)g->n_outside + 1, sizeof *fc->params);
  hlo_status st = fc->params ? NULL : oom();
  for (int k = 0; k < g->n_outside && !st; k++) {
    ir_instr *p = make_param(z, fc, g->outside[k], k);
    st = p ? NULL : oom();
    if (p)
      fc->params[fc->n_params++] = g->clone[g->outside[k]->id] = p;
  }
  for (int i = 0; i < g->n_members && !st; i++) {
    ir_instr *in = g->members[i];
    ir_instr **ops = malloc(((size_t)in->n_operands + 1) * sizeof *ops);
    for (int k = 0; ops && k < in->n_operands; k++)
      ops[k] = g->clone[in->operands[k]->id];
    ir_instr *cl = ops ? make_clone(z, fc, in, ops) : NULL;
    free(ops);
    st = cl ? NULL : oom();
    g->clone[in->id] = cl;
  }
  free(member);
  if (st)
    return st;
  fc->root = g->clone[root->id];
  ir_shape *shape = root->shape;
  if (n_outs > 1 && (st = tuple_outputs(z, fc, g, outs, n_outs, &shape)) != NULL)
    return st;
  ir_str fname = pass_names_fresh(&z->names, m, root->name, "fusion");
  ir_instr *fu = fname.p ? ir_instr_create(z->c, IR_OP_FUSION, fname, shape, g->outside, g->n_outside) : NULL;
  ir_computation **called = ir_arena_alloc_array(&m->arena, 1, sizeof *called);
  ir_str k = ir_intern(m, kind, strlen(kind));
  if (!fu || !called || !k.p)
    return oom();
  called[0] = fc;
  fu->called = called;
  fu->n_called = 1;
  fu->attrs.u.fusion.kind = k;
  fu->loc = root->loc;
  z->c->n_instrs--; /* the fusion takes the root's slot */
  z->c->instrs[root->id] = fu;
  fu->id = root->id;
  st = n_outs > 1 ? read_outputs(z, fu, outs, n_outs) : NULL;
  if (n_outs == 1)
    ir_replace_all_uses(z->c, root, fu);
  return st ? st : remember_made(z, fc);
}

/* ---- one computation ------------------------------------------------------------------------- */

static hlo_status assign_groups(fuser *z, int *n_groups, int **roots) {
  ir_computation *c = z->c;
  *roots = malloc(((size_t)c->n_instrs + 1) * sizeof **roots);
  if (!*roots)
    return oom();
  z->roots = *roots;
  *n_groups = 0;
  for (int i = c->n_instrs - 1; i >= 0; i--) {
    ir_instr *in = c->instrs[i];
    if (!join_users(z, in))
      return oom();
    bool variadic = variadic_fusible(in);
    if (z->mem[i].n || elements(variadic ? in->operands[0]->shape : in->shape) <= 1 ||
        !(loop_fusible(in) || input_fusible(in) || variadic))
      continue;
    if (in->op == IR_OP_CONSTANT || in->op == IR_OP_PARAMETER)
      continue;
    if (!add_group(&z->mem[i], *n_groups))
      return oom();
    (*roots)[(*n_groups)++] = i;
  }
  return NULL;
}

/* Whether instruction i belongs to the set whose representative is r. */
static bool in_set(const fuser *z, fusion_siblings *s, int i, int r) {
  for (int k = 0; k < z->mem[i].n; k++)
    if (fusion_siblings_find(s, z->mem[i].groups[k]) == r)
      return true;
  return false;
}

/* Builds the fusion of set r (its members into g->members): returns the status; *multi says
 * whether it has several outputs. */
static hlo_status build_set(fuser *z, fusion_siblings *s, group_build *g, int r, ir_instr **outs, bool *multi) {
  ir_computation *c = z->c;
  g->n_members = 0;
  for (int i = 0; i <= z->roots[r]; i++)
    if (in_set(z, s, i, r))
      g->members[g->n_members++] = c->instrs[i];
  if (g->n_members < 2)
    return NULL;
  int n_outs = 0;
  for (int h = r; h >= 0; h = s->next[h]) /* groups in number order: roots last to first */
    n_outs++;
  int k = n_outs;
  for (int h = r; h >= 0; h = s->next[h])
    outs[--k] = c->instrs[z->roots[h]];
  *multi = n_outs > 1;
  bool reduces = false, outputs = false;
  for (int i = 0; i < g->n_members; i++) {
    reduces |= g->members[i]->op == IR_OP_REDUCE;
    outputs |= g->members[i]->op == IR_OP_DOT || g->members[i]->op == IR_OP_CONVOLUTION;
  }
  return build_group(z, g, reduces ? "kInput" : outputs ? "kOutput" : "kLoop", outs, n_outs);
}

static hlo_status fuse_computation(fuser *z, ir_computation *c) {
  z->c = c; /* pass_fusion rebuilt use lists: ids are positions */
  int n = c->n_instrs;
  z->mem = calloc((size_t)n + 1, sizeof *z->mem);
  group_build g = {0};
  g.members = malloc(((size_t)n + 1) * sizeof *g.members);
  g.outside = malloc(((size_t)n + 1) * sizeof *g.outside);
  g.clone = calloc(2 * (size_t)n + 2, sizeof *g.clone); /* room for get-tuple-elements */
  ir_instr **outs = malloc(((size_t)n + 1) * sizeof *outs);
  fusion_siblings s = {0};
  int n_groups = 0, *roots = NULL;
  hlo_status st = z->mem && g.members && g.outside && g.clone && outs ? assign_groups(z, &n_groups, &roots) : oom();
  if (!st)
    st = fusion_siblings_merge(&s, c, z->mem, roots, n_groups);
  /* Groups were numbered from the end; build them in computation order of their roots. */
  bool multi = false;
  for (int gi = n_groups - 1; gi >= 0 && !st; gi--) {
    if (fusion_siblings_find(&s, gi) != gi)
      continue; /* built with the set of its siblings */
    bool m = false;
    memset(g.clone, 0, (2 * (size_t)n + 2) * sizeof *g.clone);
    st = build_set(z, &s, &g, gi, outs, &m);
    multi |= m;
  }
  if (!st && multi)
    st = fusion_siblings_sort(c, n);
  for (int i = 0; i < n && z->mem; i++)
    free(z->mem[i].groups);
  free(z->mem);
  z->mem = NULL;
  free(roots);
  free(g.members);
  free(g.outside);
  free(g.clone);
  free(outs);
  fusion_siblings_free(&s);
  return st;
}

/* Computations that fusions already call (XLA's optimized dumps) are left as written. */
static bool *fused_already(const ir_module *m) {
  bool *f = calloc((size_t)m->n_comps + 1, sizeof *f);
  for (int ci = 0; f && ci < m->n_comps; ci++)
    for (int i = 0; i < m->comps[ci]->n_instrs; i++) {
      const ir_instr *in = m->comps[ci]->instrs[i];
      if (in->op == IR_OP_FUSION)
        for (int k = 0; k < in->n_called; k++)
          f[in->called[k]->id] = true;
    }
  return f;
}

/* Puts each computation's new fused computations just before it, as XLA prints them. */
static hlo_status order_computations(ir_module *m, ir_computation **orig, int n_orig, ir_computation ***made,
                                     int *n_made) {
  int at = 0;
  ir_computation **order = malloc(((size_t)m->n_comps + 1) * sizeof *order);
  if (!order)
    return oom();
  for (int ci = 0; ci < n_orig; ci++) {
    for (int k = 0; k < n_made[ci]; k++)
      order[at++] = made[ci][k];
    order[at++] = orig[ci];
  }
  memcpy(m->comps, order, (size_t)at * sizeof *order);
  for (int i = 0; i < m->n_comps; i++)
    m->comps[i]->id = i;
  free(order);
  return NULL;
}

hlo_status pass_fusion(ir_module *m) {
  fuser z = {.m = m};
  int n_orig = m->n_comps;
  ir_computation **orig = malloc(((size_t)n_orig + 1) * sizeof *orig);
  ir_computation ***made = calloc((size_t)n_orig + 1, sizeof *made);
  int *n_made = calloc((size_t)n_orig + 1, sizeof *n_made);
  bool *skip = fused_already(m);
  hlo_status st = orig && made && n_made && skip && pass_names_init(&z.names, m) ? NULL : oom();
  if (orig)
    memcpy(orig, m->comps, (size_t)n_orig * sizeof *orig);
  ir_rebuild_uses(m); /* fusing one computation changes no other's use lists */
  for (int ci = 0; ci < n_orig && !st; ci++) {
    if (skip[ci])
      continue;
    z.made = NULL;
    z.n_made = z.cap_made = 0;
    st = fuse_computation(&z, orig[ci]);
    made[ci] = z.made;
    n_made[ci] = z.n_made;
  }
  if (!st)
    st = order_computations(m, orig, n_orig, made, n_made);
  for (int ci = 0; ci < n_orig && made; ci++)
    free(made[ci]);
  free(made);
  free(n_made);
  free(orig);
  free(skip);
  pass_names_free(&z.names);
  for (int ci = 0; ci < m->n_comps && !st; ci++)
    if (!ir_computation_remove_dead(m->comps[ci]))
      st = oom();
  ir_rebuild_uses(m);
  return st;
}
