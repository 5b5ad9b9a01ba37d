/* feeds.c — the infeed side that compiled infeed instructions call (hlo_rt_infeed_leaf) and
 * the shaped push of the public API (hlo_infeed_push_array).  A leaf pops the oldest queued
 * buffer, waiting for one as the context's infeed_timeout_ms says, and checks it against the
 * instruction's leaf shape; every failure is a status naming the instruction.  The queues
 * themselves live in context.c.  Tests: testdata/runtime/infeed_* (tests/runtime.cmake).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "context_internal.h"

#define HLO_PUBLIC __attribute__((visibility("default")))

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

HLO_PUBLIC hlo_status hlo_infeed_push_array(hlo_context *c, const void *data, size_t nbytes, int32_t dtype,
                                            int32_t rank, const int64_t *dims) {
  if (!c || (!data && nbytes) || rank > HLO_FEED_MAX_RANK || (rank > 0 && !dims))
    return hlo_status_make(HLO_INVALID_ARGUMENT, "hlo_infeed_push_array: no context, no data or a bad shape");
  return hlo_ctx_queue_push(c, &c->infeed, data, nbytes, dtype, rank < 0 ? -1 : rank, dims);
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

static bool shape_matches(const hlo_feed_item *it, int32_t dtype, int32_t rank, const int64_t *dims) {
  if (it->dtype >= 0 && it->dtype != dtype)
    return false;
  if (it->rank < 0)
    return true;
  if (it->rank != rank)
    return false;
  for (int32_t d = 0; d < rank; d++)
    if (it->dims[d] != dims[d])
      return false;
  return true;
}

HLO_RT_CTX_EXPORT hlo_status hlo_rt_infeed_leaf(hlo_context *c, const char *instr, void *dst, int64_t nbytes,
                                                int32_t dtype, int32_t rank, const int64_t *dims) {
  char want[256], got[256];
  hlo_ctx_shape_text(want, sizeof want, dtype, rank, dims);
  if (!c)
    return hlo_status_make(HLO_FAILED_PRECONDITION, "infeed '%s': the model was called without a context (it wants %s)",
                           instr, want);
  if (!hlo_ctx_same_layout(c))
    return hlo_status_make(HLO_FAILED_PRECONDITION,
                           "infeed '%s': the context was made by another version of the hloc runtime", instr);
  hlo_feed_item *it = hlo_ctx_queue_pop_waiting(c, &c->infeed, c->opts.infeed_timeout_ms);
  if (!it)
    return hlo_status_make(HLO_FAILED_PRECONDITION, "infeed '%s': the infeed queue is empty (it wants %s)", instr, want);
  hlo_status s = NULL;
  if (!shape_matches(it, dtype, rank, dims))
    s = hlo_status_make(HLO_FAILED_PRECONDITION, "infeed '%s': the next infeed buffer is %s but the instruction wants %s",
                        instr, hlo_ctx_shape_text(got, sizeof got, it->dtype, it->rank, it->dims), want);
  else if ((int64_t)it->nbytes != nbytes)
    s = hlo_status_make(HLO_FAILED_PRECONDITION,
                        "infeed '%s': the next infeed buffer has %zu bytes but the instruction wants %s (%lld bytes)",
                        instr, it->nbytes, want, (long long)nbytes);
  else if (nbytes)
    memcpy(dst, it->data, (size_t)nbytes);
  free(it);
  return s;
}
