/* channels_test.c — Send/Recv in the runtime (channels.c, the threads backend's point-to-point
 * part) through the C API and the functions compiled models call, with hand-written
 * descriptions: host callbacks (per channel and default), host queues (order, shape checks,
 * empty channel, blocking recv fed from another thread), transfers between two replica
 * threads whichever side comes first, a shape mismatch, an aborted group, a cancelled wait,
 * and -done misuse.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hlo/rt.h"
#include "hlo/rt_parallel.h"
#include "hlo/runtime.h"
#include "unit_check.h"


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

static hlo_context *make(int replica, int replicas, int32_t timeout_ms, hlo_collective_group *g) {
  hlo_context_options o;
  hlo_context_options_init(&o);
  o.num_threads = 1;
  o.replica_id = replica;
  o.num_replicas = replicas;
  o.infeed_timeout_ms = timeout_ms;
  o.group = g;
  hlo_context *c = NULL;
  expect_ok(hlo_context_create(&o, &c));
  return c;
}

/* Descriptions (hlo/rt.h) of one f32[4] leaf (or f32[3]) on a channel, host or with pairs. */
static const int64_t host_f32x4[] = {1, 1, 0, 1, HLO_DTYPE_IR_F32, 1, 4, 16};
static const int64_t host_f32x4_ch2[] = {2, 1, 0, 1, HLO_DTYPE_IR_F32, 1, 4, 16};
static const int64_t dev01_f32x4[] = {5, 0, 1, 0, 1, 1, HLO_DTYPE_IR_F32, 1, 4, 16};
static const int64_t dev01_f32x3[] = {5, 0, 1, 0, 1, 1, HLO_DTYPE_IR_F32, 1, 3, 12};
static const int64_t done_f32x4[] = {5, 0, 0, 1, HLO_DTYPE_IR_F32, 1, 4, 16};
static const int64_t done_f32x3[] = {5, 0, 0, 1, HLO_DTYPE_IR_F32, 1, 3, 12};

typedef struct seen {
  int calls;
  int64_t channel;
  float data[4];
  int32_t dtype, rank;
  int64_t dim0;
} seen;

static int on_send(void *user, int64_t channel, const char *instr, const void *data, size_t nbytes, int32_t dtype,
                   int32_t rank, const int64_t *dims) {
  seen *s = user;
  (void)instr;
  s->calls++;
  s->channel = channel;
  memcpy(s->data, data, nbytes < sizeof s->data ? nbytes : sizeof s->data);
  s->dtype = dtype;
  s->rank = rank;
  s->dim0 = rank > 0 ? dims[0] : -1;
  return 0;
}

static int on_recv(void *user, int64_t channel, const char *instr, void *dst, size_t nbytes, int32_t dtype,
                   int32_t rank, const int64_t *dims) {
  (void)instr;
  (void)dtype;
  (void)rank;
  (void)dims;
  int *calls = user;
  ++*calls;
  float *f = dst;
  for (size_t i = 0; i < nbytes / 4; i++)
    f[i] = (float)(channel * 100 + (int64_t)i);
  return 0;
}

static int failing(void *user, int64_t channel, const char *instr, void *dst, size_t nbytes, int32_t dtype,
                   int32_t rank, const int64_t *dims) {
  (void)user, (void)channel, (void)instr, (void)dst, (void)nbytes, (void)dtype, (void)rank, (void)dims;
  return 7;
}

static void test_host_send(void) {
  hlo_context *c = make(0, 1, 0, NULL);
  float x[4] = {1, 2, 3, 4};
  void *leaves[1] = {x};
  uint32_t req = 0;
  /* No callback: queued for hlo_channel_pop. */
  expect_ok(hlo_rt_send(c, host_f32x4, "s", leaves, &req));
  CHECK(req != 0);
  expect_ok(hlo_rt_send_done(c, "sd", &req));
  CHECK(hlo_channel_count(c, 1) == 1 && hlo_channel_count(c, 2) == 0);
  void *data = NULL;
  size_t n = 0;
  int32_t dt = -2, rank = -2;
  int64_t dims[64];
  expect_ok(hlo_channel_pop(c, 1, &data, &n, &dt, &rank, dims));
  CHECK(n == 16 && dt == HLO_DTYPE_IR_F32 && rank == 1 && dims[0] == 4 && data && ((float *)data)[3] == 4);
  free(data);
  expect_error(hlo_channel_pop(c, 1, &data, &n, &dt, &rank, dims), HLO_FAILED_PRECONDITION, "channel 1");
  /* A channel's callback, then the default (-1) for the others. */
  seen one = {0}, dflt = {0};
  expect_ok(hlo_channel_set_send_callback(c, 1, on_send, &one));
  expect_ok(hlo_channel_set_send_callback(c, -1, on_send, &dflt));
  expect_ok(hlo_rt_send(c, host_f32x4, "s", leaves, &req));
  expect_ok(hlo_rt_send_done(c, "sd", &req));
  expect_ok(hlo_rt_send(c, host_f32x4_ch2, "s2", leaves, &req));
  expect_ok(hlo_rt_send_done(c, "sd2", &req));
  CHECK(one.calls == 1 && one.channel == 1 && one.data[2] == 3 && one.dtype == HLO_DTYPE_IR_F32 && one.dim0 == 4);
  CHECK(dflt.calls == 1 && dflt.channel == 2);
  CHECK(hlo_channel_count(c, 1) == 0);
  hlo_context_destroy(c);
}

