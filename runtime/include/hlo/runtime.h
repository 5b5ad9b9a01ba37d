/* hlo/runtime.h — the public API of libhlort for programs that run compiled models.
 *
 * A context carries every runtime service a model can reach: the thread pool, infeed and
 * outfeed queues, the Send/Recv channel table, the custom-call resolver, and the replica
 * identity for collectives.  Create one per replica (or none: models accept ctx == NULL).
 * Thread-compatible: one model call at a time per context; queues are thread-safe.
 */
#ifndef HLO_RUNTIME_H
#define HLO_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "hlo/abi.h"
#include "hlo/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The replicas that run one program together: collectives exchange data through it.  Make
 * one for N replicas, give it to each replica's context (hlo_context_options.group), run the
 * replicas concurrently (one thread each), destroy it after every context.  Thread-safe. */
typedef struct hlo_collective_group hlo_collective_group;
HLO_MUST_USE hlo_status hlo_collective_group_create(int32_t num_replicas, hlo_collective_group **out_group);
/* Makes every replica waiting in (or later entering) a collective fail instead of waiting for
 * a replica that stopped: call it when one replica's run returns an error. */
void hlo_collective_group_abort(hlo_collective_group *group);
void hlo_collective_group_destroy(hlo_collective_group *group);

typedef struct hlo_context_options {
  uint32_t struct_size;  /* sizeof(hlo_context_options) */
  int32_t num_threads;   /* 0: one per online CPU; 1: run on the calling thread only */
  int32_t replica_id;
  int32_t num_replicas;  /* 0 or 1: a single replica */
  int32_t partition_id;
  /* An infeed (or host recv) that finds its queue empty: 0 fails at once (the message names
   * the instruction); > 0 waits up to this many milliseconds for a push; < 0 waits without
   * limit. */
  int32_t infeed_timeout_ms;
  hlo_collective_group *group; /* required when num_replicas > 1 and the model has collectives */
} hlo_context_options;

void hlo_context_options_init(hlo_context_options *o);
HLO_MUST_USE hlo_status hlo_context_create(const hlo_context_options *opts, hlo_context **out_ctx);
void hlo_context_destroy(hlo_context *ctx);

/* Cancellation (thread-safe; runtime/src/context/cancel.c).  hlo_context_cancel may be called from
 * any thread: a model call running on ctx returns an HLO_CANCELLED status at its next while-
 * loop back-edge, after freeing the buffers it allocated, and so does every later call until
 * hlo_context_reset_cancel.  Straight-line code between back-edges is not interrupted.
 * hlo_context_is_cancelled says whether the flag is set. */
void hlo_context_cancel(hlo_context *ctx);
void hlo_context_reset_cancel(hlo_context *ctx);
int hlo_context_is_cancelled(hlo_context *ctx);

/* Infeed: the runtime copies `nbytes` from data; the model's next infeed of that size pops it. */
HLO_MUST_USE hlo_status hlo_infeed_push(hlo_context *ctx, const void *data, size_t nbytes);
/* Infeed with a shape: the model's next infeed checks it against the instruction's leaf
 * (dtype an hlo_dtype or -1 for any; rank -1 for any; dims holds rank entries). */
HLO_MUST_USE hlo_status hlo_infeed_push_array(hlo_context *ctx, const void *data, size_t nbytes, int32_t dtype,
                                              int32_t rank, const int64_t *dims);
/* Outfeed: pops the oldest buffer the model sent; the caller owns *out_data (free()). */
HLO_MUST_USE hlo_status hlo_outfeed_pop(hlo_context *ctx, void **out_data, size_t *out_nbytes);
size_t hlo_outfeed_count(hlo_context *ctx);
/* Like hlo_outfeed_pop, also giving the element type (an hlo_dtype) and the dimensions the
 * model sent; out_dims holds 64 entries.  *out_dtype is -1 when the buffer has no shape. */
HLO_MUST_USE hlo_status hlo_outfeed_pop_array(hlo_context *ctx, void **out_data, size_t *out_nbytes,
                                              int32_t *out_dtype, int32_t *out_rank, int64_t *out_dims);

