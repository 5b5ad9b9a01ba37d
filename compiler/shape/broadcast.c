/* broadcast.c — XLA's broadcasting rules and hloc's extensions (docs/broadcasting.md):
 * equal shapes; implicit scalar; same-rank degenerate (size-1) dimensions; InDim
 * broadcasting with broadcast_dimensions={...} (composed with degenerate dims, as XLA's
 * builder does); OpenVINO's auto_broadcast=none|numpy|pdpd (axis=) rules; the bidirectional
 * rule of broadcast(x); and --strict, which accepts only operands of equal dimensions, as
 * XLA's HLO verifier does.  shape_broadcast_operand_map tells the canonicalization pass where
 * each operand dimension lands.  Tests: broadcast_test.c, testdata/broadcast.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "shape/shape.h"

/* One dimension with its dynamism (IR_DIM_*); unbounded ones have n == -1. */
typedef struct bdim {
  int64_t n;
  uint8_t kind;
} bdim;

typedef struct bctx {
  ir_module *m;
  const char *what;
  ir_loc loc;
  ir_diag_list *d;
  const ir_shape *l, *r;
  char ls[256], rs[256]; /* the operand shapes as printed in messages */
} bctx;

static bdim dim_of(const ir_shape *s, int i) {
  return (bdim){s->dims[i], s->dyn ? s->dyn[i] : (uint8_t)IR_DIM_STATIC};
}

/* "{1,2}" into buf (truncated with "..." when long). */
static const char *list_str(const ir_i64_list *v, char *buf, size_t cap) {
  size_t at = (size_t)snprintf(buf, cap, "{");
  for (int i = 0; i < v->n && at < cap; i++)
    at += (size_t)snprintf(buf + at, cap - at, "%s%" PRId64, i ? "," : "", v->v[i]);
  if (at + 5 >= cap)
    snprintf(buf + (cap > 5 ? cap - 5 : 0), cap > 5 ? 5 : cap, "...}");
  else
    snprintf(buf + at, cap - at, "}");
  return buf;
}

/* The degenerate-dimension rule on one pair (XLA's InferDegenerateDimensionBroadcastShape,
 * dynamic dimensions included): equal sizes, or one of them is 1; an unbounded dimension
 * agrees with anything.  False when the pair is incompatible. */
static bool merge_dim(bdim a, bdim b, bdim *out) {
  if (a.n == 1 || b.n == 1) {
    *out = a.n == 1 ? b : a;
    return true;
  }
  if (a.n == b.n) {
    *out = (bdim){a.n, a.kind > b.kind ? a.kind : b.kind};
    return true;
  }
  if (a.kind == IR_DIM_UNBOUNDED || b.kind == IR_DIM_UNBOUNDED) {
    bdim other = a.kind == IR_DIM_UNBOUNDED ? b : a;
    /* A bounded dimension might turn out to be 1 at run time, so the result stays unbounded. */
    *out = other.kind == IR_DIM_BOUNDED ? (bdim){-1, IR_DIM_UNBOUNDED} : other;
    return true;
  }
  return false;
}

static ir_shape *make_shape(ir_module *m, ir_etype et, int rank, const bdim *dims) {
  int64_t *n = rank ? ir_arena_alloc_array(&m->arena, (size_t)rank, sizeof *n) : NULL;
  if (rank && !n)
    return NULL;
  bool dynamic = false;
  for (int i = 0; i < rank; i++) {
    n[i] = dims[i].n;
    dynamic |= dims[i].kind != IR_DIM_STATIC;
  }
  ir_shape *s = ir_shape_array(m, et, rank, n);
  if (s && dynamic) {
    s->dyn = ir_arena_alloc_array(&m->arena, (size_t)rank, 1);
    if (!s->dyn)
      return NULL;
    for (int i = 0; i < rank; i++)
      s->dyn[i] = dims[i].kind;
  }
  return s;
}

static bdim *dims_alloc(bctx *c, int rank) {
  return ir_arena_alloc_array(&c->m->arena, (size_t)(rank ? rank : 1), sizeof(bdim));
}

static ir_shape *copy_shape(bctx *c, const ir_shape *s) {
  bdim *d = dims_alloc(c, s->rank);
  if (!d)
    return NULL;
  for (int i = 0; i < s->rank; i++)
    d[i] = dim_of(s, i);
  return make_shape(c->m, c->l->et, s->rank, d);
}

