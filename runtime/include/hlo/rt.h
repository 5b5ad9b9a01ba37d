/* hlo/rt.h — what compiled models call inside libhlort (linked into model.so): the
 * prototypes of hlo/rt_abi.def, the one list of runtime functions generated code calls (the
 * code generator declares the same rows, codegen/rt_abi.c), and the constants and types their
 * arguments use.  Internal ABI between hloc's code generator and the runtime of the same
 * version; not for application code.
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

/* A loop body: runs iterations [begin, end) of a loop.  Called concurrently from several
 * threads on disjoint ranges; it must not call exit or longjmp (hlo_rt_parallel_for, the
 * epilogue of hlo_rt_gemm_strided_epi_*). */
typedef void (*hlo_rt_range_fn)(void *arg, int64_t begin, int64_t end);

/* ---- constants of the calls' arguments ---- */
/* hlo_rt_complex_op's `op`: complex functions without an LLVM intrinsic. */
enum {
  HLO_RT_C_SIN, HLO_RT_C_COS, HLO_RT_C_TAN, HLO_RT_C_TANH, HLO_RT_C_SINH, HLO_RT_C_COSH,
  HLO_RT_C_ASIN, HLO_RT_C_ACOS, HLO_RT_C_ATAN, HLO_RT_C_ASINH, HLO_RT_C_ACOSH, HLO_RT_C_ATANH,
  HLO_RT_C_EXPM1, HLO_RT_C_LOG1P, HLO_RT_C_RSQRT, HLO_RT_C_SIGN, HLO_RT_C_LOGISTIC, HLO_RT_C_CBRT,
  HLO_RT_C_POW /* binary */
};

/* Key orders of hlo_rt_sort's fast path, for elements of 1, 2, 4 or 8 bytes: unsigned
 * integers (and pred), signed integers, XLA's float total order (-NaN < -inf < ... < -0 < +0
 * < ... < +inf < +NaN), and the total order of JAX's canonicalised keys (-0 is +0, every NaN
 * one value above +inf). */
enum { HLO_RT_SORT_UINT, HLO_RT_SORT_SINT, HLO_RT_SORT_FLOAT_TOTAL, HLO_RT_SORT_FLOAT_CANON };
/* A generated comparator: whether element i sorts before element j, where lines[k] holds the
 * current line of operand k contiguously.  Returns 1 or 0; -1 after storing a failing status
 * in *out_status. */
typedef int32_t (*hlo_rt_sort_less_fn)(hlo_context *ctx, void *const *lines, int64_t i, int64_t j,
                                       hlo_status *out_status);

/* Element kinds of the linear-algebra helpers. */
enum { HLO_RT_LA_F32, HLO_RT_LA_F64, HLO_RT_LA_C64, HLO_RT_LA_C128 };

/* Transform kinds of hlo_rt_fft (XLA's FftType). */
enum { HLO_RT_FFT_FFT, HLO_RT_FFT_IFFT, HLO_RT_FFT_RFFT, HLO_RT_FFT_IRFFT };

/* The operations a collective's reducer code names (hlo_rt_collective). */
enum { HLO_RT_REDUCER_ADD, HLO_RT_REDUCER_MUL, HLO_RT_REDUCER_MAX, HLO_RT_REDUCER_MIN, HLO_RT_REDUCER_AND,
       HLO_RT_REDUCER_OR };

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
/* Results of at least this many bytes are written with non-temporal (streaming) stores by
 * generated loops (hloc's default --nontemporal-min-bytes) and by the batch-norm kernels:
 * below it the result stays in the cache for its next reader (docs/performance.md,
 * "Non-temporal stores"). */
#define HLO_RT_NONTEMPORAL_MIN_BYTES ((int64_t)64 << 20)

/* The largest output width and output feature count hlo_rt_conv_grouped_f32 takes. */
#define HLO_RT_CONV_MAX_ROW 4096

/* hlo_rt_conv_grouped_f32's plane path: one output feature of one image at a time, its input
 * rows zero-padded in a row cache of HLO_RT_CONV_PLANE_CACHE floats holding up to
 * HLO_RT_CONV_PLANE_MAX_RING rows (the window's reach in rows; windows up to
 * HLO_RT_CONV_PLANE_MAX_KW columns).  It takes convolutions with one input feature per group
 * (depthwise, any channel multiplier) and a unit-stride input width (NCHW); hloc runs f32 ones
 * through it rather than oneDNN (docs/performance.md, "Depthwise convolutions by planes"). */
#define HLO_RT_CONV_PLANE_CACHE 16384
#define HLO_RT_CONV_PLANE_MAX_RING 64
#define HLO_RT_CONV_PLANE_MAX_KW 64

/* Whether the plane path takes descriptor d (HLO_RT_CONV_* indices). */
static inline int hlo_rt_conv_plane_fits(const int64_t *d) {
  int64_t st = d[HLO_RT_CONV_ST_W];
  int64_t padded = (d[HLO_RT_CONV_OW] - 1) * st + (d[HLO_RT_CONV_KW] - 1) * d[HLO_RT_CONV_DIL_W] + 1;
  int64_t ring = (d[HLO_RT_CONV_KH] - 1) * d[HLO_RT_CONV_DIL_H] + 1;
  return d[HLO_RT_CONV_IN_W] == 1 && d[HLO_RT_CONV_KIN] == 1 && st >= 1 && d[HLO_RT_CONV_KW] <= HLO_RT_CONV_PLANE_MAX_KW &&
         ring <= HLO_RT_CONV_PLANE_MAX_RING && ring * st * ((padded + st - 1) / st) <= HLO_RT_CONV_PLANE_CACHE;
}

