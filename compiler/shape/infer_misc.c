/* infer_misc.c — shape rules of replica/partition ids, tokens (after-all, add-dependency),
 * the collectives (replica groups, all-reduce, all-gather, reduce-scatter, all-to-all,
 * collective-permute with its pairs, ragged-all-to-all, collective-broadcast and -reduce,
 * the -start/-done forms), infeed/outfeed, send/recv and their -done ops, rng,
 * rng-bit-generator, rng-get-and-update-state and shuffle.  Rules follow the semantics
 * document and XLA's shape_inference.cc.  Tests: testdata/verify/err, shape_test.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape/shape_internal.h"

ir_shape *shape_infer_replica_id(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 0))
    return NULL;
  return ir_shape_scalar(x->m, IR_U32);
}

ir_shape *shape_infer_token(shape_ctx *x, ir_instr *in) {
  char b[256];
  if (in->op == IR_OP_ADD_DEPENDENCY) {
    if (!shape_need_operands(x, in, 2))
      return NULL;
    if (!shape_is_token(shape_operand(in, 1)))
      return shape_fail(x, in, "add-dependency's second operand must be a token, not %s",
                        shape_kind_str(shape_operand(in, 1), b, sizeof b));
    return ir_shape_clone(x->m, shape_operand(in, 0));
  }
  /* XLA's parser and verifier take operands of any type (HloVerifier checks only that the
   * result is a token): the token is ordered after them. */
  return ir_shape_scalar(x->m, IR_TOKEN);
}

/* ---- replica groups ------------------------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Every id appears once over all groups and is below the device count when the header gives
 * one.  Returns false after a diagnostic. */
static bool replica_ids_ok(shape_ctx *x, ir_instr *in, const ir_replica_groups *g) {
  int64_t total = 0, bound = 0;
  for (int i = 0; i < g->n_groups; i++)
    total += g->groups[i].n;
  if (x->m->replica_count > 0)
    bound = x->m->replica_count * (x->m->num_partitions > 0 ? x->m->num_partitions : 1);
  int64_t *ids = malloc((size_t)(total ? total : 1) * sizeof(int64_t));
  if (!ids)
    return shape_error(x, in, "out of memory");
  int64_t n = 0;
  for (int i = 0; i < g->n_groups; i++)
    for (int k = 0; k < g->groups[i].n; k++)
      ids[n++] = g->groups[i].v[k];
  qsort(ids, (size_t)n, sizeof(int64_t), cmp_i64);
  int64_t bad = -1;
  for (int64_t i = 0; i < n && bad < 0; i++)
    if (ids[i] < 0 || (bound && ids[i] >= bound) || (i && ids[i] == ids[i - 1]))
      bad = i;
  int64_t bad_id = bad >= 0 ? ids[bad] : 0;
  free(ids);
  if (bad >= 0)
    return shape_error(x, in, "replica id %lld appears twice or is out of range in replica_groups", (long long)bad_id);
  return true;
}

/* The participant count of one group: the groups' common size, else the replica count.
 * `same_size` requires every group to have the same size.  -1 after a diagnostic. */
static int64_t group_size(shape_ctx *x, ir_instr *in, bool same_size) {
  const ir_replica_groups *g = &in->attrs.u.collective.replica_groups;
  if (!replica_ids_ok(x, in, g))
    return -1;
  for (int i = 1; i < g->n_groups && same_size; i++)
    if (g->groups[i].n != g->groups[0].n)
      return shape_error(x, in, "replica groups must all have the same size, but group %d has %d ids and group 0 "
                         "has %d", i, g->groups[i].n, g->groups[0].n), -1;
  if (g->n_groups && g->groups[0].n)
    return g->groups[0].n;
  return x->m->replica_count > 0 ? x->m->replica_count : 1;
}

/* ---- collectives ------------------------------------------------------------------------- */

