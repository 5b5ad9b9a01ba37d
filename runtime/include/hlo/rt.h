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

/* Called by generated code at every while-loop back-edge: NULL, or an HLO_CANCELLED status
 * when hlo_context_cancel was called on ctx (ctx may be NULL: never cancelled). */
HLO_RT_EXPORT hlo_status hlo_rt_poll(hlo_context *ctx);

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
 * stays NaN; fnuz types have no -0).  f4e2m1fn (low 4 bits) and f8e8m0fnu convert as XLA's
 * elemental IR emitter does: f4 through f16, saturating at 6, NaN to -0; e8m0 rounding the
 * mantissa half up, zero and negatives to NaN (runtime/src/rt.c). */
HLO_RT_EXPORT float hlo_rt_f8_to_f32(int32_t dtype, uint8_t bits);
HLO_RT_EXPORT uint8_t hlo_rt_f32_to_f8(int32_t dtype, float x);

/* ---- dense matrix products (runtime/src/rt_gemm.c) ---- */
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
/* The same with an epilogue (a kOutput fusion's elementwise tail): once each part of the
 * result is final, still in cache, epi(epi_arg, begin, end) runs on elements [begin, end) of
 * the whole result (c[0] being element 0), in place; the calls cover every element once,
 * each within one row of one batch, concurrently from the pool's threads on disjoint ranges.
 * epi NULL: none.  (epi is a hlo_rt_range_fn of hlo/rt_parallel.h.) */
HLO_RT_EXPORT void hlo_rt_gemm_strided_epi_f32(hlo_context *ctx, int64_t batch, int64_t m, int64_t n, int64_t k,
                                               const float *a, int64_t a_bs, int64_t a_rs, int64_t a_cs,
                                               const float *b, int64_t b_bs, int64_t b_rs, int64_t b_cs, float *c,
                                               void (*epi)(void *, int64_t, int64_t), void *epi_arg);
HLO_RT_EXPORT void hlo_rt_gemm_strided_epi_f64(hlo_context *ctx, int64_t batch, int64_t m, int64_t n, int64_t k,
                                               const double *a, int64_t a_bs, int64_t a_rs, int64_t a_cs,
                                               const double *b, int64_t b_bs, int64_t b_rs, int64_t b_cs, double *c,
                                               void (*epi)(void *, int64_t, int64_t), void *epi_arg);
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

/* bf16 operands (the bits, as uint16_t) in the layouts of hlo_rt_gemm_strided_* and
 * hlo_rt_gemm_indexed_*, accumulated in f32 into c (dense row-major, batch x m x n f32);
 * out: NULL, or a bf16 result of c's layout that receives each f32 sum rounded once to
 * nearest even (NaN stays NaN); c is then scratch that the kernel may leave unwritten (a
 * depth of at most 2048 goes from the tiles to out directly).  Uses AMX where the CPU and OS have it (denormal products
 * flushed: docs/performance-gemm.md), else f32 copies through hlo_rt_gemm_strided_f32.
 * HLO_GEMM_BF16=avx512 in the environment picks the AVX512_BF16 kernel where the CPU has
 * it, HLO_GEMM_BF16=f32 the f32 copies (tests, measurements).  runtime/src/rt_gemm_bf16.c. */
/* 1 when hlo_rt_gemm_*_bf16 run on bf16 instructions here (as chosen for this call: host and
 * HLO_GEMM_BF16), 0 when they would widen the operands to f32 copies (compiled dots then
 * convert into their own scratch instead, as fast as before the bf16 kernel). */
HLO_RT_EXPORT int32_t hlo_rt_gemm_bf16_native(void);
HLO_RT_EXPORT void hlo_rt_gemm_strided_bf16(hlo_context *ctx, int64_t batch, int64_t m, int64_t n, int64_t k,
                                            const uint16_t *a, int64_t a_bs, int64_t a_rs, int64_t a_cs,
                                            const uint16_t *b, int64_t b_bs, int64_t b_rs, int64_t b_cs, float *c,
                                            uint16_t *out);
HLO_RT_EXPORT void hlo_rt_gemm_indexed_bf16(hlo_context *ctx, int64_t batch, int64_t m, int64_t n, int64_t k,
                                            const uint16_t *a, const int64_t *a_off, const uint16_t *b,
                                            const int64_t *b_off, float *c, uint16_t *out);

