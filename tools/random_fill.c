/* random_fill.c — --random-inputs (random_fill.h).  Each element type has its own loop that
 * writes the storage bits directly: a float in [1, 2) is built from random mantissa bits and
 * 2x - 3 (exact) maps it onto [-1, 1); bf16 is that f32 truncated (towards zero, so never
 * 1.0), f16 the same value as binary16 (integer bit arithmetic); the f8 types go through a
 * 256-entry table made once per parameter.  The work is cut into blocks of 1 MiB, taken in
 * turn by the threads; page faults of fresh buffers happen in the threads too.
 */
#include "random_fill.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir/literal.h"

enum { BLOCK_BYTES = 1 << 20, CHUNK_WORDS = 512 };

/* The SplitMix64 finaliser of key + j * golden ratio: 64 random bits for word j. */
static inline uint64_t word(uint64_t key, uint64_t j) {
  uint64_t z = key + j * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static inline float f32_of(uint32_t mantissa23) {
  uint32_t u = 0x3F800000u | mantissa23;
  float x;
  memcpy(&x, &u, 4);
  return 2 * x - 3;
}

static inline uint32_t bits_of(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static inline double f64_of(uint64_t lane) {
  uint64_t u = 0x3FF0000000000000ull | (lane >> 12);
  double x;
  memcpy(&x, &u, 8);
  return 2 * x - 3;
}

static inline uint16_t bf16_of(uint64_t lane16) { return (uint16_t)(bits_of(f32_of((uint32_t)lane16 << 7)) >> 16); }

/* The same value as bf16_of's f32, (lane16 - 32768) * 2^-15 in [-1, 1), as binary16 with
 * integer operations: m * 2^-15 = 1.f * 2^(e - 15), whose biased binary16 exponent is e;
 * m = 1 is the subnormal 2^-15.  Truncated (towards zero) below 2^-4. */
static inline uint16_t f16_of(uint64_t lane16) {
  int32_t k = (int32_t)lane16 - 32768;
  uint32_t sign = k < 0 ? 0x8000u : 0, m = (uint32_t)(k < 0 ? -k : k);
  int e = 31 - __builtin_clz(m | 1);
  uint32_t normal = sign | (uint32_t)e << 10 | (((m << (31 - e)) >> 21) & 0x3FF);
  return (uint16_t)(m <= 1 ? sign | m << 9 : normal);
}

/* One loop per storage type: element x takes lane x % LANES of word x / LANES (the word's
 * bits as LANE_T[LANES], little-endian).  The words of a chunk are made first, then one
 * plain loop over the lanes converts them (which the compiler vectorises).  b is a multiple
 * of LANES: blocks start at multiples of 8 elements. */
#define FILL(NAME, T, LANE_T, VALUE)                                                              \
  static void NAME(uint64_t key, uint64_t mask, const uint8_t *table, void *out, int64_t b, int64_t e) { \
    (void)mask;                                                                                   \
    (void)table;                                                                                  \
    T *dst = out;                                                                                 \
    enum { LANES = 8 / sizeof(LANE_T) };                                                          \
    LANE_T lanes[CHUNK_WORDS * LANES];                                                            \
    for (int64_t x0 = b; x0 < e; x0 += CHUNK_WORDS * LANES) {                                     \
      int64_t n = e - x0 < CHUNK_WORDS * LANES ? e - x0 : CHUNK_WORDS * LANES;                    \
      for (int64_t j = 0; j < (n + LANES - 1) / LANES; j++) {                                     \
        uint64_t w = word(key, (uint64_t)x0 / LANES + (uint64_t)j);                               \
        memcpy(&lanes[j * LANES], &w, 8);                                                         \
      }                                                                                           \
      for (int64_t i = 0; i < n; i++) {                                                           \
        int64_t x = x0 + i;                                                                       \
        uint64_t lane = lanes[i];                                                                 \
        VALUE;                                                                                    \
      }                                                                                           \
    }                                                                                             \
  }

FILL(fill_f64, double, uint64_t, dst[x] = f64_of(lane))
FILL(fill_f32, float, uint32_t, dst[x] = f32_of((uint32_t)lane >> 9))
FILL(fill_bf16, uint16_t, uint16_t, dst[x] = bf16_of(lane))
FILL(fill_f16, uint16_t, uint16_t, dst[x] = f16_of(lane))
FILL(fill_c64, float, uint32_t, dst[2 * x] = f32_of((uint32_t)lane >> 9); dst[2 * x + 1] = dst[2 * x] * 0.5f)
FILL(fill_c128, double, uint64_t, dst[2 * x] = f64_of(lane); dst[2 * x + 1] = dst[2 * x] * 0.5)
FILL(fill_i8, uint8_t, uint8_t, dst[x] = (uint8_t)(lane & mask))
FILL(fill_i16, uint16_t, uint16_t, dst[x] = (uint16_t)(lane & mask))
FILL(fill_i32, uint32_t, uint32_t, dst[x] = (uint32_t)(lane & mask))
FILL(fill_i64, uint64_t, uint64_t, dst[x] = lane & mask)
FILL(fill_table, uint8_t, uint8_t, dst[x] = table[lane])

typedef void (*fill_fn)(uint64_t key, uint64_t mask, const uint8_t *table, void *out, int64_t b, int64_t e);

/* How one parameter is filled. */
typedef struct leaf_job {
  fill_fn fn;
  uint64_t key, mask;
  uint8_t table[256];
  void *dst;
  int64_t elems, per_block, first_block; /* its blocks: first_block .. + ceil(elems / per_block) */
} leaf_job;

/* The largest value in [0, 8) the integer type holds: 7, or less for s1..s4/u1..u2. */
static uint64_t int_mask(ir_etype et) {
  int value_bits = ir_etype_table[et].bits - (ir_etype_is_signed(et) ? 1 : 0);
  return value_bits >= 3 ? 7 : (1ull << value_bits) - 1;
}

static fill_fn pick(ir_etype et, leaf_job *j) {
  j->mask = et == IR_PRED ? 1 : ir_etype_is_int(et) ? int_mask(et) : 0;
  switch (et) {
  case IR_F64: return fill_f64;
  case IR_F32: return fill_f32;
  case IR_BF16: return fill_bf16;
  case IR_F16: return fill_f16;
  case IR_C64: return fill_c64;
  case IR_C128: return fill_c128;
  default: break;
  }
  if (ir_etype_is_float(et)) { /* the f8 and f4 types: k/128 - 1 for k in 0..255, rounded */
    for (int k = 0; k < 256; k++) {
      j->table[k] = 0;
      ir_lit_encode_float(et, k / 128.0 - 1, 0, &j->table[k]);
    }
    return fill_table;
  }
  switch (ir_etype_table[et].storage_bytes) {
  case 1: return fill_i8;
  case 2: return fill_i16;
  case 4: return fill_i32;
  case 8: return fill_i64;
  default: return NULL;
  }
}

typedef struct fill_work {
  leaf_job *jobs;
  int n_jobs;
  int64_t n_blocks;
  atomic_llong next;
} fill_work;

static void run_block(const fill_work *w, int64_t block) {
  int lo = 0, hi = w->n_jobs - 1; /* the last job whose first block is <= block */
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (w->jobs[mid].first_block <= block)
      lo = mid;
    else
      hi = mid - 1;
  }
  const leaf_job *j = &w->jobs[lo];
  int64_t b = (block - j->first_block) * j->per_block;
  int64_t e = b + j->per_block < j->elems ? b + j->per_block : j->elems;
  j->fn(j->key, j->mask, j->table, j->dst, b, e);
}

static void *worker(void *arg) {
  fill_work *w = arg;
  for (int64_t b; (b = atomic_fetch_add(&w->next, 1)) < w->n_blocks;)
    run_block(w, b);
  return NULL;
}

static int thread_count(int threads, int64_t blocks) {
  long n = threads > 0 ? threads : sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 1)
    n = 1;
  return (int)(n < blocks ? n : blocks > 0 ? blocks : 1);
}

