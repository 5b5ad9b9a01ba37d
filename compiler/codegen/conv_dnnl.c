/* conv_dnnl.c — which HLO convolutions run through oneDNN (runtime/src/kernels/rt_dnnl.c), and their
 * descriptor (hlo/rt.h HLO_RT_DNNL_*).  Only in builds with libdnnl-dev (HLOC_HAVE_DNNL); f32
 * or bf16 operands and result (all three the same; bf16 accumulates in f32 and rounds once,
 * as XLA), one or two spatial dimensions, no negative padding.  Three forms:
 *  - forward: no base (lhs) dilation, batch_group_count 1, any feature_group_count; a reversed
 *    window reads the kernel flipped;
 *  - backward data: base dilation (the transposed convolution of a strided one), window stride
 *    1, batch_group_count 1; the kernel is read flipped unless the window is reversed;
 *  - backward weights: batch_group_count > 1 (depthwise weight gradients), or an output window
 *    smaller than the kernel's ("weights gradient shaped": fb01_io01->01bf); lhs batch is
 *    oneDNN's channels, lhs feature its batch, window dilation its stride.
 * Dense NCHW 1x1 convolutions of large images stay on hloc's own product per image or GEMM
 * path (on CPUs with AVX-512 only the larger ones), f32 depthwise NCHW ones on the direct
 * kernel's plane path (`route`).
 * Everything else, and anything oneDNN declines at run time, runs the lowering of conv.c: the
 * call returns 0 and the generated code falls through to it.  Constant weights carry a hash of
 * their bytes in the descriptor (weights_key), so the runtime can keep them in oneDNN's layout
 * between calls.  Tests: the golden cases
 * conv_model_* (testdata/golden/make.py), run with and without oneDNN.
 */
#include "codegen/cg_internal.h"
#include "hlo/rt.h"
#include "passes/buffer_plan.h"

#ifndef HLOC_HAVE_DNNL

bool cg_conv_dnnl(cg_function *f, ir_instr *in, LLVMValueRef out, LLVMBasicBlockRef *out_join) { return false; }

#else

/* Writes oneDNN's (N, C, H, W) view of s: batch-like dimension nb, channel-like nc, spatial sp
 * (ns of them; one spatial dimension gets a unit height). */
static void view4(int64_t *v, const ir_shape *s, int64_t nb, int64_t nc, const int64_t *sp, int ns) {
  v[0] = s->dims[nb], v[4] = cg_dim_stride(s, nb);
  v[1] = s->dims[nc], v[5] = cg_dim_stride(s, nc);
  v[2] = 1, v[6] = 0;
  for (int i = 0; i < ns; i++) {
    int slot = ns == 1 ? 3 : 2 + i;
    v[slot] = s->dims[sp[i]], v[slot + 4] = cg_dim_stride(s, sp[i]);
  }
  if (ns == 1)
    v[6] = v[3] * v[7];
}

/* The weights (G, O, I, KH, KW): per group `outs` output features along dimension od (group g
 * starting at g * outs), `ins` input features along id, window along sp. */
static void view_weights(int64_t *v, const ir_shape *s, int64_t groups, int64_t od, int64_t outs, int64_t id,
                         int64_t ins, const int64_t *sp, int ns) {
  v[0] = groups, v[5] = outs * cg_dim_stride(s, od);
  v[1] = outs, v[6] = cg_dim_stride(s, od);
  v[2] = ins, v[7] = cg_dim_stride(s, id);
  v[3] = 1, v[8] = 0;
  for (int i = 0; i < ns; i++) {
    int slot = ns == 1 ? 4 : 3 + i;
    v[slot] = s->dims[sp[i]], v[slot + 5] = cg_dim_stride(s, sp[i]);
  }
  if (ns == 1)
    v[8] = v[4] * v[9];
}

/* The right padding oneDNN's shape check wants: out = (in + pl + pr - keff) / stride + 1. */
static int64_t pad_right(int64_t in, int64_t out, int64_t keff, int64_t stride, int64_t pl) {
  return (out - 1) * stride + keff - in - pl;
}

