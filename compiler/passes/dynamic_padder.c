/* dynamic_padder.c — runs bounded dynamic dimensions the way XLA's CPU backend does (its
 * DynamicDimensionInference + DynamicPadder).  Pre: verified, broadcasts canonical.
 *
 * Every array keeps its buffer at the bound (f32[<=8] is stored as f32[8]); what is dynamic is
 * a size, an s32[] value that this pass tracks per instruction and dimension:
 * - set-dimension-size(x, n), dimensions={d} gives dimension d the size n (the data is x);
 * - dynamic-reshape(x, n0, n1, ...) gives each dynamic result dimension i the size n_i; when x
 *   has sizes itself it reads x's elements within them in row-major order (a gather first
 *   packs them at the front of x's buffer);
 * - elementwise ops, convert, copy, map, broadcast and transpose carry their operands' sizes to
 *   the dimensions they map to; reduce keeps those of the dimensions it keeps, dot those of
 *   its batch and free dimensions; slice gives (size - start + stride - 1) / stride, or makes
 *   the dimension static when it takes one element (XLA's HandleSlice);
 * - entry parameters (and everything else) have their bound as size.
 * Then, as XLA's padder does: get-dimension-size of a tracked dimension becomes its size value;
 * a reduce over a tracked dimension reads select(iota < size, x, init) instead of x (the
 * padding becomes the reducer's init value and drops out of the result), and a dot
 * contracting a tracked dimension reads both operands with the padding set to zero.  Elements
 * past a size are otherwise computed from the padding like any other element, and results
 * leave at their bound shape (hloc's ABI has no dynamic-size metadata).
 * An instruction of any other kind that reads an operand with a tracked size stops with a
 * clear error naming it (its padding would otherwise change its result silently).
 * New instructions are named after their user (".dyn.iota", ".dyn.mask", ...).
 * Tests: testdata/golden (make_ops_misc.py), testdata/ops_misc (the errors, tests/ops_misc.cmake).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/pass_build.h"
#include "passes/passes.h"

typedef struct padder {
  pass_builder b;
  bool replaced; /* a get-dimension-size of this computation became its size */
} padder;

static hlo_status oom(void) { return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "dynamic-padder: out of memory"); }

/* The tracked sizes of an array instruction (one per dimension, NULL = the bound), or NULL. */
static ir_instr **sizes_of(const ir_instr *in) { return (ir_instr **)in->pass_data; }

static ir_instr *size_at(const ir_instr *in, int d) {
  ir_instr **s = sizes_of(in);
  return s && d >= 0 && d < in->shape->rank ? s[d] : NULL;
}

static bool has_sizes(const ir_instr *in) {
  if (!in->shape || in->shape->et == IR_TUPLE)
    return false;
  for (int d = 0; d < in->shape->rank; d++)
    if (size_at(in, d))
      return true;
  return false;
}

/* Gives `in` a (cleared) size table; false when out of memory. */
static bool new_sizes(padder *k, ir_instr *in) {
  int r = in->shape->rank;
  in->pass_data = ir_arena_alloc_array(&k->b.m->arena, (size_t)(r ? r : 1), sizeof(ir_instr *));
  if (in->pass_data)
    memset(in->pass_data, 0, (size_t)(r ? r : 1) * sizeof(ir_instr *));
  return in->pass_data != NULL;
}

/* ---- new instructions ------------------------------------------------------------------------ */

/* An array shape with like's dimensions (dynamism included) and element type et. */
static ir_shape *dims_like(padder *k, ir_etype et, const ir_shape *like) {
  ir_shape *s = pass_build_array(&k->b, et, like->rank, like->dims);
  if (s)
    s->dyn = like->dyn;
  return s;
}

static ir_instr *broadcast_scalar(padder *k, ir_instr *v, const ir_shape *like, const char *what) {
  return pass_build_broadcast(&k->b, v, dims_like(k, v->shape->et, like), NULL, what);
}

