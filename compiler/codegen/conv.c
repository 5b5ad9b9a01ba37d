/* conv.c — lowering of convolution: any dim_labels, window strides, padding, base (lhs) and
 * window (rhs) dilation, window reversal, feature_group_count and batch_group_count; the
 * result type may differ from the operands' (accumulated in the result's compute type).
 * f32/f64 convolutions with enough work per feature group (batch_group_count 1) go through
 * the runtime's GEMM, and so do bf16 x bf16 and f16 x f16 ones (a result of the same type or
 * f32) through its half-precision entries, which accumulate in f32 (dot.c's kernels; a
 * bf16/f16 result is rounded once from the f32 sum, as XLA's CPU backend computes them in
 * f32): per group, rows of output positions at a time, the input patches are
 * gathered into a [rows x K] matrix (im2col, K = input features x window; with the features
 * minor in the input, as in NHWC, K is window-major so each window position copies one
 * contiguous run), multiplied by the group's kernel packed as [K x N], and the product
 * written into the output (directly when the output is [batch, spatial..., feature]). Everything
 * else (depthwise convolutions among them) is one loop over output elements with an inner
 * loop over input features x window positions.
 * In builds with libdnnl-dev, f32 convolutions that map onto oneDNN call it first
 * (conv_dnnl.c); this lowering is then the path taken when oneDNN declines at run time.
 */
#include "codegen/cg_internal.h"
#include "hlo/rt.h"

/* At least this many multiply-adds per feature group, and at least this many output features
 * per group, for the GEMM path (below them the packing costs more than it saves). */
enum { CONV_GEMM_MIN_WORK = 32768, CONV_GEMM_MIN_FEATURES = 4 };
/* Elements of one patch matrix: bounds the scratch memory of a convolution (8 MB in f64). */
enum { CONV_GEMM_PATCH_ELEMS = 1 << 20 };

static int64_t product(const int64_t *d, int n) {
  int64_t p = 1;
  for (int i = 0; i < n; i++)
    p *= d[i];
  return p;
}

/* The GEMM path's sizes: groups, output positions, K and N per group, rows per patch matrix. */
typedef struct {
  int64_t groups, positions, k, n, rows;
  int64_t pos_dims[65]; /* output batch, then output spatial sizes */
  int64_t k_dims[65];   /* input features per group, then window sizes */
  /* K ordered window-major, input feature minor (when the input's features are its minor
   * dimension, as in NHWC): each window position's features are one contiguous run. */
  bool feature_minor;
  /* The output is [batch, spatial..., feature] row-major (b01f): the GEMM writes it directly. */
  bool direct_out;
} conv_gemm_plan;

/* The patch element kk's input feature (ki[0]) and window position (ki[1..ns]). */
static void k_unflatten(cg_function *f, const conv_gemm_plan *p, int ns, LLVMValueRef kk, LLVMValueRef *ki) {
  if (!p->feature_minor) {
    cg_unflatten(f, kk, p->k_dims, ns + 1, ki);
    return;
  }
  int64_t dims[65];
  LLVMValueRef idx[65];
  for (int i = 0; i < ns; i++)
    dims[i] = p->k_dims[1 + i];
  dims[ns] = p->k_dims[0];
  cg_unflatten(f, kk, dims, ns + 1, idx);
  ki[0] = idx[ns];
  for (int i = 0; i < ns; i++)
    ki[1 + i] = idx[i];
}

/* Whether the half-precision GEMM entries take the convolution: bf16 x bf16 or f16 x f16
 * operands, a result of the same type or f32. */
static bool conv_half(const ir_instr *in) {
  ir_etype l = in->operands[0]->shape->et, o = in->shape->et;
  return (l == IR_BF16 || l == IR_F16) && in->operands[1]->shape->et == l && (o == l || o == IR_F32);
}

