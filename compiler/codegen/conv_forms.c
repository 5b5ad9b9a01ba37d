/* conv_forms.c — which of hloc's own convolution kernels takes a convolution, asked by the
 * lowering (conv.c) and by the router to oneDNN (conv_dnnl.c) alike, so that both read one
 * rule: the direct kernel's descriptor (runtime/src/kernels/rt_conv.c, hlo/rt.h HLO_RT_CONV_*),
 * its plane path, the 1x1 convolutions over minor positions that conv.c multiplies one
 * image at a time, and depthwise weight gradients (runtime/src/kernels/rt_conv_wgrad.c).
 * Also the window and stride helpers both use.  Calls nothing above it.
 */
#include "codegen/cg_internal.h"
#include "hlo/rt.h"

ir_window_dim cg_conv_window_dim(const ir_instr *in, int i) {
  const typeof(in->attrs.u.conv) *c = &in->attrs.u.conv;
  int64_t ks = in->operands[1]->shape->dims[c->dnums.kernel_spatial.v[i]];
  return c->window.n ? c->window.dims[i] : (ir_window_dim){ks, 1, 0, 0, 1, 1, false};
}

/* Grouped convolutions (feature_group_count > 1) with at most this many input features per
 * group go to the direct kernel (more, or one group: GEMM or the loop). */
enum { CONV_DIRECT_MAX_KIN = 8 };

static bool conv_direct_type(ir_etype et) { return et == IR_F32 || et == IR_BF16 || et == IR_F16; }

int64_t cg_dim_stride(const ir_shape *s, int64_t d) {
  int64_t st = 1;
  for (int64_t e = d + 1; e < s->rank; e++)
    st *= s->dims[e];
  return st;
}

bool cg_conv_direct_plan(const ir_instr *in, int64_t *desc, int64_t *k_first) {
  const ir_shape *l = in->operands[0]->shape, *r = in->operands[1]->shape, *o = in->shape;
  const typeof(in->attrs.u.conv) *c = &in->attrs.u.conv;
  const ir_conv_dnums *d = &c->dnums;
  int ns = d->input_spatial.n;
  if (!conv_direct_type(l->et) || !conv_direct_type(r->et) || !conv_direct_type(o->et) || c->batch_group_count != 1 ||
      c->feature_group_count < 1 || ns < 1 || ns > 2)
    return false;
  int64_t kin = r->dims[d->kernel_input_feature], outs = r->dims[d->kernel_output_feature];
  if (kin > CONV_DIRECT_MAX_KIN || c->feature_group_count == 1 || outs > HLO_RT_CONV_MAX_ROW)
    return false;
  ir_window_dim win[2] = {{1, 1, 0, 0, 1, 1, false}, {1, 1, 0, 0, 1, 1, false}};
  int64_t sz[3][2] = {{1, 1}, {1, 1}, {1, 1}}, st[3][2] = {{0, 0}, {0, 0}, {0, 0}}; /* in, kernel, out */
  for (int i = 0; i < ns; i++) {
    int slot = ns == 1 ? 1 : i;
    win[slot] = cg_conv_window_dim(in, i);
    if (win[slot].lhs_dilate != 1)
      return false;
    int64_t dl = d->input_spatial.v[i], dr = d->kernel_spatial.v[i], dout = d->output_spatial.v[i];
    sz[0][slot] = l->dims[dl], sz[1][slot] = r->dims[dr], sz[2][slot] = o->dims[dout];
    st[0][slot] = cg_dim_stride(l, dl), st[1][slot] = cg_dim_stride(r, dr), st[2][slot] = cg_dim_stride(o, dout);
  }
  if (sz[2][1] > HLO_RT_CONV_MAX_ROW)
    return false;
  *k_first = 0;
  for (int s = 0; s < 2; s++)
    if (win[s].rhs_reversal) {
      *k_first += (sz[1][s] - 1) * st[1][s];
      st[1][s] = -st[1][s];
    }
  int64_t v[HLO_RT_CONV_DESC_LEN] = {
      o->dims[d->output_batch], outs, sz[2][0], sz[2][1], sz[0][0], sz[0][1], sz[1][0], sz[1][1], kin,
      outs / c->feature_group_count,
      cg_dim_stride(l, d->input_batch), cg_dim_stride(l, d->input_feature), st[0][0], st[0][1],
      cg_dim_stride(r, d->kernel_input_feature), cg_dim_stride(r, d->kernel_output_feature), st[1][0], st[1][1],
      cg_dim_stride(o, d->output_batch), cg_dim_stride(o, d->output_feature), st[2][0], st[2][1],
      win[0].stride, win[1].stride, win[0].pad_lo, win[1].pad_lo, win[0].rhs_dilate, win[1].rhs_dilate};
  for (int i = 0; i < HLO_RT_CONV_DESC_LEN; i++)
    desc[i] = v[i];
  return true;
}

