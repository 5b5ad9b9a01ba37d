/* attributes.c — interprets an instruction's attributes (the builder's half that knows their
 * meaning): attr_table has one row per attribute name with its handler and the opcode family
 * that takes it; a handler checks the written value and stores it in the instruction's typed
 * attributes, and what no row takes is kept verbatim.  Also the attributes each opcode
 * requires, and the called computations assembled in XLA's order.
 * Tests: testdata/parse/ok (round trip) and testdata/parse/err (messages).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/build_internal.h"
#include "ir/mesh_groups.h"

/* ---- attributes ------------------------------------------------------------------------ */

typedef struct attr_ctx {
  ir_builder *b;
  ir_instr *in;
  ir_attr_in *a;
  ir_av *v;
  /* called computations by role, assembled into in->called at the end */
  comp_ref to_apply, condition, body, true_c, false_c, select, scatter;
  ir_av *branches, *calls, *called_list;
} attr_ctx;

typedef bool (*attr_fn)(attr_ctx *x);

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

static bool a_dimensions(attr_ctx *x) { x->in->attrs.has_dimensions = true; return LIST(x->in->attrs.dimensions); }
static bool a_channel_id(attr_ctx *x) { return I64(x->in->attrs.channel_id); }
static bool a_custom_text(attr_ctx *x) {
  if (x->v->kind != AV_STRING) {
    irb_error(x->b, x->v->loc, "%s expects a quoted string", x->a->name.p);
    return false;
  }
  x->in->attrs.custom_text = irb_unquote(x->b, x->v);
  return true;
}
static bool a_domain(attr_ctx *x) { x->in->attrs.custom_text = irb_av_text(x->b, x->v); return true; }
static bool a_bcast_dims(attr_ctx *x) {
  x->in->attrs.bc.has_broadcast_dimensions = true;
  return LIST(x->in->attrs.bc.broadcast_dimensions);
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
static bool a_axis(attr_ctx *x) { return I64(x->in->attrs.bc.axis); }
static bool a_target_shape(attr_ctx *x) { return LIST(x->in->attrs.bc.target_shape); }
static bool a_index(attr_ctx *x) { return I64(x->in->attrs.u.tuple_index); }
static bool a_iota_dimension(attr_ctx *x) { return I64(x->in->attrs.u.iota_dimension); }
static bool a_inferred_dimension(attr_ctx *x) { return I64(x->in->attrs.u.inferred_dimension); }

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
  x->in->attrs.u.slice.dims = d;
  x->in->attrs.u.slice.n = v->n;
  return true;
}

static bool a_dynamic_slice_sizes(attr_ctx *x) { return LIST(x->in->attrs.u.dynamic_slice_sizes); }

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
  if (fam_of(x->in) != IR_FAM_PAD)
    return false;
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
  x->in->attrs.u.padding.dims = d;
  x->in->attrs.u.padding.n = n;
  return true;
}

