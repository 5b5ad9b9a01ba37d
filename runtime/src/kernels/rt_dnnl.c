/* rt_dnnl.c — f32 and bf16 convolutions through oneDNN (hlo/rt.h: hlo_rt_conv_dnnl), the library
 * PyTorch and XLA's CPU backend use.  Optional: CMake defines HLOC_HAVE_DNNL when libdnnl-dev
 * is installed (and HLOC_DNNL is not OFF); without it the function answers 0 and the compiled
 * model runs its own kernels.  The code generator (compiler/codegen/conv.c) maps an HLO
 * convolution onto a forward, backward-data or backward-weights primitive and describes the
 * HLO buffers to oneDNN by sizes and strides, so NCHW, NHWC and any other dim_labels are read
 * in place.  Dense convolutions run on the buffers' own layouts; grouped ones too where oneDNN
 * has a direct kernel for them (NHWC depthwise: brdgmm), else on its blocked layouts (reorders
 * in and out, which its NCHW depthwise kernels need).  oneDNN threads through
 * OpenMP: each call sets the calling thread's OpenMP thread count to the context's and puts
 * it back.  Primitives are found again through oneDNN's own primitive cache.  A bf16
 * convolution that only oneDNN's reference loop would run (a CPU without AVX512-BF16) is
 * declined: hloc's own kernel is faster.  Constant weights (the descriptor's WEI_KEY) that
 * oneDNN wants in another layout are reordered on the first call and kept in the context
 * (hlo_ctx_prepared_keep), so later calls skip the reorder (and the flip of a reversed window).
 * Tests: the golden cases conv_model_* and conv_* (testdata/golden/make.py, numpy references),
 * which pass with and without it.
 */
#include <stdint.h>

#include "context/context_internal.h"
#include "hlo/rt.h"
#include "hlo/rt_parallel.h"
#include "rt_isa.h"

#ifndef HLOC_HAVE_DNNL

HLO_RT_EXPORT int32_t hlo_rt_conv_dnnl(hlo_context *ctx, const int64_t *desc, const void *lhs, const void *rhs,
                                       void *out) {
  return 0;
}

#else

#include <dnnl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* OpenMP's thread count of the calling thread (libgomp, which Debian's oneDNN uses), declared
 * here so that no omp.h is needed (clang ships none). */
int omp_get_max_threads(void);
void omp_set_num_threads(int n);

/* The engine, stream and primitives of one call; everything is released on return. */
typedef struct dnnl_call {
  hlo_context *ctx;
  dnnl_engine_t engine;
  dnnl_stream_t stream;
  dnnl_primitive_desc_t fwd_pd, pd;
  dnnl_primitive_t prim;
  dnnl_memory_t user[3], inner[3]; /* src-like (lhs), rhs, out; inner: what the primitive reads */
  dnnl_primitive_t reorder[3];
  dnnl_data_type_t dt;             /* of all three arrays */
  size_t esize;                    /* its bytes */
  void *flipped;                   /* the reversed weights (FLIP) */
  void *scratch;                   /* the context's scratch (hlo_ctx_scratch_take), or NULL */
  char *scratch_next;              /* its part not yet handed out */
  int64_t scratch_left;
} dnnl_call;

/* oneDNN's memory descriptor of n sizes and strides at d, elements of type dt. */
static bool md_strided(dnnl_memory_desc_t *md, const int64_t *d, int n, dnnl_data_type_t dt) {
  dnnl_dims_t dims, strides;
  for (int i = 0; i < n; i++)
    dims[i] = d[i], strides[i] = d[n + i];
  return dnnl_memory_desc_init_by_strides(md, n, dims, dt, strides) == dnnl_success;
}

/* The weights' descriptor: 5-D (grouped) or 4-D, with the strides of the HLO buffer or, for
 * flipped weights, of the dense goihw copy. */
