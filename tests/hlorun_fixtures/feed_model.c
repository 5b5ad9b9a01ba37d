/* feed_model.c — a model written by hand against hlo/abi.h, for hlorun's runtime flags until
 * the code generator emits infeed, outfeed and custom-call (tests/hlorun_cli.cmake builds it
 * as a shared object, with the runtime linked in as hloc links it).
 *
 *   ENTRY (x: f32[3]) -> (f32[3], s32[]):
 *     y = x + infeed()                      (an f32[3] infeed buffer, added in a parallel loop)
 *     r0 = custom-call "hlorun_test_scale"(y)   (the target doubles: void fn(void *out, const void **in))
 *     outfeed(r0)                           (with its shape)
 *     r1 = replica id
 *   A negative x[0] is a run-time error.
 */
#include <string.h>

#include "hlo/abi.h"
#include "hlo/rt.h"
#include "hlo/rt_parallel.h"

#define EXPORT __attribute__((visibility("default")))

typedef struct add_args {
  float *y;
  const float *x, *feed;
} add_args;

static void add_range(void *arg, int64_t begin, int64_t end) {
  add_args *a = arg;
  for (int64_t i = begin; i < end; i++)
    a->y[i] = a->x[i] + a->feed[i];
}

EXPORT hlo_status feed_model(hlo_context *ctx, const float *x, float *r0, int32_t *r1) {
  if (x[0] < 0)
    return hlo_rt_error("feed_model: x[0] is negative");
  float feed[3], y[3];
  hlo_status s = hlo_rt_infeed(ctx, feed, sizeof feed);
  if (s)
    return s;
  add_args a = {y, x, feed};
  hlo_rt_parallel_for(ctx, 3, add_range, &a);
  void *fn = NULL;
  s = hlo_rt_custom_call_resolve(ctx, "hlorun_test_scale", &fn);
  if (s)
    return s;
  const void *ins[1] = {y};
  ((void (*)(void *, const void **))fn)(r0, ins);
  static const int64_t dims[1] = {3};
  s = hlo_rt_outfeed(ctx, r0, 12, HLO_DTYPE_IR_F32, 1, dims);
  if (s)
    return s;
  *r1 = hlo_rt_replica_id(ctx);
  return NULL;
}

static hlo_status run_generic(hlo_context *ctx, void *const *params, void *const *results) {
  return feed_model(ctx, params[0], results[0], results[1]);
}

static const int64_t dims3[1] = {3};
static const hlo_array_desc params[1] = {{HLO_DTYPE_IR_F32, 1, dims3, 12, "x"}};
static const hlo_array_desc results[2] = {{HLO_DTYPE_IR_F32, 1, dims3, 12, "r0"},
                                          {HLO_DTYPE_IR_S32, 0, NULL, 4, "r1"}};
static const hlo_module_desc desc = {
    .abi_version = HLO_ABI_VERSION,
    .struct_size = sizeof(hlo_module_desc),
    .module_name = "feed_model",
    .symbol = "feed_model",
    .compiler_version = "hand-written",
    .num_params = 1,
    .params = params,
    .num_results = 2,
    .results = results,
    .run = run_generic,
    .typed_entry = (void (*)(void))feed_model,
    .features = HLO_FEATURE_INFEED | HLO_FEATURE_OUTFEED | HLO_FEATURE_CUSTOM_CALL,
    .replica_count = 1,
    .num_partitions = 1,
};

EXPORT const hlo_module_desc *feed_model_describe(void) { return &desc; }
EXPORT const hlo_module_desc *hlo_module_describe(void) { return &desc; }
