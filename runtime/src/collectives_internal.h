/* collectives_internal.h — the collective layer's backend interface, for runtime/src files.
 * A backend moves bytes between the replicas of one group object; everything above it
 * (collectives.c: replica groups, reductions, all-gather/all-to-all layouts, permutes) is
 * written against this vtable only, so a multi-process backend (MPI, docs/runtime.md) plugs in
 * without touching code generation or collectives.c.
 */
#ifndef HLO_RUNTIME_COLLECTIVES_INTERNAL_H
#define HLO_RUNTIME_COLLECTIVES_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>

#include "hlo/runtime.h"

typedef struct hlo_coll_backend {
  /* Every replica calls exchange once per collective, in the same order, with its n leaves
   * (bytes[i] each).  On return *out_all[r * n + i] reads replica r's leaf i until release(). */
  hlo_status (*exchange)(void *impl, int32_t replica, int32_t n, const void *const *leaves, const int64_t *bytes,
                         const void *const **out_all);
  /* Ends the collective: after every replica released, the views are dead. */
  hlo_status (*release)(void *impl, int32_t replica);
  /* Point-to-point transfers of send/recv between replicas (runtime/src/channels.c), matched
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
