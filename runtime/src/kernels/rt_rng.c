/* rt_rng.c — random numbers for compiled models (declared in hlo/rt.h).
 * rng-bit-generator reproduces XLA's bit streams exactly (xla/hlo/builder/lib/prng.cc and
 * RngBitGeneratorExpander, which the CPU backend runs with PHILOX as RNG_DEFAULT): Threefry-2x32
 * with 20 rounds and Philox-4x32 with 10 rounds, the counter layouts XLA uses for 32-bit,
 * narrower and 64-bit elements, and the state update.  rng-get-and-update-state keeps XLA's
 * 128-bit state (initial value 0x7012395) in the context; rng draws from it through Philox with
 * XLA's bits-to-value conversions and Box-Muller.  Tests: testdata/golden/rng_* (Random123
 * known answers, XLA/JAX values), tests of mean and variance, conformance rng-bit-generator.
 */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "context/context_internal.h"
#include "hlo/rt.h"

/* ---- the two block ciphers ---------------------------------------------------------------- */

static uint32_t rotl32(uint32_t v, int d) { return (v << d) | (v >> (32 - d)); }

/* Threefry-2x32, 20 rounds (Salmon et al., SC'11), as XLA's ThreeFry2x32. */
static void threefry2x32(const uint32_t ctr[2], const uint32_t key[2], uint32_t out[2]) {
  static const int rot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  uint32_t ks[3] = {key[0], key[1], 0x1BD11BDAu ^ key[0] ^ key[1]};
  uint32_t x0 = ctr[0] + ks[0], x1 = ctr[1] + ks[1];
  for (int block = 0; block < 5; block++) {
    for (int r = 0; r < 4; r++) {
      x0 += x1;
      x1 = rotl32(x1, rot[(block % 2) * 4 + r]);
      x1 ^= x0;
    }
    x0 += ks[(block + 1) % 3];
    x1 += ks[(block + 2) % 3] + (uint32_t)(block + 1);
  }
  out[0] = x0;
  out[1] = x1;
}