/* A pair of dimensions that does not broadcast under `rule`. */
static ir_shape *incompatible(bctx *c, const char *rule, int dl, int dr) {
  ir_diag_error(c->d, c->loc,
                "%s: operands %s and %s are not broadcast-compatible (%s): dimension %d of lhs (size %" PRId64
                ") vs dimension %d of rhs (size %" PRId64 ")",
                c->what, c->ls, c->rs, rule, dl, c->l->dims[dl], dr, c->r->dims[dr]);
  return NULL;
}

/* ---- --strict: exactly XLA's verifier (CheckElementwiseInstruction) ------------------------- */

static ir_shape *strict_rule(bctx *c, const ir_broadcast_attrs *a) {
  char buf[256];
  if (a && a->has_broadcast_dimensions) {
    ir_diag_error(c->d, c->loc, "%s: broadcast_dimensions=%s is an hloc extension (rejected by --strict)", c->what,
                  list_str(&a->broadcast_dimensions, buf, sizeof buf));
    return NULL;
  }
  static const char *const ab_name[] = {[IR_AB_EXPLICIT] = "none", [IR_AB_NUMPY] = "numpy", [IR_AB_PDPD] = "pdpd",
                                        [IR_AB_BIDIRECTIONAL] = "bidirectional"};
  if (a && a->auto_broadcast != IR_AB_NONE) {
    ir_diag_error(c->d, c->loc, "%s: auto_broadcast=%s is an hloc extension (rejected by --strict)", c->what,
                  ab_name[a->auto_broadcast]);
    return NULL;
  }
  if (a && a->axis != -1) {
    ir_diag_error(c->d, c->loc, "%s: axis=%" PRId64 " is an hloc extension (rejected by --strict)", c->what, a->axis);
    return NULL;
  }
  if (!ir_shape_same_dims(c->l, c->r)) {
    ir_diag_error(c->d, c->loc,
                  "%s: operand shapes %s and %s differ; implicit broadcasting is an hloc extension (rejected by "
                  "--strict)",
                  c->what, c->ls, c->rs);
    return NULL;
  }
  return copy_shape(c, c->l);
}

/* ---- OpenVINO: numpy (right-aligned), pdpd (rhs into lhs at axis) ----------------------------- */

static ir_shape *numpy_rule(bctx *c) {
  const ir_shape *l = c->l, *r = c->r;
  int rank = l->rank > r->rank ? l->rank : r->rank;
  bdim *out = dims_alloc(c, rank);
  if (!out)
    return NULL;
  for (int i = 0; i < rank; i++) {
    int il = l->rank - rank + i, ir = r->rank - rank + i;
    bdim a = il >= 0 ? dim_of(l, il) : (bdim){1, 0}, b = ir >= 0 ? dim_of(r, ir) : (bdim){1, 0};
    if (!merge_dim(a, b, &out[i]))
      return incompatible(c, "numpy", il, ir);
  }
  return make_shape(c->m, l->et, rank, out);
}

/* rhs's rank without its trailing size-1 dimensions (pdpd ignores them). */
static int pdpd_trimmed_rank(const ir_shape *b) {
  int n = b->rank;
  while (n > 0 && b->dims[n - 1] == 1 && !(b->dyn && b->dyn[n - 1] != IR_DIM_STATIC))
    n--;
  return n;
}

/* OpenVINO pdpd: B (rhs, rank <= rank of A) is a contiguous run of A's dimensions starting at
 * `axis` (default rank(A) - rank(B); no other negative value); trailing size-1 dimensions of
 * B are ignored; each of B's dimensions equals A's or is 1 (only B broadcasts).  Result: A. */