static bool conv_gemm_plan_make(const ir_instr *in, conv_gemm_plan *p) {
  const ir_shape *l = in->operands[0]->shape, *r = in->operands[1]->shape, *o = in->shape;
  const typeof(in->attrs.u.conv) *c = &in->attrs.u.conv;
  const ir_conv_dnums *d = &c->dnums;
  int ns = d->input_spatial.n;
  bool same_wide = (o->et == IR_F32 || o->et == IR_F64) && l->et == o->et && r->et == o->et;
  if (!(same_wide || conv_half(in)) || c->batch_group_count != 1 || c->feature_group_count < 1 || ns > 64)
    return false;
  p->groups = c->feature_group_count;
  p->n = r->dims[d->kernel_output_feature] / p->groups;
  p->pos_dims[0] = o->dims[d->output_batch];
  p->k_dims[0] = r->dims[d->kernel_input_feature];
  for (int i = 0; i < ns; i++) {
    p->pos_dims[1 + i] = o->dims[d->output_spatial.v[i]];
    p->k_dims[1 + i] = r->dims[d->kernel_spatial.v[i]];
  }
  p->positions = product(p->pos_dims, ns + 1);
  p->k = product(p->k_dims, ns + 1);
  if (p->n < CONV_GEMM_MIN_FEATURES || p->k < 1 || p->positions < 1 ||
      (double)p->positions * (double)p->n * (double)p->k < CONV_GEMM_MIN_WORK)
    return false;
  p->rows = CONV_GEMM_PATCH_ELEMS / p->k;
  p->rows = p->rows < 1 ? 1 : p->rows > p->positions ? p->positions : p->rows;
  p->feature_minor = d->input_feature == l->rank - 1;
  p->direct_out = d->output_feature == o->rank - 1 && d->output_batch == 0;
  for (int i = 0; i < ns; i++)
    p->direct_out &= d->output_spatial.v[i] == 1 + i;
  return true;
}

/* A scratch array of `elems` elements of type et. */
/* Alignment of each scratch slot (a cache line, as the arena's buffers). */
enum { CONV_SLOT_ALIGN = 64 };
/* Scratch of at most this many bytes is planned in the arena; more (a weight-gradient
 * convolution's fallback GEMM packs its whole activation gradient: 467 MB in mobilenet_v2,
 * where oneDNN runs it) stays a heap buffer of the call, so the arena does not reserve it for
 * a path that seldom runs. */
#define CONV_SCRATCH_ARENA_MAX ((int64_t)64 << 20)

/* A convolution's scratch buffers (patch and kernel matrices, f32 copies): n slots of elems[k]
 * elements of type ets[k] (0 elements: no slot, NULL), carved from one block of the kernel
 * scratch (cg_kernel_scratch: the arena's room for the computation's callees, planned once, so
 * a call allocates nothing and touches no fresh page); where the kernel has none, or the block
 * would pass CONV_SCRATCH_ARENA_MAX, each slot is a heap buffer of the call.  False when out
 * of memory (the error is recorded). */
static bool scratch_slots(cg_function *f, ir_instr *in, const ir_etype *ets, const int64_t *elems, int n,
                          LLVMValueRef *slots) {
  cg_module *cm = f->cm;
  int64_t at[8], total = 0;
  for (int k = 0; k < n; k++) {
    at[k] = total;
    int64_t bytes = elems[k] * ir_etype_table[ets[k]].storage_bytes;
    total += (bytes + CONV_SLOT_ALIGN - 1) / CONV_SLOT_ALIGN * CONV_SLOT_ALIGN;
  }
  LLVMValueRef base = total && total <= CONV_SCRATCH_ARENA_MAX ? cg_kernel_scratch(f, total, in) : NULL;
  for (int k = 0; k < n; k++) {
    slots[k] = NULL;
    if (!elems[k])
      continue;
    if (base) {
      slots[k] = LLVMBuildGEP2(cm->b, cm->i8, base, (LLVMValueRef[]){cg_i64(cm, at[k])}, 1, "conv.scratch");
      continue;
    }
    ir_shape *s = ir_shape_array(in->parent->module, ets[k], 1, &elems[k]);
    if (!s) {
      cg_fail(cm, in, "out of memory");
      return false;
    }
    slots[k] = cg_alloc_leaf(f, s);
  }
  return true;
}

