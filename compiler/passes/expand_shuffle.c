/* expand_shuffle.c — rewrites shuffle into slices, concatenates and gathers, as XLA's
 * ShuffleExpander (xla/hlo/transforms/expanders/shuffle_expander.cc) does; the semantics
 * document has no section on shuffle, so that expander, its tests and xla/shuffle.cc are the
 * reference.  Pre: verified.
 *
 *   shuffle(x), dimensions={d...}, mode=rotate, shifts={s...}
 *     rotates each listed dimension left by its shift, taken modulo the dimension's size
 *     (negative shifts rotate right): result[.., i, ..] = x[.., (i + s) mod n, ..];
 *     becomes concatenate(slice(x, [s:n]), slice(x, [0:s])) per dimension.
 *   shuffle(x), dimensions={d...}, mode=permute, indices=<integer literal>
 *     each result element takes the element of x whose coordinates in the listed dimensions
 *     are the indices' entry for it, in the order `dimensions` lists them (the innermost
 *     dimension of the indices holds those coordinates; with one listed dimension it may be
 *     left out), keeping its own coordinate in every other dimension; the other dimensions of
 *     the indices are x's, or 1 where every element along them shares its coordinates.
 *     Becomes one gather of single elements with the full coordinates as a constant, so
 *     out-of-range coordinates clamp as gather's do.
 * The result has x's shape.  XLA's ShuffleMode also has a multi-rotate mode that its expander
 * does not expand; hloc refuses it with a clear error, as it refuses malformed attributes.
 * The attributes are kept verbatim by the parser (docs/architecture.md) and read here.
 * Tests: testdata/golden (make_ops_misc.py), testdata/ops_misc (errors).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/pass_build.h"
#include "passes/passes.h"

#define SH_MAX_RANK 64

static hlo_status oom(void) { return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "expand-shuffle: out of memory"); }

static hlo_status bad(const ir_instr *in, const char *fmt, const char *what) {
  char msg[400];
  snprintf(msg, sizeof msg, fmt, what);
  return hlo_status_make(HLO_UNIMPLEMENTED, "%d:%d: error: %%%s: shuffle: %s", in->loc.line, in->loc.col, in->name.p,
                         msg);
}

/* The verbatim value of attribute `name`, or a NULL view. */
static ir_str raw_attr(const ir_instr *in, const char *name) {
  for (int i = 0; i < in->common.n_unknown; i++)
    if (ir_str_eq(in->common.unknown[i].name, name))
      return in->common.unknown[i].value;
  return (ir_str){0};
}

/* All integers written in v[0..len) in order (a leading '-' kept); false when one is not a
 * plain integer.  *out_v is malloc'ed (the caller frees it, also on failure). */
static bool read_ints(const char *p, size_t len, int64_t **out_v, int64_t *out_n) {
  int64_t cap = 16;
  *out_n = 0;
  *out_v = malloc((size_t)cap * sizeof **out_v);
  for (size_t i = 0; *out_v && i < len;) {
    char c = p[i];
    if (c == '{' || c == '}' || c == ',' || c == ' ' || c == '\n' || c == '\t') {
      i++;
      continue;
    }
    char *end;
    long long v = strtoll(p + i, &end, 10);
    if (end == p + i || (size_t)(end - p) > len)
      return false;
    if (*out_n == cap) {
      int64_t *bigger = realloc(*out_v, (size_t)(cap *= 2) * sizeof **out_v);
      if (!bigger)
        return false;
      *out_v = bigger;
    }
    (*out_v)[(*out_n)++] = v;
    i = (size_t)(end - p);
  }
  return *out_v != NULL;
}

/* An integer literal "s32[3,1]{1,0} { {2}, {0}, {1} }": its dims and values (row-major). */
typedef struct int_literal {
  int rank;
  int64_t dims[SH_MAX_RANK];
  int64_t *v, n;
} int_literal;

static bool read_literal(ir_str s, int_literal *out_lit) {
  int_literal *lit = out_lit;
  const char *p = s.p, *end = s.p + s.len;
  const char *lb = memchr(p, '[', s.len), *rb = lb ? memchr(lb, ']', (size_t)(end - lb)) : NULL;
  ir_etype et;
  if (!lb || !rb || !ir_etype_from_name(p, (size_t)(lb - p), &et) || !ir_etype_is_int(et))
    return false;
  int64_t *dims = NULL, nd = 0;
  bool ok = read_ints(lb + 1, (size_t)(rb - lb - 1), &dims, &nd) && nd <= SH_MAX_RANK;
  lit->rank = (int)nd;
  int64_t count = 1;
  for (int i = 0; ok && i < nd; i++) {
    ok = dims[i] >= 0;
    lit->dims[i] = dims[i];
    count *= dims[i];
  }
  free(dims);
  const char *q = rb + 1;
  if (ok && q < end && *q == '{') /* the layout */
    while (q < end && *q++ != '}')
      ;
  lit->v = NULL;
  return ok && read_ints(q, (size_t)(end - q), &lit->v, &lit->n) && lit->n == count;
}