/* ---- sort, top-k, linear algebra, random bits (rt_sort.c, rt_linalg.c, rt_rng.c) ---- */
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
/* Sorts n_ops arrays of outer x n x inner elements (row-major; operand k has elem_bytes[k]
 * bytes per element) along the middle dimension, stably, writing out[k] (which may be in[k]).
 * With less == NULL the order is that of operand key_op under key_kind (an HLO_RT_SORT_*;
 * inf_bits: +infinity's bit pattern for the float kinds), reversed when descending; otherwise
 * less decides.  Lines run on ctx's pool.  Fails only when out of memory or less fails. */
HLO_RT_EXPORT hlo_status hlo_rt_sort(hlo_context *ctx, int32_t n_ops, void *const *in, void *const *out,
                                     const int32_t *elem_bytes, int64_t outer, int64_t n, int64_t inner,
                                     int32_t key_op, int32_t key_kind, int32_t descending, uint64_t inf_bits,
                                     hlo_rt_sort_less_fn less);
/* Top-k of each of `rows` rows of n elements: the k first of the row stably sorted in
 * descending (largest) or ascending key order, with their positions as s32. */
HLO_RT_EXPORT hlo_status hlo_rt_topk(hlo_context *ctx, const void *in, void *out_values, int32_t *out_indices,
                                     int32_t elem_bytes, int64_t rows, int64_t n, int64_t k, int32_t key_kind,
                                     int32_t largest, uint64_t inf_bits);

/* Element kinds of the linear-algebra helpers. */
enum { HLO_RT_LA_F32, HLO_RT_LA_F64, HLO_RT_LA_C64, HLO_RT_LA_C128 };
/* Cholesky factors of `batch` row-major n x n matrices a into out (which may be a): lower
 * (L with A = L L^H, read from A's lower triangle) or upper (U = L^H, read from the upper
 * triangle); the other triangle is zero.  A matrix that is not positive definite (a pivot that
 * is not > 0, or NaN) gives a matrix of NaNs, as XLA's CPU backend does. */
HLO_RT_EXPORT hlo_status hlo_rt_cholesky(hlo_context *ctx, int32_t kind, int64_t batch, int64_t n, const void *a,
                                         void *out, int32_t lower);
/* Triangular solve, batched: a is batch x m x m, b and out batch x rows x cols; solves
 * op(A) X = B (left_side) or X op(A) = B, reading only the `lower` (else upper) triangle of A,
 * diagonal 1 when unit_diagonal; transpose_a 0 none, 1 transpose, 2 adjoint.  Singular
 * matrices give the infinities and NaNs of plain division. */
HLO_RT_EXPORT hlo_status hlo_rt_triangular_solve(hlo_context *ctx, int32_t kind, int64_t batch, int64_t m,
                                                 int64_t rows, int64_t cols, const void *a, const void *b, void *out,
                                                 int32_t left_side, int32_t lower, int32_t unit_diagonal,
                                                 int32_t transpose_a);

/* rng-bit-generator: XLA's bit streams (THREE_FRY = 0, PHILOX = 1) for n_state u64 words of
 * state (2 for THREE_FRY; 2 or 3 for PHILOX), filling out with `count` elements of elem_bytes
 * (1, 2, 4 or 8) bytes laid out as `rank` dims (THREE_FRY's 32-bit layout depends on them),
 * and writing the new state to out_state. */
HLO_RT_EXPORT hlo_status hlo_rt_rng_bits(int32_t algorithm, const uint64_t *state, int32_t n_state,
                                         uint64_t *out_state, void *out, int32_t elem_bytes, int32_t rank,
                                         const int64_t *dims);
/* rng-get-and-update-state: the context's 128-bit generator state (two u64, low first) before
 * adding delta to it. */
HLO_RT_EXPORT void hlo_rt_rng_state(hlo_context *ctx, int64_t delta, uint64_t *out_state);
/* rng: `count` elements of an f16/bf16-free kind (HLO_RT_LA_F32 or F64 for floats, or
 * integers of elem_bytes with is_signed) drawn from the context's generator; uniform in
 * [a, b) (distribution 0) or normal with mean a and deviation b (distribution 1, floats). */
HLO_RT_EXPORT void hlo_rt_rng(hlo_context *ctx, int32_t distribution, int32_t is_float, int32_t elem_bytes,
                              int32_t is_signed, const void *a, const void *b, void *out, int64_t count);

