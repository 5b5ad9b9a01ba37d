/* attributes.c — interprets an instruction's attributes (the builder's half that knows their
 * meaning) through ir_attr_table (attributes.h), which the printer reads too: one row per
 * attribute name and family with its kind, where it is stored, when it prints and its
 * handler; a handler checks the written value and stores it through the row, and what no row
 * takes is kept verbatim.  Also the attributes each opcode requires, and the called
 * computations assembled in XLA's order.
 * Tests: testdata/parse/ok (round trip) and testdata/parse/err (messages).
 */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/attributes.h"
#include "ir/build_internal.h"
#include "ir/mesh_groups.h"

/* ---- attributes ------------------------------------------------------------------------ */

typedef struct attr_ctx {
  ir_builder *b;
  ir_instr *in;
  ir_attr_in *a;
  ir_av *v;
  const ir_attr_desc *row; /* the row being applied: where its value goes */
  /* called computations by role, assembled into in->called at the end */
  comp_ref to_apply, condition, body, true_c, false_c, select, scatter;
  ir_av *branches, *calls, *called_list;
} attr_ctx;

static bool set_comp(attr_ctx *x, comp_ref *slot) {
  ir_av *v = x->v;
  if (v->kind == AV_LIST && v->n == 1)
    v = v->kids[0];
  if (v->kind != AV_NAME) {
    irb_error(x->b, x->v->loc, "expected a computation name for %s", x->a->name.p);
    return false;
  }
  *slot = (comp_ref){x->in, 0, irb_bare_name(v->s), v->loc};
  return true;
}

#define I64(field) irb_av_i64(x->b, x->v, &(field))
#define LIST(field) irb_av_i64_list(x->b, x->v, &(field))
#define BOOL(field) irb_av_bool(x->b, x->v, &(field))
/* The row's value, and its count, in the instruction being built. */
#define FIELD(type) ((type *)(void *)((char *)&x->in->attrs + x->row->at))
#define COUNT (*(int *)(void *)((char *)&x->in->attrs + x->row->n_at))

static void set_flag(attr_ctx *x) { *(bool *)(void *)((char *)&x->in->attrs + x->row->flag_at) = true; }

/* The kinds most rows have: a number, a list, a flag, text kept as written. */
static bool a_i64(attr_ctx *x) {
  if (x->row->when == IR_AW_FLAG)
    set_flag(x);
  return I64(*FIELD(int64_t));
}
static bool a_list(attr_ctx *x) { return LIST(*FIELD(ir_i64_list)); }
static bool a_bool(attr_ctx *x) {
  if (x->row->when == IR_AW_FLAG)
    set_flag(x);
  return BOOL(*FIELD(bool));
}
static bool a_text(attr_ctx *x) {
  *FIELD(ir_str) = irb_av_text(x->b, x->v);
  return true;
}
/* An enum attribute: the index of the written name in the row's names, or -1. */
static int enum_index(const attr_ctx *x, int n) {
  for (int i = 0; i < n; i++)
    if (x->v->kind == AV_NAME && ir_str_eq(x->v->s, x->row->names[i]))
      return i;
  return -1;
}

static bool a_dimensions(attr_ctx *x) {
  x->in->attrs.has_dimensions = true;
  return LIST(*FIELD(ir_i64_list));
}

static bool a_custom_text(attr_ctx *x) {
  if (x->v->kind != AV_STRING) {
    irb_error(x->b, x->v->loc, "%s expects a quoted string", x->a->name.p);
    return false;
  }
  *FIELD(ir_str) = irb_unquote(x->b, x->v);
  return true;
}

static bool a_bcast_dims(attr_ctx *x) {
  x->in->attrs.bc.has_broadcast_dimensions = true;
  return LIST(*FIELD(ir_i64_list));
}
static bool a_auto_broadcast(attr_ctx *x) {
  static const char *const names[] = {"none", "numpy", "pdpd", "bidirectional"};
  static const ir_auto_broadcast vals[] = {IR_AB_EXPLICIT, IR_AB_NUMPY, IR_AB_PDPD, IR_AB_BIDIRECTIONAL};
  for (int i = 0; i < 4; i++)
    if (x->v->kind == AV_NAME && ir_str_eq(x->v->s, names[i])) {
      x->in->attrs.bc.auto_broadcast = vals[i];
      return true;
    }
  irb_error(x->b, x->v->loc, "auto_broadcast must be none, numpy, pdpd or bidirectional");
  return false;
}






static bool a_slice(attr_ctx *x) {
  ir_av *v = x->v;
  if (v->kind != AV_LIST) {
    irb_error(x->b, v->loc, "expected slice={[start:limit:stride], ...}");
    return false;
  }
  ir_slice_dim *d = ir_arena_alloc_array(&x->b->m->arena, (size_t)(v->n ? v->n : 1), sizeof *d);
  if (!d)
    return false;
  for (int i = 0; i < v->n; i++) {
    ir_av *r = v->kids[i];
    if (r->kind != AV_RANGE) {
      irb_error(x->b, r->loc, "expected [start:limit] or [start:limit:stride]");
      return false;
    }
    d[i].stride = 1;
    if (!irb_av_i64(x->b, r->kids[0], &d[i].start) || !irb_av_i64(x->b, r->kids[1], &d[i].limit) ||
        (r->n == 3 && !irb_av_i64(x->b, r->kids[2], &d[i].stride)))
      return false;
  }
  *FIELD(ir_slice_dim *) = d;
  COUNT = v->n;
  return true;
}



/* Splits "a_b(_c)x..." / "3x3" token text into up to `per` numbers per dimension. */
/* Splits "a_b_cxd_e_f" (per numbers a dimension, missing ones 0) into out; returns the
 * dimension count, or -1 after a diagnostic (more than max dimensions, a number that does
 * not fit int64). */
static int split_dims(ir_builder *b, const ir_av *v, int per, int64_t out[][3], int max, const char *what) {
  const char *s = v->s.p;
  int n = 0;
  while (*s) {
    if (n == max) {
      irb_error(b, v->loc, "%s has more than %d dimensions", what, max);
      return -1;
    }
    for (int k = 0; k < per; k++)
      out[n][k] = 0;
    for (int k = 0; k < per; k++) {
      char *end;
      errno = 0;
      out[n][k] = strtoll(s, &end, 10);
      if (errno == ERANGE) {
        irb_error(b, v->loc, "a number in %s is out of range", what);
        return -1;
      }
      s = end;
      if (*s != '_')
        break;
      s++;
    }
    n++;
    if (*s != 'x')
      break;
    s++;
  }
  if (*s) {
    irb_error(b, v->loc, "malformed %s value '%s'", what, v->s.p);
    return -1;
  }
  return n;
}

static bool a_padding(attr_ctx *x) {
  ir_av *v = x->v;
  if (v->kind != AV_PAD && !(v->kind == AV_LIST && v->n == 0)) {
    irb_error(x->b, v->loc, "expected padding=low_high[_interior]x...");
    return false;
  }
  int64_t parts[64][3];
  int n = v->kind == AV_PAD ? split_dims(x->b, v, 3, parts, 64, "padding") : 0;
  if (n < 0)
    return false;
  ir_pad_dim *d = ir_arena_alloc_array(&x->b->m->arena, (size_t)(n ? n : 1), sizeof *d);
  if (!d)
    return false;
  for (int i = 0; i < n; i++)
    d[i] = (ir_pad_dim){parts[i][0], parts[i][1], parts[i][2]};
  *FIELD(ir_pad_dim *) = d;
  COUNT = n;
  return true;
}

