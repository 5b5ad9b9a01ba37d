/* collectives.c — collective operations between replicas (hlo_rt_collective, hlo/rt.h) and the
 * collective group object of the public API.  Each operation exchanges the leaves of every
 * replica through the group's backend (collectives_internal.h: in-process threads today),
 * then computes its own result from the views: all-reduce (any reducer computation, applied
 * in group order), all-gather, reduce-scatter, all-to-all (array and tuple forms),
 * collective-permute (no source: zeros; the combined form permutes every operand; the
 * in-place form writes the source's input slice into a copy of the target's output, which a
 * replica no pair targets keeps), collective-broadcast and ragged-all-to-all (row ranges of
 * each member's input into row ranges of a copy of the output operand), within the replica group
 * that holds this replica (no groups written: all replicas).  A reducer that is one add (code
 * generation says so in the description) is a plain loop instead of a call per element.
 * When the backend offers its own primitives (native_ok / native_run, collectives_internal.h:
 * the MPI backend) and takes every leaf of an instruction, each leaf is handed to it instead of
 * being exchanged; else the exchange path above, the same on every backend.
 * Tests: testdata/runtime/coll_* (tests/runtime.cmake).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "collectives_internal.h"
#include "context_internal.h"
#include "hlo/rt.h"

#define HLO_PUBLIC __attribute__((visibility("default")))

HLO_PUBLIC hlo_status hlo_collective_group_create(int32_t num_replicas, hlo_collective_group **out) {
  *out = NULL;
  if (num_replicas < 1)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "a collective group needs at least one replica");
  hlo_collective_group *g = calloc(1, sizeof *g);
  if (!g)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory creating a collective group");
  hlo_status s = hlo_coll_threads_create(num_replicas, &g->backend, &g->impl);
  if (s) {
    free(g);
    return s;
  }
  g->magic = HLO_GROUP_MAGIC;
  g->layout_size = sizeof *g;
  g->num_replicas = num_replicas;
  *out = g;
  return NULL;
}

HLO_PUBLIC void hlo_collective_group_abort(hlo_collective_group *g) {
  if (g)
    g->backend->abort(g->impl);
}

HLO_PUBLIC void hlo_collective_group_destroy(hlo_collective_group *g) {
  if (!g)
    return;
  g->backend->destroy(g->impl);
  free(g);
}

hlo_status hlo_coll_group_of(hlo_context *ctx, const char *instr, hlo_collective_group **out) {
  int32_t num = hlo_rt_num_replicas(ctx);
  hlo_collective_group *g = ctx && hlo_ctx_same_layout(ctx) ? ctx->opts.group : NULL;
  bool usable = g && g->magic == HLO_GROUP_MAGIC && g->layout_size == sizeof *g && g->num_replicas == num;
  *out = usable ? g : NULL;
  if (num > 1 && !usable)
    return hlo_status_make(HLO_FAILED_PRECONDITION,
                           "%s: %d replicas but the context has no collective group of that size "
                           "(hlo_context_options.group)", instr, num);
  return NULL;
}

/* ---- the operation ------------------------------------------------------------------------- */

enum { K_ALL_REDUCE, K_ALL_GATHER, K_REDUCE_SCATTER, K_ALL_TO_ALL, K_ALL_TO_ALL_TUPLE, K_PERMUTE, K_BROADCAST,
       K_PERMUTE_INPLACE, K_RAGGED_ALL_TO_ALL };

/* ragged-all-to-all's operand leaves. */
enum { RAGGED_INPUT, RAGGED_OUTPUT, RAGGED_INPUT_OFFSETS, RAGGED_SEND_SIZES, RAGGED_OUTPUT_OFFSETS, RAGGED_LEAVES = 6 };

/* One buffer of the in-place collective-permute: where its input and output start-index
 * leaves begin, whether they hold one start per pair, and its slice sizes. */
typedef struct permute_buf {
  int64_t in_first, out_first, in_per_pair, out_per_pair;
  const int64_t *sizes;
} permute_buf;

/* One leaf: element bytes, operand rank and dims (from the description). */
typedef struct leaf_info {
  int64_t eb, rank;
  const int64_t *dims;
  int64_t bytes, result_bytes;
} leaf_info;