static ir_shape *pdpd_rule(bctx *c, int64_t axis) {
  const ir_shape *a = c->l, *b = c->r;
  if (b->rank > a->rank) {
    ir_diag_error(c->d, c->loc, "%s: auto_broadcast=pdpd needs rhs rank <= lhs rank, but rhs %s has rank %d and lhs %s rank %d",
                  c->what, c->rs, b->rank, c->ls, a->rank);
    return NULL;
  }
  if (axis < -1) {
    ir_diag_error(c->d, c->loc, "%s: auto_broadcast=pdpd axis must be -1 or non-negative, got %" PRId64, c->what, axis);
    return NULL;
  }
  int64_t start = axis == -1 ? a->rank - b->rank : axis;
  int len = pdpd_trimmed_rank(b);
  if (start > a->rank - len) {
    /* start <= INT64_MAX and len <= rank, so the end only overflows for absurd axes. */
    int64_t end = start > INT64_MAX - len ? INT64_MAX : start + len - 1;
    ir_diag_error(c->d, c->loc,
                  "%s: auto_broadcast=pdpd: rhs %s does not fit in lhs %s at axis %" PRId64
                  " (its %d dimensions without trailing 1s would end at dimension %" PRId64 ")",
                  c->what, c->rs, c->ls, start, len, end);
    return NULL;
  }
  for (int i = 0; i < len; i++) {
    bdim x = dim_of(b, i), y = dim_of(a, (int)start + i);
    bool ok = x.n == 1 || x.n == y.n || x.kind == IR_DIM_UNBOUNDED || y.kind == IR_DIM_UNBOUNDED;
    if (!ok)
      return incompatible(c, "pdpd broadcasts rhs into lhs only", (int)start + i, i);
  }
  return copy_shape(c, a);
}

/* ---- XLA: scalar, degenerate dimensions, InDim (broadcast_dimensions) ------------------------ */

/* Same-rank degenerate broadcasting of `l` (possibly an InDim intermediate) with `r`. */
static ir_shape *degenerate_rule(bctx *c, const bdim *l, const bdim *r, int rank, const char *rule,
                                 const int64_t *lmap, const int64_t *rmap) {
  bdim *out = dims_alloc(c, rank);
  if (!out)
    return NULL;
  for (int i = 0; i < rank; i++)
    if (!merge_dim(l[i], r[i], &out[i]))
      return incompatible(c, rule, (int)lmap[i], (int)rmap[i]);
  return make_shape(c->m, c->l->et, rank, out);
}

static bool is_identity(const ir_i64_list *v) {
  for (int i = 0; i < v->n; i++)
    if (v->v[i] != i)
      return false;
  return true;
}

/* Checks broadcast_dimensions against the lower-rank operand `lo` and the higher-rank `hi`
 * (XLA's InferInDimBroadcastShape); false after a diagnostic. */
static bool indim_check(bctx *c, const ir_i64_list *bd, const ir_shape *lo, const ir_shape *hi, bool lhs_low) {
  char buf[256], los[256];
  list_str(bd, buf, sizeof buf);
  ir_shape_format(lo, false, los, sizeof los);
  if (bd->n != lo->rank) {
    ir_diag_error(c->d, c->loc, "%s: broadcast_dimensions=%s has %d entries but the lower-rank operand %s has rank %d",
                  c->what, buf, bd->n, los, lo->rank);
    return false;
  }
  for (int i = 0; i < bd->n; i++) {
    int64_t k = bd->v[i];
    if (k < 0 || k >= hi->rank) {
      ir_diag_error(c->d, c->loc,
                    "%s: broadcast_dimensions=%s: dimension %" PRId64 " is out of range for the higher-rank operand "
                    "%s (rank %d)",
                    c->what, buf, k, lhs_low ? c->rs : c->ls, hi->rank);
      return false;
    }
    if (i > 0 && k <= bd->v[i - 1]) {
      ir_diag_error(c->d, c->loc, "%s: broadcast_dimensions=%s must be strictly increasing, but %" PRId64 " follows %" PRId64,
                    c->what, buf, k, bd->v[i - 1]);
      return false;
    }
  }
  return true;
}

/* InDim: the lower-rank operand's dimension i lands on dimension bd[i] of the higher-rank
 * one; the other dimensions take the higher-rank operand's sizes; then the degenerate rule. */
static ir_shape *indim_rule(bctx *c, const ir_i64_list *bd) {
  bool lhs_low = c->l->rank < c->r->rank;
  const ir_shape *lo = lhs_low ? c->l : c->r, *hi = lhs_low ? c->r : c->l;
  if (!indim_check(c, bd, lo, hi, lhs_low))
    return NULL;
  int rank = hi->rank;
  bdim *mid = dims_alloc(c, rank), *big = dims_alloc(c, rank);
  int64_t *lomap = ir_arena_alloc_array(&c->m->arena, (size_t)rank, sizeof(int64_t));
  int64_t *himap = ir_arena_alloc_array(&c->m->arena, (size_t)rank, sizeof(int64_t));
  if (!mid || !big || !lomap || !himap)
    return NULL;
  for (int i = 0; i < rank; i++) {
    mid[i] = big[i] = dim_of(hi, i);
    lomap[i] = himap[i] = i;
  }
  for (int i = 0; i < bd->n; i++) {
    mid[bd->v[i]] = dim_of(lo, i);
    lomap[bd->v[i]] = i;
  }
  return lhs_low ? degenerate_rule(c, mid, big, rank, "broadcast_dimensions", lomap, himap)
                 : degenerate_rule(c, big, mid, rank, "broadcast_dimensions", himap, lomap);
}