/* B[kk, j] = kernel[input feature, window position of kk; output feature g*N + j]. */
static void pack_kernel(cg_function *f, ir_instr *in, const conv_gemm_plan *p, LLVMValueRef g, LLVMValueRef bm) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  const ir_shape *r = in->operands[1]->shape;
  const ir_conv_dnums *d = &in->attrs.u.conv.dnums;
  int ns = d->input_spatial.n;
  LLVMValueRef kbuf = f->values[in->operands[1]->id].leaves[0];
  cg_loop lk = cg_loop_begin(f, cg_i64(cm, p->k), "conv.bk");
  LLVMValueRef ki[65], ri[65];
  k_unflatten(f, p, ns, lk.i, ki);
  cg_loop lj = cg_loop_begin(f, cg_i64(cm, p->n), "conv.bj");
  ri[d->kernel_input_feature] = ki[0];
  ri[d->kernel_output_feature] = LLVMBuildAdd(b, LLVMBuildMul(b, g, cg_i64(cm, p->n), ""), lj.i, "");
  for (int i = 0; i < ns; i++) {
    ir_window_dim w = cg_conv_window_dim(in, i);
    ri[d->kernel_spatial.v[i]] = w.rhs_reversal ? LLVMBuildSub(b, cg_i64(cm, w.size - 1), ki[1 + i], "") : ki[1 + i];
  }
  LLVMValueRef v = cg_load(f, r->et, kbuf, cg_flatten(f, ri, r->dims, r->rank));
  LLVMValueRef at = LLVMBuildAdd(b, LLVMBuildMul(b, lk.i, cg_i64(cm, p->n), ""), lj.i, "");
  cg_store(f, r->et, bm, at, v);
  cg_loop_end(f, &lj);
  cg_loop_end(f, &lk);
}

/* The feature-minor gather: per row and window position, one contiguous run of the group's
 * input features (zeros where the window is in the padding). */
static void gather_runs(cg_function *f, ir_instr *in, const conv_gemm_plan *p, LLVMValueRef g, LLVMValueRef first,
                        LLVMValueRef rows, LLVMValueRef am) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  const ir_shape *l = in->operands[0]->shape;
  ir_etype et = l->et;
  const ir_conv_dnums *d = &in->attrs.u.conv.dnums;
  int ns = d->input_spatial.n;
  int64_t cin = p->k_dims[0], wdims[64];
  for (int i = 0; i < ns; i++)
    wdims[i] = p->k_dims[1 + i];
  LLVMValueRef xbuf = f->values[in->operands[0]->id].leaves[0];
  cg_loop lr = cg_loop_begin(f, rows, "conv.ar");
  LLVMValueRef pi[65], wi[64], li[64];
  cg_unflatten(f, LLVMBuildAdd(b, first, lr.i, ""), p->pos_dims, ns + 1, pi);
  LLVMValueRef row_base = LLVMBuildMul(b, lr.i, cg_i64(cm, p->k), "");
  cg_loop lw = cg_loop_begin(f, cg_i64(cm, p->k / cin), "conv.aw");
  cg_unflatten(f, lw.i, wdims, ns, wi);
  li[d->input_batch] = pi[0];
  li[d->input_feature] = LLVMBuildMul(b, g, cg_i64(cm, cin), "");
  LLVMValueRef ok = LLVMConstInt(cm->i1, 1, 0);
  for (int i = 0; i < ns; i++) {
    ir_window_dim w = cg_conv_window_dim(in, i);
    ok = LLVMBuildAnd(b, ok, cg_window_input(f, &w, l->dims[d->input_spatial.v[i]], pi[1 + i], wi[i],
                                             &li[d->input_spatial.v[i]]), "");
  }
  LLVMValueRef src = cg_flatten(f, li, l->dims, l->rank);
  LLVMValueRef dst = LLVMBuildAdd(b, row_base, LLVMBuildMul(b, lw.i, cg_i64(cm, cin), ""), "");
  cg_loop lc = cg_loop_begin(f, cg_i64(cm, cin), "conv.ac");
  LLVMValueRef x = cg_load(f, et, xbuf, LLVMBuildAdd(b, src, lc.i, ""));
  x = LLVMBuildSelect(b, ok, x, LLVMConstNull(LLVMTypeOf(x)), "");
  cg_store(f, et, am, LLVMBuildAdd(b, dst, lc.i, ""), x);
  cg_loop_end(f, &lc);
  cg_loop_end(f, &lw);
  cg_loop_end(f, &lr);
}

