/* model_util.h — what the reliability tests share: loading tests/reliability/counter.hlo
 * compiled by hloc (path in argv[1], entry symbol "counter") and calling its generic entry.
 * counter(n, x) runs a while loop n times, adding 0.5 to every element of x each time, and
 * returns (n, x + n/2): the expected values are that formula, computed here.
 */
#ifndef HLOC_TESTS_MODEL_UTIL_H
#define HLOC_TESTS_MODEL_UTIL_H

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "hlo/abi.h"
#include "hlo/runtime.h"

#define COUNTER_LEN 64

#define CHECK(cond)                                                      \
  do {                                                                   \
    if (!(cond)) {                                                       \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      exit(1);                                                           \
    }                                                                    \
  } while (0)

static hlo_generic_entry load_counter(const char *so_path) {
  void *h = dlopen(so_path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "dlopen %s: %s\n", so_path, dlerror());
    exit(1);
  }
  hlo_generic_entry run = (hlo_generic_entry)dlsym(h, "counter_run");
  CHECK(run != NULL);
  return run;
}

/* One call: counter(n, x) -> (*out_i, y). */
static hlo_status call_counter(hlo_generic_entry run, hlo_context *ctx, int64_t n, const float *x, int64_t *out_i,
                               float *y) {
  void *params[2] = {&n, (void *)x};
  void *results[2] = {out_i, y};
  return run(ctx, params, results);
}

#endif