/* ---- rotate ------------------------------------------------------------------------------------ */

static ir_instr *slice_dim(pass_builder *k, ir_instr *x, int dim, int64_t lo, int64_t hi, const char *what) {
  const ir_shape *s = x->shape;
  ir_slice_dim *sd = ir_arena_alloc_array(&k->m->arena, (size_t)s->rank, sizeof *sd);
  int64_t dims[SH_MAX_RANK];
  if (!sd)
    return NULL;
  for (int d = 0; d < s->rank; d++) {
    sd[d] = (ir_slice_dim){.start = 0, .limit = s->dims[d], .stride = 1};
    dims[d] = s->dims[d];
  }
  sd[dim] = (ir_slice_dim){.start = lo, .limit = hi, .stride = 1};
  dims[dim] = hi - lo;
  ir_instr *r = pass_build_instr(k, IR_OP_SLICE, what, pass_build_array(k, s->et, s->rank, dims), &x, 1);
  if (r) {
    r->attrs.u.slice.dims = sd;
    r->attrs.u.slice.n = s->rank;
  }
  return r;
}

static hlo_status expand_rotate(pass_builder *k, ir_instr *in, const ir_i64_list *dims) {
  ir_str text = raw_attr(in, "shifts");
  int64_t *shifts = NULL, n = 0;
  if (!text.p || !read_ints(text.p, text.len, &shifts, &n) || n != dims->n) {
    free(shifts);
    return bad(in, "mode=rotate needs shifts={...} with one shift per listed dimension%s", "");
  }
  ir_instr *x = in->operands[0];
  for (int i = 0; i < dims->n; i++) {
    int dim = (int)dims->v[i];
    int64_t size = x->shape->dims[dim];
    int64_t s = size == 0 ? 0 : ((shifts[i] % size) + size) % size;
    if (s == 0)
      continue;
    ir_instr *ops[2] = {slice_dim(k, x, dim, s, size, "rotate.tail"), slice_dim(k, x, dim, 0, s, "rotate.head")};
    ir_shape *rs = pass_build_array(k, x->shape->et, x->shape->rank, x->shape->dims);
    x = ops[0] && ops[1] ? pass_build_instr(k, IR_OP_CONCATENATE, "rotate", rs, ops, 2) : NULL;
    if (!x) {
      free(shifts);
      return oom();
    }
    int64_t d64 = dim;
    x->attrs.has_dimensions = true;
    x->attrs.dimensions = ir_i64_list_copy(k->m, &d64, 1);
  }
  free(shifts);
  ir_replace_all_uses(in->parent, in, x);
  return NULL;
}

/* ---- permute ----------------------------------------------------------------------------------- */

/* Whether the indices fit x's shape and `dims`; *out_coord says if they have the coordinate dim. */
static bool indices_fit(const int_literal *lit, const ir_shape *xs, const ir_i64_list *dims, bool *out_coord) {
  *out_coord = lit->rank == xs->rank + 1;
  if (!*out_coord && !(lit->rank == xs->rank && dims->n == 1))
    return false;
  if (*out_coord && lit->dims[xs->rank] != dims->n)
    return false;
  for (int d = 0; d < xs->rank; d++)
    if (lit->dims[d] != xs->dims[d] && lit->dims[d] != 1)
      return false;
  return true;
}

/* The full coordinates [x dims..., rank] of the element each result element takes. */
static void full_coordinates(const int_literal *lit, const ir_shape *xs, const ir_i64_list *dims, bool coord,
                             bool wide, void *out) {
  int r = xs->rank;
  int64_t n = 1, idx[SH_MAX_RANK] = {0};
  int slot[SH_MAX_RANK];
  for (int d = 0; d < r; d++) {
    n *= xs->dims[d];
    slot[d] = -1;
  }
  for (int j = 0; j < dims->n; j++)
    slot[dims->v[j]] = j;
  for (int64_t e = 0; e < n; e++) {
    int64_t at = 0; /* the indices' element for this result element (size-1 dims shared) */
    for (int d = 0; d < r; d++)
      at = at * lit->dims[d] + (lit->dims[d] == 1 ? 0 : idx[d]);
    for (int d = 0; d < r; d++) {
      int64_t c = slot[d] < 0 ? idx[d] : lit->v[coord ? at * dims->n + slot[d] : at];
      if (wide)
        ((int64_t *)out)[e * r + d] = c;
      else
        ((int32_t *)out)[e * r + d] = (int32_t)(c < INT32_MIN ? INT32_MIN : c > INT32_MAX ? INT32_MAX : c);
    }
    for (int d = r - 1; d >= 0 && ++idx[d] == xs->dims[d]; d--)
      idx[d] = 0;
  }
}

static ir_i64_list iota_list(pass_builder *k, int n, int64_t value_or_minus1) {
  int64_t v[SH_MAX_RANK];
  for (int i = 0; i < n; i++)
    v[i] = value_or_minus1 < 0 ? i : value_or_minus1;
  return ir_i64_list_copy(k->m, v, n);
}

