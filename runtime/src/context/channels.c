/* channels.c — Send/Recv: the four instructions compiled models call (hlo_rt_send,
 * hlo_rt_send_done, hlo_rt_recv, hlo_rt_recv_done; hlo/rt.h) and the host-transfer part of
 * the public API (hlo_channel_*; hlo/runtime.h).
 *
 * A send or recv starts a request and writes its id into the context tuple's u32[]; the -done
 * finds the request by that id, so a context carried through a while loop (XLA's pipelined
 * send/recv) still finds it.  Host transfers (is_host_transfer=true) go to the channel's
 * callbacks or queues in the context.  Transfers between replicas go through the collective
 * group's backend (collectives_internal.h: send_start/recv_start/wait), matched by source,
 * target and channel id in program order; a send never waits for its receiver, so the
 * semantics document's order (Recv before Send, Send before RecvDone, ...) cannot deadlock.
 * The pairs come from _xla_send_recv_source_target_pairs, as XLA's GPU backend reads them:
 * a replica that is no target receives zeros, one that is no source sends nothing.  A single
 * replica without a group that sends to itself uses the channel's loopback queue.
 * Tests: testdata/runtime/sendrecv_*, host_* (tests/runtime.cmake), context_test.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectives_internal.h"
#include "context_internal.h"
#include "hlo/rt.h"
#include "services.h"

#define HLO_PUBLIC __attribute__((visibility("default")))

enum { MAX_LEAVES = 64 };

/* The compile-time description of a send, recv or recv-done (hlo/rt.h). */
typedef struct chan_desc {
  int64_t channel;
  bool host;
  int64_t n_pairs;
  const int64_t *pairs;
  int32_t n;
  const int64_t *leaf[MAX_LEAVES]; /* dtype, rank, dims..., bytes */
} chan_desc;

static int32_t leaf_dtype(const chan_desc *d, int i) { return (int32_t)d->leaf[i][0]; }
static int32_t leaf_rank(const chan_desc *d, int i) { return (int32_t)d->leaf[i][1]; }
static const int64_t *leaf_dims(const chan_desc *d, int i) { return d->leaf[i] + 2; }
static int64_t leaf_bytes(const chan_desc *d, int i) { return d->leaf[i][2 + d->leaf[i][1]]; }

static hlo_status parse_desc(const int64_t *p, const char *instr, chan_desc *d) {
  d->channel = p[0];
  d->host = p[1] != 0;
  d->n_pairs = p[2];
  d->pairs = p + 3;
  p += 3 + 2 * d->n_pairs;
  if (p[0] > MAX_LEAVES)
    return hlo_status_make(HLO_UNIMPLEMENTED, "'%s': a transfer of more than %d arrays", instr, MAX_LEAVES);
  d->n = (int32_t)p[0];
  p++;
  for (int i = 0; i < d->n; i++) {
    d->leaf[i] = p;
    p += 3 + p[1];
  }
  return NULL;
}

static const char *leaf_text(char *buf, size_t n, const chan_desc *d, int i) {
  return hlo_ctx_shape_text(buf, n, leaf_dtype(d, i), leaf_rank(d, i), leaf_dims(d, i));
}

/* ---- the channel table ------------------------------------------------------------------- */

/* The entry of channel id (created when `create`); NULL when absent or out of memory. */
static hlo_channel *channel_of(hlo_context *c, int64_t id, bool create) {
  pthread_mutex_lock(&c->mu);
  hlo_channel *ch = c->channels;
  while (ch && ch->id != id)
    ch = ch->next;
  if (!ch && create && (ch = calloc(1, sizeof *ch))) {
    ch->id = id;
    ch->next = c->channels;
    c->channels = ch;
  }
  pthread_mutex_unlock(&c->mu);
  return ch;
}

static void drain(hlo_context *c, hlo_feed_queue *q) {
  hlo_feed_item *it;
  while ((it = hlo_ctx_queue_pop(c, q)))
    free(it);
}

static hlo_status bad_call(const char *fn) {
  return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: no context, a foreign context or a bad argument", fn);
}

