/* expand_dots.c — rewrites ragged-dot and scaled-dot into dot and elementwise ops, as XLA's
 * own expanders do, so that both run through the dot lowering (GEMM path included).
 * Pre: verified (their shapes inferred), broadcasts canonical.
 *
 * ragged-dot(lhs, rhs, group_sizes) (XLA's RaggedDotRewriter,
 * xla/hlo/transforms/expanders/ragged_dot_rewriter.cc): group g owns the indices
 * [cum[g] - group_sizes[g], cum[g]) of the lhs ragged dimension, cum the running sum of
 * group_sizes along its last dimension (computed here as a dot with a triangular 0/1 matrix).
 * The ragged operand becomes `dense`: a new dimension of G groups (after the dimensions
 * group_sizes' leading dimensions index), each a copy of the operand with the indices outside
 * its group set to zero.
 * - ragged dimension non-contracting: dot(dense_lhs, rhs) contracting the group dimension with
 *   rhs_group_dims too (each row meets its own group's rhs; rows past the last group are 0);
 * - ragged dimension contracting: dot(dense_lhs, dense_rhs) with the group dimension as the
 *   first batch dimension (result [G, batch..., lhs free..., rhs free...]);
 * - ragged dimension batch: the plain dot.
 * group_sizes is [G], or [d0, ..., G] whose leading dimensions index the lhs's leading
 * dimensions (for a contracting ragged dimension those must be batch dimensions).
 *
 * scaled-dot(lhs, rhs, lhs_scale, rhs_scale) (XLA's ScaledDotRewriter,
 * xla/backends/gpu/transforms/scaled_dot_rewriter.cc): each operand whose scale is not a
 * scalar is multiplied by its scale repeated over blocks (scale dim i covers operand_dim /
 * scale_dim consecutive elements), both first converted to a common type (bf16 when both are
 * narrower than 16 bits; the type when equal; f32 for equal widths; else the wider); a scalar
 * scale leaves its operand as it is, as XLA's rewriter does.  Then the plain dot.
 * New instructions are named after the op (".ragged.iota", ".lhs.dequant", ...).
 * Tests: testdata/golden (make_ops_misc.py).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/pass_build.h"
#include "passes/passes.h"

#define XD_MAX_RANK 64

static hlo_status oom(void) { return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "expand-dots: out of memory"); }

static ir_instr *convert(pass_builder *k, ir_instr *x, ir_etype to, const char *what) {
  if (x->shape->et == to)
    return x;
  return pass_build_instr(k, IR_OP_CONVERT, what, pass_build_array(k, to, x->shape->rank, x->shape->dims), &x, 1);
}

/* A dot of lhs and rhs under dnums with `like`'s result shape and precision. */
static ir_instr *plain_dot(pass_builder *k, ir_instr *like, ir_instr *lhs, ir_instr *rhs, const ir_dot_dnums *dn) {
  ir_instr *ops[2] = {lhs, rhs};
  ir_instr *d = pass_build_instr(k, IR_OP_DOT, "dot", ir_shape_clone(k->m, like->shape), ops, 2);
  if (d) {
    d->attrs.u.dot = like->attrs.u.dot;
    d->attrs.u.dot.dnums = *dn;
    d->attrs.u.dot.dnums.lhs_ragged = (ir_i64_list){0};
    d->attrs.u.dot.dnums.rhs_group = (ir_i64_list){0};
    if (d->attrs.u.dot.n_precision > 2)
      d->attrs.u.dot.n_precision = 2;
  }
  return d;
}

/* ---- ragged-dot -------------------------------------------------------------------------------- */

static hlo_status ragged_fail(const ir_instr *in, const char *why) {
  return hlo_status_make(HLO_UNIMPLEMENTED, "%d:%d: error: %%%s: ragged-dot: %s", in->loc.line, in->loc.col,
                         in->name.p, why);
}