hlo_status random_fill_params(uint64_t seed, const hlo_module_desc *desc, void *const *params, int threads) {
  fill_work w = {.jobs = calloc((size_t)desc->num_params + 1, sizeof *w.jobs)};
  if (!w.jobs)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  uint64_t base = word(seed * 0xD1B54A32D192ED03ull, 0x632BE59BD9B4E019ull);
  for (int k = 0; k < desc->num_params; k++) {
    const hlo_array_desc *d = &desc->params[k];
    int eb = d->dtype >= 0 && d->dtype < IR_TOKEN ? ir_etype_table[d->dtype].storage_bytes : 0;
    leaf_job *j = &w.jobs[w.n_jobs];
    if (!params[k] || eb == 0 || d->byte_size <= 0 || !(j->fn = pick((ir_etype)d->dtype, j)))
      continue;
    j->key = word(base, (uint64_t)k);
    j->dst = params[k];
    j->elems = d->byte_size / eb;
    j->per_block = BLOCK_BYTES / eb;
    j->first_block = w.n_blocks;
    w.n_blocks += (j->elems + j->per_block - 1) / j->per_block;
    w.n_jobs++;
  }
  atomic_init(&w.next, 0);
  int n = thread_count(threads, w.n_blocks), started = 0;
  pthread_t *t = n > 1 ? calloc((size_t)n, sizeof *t) : NULL;
  for (; t && started < n - 1; started++)
    if (pthread_create(&t[started], NULL, worker, &w) != 0)
      break;
  worker(&w); /* this thread too; with no other thread started it does every block */
  for (int i = 0; i < started; i++)
    pthread_join(t[i], NULL);
  free(t);
  free(w.jobs);
  return NULL;
}
