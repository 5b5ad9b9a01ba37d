/* arena_faults.c — the second and later calls of a model touch no new memory.
 *
 * Usage: arena_faults MODEL.so.  Runs the model (random inputs: zeros are enough) once to warm
 * up, then three times more, counting the process's minor page faults around those calls
 * (getrusage): a call that malloc'd or first-touched its temporaries would fault once per
 * 4 KiB page.  The model used (temps.hlo) holds 16 MiB of temporaries that live across a
 * reduction, so they are real buffers, not fused away.  Also checks that an embedder's own
 * arena (hlo_context_set_arena) is used as is, and that one too small is refused.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "hlo/abi.h"
#include "hlo/runtime.h"

static long minor_faults(void) {
  struct rusage u;
  return getrusage(RUSAGE_SELF, &u) == 0 ? u.ru_minflt : -1;
}

static int fail(const char *what, hlo_status s) {
  printf("FAIL: %s%s%s\n", what, s ? ": " : "", s ? hlo_status_message(s) : "");
  hlo_status_free(s);
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 2)
    return fail("usage: arena_faults MODEL.so", NULL);
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  hlo_describe_fn describe = lib ? (hlo_describe_fn)dlsym(lib, "hlo_module_describe") : NULL;
  if (!describe)
    return fail(dlerror(), NULL);
  const hlo_module_desc *d = describe();
  if (d->arena_bytes < 8 << 20)
    return fail("the model's arena is smaller than its 16 MiB of temporaries", NULL);
  void **params = calloc((size_t)d->num_params + 1, sizeof *params);
  void **results = calloc((size_t)d->num_results + 1, sizeof *results);
  for (int i = 0; i < d->num_params; i++)
    params[i] = calloc(1, (size_t)d->params[i].byte_size + 1);
  for (int i = 0; i < d->num_results; i++)
    results[i] = calloc(1, (size_t)d->results[i].byte_size + 1);
  hlo_context_options o;
  hlo_context_options_init(&o);
  o.num_threads = 1;
  hlo_context *ctx = NULL;
  hlo_status s = hlo_context_create(&o, &ctx);
  if (s || (s = d->run(ctx, params, results)))
    return fail("first call", s);
  long before = minor_faults();
  for (int k = 0; k < 3; k++)
    if ((s = d->run(ctx, params, results)))
      return fail("later call", s);
  long faults = minor_faults() - before;
  printf("arena %lld bytes; minor page faults in 3 later calls: %ld\n", (long long)d->arena_bytes, faults);
  if (faults > 3 * 64)
    return fail("later calls touched new memory", NULL);
  /* An embedder's arena: used as given; one byte short is refused. */
  void *mine = aligned_alloc(64, ((size_t)d->arena_bytes + 63) & ~(size_t)63);
  if ((s = hlo_context_set_arena(ctx, mine, (size_t)d->arena_bytes)) || (s = d->run(ctx, params, results)))
    return fail("own arena", s);
  if ((s = hlo_context_set_arena(ctx, mine, (size_t)d->arena_bytes - 1)))
    return fail("set a small arena", s);
  s = d->run(ctx, params, results);
  if (!s || hlo_status_code_of(s) != HLO_RESOURCE_EXHAUSTED || !strstr(hlo_status_message(s), "needs"))
    return fail("an arena one byte short was not refused", s);
  printf("a short arena is refused: %s\n", hlo_status_message(s));
  hlo_status_free(s);
  if ((s = hlo_context_set_arena(ctx, NULL, 0)) || (s = d->run(ctx, params, results)))
    return fail("back to the context's arena", s);
  hlo_context_destroy(ctx);
  free(mine);
  printf("ok\n");
  return 0;
}
