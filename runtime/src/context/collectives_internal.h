/* collectives_internal.h — the collective layer's backend interface, for runtime/src files.
 * A backend moves bytes between the replicas of one group object; everything above it
 * (collectives.c: replica groups, reductions, all-gather/all-to-all layouts, permutes) is
 * written against this vtable only, so a multi-process backend (MPI, docs/runtime.md) plugs in
 * without touching code generation or collectives.c.  A backend may also run a collective
 * with its own primitives (native_ok / native_run: MPI's all-reduce, reduce-scatter, ...);
 * collectives.c hands it one leaf at a time in a backend-neutral form (hlo_coll_native).
 */
#ifndef HLO_RUNTIME_COLLECTIVES_INTERNAL_H
#define HLO_RUNTIME_COLLECTIVES_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "hlo/runtime.h"

/* The reducer computation of an all-reduce or reduce-scatter: fn(ctx, {a, b}, {result}, NULL)
 * on scalars of eb bytes, and what code generation recognized in it (hlo/rt.h). */
typedef hlo_status (*hlo_coll_reducer_fn)(hlo_context *ctx, void *const *params, void *const *results, void *frame);
typedef struct hlo_coll_reducer {
  int32_t op;    /* HLO_RT_REDUCER_* (hlo/rt.h), or -1: another computation */
  int32_t dtype; /* the element type (hlo_dtype) when op >= 0, else -1 */
  int64_t eb;    /* element bytes */
  hlo_coll_reducer_fn fn;
  hlo_context *ctx;
} hlo_coll_reducer;

/* One leaf of a collective, for a backend's own primitives.  Every replica describes the same
 * leaves in the same order (the same instruction), so a backend's native_ok answers alike on
 * every replica when it looks only at this description and its own settings. */
enum { HLO_COLL_NATIVE_ALL_REDUCE, HLO_COLL_NATIVE_REDUCE_SCATTER, HLO_COLL_NATIVE_ALL_GATHER,
       HLO_COLL_NATIVE_ALL_TO_ALL, HLO_COLL_NATIVE_PERMUTE, HLO_COLL_NATIVE_BROADCAST,
       HLO_COLL_NATIVE_SWAP };
typedef struct hlo_coll_native {
  int32_t op;             /* HLO_COLL_NATIVE_*; SWAP: leaf i of a tuple all-to-all */
  int32_t replica;        /* this replica */
  const int64_t *groups;  /* the description's {n_groups, group_size, members...}; n_groups 0: all */
  int64_t leaf;           /* the leaf's index in the instruction */
  const void *send;       /* this replica's operand leaf (bytes) */
  void *recv;             /* its result leaf: bytes (all-reduce, all-to-all, permute, broadcast),
                           * bytes / group size (reduce-scatter: the group position's block),
                           * bytes * group size (all-gather: the members' leaves in group order) */
  int64_t bytes;
  int64_t outer;          /* all-gather, reduce-scatter, all-to-all: the product of the dimensions
                           * before the gathered / split one; the operand is `outer` rows of
                           * bytes / outer, and so is the result, each row's blocks in group
                           * order (1: one contiguous row; else 1) */
  const hlo_coll_reducer *reducer; /* all-reduce, reduce-scatter */
  const int64_t *pairs;   /* permute: (source, target) replica ids, each replica at most once as
                           * a source and once as a target; a replica no pair targets gets zeros */
  int64_t n_pairs;
  int32_t peer;           /* swap (leaf i of the tuple all-to-all): send this leaf to replica
                           * `peer` (group member i), receive the result from it */
} hlo_coll_native;

typedef struct hlo_coll_backend {
  /* Every replica calls exchange once per collective, in the same order, with its n leaves
   * (bytes[i] each).  On return *out_all[r * n + i] reads replica r's leaf i until release(). */
  hlo_status (*exchange)(void *impl, int32_t replica, int32_t n, const void *const *leaves, const int64_t *bytes,
                         const void *const **out_all);
  /* Ends the collective: after every replica released, the views are dead. */
  hlo_status (*release)(void *impl, int32_t replica);
  /* Point-to-point transfers of send/recv between replicas (runtime/src/context/channels.c), matched
   * by (from, to, tag = channel id) in the order they were started, as MPI matches them.
   * `shape` is the leaf's shape as text ("f32[4]"): a receive whose shape differs from the
   * message's fails at wait with a message naming both.  send_start never waits for the
   * receiver (the bytes are copied or kept until wait); *handle NULL means complete.
   * recv_start fills dst (bytes) before its wait returns.  wait finishes a handle and frees it;
   * it returns CANCELLED when *cancelled becomes non-zero, an error when the group was
   * aborted.  forget frees a handle that will never be waited for. */
  hlo_status (*send_start)(void *impl, int32_t from, int32_t to, int64_t tag, const void *data, int64_t bytes,
                           const char *shape, void **handle);
  hlo_status (*recv_start)(void *impl, int32_t to, int32_t from, int64_t tag, void *dst, int64_t bytes,
                           const char *shape, void **handle);
  hlo_status (*wait)(void *impl, void *handle, const atomic_int *cancelled);
  void (*forget)(void *impl, void *handle);
  void (*abort)(void *impl);
  void (*destroy)(void *impl);
  /* Optional (NULL: exchange is used): the same for a collective with replica groups, given as
   * the description writes them, groups = {n_groups, group_size, members...}; only the views of
   * this replica's group members need be filled.  The MPI backend gathers within the group. */
  hlo_status (*exchange_in_group)(void *impl, int32_t replica, const int64_t *groups, int32_t n,
                                  const void *const *leaves, const int64_t *bytes, const void *const **out_all);
  /* Optional (NULL: exchange for everything): whether the backend runs this leaf's collective
   * with its own primitives (an answer that depends only on *op's description), and running
   * it.  collectives.c asks about every leaf of an instruction first and uses native_run for
   * all of them only when every answer is yes, one leaf after the other in order. */
  bool (*native_ok)(void *impl, const hlo_coll_native *op);
  hlo_status (*native_run)(void *impl, const hlo_coll_native *op);
} hlo_coll_backend;

#define HLO_GROUP_MAGIC 0x48434f4cu /* "HCOL" */

struct hlo_collective_group {
  uint32_t magic, layout_size;
  int32_t num_replicas;
  const hlo_coll_backend *backend;
  void *impl;
};

/* The context's group (collectives.c): NULL for a single replica without one; an error naming
 * instr when the context has several replicas but no group of that size. */
hlo_status hlo_coll_group_of(hlo_context *ctx, const char *instr, hlo_collective_group **out);

/* The in-process backend: replicas are threads of this process (collectives_threads.c). */
hlo_status hlo_coll_threads_create(int32_t num_replicas, const hlo_coll_backend **out_backend, void **out_impl);

#endif