static void test_host_recv(void) {
  hlo_context *c = make(0, 1, 0, NULL);
  float a[4] = {5, 6, 7, 8}, b[3] = {1, 2, 3}, out[4] = {0};
  void *leaves[1] = {out};
  int64_t d4[1] = {4}, d3[1] = {3};
  uint32_t req = 0;
  expect_ok(hlo_channel_push(c, 1, a, sizeof a, HLO_DTYPE_IR_F32, 1, d4));
  expect_ok(hlo_channel_push(c, 1, b, sizeof b, HLO_DTYPE_IR_F32, 1, d3));
  expect_ok(hlo_rt_recv(c, host_f32x4, "r", &req));
  expect_ok(hlo_rt_recv_done(c, host_f32x4, "rd", &req, leaves));
  CHECK(out[0] == 5 && out[3] == 8);
  expect_ok(hlo_rt_recv(c, host_f32x4, "r", &req));
  expect_error(hlo_rt_recv_done(c, host_f32x4, "rd", &req, leaves), HLO_FAILED_PRECONDITION,
               "recv 'r' (channel 1): the data pushed is f32[3] (12 bytes) but the recv wants f32[4]");
  expect_ok(hlo_rt_recv(c, host_f32x4, "r", &req));
  expect_error(hlo_rt_recv_done(c, host_f32x4, "rd", &req, leaves), HLO_FAILED_PRECONDITION,
               "recv 'r' (channel 1): no data was pushed to the channel (it wants f32[4]");
  /* A recv callback. */
  int calls = 0;
  expect_ok(hlo_channel_set_recv_callback(c, 2, on_recv, &calls));
  expect_ok(hlo_rt_recv(c, host_f32x4_ch2, "r2", &req));
  expect_ok(hlo_rt_recv_done(c, host_f32x4, "rd2", &req, leaves));
  CHECK(calls == 1 && out[0] == 200 && out[3] == 203);
  expect_ok(hlo_channel_set_recv_callback(c, 2, failing, NULL));
  expect_ok(hlo_rt_recv(c, host_f32x4_ch2, "r2", &req));
  expect_error(hlo_rt_recv_done(c, host_f32x4, "rd2", &req, leaves), HLO_FAILED_PRECONDITION,
               "recv 'r2' (channel 2): the recv callback failed (returned 7)");
  /* -done misuse. */
  uint32_t bogus = 12345;
  expect_error(hlo_rt_send_done(c, "sd", &bogus), HLO_FAILED_PRECONDITION, "no send is waiting with request id 12345");
  expect_ok(hlo_rt_recv(c, host_f32x4, "r", &req));
  expect_error(hlo_rt_send_done(c, "sd", &req), HLO_FAILED_PRECONDITION, "was started by recv 'r', not by a send");
  expect_error(hlo_rt_recv(NULL, host_f32x4, "r", &req), HLO_FAILED_PRECONDITION, "without a context");
  hlo_context_destroy(c);
}

typedef struct pusher {
  hlo_context *c;
  int delay_ms;
} pusher;

