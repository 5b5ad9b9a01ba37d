/* context_internal.h — the inside of hlo_context, for runtime/src files only (context.c owns
 * it; the queues (queue.c), channels.c and the collective layer hang their state here too;
 * how the files of runtime/src/context/ depend on each other: services.h).
 * Locking: `mu` guards the feed queues, the channel table and requests, the custom-call
 * tables and the pool start-up; the pool has its own lock.  Everything else is written once
 * in hlo_context_create.
 */
#ifndef HLO_RUNTIME_CONTEXT_INTERNAL_H
#define HLO_RUNTIME_CONTEXT_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hlo/rt_parallel.h"
#include "hlo/runtime.h"
#include "queue.h"

typedef struct hlo_custom_target {
  char *name;
  void *fn;
} hlo_custom_target;

/* One Send/Recv channel id of a context (channels.c): the host's callbacks and queues for
 * is_host_transfer instructions, and the loopback queue of a replica that sends to itself
 * without a collective group.  Entries are listed, never moved or freed before the context. */
typedef struct hlo_channel {
  struct hlo_channel *next;
  int64_t id;
  hlo_send_callback send_fn;
  void *send_user;
  hlo_recv_callback recv_fn;
  void *recv_user;
  hlo_feed_queue to_host;   /* host sends, popped by hlo_channel_pop */
  hlo_feed_queue from_host; /* pushed by hlo_channel_push, taken by host recvs */
  hlo_feed_queue loopback;  /* device sends from this replica to itself */
} hlo_channel;

struct hlo_chan_request; /* a send or recv waiting for its -done (channels.c) */

/* The worker pool: started on the first parallel loop that can use it.  A loop publishes
 * (fn, arg, n, chunks), sets `unfinished`, stores `remaining` (release) and bumps
 * `generation`.  Workers and the caller claim chunks by decrementing `remaining`, without a
 * lock: a claim that finds it above zero owns chunk remaining - 1 of the published loop (its
 * acquire sees what was published), one that finds it at or below zero stops.  Whoever
 * finishes the last chunk ends the loop.  With a lock around each claim, as before, sixteen
 * threads queued behind each other's wake-ups on every loop.  `mu` and the condition
 * variables are only for sleeping: a worker that has polled long enough sleeps on `work`
 * (counted in `sleepers`), the caller on `done` (`caller_sleeps`); each side publishes, then
 * reads the other's flag (sequentially consistent), so no wake-up is lost. */
typedef struct hlo_pool {
  pthread_mutex_t mu;
  pthread_cond_t work, done;
  pthread_mutex_t busy;      /* held by the thread running a loop; trylock failure -> inline */
  pthread_t *threads;
  int num_threads;           /* workers started (the caller is one more) */
  bool started;
  atomic_bool stopping;
  atomic_uint_least64_t generation;
  hlo_rt_range_fn fn;
  void *arg;
  int64_t n, chunks;
  atomic_int_least64_t remaining, unfinished;
  atomic_int sleepers, caller_sleeps;
} hlo_pool;

/* A model.so carries its own static copy of this runtime: the copy that made a context and the
 * copy a model calls may differ when the model was built by another hloc.  The model-side
 * functions check these two fields before they touch anything else.  The magic changes with
 * any protocol two copies would have to share (the pool's claiming: "HLP2" since chunks are
 * claimed without a lock), so that a model of another runtime runs its loops on the calling
 * thread instead of meeting workers that speak another protocol. */
#define HLO_CONTEXT_MAGIC 0x484c5032u /* "HLP2" */

/* Data a library kernel prepared from a model's constant once, kept for the context's life and
 * found again by (site, source, key): convolution weights in oneDNN's layout (rt_dnnl.c).
 * Plain memory only (any runtime copy frees it with free()); `layout` is the library's
 * description of data's layout, which the finder compares before it uses data. */
typedef struct hlo_ctx_prepared {
  const void *site, *source;
  int64_t key;
  void *layout, *data;
  size_t layout_bytes, data_bytes;
  struct hlo_ctx_prepared *next;
} hlo_ctx_prepared;

struct hlo_context {
  uint32_t magic;            /* HLO_CONTEXT_MAGIC */
  uint32_t layout_size;      /* sizeof(struct hlo_context) of the runtime that made it */
  hlo_context_options opts;  /* num_threads resolved (>= 1), num_replicas >= 1 */
  pthread_mutex_t mu;
  pthread_cond_t feed_cv;    /* signalled on every push (blocking infeed) */
  hlo_feed_queue infeed, outfeed;
  hlo_custom_target *targets;  /* registered by the embedder */
  int n_targets;
  hlo_custom_target *resolved; /* found in libraries or the global scope, cached */
  int n_resolved;
  void **libs;
  int n_libs;
  hlo_pool pool;
  void *arena;               /* scratch of model calls (hlo_rt_arena_acquire) */
  /* Scratch of library calls inside a model call (hlo_ctx_scratch_take): kept between calls so
   * its pages stay mapped; `scratch_busy` held by the one call using it. */
  pthread_mutex_t scratch_busy;
  void *scratch;
  size_t scratch_size;
  size_t arena_size;
  bool arena_borrowed;       /* given by hlo_context_set_arena: never freed here */
  hlo_ctx_prepared *prepared; /* hlo_ctx_prepared_find/keep, guarded by `mu` */
  /* rng-get-and-update-state and rng (rt_rng.c): XLA's 128-bit generator state, low word
   * first, guarded by `mu`; set to XLA's initial value on first use (rng_started). */
  uint64_t rng_state[2];
  bool rng_started;
  atomic_int cancelled;       /* hlo_context_cancel; read at while back-edges (cancel.c) */
  /* Send/Recv (channels.c), guarded by `mu`: the channel table (channel id -1 is the default
   * host handler), the requests waiting for send-done/recv-done, and the next request id. */
  hlo_channel *channels;
  struct hlo_chan_request *requests;
  uint32_t next_request;
};

/* A FAILED_PRECONDITION status for `what` given a context of another runtime's layout. */
hlo_status hlo_ctx_foreign(const char *what);
/* The context's library scratch, at least `bytes`, 64-byte aligned, for the caller alone until
 * hlo_ctx_scratch_give; NULL when c is NULL or foreign, another call holds it, or memory is
 * short (the caller then allocates its own). */
void *hlo_ctx_scratch_take(hlo_context *c, size_t bytes);
void hlo_ctx_scratch_give(hlo_context *c, void *scratch);
/* The data prepared for (site, source, key) (NULL: none, or c is NULL or foreign).  The entry
 * stays until the context is destroyed or hlo_ctx_prepared_keep replaces it (same thread: one
 * call at a time per context). */
const hlo_ctx_prepared *hlo_ctx_prepared_find(hlo_context *c, const void *site, const void *source, int64_t key);
/* Keeps copies of data and layout for (site, source, key), replacing what was kept for it; false
 * without memory (or for a NULL or foreign c), nothing kept. */
bool hlo_ctx_prepared_keep(hlo_context *c, const void *site, const void *source, int64_t key, const void *layout,
                           size_t layout_bytes, const void *data, size_t data_bytes);
/* Was c made by a runtime with this layout (context_internal.h's magic and size)? */
bool hlo_ctx_same_layout(const hlo_context *c);

#endif