/* select(iota(d) < size, x, fill): x with the elements at or past `size` in dimension d
 * replaced by the scalar fill. */
static ir_instr *mask(padder *k, ir_instr *x, int d, ir_instr *size, ir_instr *fill) {
  const ir_shape *xs = x->shape;
  ir_instr *iota = pass_build_iota(&k->b, "dyn.iota", dims_like(k, IR_S32, xs), d);
  ir_instr *bs = iota ? broadcast_scalar(k, size, xs, "dyn.size") : NULL;
  ir_instr *in = bs ? pass_build_compare(&k->b, "dyn.in", dims_like(k, IR_PRED, xs), iota, bs, IR_CMP_LT) : NULL;
  ir_instr *bf = in ? broadcast_scalar(k, fill, xs, "dyn.fill") : NULL;
  ir_instr *ops[3] = {in, x, bf};
  return bf ? pass_build_instr(&k->b, IR_OP_SELECT, "dyn.mask", dims_like(k, xs->et, xs), ops, 3) : NULL;
}

/* Operand `which` of the user with every tracked dimension listed in dims masked to fill;
 * sizes come from the operand itself or, where it has none, from other[i] of `other_dims`. */
static hlo_status mask_operand(padder *k, int which, const ir_i64_list *dims, ir_instr *fill,
                               const ir_instr *other, const ir_i64_list *other_dims) {
  ir_instr *x = k->b.user->operands[which];
  for (int i = 0; i < dims->n; i++) {
    ir_instr *size = size_at(k->b.user->operands[which], (int)dims->v[i]);
    if (!size && other)
      size = size_at(other, (int)other_dims->v[i]);
    if (!size)
      continue;
    if (!fill || !(x = mask(k, x, (int)dims->v[i], size, fill)))
      return oom();
  }
  k->b.user->operands[which] = x;
  return NULL;
}

/* ---- the rules --------------------------------------------------------------------------------- */

static hlo_status unsupported(const ir_instr *in, int operand) {
  const ir_instr *op = in->operands[operand];
  int d = 0;
  while (d < op->shape->rank && !size_at(op, d))
    d++;
  return hlo_status_make(HLO_UNIMPLEMENTED,
                         "%d:%d: error: %%%s: '%s' cannot read operand %d (%%%s), whose dimension %d has a dynamic size "
                         "(set-dimension-size, dynamic-reshape); hloc runs dynamic sizes through elementwise ops, "
                         "convert, copy, map, broadcast, transpose, slice, reduce, dot, get-dimension-size and the "
                         "entry's root tuple",
                         in->loc.line, in->loc.col, in->name.p, ir_opcode_table[in->op].spelling, operand,
                         op->name.p, d);
}

/* Sizes carried dimension to dimension: result dim map[i] gets operand dim i's size. */
static hlo_status carry(padder *k, ir_instr *in, const ir_instr *op, const int64_t *map, int n) {
  if (!has_sizes(op))
    return NULL;
  if (!sizes_of(in) && !new_sizes(k, in))
    return oom();
  for (int i = 0; i < n; i++)
    if (map[i] >= 0 && map[i] < in->shape->rank && size_at(op, i) && !sizes_of(in)[map[i]])
      sizes_of(in)[map[i]] = size_at(op, i);
  return NULL;
}

static hlo_status carry_same(padder *k, ir_instr *in) {
  int64_t id[64];
  for (int i = 0; i < in->shape->rank && i < 64; i++)
    id[i] = i;
  for (int o = 0; o < in->n_operands; o++)
    if (in->operands[o]->shape->et != IR_TUPLE && in->operands[o]->shape->rank == in->shape->rank)
      HLO_RETURN_IF_ERROR(carry(k, in, in->operands[o], id, in->shape->rank < 64 ? in->shape->rank : 64));
  return NULL;
}

