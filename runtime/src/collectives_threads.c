/* collectives_threads.c — the in-process collective backend: replicas are threads sharing one
 * address space, so an exchange publishes each replica's leaf pointers and meets the others at
 * a barrier; release is a second barrier, after which the buffers may change again.  A group
 * that was aborted (a replica failed) makes every waiting and later call fail instead of
 * waiting forever.  Thread-safe.  Tests: testdata/runtime/coll_* (tests/runtime.cmake).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "collectives_internal.h"

typedef struct coll_threads {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int32_t n, arrived;
  uint64_t generation;
  bool aborted;
  const void **slots;    /* n replicas x max_leaves */
  int32_t max_leaves;
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

static void th_destroy(void *impl) {
  coll_threads *t = impl;
  pthread_mutex_destroy(&t->mu);
  pthread_cond_destroy(&t->cv);
  free(t->slots);
  free(t);
}

static const hlo_coll_backend threads_backend = {th_exchange, th_release, th_abort, th_destroy, NULL};

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