static ir_shape *xla_rule(bctx *c, const ir_broadcast_attrs *a) {
  const ir_shape *l = c->l, *r = c->r;
  bool has_bd = a && a->has_broadcast_dimensions;
  if (l->rank == r->rank) {
    if (has_bd && (a->broadcast_dimensions.n != l->rank || !is_identity(&a->broadcast_dimensions))) {
      char buf[256];
      ir_diag_error(c->d, c->loc,
                    "%s: broadcast_dimensions=%s on operands of the same rank must be the identity or be left out",
                    c->what, list_str(&a->broadcast_dimensions, buf, sizeof buf));
      return NULL;
    }
    bdim *ld = dims_alloc(c, l->rank), *rd = dims_alloc(c, l->rank);
    int64_t *id = ir_arena_alloc_array(&c->m->arena, (size_t)(l->rank ? l->rank : 1), sizeof(int64_t));
    if (!ld || !rd || !id)
      return NULL;
    for (int i = 0; i < l->rank; i++) {
      ld[i] = dim_of(l, i);
      rd[i] = dim_of(r, i);
      id[i] = i;
    }
    return degenerate_rule(c, ld, rd, l->rank, "degenerate dimensions", id, id);
  }
  if (has_bd)
    return indim_rule(c, &a->broadcast_dimensions);
  if (l->rank == 0 || r->rank == 0) {
    static const ir_i64_list none = {NULL, 0};
    return indim_rule(c, &none); /* a scalar: broadcast_dimensions={} */
  }
  ir_diag_error(c->d, c->loc,
                "%s: operands %s and %s have different ranks; write broadcast_dimensions={...} to say how the "
                "lower-rank one maps",
                c->what, c->ls, c->rs);
  return NULL;
}

/* Combinations of the extension attributes that mean nothing; false after a diagnostic. */
static bool attrs_consistent(bctx *c, const ir_broadcast_attrs *a) {
  static const char *const ab_name[] = {[IR_AB_EXPLICIT] = "none", [IR_AB_NUMPY] = "numpy", [IR_AB_PDPD] = "pdpd",
                                        [IR_AB_BIDIRECTIONAL] = "bidirectional"};
  if (a->auto_broadcast == IR_AB_BIDIRECTIONAL) {
    ir_diag_error(c->d, c->loc,
                  "%s: auto_broadcast=bidirectional applies to broadcast only; elementwise operations take "
                  "auto_broadcast=none, numpy or pdpd",
                  c->what);
    return false;
  }
  if (a->has_broadcast_dimensions && a->auto_broadcast != IR_AB_NONE) {
    char buf[256];
    ir_diag_error(c->d, c->loc, "%s: broadcast_dimensions=%s cannot be combined with auto_broadcast=%s", c->what,
                  list_str(&a->broadcast_dimensions, buf, sizeof buf), ab_name[a->auto_broadcast]);
    return false;
  }
  if (a->axis != -1 && a->auto_broadcast != IR_AB_PDPD) {
    ir_diag_error(c->d, c->loc, "%s: axis=%" PRId64 " applies only to auto_broadcast=pdpd", c->what, a->axis);
    return false;
  }
  return true;
}