static bool md_weights(dnnl_memory_desc_t *md, const int64_t *desc, bool dense, dnnl_data_type_t dt) {
  const int64_t *w = desc + HLO_RT_DNNL_WEI;
  int64_t d[10];
  memcpy(d, w, sizeof d);
  if (dense)
    for (int i = 4, st = 1; i >= 0; st *= (int)w[i], i--)
      d[5 + i] = st;
  if (desc[HLO_RT_DNNL_GROUPS] > 1)
    return md_strided(md, d, 5, dt);
  int64_t d4[8] = {d[1], d[2], d[3], d[4], d[6], d[7], d[8], d[9]};
  return md_strided(md, d4, 4, dt);
}

static bool md_any(dnnl_memory_desc_t *md, const dnnl_memory_desc_t *like) {
  return dnnl_memory_desc_init_by_tag(md, like->ndims, like->dims, like->data_type, dnnl_format_tag_any) ==
         dnnl_success;
}

/* The operation descriptor of `kind` over src, weights and dst descriptors. */
static bool op_desc(dnnl_convolution_desc_t *cd, int kind, const int64_t *desc, const dnnl_memory_desc_t *src,
                    const dnnl_memory_desc_t *wei, const dnnl_memory_desc_t *dst) {
  dnnl_dims_t st, dil, pl, pr;
  for (int i = 0; i < 2; i++) {
    st[i] = desc[HLO_RT_DNNL_STRIDE + i], dil[i] = desc[HLO_RT_DNNL_DIL + i];
    pl[i] = desc[HLO_RT_DNNL_PAD_L + i], pr[i] = desc[HLO_RT_DNNL_PAD_R + i];
  }
  dnnl_status_t s;
  if (kind == HLO_RT_DNNL_FWD)
    s = dnnl_dilated_convolution_forward_desc_init(cd, dnnl_forward_training, dnnl_convolution_direct, src, wei, NULL,
                                                   dst, st, dil, pl, pr);
  else if (kind == HLO_RT_DNNL_BWD_DATA)
    s = dnnl_dilated_convolution_backward_data_desc_init(cd, dnnl_convolution_direct, src, wei, dst, st, dil, pl, pr);
  else
    s = dnnl_dilated_convolution_backward_weights_desc_init(cd, dnnl_convolution_direct, src, wei, NULL, dst, st, dil,
                                                            pl, pr);
  return s == dnnl_success;
}

/* Creates call->pd (and the forward hint the backward kinds need) with the descriptors given. */
static bool make_pd(dnnl_call *c, const int64_t *desc, const dnnl_memory_desc_t *src, const dnnl_memory_desc_t *wei,
                    const dnnl_memory_desc_t *dst) {
  int kind = (int)desc[HLO_RT_DNNL_KIND];
  dnnl_convolution_desc_t cd;
  if (kind != HLO_RT_DNNL_FWD) {
    if (!op_desc(&cd, HLO_RT_DNNL_FWD, desc, src, wei, dst) ||
        dnnl_primitive_desc_create(&c->fwd_pd, &cd, NULL, c->engine, NULL) != dnnl_success)
      return false;
  }
  return op_desc(&cd, kind, desc, src, wei, dst) &&
         dnnl_primitive_desc_create(&c->pd, &cd, NULL, c->engine, c->fwd_pd) == dnnl_success;
}

/* The query of the primitive's descriptor for each array: lhs, rhs, out by kind. */
static void queries(int kind, dnnl_query_t q[3]) {
  static const dnnl_query_t by_kind[3][3] = {
      {dnnl_query_src_md, dnnl_query_weights_md, dnnl_query_dst_md},
      {dnnl_query_diff_dst_md, dnnl_query_weights_md, dnnl_query_diff_src_md},
      {dnnl_query_src_md, dnnl_query_diff_dst_md, dnnl_query_diff_weights_md},
  };
  memcpy(q, by_kind[kind], sizeof by_kind[kind]);
}

