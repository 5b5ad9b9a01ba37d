/* context_test.c — hlo_context and the services models call (hlo/runtime.h, hlo/rt_parallel.h):
 * option checks, parallel loops (every index once, real concurrency, nested loops run inline,
 * NULL context), FIFO feeds (order, sizes, shapes, concurrent producers), custom-call
 * resolution (registered table, libraries, global scope, not found), replica identity, data
 * prepared from constants (kept copies, found by all three keys, replaced, aligned; freed at
 * destroy: the sanitizer pass).
 */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "context_internal.h"
#include "hlo/rt_parallel.h"
#include "hlo/runtime.h"
#include "unit_check.h"


static hlo_context *make(int threads, int replica, int replicas) {
  hlo_context_options o;
  hlo_context_options_init(&o);
  o.num_threads = threads;
  o.replica_id = replica;
  o.num_replicas = replicas;
  hlo_context *c = NULL;
  hlo_status s = hlo_context_create(&o, &c);
  if (s) {
    fprintf(stderr, "create: %s\n", hlo_status_message(s));
    hlo_status_free(s);
    failures++;
  }
  return c;
}

static void expect_error(hlo_status s, hlo_status_code code, const char *needle) {
  CHECK(s != NULL);
  if (!s)
    return;
  CHECK(hlo_status_code_of(s) == code);
  if (!strstr(hlo_status_message(s), needle)) {
    fprintf(stderr, "message '%s' lacks '%s'\n", hlo_status_message(s), needle);
    failures++;
  }
  hlo_status_free(s);
}

static void test_options(void) {
  hlo_context *c = NULL;
  CHECK(hlo_context_create(NULL, &c) == NULL && c);
  CHECK(hlo_rt_num_threads(c) >= 1 && hlo_rt_replica_id(c) == 0 && hlo_rt_num_replicas(c) == 1);
  hlo_context_destroy(c);
  c = make(3, 2, 4);
  CHECK(hlo_rt_num_threads(c) == 3 && hlo_rt_replica_id(c) == 2 && hlo_rt_num_replicas(c) == 4);
  hlo_context_destroy(c);
  hlo_context_options o;
  hlo_context_options_init(&o);
  o.replica_id = 4;
  o.num_replicas = 4;
  expect_error(hlo_context_create(&o, &c), HLO_INVALID_ARGUMENT, "replica_id 4 is not below num_replicas 4");
  CHECK(c == NULL);
  CHECK(hlo_rt_num_threads(NULL) == 1 && hlo_rt_replica_id(NULL) == 0 && hlo_rt_num_replicas(NULL) == 1);
  hlo_context_destroy(NULL);
}

/* ---- parallel loops ---- */

typedef struct marks {
  int *seen;
  hlo_context *ctx;
  int nested_calls;
  pthread_mutex_t mu;
} marks;

static void mark(void *arg, int64_t b, int64_t e) {
  marks *m = arg;
  for (int64_t i = b; i < e; i++)
    m->seen[i]++; /* ranges are disjoint: no two threads touch one index */
}

static void test_every_index_once(void) {
  hlo_context *c = make(4, 0, 1);
  for (int64_t n = 0; n < 200; n += 7) {
    marks m = {.seen = calloc((size_t)n + 1, sizeof(int))};
    hlo_rt_parallel_for(c, n, mark, &m);
    for (int64_t i = 0; i < n; i++)
      CHECK(m.seen[i] == 1);
    free(m.seen);
  }
  marks m = {.seen = calloc(100000, sizeof(int))};
  for (int rep = 0; rep < 50; rep++) /* the pool is reused loop after loop */
    hlo_rt_parallel_for(c, 100000, mark, &m);
  int bad = 0;
  for (int i = 0; i < 100000; i++)
    bad += m.seen[i] != 50;
  CHECK(bad == 0);
  hlo_rt_parallel_for(NULL, 1000, mark, &m); /* no context: inline */
  CHECK(m.seen[0] == 51 && m.seen[999] == 51);
  free(m.seen);
  hlo_context_destroy(c);
}

/* Many threads (more than this machine's cores), thousands of short loops one after another
 * with the workers now spinning, now asleep: every index of every loop runs exactly once, and
 * every loop returns (chunks are claimed without a lock; hlo_pool). */