static bool a_direction(attr_ctx *x) {
  static const char *const names[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  for (int i = 0; i < 6; i++)
    if (x->v->kind == AV_NAME && ir_str_eq(x->v->s, names[i])) {
      x->in->attrs.u.compare.dir = (ir_cmp_dir)i;
      return true;
    }
  irb_error(x->b, x->v->loc, "unknown comparison direction '%s' (expected EQ, NE, LT, LE, GT or GE)",
            x->v->s.p ? x->v->s.p : "");
  return false;
}

static bool a_cmp_type(attr_ctx *x) {
  static const char *const names[] = {"DEFAULT", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};
  for (int i = 0; i < 5; i++)
    if (x->v->kind == AV_NAME && ir_str_eq(x->v->s, names[i])) {
      x->in->attrs.u.compare.type = (ir_cmp_type)i;
      x->in->attrs.u.compare.has_type = true;
      return true;
    }
  irb_error(x->b, x->v->loc, "unknown comparison type '%s'", x->v->s.p ? x->v->s.p : "");
  return false;
}

static bool a_exponent_bits(attr_ctx *x) { return I64(x->in->attrs.u.reduce_precision.exponent_bits); }
static bool a_mantissa_bits(attr_ctx *x) { return I64(x->in->attrs.u.reduce_precision.mantissa_bits); }

static ir_window *window_of(ir_instr *in) {
  switch (fam_of(in)) {
  case IR_FAM_REDUCE_WINDOW:
  case IR_FAM_SELECT_AND_SCATTER: return &in->attrs.u.reduce_window.window;
  case IR_FAM_CONVOLUTION: return &in->attrs.u.conv.window;
  case IR_FAM_CUSTOM_CALL: return &in->attrs.u.custom_call.window;
  default: return NULL;
  }
}

static bool a_window(attr_ctx *x) {
  ir_window *w = window_of(x->in);
  ir_av *v = x->v;
  if (!w)
    return false;
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
    if (f < 0) {
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

static bool a_scan_carries(attr_ctx *x) { return I64(x->in->attrs.u.scan.num_carries); }
static bool a_scan_reverse(attr_ctx *x) { return BOOL(x->in->attrs.u.scan.is_reverse); }
static bool a_scan_assoc(attr_ctx *x) { return BOOL(x->in->attrs.u.scan.is_associative); }
static bool a_is_stable(attr_ctx *x) { return BOOL(x->in->attrs.u.sort.is_stable); }
static bool a_k(attr_ctx *x) { return I64(x->in->attrs.u.topk.k); }
static bool a_largest(attr_ctx *x) { x->in->attrs.u.topk.has_largest = true; return BOOL(x->in->attrs.u.topk.largest); }

static ir_dot_dnums *dnums_of(ir_instr *in) { return &in->attrs.u.dot.dnums; }
static bool a_lhs_batch(attr_ctx *x) { return LIST(dnums_of(x->in)->lhs_batch); }
static bool a_rhs_batch(attr_ctx *x) { return LIST(dnums_of(x->in)->rhs_batch); }
static bool a_lhs_contracting(attr_ctx *x) { return LIST(dnums_of(x->in)->lhs_contracting); }
static bool a_rhs_contracting(attr_ctx *x) { return LIST(dnums_of(x->in)->rhs_contracting); }
static bool a_lhs_ragged(attr_ctx *x) { return LIST(dnums_of(x->in)->lhs_ragged); }
static bool a_rhs_group(attr_ctx *x) { return LIST(dnums_of(x->in)->rhs_group); }

static bool a_precision(attr_ctx *x) {
  ir_av *v = x->v;
  ir_precision *out;
  int *n, cap;
  if (fam_of(x->in) == IR_FAM_DOT) {
    out = x->in->attrs.u.dot.precision;
    n = &x->in->attrs.u.dot.n_precision;
    cap = 4;
  } else if (fam_of(x->in) == IR_FAM_CONVOLUTION) {
    out = x->in->attrs.u.conv.precision;
    n = &x->in->attrs.u.conv.n_precision;
    cap = 2;
  } else {
    return false;
  }
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
  *n = v->n;
  return true;
}

static bool a_algorithm(attr_ctx *x) {
  if (fam_of(x->in) == IR_FAM_DOT) {
    x->in->attrs.u.dot.algorithm = irb_av_text(x->b, x->v);
    return true;
  }
  if (fam_of(x->in) != IR_FAM_RNG_BIT_GENERATOR)
    return false;
  static const char *const names[] = {"rng_default", "rng_three_fry", "rng_philox"};
  for (int i = 0; i < 3; i++)
    if (x->v->kind == AV_NAME && ir_str_eq(x->v->s, names[i])) {
      x->in->attrs.u.rng_bit_generator.algorithm = (ir_rng_algo)i;
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
  ir_conv_dnums *d;
  if (fam_of(x->in) == IR_FAM_CONVOLUTION)
    d = &x->in->attrs.u.conv.dnums;
  else if (fam_of(x->in) == IR_FAM_CUSTOM_CALL)
    d = &x->in->attrs.u.custom_call.dnums;
  else
    return false;
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

static int64_t *group_count_of(ir_instr *in, bool batch) {
  if (fam_of(in) == IR_FAM_CONVOLUTION)
    return batch ? &in->attrs.u.conv.batch_group_count : &in->attrs.u.conv.feature_group_count;
  if (fam_of(in) == IR_FAM_CUSTOM_CALL)
    return batch ? &in->attrs.u.custom_call.batch_group_count : &in->attrs.u.custom_call.feature_group_count;
  return NULL;
}
static bool a_feature_group_count(attr_ctx *x) {
  int64_t *p = group_count_of(x->in, false);
  return p && I64(*p);
}
static bool a_batch_group_count(attr_ctx *x) {
  int64_t *p = group_count_of(x->in, true);
  return p && I64(*p);
}
static bool a_conv_kind(attr_ctx *x) { x->in->attrs.u.conv.conv_kind = irb_av_text(x->b, x->v); return true; }

#define G (x->in->attrs.u.gather)
#define S (x->in->attrs.u.scatter)
static bool a_offset_dims(attr_ctx *x) { return LIST(G.offset_dims); }
static bool a_collapsed(attr_ctx *x) { return LIST(G.collapsed_slice_dims); }
static bool a_start_index_map(attr_ctx *x) { return LIST(G.start_index_map); }
static bool a_operand_batching(attr_ctx *x) { return LIST(G.operand_batching_dims); }
static bool a_start_indices_batching(attr_ctx *x) { return LIST(G.start_indices_batching_dims); }
static bool a_update_window(attr_ctx *x) { return LIST(S.update_window_dims); }
static bool a_inserted_window(attr_ctx *x) { return LIST(S.inserted_window_dims); }
static bool a_scatter_dims_map(attr_ctx *x) { return LIST(S.scatter_dims_to_operand_dims); }
static bool a_input_batching(attr_ctx *x) { return LIST(S.input_batching_dims); }
static bool a_scatter_indices_batching(attr_ctx *x) { return LIST(S.scatter_indices_batching_dims); }
static bool a_index_vector_dim(attr_ctx *x) {
  return fam_of(x->in) == IR_FAM_GATHER ? I64(G.index_vector_dim) : I64(S.index_vector_dim);
}
static bool a_indices_are_sorted(attr_ctx *x) {
  return fam_of(x->in) == IR_FAM_GATHER ? BOOL(G.indices_are_sorted) : BOOL(S.indices_are_sorted);
}
static bool a_unique_indices(attr_ctx *x) { return BOOL(S.unique_indices); }
static bool int_lists(attr_ctx *x, ir_av *v, ir_i64_list **out, int *n);
static bool a_slice_sizes(attr_ctx *x) {
  if (fam_of(x->in) == IR_FAM_GATHER)
    return LIST(G.slice_sizes);
  if (fam_of(x->in) == IR_FAM_COLLECTIVE) { /* collective-permute: {{sizes of buffer 0},...} */
    if (x->v->kind != AV_LIST) {
      irb_error(x->b, x->v->loc, "expected slice_sizes={{...},...}");
      return false;
    }
    x->in->attrs.u.collective.inplace = true;
    return int_lists(x, x->v, &x->in->attrs.u.collective.slice_sizes, &x->in->attrs.u.collective.n_slice_sizes);
  }
  return false;
}
#undef G
#undef S

static bool a_fft_type(attr_ctx *x) {
  static const char *const names[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
  for (int i = 0; i < 4; i++)
    if (x->v->kind == AV_NAME && ir_str_eq(x->v->s, names[i])) {
      x->in->attrs.u.fft.type = (ir_fft_type)i;
      return true;
    }
  irb_error(x->b, x->v->loc, "unknown fft_type (expected FFT, IFFT, RFFT or IRFFT)");
  return false;
}
static bool a_fft_length(attr_ctx *x) { return LIST(x->in->attrs.u.fft.length); }
static bool a_lower(attr_ctx *x) {
  if (fam_of(x->in) == IR_FAM_CHOLESKY)
    return BOOL(x->in->attrs.u.cholesky.lower);
  return BOOL(x->in->attrs.u.triangular_solve.lower);
}
static bool a_left_side(attr_ctx *x) { return BOOL(x->in->attrs.u.triangular_solve.left_side); }
static bool a_unit_diagonal(attr_ctx *x) { return BOOL(x->in->attrs.u.triangular_solve.unit_diagonal); }
static bool a_transpose_a(attr_ctx *x) {
  static const char *const names[] = {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
  for (int i = 0; i < 3; i++)
    if (x->v->kind == AV_NAME && ir_str_eq(x->v->s, names[i])) {
      x->in->attrs.u.triangular_solve.transpose_a = (ir_transpose_a)i;
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
  x->in->attrs.u.batch_norm.epsilon = strtod(x->v->s.p, NULL);
  return true;
}
static bool a_feature_index(attr_ctx *x) { return I64(x->in->attrs.u.batch_norm.feature_index); }
static bool a_distribution(attr_ctx *x) {
  if (x->v->kind == AV_NAME && ir_str_eq(x->v->s, "rng_uniform"))
    x->in->attrs.u.rng.distribution = IR_RNG_UNIFORM;
  else if (x->v->kind == AV_NAME && ir_str_eq(x->v->s, "rng_normal"))
    x->in->attrs.u.rng.distribution = IR_RNG_NORMAL;
  else {
    irb_error(x->b, x->v->loc, "unknown distribution (expected rng_uniform or rng_normal)");
    return false;
  }
  return true;
}
static bool a_delta(attr_ctx *x) { return I64(x->in->attrs.u.rng_state.delta); }
static bool a_is_composite(attr_ctx *x) { return BOOL(x->in->attrs.u.call.is_composite); }
static bool a_fusion_kind(attr_ctx *x) { x->in->attrs.u.fusion.kind = irb_av_text(x->b, x->v); return true; }

static bool a_api_version(attr_ctx *x) {
  static const char *const names[] = {"API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL",
                                      "API_VERSION_STATUS_RETURNING",
                                      "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"};
  /* XLA's parser maps every name of its CustomCallApiVersion enum, API_VERSION_UNSPECIFIED (0)
   * included, and its printer writes every value but ORIGINAL: older dumps carry UNSPECIFIED.
   * What running it does is the runtime's matter (runtime/src/context/custom_call.c). */
  for (int i = 0; i < 5; i++)
    if (x->v->kind == AV_NAME && ir_str_eq(x->v->s, names[i])) {
      x->in->attrs.u.custom_call.api_version = (ir_custom_call_api)i;
      x->in->attrs.u.custom_call.has_api_version = true;
      return true;
    }
  irb_error(x->b, x->v->loc, "unknown api_version '%s'", x->v->s.p ? x->v->s.p : "");
  return false;
}
static bool a_has_side_effect(attr_ctx *x) { return BOOL(x->in->attrs.u.custom_call.has_side_effect); }
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
  x->in->attrs.u.custom_call.operand_layout_constraints = arr;
  x->in->attrs.u.custom_call.n_operand_layout_constraints = v->n;
  x->in->attrs.u.custom_call.has_operand_layout_constraints = true;
  return true;
}
/* literal=s32[2]{0} {1, 2} (the shape is written before the values).  A tuple literal,
 * ( s32[1]{0} {4}, pred[] true ), is kept verbatim. */
static bool a_cc_literal(attr_ctx *x) {
  if (x->v->kind != AV_SHAPED || !x->v->shape)
    return false; /* no shape: it was malformed and has been reported */
  ir_literal *lit = irb_literal_from_av(x->b, x->v->shape, x->v);
  x->in->attrs.u.custom_call.literal = lit;
  return lit != NULL;
}
static bool a_schedule(attr_ctx *x) { x->in->attrs.u.custom_call.schedule = irb_av_text(x->b, x->v); return true; }
static bool a_padding_type(attr_ctx *x) { x->in->attrs.u.custom_call.padding_type = irb_av_text(x->b, x->v); return true; }
static bool a_is_host_transfer(attr_ctx *x) { return BOOL(x->in->attrs.u.send_recv.is_host_transfer); }
static bool a_outfeed_shape(attr_ctx *x) {
  if (x->v->kind != AV_SHAPE) {
    irb_error(x->b, x->v->loc, "outfeed_shape expects a shape");
    return false;
  }
  x->in->attrs.u.outfeed.outfeed_shape = x->v->shape;
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
  ir_replica_groups *g = &x->in->attrs.u.collective.replica_groups;
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
static bool a_constrain_layout(attr_ctx *x) { return BOOL(x->in->attrs.u.collective.constrain_layout); }
static bool a_global_ids(attr_ctx *x) { return BOOL(x->in->attrs.u.collective.use_global_device_ids); }
static bool a_dynamic_root(attr_ctx *x) {
  bool v;
  if (!irb_av_bool(x->b, x->v, &v))
    return false;
  x->in->attrs.u.collective.has_dynamic_root = v;
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
  x->in->attrs.u.collective.source_target_pairs = pairs;
  x->in->attrs.u.collective.n_source_target_pairs = n;
  return true;
}
static bool a_async_thread(attr_ctx *x) {
  if (x->v->kind != AV_STRING)
    return false;
  x->in->attrs.u.async.execution_thread = irb_unquote(x->b, x->v);
  return true;
}
static bool a_prefetch_index(attr_ctx *x) {
  x->in->attrs.u.copy_start.has_index = true;
  return I64(x->in->attrs.u.copy_start.cross_program_prefetch_index);
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

enum { ANY = -1 };

/* One row per attribute name: its handler and the family it belongs to (ANY: every opcode
 * that may carry it; the handler returns false without a diagnostic when the opcode cannot,
 * and the attribute is then kept verbatim). */
typedef struct attr_row {
  const char *name;
  attr_fn fn;
  int family;
} attr_row;

static const attr_row attr_table[] = {
    {"dimensions", a_dimensions, ANY},
    {"channel_id", a_channel_id, ANY},
    {"custom_call_target", a_custom_text, IR_FAM_CUSTOM_CALL},
    {"infeed_config", a_custom_text, IR_FAM_INFEED},
    {"outfeed_config", a_custom_text, IR_FAM_OUTFEED},
    {"domain", a_domain, IR_FAM_DOMAIN},
    {"broadcast_dimensions", a_bcast_dims, ANY},
    {"auto_broadcast", a_auto_broadcast, ANY},
    {"axis", a_axis, ANY},
    {"target_shape", a_target_shape, ANY},
    {"index", a_index, IR_FAM_GET_TUPLE_ELEMENT},
    {"iota_dimension", a_iota_dimension, IR_FAM_IOTA},
    {"inferred_dimension", a_inferred_dimension, IR_FAM_RESHAPE},
    {"slice", a_slice, IR_FAM_SLICE},
    {"dynamic_slice_sizes", a_dynamic_slice_sizes, IR_FAM_DYNAMIC_SLICE},
    {"padding", a_padding, ANY},
    {"direction", a_direction, IR_FAM_COMPARE},
    {"type", a_cmp_type, IR_FAM_COMPARE},
    {"exponent_bits", a_exponent_bits, IR_FAM_REDUCE_PRECISION},
    {"mantissa_bits", a_mantissa_bits, IR_FAM_REDUCE_PRECISION},
    {"window", a_window, ANY},
    {"num_carries", a_scan_carries, IR_FAM_SCAN},
    {"is_reverse", a_scan_reverse, IR_FAM_SCAN},
    {"is_associative", a_scan_assoc, IR_FAM_SCAN},
    {"is_stable", a_is_stable, IR_FAM_SORT},
    {"k", a_k, IR_FAM_TOPK},
    {"largest", a_largest, IR_FAM_TOPK},
    {"lhs_batch_dims", a_lhs_batch, IR_FAM_DOT},
    {"rhs_batch_dims", a_rhs_batch, IR_FAM_DOT},
    {"lhs_contracting_dims", a_lhs_contracting, IR_FAM_DOT},
    {"rhs_contracting_dims", a_rhs_contracting, IR_FAM_DOT},
    {"lhs_ragged_dims", a_lhs_ragged, IR_FAM_DOT},
    {"rhs_group_dims", a_rhs_group, IR_FAM_DOT},
    {"operand_precision", a_precision, ANY},
    {"algorithm", a_algorithm, ANY},
    {"dim_labels", a_dim_labels, ANY},
    {"feature_group_count", a_feature_group_count, ANY},
    {"batch_group_count", a_batch_group_count, ANY},
    {"conv_kind", a_conv_kind, IR_FAM_CONVOLUTION},
    {"offset_dims", a_offset_dims, IR_FAM_GATHER},
    {"collapsed_slice_dims", a_collapsed, IR_FAM_GATHER},
    {"start_index_map", a_start_index_map, IR_FAM_GATHER},
    {"operand_batching_dims", a_operand_batching, IR_FAM_GATHER},
    {"start_indices_batching_dims", a_start_indices_batching, IR_FAM_GATHER},
    {"slice_sizes", a_slice_sizes, ANY},
    {"index_vector_dim", a_index_vector_dim, ANY},
    {"indices_are_sorted", a_indices_are_sorted, ANY},
    {"update_window_dims", a_update_window, IR_FAM_SCATTER},
    {"inserted_window_dims", a_inserted_window, IR_FAM_SCATTER},
    {"scatter_dims_to_operand_dims", a_scatter_dims_map, IR_FAM_SCATTER},
    {"input_batching_dims", a_input_batching, IR_FAM_SCATTER},
    {"scatter_indices_batching_dims", a_scatter_indices_batching, IR_FAM_SCATTER},
    {"unique_indices", a_unique_indices, IR_FAM_SCATTER},
    {"fft_type", a_fft_type, IR_FAM_FFT},
    {"fft_length", a_fft_length, IR_FAM_FFT},
    {"lower", a_lower, ANY},
    {"left_side", a_left_side, IR_FAM_TRIANGULAR_SOLVE},
    {"unit_diagonal", a_unit_diagonal, IR_FAM_TRIANGULAR_SOLVE},
    {"transpose_a", a_transpose_a, IR_FAM_TRIANGULAR_SOLVE},
    {"epsilon", a_epsilon, IR_FAM_BATCH_NORM},
    {"feature_index", a_feature_index, IR_FAM_BATCH_NORM},
    {"distribution", a_distribution, IR_FAM_RNG},
    {"delta", a_delta, IR_FAM_RNG_STATE},
    {"is_composite", a_is_composite, IR_FAM_CALL},
    {"kind", a_fusion_kind, IR_FAM_FUSION},
    {"api_version", a_api_version, IR_FAM_CUSTOM_CALL},
    {"custom_call_has_side_effect", a_has_side_effect, IR_FAM_CUSTOM_CALL},
    {"operand_layout_constraints", a_operand_layout_constraints, IR_FAM_CUSTOM_CALL},
    {"literal", a_cc_literal, IR_FAM_CUSTOM_CALL},
    {"schedule", a_schedule, IR_FAM_CUSTOM_CALL},
    {"padding_type", a_padding_type, IR_FAM_CUSTOM_CALL},
    {"is_host_transfer", a_is_host_transfer, ANY},
    {"outfeed_shape", a_outfeed_shape, IR_FAM_OUTFEED},
    {"replica_groups", a_replica_groups, IR_FAM_COLLECTIVE},
    {"constrain_layout", a_constrain_layout, IR_FAM_COLLECTIVE},
    {"use_global_device_ids", a_global_ids, IR_FAM_COLLECTIVE},
    {"has_dynamic_root", a_dynamic_root, IR_FAM_COLLECTIVE},
    {"source_target_pairs", a_source_target_pairs, IR_FAM_COLLECTIVE},
    {"async_execution_thread", a_async_thread, IR_FAM_ASYNC},
    {"cross_program_prefetch_index", a_prefetch_index, IR_FAM_COPY_ASYNC},
    {"to_apply", a_to_apply, ANY},
    {"condition", a_condition, IR_FAM_WHILE},
    {"body", a_body, IR_FAM_WHILE},
    {"true_computation", a_true, IR_FAM_CONDITIONAL},
    {"false_computation", a_false, IR_FAM_CONDITIONAL},
    {"branch_computations", a_branches, IR_FAM_CONDITIONAL},
    {"calls", a_calls, ANY},
    {"select", a_select, IR_FAM_SELECT_AND_SCATTER},
    {"scatter", a_scatter_comp, IR_FAM_SELECT_AND_SCATTER},
    {"called_computations", a_called_list, IR_FAM_CUSTOM_CALL},
    {"control-predecessors", a_control_preds, ANY},
    {"sharding", a_sharding, ANY},
    {"metadata", a_metadata, ANY},
    {"frontend_attributes", a_frontend_attributes, ANY},
    {"statistics", a_statistics, ANY},
    {"origin", a_origin, ANY},
    {"result_accuracy", a_result_accuracy, ANY},
    {"parameter_replication", a_parameter_replication, ANY},
    {"output_to_operand_aliasing", a_output_to_operand_aliasing, ANY},
    {"backend_config", a_backend_config, ANY},
};

/* Families whose attributes are family-specific need the opcode to match; for ANY rows the
 * handler decides. */
static bool wants_attr(const attr_row *r, const ir_instr *in) {
  if (r->family == ANY)
    return true;
  if ((int)fam_of(in) == r->family)
    return true;
  /* Shared spellings across families. */
  if (r->fn == a_index_vector_dim || r->fn == a_indices_are_sorted)
    return fam_of(in) == IR_FAM_GATHER || fam_of(in) == IR_FAM_SCATTER;
  if (r->fn == a_to_apply)
    return true;
  return false;
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
    const attr_row *row = NULL;
    for (size_t k = 0; k < sizeof attr_table / sizeof *attr_table; k++)
      if (ir_str_eq(a->name, attr_table[k].name)) {
        row = &attr_table[k];
        break;
      }
    x.a = a;
    x.v = a->value;
    int errs = b->diags->n_errors;
    if (row && wants_attr(row, in) && row->fn(&x))
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

