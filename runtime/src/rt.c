/* rt.c — the runtime functions compiled models call (hlo/rt.h): buffers and errors. */
#include "hlo/rt.h"

#include <stdlib.h>

HLO_RT_EXPORT void *hlo_rt_alloc(hlo_context *ctx, int64_t bytes) {
  (void)ctx;
  if (bytes < 0)
    return NULL;
  size_t n = ((size_t)bytes + 63) & ~(size_t)63;
  return aligned_alloc(64, n ? n : 64);
}

HLO_RT_EXPORT void hlo_rt_free(hlo_context *ctx, void *p) {
  (void)ctx;
  free(p);
}

HLO_RT_EXPORT hlo_status hlo_rt_error(const char *message) {
  return hlo_status_make(HLO_FAILED_PRECONDITION, "%s", message);
}