static hlo_status rule_reduce(padder *k, ir_instr *in) {
  int n = in->n_operands / 2;
  const ir_instr *op = in->operands[0]; /* before the masks replace it */
  for (int i = 0; i < n; i++)
    HLO_RETURN_IF_ERROR(mask_operand(k, i, &in->attrs.dimensions, in->operands[n + i], NULL, NULL));
  if (in->shape->et == IR_TUPLE) {
    for (int d = 0; d < in->operands[0]->shape->rank; d++) {
      bool reduced = false;
      for (int j = 0; j < in->attrs.dimensions.n; j++)
        reduced |= in->attrs.dimensions.v[j] == d;
      if (!reduced && size_at(op, d))
        return unsupported(in, 0); /* a variadic reduce keeping a tracked dimension */
    }
    return NULL;
  }
  int64_t map[64];
  int r = 0;
  for (int d = 0; d < op->shape->rank && d < 64; d++) {
    bool reduced = false;
    for (int j = 0; j < in->attrs.dimensions.n; j++)
      reduced |= in->attrs.dimensions.v[j] == d;
    map[d] = reduced ? -1 : r++;
  }
  return carry(k, in, op, map, op->shape->rank < 64 ? op->shape->rank : 64);
}

static bool listed(const ir_i64_list *l, int64_t d) {
  for (int i = 0; i < l->n; i++)
    if (l->v[i] == d)
      return true;
  return false;
}

static hlo_status rule_dot(padder *k, ir_instr *in) {
  ir_instr *lhs = in->operands[0], *rhs = in->operands[1];
  const ir_dot_dnums *dn = &in->attrs.u.dot.dnums;
  bool any = false;
  for (int i = 0; i < dn->lhs_contracting.n; i++)
    any |= size_at(lhs, (int)dn->lhs_contracting.v[i]) || size_at(rhs, (int)dn->rhs_contracting.v[i]);
  if (any) {
    ir_instr *zl = pass_build_constant(&k->b, "dyn.zero", ir_shape_scalar(k->b.m, lhs->shape->et), NULL);
    ir_instr *zr = pass_build_constant(&k->b, "dyn.zero", ir_shape_scalar(k->b.m, rhs->shape->et), NULL);
    HLO_RETURN_IF_ERROR(mask_operand(k, 0, &dn->lhs_contracting, zl, rhs, &dn->rhs_contracting));
    HLO_RETURN_IF_ERROR(mask_operand(k, 1, &dn->rhs_contracting, zr, lhs, &dn->lhs_contracting));
  }
  /* result: batch dims, lhs free dims, rhs free dims (sizes of the original operands) */
  int64_t lmap[64], rmap[64];
  int r = 0;
  for (int d = 0; d < 64; d++)
    lmap[d] = rmap[d] = -1;
  for (int i = 0; i < dn->lhs_batch.n; i++, r++) {
    lmap[dn->lhs_batch.v[i]] = r;
    rmap[dn->rhs_batch.v[i]] = r;
  }
  for (int d = 0; d < lhs->shape->rank && d < 64; d++)
    if (!listed(&dn->lhs_batch, d) && !listed(&dn->lhs_contracting, d))
      lmap[d] = r++;
  for (int d = 0; d < rhs->shape->rank && d < 64; d++)
    if (!listed(&dn->rhs_batch, d) && !listed(&dn->rhs_contracting, d))
      rmap[d] = r++;
  HLO_RETURN_IF_ERROR(carry(k, in, lhs, lmap, lhs->shape->rank < 64 ? lhs->shape->rank : 64));
  return carry(k, in, rhs, rmap, rhs->shape->rank < 64 ? rhs->shape->rank : 64);
}

/* dynamic-reshape's size of result dimension d: operand 1 + d, or element d of the s32[rank]
 * vector (hloc's extension form) taken out with slice + reshape. */
