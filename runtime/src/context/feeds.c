/* feeds.c — infeed and outfeed: the calls compiled infeed and outfeed instructions make
 * (hlo_rt_infeed_leaf, hlo_rt_outfeed; hlo/rt_abi.def) and the feeds of the public API
 * (hlo_infeed_push, hlo_infeed_push_array, hlo_outfeed_pop*, hlo_outfeed_count).  A leaf pops
 * the oldest queued buffer, waiting for one as the context's infeed_timeout_ms says, and checks
 * it against the instruction's leaf shape; every failure is a status naming the instruction.
 * The queues are queue.c's.  Tests: testdata/runtime/infeed_* (tests/runtime.cmake),
 * context_test.c.
 */
#include <stdlib.h>
#include <string.h>

#include "context_internal.h"
#include "services.h"

#define HLO_PUBLIC __attribute__((visibility("default")))

/* The feeds' teardown (services.h): frees what nobody popped. */
void hlo_ctx_feeds_free(hlo_context *c) {
  hlo_ctx_queue_drain(&c->infeed);
  hlo_ctx_queue_drain(&c->outfeed);
}

HLO_PUBLIC hlo_status hlo_infeed_push_array(hlo_context *c, const void *data, size_t nbytes, int32_t dtype,
                                            int32_t rank, const int64_t *dims) {
  if (!c || (!data && nbytes) || rank > HLO_FEED_MAX_RANK || (rank > 0 && !dims))
    return hlo_status_make(HLO_INVALID_ARGUMENT, "hlo_infeed_push_array: no context, no data or a bad shape");
  return hlo_ctx_queue_push(c, &c->infeed, data, nbytes, dtype, rank < 0 ? -1 : rank, dims);
}

HLO_PUBLIC hlo_status hlo_infeed_push(hlo_context *c, const void *data, size_t nbytes) {
  if (!c || (!data && nbytes))
    return hlo_status_make(HLO_INVALID_ARGUMENT, "hlo_infeed_push: no context or no data");
  return hlo_ctx_queue_push(c, &c->infeed, data, nbytes, -1, -1, NULL);
}

HLO_PUBLIC hlo_status hlo_outfeed_pop_array(hlo_context *c, void **out_data, size_t *out_nbytes, int32_t *out_dtype,
                                            int32_t *out_rank, int64_t *out_dims) {
  hlo_feed_item *it = c ? hlo_ctx_queue_pop(c, &c->outfeed) : NULL;
  if (!it)
    return hlo_status_make(HLO_FAILED_PRECONDITION, "the outfeed queue is empty");
  return hlo_ctx_item_take(it, out_data, out_nbytes, out_dtype, out_rank, out_dims);
}

HLO_PUBLIC hlo_status hlo_outfeed_pop(hlo_context *c, void **out_data, size_t *out_nbytes) {
  return hlo_outfeed_pop_array(c, out_data, out_nbytes, NULL, NULL, NULL);
}

HLO_PUBLIC size_t hlo_outfeed_count(hlo_context *c) {
  if (!c)
    return 0;
  pthread_mutex_lock(&c->mu);
  size_t n = c->outfeed.count;
  pthread_mutex_unlock(&c->mu);
  return n;
}

HLO_RT_CTX_EXPORT hlo_status hlo_rt_infeed(hlo_context *c, void *dst, int64_t nbytes) {
  if (c && !hlo_ctx_same_layout(c))
    return hlo_ctx_foreign("infeed");
  hlo_feed_item *it = c ? hlo_ctx_queue_pop(c, &c->infeed) : NULL;
  if (!it)
    return hlo_status_make(HLO_FAILED_PRECONDITION, "infeed: the queue is empty (the model wants %lld bytes)",
                           (long long)nbytes);
  hlo_status s = NULL;
  if ((int64_t)it->nbytes != nbytes)
    s = hlo_status_make(HLO_FAILED_PRECONDITION, "infeed: the next buffer has %zu bytes but the model wants %lld",
                        it->nbytes, (long long)nbytes);
  else if (nbytes)
    memcpy(dst, it->data, (size_t)nbytes);
  free(it);
  return s;
}

HLO_RT_CTX_EXPORT hlo_status hlo_rt_outfeed(hlo_context *c, const void *src, int64_t nbytes, int32_t dtype,
                                            int32_t rank, const int64_t *dims) {
  if (!c)
    return hlo_status_make(HLO_FAILED_PRECONDITION, "outfeed: the model was called without a context");
  if (!hlo_ctx_same_layout(c))
    return hlo_ctx_foreign("outfeed");
  if (nbytes < 0 || rank < 0 || rank > HLO_FEED_MAX_RANK || (rank > 0 && !dims))
    return hlo_status_make(HLO_INTERNAL, "outfeed: bad buffer description");
  return hlo_ctx_queue_push(c, &c->outfeed, src, (size_t)nbytes, dtype, rank, dims);
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
