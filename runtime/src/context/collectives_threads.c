/* collectives_threads.c — the in-process collective backend: replicas are threads sharing one
 * address space, so an exchange publishes each replica's leaf pointers and meets the others at
 * a barrier; release is a second barrier, after which the buffers may change again.  A group
 * that was aborted (a replica failed) makes every waiting and later call fail instead of
 * waiting forever.  Point-to-point transfers (send/recv) meet in two lists under the same
 * lock: messages sent before their receive was posted (copied, so a send never waits) and
 * receives posted before their message (the sender copies straight into the receiver's
 * buffer).  Thread-safe.  Tests: testdata/runtime/coll_*, sendrecv_* (tests/runtime.cmake).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collectives_internal.h"

/* A receive posted before its message arrived (the handle recv_start returns). */
typedef struct p2p_recv {
  struct p2p_recv *next;
  int32_t from, to;
  int64_t tag;
  void *dst;
  int64_t bytes;
  char shape[128];
  bool done, posted; /* posted: still in the list of waiting receives */
  char error[320];   /* a shape mismatch, reported by wait */
} p2p_recv;

/* A message sent before its receive was posted. */
typedef struct p2p_msg {
  struct p2p_msg *next;
  int32_t from, to;
  int64_t tag;
  int64_t bytes;
  char shape[128];
  unsigned char data[];
} p2p_msg;

typedef struct coll_threads {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int32_t n, arrived;
  uint64_t generation;
  bool aborted;
  const void **slots;    /* n replicas x max_leaves */
  int32_t max_leaves;
  p2p_msg *sent;         /* unreceived messages, oldest first */
  p2p_recv *posted;      /* receives waiting for a message, oldest first */
} coll_threads;

/* Waits until all n replicas arrived.  Called with mu held. */
static hlo_status barrier(coll_threads *t) {
  uint64_t gen = t->generation;
  if (++t->arrived == t->n) {
    t->arrived = 0;
    t->generation++;
    pthread_cond_broadcast(&t->cv);
    return NULL;
  }
  while (gen == t->generation && !t->aborted)
    pthread_cond_wait(&t->cv, &t->mu);
  return t->aborted ? hlo_status_make(HLO_FAILED_PRECONDITION, "collective abandoned: another replica failed") : NULL;
}

static hlo_status grow(coll_threads *t, int32_t n) {
  if (n <= t->max_leaves)
    return NULL;
  const void **s = realloc(t->slots, (size_t)t->n * (size_t)n * sizeof *s);
  if (!s)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory in a collective");
  t->slots = s;
  t->max_leaves = n;
  return NULL;
}

static hlo_status th_exchange(void *impl, int32_t replica, int32_t n, const void *const *leaves, const int64_t *bytes,
                              const void *const **out_all) {
  (void)bytes;
  coll_threads *t = impl;
  pthread_mutex_lock(&t->mu);
  hlo_status s = t->aborted ? hlo_status_make(HLO_FAILED_PRECONDITION, "collective abandoned: another replica failed")
                            : NULL;
  /* Every replica grows the table to the same size before anyone writes (first barrier). */
  if (!s)
    s = barrier(t);
  if (!s)
    s = grow(t, n);
  if (!s)
    s = barrier(t);
  if (!s)
    for (int32_t i = 0; i < n; i++)
      t->slots[replica * n + i] = leaves[i];
  if (!s)
    s = barrier(t);
  *out_all = t->slots;
  pthread_mutex_unlock(&t->mu);
  return s;
}

static hlo_status th_release(void *impl, int32_t replica) {
  (void)replica;
  coll_threads *t = impl;
  pthread_mutex_lock(&t->mu);
  hlo_status s = barrier(t);
  pthread_mutex_unlock(&t->mu);
  return s;
}

static void th_abort(void *impl) {
  coll_threads *t = impl;
  pthread_mutex_lock(&t->mu);
  t->aborted = true;
  pthread_cond_broadcast(&t->cv);
  pthread_mutex_unlock(&t->mu);
}

/* ---- point to point ------------------------------------------------------------------------ */

/* Delivers a message of `shape` and `bytes` from `from` into r (called with mu held). */
static void deliver(p2p_recv *r, int32_t from, const void *data, int64_t bytes, const char *shape) {
  if (bytes != r->bytes || strcmp(shape, r->shape) != 0)
    snprintf(r->error, sizeof r->error, "replica %d sent %s (%lld bytes) but this recv wants %s (%lld bytes)", from,
             shape, (long long)bytes, r->shape, (long long)r->bytes);
  else if (bytes)
    memcpy(r->dst, data, (size_t)bytes);
  r->done = true;
}

static void unlink_recv(coll_threads *t, p2p_recv *r) {
  for (p2p_recv **p = &t->posted; *p; p = &(*p)->next)
    if (*p == r) {
      *p = r->next;
      r->posted = false;
      return;
    }
}