static ir_instr *reshape_size(padder *k, ir_instr *in, int d) {
  if (in->n_operands == in->shape->rank + 1)
    return in->operands[1 + d];
  ir_instr *v = in->operands[1];
  int64_t one = 1;
  ir_instr *s = pass_build_instr(&k->b, IR_OP_SLICE, "dyn.size.slice", pass_build_array(&k->b, IR_S32, 1, &one), &v, 1);
  ir_slice_dim *sd = ir_arena_alloc(&k->b.m->arena, sizeof *sd);
  if (!s || !sd)
    return NULL;
  *sd = (ir_slice_dim){.start = d, .limit = d + 1, .stride = 1};
  s->attrs.u.slice.dims = sd;
  s->attrs.u.slice.n = 1;
  ir_instr *r = pass_build_instr(&k->b, IR_OP_RESHAPE, "dyn.size", ir_shape_scalar(k->b.m, IR_S32), &s, 1);
  if (r)
    r->attrs.u.inferred_dimension = -1;
  return r;
}

static ir_instr *s32_const(padder *k, int32_t v) {
  return pass_build_constant(&k->b, "dyn.const", ir_shape_scalar(k->b.m, IR_S32), &v);
}

/* a op broadcast(scalar) over a's shape (an s32 vector). */
static ir_instr *vec_scalar(padder *k, ir_opcode op, ir_instr *a, ir_instr *scalar) {
  ir_instr *b = scalar ? pass_build_broadcast(&k->b, scalar, a->shape, NULL, "dyn.flat.size") : NULL;
  return b ? pass_build_binary(&k->b, op, "dyn.flat.index", a->shape, a, b) : NULL;
}

/* x's elements within its sizes, in row-major order over the sizes, first in an s32[n] vector
 * the length of x's buffer (XLA reads a dynamic array's elements that way): a gather of
 * x's flat buffer at sum_d ((j / stride_d) % size_d) * bound_stride_d for j = 0 .. n-1. */
static ir_instr *compact(padder *k, ir_instr *x) {
  const ir_shape *xs = x->shape;
  int64_t n;
  if (!ir_shape_num_elements(xs, &n) || n > INT32_MAX)
    return NULL;
  ir_instr *j = pass_build_iota(&k->b, "dyn.flat.iota", pass_build_array(&k->b, IR_S32, 1, &n), 0);
  ir_instr *stride = NULL, *lin = NULL;
  int64_t bstride = 1;
  for (int d = xs->rank - 1; d >= 0 && j; d--) {
    ir_instr *size = size_at(x, d) ? size_at(x, d) : s32_const(k, (int32_t)xs->dims[d]);
    ir_instr *q = stride ? vec_scalar(k, IR_OP_DIVIDE, j, stride) : j;
    ir_instr *idx = q ? vec_scalar(k, IR_OP_REMAINDER, q, size) : NULL;
    ir_instr *term = bstride == 1 || !idx ? idx : vec_scalar(k, IR_OP_MULTIPLY, idx, s32_const(k, (int32_t)bstride));
    lin = !term || !lin ? term : pass_build_binary(&k->b, IR_OP_ADD, "dyn.flat.index", j->shape, lin, term);
    stride = !stride || !size ? size : pass_build_binary(&k->b, IR_OP_MULTIPLY, "dyn.flat.stride",
                                                          ir_shape_scalar(k->b.m, IR_S32), stride, size);
    bstride *= xs->dims[d];
    if (!lin || !stride)
      return NULL;
  }
  int64_t col[2] = {n, 1};
  ir_instr *at = lin ? pass_build_instr(&k->b, IR_OP_RESHAPE, "dyn.flat.at", pass_build_array(&k->b, IR_S32, 2, col),
                                        &lin, 1)
                     : NULL;
  ir_instr *flat = at ? pass_build_instr(&k->b, IR_OP_RESHAPE, "dyn.flat", pass_build_array(&k->b, xs->et, 1, &n), &x, 1)
                      : NULL;
  ir_instr *ops[2] = {flat, at};
  ir_instr *g = flat ? pass_build_instr(&k->b, IR_OP_GATHER, "dyn.compact", pass_build_array(&k->b, xs->et, 1, &n), ops, 2)
                     : NULL;
  int64_t zero = 0, one = 1;
  if (!g)
    return NULL;
  at->attrs.u.inferred_dimension = flat->attrs.u.inferred_dimension = -1;
  g->attrs.u.gather.collapsed_slice_dims = ir_i64_list_copy(k->b.m, &zero, 1);
  g->attrs.u.gather.start_index_map = ir_i64_list_copy(k->b.m, &zero, 1);
  g->attrs.u.gather.slice_sizes = ir_i64_list_copy(k->b.m, &one, 1);
  g->attrs.u.gather.index_vector_dim = 1;
  return g->attrs.u.gather.collapsed_slice_dims.v && g->attrs.u.gather.start_index_map.v &&
                 g->attrs.u.gather.slice_sizes.v
             ? g
             : NULL;
}