/* to_apply of all-reduce and friends: (T, T) -> T for the element type of every operand. */
static bool collective_reducer_ok(shape_ctx *x, ir_instr *in, int n) {
  if (!shape_need_called(x, in, 1, "to_apply"))
    return false;
  for (int i = 0; i < n; i++) {
    ir_etype et[1] = {shape_operand(in, i)->et};
    if (!shape_check_reducer(x, in, in->called[0], et, 1, "reduction computation"))
      return false;
  }
  return true;
}

/* All operands arrays; returns their count or 0 after a diagnostic. */
static int array_operands(shape_ctx *x, ir_instr *in) {
  if (!shape_need_min_operands(x, in, 1))
    return 0;
  if (in->attrs.u.collective.inplace) /* tuples of slices and of start indices */
    return in->n_operands;
  for (int i = 0; i < in->n_operands; i++)
    if (!shape_need_array(x, in, i))
      return 0;
  return in->n_operands;
}

/* all-gather multiplies, reduce-scatter divides dimensions={d} by the group size. */
static ir_shape *gather_or_scatter(shape_ctx *x, ir_instr *in, int n, int64_t gs, bool gather) {
  const ir_i64_list *dl = &in->attrs.dimensions;
  ir_shape *out[SHAPE_MAX_OPERANDS];
  for (int i = 0; i < n; i++) {
    const ir_shape *s = shape_operand(in, i);
    /* A scalar element of a tuple (PyTorch/XLA writes them) is carried along unchanged. */
    if (n > 1 && s->rank == 0 && dl->n == 1 && dl->v[0] >= 0) {
      out[i] = ir_shape_clone(x->m, s);
      continue;
    }
    if (dl->n != 1 || dl->v[0] < 0 || dl->v[0] >= s->rank)
      return shape_fail(x, in, "needs one dimension in [0, %d)", s->rank);
    int64_t d = dl->v[0];
    ir_shape *r = ir_shape_clone(x->m, s);
    if (!r)
      return NULL;
    if (gather && __builtin_mul_overflow(r->dims[d], gs, &r->dims[d]))
      return shape_fail(x, in, "gathered dimension %lld overflows", (long long)d);
    if (!gather && r->dims[d] % gs)
      return shape_fail(x, in, "dimension %lld (size %lld) is not divisible by the group size %lld", (long long)d,
                        (long long)r->dims[d], (long long)gs);
    if (!gather)
      r->dims[d] /= gs;
    out[i] = r;
  }
  return n == 1 ? out[0] : shape_tuple_of(x, out, n);
}

static ir_shape *infer_all_to_all(shape_ctx *x, ir_instr *in, int n, int64_t gs) {
  const ir_i64_list *dl = &in->attrs.dimensions;
  char a[256], b[256];
  if (dl->n > 1)
    return shape_fail(x, in, "all-to-all takes at most one dimension, not %d", dl->n);
  if (dl->n == 1) {
    const ir_shape *s = shape_operand(in, 0);
    if (n != 1)
      return shape_fail(x, in, "an all-to-all with dimensions={...} takes one operand, not %d", n);
    if (dl->v[0] < 0 || dl->v[0] >= s->rank)
      return shape_fail(x, in, "split dimension %lld is out of range for rank %d", (long long)dl->v[0], s->rank);
    if (s->dims[dl->v[0]] % gs)
      return shape_fail(x, in, "split dimension %lld (size %lld) is not divisible by the group size %lld",
                        (long long)dl->v[0], (long long)s->dims[dl->v[0]], (long long)gs);
    return ir_shape_clone(x->m, s);
  }
  /* A tuple all-to-all sends operand k to the group's k-th member: one operand per member. */
  if (in->attrs.u.collective.replica_groups.n_groups > 0 && gs > 0 && n != gs)
    return shape_fail(x, in, "an all-to-all without dimensions takes one operand per group member (%lld), not %d",
                      (long long)gs, n);
  for (int i = 1; i < n; i++)
    if (!shape_compatible(shape_operand(in, i), shape_operand(in, 0)))
      return shape_fail(x, in, "all-to-all operand %d %s must have the shape of operand 0 %s", i,
                        shape_str(shape_operand(in, i), a, sizeof a), shape_str(shape_operand(in, 0), b, sizeof b));
  /* Without dimensions XLA's result is the tuple of the operands, a 1-tuple for one operand;
   * the bare array is accepted too. */
  const ir_shape *w = in->shape;
  if (n == 1 && w && w->et == IR_TUPLE && w->n_elems == 1 && shape_compatible(w->elems[0], shape_operand(in, 0)))
    return NULL;
  return shape_operands_collated(x, in, 0, n);
}