static bool a_direction(attr_ctx *x) {
  int i = enum_index(x, 6);
  if (i >= 0) {
    *FIELD(ir_cmp_dir) = (ir_cmp_dir)i;
    return true;
  }
  irb_error(x->b, x->v->loc, "unknown comparison direction '%s' (expected EQ, NE, LT, LE, GT or GE)",
            x->v->s.p ? x->v->s.p : "");
  return false;
}

static bool a_cmp_type(attr_ctx *x) {
  int i = enum_index(x, 5);
  if (i >= 0) {
    *FIELD(ir_cmp_type) = (ir_cmp_type)i;
    set_flag(x);
    return true;
  }
  irb_error(x->b, x->v->loc, "unknown comparison type '%s'", x->v->s.p ? x->v->s.p : "");
  return false;
}




static bool a_window(attr_ctx *x) {
  ir_window *w = FIELD(ir_window);
  ir_av *v = x->v;
  if (v->kind != AV_LIST) {
    irb_error(x->b, v->loc, "expected window={size=... stride=... pad=...}");
    return false;
  }
  static const char *const fields[] = {"size", "stride", "pad", "lhs_dilate", "rhs_dilate", "rhs_reversal"};
  int64_t vals[6][64][3];
  int counts[6] = {0};
  for (int i = 0; i < v->n; i++) {
    ir_av *kv = v->kids[i];
    int f = -1;
    for (int k = 0; k < 6; k++)
      if (kv->kind == AV_KV && ir_str_eq(kv->s, fields[k]))
        f = k;
    if (f < 0 || f >= 6) {
      irb_error(x->b, kv->loc, "unknown window field (expected size, stride, pad, lhs_dilate, rhs_dilate or rhs_reversal)");
      return false;
    }
    ir_av *fv = kv->kids[0];
    if (f == 2 ? fv->kind != AV_PAD : fv->kind != AV_DXD && fv->kind != AV_INT) {
      irb_error(x->b, fv->loc, f == 2 ? "bad value for window field pad (expected low_high per dimension, as in 0_1x1_1)"
                                      : "bad value for window field %s (expected sizes like 3x3)", fields[f]);
      return false;
    }
    if (counts[f] || (w->written >> f & 1)) {
      irb_error(x->b, kv->loc, "window field %s is written twice", fields[f]);
      return false;
    }
    counts[f] = split_dims(x->b, fv, f == 2 ? 2 : 1, vals[f], 64, "window");
    if (counts[f] < 0)
      return false;
    w->written |= 1u << f;
  }
  int n = counts[0];
  for (int f = 1; f < 6; f++)
    if ((w->written >> f & 1) && counts[f] != n) {
      irb_error(x->b, v->loc, "window field %s has %d dimension%s but size has %d", fields[f], counts[f],
                counts[f] == 1 ? "" : "s", n);
      return false;
    }
  w->n = n;
  w->dims = ir_arena_alloc_array(&x->b->m->arena, (size_t)(n ? n : 1), sizeof *w->dims);
  if (!w->dims)
    return false;
  for (int i = 0; i < n; i++) {
    ir_window_dim *d = &w->dims[i];
    d->size = vals[0][i][0];
    d->stride = (w->written & IR_WIN_STRIDE) ? vals[1][i][0] : 1;
    d->pad_lo = (w->written & IR_WIN_PAD) ? vals[2][i][0] : 0;
    d->pad_hi = (w->written & IR_WIN_PAD) ? vals[2][i][1] : 0;
    d->lhs_dilate = (w->written & IR_WIN_LHS_DILATE) ? vals[3][i][0] : 1;
    d->rhs_dilate = (w->written & IR_WIN_RHS_DILATE) ? vals[4][i][0] : 1;
    d->rhs_reversal = (w->written & IR_WIN_RHS_REVERSAL) ? vals[5][i][0] != 0 : false;
  }
  return true;
}















static bool a_precision(attr_ctx *x) {
  ir_av *v = x->v;
  ir_precision *out = FIELD(ir_precision);
  int cap = x->row->family == IR_FAM_DOT ? 4 : 2; /* one per operand: dot's 4, convolution's 2 */
  if (v->kind != AV_LIST || v->n > cap) {
    irb_error(x->b, v->loc, "expected operand_precision={default,...}");
    return false;
  }
  for (int i = 0; i < v->n; i++) {
    ir_av *p = v->kids[i];
    if (p->kind == AV_NAME && (ir_str_eq(p->s, "default") || ir_str_eq(p->s, "DEFAULT")))
      out[i] = IR_PREC_DEFAULT;
    else if (p->kind == AV_NAME && (ir_str_eq(p->s, "high") || ir_str_eq(p->s, "HIGH")))
      out[i] = IR_PREC_HIGH;
    else if (p->kind == AV_NAME && (ir_str_eq(p->s, "highest") || ir_str_eq(p->s, "HIGHEST")))
      out[i] = IR_PREC_HIGHEST;
    else {
      irb_error(x->b, p->loc, "unknown precision (expected default, high or highest)");
      return false;
    }
  }
  COUNT = v->n;
  return true;
}

static bool a_rng_algorithm(attr_ctx *x) {
  int i = enum_index(x, 3);
  if (i >= 0) {
    *FIELD(ir_rng_algo) = (ir_rng_algo)i;
    return true;
  }
  irb_error(x->b, x->v->loc, "unknown RNG algorithm (expected rng_default, rng_three_fry or rng_philox)");
  return false;
}

/* dim_labels=b01f_01io->b01f: letters name batch/feature (b, f), input/output features of the
 * kernel (i, o), and digits name spatial dimensions in order. */
static bool parse_labels(const char *s, size_t n, char a, char b2, int64_t *oa, int64_t *ob,
                         ir_i64_list *spatial, ir_builder *b, ir_loc loc) {
  int64_t sp[64];
  int nsp = 0;
  *oa = *ob = -1;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (c == a) {
      if (*oa >= 0)
        return false;
      *oa = (int64_t)i;
    } else if (c == b2) {
      if (*ob >= 0)
        return false;
      *ob = (int64_t)i;
    } else if (c >= '0' && c <= '9') {
      int k = c - '0';
      while (nsp <= k)
        sp[nsp++] = -1;
      if (sp[k] >= 0)
        return false; /* a spatial dimension named twice */
      sp[k] = (int64_t)i;
    } else if (c != '?') {
      return false;
    }
  }
  for (int i = 0; i < nsp; i++)
    if (sp[i] < 0)
      return false;
  *spatial = ir_i64_list_copy(b->m, sp, nsp);
  (void)loc;
  return *oa >= 0 && *ob >= 0;
}

static bool a_dim_labels(attr_ctx *x) {
  ir_conv_dnums *d = FIELD(ir_conv_dnums);
  if (x->v->kind != AV_DIMLABELS || !x->v->s.p) {
    irb_error(x->b, x->v->loc, "dim_labels expects labels like b01f_01io->b01f");
    return false;
  }
  const char *s = x->v->s.p;
  const char *u1 = strchr(s, '_'), *ar = strstr(s, "->");
  if (!u1 || !ar ||
      !parse_labels(s, (size_t)(u1 - s), 'b', 'f', &d->input_batch, &d->input_feature,
                    &d->input_spatial, x->b, x->v->loc) ||
      !parse_labels(u1 + 1, (size_t)(ar - u1 - 1), 'i', 'o', &d->kernel_input_feature,
                    &d->kernel_output_feature, &d->kernel_spatial, x->b, x->v->loc) ||
      !parse_labels(ar + 2, strlen(ar + 2), 'b', 'f', &d->output_batch, &d->output_feature,
                    &d->output_spatial, x->b, x->v->loc)) {
    irb_error(x->b, x->v->loc, "malformed dim_labels '%s'", s ? s : "");
    return false;
  }
  d->present = true;
  return true;
}