/* The inclusive and exclusive running sums of group_sizes along its last dimension. */
static hlo_status running_sums(pass_builder *k, ir_instr *gs, ir_instr **out_incl, ir_instr **out_excl) {
  const ir_shape *s = gs->shape;
  int64_t g = s->dims[s->rank - 1], tdims[2] = {g, g};
  ir_shape *ts = pass_build_array(k, s->et, 2, tdims), *ps = pass_build_array(k, IR_PRED, 2, tdims);
  ir_instr *i0 = pass_build_iota(k, "ragged.row", ts, 0);
  ir_instr *i1 = pass_build_iota(k, "ragged.col", ts, 1);
  if (!i0 || !i1)
    return oom();
  ir_instr *le = pass_build_compare(k, "ragged.le", ps, i0, i1, IR_CMP_LE);
  ir_instr *tri = le ? pass_build_instr(k, IR_OP_CONVERT, "ragged.tri", ts, &le, 1) : NULL;
  if (!tri)
    return oom();
  /* incl[..., j] = sum_i gs[..., i] * (i <= j) */
  ir_instr *ops[2] = {gs, tri};
  ir_instr *d = pass_build_instr(k, IR_OP_DOT, "ragged.cumsum", pass_build_array(k, s->et, s->rank, s->dims), ops, 2);
  int64_t lc = s->rank - 1, rc = 0;
  if (!d)
    return oom();
  d->attrs.u.dot.dnums.lhs_contracting = ir_i64_list_copy(k->m, &lc, 1);
  d->attrs.u.dot.dnums.rhs_contracting = ir_i64_list_copy(k->m, &rc, 1);
  *out_incl = d;
  *out_excl = pass_build_binary(k, IR_OP_SUBTRACT, "ragged.start", pass_build_array(k, s->et, s->rank, s->dims), d, gs);
  return *out_excl && d->attrs.u.dot.dnums.lhs_contracting.v && d->attrs.u.dot.dnums.rhs_contracting.v ? NULL : oom();
}

/* x with a new dimension of G groups at position p: dense[..g..] = x[...] where the index in
 * dimension rdim lies in group g, else 0.  group_sizes' leading dimensions index x's
 * dimensions 0 .. p-1 (p = its rank - 1), so every broadcast keeps its dimensions in order. */
static ir_instr *ragged_dense(pass_builder *k, ir_instr *x, int rdim, ir_instr *gs, ir_instr *incl, ir_instr *excl,
                              const char *side) {
  const ir_shape *xs = x->shape, *gss = gs->shape;
  int p = gss->rank - 1, r = xs->rank + 1;
  int64_t dims[XD_MAX_RANK + 1], map[XD_MAX_RANK], gmap[XD_MAX_RANK];
  for (int d = 0; d < xs->rank; d++) {
    map[d] = d < p ? d : d + 1;
    dims[map[d]] = xs->dims[d];
  }
  dims[p] = gss->dims[p];
  for (int q = 0; q <= p; q++)
    gmap[q] = q;
  char what[48];
  ir_instr *iota = pass_build_iota(k, "ragged.iota", pass_build_array(k, gss->et, r, dims), map[rdim]);
  if (!iota)
    return NULL;
  ir_shape *gsh = pass_build_array(k, gss->et, r, dims), *ps = pass_build_array(k, IR_PRED, r, dims);
  ir_instr *lo = pass_build_broadcast(k, excl, gsh, gmap, "ragged.lo");
  ir_instr *hi = lo ? pass_build_broadcast(k, incl, pass_build_array(k, gss->et, r, dims), gmap, "ragged.hi") : NULL;
  ir_instr *c1 = hi ? pass_build_compare(k, "ragged.ge", ps, lo, iota, IR_CMP_LE) : NULL;
  ir_instr *c2 = c1 ? pass_build_compare(k, "ragged.lt", pass_build_array(k, IR_PRED, r, dims), iota, hi, IR_CMP_LT) : NULL;
  ir_instr *in = c2 ? pass_build_binary(k, IR_OP_AND, "ragged.in", pass_build_array(k, IR_PRED, r, dims), c1, c2) : NULL;
  snprintf(what, sizeof what, "%s.groups", side);
  ir_instr *xb = in ? pass_build_broadcast(k, x, pass_build_array(k, xs->et, r, dims), map, what) : NULL;
  ir_instr *z = xb ? pass_build_constant(k, "zero", ir_shape_scalar(k->m, xs->et), NULL) : NULL;
  int64_t none = 0;
  ir_instr *zb = z ? pass_build_broadcast(k, z, pass_build_array(k, xs->et, r, dims), &none, "ragged.zeros") : NULL;
  if (!zb)
    return NULL;
  ir_instr *ops[3] = {in, xb, zb};
  snprintf(what, sizeof what, "%s.dense", side);
  return pass_build_instr(k, IR_OP_SELECT, what, pass_build_array(k, xs->et, r, dims), ops, 3);
}

