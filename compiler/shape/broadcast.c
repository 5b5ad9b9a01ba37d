/* broadcast.c — XLA's broadcasting rules and hloc's extensions (docs/broadcasting.md):
 * equal shapes; implicit scalar; same-rank degenerate (size-1) dimensions; InDim
 * broadcasting with broadcast_dimensions={...} (composed with degenerate dims); OpenVINO's
 * numpy and pdpd rules; the bidirectional rule; and --strict, which accepts only equal
 * dimensions, as XLA's HLO verifier does.  Tests: testdata/broadcast, broadcast_test.c.
 */
#include <stdio.h>
#include <string.h>

#include "shape/shape.h"

static void fmt(const ir_shape *s, char *buf, size_t cap) { ir_shape_format(s, false, buf, cap); }

static ir_shape *result(ir_module *m, ir_etype et, int rank, const int64_t *dims) {
  return ir_shape_array(m, et, rank, dims);
}

/* Merges one pair of dimensions under the degenerate rule; -1 when incompatible. */
static int64_t merge_dim(int64_t a, int64_t b) {
  if (a == b)
    return a;
  if (a == 1)
    return b;
  if (b == 1)
    return a;
  return -1;
}

static ir_shape *incompatible(ir_diag_list *d, ir_loc loc, const char *what, const ir_shape *l,
                              const ir_shape *r, int dl, int dr, const char *rule) {
  char a[256], b[256];
  fmt(l, a, sizeof a);
  fmt(r, b, sizeof b);
  if (dl >= 0 && dr >= 0)
    ir_diag_error(d, loc,
                  "%s: operands %s and %s are not broadcast-compatible (%s): dimension %d of lhs "
                  "(size %lld) vs dimension %d of rhs (size %lld)",
                  what, a, b, rule, dl, (long long)l->dims[dl], dr, (long long)r->dims[dr]);
  else
    ir_diag_error(d, loc, "%s: operands %s and %s are not broadcast-compatible (%s)", what, a, b, rule);
  return NULL;
}

/* Right-aligned numpy rule (also the bidirectional one). */
static ir_shape *numpy_rule(ir_module *m, const ir_shape *l, const ir_shape *r, const char *what,
                            ir_loc loc, ir_diag_list *d, const char *rule) {
  int rank = l->rank > r->rank ? l->rank : r->rank;
  int64_t dims[64];
  for (int i = 0; i < rank; i++) {
    int il = l->rank - rank + i, irr = r->rank - rank + i;
    int64_t a = il >= 0 ? l->dims[il] : 1, b = irr >= 0 ? r->dims[irr] : 1;
    int64_t x = merge_dim(a, b);
    if (x < 0)
      return incompatible(d, loc, what, l, r, il, irr, rule);
    dims[i] = x;
  }
  return result(m, l->et, rank, dims);
}

/* OpenVINO pdpd: B (rank <= A) matches A starting at `axis` (default rank(A)-rank(B) after
 * dropping B's trailing size-1 dims); B's dims equal A's or are 1.  The result is A. */
static ir_shape *pdpd_rule(ir_module *m, const ir_shape *a, const ir_shape *b, int64_t axis,
                           const char *what, ir_loc loc, ir_diag_list *d) {
  char sa[256], sb[256];
  fmt(a, sa, sizeof sa);
  fmt(b, sb, sizeof sb);
  if (b->rank > a->rank) {
    ir_diag_error(d, loc, "%s: auto_broadcast=pdpd needs rhs rank <= lhs rank, but %s has rank %d and %s rank %d",
                  what, sb, b->rank, sa, a->rank);
    return NULL;
  }
  int brank = b->rank;
  if (axis == -1)
    while (brank > 0 && b->dims[brank - 1] == 1)
      brank--;
  if (axis < -1) {
    ir_diag_error(d, loc, "%s: auto_broadcast=pdpd axis must be -1 or non-negative, got %lld", what,
                  (long long)axis);
    return NULL;
  }
  int64_t start = axis == -1 ? a->rank - brank : axis;
  if (start < 0 || start + brank > a->rank) {
    ir_diag_error(d, loc, "%s: auto_broadcast=pdpd: %s does not fit in %s at axis %lld", what, sb, sa,
                  (long long)start);
    return NULL;
  }
  for (int i = 0; i < brank; i++) {
    int64_t x = b->dims[i], y = a->dims[start + i];
    if (x != y && x != 1)
      return incompatible(d, loc, what, a, b, (int)(start + i), i, "pdpd");
  }
  return result(m, a->et, a->rank, a->dims);
}