HLO_PUBLIC hlo_status hlo_channel_set_send_callback(hlo_context *c, int64_t channel_id, hlo_send_callback fn,
                                                    void *user) {
  hlo_channel *ch = c && hlo_ctx_same_layout(c) ? channel_of(c, channel_id, true) : NULL;
  if (!ch)
    return bad_call("hlo_channel_set_send_callback");
  pthread_mutex_lock(&c->mu);
  ch->send_fn = fn;
  ch->send_user = user;
  pthread_mutex_unlock(&c->mu);
  return NULL;
}

HLO_PUBLIC hlo_status hlo_channel_set_recv_callback(hlo_context *c, int64_t channel_id, hlo_recv_callback fn,
                                                    void *user) {
  hlo_channel *ch = c && hlo_ctx_same_layout(c) ? channel_of(c, channel_id, true) : NULL;
  if (!ch)
    return bad_call("hlo_channel_set_recv_callback");
  pthread_mutex_lock(&c->mu);
  ch->recv_fn = fn;
  ch->recv_user = user;
  pthread_mutex_unlock(&c->mu);
  return NULL;
}

HLO_PUBLIC hlo_status hlo_channel_push(hlo_context *c, int64_t channel_id, const void *data, size_t nbytes,
                                       int32_t dtype, int32_t rank, const int64_t *dims) {
  if (!c || !hlo_ctx_same_layout(c) || (!data && nbytes) || rank > HLO_FEED_MAX_RANK || (rank > 0 && !dims))
    return bad_call("hlo_channel_push");
  hlo_channel *ch = channel_of(c, channel_id, true);
  if (!ch)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  return hlo_ctx_queue_push(c, &ch->from_host, data, nbytes, dtype, rank < 0 ? -1 : rank, dims);
}

HLO_PUBLIC hlo_status hlo_channel_pop(hlo_context *c, int64_t channel_id, void **out_data, size_t *out_nbytes,
                                      int32_t *out_dtype, int32_t *out_rank, int64_t *out_dims) {
  *out_data = NULL;
  *out_nbytes = 0;
  hlo_channel *ch = c && hlo_ctx_same_layout(c) ? channel_of(c, channel_id, false) : NULL;
  hlo_feed_item *it = ch ? hlo_ctx_queue_pop(c, &ch->to_host) : NULL;
  if (!it)
    return hlo_status_make(HLO_FAILED_PRECONDITION, "nothing was sent to the host on channel %lld",
                           (long long)channel_id);
  return hlo_ctx_item_take(it, out_data, out_nbytes, out_dtype, out_rank, out_dims);
}

HLO_PUBLIC size_t hlo_channel_count(hlo_context *c, int64_t channel_id) {
  hlo_channel *ch = c && hlo_ctx_same_layout(c) ? channel_of(c, channel_id, false) : NULL;
  if (!ch)
    return 0;
  pthread_mutex_lock(&c->mu);
  size_t n = ch->to_host.count;
  pthread_mutex_unlock(&c->mu);
  return n;
}

/* ---- requests ------------------------------------------------------------------------------ */

typedef struct hlo_chan_request {
  struct hlo_chan_request *next;
  uint32_t id;
  bool is_recv;
  chan_desc d;
  const char *instr;
  int32_t source;      /* device recv: the sending replica; -1: none (zeros) */
  bool loopback;       /* device transfer of a lone replica to itself */
  void *handles[MAX_LEAVES * 2]; /* backend handles (NULL: complete) */
  int n_handles;
  unsigned char *data; /* device recv: the leaves, one after another */
} hlo_chan_request;

static hlo_status new_request(hlo_context *c, const chan_desc *d, const char *instr, bool is_recv,
                              hlo_chan_request **out) {
  hlo_chan_request *r = calloc(1, sizeof *r);
  if (!r)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  r->d = *d;
  r->instr = instr;
  r->is_recv = is_recv;
  r->source = -1;
  *out = r;
  return NULL;
}

