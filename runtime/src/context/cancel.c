/* cancel.c — stopping a running model call from another thread.  One atomic flag per context
 * (context_internal.h): hlo_context_cancel sets it, hlo_rt_poll (called by generated code at
 * every while-loop back-edge, codegen/control.c) turns it into an HLO_CANCELLED status, which
 * unwinds the call through each computation's failure path (freeing its buffers).
 * Thread-safe.  Tests: tests/reliability/cancel_test.c (tests/reliability.cmake).
 */
#include <stdatomic.h>

#include "context_internal.h"
#include "hlo/rt.h"
#include "hlo/runtime.h"

/* A context from a runtime of another layout has no flag where ours is: never cancelled. */
static bool has_flag(const hlo_context *c) {
  return c && c->magic == HLO_CONTEXT_MAGIC && c->layout_size == sizeof *c;
}

void hlo_context_cancel(hlo_context *ctx) {
  if (has_flag(ctx))
    atomic_store_explicit(&ctx->cancelled, 1, memory_order_release);
}

void hlo_context_reset_cancel(hlo_context *ctx) {
  if (has_flag(ctx))
    atomic_store_explicit(&ctx->cancelled, 0, memory_order_release);
}

int hlo_context_is_cancelled(hlo_context *ctx) {
  return has_flag(ctx) && atomic_load_explicit(&ctx->cancelled, memory_order_acquire);
}

hlo_status hlo_rt_poll(hlo_context *ctx) {
  if (!has_flag(ctx) || !atomic_load_explicit(&ctx->cancelled, memory_order_relaxed))
    return NULL;
  return hlo_status_make(HLO_CANCELLED, "cancelled (hlo_context_cancel)");
}