/* Replica ids are >= 0, and each replica is a source at most `times` times and a target at
 * most `times` times: once, or in the in-place form with K start-index sets K times (XLA's
 * verifier, CheckDuplicatedSourceOrTarget). */
static bool permute_pairs_ok(shape_ctx *x, ir_instr *in, int times) {
  const typeof(in->attrs.u.collective) *c = &in->attrs.u.collective;
  /* Ids name replicas (no channel_id) or partitions: below the module's count when it says. */
  int64_t limit = in->attrs.channel_id ? x->m->num_partitions : x->m->replica_count;
  for (int i = 0; i < c->n_source_target_pairs && limit > 1; i++)
    for (int k = 0; k < c->source_target_pairs[i].n; k++)
      if (c->source_target_pairs[i].v[k] >= limit)
        return shape_error(x, in, "source_target_pairs: %s %lld is not below the %s count %lld", k ? "target" : "source",
                           (long long)c->source_target_pairs[i].v[k], in->attrs.channel_id ? "partition" : "replica",
                           (long long)limit);
  for (int i = 0; i < c->n_source_target_pairs; i++) {
    const ir_i64_list *p = &c->source_target_pairs[i];
    if (p->n != 2 || p->v[0] < 0 || p->v[1] < 0)
      return shape_error(x, in, "source_target_pairs: replica ids must be >= 0");
    int as_source = 0, as_target = 0;
    for (int k = 0; k < i; k++) {
      as_source += c->source_target_pairs[k].v[0] == p->v[0];
      as_target += c->source_target_pairs[k].v[1] == p->v[1];
    }
    if (as_source >= times || as_target >= times) {
      if (times == 1)
        return shape_error(x, in, "source_target_pairs: each replica may be a source once and a target once");
      return shape_error(x, in, "source_target_pairs: %s %lld appears more than %d times", as_source >= times ? "source"
                         : "target", (long long)(as_source >= times ? p->v[0] : p->v[1]), times);
    }
  }
  return true;
}

/* The -start's (input, output[, context...]) tuple: the written one when it has that form
 * (newer XLA writes only (input, output); any scalar context elements are accepted), else
 * (input, output, u32[], u32[]). */
static ir_shape *permute_start_shape(shape_ctx *x, ir_instr *in, ir_shape *input, ir_shape *output) {
  ir_shape *e[4] = {input, output, ir_shape_scalar(x->m, IR_U32), ir_shape_scalar(x->m, IR_U32)};
  const ir_shape *w = in->shape;
  if (w && w->et == IR_TUPLE && w->n_elems >= 2 && w->n_elems <= 4) {
    bool ok = shape_compatible(w->elems[0], e[0]) && shape_compatible(w->elems[1], e[1]);
    for (int i = 2; ok && i < w->n_elems; i++)
      ok = shape_is_array(w->elems[i]) && w->elems[i]->rank == 0;
    if (ok)
      return NULL;
  }
  return shape_tuple_of(x, e, 4);
}

/* collective-permute(x) -> x; collective-permute(x1, ..., xn) -> (x1, ..., xn).  The -start
 * form returns (operand, operand[, context...]) with the operands as one tuple when n > 1. */
static ir_shape *infer_permute(shape_ctx *x, ir_instr *in, int n) {
  if (!permute_pairs_ok(x, in, 1))
    return NULL;
  if (in->op == IR_OP_COLLECTIVE_PERMUTE)
    return shape_operands_collated(x, in, 0, n);
  return permute_start_shape(x, in, shape_operands_collated(x, in, 0, n), shape_operands_collated(x, in, 0, n));
}

