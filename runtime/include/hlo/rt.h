/* hlo/rt.h — functions that compiled models call inside libhlort (linked into model.so).
 * Generated code may call only these and libc/libm.  Internal ABI between hloc's code
 * generator and the runtime of the same version; not for application code.
 */
#ifndef HLO_RT_H
#define HLO_RT_H

#include <stddef.h>
#include <stdint.h>

#include "hlo/abi.h"
#include "hlo/status.h"

#if defined(__GNUC__)
#define HLO_RT_EXPORT __attribute__((visibility("default")))
#else
#define HLO_RT_EXPORT
#endif

/* A 64-byte aligned buffer of `bytes` bytes for an instruction's result; NULL when out of
 * memory.  Freed with hlo_rt_free.  ctx may be NULL. */
HLO_RT_EXPORT void *hlo_rt_alloc(hlo_context *ctx, int64_t bytes);
HLO_RT_EXPORT void hlo_rt_free(hlo_context *ctx, void *p);
/* A status for a run-time failure inside a compiled model (message is a constant string). */
HLO_RT_EXPORT hlo_status hlo_rt_error(const char *message);

#endif