static bool int_lists(attr_ctx *x, ir_av *v, ir_i64_list **out, int *n);
/* collective-permute's in-place form: {{sizes of buffer 0},...} */
static bool a_collective_slice_sizes(attr_ctx *x) {
  if (x->v->kind != AV_LIST) {
    irb_error(x->b, x->v->loc, "expected slice_sizes={{...},...}");
    return false;
  }
  set_flag(x);
  return int_lists(x, x->v, FIELD(ir_i64_list *), &COUNT);
}

static bool a_fft_type(attr_ctx *x) {
  int i = enum_index(x, 4);
  if (i >= 0) {
    *FIELD(ir_fft_type) = (ir_fft_type)i;
    return true;
  }
  irb_error(x->b, x->v->loc, "unknown fft_type (expected FFT, IFFT, RFFT or IRFFT)");
  return false;
}




static bool a_transpose_a(attr_ctx *x) {
  int i = enum_index(x, 3);
  if (i >= 0) {
    *FIELD(ir_transpose_a) = (ir_transpose_a)i;
    return true;
  }
  irb_error(x->b, x->v->loc, "unknown transpose_a (expected NO_TRANSPOSE, TRANSPOSE or ADJOINT)");
  return false;
}
static bool a_epsilon(attr_ctx *x) {
  if (x->v->kind != AV_FLOAT && x->v->kind != AV_INT) {
    irb_error(x->b, x->v->loc, "epsilon expects a number");
    return false;
  }
  *FIELD(double) = strtod(x->v->s.p, NULL);
  return true;
}

static bool a_distribution(attr_ctx *x) {
  int i = enum_index(x, 2);
  if (i >= 0) {
    *FIELD(ir_rng_dist) = (ir_rng_dist)i;
    return true;
  }
  irb_error(x->b, x->v->loc, "unknown distribution (expected rng_uniform or rng_normal)");
  return false;
}




static bool a_api_version(attr_ctx *x) {
  /* XLA's parser maps every name of its CustomCallApiVersion enum, API_VERSION_UNSPECIFIED (0)
   * included, and its printer writes every value but ORIGINAL: older dumps carry UNSPECIFIED.
   * What running it does is the runtime's matter (runtime/src/context/custom_call.c). */
  int i = enum_index(x, 5);
  if (i >= 0) {
    *FIELD(ir_custom_call_api) = (ir_custom_call_api)i;
    set_flag(x);
    return true;
  }
  irb_error(x->b, x->v->loc, "unknown api_version '%s'", x->v->s.p ? x->v->s.p : "");
  return false;
}

static bool a_operand_layout_constraints(attr_ctx *x) {
  ir_av *v = x->v;
  if (v->kind != AV_LIST) {
    irb_error(x->b, v->loc, "expected operand_layout_constraints={shape, ...}");
    return false;
  }
  ir_shape **arr = ir_arena_alloc_array(&x->b->m->arena, (size_t)(v->n ? v->n : 1), sizeof *arr);
  if (!arr)
    return false;
  for (int i = 0; i < v->n; i++) {
    if (v->kids[i]->kind != AV_SHAPE) {
      irb_error(x->b, v->kids[i]->loc, "expected a shape");
      return false;
    }
    arr[i] = v->kids[i]->shape;
  }
  *FIELD(ir_shape **) = arr;
  COUNT = v->n;
  set_flag(x);
  return true;
}
/* literal=s32[2]{0} {1, 2} (the shape is written before the values).  A tuple literal,
 * ( s32[1]{0} {4}, pred[] true ), is kept verbatim. */
static bool a_cc_literal(attr_ctx *x) {
  if (x->v->kind != AV_SHAPED || !x->v->shape)
    return false; /* no shape: it was malformed and has been reported */
  ir_literal *lit = irb_literal_from_av(x->b, x->v->shape, x->v);
  *FIELD(ir_literal *) = lit;
  return lit != NULL;
}



static bool a_outfeed_shape(attr_ctx *x) {
  if (x->v->kind != AV_SHAPE) {
    irb_error(x->b, x->v->loc, "outfeed_shape expects a shape");
    return false;
  }
  *FIELD(ir_shape *) = x->v->shape;
  return true;
}

static bool int_lists(attr_ctx *x, ir_av *v, ir_i64_list **out, int *n) {
  *out = ir_arena_alloc_array(&x->b->m->arena, (size_t)(v->n ? v->n : 1), sizeof **out);
  if (!*out)
    return false;
  for (int i = 0; i < v->n; i++)
    if (!irb_av_i64_list(x->b, v->kids[i], &(*out)[i]))
      return false;
  *n = v->n;
  return true;
}

static bool expand_iota_groups(attr_ctx *x, ir_replica_groups *g) {
  /* [G,S]<=[dims]T(perm): ids 0..N-1 reshaped to dims, transposed by perm, read row-major
   * into G groups of S. */
  int64_t total = 1;
  for (int i = 0; i < g->iota_reshape.n; i++)
    total *= g->iota_reshape.v[i];
  if (g->iota_group_shape.n != 2 || total <= 0 || total > (1 << 20) ||
      g->iota_group_shape.v[0] * g->iota_group_shape.v[1] != total) {
    irb_error(x->b, x->v->loc, "replica groups [%s]<=[...] do not describe the same number of devices",
              "G,S");
    return false;
  }
  int r = g->iota_reshape.n;
  if (r > 16 || (g->iota_transpose.n && g->iota_transpose.n != r)) {
    irb_error(x->b, x->v->loc, "replica groups: the transpose T(...) must permute the %d reshape dimensions", r);
    return false;
  }
  int64_t *ids = ir_arena_alloc_array(&x->b->m->arena, (size_t)total, sizeof *ids);
  if (!ids) {
    irb_oom(x->b, x->v->loc);
    return false;
  }
  int64_t perm[16], tdims[16], idx[16] = {0};
  for (int i = 0; i < r; i++)
    perm[i] = g->iota_transpose.n ? g->iota_transpose.v[i] : i;
  uint32_t seen = 0;
  for (int i = 0; i < r; i++) {
    if (perm[i] < 0 || perm[i] >= r || (seen >> perm[i] & 1)) {
      irb_error(x->b, x->v->loc, "replica groups: T(...) is not a permutation of 0..%d", r - 1);
      return false;
    }
    seen |= 1u << perm[i];
    tdims[i] = g->iota_reshape.v[perm[i]];
  }
  for (int64_t k = 0; k < total; k++) {
    /* idx is the index in the transposed array; source index: src[perm[i]] = idx[i] */
    int64_t src = 0;
    int64_t srcidx[16];
    for (int i = 0; i < r; i++)
      srcidx[perm[i]] = idx[i];
    for (int i = 0; i < r; i++)
      src = src * g->iota_reshape.v[i] + srcidx[i];
    ids[k] = src;
    for (int i = r - 1; i >= 0; i--) {
      if (++idx[i] < tdims[i])
        break;
      idx[i] = 0;
    }
  }
  int ng = (int)g->iota_group_shape.v[0], gs = (int)g->iota_group_shape.v[1];
  g->groups = ir_arena_alloc_array(&x->b->m->arena, (size_t)(ng ? ng : 1), sizeof *g->groups);
  if (!g->groups)
    return false;
  for (int i = 0; i < ng; i++)
    g->groups[i] = ir_i64_list_copy(x->b->m, ids + (int64_t)i * gs, gs);
  g->n_groups = ng;
  return true;
}