static const int dnnl_args[3][3] = {
    {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST},
    {DNNL_ARG_DIFF_DST, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_SRC},
    {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_WEIGHTS},
};

/* The user's memory of array a and, where the primitive wants another layout, its own memory
 * with the reorder between them (into it for inputs, a < 2; out of it for the output).  The
 * activations' copies live in the context's scratch where it could be had, the weights'
 * (small) in oneDNN's own allocation. */
static bool bind(dnnl_call *c, int a, bool weights, const dnnl_memory_desc_t *user_md,
                 const dnnl_memory_desc_t *prim_md, void *ptr) {
  if (dnnl_memory_create(&c->user[a], user_md, c->engine, ptr) != dnnl_success)
    return false;
  if (dnnl_memory_desc_equal(user_md, prim_md)) {
    c->inner[a] = c->user[a];
    return true;
  }
  dnnl_primitive_desc_t rpd;
  const dnnl_memory_desc_t *from = a < 2 ? user_md : prim_md, *to = a < 2 ? prim_md : user_md;
  /* the caller's scratch when the copy fits (64-byte multiples keep it aligned), else oneDNN's */
  int64_t bytes = ((int64_t)dnnl_memory_desc_get_size(prim_md) + 63) / 64 * 64;
  void *where = DNNL_MEMORY_ALLOCATE;
  if (!weights && bytes <= c->scratch_left) {
    where = c->scratch_next;
    c->scratch_next += bytes, c->scratch_left -= bytes;
  }
  if (dnnl_memory_create(&c->inner[a], prim_md, c->engine, where) != dnnl_success ||
      dnnl_reorder_primitive_desc_create(&rpd, from, c->engine, to, c->engine, NULL) != dnnl_success)
    return false;
  dnnl_status_t s = dnnl_primitive_create(&c->reorder[a], rpd);
  dnnl_primitive_desc_destroy(rpd);
  return s == dnnl_success;
}

/* Array a (the weights) from data prepared by an earlier call, already in the primitive's
 * layout: no user memory, no reorder. */
static bool bind_prepared(dnnl_call *c, int a, const dnnl_memory_desc_t *prim_md, const void *data) {
  return dnnl_memory_create(&c->inner[a], prim_md, c->engine, (void *)data) == dnnl_success;
}

/* The constant weights an earlier call of this site left in the context in the layout the
 * primitive wants now (prim_md), or NULL. */
static const void *prepared_weights(dnnl_call *c, const int64_t *desc, const void *rhs,
                                    const dnnl_memory_desc_t *prim_md) {
  int64_t key = desc[HLO_RT_DNNL_WEI_KEY];
  const hlo_ctx_prepared *e = key ? hlo_ctx_prepared_find(c->ctx, desc, rhs, key) : NULL;
  return e && e->layout_bytes == sizeof *prim_md && dnnl_memory_desc_equal(e->layout, prim_md) &&
                 e->data_bytes == dnnl_memory_desc_get_size(prim_md)
             ? e->data
             : NULL;
}

static bool run_reorder(dnnl_call *c, int a) {
  if (!c->reorder[a])
    return true;
  dnnl_memory_t from = a < 2 ? c->user[a] : c->inner[a], to = a < 2 ? c->inner[a] : c->user[a];
  dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  return dnnl_primitive_execute(c->reorder[a], c->stream, 2, args) == dnnl_success;
}

/* The weights (elements of `es` bytes) reversed along both window dimensions, dense in goihw
 * order (malloc'd). */
static void *flip_weights(const int64_t *desc, const void *weights, size_t es) {
  const int64_t *d = desc + HLO_RT_DNNL_WEI;
  int64_t n = d[0] * d[1] * d[2] * d[3] * d[4];
  const char *w = weights;
  char *f = malloc((size_t)n * es), *p = f;
  if (!f)
    return NULL;
  for (int64_t g = 0; g < d[0]; g++)
    for (int64_t o = 0; o < d[1]; o++)
      for (int64_t i = 0; i < d[2]; i++)
        for (int64_t y = d[3] - 1; y >= 0; y--)
          for (int64_t x = d[4] - 1; x >= 0; x--)
            memcpy(p, w + (g * d[5] + o * d[6] + i * d[7] + y * d[8] + x * d[9]) * (int64_t)es, es), p += es;
  return f;
}