/* A[row, kk] = input at output position first + row, patch element kk (0 in the padding). */
static void gather_patches(cg_function *f, ir_instr *in, const conv_gemm_plan *p, LLVMValueRef g,
                           LLVMValueRef first, LLVMValueRef rows, LLVMValueRef am) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  const ir_shape *l = in->operands[0]->shape;
  ir_etype et = l->et;
  const ir_conv_dnums *d = &in->attrs.u.conv.dnums;
  int ns = d->input_spatial.n;
  if (p->feature_minor) {
    gather_runs(f, in, p, g, first, rows, am);
    return;
  }
  LLVMValueRef xbuf = f->values[in->operands[0]->id].leaves[0];
  cg_loop lr = cg_loop_begin(f, rows, "conv.ar");
  LLVMValueRef pi[65], ki[65], li[64];
  cg_unflatten(f, LLVMBuildAdd(b, first, lr.i, ""), p->pos_dims, ns + 1, pi);
  LLVMValueRef row_base = LLVMBuildMul(b, lr.i, cg_i64(cm, p->k), "");
  cg_loop lk = cg_loop_begin(f, cg_i64(cm, p->k), "conv.ak");
  k_unflatten(f, p, ns, lk.i, ki);
  li[d->input_batch] = pi[0];
  li[d->input_feature] = LLVMBuildAdd(b, LLVMBuildMul(b, g, cg_i64(cm, p->k_dims[0]), ""), ki[0], "");
  LLVMValueRef ok = LLVMConstInt(cm->i1, 1, 0);
  for (int i = 0; i < ns; i++) {
    ir_window_dim w = cg_conv_window_dim(in, i);
    ok = LLVMBuildAnd(b, ok, cg_window_input(f, &w, l->dims[d->input_spatial.v[i]], pi[1 + i], ki[1 + i],
                                             &li[d->input_spatial.v[i]]), "");
  }
  LLVMValueRef x = cg_load(f, et, xbuf, cg_flatten(f, li, l->dims, l->rank));
  x = LLVMBuildSelect(b, ok, x, LLVMConstNull(LLVMTypeOf(x)), "");
  cg_store(f, et, am, LLVMBuildAdd(b, row_base, lk.i, ""), x);
  cg_loop_end(f, &lk);
  cg_loop_end(f, &lr);
}

/* out[position first + row, feature g*N + j] = C[row, j] (C's elements of type ct, converted
 * to the result's type). */
static void scatter_product(cg_function *f, ir_instr *in, const conv_gemm_plan *p, LLVMValueRef g,
                            LLVMValueRef first, LLVMValueRef rows, LLVMValueRef cmat, ir_etype ct, LLVMValueRef out) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  const ir_shape *o = in->shape;
  const ir_conv_dnums *d = &in->attrs.u.conv.dnums;
  int ns = d->output_spatial.n;
  cg_loop lr = cg_loop_begin(f, rows, "conv.cr");
  LLVMValueRef pi[65], oi[64];
  cg_unflatten(f, LLVMBuildAdd(b, first, lr.i, ""), p->pos_dims, ns + 1, pi);
  oi[d->output_batch] = pi[0];
  for (int i = 0; i < ns; i++)
    oi[d->output_spatial.v[i]] = pi[1 + i];
  cg_loop lj = cg_loop_begin(f, cg_i64(cm, p->n), "conv.cj");
  oi[d->output_feature] = LLVMBuildAdd(b, LLVMBuildMul(b, g, cg_i64(cm, p->n), ""), lj.i, "");
  LLVMValueRef v = cg_load(f, ct, cmat, LLVMBuildAdd(b, LLVMBuildMul(b, lr.i, cg_i64(cm, p->n), ""), lj.i, ""));
  cg_store(f, o->et, out, cg_flatten(f, oi, o->dims, o->rank), cg_convert(f, v, ct, o->et));
  cg_loop_end(f, &lj);
  cg_loop_end(f, &lr);
}