/* Descriptor of hlo_rt_conv_dw_wgrad_f32 (a depthwise convolution's weight gradient,
 * runtime/src/kernels/rt_conv_wgrad.c): images N summed over, channels C; x planes H x W with
 * element strides for image, channel and row (columns contiguous); dy planes OH x OW likewise;
 * out (C, KH, KW) strides; the window stride between taps (ST_*: the forward convolution's
 * dilation), the window dilation between dy positions (DL_*: its stride) and the low padding
 * (y, x). */
enum {
  HLO_RT_DWG_N, HLO_RT_DWG_C, HLO_RT_DWG_H, HLO_RT_DWG_W, HLO_RT_DWG_OH, HLO_RT_DWG_OW, HLO_RT_DWG_KH,
  HLO_RT_DWG_KW, HLO_RT_DWG_X_N, HLO_RT_DWG_X_C, HLO_RT_DWG_X_H, HLO_RT_DWG_DY_N, HLO_RT_DWG_DY_C,
  HLO_RT_DWG_DY_H, HLO_RT_DWG_OUT_C, HLO_RT_DWG_OUT_H, HLO_RT_DWG_OUT_W, HLO_RT_DWG_ST_H, HLO_RT_DWG_ST_W,
  HLO_RT_DWG_DL_H, HLO_RT_DWG_DL_W, HLO_RT_DWG_PAD_H, HLO_RT_DWG_PAD_W, HLO_RT_DWG_DESC_LEN
};

/* Descriptor of hlo_rt_conv_dnnl: the element type of all three arrays (HLO_RT_DNNL_F32 or
 * _BF16: bf16 operands and result, accumulated in f32 and rounded once), the kind (HLO_RT_DNNL_FWD: lhs is the source, rhs the
 * weights, out the destination; _BWD_DATA: lhs is the destination's gradient, rhs the weights,
 * out the source's gradient; _BWD_WEIGHTS: lhs is the source, rhs the destination's gradient,
 * out the weights' gradient), the group count, whether the weights' window is read reversed
 * (FLIP), then oneDNN's view of the three arrays as sizes and element strides into the HLO
 * buffers: source (N, C, H, W), weights (G, O per group, I per group, KH, KW) and destination
 * (N, O, OH, OW), then window strides, dilations (oneDNN's: 0 is dense) and left and right
 * paddings (y, x).  One-dimensional convolutions have a unit height.  Last, WEI_KEY: 0, or,
 * when the weights (rhs of FWD and BWD_DATA) are a constant of the model, a nonzero hash of
 * their bytes: the runtime may then keep them in oneDNN's layout in the context across calls,
 * found again by this descriptor's address, rhs and the hash (rt_dnnl.c).  ISA_RULE: on which
 * CPUs oneDNN takes the convolution, by the runtime's level (rt_isa.h, capped by HLO_RT_ISA):
 * HLO_RT_DNNL_ANY_ISA, HLO_RT_DNNL_AT_AVX512 (declined below AVX-512) or HLO_RT_DNNL_BELOW_AVX512
 * (declined at AVX-512); a declined call returns 0 and hloc's own kernel runs (the forms where
 * the faster side depends on the vector width: compiler/codegen/conv_dnnl.c `route`). */
enum {
  HLO_RT_DNNL_TYPE, HLO_RT_DNNL_KIND, HLO_RT_DNNL_GROUPS, HLO_RT_DNNL_FLIP,
  HLO_RT_DNNL_SRC,                   /* 4 sizes, then 4 strides */
  HLO_RT_DNNL_WEI = HLO_RT_DNNL_SRC + 8, /* 5 sizes, then 5 strides */
  HLO_RT_DNNL_DST = HLO_RT_DNNL_WEI + 10, /* 4 sizes, then 4 strides */
  HLO_RT_DNNL_STRIDE = HLO_RT_DNNL_DST + 8,
  HLO_RT_DNNL_DIL = HLO_RT_DNNL_STRIDE + 2,
  HLO_RT_DNNL_PAD_L = HLO_RT_DNNL_DIL + 2,
  HLO_RT_DNNL_PAD_R = HLO_RT_DNNL_PAD_L + 2,
  HLO_RT_DNNL_WEI_KEY = HLO_RT_DNNL_PAD_R + 2, /* see below */
  HLO_RT_DNNL_ISA_RULE,
  HLO_RT_DNNL_DESC_LEN
};
enum { HLO_RT_DNNL_ANY_ISA, HLO_RT_DNNL_AT_AVX512, HLO_RT_DNNL_BELOW_AVX512 };
enum { HLO_RT_DNNL_FWD, HLO_RT_DNNL_BWD_DATA, HLO_RT_DNNL_BWD_WEIGHTS };
enum { HLO_RT_DNNL_F32, HLO_RT_DNNL_BF16 };

/* ---- the functions: one prototype per row of hlo/rt_abi.def ---- */
#define HLO_RT_ARG(ctype, kind, name) ctype name
#define HLO_RT_FN(ret, name, params) HLO_RT_EXPORT ret name params;
#include "hlo/rt_abi.def"

#endif