static void call_release(dnnl_call *c) {
  for (int a = 0; a < 3; a++) {
    if (c->reorder[a])
      dnnl_primitive_destroy(c->reorder[a]);
    if (c->inner[a] && c->inner[a] != c->user[a])
      dnnl_memory_destroy(c->inner[a]);
    if (c->user[a])
      dnnl_memory_destroy(c->user[a]);
  }
  if (c->prim)
    dnnl_primitive_destroy(c->prim);
  if (c->pd)
    dnnl_primitive_desc_destroy(c->pd);
  if (c->fwd_pd)
    dnnl_primitive_desc_destroy(c->fwd_pd);
  if (c->stream)
    dnnl_stream_destroy(c->stream);
  if (c->engine)
    dnnl_engine_destroy(c->engine);
  free(c->flipped);
  hlo_ctx_scratch_give(c->ctx, c->scratch);
}

/* Bytes the copies of the activations (not the weights, array `weights`) in the primitive's
 * layouts take, each rounded to 64. */
static int64_t copies_bytes(const dnnl_call *c, const dnnl_query_t q[3], const dnnl_memory_desc_t *const user[3],
                            int weights) {
  int64_t n = 0;
  for (int a = 0; a < 3; a++) {
    const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(c->pd, q[a], 0);
    if (a != weights && !dnnl_memory_desc_equal(user[a], md))
      n += ((int64_t)dnnl_memory_desc_get_size(md) + 63) / 64 * 64;
  }
  return n;
}

/* The name of pd's implementation ("jit:avx2", "ref:any", ...), or NULL when oneDNN gives none. */
static const char *impl_name(const_dnnl_primitive_desc_t pd) {
  const char *impl = NULL;
  return dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success ? impl : NULL;
}

/* Whether pd's implementation is one to avoid: oneDNN's reference implementation (a plain
 * loop, what odd strides get; also when the name is unknown) or, with `gemm_too`, its
 * GEMM-based kernels. */
static bool impl_avoided(const_dnnl_primitive_desc_t pd, bool gemm_too) {
  const char *impl = impl_name(pd);
  return !impl || strncmp(impl, "ref", 3) == 0 || (gemm_too && strstr(impl, "gemm:") != NULL);
}

static bool is_reference(const_dnnl_primitive_desc_t pd) { return impl_avoided(pd, false); }

/* At least this many input and output features, and a window of more than one element, for
 * blocked_faster. */
enum { DNNL_BLOCKED_MIN_FEATURES = 32 };

/* Whether a dense forward convolution runs faster on oneDNN's blocked layouts, reorders of
 * the activations counted, than on the buffers' own: where oneDNN's kernel for the plain
 * layouts is its older AVX2 direct one (on CPUs without AVX-512; with AVX-512 its brgemm
 * kernels read NHWC as fast as its blocked layouts, and keep them) and the window is wider
 * than 1x1 over enough features.  The extra memory is the activations' copies in the
 * context's scratch (copies_bytes).
 * Measured on an AMD EPYC family 25 (Zen 3; docs/performance.md): 3x3 NHWC 8x56x56x64 -> 64
 * 21 -> 15 ms, 3x3 stride 2 and 28x28 to 112x112 images 1.1-1.3x faster; 1x1 convolutions
 * and few features (a first layer's 3) were faster on the plain layouts and keep them. */
