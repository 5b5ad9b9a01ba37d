/* rt_copy_test.c — rt_copy_stream (rt_copy.c): every destination offset 0..31 against a
 * 16-byte boundary and lengths around the 16- and 64-byte steps (empty, shorter than the
 * head, whole lines, short tails, 1 MiB + 13), each compared with the source byte for byte,
 * with the bytes before and after the destination left untouched.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_copy.h"

static int failures;

static void check_copy(unsigned char *dst_base, const unsigned char *src, int64_t off, int64_t len) {
  int64_t span = len + 64;
  memset(dst_base, 0xA5, (size_t)(span + off + 64));
  rt_copy_stream(dst_base + 32 + off, src, len);
  for (int64_t i = 0; i < 32 + off; i++)
    if (dst_base[i] != 0xA5) {
      fprintf(stderr, "offset %lld length %lld: byte %lld before the destination written\n", (long long)off,
              (long long)len, (long long)i);
      failures++;
      return;
    }
  if (memcmp(dst_base + 32 + off, src, (size_t)len) != 0) {
    fprintf(stderr, "offset %lld length %lld: copy differs\n", (long long)off, (long long)len);
    failures++;
    return;
  }
  for (int64_t i = 32 + off + len; i < 32 + off + len + 16; i++)
    if (dst_base[i] != 0xA5) {
      fprintf(stderr, "offset %lld length %lld: byte after the destination written\n", (long long)off, (long long)len);
      failures++;
      return;
    }
}

int main(void) {
  const int64_t big = (1 << 20) + 13;
  size_t dst_bytes = ((size_t)big + 256 + 63) / 64 * 64; /* aligned_alloc wants a multiple of 64 */
  unsigned char *src = malloc((size_t)big), *dst = aligned_alloc(64, dst_bytes);
  if (!src || !dst) {
    free(src);
    free(dst);
    fprintf(stderr, "rt_copy_test: out of memory\n");
    return 1;
  }
  for (int64_t i = 0; i < big; i++)
    src[i] = (unsigned char)(i * 131 + 7);
  const int64_t lens[] = {0, 1, 5, 15, 16, 17, 63, 64, 65, 127, 128, 200, 4096, 4099, big};
  for (int64_t off = 0; off < 32; off++)
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++)
      check_copy(dst, src, off, lens[k]);
  free(src);
  free(dst);
  if (failures) {
    fprintf(stderr, "rt_copy_test: %d failures\n", failures);
    return 1;
  }
  printf("rt_copy_test: ok\n");
  return 0;
}