static void test_many_short_loops(void) {
  hlo_context *c = make(24, 0, 1);
  int *seen = calloc(80, sizeof(int));
  int bad = 0;
  for (int rep = 0; rep < 6000; rep++) {
    int64_t n = 1 + rep % 70;
    marks m = {.seen = seen};
    memset(seen, 0, 80 * sizeof(int));
    hlo_rt_parallel_for(c, n, mark, &m);
    for (int64_t i = 0; i < 80; i++)
      bad += seen[i] != (i < n);
    if (rep % 1000 == 999) { /* long enough for every worker to go to sleep */
      struct timespec t = {0, 20 * 1000 * 1000};
      nanosleep(&t, NULL);
    }
  }
  CHECK(bad == 0);
  free(seen);
  hlo_context_destroy(c);
}

/* Range 0 waits until some other range has started: only possible if two run at once. */
typedef struct rendezvous {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int others_started;
  int timed_out;
} rendezvous;

static void meet(void *arg, int64_t b, int64_t e) {
  rendezvous *r = arg;
  pthread_mutex_lock(&r->mu);
  if (b == 0) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += 10;
    while (!r->others_started && !r->timed_out)
      if (pthread_cond_timedwait(&r->cv, &r->mu, &t) != 0)
        r->timed_out = 1;
  } else {
    r->others_started++;
    pthread_cond_broadcast(&r->cv);
  }
  pthread_mutex_unlock(&r->mu);
}

static void test_concurrency(void) {
  hlo_context *c = make(2, 0, 1);
  rendezvous r = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
  hlo_rt_parallel_for(c, 64, meet, &r);
  CHECK(!r.timed_out && r.others_started > 0);
  hlo_context_destroy(c);
}

static void outer(void *arg, int64_t b, int64_t e) {
  marks *m = arg;
  for (int64_t i = b; i < e; i++) {
    marks inner = {.seen = m->seen + i * 10};
    hlo_rt_parallel_for(m->ctx, 10, mark, &inner); /* busy pool: runs inline */
  }
}

static void test_nested(void) {
  hlo_context *c = make(4, 0, 1);
  marks m = {.seen = calloc(1000, sizeof(int)), .ctx = c};
  hlo_rt_parallel_for(c, 100, outer, &m);
  int bad = 0;
  for (int i = 0; i < 1000; i++)
    bad += m.seen[i] != 1;
  CHECK(bad == 0);
  free(m.seen);
  hlo_context_destroy(c);
}

/* ---- feeds ---- */

typedef struct producer {
  hlo_context *ctx;
  int id;
} producer;

static void *produce(void *arg) {
  producer *p = arg;
  for (int i = 0; i < 500; i++) {
    int v[2] = {p->id, i};
    hlo_status s = hlo_infeed_push(p->ctx, v, sizeof v);
    if (s) {
      hlo_status_free(s);
      return (void *)1;
    }
  }
  return NULL;
}