/* InDim: the lower-rank operand's dims map to broadcast_dimensions of the higher-rank one. */
static ir_shape *indim_rule(ir_module *m, const ir_shape *l, const ir_shape *r, const ir_i64_list *bd,
                            const char *what, ir_loc loc, ir_diag_list *d) {
  bool lhs_low = l->rank < r->rank;
  const ir_shape *lo = lhs_low ? l : r, *hi = lhs_low ? r : l;
  if (l->rank == r->rank) {
    ir_diag_error(d, loc, "%s: broadcast_dimensions needs operands of different ranks (both have rank %d)",
                  what, l->rank);
    return NULL;
  }
  if (bd->n != lo->rank) {
    ir_diag_error(d, loc, "%s: broadcast_dimensions has %d entries but the lower-rank operand has rank %d",
                  what, bd->n, lo->rank);
    return NULL;
  }
  int64_t dims[64];
  memcpy(dims, hi->dims, (size_t)hi->rank * sizeof(int64_t));
  for (int i = 0; i < bd->n; i++) {
    int64_t k = bd->v[i];
    if (k < 0 || k >= hi->rank) {
      ir_diag_error(d, loc, "%s: broadcast dimension %lld is out of range for rank %d", what, (long long)k,
                    hi->rank);
      return NULL;
    }
    if (i > 0 && k <= bd->v[i - 1]) {
      ir_diag_error(d, loc, "%s: broadcast_dimensions must be strictly increasing", what);
      return NULL;
    }
    int64_t x = merge_dim(hi->dims[k], lo->dims[i]);
    if (x < 0)
      return lhs_low ? incompatible(d, loc, what, l, r, i, (int)k, "broadcast_dimensions")
                     : incompatible(d, loc, what, l, r, (int)k, i, "broadcast_dimensions");
    dims[k] = x;
  }
  return result(m, l->et, hi->rank, dims);
}

ir_shape *shape_broadcast_binary(ir_module *m, const ir_shape *l, const ir_shape *r,
                                 const ir_broadcast_attrs *a, const shape_options *opts,
                                 const char *what, ir_loc loc, ir_diag_list *d) {
  bool ext_attrs = a && (a->has_broadcast_dimensions || a->auto_broadcast != IR_AB_NONE);
  if (l->rank > 64 || r->rank > 64)
    return NULL;
  if (opts && opts->strict) {
    char sa[256], sb[256];
    fmt(l, sa, sizeof sa);
    fmt(r, sb, sizeof sb);
    if (ext_attrs) {
      ir_diag_error(d, loc, "%s: broadcast_dimensions and auto_broadcast are hloc extensions (rejected by --strict)",
                    what);
      return NULL;
    }
    if (!ir_shape_same_dims(l, r)) {
      ir_diag_error(d, loc,
                    "%s: operand shapes %s and %s differ; implicit broadcasting is an hloc extension "
                    "(rejected by --strict)",
                    what, sa, sb);
      return NULL;
    }
    return result(m, l->et, l->rank, l->dims);
  }
  if (a && a->auto_broadcast == IR_AB_NUMPY)
    return numpy_rule(m, l, r, what, loc, d, "numpy");
  if (a && a->auto_broadcast == IR_AB_PDPD)
    return pdpd_rule(m, l, r, a->axis, what, loc, d);
  if (a && a->auto_broadcast == IR_AB_BIDIRECTIONAL)
    return numpy_rule(m, l, r, what, loc, d, "bidirectional");
  if (a && a->auto_broadcast == IR_AB_EXPLICIT && !a->has_broadcast_dimensions) {
    if (ir_shape_same_dims(l, r))
      return result(m, l->et, l->rank, l->dims);
    return incompatible(d, loc, what, l, r, -1, -1, "auto_broadcast=none needs equal shapes");
  }
  if (a && a->has_broadcast_dimensions && l->rank != r->rank)
    return indim_rule(m, l, r, &a->broadcast_dimensions, what, loc, d);
  if (ir_shape_same_dims(l, r))
    return result(m, l->et, l->rank, l->dims);
  if (l->rank == 0)
    return result(m, l->et, r->rank, r->dims);
  if (r->rank == 0)
    return result(m, l->et, l->rank, l->dims);
  if (l->rank != r->rank) {
    char sa[256], sb[256];
    fmt(l, sa, sizeof sa);
    fmt(r, sb, sizeof sb);
    ir_diag_error(d, loc,
                  "%s: operands %s and %s have different ranks; write broadcast_dimensions={...} to say "
                  "how the lower-rank one maps",
                  what, sa, sb);
    return NULL;
  }
  int64_t dims[64];
  for (int i = 0; i < l->rank; i++) {
    int64_t x = merge_dim(l->dims[i], r->dims[i]);
    if (x < 0)
      return incompatible(d, loc, what, l, r, i, i, "degenerate dimensions");
    dims[i] = x;
  }
  return result(m, l->et, l->rank, dims);
}

ir_shape *shape_broadcast_bidirectional(ir_module *m, const ir_shape *operand, const ir_i64_list *target,
                                        const char *what, ir_loc loc, ir_diag_list *d) {
  ir_shape t = {.et = operand->et, .rank = target->n, .dims = target->v};
  return numpy_rule(m, operand, &t, what, loc, d, "bidirectional");
}