ir_shape *shape_broadcast_binary(ir_module *m, const ir_shape *l, const ir_shape *r, const ir_broadcast_attrs *a,
                                 const shape_options *opts, const char *what, ir_loc loc, ir_diag_list *d) {
  bctx c = {.m = m, .what = what, .loc = loc, .d = d, .l = l, .r = r};
  ir_shape_format(l, false, c.ls, sizeof c.ls);
  ir_shape_format(r, false, c.rs, sizeof c.rs);
  if (opts && opts->strict)
    return strict_rule(&c, a);
  if (a && !attrs_consistent(&c, a))
    return NULL;
  ir_auto_broadcast ab = a ? a->auto_broadcast : IR_AB_NONE;
  if (ab == IR_AB_NUMPY)
    return numpy_rule(&c);
  if (ab == IR_AB_PDPD)
    return pdpd_rule(&c, a->axis);
  if (ab == IR_AB_EXPLICIT) {
    if (ir_shape_same_dims(l, r))
      return copy_shape(&c, l);
    ir_diag_error(d, loc, "%s: operands %s and %s are not broadcast-compatible (auto_broadcast=none needs equal shapes)",
                  what, c.ls, c.rs);
    return NULL;
  }
  return xla_rule(&c, a);
}

/* ---- broadcast(x), auto_broadcast=bidirectional ------------------------------------------------ */

ir_shape *shape_broadcast_to_target(ir_module *m, const ir_shape *operand, const ir_i64_list *target,
                                    const shape_options *opts, const char *what, ir_loc loc, ir_diag_list *d) {
  char ts[256], os[256];
  list_str(target, ts, sizeof ts);
  ir_shape_format(operand, false, os, sizeof os);
  if (opts && opts->strict) {
    ir_diag_error(d, loc, "%s: auto_broadcast=bidirectional is an hloc extension (rejected by --strict)", what);
    return NULL;
  }
  for (int i = 0; i < target->n; i++)
    if (target->v[i] < 0) {
      ir_diag_error(d, loc, "%s: target_shape=%s has a negative dimension (%" PRId64 ")", what, ts, target->v[i]);
      return NULL;
    }
  int rank = operand->rank > target->n ? operand->rank : target->n;
  bdim *out = ir_arena_alloc_array(&m->arena, (size_t)(rank ? rank : 1), sizeof(bdim));
  if (!out)
    return NULL;
  for (int i = 0; i < rank; i++) {
    int io = operand->rank - rank + i, it = target->n - rank + i;
    bdim a = io >= 0 ? dim_of(operand, io) : (bdim){1, 0}, b = it >= 0 ? (bdim){target->v[it], 0} : (bdim){1, 0};
    if (!merge_dim(a, b, &out[i])) {
      ir_diag_error(d, loc,
                    "%s: operand %s does not broadcast to target_shape=%s (bidirectional): dimension %d of the operand "
                    "(size %" PRId64 ") vs dimension %d of target_shape (size %" PRId64 ")",
                    what, os, ts, io, a.n, it, b.n);
      return NULL;
    }
  }
  return make_shape(m, operand->et, rank, out);
}

/* ---- where operand dimensions land (for pass_canonicalize_broadcasts) ------------------------- */

static void right_aligned(int rank, int res_rank, int64_t *out_map) {
  for (int i = 0; i < rank; i++)
    out_map[i] = res_rank - rank + i;
}

bool shape_broadcast_operand_map(const ir_instr *in, int which, int64_t *out_map) {
  const ir_shape *res = in->shape, *op = in->operands[which]->shape;
  const ir_broadcast_attrs *a = &in->attrs.bc;
  if (!res || !op || op->rank > res->rank)
    return false;
  if (in->op == IR_OP_BROADCAST || a->auto_broadcast == IR_AB_NUMPY) {
    right_aligned(op->rank, res->rank, out_map);
    return true;
  }
  if (a->auto_broadcast == IR_AB_PDPD && which == 1) {
    const ir_shape *lhs = in->operands[0]->shape;
    int64_t start = a->axis == -1 ? lhs->rank - op->rank : a->axis;
    int len = pdpd_trimmed_rank(op);
    for (int i = 0; i < op->rank; i++)
      out_map[i] = i < len ? start + i : -1; /* trailing 1s: dropped */
    return true;
  }
  const ir_shape *other = in->n_operands == 2 ? in->operands[1 - which]->shape : op;
  if (a->has_broadcast_dimensions && op->rank < other->rank) {
    if (a->broadcast_dimensions.n != op->rank)
      return false;
    if (op->rank)
      memcpy(out_map, a->broadcast_dimensions.v, (size_t)op->rank * sizeof(int64_t));
    return true;
  }
  if (op->rank != res->rank && op->rank != 0)
    return false;
  right_aligned(op->rank, res->rank, out_map); /* same rank: identity; scalar: nothing */
  return true;
}
