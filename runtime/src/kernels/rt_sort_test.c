/* rt_sort_test.c — hlo_rt_sort (key path and comparator path), hlo_rt_topk and
 * hlo_rt_rng_bits at the runtime's C level: sorted lines checked against a stable reference
 * (insertion sort of (key, index), or qsort of (key, position)) on data with many ties, keys
 * of 1, 2, 4 and 8 bytes in both directions, lines along a non-minor dimension,
 * results written over their operands, a 4-thread context; rng-bit-generator against
 * Random123's known-answer vectors (the kat_vectors file of Random123: threefry2x32 20,
 * philox4x32 10) and XLA's state update.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/rt.h"
#include "hlo/runtime.h"

static int failures;

#define CHECK(cond, ...)                                                                                 \
  do {                                                                                                   \
    if (!(cond)) {                                                                                       \
      failures++;                                                                                        \
      fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                                    \
      fprintf(stderr, __VA_ARGS__);                                                                      \
      fprintf(stderr, "\n");                                                                             \
    }                                                                                                    \
  } while (0)

static uint64_t rnd(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* The comparator path: |a| < |b| on s32 operand 0. */
static int32_t abs_less(hlo_context *ctx, void *const *lines, int64_t i, int64_t j, hlo_status *out_status) {
  (void)ctx;
  (void)out_status;
  const int32_t *k = lines[0];
  return abs(k[i]) < abs(k[j]);
}

/* Stable reference permutation of n keys at stride s under less_fn (0: plain <, 1: |.|). */
static void reference_perm(const int32_t *k, int64_t n, int64_t s, int use_abs, int64_t *perm) {
  for (int64_t i = 0; i < n; i++) {
    int64_t x = i, q = i;
    for (; q > 0; q--) {
      int32_t a = k[x * s], b = k[perm[q - 1] * s];
      if (!(use_abs ? abs(a) < abs(b) : a < b))
        break;
      perm[q] = perm[q - 1];
    }
    perm[q] = x;
  }
}

/* outer x n x inner s32 keys with a second operand holding each element's position along n. */
static void test_sort(hlo_context *ctx, int use_abs, int64_t outer, int64_t n, int64_t inner) {
  int64_t total = outer * n * inner;
  int32_t *k = malloc((size_t)total * 4), *pos = malloc((size_t)total * 4), *orig = malloc((size_t)total * 4);
  int64_t *perm = malloc((size_t)n * 8);
  uint64_t s = 88172645463325252ull;
  for (int64_t i = 0; i < total; i++) {
    k[i] = (int32_t)(rnd(&s) % 21) - 10;
    pos[i] = (int32_t)((i / inner) % n);
  }
  memcpy(orig, k, (size_t)total * 4);
  void *bufs[2] = {k, pos};
  int32_t bytes[2] = {4, 4};
  hlo_status st = hlo_rt_sort(ctx, 2, bufs, bufs, bytes, outer, n, inner, 0, HLO_RT_SORT_SINT, 0, 0,
                              use_abs ? abs_less : NULL);
  CHECK(st == NULL, "sort failed: %s", hlo_status_message(st));
  hlo_status_free(st);
  int bad = 0;
  for (int64_t o = 0; o < outer && !bad; o++)
    for (int64_t i = 0; i < inner && !bad; i++) {
      const int32_t *line = orig + o * n * inner + i;
      reference_perm(line, n, inner, use_abs, perm);
      for (int64_t p = 0; p < n && !bad; p++) {
        int64_t at = o * n * inner + p * inner + i;
        if (pos[at] != perm[p] || k[at] != line[perm[p] * inner])
          bad = 1;
      }
    }
  CHECK(!bad, "sort (%s, %lldx%lldx%lld) differs from the stable reference", use_abs ? "comparator" : "keys",
        (long long)outer, (long long)n, (long long)inner);
  free(k);
  free(pos);
  free(orig);
  free(perm);
}