/* l with every dimension at or after p moved up by one (a group dimension inserted at p),
 * led by p itself when with_lead. */
static bool shifted(pass_builder *k, const ir_i64_list *l, int64_t p, bool with_lead, ir_i64_list *out_list) {
  int64_t v[XD_MAX_RANK + 1];
  int n = 0;
  if (with_lead)
    v[n++] = p;
  for (int i = 0; i < l->n && n <= XD_MAX_RANK; i++)
    v[n++] = l->v[i] < p ? l->v[i] : l->v[i] + 1;
  *out_list = ir_i64_list_copy(k->m, v, n);
  return n == 0 || out_list->v != NULL;
}

static hlo_status expand_ragged(pass_builder *k, ir_instr *in) {
  ir_instr *lhs = in->operands[0], *rhs = in->operands[1], *gs = in->operands[2];
  const ir_dot_dnums *dn = &in->attrs.u.dot.dnums;
  int rd = (int)dn->lhs_ragged.v[0];
  bool contracting = false, batch = false;
  int ci = -1;
  for (int i = 0; i < dn->lhs_contracting.n; i++)
    if (dn->lhs_contracting.v[i] == rd)
      contracting = true, ci = i;
  for (int i = 0; i < dn->lhs_batch.n; i++)
    batch |= dn->lhs_batch.v[i] == rd;
  ir_dot_dnums nd = *dn;
  if (batch) {
    ir_instr *d = plain_dot(k, in, lhs, rhs, &nd);
    if (!d)
      return oom();
    ir_replace_all_uses(in->parent, in, d);
    return NULL;
  }
  if (lhs->shape->rank + 1 > XD_MAX_RANK || rhs->shape->rank + 1 > XD_MAX_RANK)
    return ragged_fail(in, "operands of rank above 63");
  int p = gs->shape->rank - 1;
  for (int q = 0; q < p; q++) {
    if (q == rd || gs->shape->dims[q] != lhs->shape->dims[q])
      return ragged_fail(in, "the leading dimensions of group_sizes must match the lhs's leading dimensions, "
                             "before the ragged one");
    bool paired = false; /* lhs dim q is batch dim j, paired with rhs dim q */
    for (int j = 0; j < dn->lhs_batch.n; j++)
      paired |= dn->lhs_batch.v[j] == q && dn->rhs_batch.v[j] == q;
    if (contracting && !paired)
      return ragged_fail(in, "with a contracting ragged dimension, the leading dimensions of group_sizes must be "
                             "batch dimensions leading both operands in the same order");
  }
  ir_instr *incl = NULL, *excl = NULL;
  HLO_RETURN_IF_ERROR(running_sums(k, gs, &incl, &excl));
  ir_instr *dl = ragged_dense(k, lhs, rd, gs, incl, excl, "lhs");
  if (!dl)
    return oom();
  ir_instr *dr = rhs;
  if (contracting) {
    dr = ragged_dense(k, rhs, (int)dn->rhs_contracting.v[ci], gs, incl, excl, "rhs");
    if (!dr)
      return oom();
    if (!shifted(k, &dn->lhs_batch, p, true, &nd.lhs_batch) || !shifted(k, &dn->rhs_batch, p, true, &nd.rhs_batch) ||
        !shifted(k, &dn->lhs_contracting, p, false, &nd.lhs_contracting) ||
        !shifted(k, &dn->rhs_contracting, p, false, &nd.rhs_contracting))
      return oom();
  } else {
    ir_i64_list grp = dn->rhs_group;
    int64_t v[XD_MAX_RANK + 1];
    v[0] = grp.v[0];
    for (int i = 0; i < dn->rhs_contracting.n; i++)
      v[i + 1] = dn->rhs_contracting.v[i];
    nd.rhs_contracting = ir_i64_list_copy(k->m, v, dn->rhs_contracting.n + 1);
    if (!nd.rhs_contracting.v || !shifted(k, &dn->lhs_batch, p, false, &nd.lhs_batch) ||
        !shifted(k, &dn->lhs_contracting, p, true, &nd.lhs_contracting))
      return oom();
  }
  ir_instr *d = plain_dot(k, in, dl, dr, &nd);
  if (!d)
    return oom();
  ir_replace_all_uses(in->parent, in, d);
  return NULL;
}