/* Files r under a fresh id (never 0) and writes the id for the -done. */
static void file_request(hlo_context *c, hlo_chan_request *r, uint32_t *id_out) {
  pthread_mutex_lock(&c->mu);
  if (++c->next_request == 0)
    ++c->next_request;
  r->id = c->next_request;
  r->next = c->requests;
  c->requests = r;
  pthread_mutex_unlock(&c->mu);
  *id_out = r->id;
}

static hlo_chan_request *take_request(hlo_context *c, uint32_t id) {
  pthread_mutex_lock(&c->mu);
  hlo_chan_request **p = &c->requests;
  while (*p && (*p)->id != id)
    p = &(*p)->next;
  hlo_chan_request *r = *p;
  if (r)
    *p = r->next;
  pthread_mutex_unlock(&c->mu);
  return r;
}

static void free_request(hlo_context *c, hlo_chan_request *r) {
  hlo_collective_group *g = c->opts.group;
  for (int i = 0; i < r->n_handles; i++)
    if (r->handles[i] && g)
      g->backend->forget(g->impl, r->handles[i]);
  free(r->data);
  free(r);
}

/* The channels' teardown (services.h): frees the channel table and the requests nobody
 * finished. */
void hlo_ctx_channels_free(hlo_context *c) {
  while (c->requests) {
    hlo_chan_request *r = c->requests;
    c->requests = r->next;
    free_request(c, r);
  }
  while (c->channels) {
    hlo_channel *ch = c->channels;
    c->channels = ch->next;
    drain(c, &ch->to_host);
    drain(c, &ch->from_host);
    drain(c, &ch->loopback);
    free(ch);
  }
}

static hlo_status need_context(hlo_context *c, const char *what, const char *instr) {
  if (!c)
    return hlo_status_make(HLO_FAILED_PRECONDITION, "%s '%s': the model was called without a context", what, instr);
  if (!hlo_ctx_same_layout(c))
    return hlo_status_make(HLO_FAILED_PRECONDITION,
                           "%s '%s': the context was made by another version of the hloc runtime", what, instr);
  return NULL;
}

/* ---- host transfers ------------------------------------------------------------------------ */

/* The send (or recv) callback of the channel, else of the default entry (-1). */
static void host_callback(hlo_context *c, hlo_channel *ch, bool recv, void **fn, void **user) {
  hlo_channel *dflt = channel_of(c, -1, false);
  pthread_mutex_lock(&c->mu);
  hlo_channel *e = ch && (recv ? ch->recv_fn != NULL : ch->send_fn != NULL) ? ch : dflt;
  *fn = !e ? NULL : recv ? (void *)e->recv_fn : (void *)e->send_fn;
  *user = !e ? NULL : recv ? e->recv_user : e->send_user;
  pthread_mutex_unlock(&c->mu);
}

static hlo_status host_send(hlo_context *c, const chan_desc *d, const char *instr, void *const *leaves) {
  hlo_channel *ch = channel_of(c, d->channel, true);
  if (!ch)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  void *fn, *user;
  host_callback(c, ch, false, &fn, &user);
  for (int i = 0; i < d->n; i++) {
    size_t bytes = (size_t)leaf_bytes(d, i);
    if (fn) {
      int rc = ((hlo_send_callback)fn)(user, d->channel, instr, leaves[i], bytes, leaf_dtype(d, i), leaf_rank(d, i),
                                       leaf_dims(d, i));
      if (rc)
        return hlo_status_make(HLO_FAILED_PRECONDITION, "send '%s' (channel %lld): the send callback failed (returned %d)",
                               instr, (long long)d->channel, rc);
    } else {
      HLO_RETURN_IF_ERROR(
          hlo_ctx_queue_push(c, &ch->to_host, leaves[i], bytes, leaf_dtype(d, i), leaf_rank(d, i), leaf_dims(d, i)));
    }
  }
  return NULL;
}

