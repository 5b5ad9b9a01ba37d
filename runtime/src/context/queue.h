/* queue.h — the blocking FIFO of copied buffers under everything that queues data in a context:
 * the infeed and outfeed (feeds.c), the host and loopback queues of send/recv channels
 * (channels.c).  An item owns a copy of its bytes and, where it was pushed with one, its shape.
 * Thread-safe: every operation takes the owning context's lock (`mu`); a push signals the
 * context's `feed_cv`, which waiting pops sleep on.
 * The lowest layer of runtime/src/context/: calls nothing else of the runtime (the layering
 * is drawn in services.h).
 * Tests: context_test.c, channels_test.c, tests/reliability/feeds_stress_test.c.
 */
#ifndef HLO_RUNTIME_QUEUE_H
#define HLO_RUNTIME_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "hlo/rt_parallel.h"

/* One queued buffer; dtype < 0 when it was pushed without a shape. */
typedef struct hlo_feed_item {
  struct hlo_feed_item *next;
  size_t nbytes;
  int32_t dtype;
  int32_t rank;
  int64_t dims[HLO_FEED_MAX_RANK];
  _Alignas(16) unsigned char data[];
} hlo_feed_item;

typedef struct hlo_feed_queue {
  hlo_feed_item *head, *tail;
  size_t count;
} hlo_feed_queue;

/* Push copies the buffer (dtype -1: no element type; rank -1: no dimensions) to the back of q,
 * a queue of context c, and signals c's feed_cv; pop returns the head or NULL. */
hlo_status hlo_ctx_queue_push(hlo_context *c, hlo_feed_queue *q, const void *data, size_t n, int32_t dtype,
                              int32_t rank, const int64_t *dims);
hlo_feed_item *hlo_ctx_queue_pop(hlo_context *c, hlo_feed_queue *q);
/* Pops the head of q, waiting up to timeout_ms (< 0: forever; 0: not at all) for a push. */
hlo_feed_item *hlo_ctx_queue_pop_waiting(hlo_context *c, hlo_feed_queue *q, int32_t timeout_ms);
/* Frees every item of q (no lock: for a context being destroyed). */
void hlo_ctx_queue_drain(hlo_feed_queue *q);
/* Gives a popped item's bytes to the caller as a malloc'd copy (and its dtype, rank, dims
 * where the pointers are not NULL); frees the item, also on failure. */
hlo_status hlo_ctx_item_take(hlo_feed_item *it, void **out_data, size_t *out_nbytes, int32_t *out_dtype,
                             int32_t *out_rank, int64_t *out_dims);
/* "f32[2,3]" (or "?[2,3]" without an element type, "?" with rank < 0) into buf, for messages
 * about an item's shape. */
const char *hlo_ctx_shape_text(char *buf, size_t size, int32_t dtype, int32_t rank, const int64_t *dims);

#endif
