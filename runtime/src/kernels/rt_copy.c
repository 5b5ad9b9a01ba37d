/* rt_copy.c — streaming copies: context.c's hlo_rt_copy writes the pieces of a copy of
 * rt_nontemporal_min_bytes or more (64 MiB by default) through rt_copy_stream, so the
 * destination goes to memory without first being read into the cache (an ordinary store
 * reads each line before writing it: a third of the traffic, and the cache filled with a
 * result nothing reads soon).  A 268 MB copy on 2 threads of the AMD EPYC family 25 host: in
 * a C loop, memcpy in 1 MiB pieces 37-41 ms, streamed 24-26 ms; a model's dynamic-update-slice
 * of that size, not donated, 46 -> 21 ms (docs/performance.md).
 * Tests: unit.rt_copy_test; reliability.big_copy (tests/big_copy.py, with
 * HLO_RT_NONTEMPORAL_MIN_BYTES=1 as well).
 */
#include "rt_copy.h"

#include <string.h>

#if defined(__x86_64__)
#include <emmintrin.h>

void rt_copy_stream(void *dst, const void *src, int64_t bytes) {
  char *d = dst;
  const char *s = src;
  int64_t head = (int64_t)((16 - (uintptr_t)d % 16) % 16);
  if (head > bytes)
    head = bytes;
  memcpy(d, s, (size_t)head);
  int64_t i = head;
  for (; i + 64 <= bytes; i += 64) { /* a line per step: four 16-byte streams */
    __m128i a = _mm_loadu_si128((const __m128i *)(s + i)), b = _mm_loadu_si128((const __m128i *)(s + i + 16));
    __m128i c = _mm_loadu_si128((const __m128i *)(s + i + 32)), e = _mm_loadu_si128((const __m128i *)(s + i + 48));
    _mm_stream_si128((__m128i *)(d + i), a);
    _mm_stream_si128((__m128i *)(d + i + 16), b);
    _mm_stream_si128((__m128i *)(d + i + 32), c);
    _mm_stream_si128((__m128i *)(d + i + 48), e);
  }
  memcpy(d + i, s + i, (size_t)(bytes - i));
  _mm_sfence();
}

#else

void rt_copy_stream(void *dst, const void *src, int64_t bytes) { memcpy(dst, src, (size_t)bytes); }

#endif