static bool item_matches(const hlo_feed_item *it, const chan_desc *d, int i) {
  if (it->dtype >= 0 && it->dtype != leaf_dtype(d, i))
    return false;
  if (it->rank >= 0 && (it->rank != leaf_rank(d, i) ||
                        memcmp(it->dims, leaf_dims(d, i), (size_t)it->rank * sizeof(int64_t)) != 0))
    return false;
  return (int64_t)it->nbytes == leaf_bytes(d, i);
}

/* Leaf i of a recv from a queue (the host's, or the loopback of a lone replica). */
static hlo_status take_queued(hlo_context *c, hlo_feed_queue *q, const hlo_chan_request *r, int i, void *dst,
                              int32_t timeout_ms) {
  char want[256], got[256];
  leaf_text(want, sizeof want, &r->d, i);
  hlo_feed_item *it = hlo_ctx_queue_pop_waiting(c, q, timeout_ms);
  if (!it && r->d.host)
    return hlo_status_make(HLO_FAILED_PRECONDITION,
                           "recv '%s' (channel %lld): no data was pushed to the channel (it wants %s; "
                           "hlo_channel_push, or hlorun --recv %lld:FILE.npy)",
                           r->instr, (long long)r->d.channel, want, (long long)r->d.channel);
  if (!it)
    return hlo_status_make(HLO_FAILED_PRECONDITION, "recv '%s' (channel %lld): nothing was sent on the channel (it wants %s)",
                           r->instr, (long long)r->d.channel, want);
  hlo_status s = NULL;
  if (!item_matches(it, &r->d, i))
    s = hlo_status_make(HLO_FAILED_PRECONDITION, "recv '%s' (channel %lld): the data %s is %s (%zu bytes) but the recv wants %s",
                        r->instr, (long long)r->d.channel, r->d.host ? "pushed" : "sent",
                        hlo_ctx_shape_text(got, sizeof got, it->dtype, it->rank, it->dims), it->nbytes, want);
  else if (it->nbytes)
    memcpy(dst, it->data, it->nbytes);
  free(it);
  return s;
}

static hlo_status host_recv(hlo_context *c, const hlo_chan_request *r, void *const *leaves) {
  hlo_channel *ch = channel_of(c, r->d.channel, true);
  if (!ch)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  void *fn, *user;
  host_callback(c, ch, true, &fn, &user);
  for (int i = 0; i < r->d.n; i++) {
    if (!fn) {
      HLO_RETURN_IF_ERROR(take_queued(c, &ch->from_host, r, i, leaves[i], c->opts.infeed_timeout_ms));
      continue;
    }
    int rc = ((hlo_recv_callback)fn)(user, r->d.channel, r->instr, leaves[i], (size_t)leaf_bytes(&r->d, i),
                                     leaf_dtype(&r->d, i), leaf_rank(&r->d, i), leaf_dims(&r->d, i));
    if (rc)
      return hlo_status_make(HLO_FAILED_PRECONDITION, "recv '%s' (channel %lld): the recv callback failed (returned %d)",
                             r->instr, (long long)r->d.channel, rc);
  }
  return NULL;
}

/* ---- transfers between replicas ------------------------------------------------------------ */

static hlo_status check_pair(const chan_desc *d, const char *instr, int64_t p, int32_t num) {
  int64_t s = d->pairs[2 * p], t = d->pairs[2 * p + 1];
  if (s < 0 || s >= num || t < 0 || t >= num)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "'%s' (channel %lld): the pair {%lld,%lld} names a replica outside 0..%d",
                           instr, (long long)d->channel, (long long)s, (long long)t, num - 1);
  return NULL;
}