static bool blocked_faster(const_dnnl_primitive_desc_t plain, const int64_t *desc) {
  const int64_t *w = desc + HLO_RT_DNNL_WEI; /* groups, outputs, inputs, window height, width */
  if (desc[HLO_RT_DNNL_KIND] != HLO_RT_DNNL_FWD || w[0] != 1 || w[1] < DNNL_BLOCKED_MIN_FEATURES ||
      w[2] < DNNL_BLOCKED_MIN_FEATURES || w[3] * w[4] < 2)
    return false;
  const char *impl = impl_name(plain);
  return impl && strcmp(impl, "jit:avx2") == 0;
}

/* Sets the primitive up on the HLO buffers and runs it; false when oneDNN declines. */
static bool conv_run(dnnl_call *c, const int64_t *desc, const void *lhs, const void *rhs, void *out) {
  int kind = (int)desc[HLO_RT_DNNL_KIND];
  bool grouped = desc[HLO_RT_DNNL_GROUPS] > 1, flip = desc[HLO_RT_DNNL_FLIP] != 0;
  dnnl_memory_desc_t src, wei, dst, asrc, awei, adst;
  if (!md_strided(&src, desc + HLO_RT_DNNL_SRC, 4, c->dt) || !md_weights(&wei, desc, flip, c->dt) ||
      !md_strided(&dst, desc + HLO_RT_DNNL_DST, 4, c->dt) || !md_any(&asrc, &src) || !md_any(&awei, &wei) ||
      !md_any(&adst, &dst))
    return false;
  if (dnnl_engine_create(&c->engine, dnnl_cpu, 0) != dnnl_success ||
      dnnl_stream_create(&c->stream, c->engine, dnnl_stream_default_flags) != dnnl_success)
    return false;
  /* Convolutions on the activations' own layouts (oneDNN's GEMM-based kernels read NCHW well,
   * its direct ones NHWC; its depthwise brdgmm kernel NHWC) with the weights in its choice of
   * layout (a small reorder; its direct kernels want them blocked), unless only its reference
   * loop takes them, or, for a grouped one, its GEMM-based kernel (NCHW depthwise: 3x slower
   * than its jit_dw kernel on its blocked layouts with the reorders in and out), or its AVX2
   * direct kernel a dense 3x3-like one (blocked_faster). */
  if (!make_pd(c, desc, &src, &awei, &dst) || impl_avoided(c->pd, grouped) || blocked_faster(c->pd, desc)) {
    if (c->pd)
      dnnl_primitive_desc_destroy(c->pd);
    c->pd = NULL;
    if (c->fwd_pd)
      dnnl_primitive_desc_destroy(c->fwd_pd);
    c->fwd_pd = NULL;
    if (!make_pd(c, desc, &asrc, &awei, &adst) || (c->dt != dnnl_f32 && is_reference(c->pd)))
      return false;
  }
  dnnl_query_t q[3];
  queries(kind, q);
  const dnnl_memory_desc_t *user[3] = {kind == HLO_RT_DNNL_BWD_WEIGHTS ? &src : kind == HLO_RT_DNNL_FWD ? &src : &dst,
                                       kind == HLO_RT_DNNL_BWD_WEIGHTS ? &dst : &wei,
                                       kind == HLO_RT_DNNL_BWD_WEIGHTS ? &wei : kind == HLO_RT_DNNL_FWD ? &dst : &src};
  int weights = kind == HLO_RT_DNNL_BWD_WEIGHTS ? 2 : 1;
  /* Constant weights (forward, backward data) another call left in the primitive's layout. */
  const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md(c->pd, q[1], 0);
  const void *prepared = weights == 1 ? prepared_weights(c, desc, rhs, wmd) : NULL;
  if (!prepared && flip && !(c->flipped = flip_weights(desc, rhs, c->esize)))
    return false;
  void *ptr[3] = {(void *)lhs, c->flipped ? c->flipped : (void *)rhs, out};
  int64_t need = copies_bytes(c, q, user, weights);
  if (need > 0 && (c->scratch = hlo_ctx_scratch_take(c->ctx, (size_t)need)))
    c->scratch_next = c->scratch, c->scratch_left = need;
  for (int a = 0; a < 3; a++)
    if (!(a == 1 && prepared ? bind_prepared(c, a, wmd, prepared)
                             : bind(c, a, a == weights, user[a], dnnl_primitive_desc_query_md(c->pd, q[a], 0), ptr[a])))
      return false;
  if (dnnl_primitive_create(&c->prim, c->pd) != dnnl_success)
    return false;
  dnnl_exec_arg_t args[3];
  for (int a = 0; a < 3; a++)
    args[a] = (dnnl_exec_arg_t){dnnl_args[kind][a], c->inner[a]};
  /* A failure past this point may have written part of out; the caller's own kernel then
   * overwrites all of it (out never aliases lhs or rhs). */
  if (!(run_reorder(c, 0) && run_reorder(c, 1) && dnnl_primitive_execute(c->prim, c->stream, 3, args) == dnnl_success &&
        run_reorder(c, 2) && dnnl_stream_wait(c->stream) == dnnl_success))
    return false;
  /* Constant weights reordered for this call: kept for the next calls (a failure to keep them
   * only costs the reorder again). */
  void *reordered = NULL;
  if (weights == 1 && !prepared && desc[HLO_RT_DNNL_WEI_KEY] && c->reorder[1] &&
      dnnl_memory_get_data_handle(c->inner[1], &reordered) == dnnl_success && reordered)
    hlo_ctx_prepared_keep(c->ctx, desc, rhs, desc[HLO_RT_DNNL_WEI_KEY], wmd, sizeof *wmd, reordered,
                          dnnl_memory_desc_get_size(wmd));
  return true;
}