/* The half-precision product of one chunk: C (f32, dense rows x N) = A.B on the operands as
 * they are; a bf16 result that is the output's dense rows x N at `rounded` (else NULL) gets
 * each sum rounded once by the kernel. */
static void half_gemm_call(cg_function *f, ir_instr *in, const conv_gemm_plan *p, LLVMValueRef rows, LLVMValueRef am,
                           LLVMValueRef bm, LLVMValueRef c, LLVMValueRef rounded) {
  cg_module *cm = f->cm;
  bool bf16 = in->operands[0]->shape->et == IR_BF16;
  LLVMValueRef zero = cg_i64(cm, 0), one = cg_i64(cm, 1);
  LLVMValueRef args[15] = {f->ctx_arg, one, rows, cg_i64(cm, p->n), cg_i64(cm, p->k), am, zero, cg_i64(cm, p->k),
                           one, bm, zero, cg_i64(cm, p->n), one, c, rounded ? rounded : LLVMConstPointerNull(cm->ptr)};
  cg_runtime_call(cm, bf16 ? CG_RT_hlo_rt_gemm_strided_bf16 : CG_RT_hlo_rt_gemm_strided_f16, args, bf16 ? 15 : 14,
                  "");
}

static bool conv_gemm(cg_function *f, ir_instr *in, LLVMValueRef out) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  conv_gemm_plan p;
  if (!conv_gemm_plan_make(in, &p))
    return false;
  ir_etype et = in->operands[0]->shape->et, ot = in->shape->et;
  bool half = conv_half(in);
  /* The product's type: f32 for half-precision operands.  It is written into the output in
   * place when the output is [batch, spatial..., feature] in that type (the half-precision
   * entries write dense rows x N only: one group); a bf16 output of that form receives the
   * kernel's rounding instead. */
  ir_etype ct = half ? IR_F32 : ot;
  bool in_place = p.direct_out && ct == ot && (!half || p.groups == 1);
  bool rounded = half && ot == IR_BF16 && p.direct_out && p.groups == 1;
  ir_etype ets[3] = {et, et, ct};
  int64_t elems[3] = {p.rows * p.k, p.k * p.n, in_place ? 0 : p.rows * p.n};
  LLVMValueRef slots[3];
  if (!scratch_slots(f, in, ets, elems, 3, slots))
    return true; /* the error is recorded */
  LLVMValueRef am = slots[0], bm = slots[1], cmat = in_place ? out : slots[2];
  int64_t chunks = (p.positions + p.rows - 1) / p.rows;
  cg_loop lg = cg_loop_begin(f, cg_i64(cm, p.groups), "conv.g");
  pack_kernel(f, in, &p, lg.i, bm);
  cg_loop lc = cg_loop_begin(f, cg_i64(cm, chunks), "conv.chunk");
  LLVMValueRef first = LLVMBuildMul(b, lc.i, cg_i64(cm, p.rows), "first");
  LLVMValueRef left = LLVMBuildSub(b, cg_i64(cm, p.positions), first, "");
  LLVMValueRef rows = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, left, cg_i64(cm, p.rows), ""), left,
                                      cg_i64(cm, p.rows), "rows");
  gather_patches(f, in, &p, lg.i, first, rows, am);
  /* the output at row `first`, column g*N (row stride N*groups) */
  int64_t ldc = in_place ? p.n * p.groups : p.n;
  LLVMValueRef off = LLVMBuildAdd(b, LLVMBuildMul(b, first, cg_i64(cm, p.n * p.groups), ""),
                                  LLVMBuildMul(b, lg.i, cg_i64(cm, p.n), ""), "");
  LLVMValueRef out_at = LLVMBuildGEP2(b, cg_storage_type(cm, ot), out, &off, 1, "conv.c");
  LLVMValueRef c_at = in_place ? out_at : cmat;
  if (half)
    half_gemm_call(f, in, &p, rows, am, bm, c_at, rounded ? out_at : NULL);
  else
    cg_runtime_call(cm, ot == IR_F32 ? CG_RT_hlo_rt_gemm_f32 : CG_RT_hlo_rt_gemm_f64,
                    (LLVMValueRef[]){f->ctx_arg, rows, cg_i64(cm, p.n), cg_i64(cm, p.k), am, cg_i64(cm, p.k), bm,
                                     cg_i64(cm, p.n), c_at, cg_i64(cm, ldc)},
                    10, "");
  if (!in_place && !rounded)
    scatter_product(f, in, &p, lg.i, first, rows, cmat, ct, out);
  cg_loop_end(f, &lc);
  cg_loop_end(f, &lg);
  return true;
}