static hlo_status expand_permute(pass_builder *k, ir_instr *in, const ir_i64_list *dims) {
  ir_instr *x = in->operands[0];
  const ir_shape *xs = x->shape;
  int_literal lit = {0};
  bool coord = false;
  ir_str text = raw_attr(in, "indices");
  if (!text.p || !read_literal(text, &lit) || !indices_fit(&lit, xs, dims, &coord)) {
    free(lit.v);
    return bad(in, "mode=permute needs indices=<integer literal> with the operand's dimensions (or 1), then one "
                   "coordinate per listed dimension%s", "");
  }
  bool wide = false;
  for (int d = 0; d < xs->rank; d++)
    wide |= xs->dims[d] > INT32_MAX;
  int64_t n, cdims[SH_MAX_RANK + 1];
  ir_shape_num_elements(xs, &n);
  for (int d = 0; d < xs->rank; d++)
    cdims[d] = xs->dims[d];
  cdims[xs->rank] = xs->rank;
  size_t bytes = (size_t)(n * xs->rank) * (wide ? 8 : 4);
  void *data = malloc(bytes ? bytes : 1);
  if (!data) {
    free(lit.v);
    return oom();
  }
  full_coordinates(&lit, xs, dims, coord, wide, data);
  free(lit.v);
  ir_shape *cs = pass_build_array(k, wide ? IR_S64 : IR_S32, xs->rank + 1, cdims);
  ir_instr *c = pass_build_constant(k, "permute.coordinates", cs, data);
  free(data);
  ir_instr *ops[2] = {x, c};
  ir_instr *g = c ? pass_build_instr(k, IR_OP_GATHER, "permute", pass_build_array(k, xs->et, xs->rank, xs->dims), ops, 2) : NULL;
  if (!g)
    return oom();
  g->attrs.u.gather.offset_dims = (ir_i64_list){0};
  g->attrs.u.gather.collapsed_slice_dims = iota_list(k, xs->rank, -1);
  g->attrs.u.gather.start_index_map = iota_list(k, xs->rank, -1);
  g->attrs.u.gather.slice_sizes = iota_list(k, xs->rank, 1);
  g->attrs.u.gather.index_vector_dim = xs->rank;
  if (xs->rank && (!g->attrs.u.gather.collapsed_slice_dims.v || !g->attrs.u.gather.slice_sizes.v))
    return oom();
  ir_replace_all_uses(in->parent, in, g);
  return NULL;
}

/* ---- driver ------------------------------------------------------------------------------------- */

static hlo_status expand(pass_builder *k, ir_instr *in) {
  if (in->n_operands != 1 || in->shape->et == IR_TUPLE || !ir_shape_equal(in->shape, in->operands[0]->shape))
    return bad(in, "needs one array operand and a result of the operand's shape%s", "");
  const ir_shape *xs = in->operands[0]->shape;
  if (xs->rank > SH_MAX_RANK)
    return bad(in, "an operand of rank above 64%s", "");
  const ir_i64_list *dims = &in->attrs.dimensions;
  uint64_t seen = 0;
  for (int i = 0; i < dims->n; i++) {
    if (dims->v[i] < 0 || dims->v[i] >= xs->rank || (seen >> dims->v[i] & 1))
      return bad(in, "dimensions={...} must list operand dimensions, each once%s", "");
    seen |= 1ull << dims->v[i];
  }
  ir_str mode = raw_attr(in, "mode");
  if (mode.p && ir_str_eq(mode, "rotate"))
    return expand_rotate(k, in, dims);
  if (mode.p && ir_str_eq(mode, "permute"))
    return expand_permute(k, in, dims);
  if (!mode.p)
    return bad(in, "needs mode=rotate or mode=permute%s", "");
  char m[64];
  snprintf(m, sizeof m, "%.*s", (int)(mode.len < 40 ? mode.len : 40), mode.p);
  return bad(in, "mode=%s: hloc runs the modes XLA's ShuffleExpander expands (rotate, permute)", m);
}

static bool is_shuffle(const ir_instr *in) { return in->op == IR_OP_SHUFFLE; }

static hlo_status expand_computation(pass_builder *k, ir_computation *c) {
  return pass_build_rewrite_each(k, c, is_shuffle, expand, "expand-shuffle");
}

hlo_status pass_expand_shuffle(ir_module *m) {
  bool any = false;
  for (int ci = 0; ci < m->n_comps; ci++)
    for (int i = 0; i < m->comps[ci]->n_instrs; i++)
      any |= m->comps[ci]->instrs[i]->op == IR_OP_SHUFFLE;
  if (!any)
    return NULL;
  pass_builder k;
  hlo_status st = pass_builder_init(&k, m) ? NULL : oom();
  for (int ci = 0; ci < m->n_comps && !st; ci++)
    st = expand_computation(&k, m->comps[ci]);
  pass_builder_deinit(&k);
  ir_rebuild_uses(m);
  return st;
}