typedef struct coll {
  hlo_context *ctx;
  const char *instr;
  int64_t kind, n, dim;
  const int64_t *groups;  /* the description's {n_groups, size, members...} */
  const int64_t *members; /* this replica's group */
  int64_t g, me;          /* group size, index of this replica in it */
  const int64_t *pairs;
  int64_t n_pairs, num; /* num: replicas in all */
  leaf_info leaves[64];
  int64_t n_bufs;                  /* in-place collective-permute: buffers (result leaves) */
  permute_buf bufs[32];
  const int64_t *start_signed;     /* per start-index leaf (leaf 2 * n_bufs on) */
  const void *const *all; /* replica r, leaf i: all[r * n + i] */
  void *const *own;       /* this replica's operand leaves */
  hlo_coll_reducer_fn reduce;
  int32_t red_op, red_dtype; /* the description's reducer code, split (hlo/rt.h); -1: none */
} coll;

static const void *view(const coll *c, int64_t replica, int64_t leaf) { return c->all[replica * c->n + leaf]; }

/* The group holding `me` (all replicas when none is written); *out_members NULL = 0..N-1. */
static hlo_status find_group(coll *c, const int64_t *d, int64_t *pos, int32_t me, int32_t num) {
  c->groups = d + *pos;
  int64_t n_groups = d[(*pos)++], size = d[(*pos)++];
  const int64_t *m = d + *pos;
  *pos += n_groups * size;
  if (n_groups == 0) {
    c->members = NULL;
    c->g = num;
    c->me = me;
    return NULL;
  }
  for (int64_t gi = 0; gi < n_groups; gi++)
    for (int64_t k = 0; k < size; k++)
      if (m[gi * size + k] == me) {
        c->members = m + gi * size;
        c->g = size;
        c->me = k;
        int64_t top = 0;
        for (int64_t j = 0; j < n_groups * size; j++)
          top = m[j] > top ? m[j] : top;
        for (int64_t j = 0; j < size; j++)
          if (m[gi * size + j] < 0 || m[gi * size + j] >= num)
            return hlo_status_make(HLO_INVALID_ARGUMENT,
                                   "%s: replica group names replica %lld, but %d replica%s run: its groups need "
                                   "--replicas %lld (or mpirun -np %lld)", c->instr, (long long)m[gi * size + j],
                                   num, num == 1 ? "" : "s", (long long)top + 1, (long long)top + 1);
        return NULL;
      }
  return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: replica %d is in none of the replica groups", c->instr, me);
}

static int64_t member(const coll *c, int64_t k) { return c->members ? c->members[k] : k; }

static int64_t outer_of(const leaf_info *l, int64_t dim) {
  int64_t o = 1;
  for (int64_t d = 0; d < dim; d++)
    o *= l->dims[d];
  return o;
}

/* dst[k] += src[k] when the reducer is a plain add of a type summed here (the same operation
 * in the same order as calling it: identical bits); false for any other reducer or type.
 * Integers wrap, as XLA's add does. */
static bool add_into(const coll *c, unsigned char *dst, const unsigned char *src, int64_t count, int64_t eb) {
#define ADD_LOOP(T)                                                                                            \
  do {                                                                                                         \
    if (eb != (int64_t)sizeof(T))                                                                              \
      return false;                                                                                            \
    for (int64_t k = 0; k < count; k++) {                                                                      \
      T a, b;                                                                                                  \
      memcpy(&a, dst + k * eb, sizeof a);                                                                      \
      memcpy(&b, src + k * eb, sizeof b);                                                                      \
      a = (T)(a + b);                                                                                          \
      memcpy(dst + k * eb, &a, sizeof a);                                                                      \
    }                                                                                                          \
    return true;                                                                                               \
  } while (0)
  if (c->red_op != HLO_RT_REDUCER_ADD)
    return false;
  switch (c->red_dtype) {
  case HLO_DTYPE_IR_F32: ADD_LOOP(float);
  case HLO_DTYPE_IR_F64: ADD_LOOP(double);
  case HLO_DTYPE_IR_S32:
  case HLO_DTYPE_IR_U32: ADD_LOOP(uint32_t);
  case HLO_DTYPE_IR_S64:
  case HLO_DTYPE_IR_U64: ADD_LOOP(uint64_t);
  default: return false;
  }
#undef ADD_LOOP
}