/* One buffer's start indices in the in-place form: a tuple of `rank` integer scalars (one
 * start for every pair) or a tuple of such tuples, one per source-target pair (pair p uses
 * tuple p).  Returns the number of per-pair tuples (0: one shared start), -1 after a
 * diagnostic. */
static int permute_starts(shape_ctx *x, ir_instr *in, const ir_shape *s, int buffer, int rank, const char *what) {
  char a[256];
  int n_pairs = in->attrs.u.collective.n_source_target_pairs;
  if (s->et != IR_TUPLE)
    return shape_error(x, in, "the %s start indices of buffer %d must be a tuple, not %s", what, buffer,
                       shape_kind_str(s, a, sizeof a)), -1;
  bool per_pair = s->n_elems > 0 && s->elems[0]->et == IR_TUPLE;
  (void)n_pairs; /* K tuples: one per pair, or K sets each replica reads or writes through (XLA's
                  * multiple read/write form, where a replica may appear K times) */
  for (int p = 0; p < (per_pair ? s->n_elems : 1); p++) {
    const ir_shape *t = per_pair ? s->elems[p] : s;
    if (t->et != IR_TUPLE || t->n_elems != rank)
      return shape_error(x, in, "the %s start indices of buffer %d must be %d integer scalars (its rank), not %s",
                         what, buffer, rank, shape_kind_str(t, a, sizeof a)), -1;
    for (int k = 0; k < rank; k++)
      if (!shape_is_array(t->elems[k]) || t->elems[k]->rank != 0 || !ir_etype_is_int(t->elems[k]->et))
        return shape_error(x, in, "the %s start indices of buffer %d must be %d integer scalars (its rank), not %s",
                           what, buffer, rank, shape_kind_str(t, a, sizeof a)), -1;
  }
  return per_pair ? s->n_elems : 0;
}

/* One list of slice_sizes against buffer b's input and output. */
static bool slice_sizes_fit(shape_ctx *x, ir_instr *in, int b, const ir_i64_list *ss, const ir_shape *ip,
                            const ir_shape *op) {
  char a[256], c[256];
  if (ss->n != ip->rank)
    return shape_error(x, in, "slice_sizes of buffer %d has %d sizes for rank %d", b, ss->n, ip->rank);
  for (int k = 0; k < ss->n; k++)
    if (ss->v[k] < 0 || ss->v[k] > ip->dims[k] || ss->v[k] > op->dims[k])
      return shape_error(x, in, "slice size %lld in dimension %d of buffer %d does not fit the input %s and output %s",
                         (long long)ss->v[k], k, b, shape_str(ip, a, sizeof a), shape_str(op, c, sizeof c));
  return true;
}

/* One buffer of the in-place form: input and output arrays of one element type and rank, and
 * its start indices.  Returns the per-pair tuple count (permute_starts), -1 after a
 * diagnostic. */
static int permute_buffer_ok(shape_ctx *x, ir_instr *in, int b, const ir_shape *ip, const ir_shape *op,
                             const ir_shape *in_starts, const ir_shape *out_starts) {
  char a[256], c[256];
  if (!shape_is_array(ip) || !shape_is_array(op) || ip->et != op->et || ip->rank != op->rank)
    return shape_error(x, in, "buffer %d: the input %s and output %s must be arrays of one element type and rank", b,
                       shape_kind_str(ip, a, sizeof a), shape_kind_str(op, c, sizeof c)), -1;
  int ni = permute_starts(x, in, in_starts, b, ip->rank, "input");
  int no = ni < 0 ? -1 : permute_starts(x, in, out_starts, b, op->rank, "output");
  return no < 0 ? -1 : (ni > no ? ni : no);
}