/* ---- scaled-dot --------------------------------------------------------------------------------- */

/* XLA's choice of the type both an operand and its scale are converted to. */
static ir_etype common_type(ir_etype a, ir_etype b) {
  int wa = ir_etype_table[a].bits, wb = ir_etype_table[b].bits;
  if (wa < 16 && wb < 16)
    return IR_BF16;
  if (a == b)
    return a;
  if (wa == wb)
    return IR_F32;
  return wa > wb ? a : b;
}

/* Operand `which` multiplied by its scale `which + 2` repeated over blocks. */
static ir_instr *dequantize(pass_builder *k, ir_instr *in, int which) {
  ir_instr *x = in->operands[which], *sc = in->operands[which + 2];
  if (sc->shape->rank == 0)
    return x; /* XLA's rewriter leaves the operand as it is */
  ir_etype t = common_type(x->shape->et, sc->shape->et);
  const char *side = which ? "rhs" : "lhs";
  char what[48];
  snprintf(what, sizeof what, "%s.convert", side);
  x = convert(k, x, t, what);
  snprintf(what, sizeof what, "%s.scale.convert", side);
  sc = x ? convert(k, sc, t, what) : NULL;
  if (!sc)
    return NULL;
  const ir_shape *xs = x->shape, *ss = sc->shape;
  int64_t dims[2 * XD_MAX_RANK], map[XD_MAX_RANK];
  int n = 0;
  for (int i = 0; i < xs->rank && i < XD_MAX_RANK; i++) {
    map[i] = n;
    dims[n++] = ss->dims[i];
    if (ss->dims[i] != xs->dims[i])
      dims[n++] = xs->dims[i] / ss->dims[i]; /* the block, repeated */
  }
  snprintf(what, sizeof what, "%s.scale.blocks", side);
  ir_instr *b = pass_build_broadcast(k, sc, pass_build_array(k, t, n, dims), map, what);
  snprintf(what, sizeof what, "%s.scale", side);
  ir_instr *r = b ? pass_build_instr(k, IR_OP_RESHAPE, what, pass_build_array(k, t, xs->rank, xs->dims), &b, 1) : NULL;
  if (!r)
    return NULL;
  r->attrs.u.inferred_dimension = -1;
  snprintf(what, sizeof what, "%s.dequant", side);
  return pass_build_binary(k, IR_OP_MULTIPLY, what, pass_build_array(k, t, xs->rank, xs->dims), x, r);
}

static hlo_status expand_scaled(pass_builder *k, ir_instr *in) {
  ir_instr *l = dequantize(k, in, 0);
  ir_instr *r = l ? dequantize(k, in, 1) : NULL;
  ir_instr *d = r ? plain_dot(k, in, l, r, &in->attrs.u.dot.dnums) : NULL;
  if (!d)
    return oom();
  ir_replace_all_uses(in->parent, in, d);
  return NULL;
}

/* ---- driver ------------------------------------------------------------------------------------- */

static bool is_dot_form(const ir_instr *in) { return in->op == IR_OP_RAGGED_DOT || in->op == IR_OP_SCALED_DOT; }

static hlo_status expand_dot_form(pass_builder *k, ir_instr *in) {
  return in->op == IR_OP_RAGGED_DOT ? expand_ragged(k, in) : expand_scaled(k, in);
}

static hlo_status expand_computation(pass_builder *k, ir_computation *c) {
  return pass_build_rewrite_each(k, c, is_dot_form, expand_dot_form, "expand-dots");
}

hlo_status pass_expand_dots(ir_module *m) {
  bool any = false;
  for (int ci = 0; ci < m->n_comps; ci++)
    for (int i = 0; i < m->comps[ci]->n_instrs; i++)
      any |= m->comps[ci]->instrs[i]->op == IR_OP_RAGGED_DOT || m->comps[ci]->instrs[i]->op == IR_OP_SCALED_DOT;
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