static void sleep_ms(int ms) {
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

static void *push_later(void *arg) {
  pusher *p = arg;
  sleep_ms(p->delay_ms);
  float a[4] = {9, 9, 9, 9};
  int64_t d4[1] = {4};
  expect_ok(hlo_channel_push(p->c, 1, a, sizeof a, HLO_DTYPE_IR_F32, 1, d4));
  return NULL;
}

/* infeed_timeout_ms < 0: a host recv waits for a push from another thread. */
static void test_blocking_recv(void) {
  hlo_context *c = make(0, 1, -1, NULL);
  pusher p = {c, 50};
  pthread_t t;
  CHECK(pthread_create(&t, NULL, push_later, &p) == 0);
  float out[4] = {0};
  void *leaves[1] = {out};
  uint32_t req;
  expect_ok(hlo_rt_recv(c, host_f32x4, "r", &req));
  expect_ok(hlo_rt_recv_done(c, host_f32x4, "rd", &req, leaves));
  CHECK(out[0] == 9 && out[3] == 9);
  pthread_join(t, NULL);
  hlo_context_destroy(c);
}

/* ---- between replicas ------------------------------------------------------------------ */

typedef struct replica_run {
  hlo_context *c;
  int delay_ms;         /* before starting */
  const int64_t *desc, *done_desc;
  float out[4];
  hlo_status status;
} replica_run;

/* Replica 0 sends {1,2,3,4}; replica 1 receives (both run recv and send, as in SPMD code). */
static void *run_pair(void *arg) {
  replica_run *r = arg;
  sleep_ms(r->delay_ms);
  float x[4] = {1, 2, 3, 4};
  void *in[1] = {x}, *out[1] = {r->out};
  uint32_t rq = 0, sq = 0;
  hlo_status s = hlo_rt_recv(r->c, r->desc, "rv", &rq);
  if (!s)
    s = hlo_rt_send(r->c, dev01_f32x4, "sn", in, &sq);
  if (!s)
    s = hlo_rt_recv_done(r->c, r->done_desc, "rd", &rq, out);
  if (!s)
    s = hlo_rt_send_done(r->c, "sd", &sq);
  r->status = s;
  return NULL;
}

static void run_two(hlo_collective_group *g, replica_run *r) {
  pthread_t t[2];
  for (int i = 0; i < 2; i++)
    CHECK(pthread_create(&t[i], NULL, run_pair, &r[i]) == 0);
  for (int i = 0; i < 2; i++)
    pthread_join(t[i], NULL);
  (void)g;
}

static void test_replicas(void) {
  hlo_collective_group *g = NULL;
  expect_ok(hlo_collective_group_create(2, &g));
  hlo_context *c0 = make(0, 2, 0, g), *c1 = make(1, 2, 0, g);
  for (int order = 0; order < 2; order++) { /* receiver first, then sender first */
    replica_run r[2] = {{c0, order ? 0 : 30, dev01_f32x4, done_f32x4, {9}, NULL},
                        {c1, order ? 30 : 0, dev01_f32x4, done_f32x4, {9}, NULL}};
    run_two(g, r);
    expect_ok(r[0].status);
    expect_ok(r[1].status);
    CHECK(r[0].out[0] == 0 && r[0].out[3] == 0); /* no source: zeros */
    CHECK(r[1].out[0] == 1 && r[1].out[3] == 4);
  }
  /* The receiver wants f32[3]: it fails naming both shapes; the sender does not. */
  replica_run m[2] = {{c0, 0, dev01_f32x3, done_f32x3, {0}, NULL}, {c1, 0, dev01_f32x3, done_f32x3, {0}, NULL}};
  run_two(g, m);
  expect_ok(m[0].status);
  expect_error(m[1].status, HLO_FAILED_PRECONDITION, "replica 0 sent f32[4] (16 bytes) but this recv wants f32[3]");
  /* A recv whose sender never comes: cancelled, then abandoned when the group aborts. */
  uint32_t rq;
  float out[4];
  void *leaves[1] = {out};
  expect_ok(hlo_rt_recv(c1, dev01_f32x4, "rv", &rq));
  hlo_context_cancel(c1);
  expect_error(hlo_rt_recv_done(c1, done_f32x4, "rd", &rq, leaves), HLO_CANCELLED, "recv 'rv' (channel 5)");
  hlo_context_reset_cancel(c1);
  expect_ok(hlo_rt_recv(c1, dev01_f32x4, "rv", &rq));
  hlo_collective_group_abort(g);
  expect_error(hlo_rt_recv_done(c1, done_f32x4, "rd", &rq, leaves), HLO_FAILED_PRECONDITION, "another replica failed");
  expect_ok(hlo_rt_recv(c1, dev01_f32x4, "rv", &rq)); /* left unfinished: freed with the context */
  hlo_context_destroy(c0);
  hlo_context_destroy(c1);
  hlo_collective_group_destroy(g);
  /* Several replicas but no group. */
  hlo_context *lone = make(1, 2, 0, NULL);
  expect_error(hlo_rt_recv(lone, dev01_f32x4, "rv", &rq), HLO_FAILED_PRECONDITION, "no collective group");
  hlo_context_destroy(lone);
}

int main(void) {
  test_host_send();
  test_host_recv();
  test_blocking_recv();
  test_replicas();
  printf("channels_test: %s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
