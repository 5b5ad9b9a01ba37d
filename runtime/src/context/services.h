/* services.h — how context.c reaches the services built on top of it: only through this table
 * of teardowns, which hlo_context_destroy runs in order (services.c).
 *
 * Layering of runtime/src/context/ (arrows: "calls"):
 *   queue.c      the blocking FIFOs of copied buffers and their waits; calls nothing above it
 *   context.c    the context's lifetime, thread pool, arena, custom-call registry and replica
 *                identity; calls nothing above it except through this table
 *   feeds.c, channels.c, collectives*.c, cancel.c, custom_call.c, xla_ffi.c
 *                the services; call queue.c and context.c, never each other's callers
 * A service that hangs state on a context adds its teardown here, instead of context.c
 * naming it: context.c stays below the services.  The table also keeps what a model.so links
 * from libhlort.a as it was (a model that uses the context gets the feed and channel API).
 * Tests: context_test.c, channels_test.c.
 */
#ifndef HLO_RUNTIME_SERVICES_H
#define HLO_RUNTIME_SERVICES_H

#include "hlo/abi.h"

/* Frees what a service hung on context c; called once, from hlo_context_destroy, after the
 * thread pool stopped. */
typedef void (*hlo_ctx_teardown_fn)(hlo_context *c);

/* The teardowns in the order they run; NULL-terminated (services.c). */
extern const hlo_ctx_teardown_fn hlo_ctx_teardowns[];

void hlo_ctx_feeds_free(hlo_context *c);    /* feeds.c: the infeed and outfeed queues */
void hlo_ctx_channels_free(hlo_context *c); /* channels.c: the channel table and open requests */

#endif