/* ---- the direct path: depthwise and grouped convolutions with few input features per
 * group, in bf16, f16 or f32, through the runtime's kernel (runtime/src/kernels/rt_conv.c) ---- */

/* Copies n elements of type `from` at src to type `to` at dst. */
static void convert_array(cg_function *f, LLVMValueRef src, ir_etype from, LLVMValueRef dst, ir_etype to, int64_t n) {
  cg_loop lp = cg_loop_begin(f, cg_i64(f->cm, n), "conv.cvt");
  cg_store(f, to, dst, lp.i, cg_convert(f, cg_load(f, from, src, lp.i), from, to));
  cg_loop_end(f, &lp);
}

/* Operand k as f32: itself, or its copy converted into `copy`. */
static LLVMValueRef operand_f32(cg_function *f, ir_instr *in, int k, LLVMValueRef copy) {
  const ir_instr *op = in->operands[k];
  LLVMValueRef v = f->values[op->id].leaves[0];
  if (op->shape->et == IR_F32)
    return v;
  convert_array(f, v, op->shape->et, copy, IR_F32, product(op->shape->dims, op->shape->rank));
  return copy;
}

/* Elements of the f32 copy operand or result x needs: 0 when it is f32 already. */
static int64_t f32_copy_elems(const ir_shape *s) { return s->et == IR_F32 ? 0 : product(s->dims, s->rank); }

static bool conv_direct(cg_function *f, ir_instr *in, LLVMValueRef out) {
  cg_module *cm = f->cm;
  int64_t desc[HLO_RT_CONV_DESC_LEN], k_first;
  if (!cg_conv_direct_plan(in, desc, &k_first))
    return false;
  ir_etype ets[3] = {IR_F32, IR_F32, IR_F32};
  int64_t elems[3] = {f32_copy_elems(in->operands[0]->shape), f32_copy_elems(in->operands[1]->shape),
                      f32_copy_elems(in->shape)};
  LLVMValueRef slots[3];
  if (!scratch_slots(f, in, ets, elems, 3, slots))
    return true; /* the error is recorded */
  LLVMValueRef x = operand_f32(f, in, 0, slots[0]), k = operand_f32(f, in, 1, slots[1]);
  int64_t on = product(in->shape->dims, in->shape->rank);
  LLVMValueRef y = in->shape->et == IR_F32 ? out : slots[2];
  LLVMValueRef g = cg_const_i64_table(cm, desc, HLO_RT_CONV_DESC_LEN, "conv.desc");
  LLVMValueRef kp = LLVMBuildGEP2(cm->b, cm->f32, k, (LLVMValueRef[]){cg_i64(cm, k_first)}, 1, "kfirst");
  cg_runtime_call(cm, CG_RT_hlo_rt_conv_grouped_f32, (LLVMValueRef[]){f->ctx_arg, g, x, kp, y}, 5, "");
  if (y != out)
    convert_array(f, y, IR_F32, out, in->shape->et, on);
  return true;
}

/* ---- 1x1 convolutions over positions that are the minor dimensions (NCHW) ----
 * With a 1x1 window (stride 1, no padding, one group) and the spatial dimensions the minor
 * ones of input and output in the same order, output [batch, feature, positions] row-major,
 * image t's result is one matrix product read in place: out[t] (O x P) = W (O x C) . x[t]
 * (C x P), W the same for every image (batch stride 0).  The GEMM path would gather each
 * position's C features across planes and scatter the O results back into them
 * (mobilenet_v2's 16 -> 96 layer at 112x112: 584 ms that way). */