/* dst[k] = reduce(dst[k], src[k]) for count elements of eb bytes. */
static hlo_status reduce_into(const coll *c, unsigned char *dst, const unsigned char *src, int64_t count, int64_t eb) {
  if (add_into(c, dst, src, count, eb))
    return NULL;
  unsigned char tmp[32];
  for (int64_t k = 0; k < count; k++) {
    void *params[2] = {dst + k * eb, (void *)(src + k * eb)};
    void *results[1] = {tmp};
    HLO_RETURN_IF_ERROR(c->reduce(c->ctx, params, results, NULL));
    memcpy(dst + k * eb, tmp, (size_t)eb);
  }
  return NULL;
}

/* Result = reduction over the group of bytes [off, off + len) of each member's leaf i. */
static hlo_status reduce_range(const coll *c, int64_t i, unsigned char *dst, int64_t off, int64_t len) {
  memcpy(dst, (const unsigned char *)view(c, member(c, 0), i) + off, (size_t)len);
  for (int64_t k = 1; k < c->g; k++)
    HLO_RETURN_IF_ERROR(reduce_into(c, dst, (const unsigned char *)view(c, member(c, k), i) + off,
                                    len / c->leaves[i].eb, c->leaves[i].eb));
  return NULL;
}

/* ---- in-place collective-permute ---- */

static int64_t read_index(const void *p, int64_t eb, bool is_signed) {
  switch (eb) {
  case 1: return is_signed ? (int64_t) * (const int8_t *)p : (int64_t) * (const uint8_t *)p;
  case 2: return is_signed ? (int64_t) * (const int16_t *)p : (int64_t) * (const uint16_t *)p;
  case 4: return is_signed ? (int64_t) * (const int32_t *)p : (int64_t) * (const uint32_t *)p;
  default: { int64_t v; memcpy(&v, p, sizeof v); return v; }
  }
}

/* Buffer b's start indices for pair p, read from `replica`'s view (out: the output side),
 * each clamped into [0, dims[k] - size[k]] as dynamic-slice does. */
static void permute_starts(const coll *c, int64_t b, bool out, int64_t p, int64_t replica, const int64_t *dims,
                           int64_t *starts) {
  const permute_buf *pb = &c->bufs[b];
  int64_t rank = c->leaves[b].rank;
  int64_t first = (out ? pb->out_first : pb->in_first) + ((out ? pb->out_per_pair : pb->in_per_pair) ? p * rank : 0);
  for (int64_t k = 0; k < rank; k++) {
    int64_t leaf = first + k, hi = dims[k] - pb->sizes[k];
    int64_t v = read_index(view(c, replica, leaf), c->leaves[leaf].eb, c->start_signed[leaf - 2 * c->n_bufs]);
    starts[k] = v < 0 ? 0 : v > hi ? hi : v;
  }
}

/* Copies the block of `sizes` at src_start of src (dims sd) to dst_start of dst (dims dd). */
static void copy_block(unsigned char *dst, const int64_t *dd, const int64_t *dst_start, const unsigned char *src,
                       const int64_t *sd, const int64_t *src_start, const int64_t *sizes, int64_t rank, int64_t eb) {
  int64_t rows = 1, row = eb;
  for (int64_t d = 0; d < rank; d++)
    if (d + 1 < rank)
      rows *= sizes[d];
    else
      row *= sizes[d];
  for (int64_t r = 0; r < rows && row > 0; r++) {
    int64_t rem = r, so = 0, dof = 0, ss = 1, ds = 1;
    for (int64_t d = rank - 1; d >= 0; d--) {
      int64_t i = 0;
      if (d + 1 < rank) {
        i = rem % sizes[d];
        rem /= sizes[d];
      }
      so += (src_start[d] + i) * ss;
      dof += (dst_start[d] + i) * ds;
      ss *= sd[d];
      ds *= dd[d];
    }
    memcpy(dst + dof * eb, src + so * eb, (size_t)row);
  }
}

/* Result buffer b: this replica's output, with the slice of every pair that targets it
 * (the source's input at the source's input start, slice_sizes big) written at this
 * replica's output start, pairs in order.  A replica no pair targets keeps its output. */