static hlo_status device_send(hlo_context *c, hlo_chan_request *r, void *const *leaves) {
  int32_t me = c->opts.replica_id, num = c->opts.num_replicas;
  hlo_collective_group *g;
  HLO_RETURN_IF_ERROR(hlo_coll_group_of(c, r->instr, &g));
  char shape[256];
  for (int64_t p = 0; p < r->d.n_pairs; p++) {
    HLO_RETURN_IF_ERROR(check_pair(&r->d, r->instr, p, num));
    if (r->d.pairs[2 * p] != me)
      continue;
    int32_t to = (int32_t)r->d.pairs[2 * p + 1];
    hlo_channel *ch = g ? NULL : channel_of(c, r->d.channel, true);
    if (!g && !ch)
      return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
    for (int i = 0; i < r->d.n; i++) {
      leaf_text(shape, sizeof shape, &r->d, i);
      if (!g) { /* a lone replica sending to itself */
        HLO_RETURN_IF_ERROR(hlo_ctx_queue_push(c, &ch->loopback, leaves[i], (size_t)leaf_bytes(&r->d, i),
                                               leaf_dtype(&r->d, i), leaf_rank(&r->d, i), leaf_dims(&r->d, i)));
        continue;
      }
      if (r->n_handles >= (int)(sizeof r->handles / sizeof r->handles[0]))
        return hlo_status_make(HLO_UNIMPLEMENTED, "send '%s': too many targets", r->instr);
      void **h = &r->handles[r->n_handles++];
      HLO_RETURN_IF_ERROR(g->backend->send_start(g->impl, me, to, r->d.channel, leaves[i], leaf_bytes(&r->d, i), shape, h));
    }
  }
  return NULL;
}

static hlo_status device_recv(hlo_context *c, hlo_chan_request *r) {
  int32_t me = c->opts.replica_id, num = c->opts.num_replicas;
  hlo_collective_group *g;
  HLO_RETURN_IF_ERROR(hlo_coll_group_of(c, r->instr, &g));
  for (int64_t p = 0; p < r->d.n_pairs && r->source < 0; p++) {
    HLO_RETURN_IF_ERROR(check_pair(&r->d, r->instr, p, num));
    if (r->d.pairs[2 * p + 1] == me)
      r->source = (int32_t)r->d.pairs[2 * p];
  }
  if (r->source < 0)
    return NULL; /* no source: zeros at recv-done */
  if (!g) {
    r->loopback = true;
    return NULL;
  }
  int64_t total = 0;
  for (int i = 0; i < r->d.n; i++)
    total += leaf_bytes(&r->d, i);
  r->data = malloc((size_t)(total > 0 ? total : 1));
  if (!r->data)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "recv '%s': out of memory for %lld bytes", r->instr, (long long)total);
  char shape[256];
  int64_t off = 0;
  for (int i = 0; i < r->d.n; off += leaf_bytes(&r->d, i), i++) {
    leaf_text(shape, sizeof shape, &r->d, i);
    HLO_RETURN_IF_ERROR(g->backend->recv_start(g->impl, me, r->source, r->d.channel, r->data + off,
                                               leaf_bytes(&r->d, i), shape, &r->handles[i]));
    r->n_handles = i + 1;
  }
  return NULL;
}

/* Waits for every handle of r (all of them, even after a failure); the first error. */
static hlo_status wait_all(hlo_context *c, hlo_chan_request *r) {
  hlo_collective_group *g = c->opts.group;
  hlo_status first = NULL;
  for (int i = 0; i < r->n_handles; i++) {
    if (!r->handles[i])
      continue;
    hlo_status s = g->backend->wait(g->impl, r->handles[i], &c->cancelled);
    r->handles[i] = NULL;
    if (s && !first)
      first = hlo_status_annotate(s, "%s '%s' (channel %lld)", r->is_recv ? "recv" : "send", r->instr,
                                  (long long)r->d.channel);
    else
      hlo_status_free(s);
  }
  return first;
}

static hlo_status device_recv_done(hlo_context *c, hlo_chan_request *r, void *const *leaves) {
  if (r->source < 0) {
    for (int i = 0; i < r->d.n; i++)
      memset(leaves[i], 0, (size_t)leaf_bytes(&r->d, i));
    return NULL;
  }
  if (r->loopback) {
    hlo_channel *ch = channel_of(c, r->d.channel, true);
    if (!ch)
      return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
    for (int i = 0; i < r->d.n; i++)
      HLO_RETURN_IF_ERROR(take_queued(c, &ch->loopback, r, i, leaves[i], 0));
    return NULL;
  }
  HLO_RETURN_IF_ERROR(wait_all(c, r));
  int64_t off = 0;
  for (int i = 0; i < r->d.n; off += leaf_bytes(&r->d, i), i++)
    memcpy(leaves[i], r->data + off, (size_t)leaf_bytes(&r->d, i));
  return NULL;
}