/* collective-permute(input, output, input_start_indices, output_start_indices),
 * slice_sizes={...}: input and output are arrays or tuples of as many arrays (buffers), the
 * start indices one entry per buffer when they are tuples.  Result: output's shape; the
 * -start form returns (input, output[, context...]). */
static ir_shape *infer_permute_inplace(shape_ctx *x, ir_instr *in) {
  if (in->n_operands != 4)
    return shape_fail(x, in, "the in-place form (slice_sizes written) takes 4 operands (input, output, input and "
                      "output start indices), not %d", in->n_operands);
  const ir_shape *ip = shape_operand(in, 0), *op = shape_operand(in, 1);
  const ir_shape *is = shape_operand(in, 2), *os = shape_operand(in, 3);
  char a[256], c[256];
  bool tup = ip->et == IR_TUPLE;
  int nb = tup ? ip->n_elems : 1;
  if (tup != (op->et == IR_TUPLE) || (tup && op->n_elems != nb))
    return shape_fail(x, in, "the input %s and output %s must both be arrays or tuples of as many arrays",
                      shape_kind_str(ip, a, sizeof a), shape_kind_str(op, c, sizeof c));
  if (tup && (is->et != IR_TUPLE || is->n_elems != nb || os->et != IR_TUPLE || os->n_elems != nb))
    return shape_fail(x, in, "the start indices must be tuples of %d entries, one per buffer", nb);
  int per_pair = 0;
  for (int b = 0; b < nb; b++) {
    int n = permute_buffer_ok(x, in, b, tup ? ip->elems[b] : ip, tup ? op->elems[b] : op, tup ? is->elems[b] : is,
                              tup ? os->elems[b] : os);
    if (n < 0)
      return NULL;
    per_pair = n > per_pair ? n : per_pair;
  }
  /* slice_sizes: one list per buffer, or one per buffer and start-index set (XLA's multiple
   * read/write form writes {{1,8,128},{1,8,128}} for one buffer read through two sets). */
  int ns = in->attrs.u.collective.n_slice_sizes, sets = per_pair > 0 ? per_pair : 1;
  if (ns != nb && ns != nb * sets)
    return shape_fail(x, in, "slice_sizes has %d lists but there %s %d buffer%s%s", ns, nb == 1 ? "is" : "are", nb,
                      nb == 1 ? "" : "s", sets > 1 ? " read through as many start-index sets" : "");
  for (int k = 0; k < ns; k++) {
    int b = ns == nb ? k : k / sets;
    if (!slice_sizes_fit(x, in, b, &in->attrs.u.collective.slice_sizes[k], tup ? ip->elems[b] : ip,
                         tup ? op->elems[b] : op))
      return NULL;
  }
  int n_pairs = in->attrs.u.collective.n_source_target_pairs;
  if (!permute_pairs_ok(x, in, per_pair == 0 ? 1 : per_pair == n_pairs ? n_pairs : per_pair))
    return NULL;
  if (in->op == IR_OP_COLLECTIVE_PERMUTE)
    return ir_shape_clone(x->m, op);
  return permute_start_shape(x, in, ir_shape_clone(x->m, ip), ir_shape_clone(x->m, op));
}

/* ragged-all-to-all(input, output, input_offsets, send_sizes, output_offsets, recv_sizes). */
static ir_shape *infer_ragged_all_to_all(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 6))
    return NULL;
  const ir_shape *ip = shape_operand(in, 0), *op = shape_operand(in, 1), *o0 = shape_operand(in, 2);
  char a[256];
  if (ip->et != op->et || ip->rank != op->rank)
    return shape_fail(x, in, "the input and output must have one element type and rank");
  for (int i = 2; i < 6; i++)
    if (!ir_etype_is_int(shape_operand(in, i)->et) || !shape_compatible(shape_operand(in, i), o0))
      return shape_fail(x, in, "offset and size operand %d must be an integer array shaped like operand 2, not %s", i,
                        shape_str(shape_operand(in, i), a, sizeof a));
  return ir_shape_clone(x->m, op);
}