/* ---- fft (runtime/src/rt_fft.c) ---- */
/* Transform kinds of hlo_rt_fft (XLA's FftType). */
enum { HLO_RT_FFT_FFT, HLO_RT_FFT_IFFT, HLO_RT_FFT_RFFT, HLO_RT_FFT_IRFFT };
/* One fft instruction.  desc: [kind, is_double (c128/f64 rather than c64/f32), rank, fft_rank,
 * operand dims (rank), result dims (rank), fft_length (fft_rank)].  The transform runs over the
 * fft_rank trailing axes, batched over the others; IFFT and IRFFT divide by the lengths.  As
 * in XLA's evaluator, FFT/IFFT operands are zero-padded or cut to fft_length and the result cut
 * or zero-padded to the result dims; a zero in fft_length gives zeros.  plan_slot: the call
 * site's pointer-sized slot, NULL at first: the first call stores the site's plan there (once,
 * atomically; thread-safe), later calls reuse it; hlo_rt_fft_plan_release frees it.  Lines
 * run on ctx's pool when large (ctx may be NULL).  Fails only when out of memory. */
HLO_RT_EXPORT hlo_status hlo_rt_fft(hlo_context *ctx, void **plan_slot, const int64_t *desc, const void *in,
                                    void *out);
HLO_RT_EXPORT void hlo_rt_fft_plan_release(void **plan_slot);

/* ---- custom calls (runtime/src/custom_call.c) ---- */
/* Runs one custom-call instruction.  desc is the instruction's constant description:
 * [api_version (XLA's numbering: 0 unspecified, 1 original, 2 status returning, 3 status
 * returning unified), n_operands, n_operand_leaves, n_result_leaves, then the shape tree of each
 * operand and of the result in preorder (-1 an array leaf, k >= 0 a tuple of k elements)].
 * operands / results: the leaf buffers, depth-first.  target is resolved through ctx
 * (hlo_rt_custom_call_resolve); instr names the instruction in messages; opaque is the
 * backend_config text (opaque_len bytes).  A target that reports a failure through
 * XlaCustomCallStatusSetFailure gives a FAILED_PRECONDITION status carrying its message. */
HLO_RT_EXPORT hlo_status hlo_rt_custom_call(hlo_context *ctx, const int64_t *desc, const char *target,
                                            const char *instr, const char *opaque, int64_t opaque_len,
                                            void *const *operands, void *const *results);

/* Runs one API_VERSION_TYPED_FFI custom call (runtime/src/xla_ffi.c): the handler `target`,
 * resolved as hlo_rt_custom_call_resolve does, gets an XLA_FFI_CallFrame (hlo/xla_ffi.h) at the
 * execute stage.  desc: [n_args, n_rets, then for every argument leaf and then every result
 * leaf: its XLA_FFI_DataType, rank, dims...]; args / rets: the leaf buffers; attrs: the
 * constant XLA_FFI_Attrs the compiler decoded from backend_config (NULL: none).  A returned
 * XLA_FFI_Error becomes a status (its code mapped) naming instr and target and carrying its
 * message. */
HLO_RT_EXPORT hlo_status hlo_rt_ffi_call(hlo_context *ctx, const int64_t *desc, const char *target,
                                         const char *instr, const void *attrs, void *const *args,
                                         void *const *rets);

/* ---- collectives (runtime/src/collectives.c) ---- */
/* Runs one collective instruction (instr names it in messages) on n operand leaves into n
 * result leaves.  desc: [kind (0 all-reduce, 1 all-gather, 2 reduce-scatter, 3 all-to-all,
 * 4 all-to-all of a tuple, 5 collective-permute, 6 collective-broadcast, 7 in-place
 * collective-permute, 8 ragged-all-to-all: one result leaf), n, dimension (-1 none), n_groups, group_size, the groups' replica ids,
 * n_pairs, (source, target) pairs, then per leaf: element bytes, rank, operand dims; for kind
 * 7 then: n_bufs, per buffer (input starts per pair 0/1, output starts per pair 0/1, its
 * slice sizes), and per start-index leaf whether it is signed; then each result leaf's byte
 * size (n of them; n_bufs for kind 7, whose operand leaves are the input buffers, the output
 * buffers, the input and the output start indices); then the reducer code: when the reducer
 * computation is one HLO_RT_REDUCER_* operation of its two distinct scalar parameters,
 * (operation << 8) | element type (hlo_dtype) (so a plain add is its element type alone, as
 * before the other operations were described), else -1].
 * reducer: the all-reduce / reduce-scatter
 * computation, hlo_status fn(ctx, params, results, frame) on scalars (else NULL); it is called
 * even for a described reducer when the runtime has no loop of its own for that type. */
enum { HLO_RT_REDUCER_ADD, HLO_RT_REDUCER_MUL, HLO_RT_REDUCER_MAX, HLO_RT_REDUCER_MIN, HLO_RT_REDUCER_AND,
       HLO_RT_REDUCER_OR };