static hlo_status permute_inplace(const coll *c, int64_t b, unsigned char *out) {
  const leaf_info *li = &c->leaves[b], *lo = &c->leaves[c->n_bufs + b];
  int64_t me = member(c, c->me), in_start[64], out_start[64];
  memcpy(out, view(c, me, c->n_bufs + b), (size_t)lo->bytes);
  for (int64_t p = 0; p < c->n_pairs; p++) {
    int64_t src = c->pairs[2 * p];
    if (c->pairs[2 * p + 1] != me)
      continue;
    if (src >= c->num)
      return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: source_target_pairs names replica %lld of %lld", c->instr,
                             (long long)src, (long long)c->num);
    permute_starts(c, b, false, p, src, li->dims, in_start);
    permute_starts(c, b, true, p, me, lo->dims, out_start);
    copy_block(out, lo->dims, out_start, view(c, src, b), li->dims, in_start, c->bufs[b].sizes, li->rank, li->eb);
  }
  return NULL;
}

/* The in-place collective-permute's part of the description (hlo/rt.h): operand leaves are
 * the input buffers, the output buffers, the input and then the output start indices. */
static hlo_status describe_inplace(coll *c, const int64_t *d, int64_t *pos) {
  c->n_bufs = d[(*pos)++];
  if (c->n_bufs < 1 || c->n_bufs > 32 || 2 * c->n_bufs > c->n)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: %lld in-place buffers", c->instr, (long long)c->n_bufs);
  int64_t in_leaves = 0;
  for (int64_t b = 0; b < c->n_bufs; b++) {
    permute_buf *pb = &c->bufs[b];
    pb->in_per_pair = d[(*pos)++];
    pb->out_per_pair = d[(*pos)++];
    pb->sizes = d + *pos;
    *pos += c->leaves[b].rank;
    if (c->leaves[b].rank > 64)
      return hlo_status_make(HLO_UNIMPLEMENTED, "%s: a buffer of rank above 64", c->instr);
    in_leaves += (pb->in_per_pair ? c->n_pairs : 1) * c->leaves[b].rank;
  }
  for (int64_t b = 0, in = 2 * c->n_bufs, out = 2 * c->n_bufs + in_leaves; b < c->n_bufs; b++) {
    c->bufs[b].in_first = in;
    c->bufs[b].out_first = out;
    in += (c->bufs[b].in_per_pair ? c->n_pairs : 1) * c->leaves[b].rank;
    out += (c->bufs[b].out_per_pair ? c->n_pairs : 1) * c->leaves[b].rank;
    if (out > c->n)
      return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: too few start-index operands", c->instr);
  }
  c->start_signed = d + *pos;
  *pos += c->n - 2 * c->n_bufs;
  return NULL;
}

/* ragged-all-to-all: the result starts as this replica's output operand; then every group
 * member k sends it, for each update u, rows [input_offsets[i], + send_sizes[i]) of its input
 * (dimension 0) to rows [output_offsets[i], ...) of the result, i = me * updates + u, read from
 * k's own offset and size arrays (XLA's layout: the updates to peer j are entries j*updates
 * on).  recv_sizes is this replica's own account of the same sizes and is not read. */
static hlo_status ragged_all_to_all(const coll *c, unsigned char *out) {
  const leaf_info *in = &c->leaves[RAGGED_INPUT], *meta = &c->leaves[RAGGED_INPUT_OFFSETS];
  memmove(out, c->own[RAGGED_OUTPUT], (size_t)c->leaves[RAGGED_OUTPUT].bytes);
  int64_t in_rows = in->rank ? in->dims[0] : 1, out_rows = in->rank ? c->leaves[RAGGED_OUTPUT].dims[0] : 1;
  int64_t row = in_rows ? in->bytes / in_rows : 0, entries = meta->bytes / meta->eb, updates = entries / c->g;
  if (updates * c->g != entries)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: %lld offsets do not split over a group of %lld replicas",
                           c->instr, (long long)entries, (long long)c->g);
  for (int64_t k = 0; k < c->g; k++)
    for (int64_t u = 0; u < updates; u++) {
      int64_t i = c->me * updates + u, from = member(c, k);
      const unsigned char *src = view(c, from, RAGGED_INPUT);
      int64_t io = read_index((const unsigned char *)view(c, from, RAGGED_INPUT_OFFSETS) + i * meta->eb, meta->eb, true);
      int64_t n = read_index((const unsigned char *)view(c, from, RAGGED_SEND_SIZES) + i * meta->eb, meta->eb, true);
      int64_t oo = read_index((const unsigned char *)view(c, from, RAGGED_OUTPUT_OFFSETS) + i * meta->eb, meta->eb, true);
      if (n < 0 || io < 0 || oo < 0 || io > in_rows - n || oo > out_rows - n)
        return hlo_status_make(HLO_INVALID_ARGUMENT,
                               "%s: replica %lld sends rows [%lld, %lld) of its %lld-row input to rows [%lld, %lld) of "
                               "replica %lld's %lld-row output",
                               c->instr, (long long)from, (long long)io, (long long)(io + n), (long long)in_rows,
                               (long long)oo, (long long)(oo + n), (long long)member(c, c->me), (long long)out_rows);
      memcpy(out + oo * row, src + io * row, (size_t)(n * row));
    }
  return NULL;
}

