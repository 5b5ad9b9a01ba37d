/* self_target.c — a program linked with the model of self_target.hlo, whose custom-call target
 * is the model's own exported name: the call must fail with NOT_FOUND instead of re-entering
 * the model (run by tests/runtime.cmake, with and without a context). */
#include <stdio.h>
#include <string.h>

#include "hlo/runtime.h"
#include "self_target.h"

static int check(hlo_status s, const char *how) {
  if (!s) {
    printf("%s: the call succeeded (it called the model itself)\n", how);
    return 1;
  }
  const char *m = hlo_status_message(s);
  int bad = hlo_status_code_of(s) != HLO_NOT_FOUND || !strstr(m, "'self_target' not found");
  printf("%s: %s\n", how, m);
  hlo_status_free(s);
  return bad;
}

int main(void) {
  float x[4] = {1, 2, 3, 4}, y[4];
  int bad = check(self_target(NULL, x, y), "no context");
  hlo_context *ctx;
  hlo_context_options o;
  hlo_context_options_init(&o);
  if (hlo_context_create(&o, &ctx))
    return 1;
  bad |= check(hlo_custom_call_resolve_all(ctx, self_target_describe()), "resolve_all");
  bad |= check(self_target(ctx, x, y), "with a context");
  hlo_context_destroy(ctx);
  return bad;
}