/* The window parameters of spatial dimension i for `kind` (slot 0: y, 1: x); false when the
 * form does not fit.  ih/oh: oneDNN's source and destination sizes, k: its kernel size. */
static bool window_params(int64_t *desc, int kind, const ir_window_dim *w, int slot, int64_t ih, int64_t oh,
                          int64_t k) {
  int64_t st, dil, pl;
  if (kind == HLO_RT_DNNL_FWD)
    st = w->stride, dil = w->rhs_dilate, pl = w->pad_lo;
  else if (kind == HLO_RT_DNNL_BWD_DATA)
    st = w->lhs_dilate, dil = w->rhs_dilate, pl = (k - 1) * w->rhs_dilate - w->pad_lo;
  else
    st = w->rhs_dilate, dil = w->stride, pl = w->pad_lo;
  int64_t keff = (k - 1) * dil + 1, pr = pad_right(ih, oh, keff, st, pl);
  if (pl < 0 || pr < 0 || w->pad_lo < 0 || w->pad_hi < 0 || (ih + pl + pr - keff) / st + 1 != oh)
    return false;
  desc[HLO_RT_DNNL_STRIDE + slot] = st, desc[HLO_RT_DNNL_DIL + slot] = dil - 1;
  desc[HLO_RT_DNNL_PAD_L + slot] = pl, desc[HLO_RT_DNNL_PAD_R + slot] = pr;
  return true;
}

/* The form of the convolution, or -1 when none fits. */
static int conv_kind(const ir_instr *in, int ns) {
  const typeof(in->attrs.u.conv) *c = &in->attrs.u.conv;
  bool lhs_dilated = false, rev = false, stride1 = true;
  int64_t out_sp = 1, win_sp = 1;
  for (int i = 0; i < ns; i++) {
    ir_window_dim w = cg_conv_window_dim(in, i);
    lhs_dilated |= w.lhs_dilate != 1;
    rev |= w.rhs_reversal;
    stride1 &= w.stride == 1;
    out_sp *= in->shape->dims[c->dnums.output_spatial.v[i]];
    win_sp *= w.size;
  }
  if (c->batch_group_count > 1 || (c->feature_group_count == 1 && !lhs_dilated && out_sp < win_sp))
    return c->feature_group_count == 1 && !lhs_dilated && !rev ? HLO_RT_DNNL_BWD_WEIGHTS : -1;
  if (lhs_dilated)
    return stride1 ? HLO_RT_DNNL_BWD_DATA : -1;
  return HLO_RT_DNNL_FWD;
}

/* Output positions per image from which hloc's own kernels beat oneDNN on a dense 1x1
 * convolution whose channels are not the minor dimension (NCHW): oneDNN 2.6 runs those through
 * its GEMM-based kernel, per image.  With the positions the minor dimensions, in order, conv.c
 * multiplies each image in place (cg_conv_pointwise_path), faster than oneDNN from 28x28 on an
 * AMD EPYC family 25 (AVX2; mobilenet_v2's 32 -> 192 at 28x28: 9.6-10.2 ms against 11.4-13.3;
 * at 14x14 and 7x7 oneDNN wins by 1.2-1.4x); else its GEMM path gathers the features, faster
 * from 56x56 (loses 2-8x below; docs/performance.md "Convolution").  With AVX-512 oneDNN's
 * GEMM is the faster from 56x56 only (AMD EPYC family 26, 2 threads, batch 96: at 28x28 32 ->
 * 192 2.1 against 2.5 ms, 192 -> 32 2.5 against 3.2, 192 -> 64 3.7 against 5.1; at 56x56 24 ->
 * 144 6.3 against 4.8, 144 -> 24 and 96 -> 24 a tie; at 112x112 16 -> 96 16.8 against 14.0), and
 * for products of at most 16 output features at any size (our few-rows path: 32 -> 16 at
 * 112x112 6.6 against 8.1-8.3 ms, 96 -> 16 18-19.5 against 22.8). */
