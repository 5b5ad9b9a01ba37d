/* hlo/rt_parallel.h — the context services compiled models call inside libhlort: parallel
 * loops on the context's thread pool, infeed/outfeed, custom-call target resolution and the
 * replica identity.  Like hlo/rt.h, an internal ABI between hloc's code generator and the
 * runtime of the same version, not for application code (that uses hlo/runtime.h).
 * Every function accepts ctx == NULL: one thread, replica 0 of 1, empty feeds, and custom
 * calls resolved in the process's global scope only.  Tests: runtime/src/context_test.c.
 */
#ifndef HLO_RT_PARALLEL_H
#define HLO_RT_PARALLEL_H

#include <stddef.h>
#include <stdint.h>

#include "hlo/abi.h"
#include "hlo/status.h"

#if defined(__GNUC__)
#define HLO_RT_CTX_EXPORT __attribute__((visibility("default")))
#else
#define HLO_RT_CTX_EXPORT
#endif

/* The largest rank a shaped feed buffer records. */
#define HLO_FEED_MAX_RANK 64

/* A loop body: runs iterations [begin, end) of a loop.  Called concurrently from several
 * threads on disjoint ranges; it must not call exit or longjmp. */
typedef void (*hlo_rt_range_fn)(void *arg, int64_t begin, int64_t end);

/* Runs fn over [0, n) split into contiguous ranges on the context's pool; returns when every
 * range is done.  The calling thread takes part.  Runs fn(arg, 0, n) inline when ctx is NULL,
 * the pool has one thread, n < 2, or the pool is already busy (a nested or concurrent loop),
 * so it never deadlocks.  Never fails: if threads cannot be started the loop runs inline. */
HLO_RT_CTX_EXPORT void hlo_rt_parallel_for(hlo_context *ctx, int64_t n, hlo_rt_range_fn fn, void *arg);
/* The number of threads a parallel loop may use (>= 1), e.g. to size per-thread scratch. */
HLO_RT_CTX_EXPORT int32_t hlo_rt_num_threads(hlo_context *ctx);

/* The arena of one model call (hlo/runtime.h): at least `bytes` bytes, 64-byte aligned, owned
 * by the context (or the embedder), or freshly allocated when ctx is NULL.  NULL with *out_status
 * set when it cannot be had.  Release it with hlo_rt_arena_release after the call. */
HLO_RT_CTX_EXPORT void *hlo_rt_arena_acquire(hlo_context *ctx, int64_t bytes, hlo_status *out_status);
HLO_RT_CTX_EXPORT void hlo_rt_arena_release(hlo_context *ctx, void *arena);

/* Infeed: pops the oldest buffer pushed with hlo_infeed_push into dst, which holds nbytes.
 * FAILED_PRECONDITION when the queue is empty (or ctx is NULL) or the sizes differ. */
HLO_RT_CTX_EXPORT hlo_status hlo_rt_infeed(hlo_context *ctx, void *dst, int64_t nbytes);
/* Infeed of one leaf of instruction `instr` (for messages) of element type dtype and dims
 * (rank entries) into dst (nbytes): pops the oldest buffer, checking its shape where it was
 * pushed with one and its size always; waits for a push as the context's infeed_timeout_ms
 * says.  FAILED_PRECONDITION naming the instruction on an empty queue or a mismatch. */
HLO_RT_CTX_EXPORT hlo_status hlo_rt_infeed_leaf(hlo_context *ctx, const char *instr, void *dst, int64_t nbytes,
                                                int32_t dtype, int32_t rank, const int64_t *dims);
/* Outfeed: copies one array (dtype an hlo_dtype, rank <= HLO_FEED_MAX_RANK) to the back of
 * the outfeed queue.  FAILED_PRECONDITION when ctx is NULL. */
HLO_RT_CTX_EXPORT hlo_status hlo_rt_outfeed(hlo_context *ctx, const void *src, int64_t nbytes, int32_t dtype,
                                            int32_t rank, const int64_t *dims);

/* Custom calls: finds `target` in the registered table, then with dlsym in the libraries
 * added to the context (in order), then in the global scope.  The answer is cached per
 * context.  NOT_FOUND names the target and where it looked. */
HLO_RT_CTX_EXPORT hlo_status hlo_rt_custom_call_resolve(hlo_context *ctx, const char *target, void **out_fn);

/* The replica identity the context was created with (0 and 1 for ctx == NULL). */
HLO_RT_CTX_EXPORT int32_t hlo_rt_replica_id(hlo_context *ctx);
HLO_RT_CTX_EXPORT int32_t hlo_rt_num_replicas(hlo_context *ctx);
HLO_RT_CTX_EXPORT int32_t hlo_rt_partition_id(hlo_context *ctx);

#endif /* HLO_RT_PARALLEL_H */