/* dynamic-reshape of an operand with sizes reads its elements within them (compact). */
static hlo_status rule_dynamic_reshape(padder *k, ir_instr *in) {
  if (has_sizes(in->operands[0])) {
    int64_t n;
    if (!ir_shape_num_elements(in->operands[0]->shape, &n) || n > INT32_MAX)
      return unsupported(in, 0);
    ir_instr *c = compact(k, in->operands[0]);
    if (!c)
      return oom();
    in->operands[0] = c;
  }
  if (!new_sizes(k, in))
    return oom();
  for (int d = 0; d < in->shape->rank; d++)
    if (in->shape->dyn && in->shape->dyn[d] != IR_DIM_STATIC && !(sizes_of(in)[d] = reshape_size(k, in, d)))
      return oom();
  return NULL;
}

/* An s32[] scalar: op(a, constant c), or a itself when skip. */
static ir_instr *scalar_op(padder *k, ir_opcode op, ir_instr *a, int32_t c, bool skip) {
  if (skip || !a)
    return a;
  ir_shape *s = ir_shape_scalar(k->b.m, IR_S32);
  ir_instr *ci = pass_build_constant(&k->b, "dyn.const", s, &c);
  return ci ? pass_build_binary(&k->b, op, "dyn.size", ir_shape_scalar(k->b.m, IR_S32), a, ci) : NULL;
}

/* slice, as XLA's DynamicDimensionInference::HandleSlice: a sized dimension keeps the size
 * (size - start + stride - 1) / stride, unless it slices out one element (then it is static). */
static hlo_status rule_slice(padder *k, ir_instr *in) {
  const ir_instr *op = in->operands[0];
  for (int d = 0; d < op->shape->rank; d++) {
    ir_instr *size = size_at(op, d);
    const ir_slice_dim *sd = &in->attrs.u.slice.dims[d];
    if (!size || (sd->limit - sd->start + sd->stride - 1) / sd->stride == 1)
      continue;
    size = scalar_op(k, IR_OP_SUBTRACT, size, (int32_t)sd->start, sd->start == 0);
    size = scalar_op(k, IR_OP_ADD, size, (int32_t)(sd->stride - 1), sd->stride == 1);
    size = scalar_op(k, IR_OP_DIVIDE, size, (int32_t)sd->stride, sd->stride == 1);
    if (!size || (!sizes_of(in) && !new_sizes(k, in)))
      return oom();
    sizes_of(in)[d] = size;
  }
  return NULL;
}

static bool elementwise_like(const ir_instr *in) {
  switch (ir_opcode_table[in->op].family) {
  case IR_FAM_UNARY: case IR_FAM_BINARY: case IR_FAM_COMPARE: case IR_FAM_SELECT: case IR_FAM_CLAMP:
  case IR_FAM_CONVERT: case IR_FAM_COPY: case IR_FAM_MAP: case IR_FAM_REDUCE_PRECISION:
  case IR_FAM_STOCHASTIC_CONVERT:
    return true;
  case IR_FAM_BITCAST_CONVERT: /* same width only: the dimensions stay */
    return in->shape->rank == in->operands[0]->shape->rank;
  default:
    return false;
  }
}