/* Result leaves: one per operand leaf, one per buffer for the in-place collective-permute,
 * one for ragged-all-to-all. */
static int64_t result_count(const coll *c) {
  return c->kind == K_PERMUTE_INPLACE ? c->n_bufs : c->kind == K_RAGGED_ALL_TO_ALL ? 1 : c->n;
}

static hlo_status run_leaf(const coll *c, int64_t i, void *res) {
  const leaf_info *l = &c->leaves[i];
  unsigned char *out = res;
  int64_t outer = c->dim >= 0 ? outer_of(l, c->dim) : 1, inner = l->bytes / (outer ? outer : 1);
  bool carried = (c->kind == K_ALL_GATHER || c->kind == K_REDUCE_SCATTER) && l->rank <= c->dim;
  if (carried && c->kind == K_ALL_GATHER) { /* a scalar tuple element: this replica's own */
    memcpy(out, view(c, member(c, c->me), i), (size_t)l->bytes);
    return NULL;
  }
  switch (carried ? K_ALL_REDUCE : c->kind) {
  case K_ALL_REDUCE: return reduce_range(c, i, out, 0, l->bytes);
  case K_ALL_GATHER:
    for (int64_t o = 0; o < outer; o++)
      for (int64_t k = 0; k < c->g; k++)
        memcpy(out + (o * c->g + k) * inner, (const unsigned char *)view(c, member(c, k), i) + o * inner, (size_t)inner);
    return NULL;
  case K_REDUCE_SCATTER: {
    int64_t blk = inner / c->g;
    for (int64_t o = 0; o < outer; o++)
      HLO_RETURN_IF_ERROR(reduce_range(c, i, out + o * blk, o * inner + c->me * blk, blk));
    return NULL;
  }
  case K_ALL_TO_ALL: {
    int64_t blk = inner / c->g;
    for (int64_t o = 0; o < outer; o++)
      for (int64_t k = 0; k < c->g; k++)
        memcpy(out + o * inner + k * blk, (const unsigned char *)view(c, member(c, k), i) + o * inner + c->me * blk,
               (size_t)blk);
    return NULL;
  }
  case K_ALL_TO_ALL_TUPLE:
    memcpy(out, view(c, member(c, i), c->me), (size_t)l->bytes);
    return NULL;
  case K_PERMUTE: {
    int64_t me = member(c, c->me);
    for (int64_t p = 0; p < c->n_pairs; p++)
      if (c->pairs[2 * p + 1] == me) {
        if (c->pairs[2 * p] >= c->num)
          return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: source_target_pairs names replica %lld of %lld",
                                 c->instr, (long long)c->pairs[2 * p], (long long)c->num);
        memcpy(out, view(c, c->pairs[2 * p], i), (size_t)l->bytes);
        return NULL;
      }
    memset(out, 0, (size_t)l->bytes);
    return NULL;
  }
  case K_BROADCAST: memcpy(out, view(c, member(c, 0), i), (size_t)l->bytes); return NULL;
  case K_PERMUTE_INPLACE: return permute_inplace(c, i, out);
  case K_RAGGED_ALL_TO_ALL: return ragged_all_to_all(c, out);
  default: return hlo_status_make(HLO_INTERNAL, "%s: unknown collective kind %lld", c->instr, (long long)c->kind);
  }
}