enum {
  DNNL_NCHW_1X1_MAX_POSITIONS = 56 * 56 - 1,
  DNNL_NCHW_POINTWISE_MAX_POSITIONS = 28 * 28 - 1,
  DNNL_NCHW_POINTWISE_MAX_POSITIONS_AVX512 = 56 * 56 - 1,
  DNNL_NCHW_POINTWISE_MAX_OUTS_AVX512 = 16,
};

/* Depthwise weight gradients (cg_conv_dw_wgrad_plan) stay on hloc's kernel from this many
 * positions of dy: oneDNN's jit_dw kernel with its two reorders is as fast or faster below
 * (AMD EPYC family 26, 2 threads, batch 96, 3x3, median ms, oneDNN against ours: stride 1 at
 * 112x112 21.5 / 11.3, 56x56 27.5 / 22.9, 28x28 7.6-7.9 / 7.6, 14x14 4.5 / 4.6, 7x7 2.6 / 4.3;
 * stride 2 to 56x56 31.2 / 28.1, to 28x28 12.6-13.2 / 14.7-14.9, to 14x14 4.8-5.2 / 6.7, to
 * 7x7 3.7-4.1 / 8.0-8.2).  That is our kernel's AVX-512 clone; its AVX2 one loses to oneDNN's
 * AVX2 kernels at every size (the same CPU held to AVX2: 112x112 39.2 against 22.3, 56x56 52.6
 * against 27.3, stride 2 to 56x56 65.1 against 32.9), so below AVX-512 oneDNN keeps them
 * (HLO_RT_DNNL_BELOW_AVX512).  Without oneDNN ours takes them all (the generic loop took
 * 186-188 ms for the 7x7 and 14x14 ones). */
enum { DNNL_DW_WGRAD_MIN_POSITIONS = 56 * 56 };

/* Where a (planned) convolution runs: oneDNN, hloc's own kernels, or oneDNN only on CPUs with
 * AVX-512 or only on those without (hlo/rt.h HLO_RT_DNNL_ISA_RULE) and ours on the others. */
typedef enum { ROUTE_DNNL, ROUTE_OWN, ROUTE_DNNL_AT_AVX512, ROUTE_DNNL_BELOW_AVX512 } conv_route;

static conv_route route(const ir_instr *in, const int64_t *desc) {
  const int64_t *src = desc + HLO_RT_DNNL_SRC, *wei = desc + HLO_RT_DNNL_WEI, *dst = desc + HLO_RT_DNNL_DST;
  int64_t dwg[HLO_RT_DWG_DESC_LEN];
  if (cg_conv_plane_path(in))
    return ROUTE_OWN;
  if (cg_conv_dw_wgrad_plan(in, dwg) && dwg[HLO_RT_DWG_OH] * dwg[HLO_RT_DWG_OW] >= DNNL_DW_WGRAD_MIN_POSITIONS)
    return ROUTE_DNNL_BELOW_AVX512;
  bool dense_1x1 = desc[HLO_RT_DNNL_KIND] != HLO_RT_DNNL_BWD_WEIGHTS && desc[HLO_RT_DNNL_GROUPS] == 1 &&
                   wei[3] == 1 && wei[4] == 1 && desc[HLO_RT_DNNL_STRIDE] == 1 && desc[HLO_RT_DNNL_STRIDE + 1] == 1;
  bool channels_minor = src[5] == 1 && dst[5] == 1;
  if (!dense_1x1 || channels_minor)
    return ROUTE_DNNL;
  int64_t positions = dst[2] * dst[3];
  if (!cg_conv_pointwise_path(in))
    return positions > DNNL_NCHW_1X1_MAX_POSITIONS ? ROUTE_OWN : ROUTE_DNNL;
  if (positions <= DNNL_NCHW_POINTWISE_MAX_POSITIONS)
    return ROUTE_DNNL;
  bool avx512_own = positions > DNNL_NCHW_POINTWISE_MAX_POSITIONS_AVX512 && dst[1] > DNNL_NCHW_POINTWISE_MAX_OUTS_AVX512;
  return avx512_own ? ROUTE_OWN : ROUTE_DNNL_AT_AVX512;
}

