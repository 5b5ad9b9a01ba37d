/* queue.c — the blocking FIFOs of copied buffers that feeds and channels queue data in
 * (queue.h; the layering of runtime/src/context/ is drawn in services.h): push, pop, a pop that
 * waits for a push, draining, and the shape text of an item for messages.  Uses only the
 * context's lock and condition (context_internal.h); calls nothing else of the runtime.
 * Tests: context_test.c, channels_test.c, tests/reliability/feeds_stress_test.c.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "context_internal.h"
#include "queue.h"

hlo_status hlo_ctx_queue_push(hlo_context *c, hlo_feed_queue *q, const void *data, size_t n, int32_t dtype,
                              int32_t rank, const int64_t *dims) {
  if (n > SIZE_MAX - sizeof(hlo_feed_item))
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "a feed buffer of %zu bytes is too large", n);
  hlo_feed_item *it = malloc(sizeof *it + n);
  if (!it)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory queueing %zu bytes", n);
  it->next = NULL;
  it->nbytes = n;
  it->dtype = dtype;
  it->rank = rank;
  if (rank > 0)
    memcpy(it->dims, dims, (size_t)rank * sizeof *dims);
  if (n)
    memcpy(it->data, data, n);
  pthread_mutex_lock(&c->mu);
  if (q->tail)
    q->tail->next = it;
  else
    q->head = it;
  q->tail = it;
  q->count++;
  pthread_cond_broadcast(&c->feed_cv);
  pthread_mutex_unlock(&c->mu);
  return NULL;
}

hlo_feed_item *hlo_ctx_queue_pop(hlo_context *c, hlo_feed_queue *q) {
  pthread_mutex_lock(&c->mu);
  hlo_feed_item *it = q->head;
  if (it) {
    q->head = it->next;
    if (!q->head)
      q->tail = NULL;
    q->count--;
  }
  pthread_mutex_unlock(&c->mu);
  return it;
}

/* Pops the head of q, waiting up to timeout_ms (< 0: forever; 0: not at all) for a push. */
hlo_feed_item *hlo_ctx_queue_pop_waiting(hlo_context *c, hlo_feed_queue *q, int32_t timeout_ms) {
  if (timeout_ms == 0)
    return hlo_ctx_queue_pop(c, q);
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += timeout_ms / 1000;
  until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
  if (until.tv_nsec >= 1000000000L) {
    until.tv_sec++;
    until.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&c->mu);
  while (!q->head) {
    int rc = timeout_ms < 0 ? pthread_cond_wait(&c->feed_cv, &c->mu) : pthread_cond_timedwait(&c->feed_cv, &c->mu, &until);
    if (rc == ETIMEDOUT)
      break;
  }
  pthread_mutex_unlock(&c->mu);
  return hlo_ctx_queue_pop(c, q);
}

void hlo_ctx_queue_drain(hlo_feed_queue *q) {
  for (hlo_feed_item *it = q->head; it;) {
    hlo_feed_item *next = it->next;
    free(it);
    it = next;
  }
  q->head = q->tail = NULL;
  q->count = 0;
}

/* Hands a popped item's data to the caller in a malloc'd copy (with its element type, rank
 * and dims where asked) and frees the item. */
hlo_status hlo_ctx_item_take(hlo_feed_item *it, void **out_data, size_t *out_nbytes, int32_t *out_dtype,
                             int32_t *out_rank, int64_t *out_dims) {
  void *data = malloc(it->nbytes ? it->nbytes : 1);
  if (!data) {
    free(it);
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  }
  memcpy(data, it->data, it->nbytes);
  *out_data = data;
  *out_nbytes = it->nbytes;
  if (out_dtype)
    *out_dtype = it->dtype;
  if (out_rank)
    *out_rank = it->rank;
  if (out_dims && it->rank > 0)
    memcpy(out_dims, it->dims, (size_t)it->rank * sizeof *out_dims);
  free(it);
  return NULL;
}

static const char *const dtype_names[] = {
#define ET(e, s, bits, bytes, cls, npy) s,
#include "hlo/elemtypes.def"
#undef ET
};

const char *hlo_ctx_shape_text(char *buf, size_t size, int32_t dtype, int32_t rank, const int64_t *dims) {
  size_t n = (size_t)snprintf(buf, size, "%s",
                              dtype >= 0 && dtype < (int32_t)(sizeof dtype_names / sizeof *dtype_names)
                                  ? dtype_names[dtype]
                                  : "?");
  if (rank < 0)
    return buf;
  n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "[");
  for (int32_t d = 0; d < rank && n < size; d++)
    n += (size_t)snprintf(buf + n, size - n, d ? ",%lld" : "%lld", (long long)dims[d]);
  if (n < size)
    snprintf(buf + n, size - n, "]");
  return buf;
}

