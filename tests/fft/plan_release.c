/* plan_release.c — a model's fft plans are built once per call site and released when model.so
 * is unloaded.
 *
 * Usage: fft_plan_release MODEL.so (tests/fft/prime_fft.hlo: one FFT of the prime length
 * 100003, whose Bluestein plan holds several MiB).  Counts the bytes malloc has handed out
 * (mallinfo2: arena and mmapped blocks, every arena): a second call must not build the plan
 * again (memory in use grows by less than 1 MiB), and dlclose, which runs the destructor the
 * code generator registered in llvm.global_dtors, must give the plan back (at least 4 MiB
 * freed).  Without the destructor the plan would stay allocated after unloading, out of reach.
 * Exit 77 (skipped) when malloc's statistics do not see the plan at all (another allocator,
 * e.g. AddressSanitizer's, whose leak checker then reports a plan that is never released).
 */
#include <dlfcn.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

#include "hlo/abi.h"
#include "hlo/runtime.h"

#define MIB (1024.0 * 1024.0)

static double in_use(void) {
  struct mallinfo2 m = mallinfo2();
  return (double)m.uordblks + (double)m.hblkhd;
}

static int fail(const char *what, hlo_status s) {
  printf("FAIL: %s%s%s\n", what, s ? ": " : "", s ? hlo_status_message(s) : "");
  hlo_status_free(s);
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 2)
    return fail("usage: fft_plan_release MODEL.so", NULL);
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  hlo_describe_fn describe = lib ? (hlo_describe_fn)dlsym(lib, "hlo_module_describe") : NULL;
  if (!describe)
    return fail(dlerror(), NULL);
  const hlo_module_desc *d = describe();
  if (d->num_params != 1 || d->num_results != 1)
    return fail("the model is not one fft", NULL);
  void *params[1] = {calloc(1, (size_t)d->params[0].byte_size + 1)};
  void *results[1] = {calloc(1, (size_t)d->results[0].byte_size + 1)};
  if (!params[0] || !results[0])
    return fail("out of memory", NULL);
  ((float *)params[0])[0] = 1.0f; /* an impulse: every output is 1 */
  hlo_context_options o;
  hlo_context_options_init(&o);
  o.num_threads = 1;
  hlo_context *ctx = NULL;
  hlo_status s = hlo_context_create(&o, &ctx);
  double before_first = in_use();
  if (s || (s = d->run(ctx, params, results)))
    return fail("first call", s);
  double after_first = in_use();
  if (after_first - before_first < 4.0 * MIB) { /* e.g. under ASan, whose allocator glibc does not see */
    printf("skipped: malloc's statistics do not show the plan (%.2f MiB); not glibc's allocator?\n",
           (after_first - before_first) / MIB);
    return 77;
  }
  if ((s = d->run(ctx, params, results)))
    return fail("second call", s);
  double grown = in_use() - after_first;
  const float *y = results[0];
  int64_t n = d->results[0].byte_size / 8;
  for (int64_t k = 0; k < n; k += 997)
    if (y[2 * k] < 0.999f || y[2 * k] > 1.001f || y[2 * k + 1] < -1e-3f || y[2 * k + 1] > 1e-3f)
      return fail("the fft of an impulse is not all ones", NULL);
  hlo_context_destroy(ctx);
  free(params[0]);
  free(results[0]);
  double loaded = in_use();
  dlclose(lib);
  double freed = loaded - in_use();
  printf("second call: %+.2f MiB in use; dlclose freed %.2f MiB\n", grown / MIB, freed / MIB);
  if (grown >= 1.0 * MIB)
    return fail("the second call built its plan again", NULL);
  if (freed < 4.0 * MIB)
    return fail("unloading the model did not release its fft plan", NULL);
  printf("ok\n");
  return 0;
}