/* The location `at` bytes into v's text. */
static ir_loc loc_within(const ir_av *v, size_t at) {
  ir_loc l = v->loc;
  for (size_t i = 0; i < at && i < v->s.len; i++) {
    if (v->s.p[i] == '\n') {
      l.line++;
      l.col = 1;
    } else {
      l.col++;
    }
  }
  return l;
}

static bool mesh_replica_groups(attr_ctx *x, ir_replica_groups *g) {
  char err[256];
  size_t at;
  if (!ir_mesh_groups_expand(x->b->m, x->v->s.p, x->v->s.len, &g->groups, &g->n_groups, err, sizeof err, &at)) {
    irb_error(x->b, loc_within(x->v, at), "%s", err);
    return false;
  }
  g->mesh_text = x->v->s;
  return true;
}

static bool a_replica_groups(attr_ctx *x) {
  ir_replica_groups *g = FIELD(ir_replica_groups);
  ir_av *v = x->v;
  g->present = true;
  if (v->kind == AV_IOTA) {
    g->iota_form = true;
    if (!irb_av_i64_list(x->b, v->kids[0], &g->iota_group_shape) ||
        !irb_av_i64_list(x->b, v->kids[1], &g->iota_reshape) ||
        (v->n > 2 && !irb_av_i64_list(x->b, v->kids[2], &g->iota_transpose)))
      return false;
    return expand_iota_groups(x, g);
  }
  if (v->kind == AV_RAW)
    return mesh_replica_groups(x, g);
  if (v->kind != AV_LIST) {
    irb_error(x->b, v->loc, "expected replica_groups={{0,1},...} or [G,S]<=[N]");
    return false;
  }
  return int_lists(x, v, &g->groups, &g->n_groups);
}


static bool a_dynamic_root(attr_ctx *x) {
  bool v;
  if (!irb_av_bool(x->b, x->v, &v))
    return false;
  *FIELD(int) = v;
  return true;
}
static bool a_source_target_pairs(attr_ctx *x) {
  ir_av *v = x->v;
  if (v->kind != AV_LIST) {
    irb_error(x->b, v->loc, "expected source_target_pairs={{0,1},...}");
    return false;
  }
  ir_i64_list *pairs;
  int n;
  if (!int_lists(x, v, &pairs, &n))
    return false;
  for (int i = 0; i < n; i++)
    if (pairs[i].n != 2) {
      irb_error(x->b, v->kids[i]->loc, "a source-target pair needs exactly two replica ids");
      return false;
    }
  *FIELD(ir_i64_list *) = pairs;
  COUNT = n;
  return true;
}
static bool a_async_thread(attr_ctx *x) {
  if (x->v->kind != AV_STRING)
    return false;
  *FIELD(ir_str) = irb_unquote(x->b, x->v);
  return true;
}


static bool a_to_apply(attr_ctx *x) { return set_comp(x, &x->to_apply); }
static bool a_condition(attr_ctx *x) { return set_comp(x, &x->condition); }
static bool a_body(attr_ctx *x) { return set_comp(x, &x->body); }
static bool a_true(attr_ctx *x) { return set_comp(x, &x->true_c); }
static bool a_false(attr_ctx *x) { return set_comp(x, &x->false_c); }
static bool a_select(attr_ctx *x) { return set_comp(x, &x->select); }
static bool a_scatter_comp(attr_ctx *x) { return set_comp(x, &x->scatter); }
static bool name_list(attr_ctx *x, ir_av **out) {
  ir_av *v = x->v;
  if (v->kind == AV_NAME) {
    ir_av *l = irb_av(x->b, AV_LIST, v->loc, v->start, v->end);
    *out = irb_av_append(x->b, l, v);
    return *out != NULL;
  }
  if (v->kind != AV_LIST) {
    irb_error(x->b, v->loc, "expected {%%computation, ...}");
    return false;
  }
  for (int i = 0; i < v->n; i++)
    if (v->kids[i]->kind != AV_NAME) {
      irb_error(x->b, v->kids[i]->loc, "expected a computation name");
      return false;
    }
  *out = v;
  return true;
}
static bool a_branches(attr_ctx *x) { return name_list(x, &x->branches); }
static bool a_calls(attr_ctx *x) { return name_list(x, &x->calls); }
static bool a_called_list(attr_ctx *x) {
  x->in->attrs.called_list_form = true;
  return name_list(x, &x->called_list);
}

static bool a_control_preds(attr_ctx *x) {
  ir_av *v = x->v;
  ir_builder *b = x->b;
  if (v->kind != AV_LIST) {
    irb_error(b, v->loc, "expected control-predecessors={%%a, %%b}");
    return false;
  }
  x->in->common.control_predecessors =
      ir_arena_alloc_array(&b->m->arena, (size_t)(v->n ? v->n : 1), sizeof(ir_instr *));
  if (!x->in->common.control_predecessors)
    return false;
  x->in->common.n_control_predecessors = v->n;
  for (int i = 0; i < v->n; i++) {
    if (v->kids[i]->kind != AV_NAME) {
      irb_error(b, v->kids[i]->loc, "expected an instruction name");
      return false;
    }
    if (b->n_ctrl_refs == b->cap_ctrl_refs) {
      int cap = b->cap_ctrl_refs ? b->cap_ctrl_refs * 2 : 16;
      ctrl_ref *p = ir_arena_alloc_array(&b->m->arena, (size_t)cap, sizeof *p);
      if (!p)
        return false;
      if (b->n_ctrl_refs)
        memcpy(p, b->ctrl_refs, (size_t)b->n_ctrl_refs * sizeof *p);
      b->ctrl_refs = p;
      b->cap_ctrl_refs = cap;
    }
    b->ctrl_refs[b->n_ctrl_refs++] = (ctrl_ref){x->in, i, irb_bare_name(v->kids[i]->s), v->kids[i]->loc};
  }
  return true;
}

#define VERBATIM(field)                                      \
  static bool a_##field(attr_ctx *x) {                       \
    x->in->common.field = irb_av_text(x->b, x->v);              \
    return true;                                            \
  }
VERBATIM(sharding)
VERBATIM(metadata)
VERBATIM(frontend_attributes)
VERBATIM(statistics)
VERBATIM(origin)
VERBATIM(output_to_operand_aliasing)
#undef VERBATIM

/* parameter_replication={true,false,...}: one flag per leaf buffer of the shape (XLA's parser
 * counts them: ShapeUtil::GetLeafCount); kept as written. */
static bool a_parameter_replication(attr_ctx *x) {
  ir_str t = irb_av_text(x->b, x->v);
  x->in->common.parameter_replication = t;
  if (!x->in->shape || t.len < 2 || t.p[0] != '{')
    return true;
  int n = 0; /* the flags written: words between the braces */
  for (size_t i = 1; i < t.len; i++)
    n += isalpha((unsigned char)t.p[i]) && !isalpha((unsigned char)t.p[i - 1]);
  int leaves = ir_shape_count_leaves(x->in->shape);
  if (n == leaves)
    return true;
  irb_error(x->b, x->v->loc, "parameter has %d leaf buffer%s, but parameter_replication has %d element%s.", leaves,
            leaves == 1 ? "" : "s", n, n == 1 ? "" : "s");
  return false;
}

/* result_accuracy={mode=default|highest} or {tolerance={atol=A, rtol=R, ulps=N}}, on the
 * unary ops XLA's parser gives it (xla/hlo/parser/hlo_parser.cc); kept as written. */