static hlo_status rewrite(padder *k, ir_instr *in) {
  k->b.user = in;
  in->pass_data = NULL;
  switch (in->op) {
  case IR_OP_SET_DIMENSION_SIZE:
    HLO_RETURN_IF_ERROR(carry_same(k, in));
    if (!sizes_of(in) && !new_sizes(k, in))
      return oom();
    sizes_of(in)[in->attrs.dimensions.v[0]] = in->operands[1];
    return NULL;
  case IR_OP_GET_DIMENSION_SIZE: {
    ir_instr *size = size_at(in->operands[0], (int)in->attrs.dimensions.v[0]);
    if (size) {
      ir_replace_all_uses(in->parent, in, size);
      k->replaced = true;
    }
    return NULL;
  }
  case IR_OP_DYNAMIC_RESHAPE: return rule_dynamic_reshape(k, in);
  case IR_OP_REDUCE: return rule_reduce(k, in);
  case IR_OP_DOT: return rule_dot(k, in);
  case IR_OP_SLICE: return rule_slice(k, in);
  case IR_OP_BROADCAST:
    return carry(k, in, in->operands[0], in->attrs.dimensions.v, in->attrs.dimensions.n);
  case IR_OP_TRANSPOSE: {
    int64_t map[64];
    for (int i = 0; i < in->attrs.dimensions.n && i < 64; i++)
      map[in->attrs.dimensions.v[i]] = i;
    return carry(k, in, in->operands[0], map, in->attrs.dimensions.n < 64 ? in->attrs.dimensions.n : 64);
  }
  case IR_OP_TUPLE:
    if (in->parent->is_entry && in->parent->root == in)
      return NULL; /* results leave at their bound */
    break;
  default:
    if (in->shape && in->shape->et != IR_TUPLE && elementwise_like(in))
      return carry_same(k, in);
    break;
  }
  for (int o = 0; o < in->n_operands; o++)
    if (has_sizes(in->operands[o]))
      return unsupported(in, o);
  return NULL;
}

static bool module_has_dynamic_sizes(const ir_module *m) {
  for (int ci = 0; ci < m->n_comps; ci++)
    for (int i = 0; i < m->comps[ci]->n_instrs; i++) {
      ir_opcode op = m->comps[ci]->instrs[i]->op;
      if (op == IR_OP_SET_DIMENSION_SIZE || op == IR_OP_DYNAMIC_RESHAPE)
        return true;
    }
  return false;
}

static hlo_status pad_computation(padder *k, ir_computation *c) {
  int n0 = c->n_instrs;
  int *made = calloc((size_t)(n0 ? n0 : 1), sizeof *made);
  if (!made)
    return oom();
  hlo_status st = NULL;
  for (int i = 0; i < n0; i++)
    c->instrs[i]->pass_data = NULL;
  for (int i = 0; i < n0 && !st; i++) {
    int before = c->n_instrs;
    st = rewrite(k, c->instrs[i]);
    made[i] = c->n_instrs - before;
  }
  for (int i = 0; i < c->n_instrs; i++)
    c->instrs[i]->pass_data = NULL;
  if (!st && c->n_instrs != n0 && !pass_place_new_instrs(c, n0, made))
    st = oom();
  free(made);
  if (!st && k->replaced && !ir_computation_remove_dead(c)) /* the get-dimension-size instructions now unused */
    st = oom();
  k->replaced = false;
  return st;
}

hlo_status pass_dynamic_padder(ir_module *m) {
  if (!module_has_dynamic_sizes(m))
    return NULL;
  padder k = {.replaced = false};
  hlo_status st = pass_builder_init(&k.b, m) ? NULL : oom();
  for (int ci = 0; ci < m->n_comps && !st; ci++)
    st = pad_computation(&k, m->comps[ci]);
  pass_builder_deinit(&k.b);
  ir_rebuild_uses(m);
  return st;
}