static hlo_status th_send_start(void *impl, int32_t from, int32_t to, int64_t tag, const void *data, int64_t bytes,
                                const char *shape, void **handle) {
  coll_threads *t = impl;
  *handle = NULL;
  pthread_mutex_lock(&t->mu);
  for (p2p_recv *r = t->posted; r; r = r->next)
    if (r->from == from && r->to == to && r->tag == tag) {
      unlink_recv(t, r);
      deliver(r, from, data, bytes, shape);
      pthread_cond_broadcast(&t->cv);
      pthread_mutex_unlock(&t->mu);
      return NULL;
    }
  pthread_mutex_unlock(&t->mu);
  p2p_msg *m = malloc(sizeof *m + (size_t)(bytes > 0 ? bytes : 0));
  if (!m)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory sending %lld bytes", (long long)bytes);
  *m = (p2p_msg){.from = from, .to = to, .tag = tag, .bytes = bytes};
  snprintf(m->shape, sizeof m->shape, "%s", shape);
  if (bytes > 0)
    memcpy(m->data, data, (size_t)bytes);
  pthread_mutex_lock(&t->mu);
  /* A receive may have been posted meanwhile: deliver to it rather than queue behind it. */
  for (p2p_recv *r = t->posted; r; r = r->next)
    if (r->from == from && r->to == to && r->tag == tag) {
      unlink_recv(t, r);
      deliver(r, from, m->data, bytes, m->shape);
      pthread_cond_broadcast(&t->cv);
      pthread_mutex_unlock(&t->mu);
      free(m);
      return NULL;
    }
  p2p_msg **tail = &t->sent;
  while (*tail)
    tail = &(*tail)->next;
  *tail = m;
  pthread_mutex_unlock(&t->mu);
  return NULL;
}

static hlo_status th_recv_start(void *impl, int32_t to, int32_t from, int64_t tag, void *dst, int64_t bytes,
                                const char *shape, void **handle) {
  coll_threads *t = impl;
  p2p_recv *r = calloc(1, sizeof *r);
  if (!r)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory posting a recv");
  *r = (p2p_recv){.from = from, .to = to, .tag = tag, .dst = dst, .bytes = bytes};
  snprintf(r->shape, sizeof r->shape, "%s", shape);
  pthread_mutex_lock(&t->mu);
  for (p2p_msg **p = &t->sent; *p; p = &(*p)->next)
    if ((*p)->from == from && (*p)->to == to && (*p)->tag == tag) {
      p2p_msg *m = *p;
      *p = m->next;
      deliver(r, from, m->data, m->bytes, m->shape);
      free(m);
      break;
    }
  if (!r->done) {
    p2p_recv **tail = &t->posted;
    while (*tail)
      tail = &(*tail)->next;
    *tail = r;
    r->posted = true;
  }
  pthread_mutex_unlock(&t->mu);
  *handle = r;
  return NULL;
}

/* Waits until r is done, the group aborted or *cancelled is set, looking at the flag every
 * 20 ms (hlo_context_cancel cannot signal this condition variable).  Called with mu held. */
static hlo_status wait_recv(coll_threads *t, p2p_recv *r, const atomic_int *cancelled) {
  while (!r->done && !t->aborted && !(cancelled && atomic_load(cancelled))) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 20 * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
      until.tv_sec++;
      until.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&t->cv, &t->mu, &until);
  }
  if (r->done)
    return r->error[0] ? hlo_status_make(HLO_FAILED_PRECONDITION, "%s", r->error) : NULL;
  if (cancelled && atomic_load(cancelled)) /* before aborted: a cancelled replica aborts the rest */
    return hlo_status_make(HLO_CANCELLED, "cancelled while waiting for replica %d to send", r->from);
  return hlo_status_make(HLO_FAILED_PRECONDITION, "recv abandoned: another replica failed");
}

static hlo_status th_wait(void *impl, void *handle, const atomic_int *cancelled) {
  coll_threads *t = impl;
  p2p_recv *r = handle;
  if (!r)
    return NULL;
  pthread_mutex_lock(&t->mu);
  hlo_status s = wait_recv(t, r, cancelled);
  if (r->posted)
    unlink_recv(t, r);
  pthread_mutex_unlock(&t->mu);
  free(r);
  return s;
}

static void th_forget(void *impl, void *handle) {
  coll_threads *t = impl;
  p2p_recv *r = handle;
  if (!r)
    return;
  pthread_mutex_lock(&t->mu);
  if (r->posted)
    unlink_recv(t, r);
  pthread_mutex_unlock(&t->mu);
  free(r);
}

static void th_destroy(void *impl) {
  coll_threads *t = impl;
  for (p2p_msg *m = t->sent; m;) {
    p2p_msg *next = m->next;
    free(m);
    m = next;
  }
  pthread_mutex_destroy(&t->mu);
  pthread_cond_destroy(&t->cv);
  free(t->slots);
  free(t);
}

static const hlo_coll_backend threads_backend = {
    .exchange = th_exchange,
    .release = th_release,
    .send_start = th_send_start,
    .recv_start = th_recv_start,
    .wait = th_wait,
    .forget = th_forget,
    .abort = th_abort,
    .destroy = th_destroy,
};

hlo_status hlo_coll_threads_create(int32_t num_replicas, const hlo_coll_backend **out_backend, void **out_impl) {
  coll_threads *t = calloc(1, sizeof *t);
  if (!t)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory creating a collective group");
  pthread_mutex_init(&t->mu, NULL);
  pthread_cond_init(&t->cv, NULL);
  t->n = num_replicas;
  *out_backend = &threads_backend;
  *out_impl = t;
  return NULL;
}