/* Fills desc for the convolution; false when oneDNN cannot take it. */
static bool dnnl_plan(const ir_instr *in, int64_t *desc) {
  const ir_shape *l = in->operands[0]->shape, *r = in->operands[1]->shape, *o = in->shape;
  const typeof(in->attrs.u.conv) *c = &in->attrs.u.conv;
  const ir_conv_dnums *d = &c->dnums;
  int ns = (int)d->input_spatial.n;
  if ((o->et != IR_F32 && o->et != IR_BF16) || l->et != o->et || r->et != o->et || ns < 1 || ns > 2)
    return false;
  desc[HLO_RT_DNNL_TYPE] = o->et == IR_BF16 ? HLO_RT_DNNL_BF16 : HLO_RT_DNNL_F32;
  for (int i = 0; i < o->rank; i++)
    if (o->dims[i] < 1)
      return false;
  for (int i = 0; i < l->rank; i++)
    if (l->dims[i] < 1)
      return false;
  int kind = conv_kind(in, ns);
  if (kind < 0)
    return false;
  int64_t fgc = c->feature_group_count, bgc = c->batch_group_count;
  int64_t k_in = r->dims[d->kernel_input_feature], k_out = r->dims[d->kernel_output_feature];
  desc[HLO_RT_DNNL_KIND] = kind;
  int64_t *src = desc + HLO_RT_DNNL_SRC, *wei = desc + HLO_RT_DNNL_WEI, *dst = desc + HLO_RT_DNNL_DST;
  bool rev = cg_conv_window_dim(in, 0).rhs_reversal;
  if (kind == HLO_RT_DNNL_FWD) {
    desc[HLO_RT_DNNL_GROUPS] = fgc, desc[HLO_RT_DNNL_FLIP] = rev;
    view4(src, l, d->input_batch, d->input_feature, d->input_spatial.v, ns);
    view_weights(wei, r, fgc, d->kernel_output_feature, k_out / fgc, d->kernel_input_feature, k_in,
                 d->kernel_spatial.v, ns);
    view4(dst, o, d->output_batch, d->output_feature, d->output_spatial.v, ns);
  } else if (kind == HLO_RT_DNNL_BWD_DATA) {
    /* oneDNN's forward: source = this output, destination = this lhs; its output features per
     * group are this kernel's input features, its input features this kernel's outputs. */
    desc[HLO_RT_DNNL_GROUPS] = fgc, desc[HLO_RT_DNNL_FLIP] = !rev;
    view4(src, o, d->output_batch, d->output_feature, d->output_spatial.v, ns);
    view_weights(wei, r, fgc, d->kernel_input_feature, k_in, d->kernel_output_feature, k_out / fgc,
                 d->kernel_spatial.v, ns);
    /* group g's forward output features are lhs features g*k_in..: stride of kernel input
     * feature inside a group, but groups step along the kernel's output features */
    wei[5] = (k_out / fgc) * cg_dim_stride(r, d->kernel_output_feature);
    view4(dst, l, d->input_batch, d->input_feature, d->input_spatial.v, ns);
  } else {
    desc[HLO_RT_DNNL_GROUPS] = bgc, desc[HLO_RT_DNNL_FLIP] = 0;
    view4(src, l, d->input_feature, d->input_batch, d->input_spatial.v, ns);
    view_weights(wei, o, bgc, d->output_feature, o->dims[d->output_feature] / bgc, d->output_batch,
                 o->dims[d->output_batch], d->output_spatial.v, ns);
    view4(dst, r, d->kernel_input_feature, d->kernel_output_feature, d->kernel_spatial.v, ns);
    if (dst[0] != src[0] || src[1] != bgc * wei[2])
      return false;
  }
  if (ns == 1) {
    desc[HLO_RT_DNNL_STRIDE] = 1, desc[HLO_RT_DNNL_DIL] = 0, desc[HLO_RT_DNNL_PAD_L] = 0, desc[HLO_RT_DNNL_PAD_R] = 0;
  }
  for (int i = 0; i < ns; i++) {
    int slot = ns == 1 ? 1 : i;
    ir_window_dim w = cg_conv_window_dim(in, i);
    if (w.rhs_reversal != rev)
      return false;
    if (!window_params(desc, kind, &w, slot, src[2 + slot], dst[2 + slot], wei[3 + slot]))
      return false;
  }
  return true;
}

