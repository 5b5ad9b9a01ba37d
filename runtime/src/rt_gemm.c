/* rt_gemm.c — dense matrix products for compiled dot instructions (hlo/rt.h): C = A·B in f32
 * and f64, accumulating in the element type, with element strides for A and B (transposed
 * operands need no copy), a batch dimension and a dense row-major C.  GotoBLAS structure: B
 * panels (KC x NC) and A blocks (MC x KC) are packed into micro-panels and a register-tiled
 * micro-kernel (MR x NR accumulators in vector registers, GCC/Clang vector extensions) runs on
 * them.  The micro-kernel is built for AVX-512, AVX2+FMA and the baseline CPU and picked from
 * the running CPU, since libhlort is built once and runs on many machines.  Row blocks (or
 * batches) run on the context's thread pool.  Tests: runtime/src/rt_gemm_test.c.
 */
#include <stdint.h>

#include "hlo/rt.h"
#include "hlo/rt_parallel.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define GEMM_X86 1
#else
#define GEMM_X86 0
#endif

/* Largest micro tile (elements): 14 rows x 32 f32 columns for AVX-512. */
#define GEMM_MAX_TILE (14 * 32)

typedef void (*gemm_micro_fn)(void);
typedef struct gemm_kernel {
  int mr, nr;          /* tile: mr rows of A by nr columns of B */
  gemm_micro_fn micro; /* cast back to the element type's signature before the call */
} gemm_kernel;

/* 2: AVX-512F, 1: AVX2 and FMA, 0: the baseline. */
static int gemm_isa(void) {
#if GEMM_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    return 2;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return 1;
#endif
  return 0;
}

/* Threads worth using for an m x n x k product: about 2^18 multiply-adds each at least. */
static int gemm_threads(hlo_context *ctx, int64_t m, int64_t n, int64_t k) {
  int t = hlo_rt_num_threads(ctx);
  double work = (double)m * (double)n * (double)(k > 0 ? k : 1);
  double most = work / 262144.0;
  if (most < t)
    t = most < 1 ? 1 : (int)most;
  return t;
}

static int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

/* Cache blocking: KC deep panels (a KC x NR micro-panel of B stays in L1 while the A block
 * streams past it), MC rows of A (the packed MC x KC block stays in L2) and NC columns of B.
 * With several threads the row blocks come in a multiple of the thread count, all of one
 * size, so no thread idles at the end of a panel. */
static void gemm_blocking(int64_t m, int64_t n, int64_t k, int mr, int nr, int es, int threads, int64_t *out_mc,
                          int64_t *out_kc, int64_t *out_nc) {
  int64_t kc = es == 4 ? 256 : 192;
  int64_t mc = es == 4 ? 192 : 144;
  int64_t nc = round_up(es == 4 ? 3072 : 2048, nr);
  if (k < kc)
    kc = k;
  else if (k < 2 * kc)
    kc = (k + 1) / 2; /* two even panels rather than a full one and a sliver */
  int64_t blocks = (m + mc - 1) / mc;
  if (threads > 1)
    blocks = (blocks + threads - 1) / threads * threads;
  mc = round_up((m + blocks - 1) / blocks, mr);
  if (n < nc)
    nc = round_up(n, nr);
  *out_mc = mc;
  *out_kc = kc;
  *out_nc = nc;
}

/* A micro-kernel: C[mr x NV*lanes] (row stride ldc) = (add ? C : 0) + A-micro-panel ·
 * B-micro-panel over kc steps.  Accumulators are an array of vectors the unrolled loops turn
 * into registers; `x - (V){0}` broadcasts a scalar exactly (it keeps -0, unlike `+ 0`) and
 * folds away. */
#define GEMM_MICRO(NAME, ATTR, T, V, MR, NV)                                                         \
  ATTR static void NAME(int64_t kc, const T *restrict a, const T *restrict b, T *restrict c, int64_t ldc, \
                        int add) {                                                                   \
    enum { lanes = sizeof(V) / sizeof(T) };                                                          \
    V acc[MR][NV];                                                                                   \
    _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)                                            \
      _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) acc[i][v] = (V){0};                       \
    for (int64_t p = 0; p < kc; p++, a += MR, b += NV * lanes) {                                     \
      V bv[NV];                                                                                      \
      _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) bv[v] = *(const V *)(b + v * lanes);      \
      _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++) {                                        \
        V av = a[i] - (V){0};                                                                        \
        _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) acc[i][v] += av * bv[v];                \
      }                                                                                              \
    }                                                                                                \
    _Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)                                            \
      _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) {                                         \
        V *cp = (V *)(c + i * ldc + v * lanes);                                                      \
        *cp = add ? *cp + acc[i][v] : acc[i][v];                                                     \
      }                                                                                              \
  }

#define GEMM_T float
#define GEMM_SUF f32
#include "rt_gemm_impl.h"
#undef GEMM_T
#undef GEMM_SUF

#define GEMM_T double
#define GEMM_SUF f64
#include "rt_gemm_impl.h"
#undef GEMM_T
#undef GEMM_SUF
