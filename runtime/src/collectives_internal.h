/* collectives_internal.h — the collective layer's backend interface, for runtime/src files.
 * A backend moves bytes between the replicas of one group object; everything above it
 * (collectives.c: replica groups, reductions, all-gather/all-to-all layouts, permutes) is
 * written against this vtable only, so a multi-process backend (MPI, docs/runtime.md) plugs in
 * without touching code generation or collectives.c.
 */
#ifndef HLO_RUNTIME_COLLECTIVES_INTERNAL_H
#define HLO_RUNTIME_COLLECTIVES_INTERNAL_H

#include <stdint.h>

#include "hlo/runtime.h"

typedef struct hlo_coll_backend {
  /* Every replica calls exchange once per collective, in the same order, with its n leaves
   * (bytes[i] each).  On return *out_all[r * n + i] reads replica r's leaf i until release(). */
  hlo_status (*exchange)(void *impl, int32_t replica, int32_t n, const void *const *leaves, const int64_t *bytes,
                         const void *const **out_all);
  /* Ends the collective: after every replica released, the views are dead. */
  hlo_status (*release)(void *impl, int32_t replica);
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

/* The in-process backend: replicas are threads of this process (collectives_threads.c). */
hlo_status hlo_coll_threads_create(int32_t num_replicas, const hlo_coll_backend **out_backend, void **out_impl);

#endif