/* oneDNN picks its kernels from the CPU; HLO_RT_ISA (rt_isa.h) caps it like our own kernels.
 * oneDNN takes the cap once, before its first kernel is generated. */
static void cap_isa(void) {
  static const dnnl_cpu_isa_t caps[] = {[RT_ISA_BASE] = dnnl_cpu_isa_sse41,
                                        [RT_ISA_AVX2] = dnnl_cpu_isa_avx2,
                                        [RT_ISA_AVX512] = dnnl_cpu_isa_avx512_core_bf16};
  int level = rt_isa_level();
  if (level < RT_ISA_AMX)
    dnnl_set_max_cpu_isa(caps[level]);
}

HLO_RT_EXPORT int32_t hlo_rt_conv_dnnl(hlo_context *ctx, const int64_t *desc, const void *lhs, const void *rhs,
                                       void *out) {
  if (desc[HLO_RT_DNNL_KIND] == HLO_RT_DNNL_BWD_WEIGHTS && desc[HLO_RT_DNNL_FLIP])
    return 0; /* the code generator never asks for it */
  bool avx512 = rt_isa_level() >= RT_ISA_AVX512;
  if ((desc[HLO_RT_DNNL_ISA_RULE] == HLO_RT_DNNL_AT_AVX512 && !avx512) ||
      (desc[HLO_RT_DNNL_ISA_RULE] == HLO_RT_DNNL_BELOW_AVX512 && avx512))
    return 0; /* hloc's own kernel is the faster one on this CPU */
  static pthread_once_t capped = PTHREAD_ONCE_INIT;
  pthread_once(&capped, cap_isa);
  bool bf16 = desc[HLO_RT_DNNL_TYPE] == HLO_RT_DNNL_BF16;
  int before = omp_get_max_threads();
  omp_set_num_threads(hlo_rt_num_threads(ctx));
  dnnl_call c = {.ctx = ctx, .dt = bf16 ? dnnl_bf16 : dnnl_f32, .esize = bf16 ? 2 : 4};
  bool done = conv_run(&c, desc, lhs, rhs, out);
  call_release(&c);
  omp_set_num_threads(before);
  return done;
}

#endif