static bool conv_pointwise(cg_function *f, ir_instr *in, LLVMValueRef out) {
  if (!cg_conv_pointwise_path(in))
    return false;
  const ir_shape *l = in->operands[0]->shape, *r = in->operands[1]->shape;
  const ir_conv_dnums *d = &in->attrs.u.conv.dnums;
  bool wide = in->shape->et == IR_F64;
  int64_t positions = 1;
  for (int64_t i = 0; i < d->input_spatial.n; i++)
    positions *= l->dims[d->input_spatial.v[i]];
  cg_module *cm = f->cm;
  int64_t batch = l->dims[d->input_batch], outs = r->dims[d->kernel_output_feature];
  int64_t ins = l->dims[d->input_feature];
  LLVMValueRef x = f->values[in->operands[0]->id].leaves[0], w = f->values[in->operands[1]->id].leaves[0];
  LLVMValueRef args[14] = {f->ctx_arg,
                           cg_i64(cm, batch),
                           cg_i64(cm, outs),
                           cg_i64(cm, positions),
                           cg_i64(cm, ins),
                           w,
                           cg_i64(cm, 0),
                           cg_i64(cm, cg_dim_stride(r, d->kernel_output_feature)),
                           cg_i64(cm, cg_dim_stride(r, d->kernel_input_feature)),
                           x,
                           cg_i64(cm, cg_dim_stride(l, d->input_batch)),
                           cg_i64(cm, cg_dim_stride(l, d->input_feature)),
                           cg_i64(cm, 1),
                           out};
  cg_runtime_call(cm, wide ? CG_RT_hlo_rt_gemm_strided_f64 : CG_RT_hlo_rt_gemm_strided_f32, args, 14, "");
  return true;
}

/* A depthwise convolution's weight gradient (cg_conv_dw_wgrad_plan), operands in place. */
static bool conv_dw_wgrad(cg_function *f, ir_instr *in, LLVMValueRef out) {
  int64_t desc[HLO_RT_DWG_DESC_LEN];
  if (!cg_conv_dw_wgrad_plan(in, desc))
    return false;
  cg_module *cm = f->cm;
  LLVMValueRef g = cg_const_i64_table(cm, desc, HLO_RT_DWG_DESC_LEN, "conv.dwg");
  LLVMValueRef x = f->values[in->operands[0]->id].leaves[0], dy = f->values[in->operands[1]->id].leaves[0];
  cg_runtime_call(cm, CG_RT_hlo_rt_conv_dw_wgrad_f32, (LLVMValueRef[]){f->ctx_arg, g, x, dy, out}, 5, "");
  return true;
}

/* hloc's own lowering: the direct kernel, a depthwise weight gradient, the product per image,
 * the GEMM path or the loop. */