/* Philox-4x32, 10 rounds, as XLA's Philox4x32. */
static void philox4x32(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
  uint32_t x[4] = {ctr[0], ctr[1], ctr[2], ctr[3]}, k0 = key[0], k1 = key[1];
  for (int r = 0; r < 10; r++) {
    uint64_t p0 = (uint64_t)x[0] * 0xD2511F53u, p1 = (uint64_t)x[2] * 0xCD9E8D57u;
    uint32_t y0 = (uint32_t)(p1 >> 32) ^ x[1] ^ k0, y1 = (uint32_t)p1;
    uint32_t y2 = (uint32_t)(p0 >> 32) ^ x[3] ^ k1, y3 = (uint32_t)p0;
    x[0] = y0, x[1] = y1, x[2] = y2, x[3] = y3;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  memcpy(out, x, sizeof x);
}

static void store_bits(void *out, int64_t i, int32_t bytes, uint64_t v) {
  switch (bytes) {
  case 1: ((uint8_t *)out)[i] = (uint8_t)v; break;
  case 2: ((uint16_t *)out)[i] = (uint16_t)v; break;
  case 4: ((uint32_t *)out)[i] = (uint32_t)v; break;
  default: ((uint64_t *)out)[i] = v; break;
  }
}

/* ---- THREE_FRY ------------------------------------------------------------------------------ */

static void threefry_at(uint64_t key, uint64_t ctr, uint32_t out[2]) {
  uint32_t c[2] = {(uint32_t)ctr, (uint32_t)(ctr >> 32)}, k[2] = {(uint32_t)key, (uint32_t)(key >> 32)};
  threefry2x32(c, k, out);
}

/* XLA splits the shape in halves along its first even dimension (else its first largest one):
 * element (pre, i, post) is word i % 2 of the block at (pre, i / 2, post) of the half shape. */
static uint64_t threefry32(uint64_t key, uint64_t init, void *out, int32_t bytes, int32_t rank, const int64_t *dims) {
  int sd = -1;
  for (int d = 0; d < rank && sd < 0; d++)
    if (dims[d] % 2 == 0)
      sd = d;
  if (sd < 0)
    for (int d = 0; d < rank; d++)
      if (sd < 0 || dims[d] > dims[sd])
        sd = d;
  if (rank == 0) {
    uint32_t w[2];
    threefry_at(key, init, w);
    store_bits(out, 0, bytes, w[0]);
    return init + 1;
  }
  int64_t pre = 1, post = 1, ds = dims[sd], h = (dims[sd] + 1) / 2;
  for (int d = 0; d < sd; d++)
    pre *= dims[d];
  for (int d = sd + 1; d < rank; d++)
    post *= dims[d];
  for (int64_t p = 0; p < pre; p++)
    for (int64_t i = 0; i < ds; i++)
      for (int64_t q = 0; q < post; q++) {
        uint32_t w[2];
        threefry_at(key, init + (uint64_t)((p * h + i / 2) * post + q), w);
        store_bits(out, (p * ds + i) * post + q, bytes, w[i % 2]);
      }
  return init + (uint64_t)(pre * h * post);
}

static uint64_t threefry64(uint64_t key, uint64_t init, void *out, int64_t n) {
  for (int64_t e = 0; e < n; e++) {
    uint32_t w[2];
    threefry_at(key, init + (uint64_t)e, w);
    ((uint64_t *)out)[e] = (uint64_t)w[0] | (uint64_t)w[1] << 32;
  }
  return init + (uint64_t)n;
}

/* ---- PHILOX ---------------------------------------------------------------------------------- */

/* Block v of the 128-bit counter (lo, hi) + v. */
static void philox_at(uint64_t key, uint64_t lo, uint64_t hi, uint64_t v, uint32_t out[4]) {
  uint64_t l = lo + v, h = hi + (l < lo);
  uint32_t c[4] = {(uint32_t)l, (uint32_t)(l >> 32), (uint32_t)h, (uint32_t)(h >> 32)};
  uint32_t k[2] = {(uint32_t)key, (uint32_t)(key >> 32)};
  philox4x32(c, k, out);
}

/* Fills n elements; returns the number of 128-bit blocks used. */
static uint64_t philox_fill(uint64_t key, uint64_t lo, uint64_t hi, void *out, int32_t bytes, int64_t n) {
  int64_t per = bytes == 8 ? 2 : 4, blocks = (n + per - 1) / per;
  for (int64_t v = 0; v < blocks; v++) {
    uint32_t w[4];
    philox_at(key, lo, hi, (uint64_t)v, w);
    for (int64_t j = 0; j < per && v * per + j < n; j++) {
      uint64_t x = bytes == 8 ? ((uint64_t)w[2 * j] | (uint64_t)w[2 * j + 1] << 32) : w[j];
      store_bits(out, v * per + j, bytes, x);
    }
  }
  return (uint64_t)blocks;
}

hlo_status hlo_rt_rng_bits(int32_t algorithm, const uint64_t *state, int32_t n_state, uint64_t *out_state, void *out,
                           int32_t elem_bytes, int32_t rank, const int64_t *dims) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++)
    n *= dims[d];
  uint64_t key = state[0];
  if (algorithm == 0) {
    if (n_state != 2)
      return hlo_rt_error("rng-bit-generator: THREE_FRY needs a u64[2] state");
    uint64_t init = state[1];
    out_state[1] = elem_bytes == 8 ? threefry64(key, init, out, n) : threefry32(key, init, out, elem_bytes, rank, dims);
    out_state[0] = key;
    return NULL;
  }
  if (n_state != 2 && n_state != 3)
    return hlo_rt_error("rng-bit-generator: PHILOX needs a u64[2] or u64[3] state");
  /* u64[3]: counter (state[1], state[2]); u64[2]: XLA reverses the state, so (state[1], key). */
  uint64_t lo = state[1], hi = n_state == 3 ? state[2] : state[0];
  uint64_t blocks = philox_fill(key, lo, hi, out, elem_bytes, n);
  uint64_t nlo = lo + blocks, nhi = hi + (nlo < lo);
  out_state[0] = key;
  out_state[1] = nlo;
  if (n_state == 3)
    out_state[2] = nhi;
  return NULL;
}

/* ---- the context's state and rng --------------------------------------------------------------- */