static bool takes_result_accuracy(ir_opcode op) {
  static const ir_opcode ops[] = {IR_OP_ACOS, IR_OP_ACOSH, IR_OP_ASIN, IR_OP_ASINH, IR_OP_ATANH, IR_OP_CBRT,
                                  IR_OP_COS,  IR_OP_COSH,  IR_OP_ERF,  IR_OP_EXP,   IR_OP_EXPM1, IR_OP_LOG,
                                  IR_OP_LOG1P, IR_OP_LOGISTIC, IR_OP_RSQRT, IR_OP_SIN, IR_OP_SINH, IR_OP_SQRT,
                                  IR_OP_TAN,  IR_OP_TANH,  IR_OP_ASYNC_START};
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
    if (ops[i] == op)
      return true;
  return false;
}
static bool accuracy_tolerance_ok(attr_ctx *x, const ir_av *t) {
  if (t->kind != AV_LIST) {
    irb_error(x->b, t->loc, "expected tolerance={atol=..., rtol=..., ulps=...}");
    return false;
  }
  for (int i = 0; i < t->n; i++) {
    const ir_av *k = t->kids[i];
    bool named = k->kind == AV_KV && (ir_str_eq(k->s, "atol") || ir_str_eq(k->s, "rtol") || ir_str_eq(k->s, "ulps"));
    if (!named || (k->kids[0]->kind != AV_INT && k->kids[0]->kind != AV_FLOAT)) {
      irb_error(x->b, k->loc, "result_accuracy tolerance takes atol=, rtol= and ulps= numbers");
      return false;
    }
  }
  return true;
}
static bool a_result_accuracy(attr_ctx *x) {
  const ir_av *v = x->v;
  if (!takes_result_accuracy(x->in->op)) {
    irb_error(x->b, v->loc, "'%s' takes no result_accuracy", ir_opcode_table[x->in->op].spelling);
    return false;
  }
  const ir_av *k = v->kind == AV_LIST && v->n == 1 ? v->kids[0] : NULL;
  if (!k || k->kind != AV_KV || !(ir_str_eq(k->s, "mode") || ir_str_eq(k->s, "tolerance"))) {
    irb_error(x->b, v->loc, "expected result_accuracy={mode=...} or {tolerance={...}}");
    return false;
  }
  const ir_av *m = k->kids[0];
  if (ir_str_eq(k->s, "tolerance"))
    return accuracy_tolerance_ok(x, m) && (x->in->common.result_accuracy = irb_av_text(x->b, v), true);
  if (m->kind != AV_NAME || !(ir_str_eq(m->s, "default") || ir_str_eq(m->s, "highest") ||
                              ir_str_eq(m->s, "DEFAULT") || ir_str_eq(m->s, "HIGHEST"))) {
    irb_error(x->b, m->loc, "result_accuracy mode must be default or highest");
    return false;
  }
  x->in->common.result_accuracy = irb_av_text(x->b, v);
  return true;
}

/* backend_config also keeps its position: typed-FFI custom calls parse it later and point
 * at the offending character (compiler/codegen/custom_call_ffi.c). */
static bool a_backend_config(attr_ctx *x) {
  x->in->common.backend_config = irb_av_text(x->b, x->v);
  x->in->common.backend_config_loc = x->v->loc;
  return true;
}

/* ---- the table ------------------------------------------------------------------------------- */