static void test_feeds(void) {
  hlo_context *c = make(1, 0, 1);
  float a[3] = {1, 2, 3}, b[2] = {4, 5}, got[3] = {0};
  CHECK(hlo_infeed_push(c, a, sizeof a) == NULL);
  CHECK(hlo_infeed_push(c, b, sizeof b) == NULL);
  CHECK(hlo_rt_infeed(c, got, sizeof a) == NULL && got[0] == 1 && got[2] == 3);
  expect_error(hlo_rt_infeed(c, got, sizeof a), HLO_FAILED_PRECONDITION, "has 8 bytes but the model wants 12");
  expect_error(hlo_rt_infeed(c, got, sizeof a), HLO_FAILED_PRECONDITION, "infeed: the queue is empty");
  expect_error(hlo_rt_infeed(NULL, got, 4), HLO_FAILED_PRECONDITION, "queue is empty");

  int64_t dims[2] = {2, 3};
  float six[6] = {0, 1, 2, 3, 4, 5};
  CHECK(hlo_rt_outfeed(c, six, sizeof six, HLO_DTYPE_IR_F32, 2, dims) == NULL);
  CHECK(hlo_rt_outfeed(c, b, sizeof b, HLO_DTYPE_IR_S32, 0, NULL) == NULL);
  CHECK(hlo_outfeed_count(c) == 2);
  void *data = NULL;
  size_t n = 0;
  int32_t dt = 0, rank = 0;
  int64_t od[64];
  CHECK(hlo_outfeed_pop_array(c, &data, &n, &dt, &rank, od) == NULL);
  CHECK(n == sizeof six && dt == HLO_DTYPE_IR_F32 && rank == 2 && od[0] == 2 && od[1] == 3);
  CHECK(data && memcmp(data, six, sizeof six) == 0);
  free(data);
  CHECK(hlo_outfeed_pop(c, &data, &n) == NULL && n == sizeof b && memcmp(data, b, sizeof b) == 0);
  free(data);
  expect_error(hlo_outfeed_pop(c, &data, &n), HLO_FAILED_PRECONDITION, "outfeed queue is empty");
  expect_error(hlo_rt_outfeed(NULL, b, 8, HLO_DTYPE_IR_S32, 0, NULL), HLO_FAILED_PRECONDITION, "without a context");
  CHECK(hlo_outfeed_count(NULL) == 0);

  /* Four producers at once: every buffer arrives, each producer's in its own order. */
  pthread_t t[4];
  producer p[4];
  for (int i = 0; i < 4; i++) {
    p[i] = (producer){c, i};
    pthread_create(&t[i], NULL, produce, &p[i]);
  }
  for (int i = 0; i < 4; i++) {
    void *r = NULL;
    pthread_join(t[i], &r);
    CHECK(r == NULL);
  }
  int next[4] = {0}, order_ok = 1;
  for (int k = 0; k < 2000; k++) {
    int v[2] = {-1, -1};
    hlo_status s = hlo_rt_infeed(c, v, sizeof v);
    CHECK(s == NULL);
    hlo_status_free(s);
    if (v[0] < 0 || v[0] > 3 || v[1] != next[v[0]]++)
      order_ok = 0;
  }
  CHECK(order_ok);
  expect_error(hlo_rt_infeed(c, got, 8), HLO_FAILED_PRECONDITION, "empty");
  /* Buffers left in the queues are freed with the context. */
  CHECK(hlo_infeed_push(c, a, sizeof a) == NULL);
  CHECK(hlo_rt_outfeed(c, a, sizeof a, HLO_DTYPE_IR_F32, 1, (int64_t[]){3}) == NULL);
  hlo_context_destroy(c);
}

/* ---- custom calls ---- */

static void my_target(void) {}
static void my_other(void) {}

static void test_custom_calls(void) {
  hlo_context *c = make(1, 0, 1);
  void *fn = NULL;
  CHECK(hlo_custom_call_register(c, "my_target", (void *)my_target) == NULL);
  CHECK(hlo_rt_custom_call_resolve(c, "my_target", &fn) == NULL && fn == (void *)my_target);
  CHECK(hlo_custom_call_register(c, "my_target", (void *)my_other) == NULL);
  CHECK(hlo_rt_custom_call_resolve(c, "my_target", &fn) == NULL && fn == (void *)my_other);
  /* The process's global scope: a libc function. */
  CHECK(hlo_rt_custom_call_resolve(c, "strlen", &fn) == NULL && fn == dlsym(RTLD_DEFAULT, "strlen"));
  CHECK(hlo_rt_custom_call_resolve(NULL, "strlen", &fn) == NULL && fn != NULL);
  /* A library added to the context. */
  CHECK(hlo_custom_call_add_library(c, "libm.so.6") == NULL);
  void *h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
  CHECK(hlo_rt_custom_call_resolve(c, "cos", &fn) == NULL && h && fn == dlsym(h, "cos"));
  if (h) {
    double (*f)(double) = (double (*)(double))fn;
    CHECK(f && f(0.0) == 1.0);
    dlclose(h);
  }
  expect_error(hlo_custom_call_add_library(c, "/nonexistent/libnothing.so"), HLO_NOT_FOUND,
               "/nonexistent/libnothing.so: cannot load custom-call library");
  expect_error(hlo_rt_custom_call_resolve(c, "no_such_target_xyz", &fn), HLO_NOT_FOUND,
               "custom-call target 'no_such_target_xyz' not found (looked in 2 registered targets, 1 custom-call library");
  CHECK(fn == NULL);
  expect_error(hlo_rt_custom_call_resolve(NULL, "no_such_target_xyz", &fn), HLO_NOT_FOUND, "without a context");
  expect_error(hlo_custom_call_register(c, "x", NULL), HLO_INVALID_ARGUMENT, "no context, target or function");
  /* Every target a model lists, resolved at load; a model built before the list existed
   * (a smaller struct_size) is left to resolve at first use. */
  const char *const targets[] = {"my_target", "strlen", "no_such_target_xyz"};
  hlo_module_desc d = {.struct_size = sizeof d, .module_name = "m", .num_custom_call_targets = 2,
                       .custom_call_targets = targets};
  CHECK(hlo_custom_call_resolve_all(c, &d) == NULL);
  d.num_custom_call_targets = 3;
  expect_error(hlo_custom_call_resolve_all(c, &d), HLO_NOT_FOUND,
               "loading m: custom-call target 'no_such_target_xyz' not found");
  d.struct_size = (uint32_t)offsetof(hlo_module_desc, num_custom_call_targets);
  CHECK(hlo_custom_call_resolve_all(c, &d) == NULL);
  hlo_context_destroy(c);
}