/* Send/Recv host transfers: a send or recv with is_host_transfer=true talks to the host on its
 * channel_id.  A send hands each array leaf of its operand (tuples depth-first) to the
 * channel's send callback, or, without one, to the default callback (channel_id -1), or else
 * queues it for hlo_channel_pop.  A recv-done fills each leaf from the channel's recv callback,
 * or else from the buffers pushed with hlo_channel_push (oldest first; an empty queue waits
 * as infeed_timeout_ms says).  Callbacks run on the thread of the model call, return 0 on
 * success (anything else fails the call with a message naming the instruction and channel),
 * and see the instruction's name, the element type (an hlo_dtype) and dimensions.  A pushed
 * buffer whose shape differs from the recv's fails the call likewise.  Thread-safe. */
typedef int (*hlo_send_callback)(void *user, int64_t channel_id, const char *instr, const void *data, size_t nbytes,
                                 int32_t dtype, int32_t rank, const int64_t *dims);
typedef int (*hlo_recv_callback)(void *user, int64_t channel_id, const char *instr, void *dst, size_t nbytes,
                                 int32_t dtype, int32_t rank, const int64_t *dims);
/* fn NULL removes the callback. */
HLO_MUST_USE hlo_status hlo_channel_set_send_callback(hlo_context *ctx, int64_t channel_id, hlo_send_callback fn,
                                                      void *user);
HLO_MUST_USE hlo_status hlo_channel_set_recv_callback(hlo_context *ctx, int64_t channel_id, hlo_recv_callback fn,
                                                      void *user);
/* Queues a buffer for the channel's next recv leaf (copied; dtype -1 / rank -1: unchecked). */
HLO_MUST_USE hlo_status hlo_channel_push(hlo_context *ctx, int64_t channel_id, const void *data, size_t nbytes,
                                         int32_t dtype, int32_t rank, const int64_t *dims);
/* Pops the oldest leaf the model sent on the channel; the caller free()s *out_data; out_dims
 * holds 64 entries.  FAILED_PRECONDITION when nothing is queued. */
HLO_MUST_USE hlo_status hlo_channel_pop(hlo_context *ctx, int64_t channel_id, void **out_data, size_t *out_nbytes,
                                        int32_t *out_dtype, int32_t *out_rank, int64_t *out_dims);
size_t hlo_channel_count(hlo_context *ctx, int64_t channel_id);

/* Scratch memory: every temporary of a model call lives at an offset in one arena whose size
 * the model states (hlo_module_desc.arena_bytes, and the generated header's SYM_ARENA_BYTES).
 * The context allocates it on the first call and keeps it, so later calls touch no new pages.
 * An embedder may give its own buffer instead (64-byte aligned, at least that many bytes;
 * the context never frees it; NULL returns to context-owned memory).  A call with a buffer
 * that is too small fails with RESOURCE_EXHAUSTED.  With ctx == NULL a call allocates its
 * arena and frees it on return. */
HLO_MUST_USE hlo_status hlo_context_set_arena(hlo_context *ctx, void *buffer, size_t nbytes);

/* Custom calls: targets are resolved by name: first in the table registered here, then with
 * dlsym() in the libraries added here, then in the process's global scope. */
HLO_MUST_USE hlo_status hlo_custom_call_register(hlo_context *ctx, const char *target, void *fn);
HLO_MUST_USE hlo_status hlo_custom_call_add_library(hlo_context *ctx, const char *path);
/* Resolves every target the model names (desc->custom_call_targets) now, after registering
 * and adding libraries and before the first call, so that a missing one is a NOT_FOUND naming
 * it before anything runs (hlorun does this when it loads a model).  Without it, a target is
 * resolved when its instruction first runs. */
HLO_MUST_USE hlo_status hlo_custom_call_resolve_all(hlo_context *ctx, const hlo_module_desc *desc);

/* Weights from a file without a copy: bytes [offset, offset + bytes) of the file at path,
 * mapped read-only (runtime/src/context/mapping.c).  hlo_mapping_data() is the region's first byte:
 * pass it as a parameter's buffer when the file holds that parameter's dense little-endian
 * row-major data at an offset that is a multiple of its element size (a .npy's data, a
 * safetensors tensor; docs/abi.md).  The model only reads parameters.  hlo_unmap releases it
 * (after the last call that uses it). */
typedef struct hlo_mapping hlo_mapping;
HLO_MUST_USE hlo_status hlo_map_file(const char *path, int64_t offset, int64_t bytes, hlo_mapping **out);
const void *hlo_mapping_data(const hlo_mapping *m);
void hlo_unmap(hlo_mapping *m);

#ifdef __cplusplus
}
#endif
#endif /* HLO_RUNTIME_H */