/* Reads the description (hlo/rt.h) into c. */
static hlo_status describe(coll *c, const int64_t *d, int32_t me, int32_t num) {
  c->kind = d[0];
  c->n = d[1];
  c->dim = d[2];
  if (c->n > 64)
    return hlo_status_make(HLO_UNIMPLEMENTED, "%s: a collective of more than 64 leaves", c->instr);
  int64_t pos = 3;
  HLO_RETURN_IF_ERROR(find_group(c, d, &pos, me, num));
  c->n_pairs = d[pos++];
  c->pairs = d + pos;
  pos += 2 * c->n_pairs;
  for (int64_t i = 0; i < c->n; i++) {
    leaf_info *l = &c->leaves[i];
    l->eb = d[pos++];
    l->rank = d[pos++];
    l->dims = d + pos;
    pos += l->rank;
    l->bytes = l->eb;
    for (int64_t k = 0; k < l->rank; k++)
      l->bytes *= l->dims[k];
  }
  if (c->kind == K_PERMUTE_INPLACE)
    HLO_RETURN_IF_ERROR(describe_inplace(c, d, &pos));
  for (int64_t i = 0; i < result_count(c); i++) {
    leaf_info *l = &c->leaves[i];
    l->result_bytes = d[pos++];
    bool carried = l->rank <= c->dim;
    int64_t want = c->kind == K_ALL_GATHER && !carried ? l->bytes * c->g
                   : c->kind == K_REDUCE_SCATTER && !carried ? l->bytes / c->g
                   : c->kind == K_PERMUTE_INPLACE           ? c->leaves[c->n_bufs + i].bytes
                   : c->kind == K_RAGGED_ALL_TO_ALL         ? c->leaves[RAGGED_OUTPUT].bytes
                                                             : l->bytes;
    if (l->result_bytes != want)
      return hlo_status_make(HLO_INVALID_ARGUMENT,
                             "%s: result %lld holds %lld bytes, but a group of %lld replicas gives %lld", c->instr,
                             (long long)i, (long long)l->result_bytes, (long long)c->g, (long long)want);
  }
  int64_t code = d[pos++];
  c->red_op = code < 0 ? -1 : (int32_t)(code >> 8);
  c->red_dtype = code < 0 ? -1 : (int32_t)(code & 0xff);
  if ((c->kind == K_REDUCE_SCATTER || c->kind == K_ALL_TO_ALL) && c->n > 0 && c->dim >= 0 &&
      c->leaves[0].rank > c->dim && c->leaves[0].dims[c->dim] % c->g != 0)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: dimension %lld of size %lld does not split into %lld parts",
                           c->instr, (long long)c->dim, (long long)c->leaves[0].dims[c->dim], (long long)c->g);
  if (c->kind == K_RAGGED_ALL_TO_ALL && (c->n != RAGGED_LEAVES || c->leaves[RAGGED_INPUT_OFFSETS].eb == 0))
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: ragged-all-to-all takes 6 array operands, not %lld", c->instr,
                           (long long)c->n);
  if (c->kind == K_ALL_TO_ALL_TUPLE && c->n != c->g)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: %lld operands for a replica group of %lld", c->instr,
                           (long long)c->n, (long long)c->g);
  return NULL;
}

/* ---- a backend's own primitives ------------------------------------------------------------ */

/* Whether every pair names replicas that exist and no replica is a source or a target twice. */
static bool pairs_simple(const coll *c) {
  for (int64_t p = 0; p < c->n_pairs; p++) {
    for (int k = 0; k < 2; k++)
      if (c->pairs[2 * p + k] < 0 || c->pairs[2 * p + k] >= c->num)
        return false;
    for (int64_t q = 0; q < p; q++)
      if (c->pairs[2 * q] == c->pairs[2 * p] || c->pairs[2 * q + 1] == c->pairs[2 * p + 1])
        return false;
  }
  return true;
}

/* Leaf i as one backend primitive, or false when it is none (a scalar carried through, the
 * in-place permute, an invalid permute left to the exchange path's messages). */