/* The constant x's value is, through ops that forward their operand's bytes and, inside the
 * kOutput fusion being lowered, from a fused parameter to the fusion's operand; NULL when it
 * is not one (or its literal has no bytes). */
static const ir_instr *constant_source(const cg_function *f, const ir_instr *x) {
  for (int depth = 0; x && depth < 64; depth++) {
    if (x->op == IR_OP_CONSTANT)
      return x->shape->et != IR_TUPLE && x->attrs.u.literal && x->attrs.u.literal->data ? x : NULL;
    if (x->op == IR_OP_PARAMETER && f->fusion_call && f->fusion_call->n_called == 1 &&
        x->parent == f->fusion_call->called[0]) {
      const ir_computation *c = x->parent;
      const ir_instr *next = NULL;
      for (int p = 0; p < c->n_params && p < f->fusion_call->n_operands; p++)
        if (c->params[p] == x)
          next = f->fusion_call->operands[p];
      x = next;
    } else if (buffer_plan_forwards_operand(x)) {
      x = x->operands[0];
    } else {
      return NULL;
    }
  }
  return NULL;
}

/* HLO_RT_DNNL_WEI_KEY: a nonzero FNV-1a hash of the weights' bytes when they are a constant
 * (forward and backward-data kinds read them as rhs), else 0. */
static int64_t weights_key(const cg_function *f, const ir_instr *in, const int64_t *desc) {
  if (desc[HLO_RT_DNNL_KIND] == HLO_RT_DNNL_BWD_WEIGHTS)
    return 0;
  const ir_instr *k = constant_source(f, in->operands[1]);
  if (!k)
    return 0;
  const ir_literal *lit = k->attrs.u.literal;
  uint64_t h = 0xcbf29ce484222325ull;
  const unsigned char *b = (const unsigned char *)lit->data;
  for (int64_t i = 0; i < lit->nbytes; i++)
    h = (h ^ b[i]) * 0x100000001b3ull;
  h ^= (uint64_t)lit->nbytes;
  return h ? (int64_t)h : 1;
}

bool cg_conv_dnnl(cg_function *f, ir_instr *in, LLVMValueRef out, LLVMBasicBlockRef *out_join) {
  int64_t desc[HLO_RT_DNNL_DESC_LEN] = {0};
  if (!dnnl_plan(in, desc))
    return false;
  conv_route r = route(in, desc);
  if (r == ROUTE_OWN)
    return false;
  desc[HLO_RT_DNNL_ISA_RULE] = r == ROUTE_DNNL_AT_AVX512     ? HLO_RT_DNNL_AT_AVX512
                               : r == ROUTE_DNNL_BELOW_AVX512 ? HLO_RT_DNNL_BELOW_AVX512
                                                              : HLO_RT_DNNL_ANY_ISA;
  desc[HLO_RT_DNNL_WEI_KEY] = weights_key(f, in, desc);
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  LLVMValueRef g = cg_const_i64_table(cm, desc, HLO_RT_DNNL_DESC_LEN, "conv.dnnl");
  LLVMValueRef lhs = f->values[in->operands[0]->id].leaves[0], rhs = f->values[in->operands[1]->id].leaves[0];
  LLVMValueRef done =
      cg_runtime_call(cm, CG_RT_hlo_rt_conv_dnnl, (LLVMValueRef[]){f->ctx_arg, g, lhs, rhs, out}, 5, "dnnl");
  LLVMBasicBlockRef fallback = LLVMAppendBasicBlockInContext(cm->ctx, f->fn, "conv.own");
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(cm->ctx, f->fn, "conv.done");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntNE, done, LLVMConstInt(cm->i32, 0, 0), ""), join, fallback);
  LLVMPositionBuilderAtEnd(b, fallback);
  *out_join = join;
  return true;
}

#endif
