/* collectives_test.c — how collectives.c hands a collective to a backend's own primitives
 * (native_ok / native_run, collectives_internal.h), through a recording fake backend on 2
 * replicas, with hand-written descriptions (hlo/rt.h): the reducer code decoded (add, max, an
 * unrecognized computation), every leaf asked before any runs and the exchange used when one
 * is refused, the rows of an all-gather along an inner dimension, collectives the native path
 * does not take (the tuple all-to-all, a permute naming a target twice) never offered, and
 * the groups and pairs handed over.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectives_internal.h"
#include "hlo/rt.h"
#include "hlo/runtime.h"
#include "unit_check.h"


/* The fake: native_ok says yes to leaves below yes_below; native_run records the last leaf
 * and fills the result with 7s; exchange shows this replica's leaves as every replica's. */
typedef struct fake {
  int64_t yes_below;
  int asked, ran, exchanged;
  hlo_coll_native last;
  hlo_coll_reducer last_red;
  const void *views[128];
} fake;

static bool f_ok(void *impl, const hlo_coll_native *op) {
  fake *f = impl;
  f->asked++;
  return op->leaf < f->yes_below;
}

static hlo_status f_run(void *impl, const hlo_coll_native *op) {
  fake *f = impl;
  f->ran++;
  f->last = *op;
  f->last_red = *op->reducer;
  int64_t n = op->op == HLO_COLL_NATIVE_ALL_GATHER       ? 2 * op->bytes /* two replicas */
              : op->op == HLO_COLL_NATIVE_REDUCE_SCATTER ? op->bytes / 2
                                                         : op->bytes;
  memset(op->recv, 7, (size_t)n);
  return NULL;
}

static hlo_status f_exchange(void *impl, int32_t replica, int32_t n, const void *const *leaves, const int64_t *bytes,
                             const void *const **out_all) {
  (void)replica;
  (void)bytes;
  fake *f = impl;
  f->exchanged++;
  for (int r = 0; r < 2; r++)
    for (int32_t i = 0; i < n; i++)
      f->views[r * n + i] = leaves[i];
  *out_all = f->views;
  return NULL;
}

static hlo_status f_release(void *impl, int32_t replica) {
  (void)impl;
  (void)replica;
  return NULL;
}

static void f_nothing(void *impl) { (void)impl; }

static const hlo_coll_backend fake_backend = {.exchange = f_exchange,
                                              .release = f_release,
                                              .abort = f_nothing,
                                              .destroy = f_nothing,
                                              .native_ok = f_ok,
                                              .native_run = f_run};

static hlo_status add_f32(hlo_context *ctx, void *const *params, void *const *results, void *frame) {
  (void)ctx;
  (void)frame;
  *(float *)results[0] = *(const float *)params[0] + *(const float *)params[1];
  return NULL;
}

typedef struct rig {
  fake f;
  hlo_collective_group g;
  hlo_context *ctx;
} rig;

static void rig_open(rig *r, int64_t yes_below) {
  memset(r, 0, sizeof *r);
  r->f.yes_below = yes_below;
  r->g = (hlo_collective_group){HLO_GROUP_MAGIC, sizeof r->g, 2, &fake_backend, &r->f};
  hlo_context_options o;
  hlo_context_options_init(&o);
  o.num_threads = 1;
  o.replica_id = 0;
  o.num_replicas = 2;
  o.group = &r->g;
  expect_ok(hlo_context_create(&o, &r->ctx));
}

static void run(rig *r, const int64_t *desc, void *const *ops, void *const *res) {
  expect_ok(hlo_rt_collective(r->ctx, desc, "c", ops, res, (void *)add_f32));
}

/* all-reduce of f32[4] with each reducer code: handed over, the code decoded. */
static void test_reducer_codes(void) {
  const int64_t codes[] = {HLO_DTYPE_IR_F32, (int64_t)HLO_RT_REDUCER_MAX << 8 | HLO_DTYPE_IR_S32, -1};
  const int32_t want_op[] = {HLO_RT_REDUCER_ADD, HLO_RT_REDUCER_MAX, -1};
  const int32_t want_dtype[] = {HLO_DTYPE_IR_F32, HLO_DTYPE_IR_S32, -1};
  for (int k = 0; k < 3; k++) {
    rig r;
    rig_open(&r, 64);
    float x[4] = {1, 2, 3, 4}, y[4] = {0};
    int64_t d[] = {0, 1, -1, 0, 0, 0, 4, 1, 4, 16, codes[k]};
    run(&r, d, (void *[]){x}, (void *[]){y});
    CHECK(r.f.ran == 1 && r.f.exchanged == 0);
    CHECK(r.f.last.op == HLO_COLL_NATIVE_ALL_REDUCE && r.f.last.send == x && r.f.last.recv == y);
    CHECK(r.f.last.bytes == 16 && r.f.last.leaf == 0 && r.f.last.replica == 0 && r.f.last.groups[0] == 0);
    CHECK(r.f.last_red.op == want_op[k] && r.f.last_red.dtype == want_dtype[k] && r.f.last_red.eb == 4);
    CHECK(r.f.last_red.fn == add_f32 && r.f.last_red.ctx == r.ctx);
    hlo_context_destroy(r.ctx);
  }
}