static bool ctx_usable(const hlo_context *c) {
  return c && c->magic == HLO_CONTEXT_MAGIC && c->layout_size == sizeof *c;
}

void hlo_rt_rng_state(hlo_context *ctx, int64_t delta, uint64_t *out_state) {
  const uint64_t initial = 0x7012395u; /* XLA's kRngStateInitialValue */
  if (!ctx_usable(ctx)) {              /* no context: every call sees the initial state */
    out_state[0] = initial;
    out_state[1] = 0;
    return;
  }
  pthread_mutex_lock(&ctx->mu);
  if (!ctx->rng_started) {
    ctx->rng_state[0] = initial;
    ctx->rng_state[1] = 0;
    ctx->rng_started = true;
  }
  out_state[0] = ctx->rng_state[0];
  out_state[1] = ctx->rng_state[1];
  uint64_t lo = ctx->rng_state[0] + (uint64_t)delta;
  ctx->rng_state[1] += (uint64_t)(delta < 0 ? -1 : 0) + (lo < ctx->rng_state[0]);
  ctx->rng_state[0] = lo;
  pthread_mutex_unlock(&ctx->mu);
}

static uint64_t load_uint(const void *p, int32_t bytes, int32_t is_signed) {
  switch (bytes) {
  case 1: return is_signed ? (uint64_t)(int64_t) * (const int8_t *)p : *(const uint8_t *)p;
  case 2: return is_signed ? (uint64_t)(int64_t) * (const int16_t *)p : *(const uint16_t *)p;
  case 4: return is_signed ? (uint64_t)(int64_t) * (const int32_t *)p : *(const uint32_t *)p;
  default: return *(const uint64_t *)p;
  }
}

/* A uniform value in [0, 1) from 64 random bits, with the mantissa width of f32 or f64. */
static double unit(uint64_t bits, bool f64) {
  return f64 ? (double)(bits >> 12) * 0x1p-52 : (double)(uint32_t)(bits >> 41) * 0x1p-23;
}

static void store_float(void *out, int64_t i, bool f64, double v) {
  if (f64)
    ((double *)out)[i] = v;
  else
    ((float *)out)[i] = (float)v;
}

void hlo_rt_rng(hlo_context *ctx, int32_t distribution, int32_t is_float, int32_t elem_bytes, int32_t is_signed,
                const void *a, const void *b, void *out, int64_t count) {
  uint64_t st[2];
  hlo_rt_rng_state(ctx, count, st);
  for (int64_t v = 0; v < count; v += 2) {
    uint32_t w[4];
    philox_at(st[1] ^ 0x9E3779B97F4A7C15ull, st[0], 0, (uint64_t)v / 2, w);
    uint64_t r0 = (uint64_t)w[0] | (uint64_t)w[1] << 32, r1 = (uint64_t)w[2] | (uint64_t)w[3] << 32;
    uint64_t r[2] = {r0, r1};
    if (is_float) {
      bool f64 = elem_bytes == 8;
      double lo = f64 ? *(const double *)a : *(const float *)a, hi = f64 ? *(const double *)b : *(const float *)b;
      double u0 = unit(r0, f64), u1 = unit(r1, f64), x[2];
      if (distribution == 1) { /* Box-Muller, as XLA's BoxMullerTransform */
        double m = sqrt(-2.0 * log(u0 > 1e-7 ? u0 : 1e-7)), t = 6.283185307179586 * u1;
        x[0] = lo + hi * m * sin(t);
        x[1] = lo + hi * m * cos(t);
      } else {
        x[0] = u0 * (hi - lo) + lo;
        x[1] = u1 * (hi - lo) + lo;
      }
      for (int j = 0; j < 2 && v + j < count; j++)
        store_float(out, v + j, f64, x[j]);
      continue;
    }
    uint64_t lo = load_uint(a, elem_bytes, is_signed), hi = load_uint(b, elem_bytes, is_signed);
    uint64_t range = hi - lo;
    if (elem_bytes < 8)
      range &= (1ull << (8 * elem_bytes)) - 1;
    for (int j = 0; j < 2 && v + j < count; j++)
      store_bits(out, v + j, elem_bytes, range ? lo + r[j] % range : lo);
  }
}