/* With no replica groups and no replica_count the group size is unknown: a written
 * all-gather / reduce-scatter shape is taken when it differs from the operand only in the
 * gathered (scattered) dimension, by a whole factor, as XLA's parser takes it. */
static bool written_gather_shape_ok(shape_ctx *x, const ir_instr *in, int n, const ir_shape *w) {
  const ir_replica_groups *g = &in->attrs.u.collective.replica_groups;
  if (x->m->replica_count > 0 || (g->n_groups && g->groups[0].n) || !w || in->attrs.dimensions.n != 1)
    return false;
  bool gather = in->op != IR_OP_REDUCE_SCATTER;
  int64_t d = in->attrs.dimensions.v[0];
  for (int i = 0; i < n; i++) {
    const ir_shape *o = shape_operand(in, i), *r = n == 1 ? w : (w->et == IR_TUPLE && i < w->n_elems ? w->elems[i] : NULL);
    if (!r || r->et != o->et || r->rank != o->rank)
      return false;
    for (int k = 0; k < o->rank; k++) {
      int64_t a = gather ? r->dims[k] : o->dims[k], b = gather ? o->dims[k] : r->dims[k];
      if (k == d ? (b == 0 || a % b != 0) : a != b)
        return false;
    }
  }
  return true;
}

ir_shape *shape_infer_collective(shape_ctx *x, ir_instr *in) {
  if ((in->op == IR_OP_COLLECTIVE_PERMUTE || in->op == IR_OP_COLLECTIVE_PERMUTE_START) &&
      in->attrs.u.collective.inplace)
    return infer_permute_inplace(x, in);
  int n = array_operands(x, in);
  if (!n)
    return NULL;
  bool same = in->op == IR_OP_ALL_GATHER || in->op == IR_OP_ALL_GATHER_START || in->op == IR_OP_REDUCE_SCATTER ||
              in->op == IR_OP_ALL_TO_ALL;
  int64_t gs = group_size(x, in, same);
  if (gs < 0)
    return NULL;
  switch (in->op) {
  case IR_OP_ALL_REDUCE:
  case IR_OP_ALL_REDUCE_START:
  case IR_OP_COLLECTIVE_REDUCE:
    return collective_reducer_ok(x, in, n) ? shape_operands_collated(x, in, 0, n) : NULL;
  case IR_OP_REDUCE_SCATTER:
    if (!collective_reducer_ok(x, in, n))
      return NULL;
    return written_gather_shape_ok(x, in, n, in->shape) ? NULL : gather_or_scatter(x, in, n, gs, false);
  case IR_OP_ALL_GATHER:
    return written_gather_shape_ok(x, in, n, in->shape) ? NULL : gather_or_scatter(x, in, n, gs, true);
  case IR_OP_ALL_GATHER_START: {
    const ir_shape *w = in->shape; /* (operands, gathered) with the group size unknown: as written */
    if (w && w->et == IR_TUPLE && w->n_elems == 2 && written_gather_shape_ok(x, in, n, w->elems[1])) {
      ir_shape *ops = shape_operands_collated(x, in, 0, n);
      if (ops && shape_compatible(w->elems[0], ops))
        return NULL;
    }
    ir_shape *e[2] = {shape_operands_collated(x, in, 0, n), gather_or_scatter(x, in, n, gs, true)};
    if (!e[0] || !e[1])
      return NULL;
    /* Leniency (not under --strict): the gathered value written alone, without the
     * (input, output) tuple XLA gives the start op; all-gather-done then forwards it. */
    if (!x->opts->strict && in->shape && in->shape->et != IR_TUPLE && shape_compatible(in->shape, e[1]))
      return NULL;
    return shape_tuple_of(x, e, 2);
  }
  case IR_OP_ALL_TO_ALL:
    return infer_all_to_all(x, in, n, gs);
  case IR_OP_RAGGED_ALL_TO_ALL:
    return infer_ragged_all_to_all(x, in);
  case IR_OP_COLLECTIVE_BROADCAST:
    /* has_dynamic_root=true: the last operand names the root at run time; the result is the
     * data operands' (XLA's verifier checks no more of the root operand). */
    if (in->attrs.u.collective.has_dynamic_root == 1) {
      if (n < 2)
        return shape_fail(x, in, "collective-broadcast with has_dynamic_root=true takes the data operands and the "
                          "root, not %d operand%s", n, n == 1 ? "" : "s");
      return shape_operands_collated(x, in, 0, n - 1);
    }
    return shape_operands_collated(x, in, 0, n);
  case IR_OP_COLLECTIVE_PERMUTE:
  case IR_OP_COLLECTIVE_PERMUTE_START:
    return infer_permute(x, in, n);
  default:
    return shape_fail(x, in, "'%s' is not a collective", ir_opcode_table[in->op].spelling);
  }
}