/* A context whose layout fields say another runtime made it is refused, not misread. */
static void test_foreign_layout(void) {
  hlo_context *c = make(2, 1, 2);
  uint32_t *layout = (uint32_t *)c + 1; /* the second field: layout_size */
  uint32_t saved = *layout;
  *layout = saved + 8;
  float buf[1];
  expect_error(hlo_rt_infeed(c, buf, 4), HLO_FAILED_PRECONDITION, "another version of the hloc runtime");
  expect_error(hlo_rt_outfeed(c, buf, 4, HLO_DTYPE_IR_F32, 0, NULL), HLO_FAILED_PRECONDITION, "another version");
  void *fn = NULL;
  expect_error(hlo_rt_custom_call_resolve(c, "strlen", &fn), HLO_FAILED_PRECONDITION, "another version");
  CHECK(hlo_rt_num_threads(c) == 1 && hlo_rt_replica_id(c) == 0 && hlo_rt_num_replicas(c) == 1);
  marks m = {.seen = calloc(10, sizeof(int))};
  hlo_rt_parallel_for(c, 10, mark, &m); /* inline */
  CHECK(m.seen[0] == 1 && m.seen[9] == 1);
  free(m.seen);
  *layout = saved;
  CHECK(hlo_rt_replica_id(c) == 1);
  hlo_context_destroy(c);
}

/* hlo_ctx_prepared_keep/find: copies kept, found only by the same site, source and key,
 * replaced in place, 64-byte aligned; none for a NULL context. */
static void test_prepared(void) {
  hlo_context *c = make(1, 0, 1);
  int site, source;
  char layout[3] = "ab", data[100];
  memset(data, 7, sizeof data);
  CHECK(hlo_ctx_prepared_find(c, &site, &source, 5) == NULL);
  CHECK(hlo_ctx_prepared_keep(c, &site, &source, 5, layout, sizeof layout, data, sizeof data));
  memset(data, 9, sizeof data); /* the context kept a copy */
  const hlo_ctx_prepared *e = hlo_ctx_prepared_find(c, &site, &source, 5);
  CHECK(e && e->data_bytes == 100 && ((const char *)e->data)[99] == 7 && e->layout_bytes == 3 &&
        strcmp(e->layout, "ab") == 0 && (uintptr_t)e->data % 64 == 0);
  CHECK(!hlo_ctx_prepared_find(c, &site, &source, 6) && !hlo_ctx_prepared_find(c, &source, &source, 5) &&
        !hlo_ctx_prepared_find(c, &site, &site, 5));
  CHECK(hlo_ctx_prepared_keep(c, &site, &source, 5, layout, sizeof layout, data, 10));
  e = hlo_ctx_prepared_find(c, &site, &source, 5);
  CHECK(e && e->data_bytes == 10 && ((const char *)e->data)[0] == 9);
  CHECK(hlo_ctx_prepared_keep(c, &site, &source, 6, layout, sizeof layout, data, sizeof data));
  CHECK(hlo_ctx_prepared_find(c, &site, &source, 5) && hlo_ctx_prepared_find(c, &site, &source, 6));
  CHECK(!hlo_ctx_prepared_keep(NULL, &site, &source, 5, layout, 1, data, 1) &&
        !hlo_ctx_prepared_find(NULL, &site, &source, 5));
  hlo_context_destroy(c);
}

int main(void) {
  test_options();
  test_prepared();
  test_every_index_once();
  test_many_short_loops();
  test_concurrency();
  test_nested();
  test_feeds();
  test_custom_calls();
  test_foreign_layout();
  printf("context_test: %s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
