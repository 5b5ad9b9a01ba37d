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

/* Complex functions without an LLVM intrinsic, on c64 (is_double = 0) or c128 values passed
 * by pointer (interleaved re, im).  `op` is an HLO_RT_C_* code. */
enum {
  HLO_RT_C_SIN, HLO_RT_C_COS, HLO_RT_C_TAN, HLO_RT_C_TANH, HLO_RT_C_SINH, HLO_RT_C_COSH,
  HLO_RT_C_ASIN, HLO_RT_C_ACOS, HLO_RT_C_ATAN, HLO_RT_C_ASINH, HLO_RT_C_ACOSH, HLO_RT_C_ATANH,
  HLO_RT_C_EXPM1, HLO_RT_C_LOG1P, HLO_RT_C_RSQRT, HLO_RT_C_SIGN, HLO_RT_C_LOGISTIC, HLO_RT_C_CBRT,
  HLO_RT_C_POW /* binary */
};
HLO_RT_EXPORT void hlo_rt_complex_op(int32_t op, int32_t is_double, const void *a, const void *b, void *out);

/* 8-bit floats (dtype = an hlo_dtype of f8e4m3fn, f8e5m2, f8e4m3, f8e3m4, f8e4m3fnuz,
 * f8e5m2fnuz or f8e4m3b11fnuz): the exact float value of the bits, and a float rounded to
 * nearest even (subnormals kept; too large: infinity where the type has one, else NaN; NaN
 * stays NaN; fnuz types have no -0). */
HLO_RT_EXPORT float hlo_rt_f8_to_f32(int32_t dtype, uint8_t bits);
HLO_RT_EXPORT uint8_t hlo_rt_f32_to_f8(int32_t dtype, float x);

/* ---- dense matrix products (runtime/src/rt_gemm.c; added by the CODEGEN-OPS helper) ---- */
/* C = A·B for row-major A (m x k, row stride lda), B (k x n, row stride ldb) and C (m x n, row
 * stride ldc), accumulated in the element type (k == 0 gives zeros).  Uses ctx's thread pool
 * for large products (ctx may be NULL: one thread).  Never fails: without memory for its
 * packing buffers it falls back to a plain loop nest. */
HLO_RT_EXPORT void hlo_rt_gemm_f32(hlo_context *ctx, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                                   const float *b, int64_t ldb, float *c, int64_t ldc);
HLO_RT_EXPORT void hlo_rt_gemm_f64(hlo_context *ctx, int64_t m, int64_t n, int64_t k, const double *a,
                                   int64_t lda, const double *b, int64_t ldb, double *c, int64_t ldc);
/* Batched products with element strides: for t < batch, the dense row-major m x n matrix at
 * c + t*m*n = A_t·B_t where A_t(i, p) = a[t*a_bs + i*a_rs + p*a_cs] and
 * B_t(p, j) = b[t*b_bs + p*b_rs + j*b_cs] (so transposed operands need no copy). */
HLO_RT_EXPORT void hlo_rt_gemm_strided_f32(hlo_context *ctx, int64_t batch, int64_t m, int64_t n, int64_t k,
                                           const float *a, int64_t a_bs, int64_t a_rs, int64_t a_cs,
                                           const float *b, int64_t b_bs, int64_t b_rs, int64_t b_cs, float *c);
HLO_RT_EXPORT void hlo_rt_gemm_strided_f64(hlo_context *ctx, int64_t batch, int64_t m, int64_t n, int64_t k,
                                           const double *a, int64_t a_bs, int64_t a_rs, int64_t a_cs,
                                           const double *b, int64_t b_bs, int64_t b_rs, int64_t b_cs, double *c);
/* Batched products of operands in any layout, through element-offset tables:
 * a_off = [batch offsets (batch), row offsets (m), depth offsets (k)] with A_t(i, p) =
 * a[a_off[t] + a_off[batch + i] + a_off[batch + m + p]], and b_off = [batch (batch), depth (k),
 * column (n)] with B_t(p, j) = b[b_off[t] + b_off[batch + p] + b_off[batch + k + j]]; C as in
 * hlo_rt_gemm_strided_*. */
HLO_RT_EXPORT void hlo_rt_gemm_indexed_f32(hlo_context *ctx, int64_t batch, int64_t m, int64_t n, int64_t k,
                                           const float *a, const int64_t *a_off, const float *b,
                                           const int64_t *b_off, float *c);
HLO_RT_EXPORT void hlo_rt_gemm_indexed_f64(hlo_context *ctx, int64_t batch, int64_t m, int64_t n, int64_t k,
                                           const double *a, const int64_t *a_off, const double *b,
                                           const int64_t *b_off, double *c);
/* ---- end of the CODEGEN-OPS block ---- */

/* ---- direct grouped convolution (runtime/src/rt_conv.c) ---- */
/* Descriptor indices of hlo_rt_conv_grouped_f32: sizes (batch, output features, output
 * height and width, input height and width, window height and width, input features per
 * group, output features per group), element strides of the input (batch, feature, y, x),
 * kernel (input feature in group, output feature, y, x; negative for a reversed window, with
 * k pointing at the first element used) and output (batch, feature, y, x), then window
 * strides, low paddings and window dilations (y, x). */
enum {
  HLO_RT_CONV_N, HLO_RT_CONV_O, HLO_RT_CONV_OH, HLO_RT_CONV_OW, HLO_RT_CONV_H, HLO_RT_CONV_W, HLO_RT_CONV_KH,
  HLO_RT_CONV_KW, HLO_RT_CONV_KIN, HLO_RT_CONV_M, HLO_RT_CONV_IN_N, HLO_RT_CONV_IN_C, HLO_RT_CONV_IN_H,
  HLO_RT_CONV_IN_W, HLO_RT_CONV_K_I, HLO_RT_CONV_K_O, HLO_RT_CONV_K_H, HLO_RT_CONV_K_W, HLO_RT_CONV_OUT_N,
  HLO_RT_CONV_OUT_O, HLO_RT_CONV_OUT_H, HLO_RT_CONV_OUT_W, HLO_RT_CONV_ST_H, HLO_RT_CONV_ST_W, HLO_RT_CONV_PAD_H,
  HLO_RT_CONV_PAD_W, HLO_RT_CONV_DIL_H, HLO_RT_CONV_DIL_W, HLO_RT_CONV_DESC_LEN
};
/* The largest output width and output feature count hlo_rt_conv_grouped_f32 takes. */
#define HLO_RT_CONV_MAX_ROW 4096
/* out(n, o, oy, ox) = sum over i < KIN, ky, kx of in(n, (o / M) * KIN + i, oy*st_h - pad_h +
 * ky*dil_h, ox*st_w - pad_w + kx*dil_w) * k(i, o, ky, kx), positions outside the input
 * contributing 0; accumulated in f32.  Output rows run on ctx's pool (ctx may be NULL). */
HLO_RT_EXPORT void hlo_rt_conv_grouped_f32(hlo_context *ctx, const int64_t *desc, const float *in, const float *k,
                                           float *out);

#endif