static bool native_leaf(const coll *c, int64_t i, void *const *operands, void *const *results, hlo_coll_native *op,
                        hlo_coll_reducer *red) {
  static const int32_t native_op[] = {[K_ALL_REDUCE] = HLO_COLL_NATIVE_ALL_REDUCE,
                                      [K_ALL_GATHER] = HLO_COLL_NATIVE_ALL_GATHER,
                                      [K_REDUCE_SCATTER] = HLO_COLL_NATIVE_REDUCE_SCATTER,
                                      [K_ALL_TO_ALL] = HLO_COLL_NATIVE_ALL_TO_ALL,
                                      [K_ALL_TO_ALL_TUPLE] = HLO_COLL_NATIVE_SWAP,
                                      [K_PERMUTE] = HLO_COLL_NATIVE_PERMUTE,
                                      [K_BROADCAST] = HLO_COLL_NATIVE_BROADCAST};
  const leaf_info *l = &c->leaves[i];
  bool split = c->kind == K_ALL_GATHER || c->kind == K_REDUCE_SCATTER || c->kind == K_ALL_TO_ALL;
  if (c->kind < 0 || c->kind >= K_PERMUTE_INPLACE ||
      (split && (c->dim < 0 || l->rank <= c->dim)) ||
      (c->kind == K_PERMUTE && !pairs_simple(c)))
    return false;
  *red = (hlo_coll_reducer){c->red_op, c->red_dtype, l->eb, c->reduce, c->ctx};
  *op = (hlo_coll_native){.op = native_op[c->kind],
                          .replica = (int32_t)member(c, c->me),
                          .groups = c->groups,
                          .leaf = i,
                          .send = operands[i],
                          .recv = results[i],
                          .bytes = l->bytes,
                          .outer = split ? outer_of(l, c->dim) : 1,
                          .reducer = red,
                          .pairs = c->pairs,
                          .n_pairs = c->n_pairs,
                          .peer = c->kind == K_ALL_TO_ALL_TUPLE ? (int32_t)member(c, i) : -1};
  return true;
}

/* Hands every leaf to the backend's own primitives when it takes all of them (*done). */
static hlo_status run_native(const coll *c, const hlo_collective_group *g, void *const *operands,
                             void *const *results, bool *done) {
  const hlo_coll_backend *be = g->backend;
  hlo_coll_native op;
  hlo_coll_reducer red;
  *done = false;
  if (!be->native_ok || !be->native_run || c->n < 1)
    return NULL;
  for (int64_t i = 0; i < c->n; i++)
    if (!native_leaf(c, i, operands, results, &op, &red) || !be->native_ok(g->impl, &op))
      return NULL;
  *done = true;
  for (int64_t i = 0; i < c->n; i++) {
    native_leaf(c, i, operands, results, &op, &red);
    HLO_RETURN_IF_ERROR(be->native_run(g->impl, &op)); /* worded as the exchange's failures are */
  }
  return NULL;
}

HLO_RT_EXPORT hlo_status hlo_rt_collective(hlo_context *ctx, const int64_t *desc, const char *instr,
                                           void *const *operands, void *const *results, void *reducer) {
  int32_t me = hlo_rt_replica_id(ctx), num = hlo_rt_num_replicas(ctx);
  coll c = {.ctx = ctx, .instr = instr, .reduce = (hlo_coll_reducer_fn)reducer, .num = num, .own = operands};
  HLO_RETURN_IF_ERROR(describe(&c, desc, me, num));
  hlo_collective_group *g = NULL;
  HLO_RETURN_IF_ERROR(hlo_coll_group_of(ctx, instr, &g));
  if (num == 1) { /* a replica alone: its own leaves are every view */
    c.all = (const void *const *)operands;
    for (int64_t i = 0; i < result_count(&c); i++)
      HLO_RETURN_IF_ERROR(run_leaf(&c, i, results[i]));
    return NULL;
  }
  bool native = false;
  HLO_RETURN_IF_ERROR(run_native(&c, g, operands, results, &native));
  if (native)
    return NULL;
  int64_t bytes[64];
  for (int64_t i = 0; i < c.n; i++) /* ragged-all-to-all's output operand stays here */
    bytes[i] = c.kind == K_RAGGED_ALL_TO_ALL && i == RAGGED_OUTPUT ? 0 : c.leaves[i].bytes;
  const void *const *all = NULL;
  const hlo_coll_backend *be = g->backend;
  if (c.members && be->exchange_in_group)
    HLO_RETURN_IF_ERROR(
        be->exchange_in_group(g->impl, me, c.groups, (int32_t)c.n, (const void *const *)operands, bytes, &all));
  else
    HLO_RETURN_IF_ERROR(be->exchange(g->impl, me, (int32_t)c.n, (const void *const *)operands, bytes, &all));
  c.all = all;
  hlo_status s = NULL;
  for (int64_t i = 0; i < result_count(&c) && !s; i++)
    s = run_leaf(&c, i, results[i]);
  hlo_status r = g->backend->release(g->impl, me);
  if (s) {
    hlo_status_free(r);
    return s;
  }
  return r;
}