/* ---- the instructions ---------------------------------------------------------------------- */

HLO_RT_EXPORT hlo_status hlo_rt_send(hlo_context *c, const int64_t *desc, const char *instr, void *const *leaves,
                                     uint32_t *request) {
  *request = 0;
  HLO_RETURN_IF_ERROR(need_context(c, "send", instr));
  chan_desc d;
  HLO_RETURN_IF_ERROR(parse_desc(desc, instr, &d));
  hlo_chan_request *r;
  HLO_RETURN_IF_ERROR(new_request(c, &d, instr, false, &r));
  hlo_status s = d.host ? host_send(c, &d, instr, leaves) : device_send(c, r, leaves);
  if (s) {
    free_request(c, r);
    return s;
  }
  file_request(c, r, request);
  return NULL;
}

HLO_RT_EXPORT hlo_status hlo_rt_recv(hlo_context *c, const int64_t *desc, const char *instr, uint32_t *request) {
  *request = 0;
  HLO_RETURN_IF_ERROR(need_context(c, "recv", instr));
  chan_desc d;
  HLO_RETURN_IF_ERROR(parse_desc(desc, instr, &d));
  hlo_chan_request *r;
  HLO_RETURN_IF_ERROR(new_request(c, &d, instr, true, &r));
  hlo_status s = d.host ? NULL : device_recv(c, r);
  if (s) {
    free_request(c, r);
    return s;
  }
  file_request(c, r, request);
  return NULL;
}

/* The request a -done's operand names; a clear error when there is none of that kind. */
static hlo_status done_request(hlo_context *c, const char *what, const char *instr, uint32_t id, bool recv,
                               hlo_chan_request **out) {
  *out = NULL;
  HLO_RETURN_IF_ERROR(need_context(c, what, instr));
  hlo_chan_request *r = take_request(c, id);
  if (!r)
    return hlo_status_make(HLO_FAILED_PRECONDITION,
                           "%s '%s': no %s is waiting with request id %u (its operand must be the value of a %s, "
                           "finished once)", what, instr, recv ? "recv" : "send", id, recv ? "recv" : "send");
  if (r->is_recv != recv) {
    hlo_status s = hlo_status_make(HLO_FAILED_PRECONDITION, "%s '%s': request id %u was started by %s '%s', not by a %s",
                                   what, instr, id, r->is_recv ? "recv" : "send", r->instr, recv ? "recv" : "send");
    free_request(c, r);
    return s;
  }
  *out = r;
  return NULL;
}

HLO_RT_EXPORT hlo_status hlo_rt_send_done(hlo_context *c, const char *instr, const uint32_t *request) {
  hlo_chan_request *r;
  HLO_RETURN_IF_ERROR(done_request(c, "send-done", instr, *request, false, &r));
  hlo_status s = wait_all(c, r);
  free_request(c, r);
  return s;
}

HLO_RT_EXPORT hlo_status hlo_rt_recv_done(hlo_context *c, const int64_t *desc, const char *instr,
                                          const uint32_t *request, void *const *leaves) {
  hlo_chan_request *r;
  HLO_RETURN_IF_ERROR(done_request(c, "recv-done", instr, *request, true, &r));
  chan_desc d;
  hlo_status s = parse_desc(desc, instr, &d);
  bool same = !s && d.n == r->d.n;
  for (int i = 0; same && i < d.n; i++)
    same = leaf_bytes(&d, i) == leaf_bytes(&r->d, i);
  if (!s && !same)
    s = hlo_status_make(HLO_FAILED_PRECONDITION, "recv-done '%s': its data differs from that of recv '%s'", instr,
                        r->instr);
  if (!s)
    s = r->d.host ? host_recv(c, r, leaves) : device_recv_done(c, r, leaves);
  free_request(c, r);
  return s;
}