HLO_RT_EXPORT hlo_status hlo_rt_collective(hlo_context *ctx, const int64_t *desc, const char *instr,
                                           void *const *operands, void *const *results, void *reducer);
/* ---- send/recv (runtime/src/channels.c) ---- */
/* desc: [channel_id, is_host_transfer, n_pairs, (source, target) pairs (from the frontend
 * attribute _xla_send_recv_source_target_pairs), n_leaves, then per data leaf: dtype, rank,
 * dims..., byte size].  send hands the data leaves over and writes the request id that its
 * send-done finishes into *request (the context's u32[]); recv starts a receive and writes its
 * request id; recv-done (desc: its own shape, no pairs) waits for it and fills its leaves.
 * A replica that is no target of any pair receives zeros; one that is no source sends nothing.
 * instr names the instruction in messages.  Every failure names the instruction and channel. */
HLO_RT_EXPORT hlo_status hlo_rt_send(hlo_context *ctx, const int64_t *desc, const char *instr, void *const *leaves,
                                     uint32_t *request);
HLO_RT_EXPORT hlo_status hlo_rt_send_done(hlo_context *ctx, const char *instr, const uint32_t *request);
HLO_RT_EXPORT hlo_status hlo_rt_recv(hlo_context *ctx, const int64_t *desc, const char *instr, uint32_t *request);
HLO_RT_EXPORT hlo_status hlo_rt_recv_done(hlo_context *ctx, const int64_t *desc, const char *instr,
                                          const uint32_t *request, void *const *leaves);

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

/* ---- convolution through oneDNN (runtime/src/rt_dnnl.c; libdnnl-dev, optional) ---- */
/* Descriptor of hlo_rt_conv_dnnl: the element type of all three arrays (HLO_RT_DNNL_F32 or
 * _BF16: bf16 operands and result, accumulated in f32 and rounded once), the kind (HLO_RT_DNNL_FWD: lhs is the source, rhs the
 * weights, out the destination; _BWD_DATA: lhs is the destination's gradient, rhs the weights,
 * out the source's gradient; _BWD_WEIGHTS: lhs is the source, rhs the destination's gradient,
 * out the weights' gradient), the group count, whether the weights' window is read reversed
 * (FLIP), then oneDNN's view of the three arrays as sizes and element strides into the HLO
 * buffers: source (N, C, H, W), weights (G, O per group, I per group, KH, KW) and destination
 * (N, O, OH, OW), then window strides, dilations (oneDNN's: 0 is dense) and left and right
 * paddings (y, x).  One-dimensional convolutions have a unit height. */
enum {
  HLO_RT_DNNL_TYPE, HLO_RT_DNNL_KIND, HLO_RT_DNNL_GROUPS, HLO_RT_DNNL_FLIP,
  HLO_RT_DNNL_SRC,                   /* 4 sizes, then 4 strides */
  HLO_RT_DNNL_WEI = HLO_RT_DNNL_SRC + 8, /* 5 sizes, then 5 strides */
  HLO_RT_DNNL_DST = HLO_RT_DNNL_WEI + 10, /* 4 sizes, then 4 strides */
  HLO_RT_DNNL_STRIDE = HLO_RT_DNNL_DST + 8,
  HLO_RT_DNNL_DIL = HLO_RT_DNNL_STRIDE + 2,
  HLO_RT_DNNL_PAD_L = HLO_RT_DNNL_DIL + 2,
  HLO_RT_DNNL_PAD_R = HLO_RT_DNNL_PAD_L + 2,
  HLO_RT_DNNL_DESC_LEN = HLO_RT_DNNL_PAD_R + 2
};
enum { HLO_RT_DNNL_FWD, HLO_RT_DNNL_BWD_DATA, HLO_RT_DNNL_BWD_WEIGHTS };
enum { HLO_RT_DNNL_F32, HLO_RT_DNNL_BF16 };
/* Runs the convolution `desc` describes with oneDNN on ctx's thread count (ctx may be
 * NULL: one thread), keeping oneDNN's copies of the activations in its layouts in the
 * context's scratch (reused from call to call); returns 1 when done, 0 when this runtime was
 * built without oneDNN or oneDNN declines the convolution (then the caller computes it,
 * overwriting whatever was written to out). */
HLO_RT_EXPORT int32_t hlo_rt_conv_dnnl(hlo_context *ctx, const int64_t *desc, const void *lhs, const void *rhs,
                                       void *out);

#endif