static void conv_own(cg_function *f, ir_instr *in, LLVMValueRef out) {
  if (conv_direct(f, in, out) || conv_dw_wgrad(f, in, out) || conv_pointwise(f, in, out) || conv_gemm(f, in, out))
    return;
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  const ir_instr *lop = in->operands[0], *rop = in->operands[1];
  const ir_shape *l = lop->shape, *r = rop->shape, *o = in->shape;
  const typeof(in->attrs.u.conv) *c = &in->attrs.u.conv;
  const ir_conv_dnums *d = &c->dnums;
  int ns = d->input_spatial.n;
  ir_etype et = o->et;
  LLVMTypeRef ct = cg_compute_type(cm, et);
  int64_t k_in = r->dims[d->kernel_input_feature], k_out = r->dims[d->kernel_output_feature];
  int64_t fgc = c->feature_group_count, bgc = c->batch_group_count;
  int64_t out_per_fgroup = k_out / fgc, out_per_bgroup = k_out / bgc, batch_per_group = l->dims[d->input_batch] / bgc;
  ir_window_dim win[64];
  int64_t inner[65];
  inner[0] = k_in;
  for (int i = 0; i < ns; i++) {
    win[i] = cg_conv_window_dim(in, i);
    inner[1 + i] = r->dims[d->kernel_spatial.v[i]];
  }
  LLVMValueRef acc = cg_entry_alloca(f, ct, "acc");
  cg_loop outer = cg_loop_begin(f, cg_i64(cm, product(o->dims, o->rank)), "conv.out");
  LLVMValueRef oi[64], ki[65], li[64], ri[64];
  cg_unflatten(f, outer.i, o->dims, o->rank, oi);
  LLVMValueRef fo = oi[d->output_feature], bo = oi[d->output_batch];
  LLVMValueRef fgroup = LLVMBuildUDiv(b, fo, cg_i64(cm, out_per_fgroup), "fgroup");
  LLVMValueRef bgroup = LLVMBuildUDiv(b, fo, cg_i64(cm, out_per_bgroup), "bgroup");
  LLVMBuildStore(b, LLVMConstNull(ct), acc);
  cg_loop loop = cg_loop_begin(f, cg_i64(cm, product(inner, ns + 1)), "conv.k");
  cg_unflatten(f, loop.i, inner, ns + 1, ki);
  LLVMValueRef ok = LLVMConstInt(cm->i1, 1, 0);
  li[d->input_batch] = LLVMBuildAdd(b, LLVMBuildMul(b, bgroup, cg_i64(cm, batch_per_group), ""), bo, "ib");
  li[d->input_feature] = LLVMBuildAdd(b, LLVMBuildMul(b, fgroup, cg_i64(cm, k_in), ""), ki[0], "if");
  ri[d->kernel_input_feature] = ki[0];
  ri[d->kernel_output_feature] = fo;
  for (int i = 0; i < ns; i++) {
    const ir_window_dim *w = &win[i];
    LLVMValueRef kpos = ki[1 + i];
    ok = LLVMBuildAnd(b, ok, cg_window_input(f, w, l->dims[d->input_spatial.v[i]], oi[d->output_spatial.v[i]], kpos,
                                             &li[d->input_spatial.v[i]]), "");
    ri[d->kernel_spatial.v[i]] = w->rhs_reversal ? LLVMBuildSub(b, cg_i64(cm, w->size - 1), kpos, "") : kpos;
  }
  LLVMBasicBlockRef yes = LLVMAppendBasicBlockInContext(cm->ctx, f->fn, "conv.in");
  LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(cm->ctx, f->fn, "conv.next");
  LLVMBuildCondBr(b, ok, yes, next);
  LLVMPositionBuilderAtEnd(b, yes);
  LLVMValueRef x = cg_convert(f, cg_load(f, l->et, f->values[lop->id].leaves[0], cg_flatten(f, li, l->dims, l->rank)),
                              l->et, et);
  LLVMValueRef y = cg_convert(f, cg_load(f, r->et, f->values[rop->id].leaves[0], cg_flatten(f, ri, r->dims, r->rank)),
                              r->et, et);
  LLVMValueRef a = LLVMBuildLoad2(b, ct, acc, "a");
  LLVMValueRef prod = ir_etype_is_int(et) ? LLVMBuildMul(b, x, y, "") : LLVMBuildFMul(b, x, y, "");
  LLVMBuildStore(b, ir_etype_is_int(et) ? LLVMBuildAdd(b, a, prod, "") : LLVMBuildFAdd(b, a, prod, ""), acc);
  LLVMBuildBr(b, next);
  LLVMPositionBuilderAtEnd(b, next);
  cg_loop_end(f, &loop);
  cg_store(f, et, out, outer.i, LLVMBuildLoad2(b, ct, acc, "acc"));
  cg_loop_end(f, &outer);
}

void cg_lower_convolution(cg_function *f, ir_instr *in, LLVMValueRef out) {
  LLVMBasicBlockRef join;
  bool library = cg_conv_dnnl(f, in, out, &join);
  conv_own(f, in, out);
  if (library) {
    LLVMBuildBr(f->cm->b, join);
    LLVMPositionBuilderAtEnd(f->cm->b, join);
  }
}