/* Two leaves, the second refused: nothing runs natively, the exchange sums in order. */
static void test_all_or_nothing(void) {
  rig r;
  rig_open(&r, 1);
  float a[4] = {1, 2, 3, 4}, b[2] = {5, 6}, ra[4], rb[2];
  int64_t d[] = {0, 2, -1, 0, 0, 0, 4, 1, 4, 4, 1, 2, 16, 8, HLO_DTYPE_IR_F32};
  run(&r, d, (void *[]){a, b}, (void *[]){ra, rb});
  CHECK(r.f.asked == 2 && r.f.ran == 0 && r.f.exchanged == 1);
  CHECK(ra[0] == 2 && ra[3] == 8 && rb[0] == 10 && rb[1] == 12);
  hlo_context_destroy(r.ctx);
  rig_open(&r, 2);
  run(&r, d, (void *[]){a, b}, (void *[]){ra, rb});
  CHECK(r.f.asked == 2 && r.f.ran == 2 && r.f.exchanged == 0 && r.f.last.leaf == 1 && r.f.last.bytes == 8);
  hlo_context_destroy(r.ctx);
}

/* all-gather along dimension 0 and along dimension 1 of f32[2,2] (2 rows: outer 2) handed
 * over; the tuple all-to-all as swaps with member i; the in-place permute never offered. */
static void test_layouts(void) {
  rig r;
  rig_open(&r, 64);
  float x[4] = {1, 2, 3, 4}, y[8];
  int64_t outer[] = {1, 1, 0, 0, 0, 0, 4, 2, 2, 2, 32, -1};
  run(&r, outer, (void *[]){x}, (void *[]){y});
  CHECK(r.f.ran == 1 && r.f.last.op == HLO_COLL_NATIVE_ALL_GATHER && r.f.last.bytes == 16 && r.f.last.outer == 1);
  hlo_context_destroy(r.ctx);
  rig_open(&r, 64);
  int64_t inner[] = {1, 1, 1, 0, 0, 0, 4, 2, 2, 2, 32, -1};
  run(&r, inner, (void *[]){x}, (void *[]){y});
  CHECK(r.f.ran == 1 && r.f.last.outer == 2);
  hlo_context_destroy(r.ctx);
  rig_open(&r, 64);
  int32_t a = 5, b = 6, ra = 0, rb = 0;
  int64_t tuple[] = {4, 2, -1, 1, 2, 1, 0, 0, 4, 0, 4, 0, 4, 4, -1};
  run(&r, tuple, (void *[]){&a, &b}, (void *[]){&ra, &rb});
  CHECK(r.f.ran == 2 && r.f.last.op == HLO_COLL_NATIVE_SWAP && r.f.last.leaf == 1 && r.f.last.peer == 0);
  hlo_context_destroy(r.ctx);
  /* in place: f32[4] buffers in and out, one start index each (u32, not per pair), slice 2 */
  rig_open(&r, 64);
  float in[4] = {1, 2, 3, 4}, out[4] = {9, 9, 9, 9}, res[4];
  uint32_t s_in = 1, s_out = 0;
  int64_t inplace[] = {7, 4, -1, 0, 0, 1, 1, 0, 4, 1, 4, 4, 1, 4, 4, 0, 4, 0, 1, 0, 0, 2, 0, 0, 16, -1};
  run(&r, inplace, (void *[]){in, out, &s_in, &s_out}, (void *[]){res});
  CHECK(r.f.asked == 0 && r.f.exchanged == 1 && res[0] == 2 && res[1] == 3 && res[2] == 9);
  hlo_context_destroy(r.ctx);
}

/* Permutes: pairs handed over; a target named twice left to the exchange.  A reduce-scatter
 * with groups: the description's groups handed over. */
static void test_pairs_and_groups(void) {
  rig r;
  rig_open(&r, 64);
  int32_t x[2] = {5, 6}, y[2];
  int64_t good[] = {5, 1, -1, 0, 0, 2, 0, 1, 1, 0, 4, 1, 2, 8, -1};
  run(&r, good, (void *[]){x}, (void *[]){y});
  CHECK(r.f.ran == 1 && r.f.last.op == HLO_COLL_NATIVE_PERMUTE && r.f.last.n_pairs == 2 &&
        r.f.last.pairs == good + 6);
  hlo_context_destroy(r.ctx);
  rig_open(&r, 64);
  int64_t twice[] = {5, 1, -1, 0, 0, 2, 0, 1, 1, 1, 4, 1, 2, 8, -1};
  run(&r, twice, (void *[]){x}, (void *[]){y});
  CHECK(r.f.asked == 0 && r.f.exchanged == 1 && y[0] == 0 && y[1] == 0); /* replica 0: no source */
  hlo_context_destroy(r.ctx);
  rig_open(&r, 64);
  float a[4] = {1, 2, 3, 4}, b[2];
  int64_t rs[] = {2, 1, 0, 1, 2, 1, 0, 0, 4, 1, 4, 8, HLO_DTYPE_IR_F32};
  run(&r, rs, (void *[]){a}, (void *[]){b});
  CHECK(r.f.ran == 1 && r.f.last.op == HLO_COLL_NATIVE_REDUCE_SCATTER && r.f.last.groups == rs + 3);
  CHECK(r.f.last.replica == 0 && r.f.last.bytes == 16);
  hlo_context_destroy(r.ctx);
}

int main(void) {
  test_reducer_codes();
  test_all_or_nothing();
  test_layouts();
  test_pairs_and_groups();
  if (failures) {
    fprintf(stderr, "%d failures\n", failures);
    return 1;
  }
  printf("collectives_test: ok\n");
  return 0;
}