bool cg_conv_plane_path(const ir_instr *in) {
  int64_t desc[HLO_RT_CONV_DESC_LEN], k_first;
  const ir_shape *l = in->operands[0]->shape, *r = in->operands[1]->shape, *o = in->shape;
  return l->et == IR_F32 && r->et == IR_F32 && o->et == IR_F32 && cg_conv_direct_plan(in, desc, &k_first) &&
         hlo_rt_conv_plane_fits(desc);
}

bool cg_conv_pointwise_path(const ir_instr *in) {
  const ir_shape *l = in->operands[0]->shape, *r = in->operands[1]->shape, *o = in->shape;
  const typeof(in->attrs.u.conv) *c = &in->attrs.u.conv;
  const ir_conv_dnums *d = &c->dnums;
  int64_t ns = d->input_spatial.n;
  if ((o->et != IR_F32 && o->et != IR_F64) || l->et != o->et || r->et != o->et || c->feature_group_count != 1 ||
      c->batch_group_count != 1 || ns < 1 || d->output_batch != 0 || d->output_feature != 1)
    return false;
  for (int64_t i = 0; i < ns; i++) {
    ir_window_dim w = cg_conv_window_dim(in, (int)i);
    if (w.size != 1 || w.stride != 1 || w.pad_lo != 0 || w.pad_hi != 0 || w.lhs_dilate != 1 ||
        d->input_spatial.v[i] != l->rank - ns + i || d->output_spatial.v[i] != 2 + i)
      return false;
  }
  return true;
}

bool cg_conv_dw_wgrad_plan(const ir_instr *in, int64_t *desc) {
  const ir_shape *l = in->operands[0]->shape, *r = in->operands[1]->shape, *o = in->shape;
  const typeof(in->attrs.u.conv) *c = &in->attrs.u.conv;
  const ir_conv_dnums *d = &c->dnums;
  int64_t groups = c->batch_group_count;
  if (l->et != IR_F32 || r->et != IR_F32 || o->et != IR_F32 || d->input_spatial.n != 2 || groups < 2 ||
      c->feature_group_count != 1)
    return false;
  /* one channel per group: lhs batch = kernel output features = output features = groups; the
   * images (lhs feature) are the kernel's input features; one output batch */
  if (l->dims[d->input_batch] != groups || r->dims[d->kernel_output_feature] != groups ||
      o->dims[d->output_feature] != groups || o->dims[d->output_batch] != 1 ||
      r->dims[d->kernel_input_feature] != l->dims[d->input_feature] ||
      cg_dim_stride(l, d->input_spatial.v[1]) != 1 || cg_dim_stride(r, d->kernel_spatial.v[1]) != 1)
    return false;
  ir_window_dim w[2] = {cg_conv_window_dim(in, 0), cg_conv_window_dim(in, 1)};
  for (int i = 0; i < 2; i++)
    if (w[i].lhs_dilate != 1 || w[i].rhs_reversal || w[i].stride < 1 || w[i].rhs_dilate < 1)
      return false;
  int64_t v[HLO_RT_DWG_DESC_LEN] = {
      l->dims[d->input_feature],
      groups,
      l->dims[d->input_spatial.v[0]],
      l->dims[d->input_spatial.v[1]],
      r->dims[d->kernel_spatial.v[0]],
      r->dims[d->kernel_spatial.v[1]],
      o->dims[d->output_spatial.v[0]],
      o->dims[d->output_spatial.v[1]],
      cg_dim_stride(l, d->input_feature),
      cg_dim_stride(l, d->input_batch),
      cg_dim_stride(l, d->input_spatial.v[0]),
      cg_dim_stride(r, d->kernel_input_feature),
      cg_dim_stride(r, d->kernel_output_feature),
      cg_dim_stride(r, d->kernel_spatial.v[0]),
      cg_dim_stride(o, d->output_feature),
      cg_dim_stride(o, d->output_spatial.v[0]),
      cg_dim_stride(o, d->output_spatial.v[1]),
      w[0].stride,
      w[1].stride,
      w[0].rhs_dilate,
      w[1].rhs_dilate,
      w[0].pad_lo,
      w[1].pad_lo};
  for (int i = 0; i < HLO_RT_DWG_DESC_LEN; i++)
    desc[i] = v[i];
  return true;
}