/* all-gather-done and collective-permute-done: element 1 of the start's tuple;
 * all-reduce-done: the start's value. */
ir_shape *shape_infer_async_done(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 1))
    return NULL;
  const ir_shape *s = shape_operand(in, 0);
  if (in->op == IR_OP_ALL_REDUCE_DONE)
    return ir_shape_clone(x->m, s);
  if (in->op == IR_OP_ALL_GATHER_DONE && !x->opts->strict && shape_is_array(s))
    return ir_shape_clone(x->m, s); /* the lenient array form of all-gather-start */
  char a[256];
  if (s->et != IR_TUPLE || s->n_elems < 2)
    return shape_fail(x, in, "'%s' takes the tuple of its -start op, not %s", ir_opcode_table[in->op].spelling,
                      shape_kind_str(s, a, sizeof a));
  return ir_shape_clone(x->m, s->elems[1]);
}

/* ---- host transfer and channels ----------------------------------------------------------- */

ir_shape *shape_infer_infeed(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 1))
    return NULL;
  char a[256];
  if (!shape_is_token(shape_operand(in, 0)))
    return shape_fail(x, in, "infeed takes one token operand, not %s", shape_kind_str(shape_operand(in, 0), a, sizeof a));
  const ir_shape *r = in->shape;
  if (r && (r->et != IR_TUPLE || r->n_elems != 2 || !shape_is_token(r->elems[1])))
    return shape_fail(x, in, "the result of infeed must be a (data, token) tuple");
  return NULL; /* the data shape is as written */
}

ir_shape *shape_infer_outfeed(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 2))
    return NULL;
  char a[256], b[256];
  if (!shape_is_token(shape_operand(in, 1)))
    return shape_fail(x, in, "outfeed's second operand must be a token, not %s",
                      shape_kind_str(shape_operand(in, 1), a, sizeof a));
  const ir_shape *os = in->attrs.u.outfeed.outfeed_shape;
  if (os && !shape_compatible(os, shape_operand(in, 0)))
    return shape_fail(x, in, "outfeed_shape differs from the shape of the data (%s vs %s)", shape_str(os, a, sizeof a),
                      shape_str(shape_operand(in, 0), b, sizeof b));
  return ir_shape_scalar(x->m, IR_TOKEN);
}

/* A channel context: (data, u32[] request id, token). */
static bool channel_context_ok(shape_ctx *x, ir_instr *in, const ir_shape *s, const char *what) {
  char a[256];
  if (s && s->et == IR_TUPLE && s->n_elems == 3 && shape_is_scalar_of(s->elems[1], IR_U32) &&
      shape_is_token(s->elems[2]))
    return true;
  return shape_error(x, in, "%s must be a (data, u32[], token) tuple, not %s", what, shape_kind_str(s, a, sizeof a));
}