static const char *const k_cmp_dirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
static const char *const k_cmp_types[] = {"DEFAULT", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};
static const char *const k_fft_types[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
static const char *const k_transpose_a[] = {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
static const char *const k_rng_dists[] = {"rng_uniform", "rng_normal"};
static const char *const k_rng_algos[] = {"rng_default", "rng_three_fry", "rng_philox"};
static const char *const k_cc_apis[] = {"API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL",
                                        "API_VERSION_STATUS_RETURNING",
                                        "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"};

#define ANY IR_ATTR_ANY
#define AT(f) offsetof(ir_attrs, f)
/* name, family, kind, when it prints, where, handler; then the count, flag and names */
#define ROW(name, fam, kind, when, field, fn, ...) \
  {name, fam, false, IR_AK_##kind, IR_AW_##when, AT(field), .parse = fn, __VA_ARGS__}
#define N_AT(f) .n_at = AT(f)
#define FLAG_AT(f) .flag_at = AT(f)
#define NAMES(a) .names = a

const ir_attr_desc ir_attr_table[] = {
    ROW("iota_dimension", IR_FAM_IOTA, I64, ALWAYS, u.iota_dimension, a_i64),
    ROW("index", IR_FAM_GET_TUPLE_ELEMENT, I64, ALWAYS, u.tuple_index, a_i64),
    ROW("inferred_dimension", IR_FAM_RESHAPE, I64, NONNEG, u.inferred_dimension, a_i64),
    ROW("slice", IR_FAM_SLICE, SLICE, ALWAYS, u.slice.dims, a_slice, N_AT(u.slice.n)),
    ROW("dynamic_slice_sizes", IR_FAM_DYNAMIC_SLICE, LIST, ALWAYS, u.dynamic_slice_sizes, a_list),
    ROW("padding", IR_FAM_PAD, PADDING, ALWAYS, u.padding.dims, a_padding, N_AT(u.padding.n)),
    ROW("direction", IR_FAM_COMPARE, ENUM, ALWAYS, u.compare.dir, a_direction, NAMES(k_cmp_dirs)),
    ROW("type", IR_FAM_COMPARE, ENUM, FLAG, u.compare.type, a_cmp_type, FLAG_AT(u.compare.has_type),
        NAMES(k_cmp_types)),
    ROW("exponent_bits", IR_FAM_REDUCE_PRECISION, I64, ALWAYS, u.reduce_precision.exponent_bits, a_i64),
    ROW("mantissa_bits", IR_FAM_REDUCE_PRECISION, I64, ALWAYS, u.reduce_precision.mantissa_bits, a_i64),
    ROW("window", IR_FAM_REDUCE_WINDOW, WINDOW, SET, u.reduce_window.window, a_window),
    ROW("window", IR_FAM_SELECT_AND_SCATTER, WINDOW, SET, u.reduce_window.window, a_window),
    ROW("num_carries", IR_FAM_SCAN, I64, ALWAYS, u.scan.num_carries, a_i64),
    ROW("is_reverse", IR_FAM_SCAN, BOOL, SET, u.scan.is_reverse, a_bool),
    ROW("is_associative", IR_FAM_SCAN, BOOL, SET, u.scan.is_associative, a_bool),
    ROW("is_stable", IR_FAM_SORT, BOOL, SET, u.sort.is_stable, a_bool),
    ROW("k", IR_FAM_TOPK, I64, ALWAYS, u.topk.k, a_i64),
    ROW("largest", IR_FAM_TOPK, BOOL, FLAG, u.topk.largest, a_bool, FLAG_AT(u.topk.has_largest)),
    ROW("lhs_batch_dims", IR_FAM_DOT, LIST, SET, u.dot.dnums.lhs_batch, a_list),
    ROW("lhs_contracting_dims", IR_FAM_DOT, LIST, SET, u.dot.dnums.lhs_contracting, a_list),
    ROW("rhs_batch_dims", IR_FAM_DOT, LIST, SET, u.dot.dnums.rhs_batch, a_list),
    ROW("rhs_contracting_dims", IR_FAM_DOT, LIST, SET, u.dot.dnums.rhs_contracting, a_list),
    ROW("lhs_ragged_dims", IR_FAM_DOT, LIST, SET, u.dot.dnums.lhs_ragged, a_list),
    ROW("rhs_group_dims", IR_FAM_DOT, LIST, SET, u.dot.dnums.rhs_group, a_list),
    ROW("operand_precision", IR_FAM_DOT, PRECISION, SET, u.dot.precision, a_precision, N_AT(u.dot.n_precision)),
    ROW("algorithm", IR_FAM_DOT, TEXT, SET, u.dot.algorithm, a_text),
    ROW("window", IR_FAM_CONVOLUTION, WINDOW, SET, u.conv.window, a_window),
    ROW("dim_labels", IR_FAM_CONVOLUTION, DIM_LABELS, SET, u.conv.dnums, a_dim_labels),
    ROW("feature_group_count", IR_FAM_CONVOLUTION, I64, NOT_ONE, u.conv.feature_group_count, a_i64),
    ROW("batch_group_count", IR_FAM_CONVOLUTION, I64, NOT_ONE, u.conv.batch_group_count, a_i64),
    ROW("operand_precision", IR_FAM_CONVOLUTION, PRECISION, SET, u.conv.precision, a_precision,
        N_AT(u.conv.n_precision)),
    ROW("conv_kind", IR_FAM_CONVOLUTION, TEXT, SET, u.conv.conv_kind, a_text),
    ROW("offset_dims", IR_FAM_GATHER, LIST, ALWAYS, u.gather.offset_dims, a_list),
    ROW("collapsed_slice_dims", IR_FAM_GATHER, LIST, ALWAYS, u.gather.collapsed_slice_dims, a_list),
    ROW("start_index_map", IR_FAM_GATHER, LIST, ALWAYS, u.gather.start_index_map, a_list),
    ROW("operand_batching_dims", IR_FAM_GATHER, LIST, SET, u.gather.operand_batching_dims, a_list),
    ROW("start_indices_batching_dims", IR_FAM_GATHER, LIST, SET, u.gather.start_indices_batching_dims, a_list),
    ROW("index_vector_dim", IR_FAM_GATHER, I64, ALWAYS, u.gather.index_vector_dim, a_i64),
    ROW("slice_sizes", IR_FAM_GATHER, LIST, ALWAYS, u.gather.slice_sizes, a_list),
    ROW("indices_are_sorted", IR_FAM_GATHER, BOOL, SET, u.gather.indices_are_sorted, a_bool),
    ROW("update_window_dims", IR_FAM_SCATTER, LIST, ALWAYS, u.scatter.update_window_dims, a_list),
    ROW("inserted_window_dims", IR_FAM_SCATTER, LIST, ALWAYS, u.scatter.inserted_window_dims, a_list),
    ROW("scatter_dims_to_operand_dims", IR_FAM_SCATTER, LIST, ALWAYS, u.scatter.scatter_dims_to_operand_dims, a_list),
    ROW("input_batching_dims", IR_FAM_SCATTER, LIST, SET, u.scatter.input_batching_dims, a_list),
    ROW("scatter_indices_batching_dims", IR_FAM_SCATTER, LIST, SET, u.scatter.scatter_indices_batching_dims, a_list),
    ROW("index_vector_dim", IR_FAM_SCATTER, I64, ALWAYS, u.scatter.index_vector_dim, a_i64),
    ROW("indices_are_sorted", IR_FAM_SCATTER, BOOL, SET, u.scatter.indices_are_sorted, a_bool),
    ROW("unique_indices", IR_FAM_SCATTER, BOOL, SET, u.scatter.unique_indices, a_bool),
    ROW("fft_type", IR_FAM_FFT, ENUM, ALWAYS, u.fft.type, a_fft_type, NAMES(k_fft_types)),
    ROW("fft_length", IR_FAM_FFT, LIST, ALWAYS, u.fft.length, a_list),
    ROW("lower", IR_FAM_CHOLESKY, BOOL, SET, u.cholesky.lower, a_bool),
    ROW("left_side", IR_FAM_TRIANGULAR_SOLVE, BOOL, SET, u.triangular_solve.left_side, a_bool),
    /* lower=... on any other opcode lands here, as it always has */
    {"lower", IR_FAM_TRIANGULAR_SOLVE, true, IR_AK_BOOL, IR_AW_SET, AT(u.triangular_solve.lower), .parse = a_bool},
    ROW("unit_diagonal", IR_FAM_TRIANGULAR_SOLVE, BOOL, SET, u.triangular_solve.unit_diagonal, a_bool),
    ROW("transpose_a", IR_FAM_TRIANGULAR_SOLVE, ENUM, ALWAYS, u.triangular_solve.transpose_a, a_transpose_a,
        NAMES(k_transpose_a)),
    ROW("epsilon", IR_FAM_BATCH_NORM, FLOAT, ALWAYS, u.batch_norm.epsilon, a_epsilon),
    ROW("feature_index", IR_FAM_BATCH_NORM, I64, ALWAYS, u.batch_norm.feature_index, a_i64),
    ROW("distribution", IR_FAM_RNG, ENUM, ALWAYS, u.rng.distribution, a_distribution, NAMES(k_rng_dists)),
    ROW("algorithm", IR_FAM_RNG_BIT_GENERATOR, ENUM, ALWAYS, u.rng_bit_generator.algorithm, a_rng_algorithm,
        NAMES(k_rng_algos)),
    ROW("delta", IR_FAM_RNG_STATE, I64, ALWAYS, u.rng_state.delta, a_i64),
    ROW("is_composite", IR_FAM_CALL, BOOL, SET, u.call.is_composite, a_bool),
    ROW("kind", IR_FAM_FUSION, TEXT, SET, u.fusion.kind, a_text),
    /* custom-call: in the order of XLA's HloCustomCallInstruction printer */
    ROW("window", IR_FAM_CUSTOM_CALL, WINDOW, SET, u.custom_call.window, a_window),
    ROW("dim_labels", IR_FAM_CUSTOM_CALL, DIM_LABELS, SET, u.custom_call.dnums, a_dim_labels),
    ROW("feature_group_count", IR_FAM_CUSTOM_CALL, I64, NOT_ONE, u.custom_call.feature_group_count, a_i64),
    ROW("batch_group_count", IR_FAM_CUSTOM_CALL, I64, NOT_ONE, u.custom_call.batch_group_count, a_i64),
    ROW("padding_type", IR_FAM_CUSTOM_CALL, TEXT, SET, u.custom_call.padding_type, a_text),
    ROW("custom_call_target", IR_FAM_CUSTOM_CALL, QUOTED, ALWAYS, custom_text, a_custom_text),
    ROW("operand_layout_constraints", IR_FAM_CUSTOM_CALL, SHAPES, FLAG, u.custom_call.operand_layout_constraints,
        a_operand_layout_constraints, N_AT(u.custom_call.n_operand_layout_constraints),
        FLAG_AT(u.custom_call.has_operand_layout_constraints)),
    ROW("custom_call_has_side_effect", IR_FAM_CUSTOM_CALL, BOOL, SET, u.custom_call.has_side_effect, a_bool),
    ROW("literal", IR_FAM_CUSTOM_CALL, LITERAL, SET, u.custom_call.literal, a_cc_literal),
    ROW("schedule", IR_FAM_CUSTOM_CALL, TEXT, SET, u.custom_call.schedule, a_text),
    ROW("api_version", IR_FAM_CUSTOM_CALL, ENUM, FLAG, u.custom_call.api_version, a_api_version,
        FLAG_AT(u.custom_call.has_api_version), NAMES(k_cc_apis)),
    ROW("infeed_config", IR_FAM_INFEED, QUOTED, SET, custom_text, a_custom_text),
    ROW("outfeed_shape", IR_FAM_OUTFEED, SHAPE, SET, u.outfeed.outfeed_shape, a_outfeed_shape),
    ROW("outfeed_config", IR_FAM_OUTFEED, QUOTED, SET, custom_text, a_custom_text),
    ROW("is_host_transfer", IR_FAM_SEND, BOOL, SET, u.send_recv.is_host_transfer, a_bool),
    /* is_host_transfer=... on any other opcode lands here, as it always has */
    {"is_host_transfer", IR_FAM_RECV, true, IR_AK_BOOL, IR_AW_SET, AT(u.send_recv.is_host_transfer), .parse = a_bool},
    ROW("domain", IR_FAM_DOMAIN, TEXT, ALWAYS, custom_text, a_text),
    ROW("replica_groups", IR_FAM_COLLECTIVE, REPLICA_GROUPS, SET, u.collective.replica_groups, a_replica_groups),
    ROW("constrain_layout", IR_FAM_COLLECTIVE, BOOL, SET, u.collective.constrain_layout, a_bool),
    ROW("use_global_device_ids", IR_FAM_COLLECTIVE, BOOL, SET, u.collective.use_global_device_ids, a_bool),
    ROW("source_target_pairs", IR_FAM_COLLECTIVE, LISTS, SET, u.collective.source_target_pairs,
        a_source_target_pairs, N_AT(u.collective.n_source_target_pairs)),
    ROW("slice_sizes", IR_FAM_COLLECTIVE, LISTS, FLAG, u.collective.slice_sizes, a_collective_slice_sizes,
        N_AT(u.collective.n_slice_sizes), FLAG_AT(u.collective.inplace)),
    ROW("has_dynamic_root", IR_FAM_COLLECTIVE, TRISTATE, NONNEG, u.collective.has_dynamic_root, a_dynamic_root),
    ROW("async_execution_thread", IR_FAM_ASYNC, QUOTED, SET, u.async.execution_thread, a_async_thread),
    ROW("cross_program_prefetch_index", IR_FAM_COPY_ASYNC, I64, FLAG, u.copy_start.cross_program_prefetch_index,
        a_i64, FLAG_AT(u.copy_start.has_index)),
    /* called computations (print.c print_called writes them) */
    ROW("condition", IR_FAM_WHILE, OTHER, ALWAYS, u, a_condition),
    ROW("body", IR_FAM_WHILE, OTHER, ALWAYS, u, a_body),
    ROW("true_computation", IR_FAM_CONDITIONAL, OTHER, ALWAYS, u, a_true),
    ROW("false_computation", IR_FAM_CONDITIONAL, OTHER, ALWAYS, u, a_false),
    ROW("branch_computations", IR_FAM_CONDITIONAL, OTHER, ALWAYS, u, a_branches),
    ROW("select", IR_FAM_SELECT_AND_SCATTER, OTHER, ALWAYS, u, a_select),
    ROW("scatter", IR_FAM_SELECT_AND_SCATTER, OTHER, ALWAYS, u, a_scatter_comp),
    ROW("called_computations", IR_FAM_CUSTOM_CALL, OTHER, ALWAYS, called_list_form, a_called_list),
    /* any opcode (print_instr, print_bc_attrs, print_called and print_common write them) */
    ROW("dimensions", ANY, OTHER, ALWAYS, dimensions, a_dimensions),
    ROW("channel_id", ANY, OTHER, ALWAYS, channel_id, a_i64),
    ROW("broadcast_dimensions", ANY, OTHER, ALWAYS, bc.broadcast_dimensions, a_bcast_dims),
    ROW("auto_broadcast", ANY, OTHER, ALWAYS, bc.auto_broadcast, a_auto_broadcast),
    ROW("axis", ANY, OTHER, ALWAYS, bc.axis, a_i64),
    ROW("target_shape", ANY, OTHER, ALWAYS, bc.target_shape, a_list),
    ROW("to_apply", ANY, OTHER, ALWAYS, u, a_to_apply),
    ROW("calls", ANY, OTHER, ALWAYS, u, a_calls),
    ROW("control-predecessors", ANY, OTHER, ALWAYS, u, a_control_preds),
    ROW("sharding", ANY, OTHER, ALWAYS, u, a_sharding),
    ROW("metadata", ANY, OTHER, ALWAYS, u, a_metadata),
    ROW("frontend_attributes", ANY, OTHER, ALWAYS, u, a_frontend_attributes),
    ROW("statistics", ANY, OTHER, ALWAYS, u, a_statistics),
    ROW("origin", ANY, OTHER, ALWAYS, u, a_origin),
    ROW("result_accuracy", ANY, OTHER, ALWAYS, u, a_result_accuracy),
    ROW("parameter_replication", ANY, OTHER, ALWAYS, u, a_parameter_replication),
    ROW("output_to_operand_aliasing", ANY, OTHER, ALWAYS, u, a_output_to_operand_aliasing),
    ROW("backend_config", ANY, OTHER, ALWAYS, u, a_backend_config),
};
const int ir_attr_table_n = (int)(sizeof ir_attr_table / sizeof *ir_attr_table);

#undef ROW
#undef N_AT
#undef FLAG_AT
#undef NAMES
#undef AT
#undef ANY

/* The row that reads attribute a of `in`: the one for in's family (or any opcode's), else one
 * that takes every family without its own row; NULL: kept verbatim. */
static const ir_attr_desc *find_row(const ir_attr_in *a, const ir_instr *in) {
  const ir_attr_desc *fallback = NULL;
  for (int k = 0; k < ir_attr_table_n; k++) {
    const ir_attr_desc *r = &ir_attr_table[k];
    if (!ir_str_eq(a->name, r->name))
      continue;
    if (r->family == IR_ATTR_ANY || r->family == (int)fam_of(in))
      return r;
    if (r->fallback && !fallback)
      fallback = r;
  }
  return fallback;
}

/* ---- applying them ---------------------------------------------------------------------------- */

/* Assembles in->called in XLA's order from the attributes seen. */
/* Appends one reference to refs (sized by the caller). */
static void push_ref(comp_ref *refs, int *n, const comp_ref *r) {
  if (r->name.p)
    refs[(*n)++] = *r;
}

static bool assemble_called(attr_ctx *x) {
  ir_av *lists[] = {x->branches, x->calls, x->called_list};
  int cap = 7;  /* the single-computation roles */
  for (int l = 0; l < 3; l++)
    cap += lists[l] ? lists[l]->n : 0;
  comp_ref *refs = ir_arena_alloc_array(&x->b->m->arena, (size_t)cap, sizeof *refs);
  if (!refs)
    return false;
  int n = 0;
  const comp_ref *singles1[] = {&x->to_apply, &x->condition, &x->body, &x->true_c, &x->false_c};
  for (int i = 0; i < 5; i++)
    push_ref(refs, &n, singles1[i]);
  for (int l = 0; l < 2; l++)
    for (int i = 0; lists[l] && i < lists[l]->n; i++)
      push_ref(refs, &n, &(comp_ref){x->in, 0, irb_bare_name(lists[l]->kids[i]->s), lists[l]->kids[i]->loc});
  push_ref(refs, &n, &x->select);
  push_ref(refs, &n, &x->scatter);
  for (int i = 0; lists[2] && i < lists[2]->n; i++)
    push_ref(refs, &n, &(comp_ref){x->in, 0, irb_bare_name(lists[2]->kids[i]->s), lists[2]->kids[i]->loc});
  if (!n)
    return true;
  x->in->called = ir_arena_alloc_array(&x->b->m->arena, (size_t)n, sizeof(ir_computation *));
  if (!x->in->called)
    return false;
  x->in->n_called = n;
  for (int i = 0; i < n; i++) {
    refs[i].in = x->in;
    refs[i].slot = i;
    if (!irb_add_comp_ref(x->b, refs[i]))
      return false;
  }
  return true;
}

/* Whether attribute i repeats an earlier name: a scan for the usual handful, a hash table
 * (built lazily in *seen) for long lists, so that a hostile line stays linear. */
static bool repeats_earlier(ir_builder *b, ir_attr_list *attrs, int i, name_map *seen) {
  ir_attr_in *a = &attrs->items[i];
  if (attrs->n <= 16) {
    for (int j = 0; j < i; j++)
      if (attrs->items[j].name.len == a->name.len && memcmp(attrs->items[j].name.p, a->name.p, a->name.len) == 0)
        return true;
    return false;
  }
  if (irb_map_find(seen, a->name))
    return true;
  if (!irb_map_put(&b->m->arena, seen, a->name, a, a->loc))
    irb_oom(b, a->loc);
  return false;
}

void irb_apply_attrs(ir_builder *b, ir_instr *in, ir_attr_list *attrs) {
  attr_ctx x = {.b = b, .in = in};
  name_map seen = {0};
  for (int i = 0; i < attrs->n; i++) {
    ir_attr_in *a = &attrs->items[i];
    if (repeats_earlier(b, attrs, i, &seen)) {
      irb_error(b, a->loc, "duplicate attribute '%s'", a->name.p);
      return;
    }
    if (b->oom)
      return;
    const ir_attr_desc *row = find_row(a, in);
    x.a = a;
    x.v = a->value;
    x.row = row;
    int errs = b->diags->n_errors;
    if (row && row->parse(&x))
      continue;
    if (b->diags->n_errors != errs)
      return;
    irb_add_raw(b, &in->common.unknown, &in->common.n_unknown, a->name, irb_av_text(b, a->value));
  }
  if (!assemble_called(&x))
    irb_oom(b, in->loc);
}

typedef struct required_attr {
  ir_opcode op;
  const char *attr;
} required_attr;

static const required_attr required_attrs[] = {
    {IR_OP_IOTA, "iota_dimension"}, {IR_OP_GET_TUPLE_ELEMENT, "index"},
    {IR_OP_TRANSPOSE, "dimensions"}, {IR_OP_REVERSE, "dimensions"},
    {IR_OP_CONCATENATE, "dimensions"}, {IR_OP_SLICE, "slice"},
    {IR_OP_DYNAMIC_SLICE, "dynamic_slice_sizes"}, {IR_OP_PAD, "padding"},
    {IR_OP_REDUCE, "to_apply"}, {IR_OP_REDUCE, "dimensions"}, {IR_OP_REDUCE_WINDOW, "to_apply"},
    {IR_OP_SELECT_AND_SCATTER, "select"}, {IR_OP_SELECT_AND_SCATTER, "scatter"},
    {IR_OP_MAP, "to_apply"}, {IR_OP_SORT, "dimensions"}, {IR_OP_SORT, "to_apply"},
    {IR_OP_COMPARE, "direction"}, {IR_OP_CONVOLUTION, "dim_labels"},
    {IR_OP_GATHER, "offset_dims"}, {IR_OP_GATHER, "collapsed_slice_dims"},
    {IR_OP_GATHER, "start_index_map"}, {IR_OP_GATHER, "index_vector_dim"},
    {IR_OP_GATHER, "slice_sizes"}, {IR_OP_SCATTER, "update_window_dims"},
    {IR_OP_SCATTER, "inserted_window_dims"}, {IR_OP_SCATTER, "scatter_dims_to_operand_dims"},
    {IR_OP_SCATTER, "index_vector_dim"}, {IR_OP_SCATTER, "to_apply"},
    {IR_OP_FFT, "fft_type"}, {IR_OP_FFT, "fft_length"},
    {IR_OP_BATCH_NORM_TRAINING, "epsilon"}, {IR_OP_BATCH_NORM_TRAINING, "feature_index"},
    {IR_OP_BATCH_NORM_INFERENCE, "epsilon"}, {IR_OP_BATCH_NORM_INFERENCE, "feature_index"},
    {IR_OP_BATCH_NORM_GRAD, "epsilon"}, {IR_OP_BATCH_NORM_GRAD, "feature_index"},
    {IR_OP_REDUCE_PRECISION, "exponent_bits"}, {IR_OP_REDUCE_PRECISION, "mantissa_bits"},
    {IR_OP_RNG, "distribution"}, {IR_OP_RNG_BIT_GENERATOR, "algorithm"},
    {IR_OP_RNG_GET_AND_UPDATE_STATE, "delta"}, {IR_OP_WHILE, "condition"},
    {IR_OP_WHILE, "body"}, {IR_OP_CALL, "to_apply"}, {IR_OP_FUSION, "calls"},
    {IR_OP_CUSTOM_CALL, "custom_call_target"}, {IR_OP_ALL_REDUCE, "to_apply"},
    {IR_OP_ALL_REDUCE_START, "to_apply"}, {IR_OP_REDUCE_SCATTER, "to_apply"},
    {IR_OP_REDUCE_SCATTER, "dimensions"}, {IR_OP_ALL_GATHER, "dimensions"},
    {IR_OP_ALL_GATHER_START, "dimensions"}, {IR_OP_COLLECTIVE_PERMUTE, "source_target_pairs"},
    {IR_OP_COLLECTIVE_PERMUTE_START, "source_target_pairs"}, {IR_OP_TOPK, "k"},
    {IR_OP_SCAN, "to_apply"}, {IR_OP_SCAN, "dimensions"}, {IR_OP_DOMAIN, "domain"},
};

static bool has_attr(const ir_attr_list *attrs, const char *name) {
  for (int i = 0; i < attrs->n; i++)
    if (ir_str_eq(attrs->items[i].name, name))
      return true;
  return false;
}

void irb_check_required(ir_builder *b, ir_instr *in, const ir_attr_list *attrs) {
  for (size_t i = 0; i < sizeof required_attrs / sizeof *required_attrs; i++)
    if (required_attrs[i].op == in->op && !has_attr(attrs, required_attrs[i].attr)) {
      irb_error(b, in->loc, "%%%s: attribute '%s' is required for opcode '%s'", in->name.p,
                required_attrs[i].attr, ir_opcode_table[in->op].spelling);
      return;
    }
  if (fam_of(in) == IR_FAM_COLLECTIVE && in->attrs.u.collective.use_global_device_ids && !in->attrs.channel_id) {
    /* as XLA's parser: global device ids name devices across partitions, which needs a channel */
    irb_error(b, in->loc, "%%%s: use_global_device_ids=true needs a channel_id", in->name.p);
    return;
  }
  if (fam_of(in) == IR_FAM_COLLECTIVE && in->attrs.u.collective.use_global_device_ids &&
      in->attrs.u.collective.replica_groups.n_groups == 0) {
    irb_error(b, in->loc, "%%%s: use_global_device_ids=true needs replica_groups naming the devices", in->name.p);
    return;
  }
  if (in->op == IR_OP_CONDITIONAL && in->n_operands > 0 && in->operands[0]->shape &&
      in->operands[0]->shape->et == IR_PRED && has_attr(attrs, "branch_computations")) {
    /* as XLA's parser: the attribute set follows the type of the branch operand */
    irb_error(b, in->loc, "%%%s: a conditional on a pred takes true_computation and false_computation, not branch_computations",
              in->name.p);
    return;
  }
  if (in->op == IR_OP_CONDITIONAL && !has_attr(attrs, "branch_computations") &&
      !(has_attr(attrs, "true_computation") && has_attr(attrs, "false_computation")))
    irb_error(b, in->loc,
              "%%%s: conditional needs true_computation and false_computation, or branch_computations",
              in->name.p);
  if (in->op == IR_OP_BROADCAST && !has_attr(attrs, "dimensions") && !has_attr(attrs, "auto_broadcast") &&
      in->n_operands == 1 && in->operands[0]->shape && in->operands[0]->shape->rank > 0)
    irb_error(b, in->loc, "%%%s: attribute 'dimensions' is required for opcode 'broadcast'", in->name.p);
}

