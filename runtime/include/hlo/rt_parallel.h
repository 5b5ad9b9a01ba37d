/* hlo/rt_parallel.h — the context services of libhlort beside the calls of generated code:
 * the thread count of parallel loops, whole-buffer infeed, custom-call target resolution and
 * the replica count.  The services compiled models call (hlo_rt_parallel_for, the arena, the
 * feeds of one leaf, the replica identity) are rows of hlo/rt_abi.def, declared by hlo/rt.h,
 * which this header includes.  Like hlo/rt.h, an internal ABI between hloc's code generator
 * and the runtime of the same version, not for application code (that uses hlo/runtime.h).
 * Every function accepts ctx == NULL: one thread, replica 0 of 1, empty feeds, and custom
 * calls resolved in the process's global scope only.  Tests: runtime/src/context/context_test.c.
 */
#ifndef HLO_RT_PARALLEL_H
#define HLO_RT_PARALLEL_H

#include <stddef.h>
#include <stdint.h>

#include "hlo/abi.h"
#include "hlo/rt.h"
#include "hlo/status.h"

#if defined(__GNUC__)
#define HLO_RT_CTX_EXPORT __attribute__((visibility("default")))
#else
#define HLO_RT_CTX_EXPORT
#endif

/* The largest rank a shaped feed buffer records. */
#define HLO_FEED_MAX_RANK 64

/* The number of threads a parallel loop may use (>= 1), e.g. to size per-thread scratch. */
HLO_RT_CTX_EXPORT int32_t hlo_rt_num_threads(hlo_context *ctx);

/* Infeed: pops the oldest buffer pushed with hlo_infeed_push into dst, which holds nbytes.
 * FAILED_PRECONDITION when the queue is empty (or ctx is NULL) or the sizes differ. */
HLO_RT_CTX_EXPORT hlo_status hlo_rt_infeed(hlo_context *ctx, void *dst, int64_t nbytes);

/* Custom calls: finds `target` in the registered table, then with dlsym in the libraries
 * added to the context (in order), then in the global scope.  The answer is cached per
 * context.  NOT_FOUND names the target and where it looked. */
HLO_RT_CTX_EXPORT hlo_status hlo_rt_custom_call_resolve(hlo_context *ctx, const char *target, void **out_fn);

/* The replica count the context was created with (1 for ctx == NULL); the replica and
 * partition ids are hlo_rt_replica_id and hlo_rt_partition_id (hlo/rt_abi.def). */
HLO_RT_CTX_EXPORT int32_t hlo_rt_num_replicas(hlo_context *ctx);

#endif /* HLO_RT_PARALLEL_H */