ir_shape *shape_infer_send(shape_ctx *x, ir_instr *in) {
  ir_module *m = x->m;
  char a[256];
  if (in->op == IR_OP_SEND_DONE) {
    if (!shape_need_operands(x, in, 1) || !channel_context_ok(x, in, shape_operand(in, 0), "send-done's operand"))
      return NULL;
    return ir_shape_scalar(m, IR_TOKEN);
  }
  if (!shape_need_operands(x, in, 2))
    return NULL;
  if (!shape_is_token(shape_operand(in, 1)))
    return shape_fail(x, in, "send's second operand must be a token, not %s",
                      shape_kind_str(shape_operand(in, 1), a, sizeof a));
  ir_shape *e[3] = {ir_shape_clone(m, shape_operand(in, 0)), ir_shape_scalar(m, IR_U32), ir_shape_scalar(m, IR_TOKEN)};
  return shape_tuple_of(x, e, 3);
}

ir_shape *shape_infer_recv(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 1))
    return NULL;
  const ir_shape *s = shape_operand(in, 0);
  char a[256];
  if (in->op == IR_OP_RECV) {
    if (!shape_is_token(s))
      return shape_fail(x, in, "recv takes a token, not %s", shape_kind_str(s, a, sizeof a));
    if (in->shape && !channel_context_ok(x, in, in->shape, "the result of recv"))
      return NULL;
    return NULL; /* the received data shape is as written */
  }
  if (!channel_context_ok(x, in, s, "recv-done's operand"))
    return NULL;
  ir_shape *e[2] = {ir_shape_clone(x->m, s->elems[0]), ir_shape_scalar(x->m, IR_TOKEN)};
  return shape_tuple_of(x, e, 2);
}

/* ---- random numbers ------------------------------------------------------------------------ */

ir_shape *shape_infer_rng(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 2))
    return NULL;
  const ir_shape *a = shape_operand(in, 0), *b = shape_operand(in, 1), *r = in->shape;
  if (!shape_is_array(a) || !shape_is_array(b) || a->rank || b->rank || a->et != b->et)
    return shape_fail(x, in, "rng takes two scalars of one element type");
  if (r && (!shape_is_array(r) || r->et != a->et))
    return shape_fail(x, in, "rng's result must be an array of its parameters' type %s", shape_et_name(a->et));
  if (in->attrs.u.rng.distribution == IR_RNG_NORMAL && !ir_etype_is_float(a->et))
    return shape_fail(x, in, "rng_normal needs floating-point parameters, not %s", shape_et_name(a->et));
  if (ir_etype_is_complex(a->et))
    return shape_fail(x, in, "rng_uniform needs pred, integer or floating-point parameters, not %s",
                      shape_et_name(a->et));
  return NULL; /* the shape is as written */
}

ir_shape *shape_infer_rng_bit_generator(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 1))
    return NULL;
  const ir_shape *st = shape_operand(in, 0), *r = in->shape;
  char a[256];
  if (!shape_is_array(st) || st->rank != 1 || (st->et != IR_U64 && st->et != IR_U32))
    return shape_fail(x, in, "rng-bit-generator's state must be a u64 (or u32) vector, not %s",
                      shape_kind_str(st, a, sizeof a));
  if (r && (r->et != IR_TUPLE || r->n_elems != 2 || !shape_compatible(r->elems[0], st)))
    return shape_fail(x, in, "rng-bit-generator returns (state, data) with the state's shape first");
  if (r && (!shape_is_array(r->elems[1]) || ir_etype_table[r->elems[1]->et].cls != IR_ETC_UNSIGNED))
    return shape_fail(x, in, "rng-bit-generator's data must be unsigned integers, not %s",
                      shape_kind_str(r->elems[1], a, sizeof a));
  return NULL; /* the data shape is as written */
}

ir_shape *shape_infer_rng_state(shape_ctx *x, ir_instr *in) {
  if (!shape_need_operands(x, in, 0))
    return NULL;
  int64_t two = 2;
  return shape_array(x, IR_U64, 1, &two);
}

/* shuffle: no inference rule in XLA's documents; the written shape is the result. */
ir_shape *shape_infer_misc(shape_ctx *x, ir_instr *in) {
  (void)shape_need_min_operands(x, in, 1);
  return NULL;
}
