/* rt_copy.h — the runtime's streaming copy (rt_copy.c).  Not a public header. */
#ifndef HLO_RT_COPY_H
#define HLO_RT_COPY_H

#include <stdint.h>

/* Copies bytes from src to dst (not overlapping) with non-temporal stores where the CPU has
 * them (x86-64: every one), the copy's head and tail up to dst's 16-byte alignment with
 * memcpy; ends with a store fence, so the bytes are visible to other threads once the caller
 * publishes them.  Elsewhere a memcpy. */
void rt_copy_stream(void *dst, const void *src, int64_t bytes);

#endif
