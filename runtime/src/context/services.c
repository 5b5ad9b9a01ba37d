/* services.c — the teardown table of the context's services (services.h): the one place
 * context.c reaches feeds.c and channels.c through.  Tests: context_test.c.
 */
#include <stddef.h>

#include "services.h"

const hlo_ctx_teardown_fn hlo_ctx_teardowns[] = {hlo_ctx_feeds_free, hlo_ctx_channels_free, NULL};