/* A signed key of b bytes at p (little-endian), widened. */
static int64_t load_signed(const unsigned char *p, int b) {
  int64_t v = 0;
  memcpy(&v, p, (size_t)b);
  int shift = 64 - 8 * b;
  return shift ? (int64_t)((uint64_t)v << shift) >> shift : v;
}

typedef struct {
  int64_t key, pos;
} keyed;

static int descending_keys;

static int keyed_cmp(const void *x, const void *y) {
  const keyed *a = x, *b = y;
  if (a->key != b->key)
    return (a->key < b->key) != descending_keys ? -1 : 1;
  return a->pos < b->pos ? -1 : a->pos > b->pos; /* stable: equal keys keep their order */
}

/* Lines of n signed keys of b bytes (1, 2, 4, 8; many ties, both signs), ascending or
 * descending, with an s32 operand of positions: the key path's word forms (32-bit words for
 * up to 2 bytes in lines of up to 65536, 64-bit words beyond, separate arrays for 8 bytes)
 * against qsort of (key, position). */
static void test_sort_bytes(hlo_context *ctx, int b, int64_t outer, int64_t n, int descending) {
  int64_t total = outer * n;
  unsigned char *k = malloc((size_t)(total * b)), *orig = malloc((size_t)(total * b));
  int32_t *pos = malloc((size_t)total * 4);
  keyed *ref = malloc((size_t)n * sizeof *ref);
  uint64_t s = 0x9E3779B97F4A7C15ull ^ (uint64_t)(b * 131 + n);
  int64_t spread = b == 1 ? 200 : 3000;
  for (int64_t i = 0; i < total; i++) {
    int64_t v = (int64_t)(rnd(&s) % (uint64_t)spread) - spread / 2;
    if (b >= 4 && i % 7 == 0)
      v *= 1000003; /* some keys far apart: every byte of the key varies */
    memcpy(k + i * b, &v, (size_t)b);
    pos[i] = (int32_t)(i % n);
  }
  memcpy(orig, k, (size_t)(total * b));
  void *bufs[2] = {k, pos};
  int32_t bytes[2] = {b, 4};
  hlo_status st = hlo_rt_sort(ctx, 2, bufs, bufs, bytes, outer, n, 1, 0, HLO_RT_SORT_SINT, descending, 0, NULL);
  CHECK(st == NULL, "sort failed: %s", hlo_status_message(st));
  hlo_status_free(st);
  descending_keys = descending;
  int bad = 0;
  for (int64_t o = 0; o < outer && !bad; o++) {
    for (int64_t p = 0; p < n; p++)
      ref[p] = (keyed){load_signed(orig + (o * n + p) * b, b), p};
    qsort(ref, (size_t)n, sizeof *ref, keyed_cmp);
    for (int64_t p = 0; p < n && !bad; p++)
      bad = pos[o * n + p] != ref[p].pos || load_signed(k + (o * n + p) * b, b) != ref[p].key;
  }
  CHECK(!bad, "sort of %d-byte keys (%lldx%lld, %s) differs from the stable reference", b, (long long)outer,
        (long long)n, descending ? "descending" : "ascending");
  free(k), free(orig), free(pos), free(ref);
}

static void test_topk(hlo_context *ctx) {
  float x[2][6] = {{1, 3, 3, NAN, -0.0f, 0.0f}, {2, 2, -INFINITY, 2, 5, -1}};
  float v[2][3];
  int32_t idx[2][3];
  hlo_status st = hlo_rt_topk(ctx, x, v, &idx[0][0], 4, 2, 6, 3, HLO_RT_SORT_FLOAT_TOTAL, 1, 0x7f800000);
  CHECK(st == NULL, "topk failed");
  const int32_t want[2][3] = {{3, 1, 2}, {4, 0, 1}}; /* NaN largest, ties by lower index */
  for (int r = 0; r < 2; r++)
    for (int j = 0; j < 3; j++)
      CHECK(idx[r][j] == want[r][j], "topk index [%d][%d] = %d, want %d", r, j, idx[r][j], want[r][j]);
  CHECK(isnan(v[0][0]) && v[0][1] == 3 && v[1][0] == 5, "topk values");
}

