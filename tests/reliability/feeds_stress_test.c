/* feeds_stress_test.c — the infeed and outfeed queues under 4 concurrent producers and 4
 * concurrent consumers on one context: every producer sends 20 000 numbered buffers; the
 * consumers together must receive each (producer, sequence) pair exactly once, and each
 * producer's buffers in the order sent (FIFO).  Infeed: hlo_infeed_push -> hlo_rt_infeed (the
 * model's side); outfeed: hlo_rt_outfeed -> hlo_outfeed_pop.  No model needed.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/rt_parallel.h"
#include "hlo/runtime.h"

enum { PRODUCERS = 4, CONSUMERS = 4, PER_PRODUCER = 20000 };

typedef struct stress {
  hlo_context *ctx;
  int outfeed;                 /* 0: infeed, 1: outfeed */
  atomic_int received;         /* buffers consumed so far */
  atomic_uchar seen[PRODUCERS][PER_PRODUCER];
  atomic_int errors;
} stress;

typedef struct role {
  stress *s;
  int id;
  int64_t last[PRODUCERS];     /* consumer: last sequence seen per producer */
} role;

static hlo_status send_one(stress *s, const int64_t msg[2]) {
  if (!s->outfeed)
    return hlo_infeed_push(s->ctx, msg, 2 * sizeof *msg);
  int64_t dims[1] = {2};
  return hlo_rt_outfeed(s->ctx, msg, 2 * sizeof *msg, HLO_DTYPE_IR_S64, 1, dims);
}

/* Returns 1 with msg filled, 0 when the queue was empty. */
static int take_one(stress *s, int64_t msg[2]) {
  if (!s->outfeed) {
    hlo_status st = hlo_rt_infeed(s->ctx, msg, 2 * sizeof *msg);
    int got = st == NULL;
    hlo_status_free(st);
    return got;
  }
  void *data = NULL;
  size_t n = 0;
  hlo_status st = hlo_outfeed_pop(s->ctx, &data, &n);
  int got = st == NULL;
  hlo_status_free(st);
  if (got) {
    if (n != 2 * sizeof *msg)
      atomic_fetch_add(&s->errors, 1);
    else
      memcpy(msg, data, n);
    free(data);
  }
  return got;
}

static void *producer(void *arg) {
  role *r = arg;
  for (int64_t q = 0; q < PER_PRODUCER; q++) {
    int64_t msg[2] = {r->id, q};
    hlo_status st = send_one(r->s, msg);
    if (st)
      atomic_fetch_add(&r->s->errors, 1);
    hlo_status_free(st);
  }
  return NULL;
}

static void record(role *r, const int64_t msg[2]) {
  stress *s = r->s;
  if (msg[0] < 0 || msg[0] >= PRODUCERS || msg[1] < 0 || msg[1] >= PER_PRODUCER) {
    atomic_fetch_add(&s->errors, 1);
    return;
  }
  if (atomic_fetch_add(&s->seen[msg[0]][msg[1]], 1) != 0) /* a duplicate */
    atomic_fetch_add(&s->errors, 1);
  if (msg[1] <= r->last[msg[0]]) /* out of order for this consumer */
    atomic_fetch_add(&s->errors, 1);
  r->last[msg[0]] = msg[1];
}

static void *consumer(void *arg) {
  role *r = arg;
  for (int p = 0; p < PRODUCERS; p++)
    r->last[p] = -1;
  while (atomic_load(&r->s->received) < PRODUCERS * PER_PRODUCER) {
    int64_t msg[2];
    if (take_one(r->s, msg)) {
      atomic_fetch_add(&r->s->received, 1);
      record(r, msg);
    }
  }
  return NULL;
}

static int run(int outfeed) {
  stress *s = calloc(1, sizeof *s);
  hlo_context_options o;
  hlo_context_options_init(&o);
  o.num_threads = 1;
  if (!s || hlo_context_create(&o, &s->ctx))
    return 1;
  s->outfeed = outfeed;
  pthread_t t[PRODUCERS + CONSUMERS];
  role roles[PRODUCERS + CONSUMERS];
  for (int i = 0; i < PRODUCERS + CONSUMERS; i++) {
    roles[i] = (role){.s = s, .id = i < PRODUCERS ? i : i - PRODUCERS};
    if (pthread_create(&t[i], NULL, i < PRODUCERS ? producer : consumer, &roles[i]) != 0)
      return 1;
  }
  for (int i = 0; i < PRODUCERS + CONSUMERS; i++)
    pthread_join(t[i], NULL);
  int missing = 0;
  for (int p = 0; p < PRODUCERS; p++)
    for (int q = 0; q < PER_PRODUCER; q++)
      missing += atomic_load(&s->seen[p][q]) != 1;
  size_t left = outfeed ? hlo_outfeed_count(s->ctx) : 0;
  int errors = atomic_load(&s->errors);
  printf("%s: %d producers x %d buffers, %d consumers: %d received, %d missing or duplicated, %d errors, %zu left\n",
         outfeed ? "outfeed" : "infeed", PRODUCERS, PER_PRODUCER, CONSUMERS, atomic_load(&s->received), missing,
         errors, left);
  hlo_context_destroy(s->ctx);
  free(s);
  return missing || errors || left;
}

int main(void) {
  int bad = run(0);
  bad |= run(1);
  return bad;
}