static void test_rng_kat(void) {
  /* Random123 kat_vectors, threefry2x32 20: (ctr, key) -> out. */
  const uint32_t tf[3][6] = {{0, 0, 0, 0, 0x6b200159, 0x99ba4efe},
                             {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x1cb996fc, 0xbb002be7},
                             {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xc4923a9c, 0x483df7a0}};
  for (int i = 0; i < 3; i++) {
    uint64_t state[2] = {tf[i][2] | (uint64_t)tf[i][3] << 32, tf[i][0] | (uint64_t)tf[i][1] << 32}, ns[2], out;
    int64_t one = 1;
    hlo_status st = hlo_rt_rng_bits(0, state, 2, ns, &out, 8, 1, &one);
    CHECK(st == NULL && out == (tf[i][4] | (uint64_t)tf[i][5] << 32), "threefry KAT %d: %016llx", i,
          (unsigned long long)out);
    CHECK(ns[0] == state[0] && ns[1] == state[1] + 1, "threefry state %d", i);
  }
  /* Random123 kat_vectors, philox4x32 10: (ctr[4], key[2]) -> out[4]. */
  const uint32_t ph[3][10] = {
      {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
      {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d, 0x41c83b0e, 0xa20bc7c6,
       0x6d5451fd},
      {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09, 0x94fdcceb, 0x5001e420,
       0x24126ea1}};
  for (int i = 0; i < 3; i++) {
    uint64_t state[3] = {ph[i][4] | (uint64_t)ph[i][5] << 32, ph[i][0] | (uint64_t)ph[i][1] << 32,
                         ph[i][2] | (uint64_t)ph[i][3] << 32},
             ns[3];
    uint32_t out[4];
    int64_t four = 4;
    hlo_status st = hlo_rt_rng_bits(1, state, 3, ns, out, 4, 1, &four);
    CHECK(st == NULL && memcmp(out, &ph[i][6], 16) == 0, "philox KAT %d: %08x %08x %08x %08x", i, out[0], out[1],
          out[2], out[3]);
    uint64_t lo = state[1] + 1, hi = state[2] + (lo == 0);
    CHECK(ns[0] == state[0] && ns[1] == lo && ns[2] == hi, "philox state %d", i);
  }
}

int main(void) {
  hlo_context *ctx = NULL;
  hlo_context_options opts;
  memset(&opts, 0, sizeof opts);
  opts.num_threads = 4;
  hlo_status st = hlo_context_create(&opts, &ctx);
  CHECK(st == NULL, "context");
  for (int use_abs = 0; use_abs < 2; use_abs++) {
    test_sort(NULL, use_abs, 3, 37, 1);
    test_sort(ctx, use_abs, 64, 300, 1);
    test_sort(ctx, use_abs, 5, 70, 3); /* a non-minor dimension */
    test_sort(ctx, use_abs, 2, 1, 4);
  }
  for (int b = 1; b <= 8; b *= 2)
    for (int descending = 0; descending < 2; descending++) {
      test_sort_bytes(ctx, b, 3, 20, descending); /* insertion sort */
      test_sort_bytes(ctx, b, 5, 4096, descending);
    }
  test_sort_bytes(ctx, 2, 2, 70000, 0); /* 2-byte keys past 65536 positions: 64-bit words */
  test_sort_bytes(ctx, 1, 1, 65536, 1); /* the last line length of 32-bit words */
  test_topk(ctx);
  test_rng_kat();
  hlo_context_destroy(ctx);
  if (failures)
    fprintf(stderr, "rt_sort_test: %d failure(s)\n", failures);
  else
    printf("rt_sort_test: ok\n");
  return failures != 0;
}
