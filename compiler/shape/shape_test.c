/* shape_test.c — unit tests of shape inference on IR built by hand (ir.h constructors), for
 * the inferences that are easy to get wrong: dot with batch dimensions, convolution output
 * sizes (padding, strides, dilations, groups), gather/scatter results, reduce-window with
 * padding and dilation, pad with negative and interior padding, fft (RFFT n/2+1, IRFFT),
 * bitcast-convert width changes, and the verifier's module-level behaviour (omitted shapes
 * filled, one diagnostic per mistake, signatures).  Every expected shape is computed by hand
 * from the formulas of the operation semantics document, written next to each case.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape/shape.h"

static int failures;

typedef struct tb {
  ir_module *m;
  ir_computation *c;
  ir_diag_list d;
  int n;
} tb;

static void tb_init(tb *t) {
  t->m = ir_module_create();
  t->c = ir_computation_add(t->m, ir_intern(t->m, "e", 1));
  t->c->is_entry = true;
  t->m->entry = t->c;
  ir_diag_init(&t->d, "test", NULL, 0);
  t->n = 0;
}

static void tb_deinit(tb *t) {
  ir_diag_deinit(&t->d);
  ir_module_destroy(t->m);
}

static ir_shape *arr(tb *t, ir_etype et, int rank, const int64_t *dims) { return ir_shape_array(t->m, et, rank, dims); }

static ir_instr *add(tb *t, ir_opcode op, ir_shape *s, ir_instr *const *ops, int n) {
  char name[32];
  int len = snprintf(name, sizeof name, "v%d", t->n++);
  return ir_instr_create(t->c, op, ir_intern(t->m, name, (size_t)len), s, ops, n);
}

static ir_instr *param(tb *t, ir_etype et, int rank, const int64_t *dims) {
  ir_instr *p = add(t, IR_OP_PARAMETER, arr(t, et, rank, dims), NULL, 0);
  p->attrs.u.parameter_number = t->c->n_params;
  t->c->params = realloc(t->c->params, sizeof(ir_instr *) * (size_t)(t->c->n_params + 1)); /* freed in finish */
  t->c->params[t->c->n_params++] = p;
  return p;
}

static ir_i64_list list(tb *t, const int64_t *v, int n) { return ir_i64_list_copy(t->m, v, n); }

/* Infers `in` and compares with the expected shape text (no layout). */
static void expect(tb *t, ir_instr *in, const char *want, const char *what) {
  shape_options o = {0};
  ir_shape *s = shape_infer(in, &o, &t->d);
  char got[256] = "(null)";
  if (s)
    ir_shape_format(s, false, got, sizeof got);
  if (strcmp(got, want) != 0) {
    fprintf(stderr, "%s: inferred %s, want %s\n", what, got, want);
    for (int i = 0; i < t->d.n; i++)
      fprintf(stderr, "  diag: %s\n", t->d.items[i].message);
    failures++;
  }
}

/* Infers `in` and expects a diagnostic containing `needle`. */
static void expect_error(tb *t, ir_instr *in, const char *needle, const char *what) {
  shape_options o = {0};
  int before = t->d.n;
  ir_shape *s = shape_infer(in, &o, &t->d);
  bool found = false;
  for (int i = before; i < t->d.n; i++)
    found |= strstr(t->d.items[i].message, needle) != NULL;
  if (s || !found) {
    fprintf(stderr, "%s: expected an error containing \"%s\" (got %s, %d new diagnostics)\n", what, needle,
            s ? "a shape" : "no shape", t->d.n - before);
    failures++;
  }
}

static void finish(tb *t) {
  free(t->c->params);
  t->c->params = NULL;
  tb_deinit(t);
}

/* ---- dot ---------------------------------------------------------------------------------- */

static void test_dot(void) {
  tb t;
  tb_init(&t);
  /* [b,m,k] x [b,k,n] -> [b,m,n] (the spec's batch matmul table). */
  ir_instr *a = param(&t, IR_F32, 3, (int64_t[]){2, 3, 4});
  ir_instr *b = param(&t, IR_F32, 3, (int64_t[]){2, 4, 5});
  ir_instr *d = add(&t, IR_OP_DOT, NULL, (ir_instr *[]){a, b}, 2);
  d->attrs.u.dot.dnums.lhs_batch = list(&t, (int64_t[]){0}, 1);
  d->attrs.u.dot.dnums.rhs_batch = list(&t, (int64_t[]){0}, 1);
  d->attrs.u.dot.dnums.lhs_contracting = list(&t, (int64_t[]){2}, 1);
  d->attrs.u.dot.dnums.rhs_contracting = list(&t, (int64_t[]){1}, 1);
  expect(&t, d, "f32[2,3,5]", "dot batch matmul");
  /* Batch dims not leading: lhs [3,2,4] batch 1 contracting 2; rhs [4,5,2] batch 2
   * contracting 0 -> batch (2), lhs free (3), rhs free (5). */
  ir_instr *l2 = param(&t, IR_F32, 3, (int64_t[]){3, 2, 4});
  ir_instr *r2 = param(&t, IR_F32, 3, (int64_t[]){4, 5, 2});
  ir_instr *d2 = add(&t, IR_OP_DOT, NULL, (ir_instr *[]){l2, r2}, 2);
  d2->attrs.u.dot.dnums.lhs_batch = list(&t, (int64_t[]){1}, 1);
  d2->attrs.u.dot.dnums.rhs_batch = list(&t, (int64_t[]){2}, 1);
  d2->attrs.u.dot.dnums.lhs_contracting = list(&t, (int64_t[]){2}, 1);
  d2->attrs.u.dot.dnums.rhs_contracting = list(&t, (int64_t[]){0}, 1);
  expect(&t, d2, "f32[2,3,5]", "dot with trailing batch dims");
  /* Vector . vector -> scalar; contracting sizes must agree. */
  ir_instr *v = param(&t, IR_S32, 1, (int64_t[]){7});
  ir_instr *d3 = add(&t, IR_OP_DOT, NULL, (ir_instr *[]){v, v}, 2);
  d3->attrs.u.dot.dnums.lhs_contracting = list(&t, (int64_t[]){0}, 1);
  d3->attrs.u.dot.dnums.rhs_contracting = list(&t, (int64_t[]){0}, 1);
  expect(&t, d3, "s32[]", "dot vector vector");
  ir_instr *d4 = add(&t, IR_OP_DOT, NULL, (ir_instr *[]){a, a}, 2);
  d4->attrs.u.dot.dnums.lhs_contracting = list(&t, (int64_t[]){2}, 1);
  d4->attrs.u.dot.dnums.rhs_contracting = list(&t, (int64_t[]){1}, 1);
  expect_error(&t, d4, "lhs contracting dimension 2 has size 4 but rhs contracting dimension 1 has size 3",
               "dot contracting mismatch");
  /* The written result type wins (preferred element type): bf16 x bf16 -> f32. */
  ir_instr *h = param(&t, IR_BF16, 2, (int64_t[]){2, 3});
  ir_instr *d5 = add(&t, IR_OP_DOT, arr(&t, IR_F32, 2, (int64_t[]){2, 2}), (ir_instr *[]){h, h}, 2);
  d5->attrs.u.dot.dnums.lhs_contracting = list(&t, (int64_t[]){1}, 1);
  d5->attrs.u.dot.dnums.rhs_contracting = list(&t, (int64_t[]){1}, 1);
  expect(&t, d5, "f32[2,2]", "dot preferred element type");
  finish(&t);
}

/* ---- convolution --------------------------------------------------------------------------- */

static void conv_b01f_01io(tb *t, ir_instr *c) {
  ir_conv_dnums *d = &c->attrs.u.conv.dnums;
  d->input_batch = 0, d->input_feature = 3, d->input_spatial = list(t, (int64_t[]){1, 2}, 2);
  d->kernel_input_feature = 2, d->kernel_output_feature = 3, d->kernel_spatial = list(t, (int64_t[]){0, 1}, 2);
  d->output_batch = 0, d->output_feature = 3, d->output_spatial = list(t, (int64_t[]){1, 2}, 2);
  d->present = true;
  c->attrs.u.conv.feature_group_count = 1;
  c->attrs.u.conv.batch_group_count = 1;
}

static void test_convolution(void) {
  tb t;
  tb_init(&t);
  ir_instr *x = param(&t, IR_F32, 4, (int64_t[]){1, 8, 8, 3});
  ir_instr *k = param(&t, IR_F32, 4, (int64_t[]){3, 3, 3, 6});
  ir_instr *c = add(&t, IR_OP_CONVOLUTION, NULL, (ir_instr *[]){x, k}, 2);
  conv_b01f_01io(&t, c);
  ir_window_dim w[2] = {{3, 2, 1, 1, 1, 2, false}, {3, 1, 0, 0, 2, 1, false}};
  c->attrs.u.conv.window.dims = w;
  c->attrs.u.conv.window.n = 2;
  /* dim 0: 8 + 1 + 1 = 10 padded; window (3-1)*2+1 = 5; stride 2: (10-5)/2+1 = 3.
   * dim 1: base dilation 2: (8-1)*2+1 = 15; window 3; stride 1: 15-3+1 = 13. */
  expect(&t, c, "f32[1,3,13,6]", "convolution padding, stride, dilations");
  /* Depthwise: feature_group_count = 3, kernel input features 1, output 6. */
  ir_instr *kd = param(&t, IR_F32, 4, (int64_t[]){3, 3, 1, 6});
  ir_instr *c2 = add(&t, IR_OP_CONVOLUTION, NULL, (ir_instr *[]){x, kd}, 2);
  conv_b01f_01io(&t, c2);
  c2->attrs.u.conv.feature_group_count = 3;
  expect(&t, c2, "f32[1,6,6,6]", "depthwise convolution (no window: size = kernel, stride 1)");
  /* batch_group_count = 2: input batch 4 -> output batch 2; kernel out features 6 % 2 == 0. */
  ir_instr *xb = param(&t, IR_F32, 4, (int64_t[]){4, 5, 5, 3});
  ir_instr *c3 = add(&t, IR_OP_CONVOLUTION, NULL, (ir_instr *[]){xb, k}, 2);
  conv_b01f_01io(&t, c3);
  c3->attrs.u.conv.batch_group_count = 2;
  expect(&t, c3, "f32[2,3,3,6]", "batch_group_count");
  c3->attrs.u.conv.feature_group_count = 2;
  expect_error(&t, c3, "cannot both be greater than 1", "both group counts");
  finish(&t);
}

/* ---- gather and scatter --------------------------------------------------------------------- */

static void test_gather(void) {
  tb t;
  tb_init(&t);
  ir_instr *op = param(&t, IR_F32, 3, (int64_t[]){3, 4, 5});
  ir_instr *idx = param(&t, IR_S32, 3, (int64_t[]){2, 6, 2});
  ir_instr *g = add(&t, IR_OP_GATHER, NULL, (ir_instr *[]){op, idx}, 2);
  typeof(g->attrs.u.gather) *a = &g->attrs.u.gather;
  a->index_vector_dim = 2;
  a->start_index_map = list(&t, (int64_t[]){0, 2}, 2);
  a->collapsed_slice_dims = list(&t, (int64_t[]){0}, 1);
  a->slice_sizes = list(&t, (int64_t[]){1, 4, 3}, 3);
  a->offset_dims = list(&t, (int64_t[]){2, 3}, 2);
  /* Batch dims [2,6] (index_vector_dim dropped), offsets [4,3] (slice sizes without the
   * collapsed dim 0) at result dims 2 and 3. */
  expect(&t, g, "f32[2,6,4,3]", "gather trailing offsets");
  a->offset_dims = list(&t, (int64_t[]){0, 3}, 2);
  expect(&t, g, "f32[4,2,6,3]", "gather interleaved offsets");
  /* index_vector_dim == rank: implicit trailing 1, one start index per batch element. */
  ir_instr *idx1 = param(&t, IR_S32, 1, (int64_t[]){7});
  ir_instr *g2 = add(&t, IR_OP_GATHER, NULL, (ir_instr *[]){op, idx1}, 2);
  typeof(g2->attrs.u.gather) *b = &g2->attrs.u.gather;
  b->index_vector_dim = 1;
  b->start_index_map = list(&t, (int64_t[]){1}, 1);
  b->collapsed_slice_dims = list(&t, (int64_t[]){1}, 1);
  b->slice_sizes = list(&t, (int64_t[]){3, 1, 5}, 3);
  b->offset_dims = list(&t, (int64_t[]){1, 2}, 2);
  expect(&t, g2, "f32[7,3,5]", "gather rows (tf.gather on axis 1)");
  /* Batching dims: operand [2,5] dim 0 paired with indices [2,1] dim 0, dim 1 collapsed. */
  ir_instr *ob = param(&t, IR_F32, 2, (int64_t[]){2, 5});
  ir_instr *ib = param(&t, IR_S32, 2, (int64_t[]){2, 1});
  ir_instr *g3 = add(&t, IR_OP_GATHER, NULL, (ir_instr *[]){ob, ib}, 2);
  typeof(g3->attrs.u.gather) *c = &g3->attrs.u.gather;
  c->index_vector_dim = 1;
  c->start_index_map = list(&t, (int64_t[]){1}, 1);
  c->collapsed_slice_dims = list(&t, (int64_t[]){1}, 1);
  c->operand_batching_dims = list(&t, (int64_t[]){0}, 1);
  c->start_indices_batching_dims = list(&t, (int64_t[]){0}, 1);
  c->slice_sizes = list(&t, (int64_t[]){1, 1}, 2);
  expect(&t, g3, "f32[2]", "gather with batching dims");
  finish(&t);
}

static ir_computation *scalar_add(tb *t, ir_etype et, int n) {
  ir_computation *c = ir_computation_add(t->m, ir_intern(t->m, n == 1 ? "sum" : "sum2", n == 1 ? 3 : 4));
  ir_computation *saved = t->c;
  t->c = c;
  c->params = NULL;
  c->n_params = 0;
  ir_instr *ps[4];
  for (int i = 0; i < 2 * n; i++)
    ps[i] = param(t, et, 0, NULL);
  if (n == 1)
    c->root = add(t, IR_OP_ADD, arr(t, et, 0, NULL), ps, 2);
  else {
    ir_instr *s0 = add(t, IR_OP_ADD, arr(t, et, 0, NULL), (ir_instr *[]){ps[0], ps[2]}, 2);
    ir_instr *s1 = add(t, IR_OP_ADD, arr(t, et, 0, NULL), (ir_instr *[]){ps[1], ps[3]}, 2);
    ir_shape *e[2] = {arr(t, et, 0, NULL), arr(t, et, 0, NULL)};
    c->root = add(t, IR_OP_TUPLE, ir_shape_tuple(t->m, e, 2), (ir_instr *[]){s0, s1}, 2);
  }
  t->c = saved;
  return c;
}

static void test_scatter(void) {
  tb t;
  tb_init(&t);
  ir_computation *sum = scalar_add(&t, IR_F32, 1), *sum2 = scalar_add(&t, IR_F32, 2);
  ir_instr *op = param(&t, IR_F32, 2, (int64_t[]){3, 4});
  ir_instr *idx = param(&t, IR_S32, 2, (int64_t[]){2, 1});
  ir_instr *up = param(&t, IR_F32, 2, (int64_t[]){2, 4});
  ir_instr *s = add(&t, IR_OP_SCATTER, NULL, (ir_instr *[]){op, idx, up}, 3);
  typeof(s->attrs.u.scatter) *a = &s->attrs.u.scatter;
  a->update_window_dims = list(&t, (int64_t[]){1}, 1);
  a->inserted_window_dims = list(&t, (int64_t[]){0}, 1);
  a->scatter_dims_to_operand_dims = list(&t, (int64_t[]){0}, 1);
  a->index_vector_dim = 1;
  s->called = (ir_computation *[]){sum};
  s->n_called = 1;
  expect(&t, s, "f32[3,4]", "scatter rows");
  /* Two operands, a tuple result; the update computation is (f32,f32,f32,f32)->(f32,f32). */
  ir_instr *s2 = add(&t, IR_OP_SCATTER, NULL, (ir_instr *[]){op, op, idx, up, up}, 5);
  s2->attrs.u.scatter = *a;
  s2->called = (ir_computation *[]){sum2};
  s2->n_called = 1;
  expect(&t, s2, "(f32[3,4], f32[3,4])", "variadic scatter");
  /* updates' scatter dimension must equal the indices' batch dimension (2, not 3). */
  ir_instr *up3 = param(&t, IR_F32, 2, (int64_t[]){3, 4});
  ir_instr *s3 = add(&t, IR_OP_SCATTER, NULL, (ir_instr *[]){op, idx, up3}, 3);
  s3->attrs.u.scatter = *a;
  s3->called = (ir_computation *[]){sum};
  s3->n_called = 1;
  expect_error(&t, s3, "update scatter dimension 0 has size 3 but the indices give 2", "scatter dims");
  free(sum->params);
  free(sum2->params);
  finish(&t);
}

/* ---- windows, pad, fft, bitcast-convert ------------------------------------------------------ */

static void test_reduce_window(void) {
  tb t;
  tb_init(&t);
  ir_computation *sum = scalar_add(&t, IR_F32, 1);
  ir_instr *x = param(&t, IR_F32, 2, (int64_t[]){10, 7});
  ir_instr *z = param(&t, IR_F32, 0, NULL);
  ir_instr *r = add(&t, IR_OP_REDUCE_WINDOW, NULL, (ir_instr *[]){x, z}, 2);
  /* dim 0: size 3, stride 2, pad 1_2, window dilation 2: padded 13, window 5 -> (13-5)/2+1 = 5.
   * dim 1: size 2, base dilation 2: (7-1)*2+1 = 13, window 2, stride 1 -> 12. */
  ir_window_dim w[2] = {{3, 2, 1, 2, 1, 2, false}, {2, 1, 0, 0, 2, 1, false}};
  r->attrs.u.reduce_window.window.dims = w;
  r->attrs.u.reduce_window.window.n = 2;
  r->called = (ir_computation *[]){sum};
  r->n_called = 1;
  expect(&t, r, "f32[5,12]", "reduce-window padding and dilations");
  /* The spec's kValid example: [10000,1000,100,10,1], size 3 stride 2 -> 2 windows. */
  ir_instr *v = param(&t, IR_F32, 1, (int64_t[]){5});
  ir_instr *r2 = add(&t, IR_OP_REDUCE_WINDOW, NULL, (ir_instr *[]){v, z}, 2);
  ir_window_dim w2[1] = {{3, 2, 0, 0, 1, 1, false}};
  r2->attrs.u.reduce_window.window.dims = w2;
  r2->attrs.u.reduce_window.window.n = 1;
  r2->called = (ir_computation *[]){sum};
  r2->n_called = 1;
  expect(&t, r2, "f32[2]", "reduce-window valid padding (spec example)");
  /* kSame with stride 1 pads 1_1: output 5 (spec example). */
  w2[0] = (ir_window_dim){3, 1, 1, 1, 1, 1, false};
  expect(&t, r2, "f32[5]", "reduce-window same padding (spec example)");
  free(sum->params);
  finish(&t);
}

static ir_instr *pad_of(tb *t, ir_instr *x, ir_instr *v, int64_t lo, int64_t hi, int64_t interior) {
  ir_instr *p = add(t, IR_OP_PAD, NULL, (ir_instr *[]){x, v}, 2);
  ir_pad_dim *d = ir_arena_alloc(&t->m->arena, sizeof *d);
  *d = (ir_pad_dim){lo, hi, interior};
  p->attrs.u.padding.dims = d;
  p->attrs.u.padding.n = 1;
  return p;
}

static void test_pad(void) {
  tb t;
  tb_init(&t);
  ir_instr *x = param(&t, IR_F32, 1, (int64_t[]){5});
  ir_instr *v = param(&t, IR_F32, 0, NULL);
  /* Interior first: 5 + 4*1 = 9 elements; then edges -1 and +2: 10. */
  expect(&t, pad_of(&t, x, v, -1, 2, 1), "f32[10]", "pad negative low edge with interior");
  expect(&t, pad_of(&t, x, v, 0, 0, 2), "f32[13]", "pad interior 2");
  expect(&t, pad_of(&t, x, v, -2, -3, 0), "f32[0]", "pad removing every element");
  expect_error(&t, pad_of(&t, x, v, -3, -3, 0), "padding makes dimension 0 negative", "pad below zero");
  expect_error(&t, pad_of(&t, x, v, 0, 0, -1), "interior padding of dimension 0 is negative", "negative interior");
  ir_instr *e = param(&t, IR_F32, 1, (int64_t[]){0});
  expect(&t, pad_of(&t, e, v, 1, 2, 3), "f32[3]", "pad of an empty dimension ignores interior");
  finish(&t);
}

static ir_instr *fft_of(tb *t, ir_instr *x, ir_fft_type ty, const int64_t *len, int n) {
  ir_instr *f = add(t, IR_OP_FFT, NULL, (ir_instr *[]){x}, 1);
  f->attrs.u.fft.type = ty;
  f->attrs.u.fft.length = list(t, len, n);
  return f;
}

static void test_fft(void) {
  tb t;
  tb_init(&t);
  ir_instr *r = param(&t, IR_F32, 2, (int64_t[]){4, 16});
  ir_instr *r3 = param(&t, IR_F64, 3, (int64_t[]){3, 8, 10});
  ir_instr *c = param(&t, IR_C64, 2, (int64_t[]){4, 9});
  ir_instr *c5 = param(&t, IR_C128, 2, (int64_t[]){2, 5});
  /* RFFT: the innermost axis shrinks to n/2+1 = 9; type f32 -> c64. */
  expect(&t, fft_of(&t, r, IR_FFT_RFFT, (int64_t[]){16}, 1), "c64[4,9]", "rfft 16");
  expect(&t, fft_of(&t, r3, IR_FFT_RFFT, (int64_t[]){8, 10}, 2), "c128[3,8,6]", "2-d rfft 8x10");
  /* IRFFT: 9 = 16/2+1 grows back to 16; 5 = 9/2+1 grows to 9 (odd length). */
  expect(&t, fft_of(&t, c, IR_FFT_IRFFT, (int64_t[]){16}, 1), "f32[4,16]", "irfft 16");
  expect(&t, fft_of(&t, c5, IR_FFT_IRFFT, (int64_t[]){9}, 1), "f64[2,9]", "irfft odd length 9");
  expect(&t, fft_of(&t, c, IR_FFT_FFT, (int64_t[]){9}, 1), "c64[4,9]", "fft keeps the shape");
  /* As XLA: FFT/IFFT take any trailing dims (padded or cut to fft_length) and keep them. */
  expect(&t, fft_of(&t, c, IR_FFT_FFT, (int64_t[]){16}, 1), "c64[4,9]", "fft longer than the operand");
  expect(&t, fft_of(&t, c, IR_FFT_IFFT, (int64_t[]){2, 4}, 2), "c64[4,9]", "2-d ifft shorter than the operand");
  /* Zero-sized dimensions are kept: RFFT and IRFFT with fft_length 0 (XLA's evaluator tests). */
  ir_instr *rz = param(&t, IR_F32, 2, (int64_t[]){3, 0});
  ir_instr *cz = param(&t, IR_C128, 3, (int64_t[]){2, 0, 0});
  expect(&t, fft_of(&t, rz, IR_FFT_RFFT, (int64_t[]){0}, 1), "c64[3,0]", "rfft of length 0");
  expect(&t, fft_of(&t, cz, IR_FFT_IRFFT, (int64_t[]){0, 0}, 2), "f64[2,0,0]", "irfft of length 0");
  expect(&t, fft_of(&t, cz, IR_FFT_FFT, (int64_t[]){0, 0}, 2), "c128[2,0,0]", "fft of length 0");
  expect_error(&t, fft_of(&t, c, IR_FFT_FFT, (int64_t[]){-4}, 1), "must not be negative", "negative fft_length");
  expect_error(&t, fft_of(&t, c, IR_FFT_IRFFT, (int64_t[]){10}, 1), "fft_length/2+1 = 6", "irfft length mismatch");
  expect_error(&t, fft_of(&t, r, IR_FFT_FFT, (int64_t[]){16}, 1), "need a complex operand", "fft of reals");
  finish(&t);
}

static void test_bitcast_convert(void) {
  tb t;
  tb_init(&t);
  /* The spec's examples: f32[10] -> f16[10,2]; f32[] -> f16[2]; f16[10,2] -> f32[10]. */
  ir_instr *a = param(&t, IR_F32, 1, (int64_t[]){10});
  ir_instr *s = param(&t, IR_F32, 0, NULL);
  ir_instr *h = param(&t, IR_F16, 2, (int64_t[]){10, 2});
  ir_instr *u = param(&t, IR_S32, 1, (int64_t[]){3});
  expect(&t, add(&t, IR_OP_BITCAST_CONVERT, arr(&t, IR_F16, 2, (int64_t[]){10, 2}), &a, 1), "f16[10,2]",
         "bitcast-convert narrower adds a dimension");
  expect(&t, add(&t, IR_OP_BITCAST_CONVERT, arr(&t, IR_F16, 1, (int64_t[]){2}), &s, 1), "f16[2]",
         "bitcast-convert of a scalar");
  expect(&t, add(&t, IR_OP_BITCAST_CONVERT, arr(&t, IR_F32, 1, (int64_t[]){10}), &h, 1), "f32[10]",
         "bitcast-convert wider drops the last dimension");
  expect(&t, add(&t, IR_OP_BITCAST_CONVERT, arr(&t, IR_U8, 2, (int64_t[]){3, 4}), &u, 1), "u8[3,4]",
         "bitcast-convert s32 -> u8 (4 bytes each)");
  expect(&t, add(&t, IR_OP_BITCAST_CONVERT, arr(&t, IR_F32, 1, (int64_t[]){3}), &u, 1), "f32[3]",
         "bitcast-convert same width");
  expect_error(&t, add(&t, IR_OP_BITCAST_CONVERT, arr(&t, IR_F16, 1, (int64_t[]){10}), &a, 1),
               "adds a last dimension of size 2", "bitcast-convert narrower without the new dimension");
  ir_instr *h3 = param(&t, IR_F16, 2, (int64_t[]){10, 3});
  expect_error(&t, add(&t, IR_OP_BITCAST_CONVERT, arr(&t, IR_F32, 1, (int64_t[]){10}), &h3, 1),
               "needs a last operand dimension of size 2", "bitcast-convert wider from a wrong last dimension");
  ir_instr *cx = param(&t, IR_C64, 1, (int64_t[]){2});
  expect_error(&t, add(&t, IR_OP_BITCAST_CONVERT, arr(&t, IR_F64, 1, (int64_t[]){2}), &cx, 1),
               "between complex and real", "bitcast-convert complex to real");
  finish(&t);
}

/* ---- small rules ------------------------------------------------------------------------------ */

static void test_misc_rules(void) {
  tb t;
  tb_init(&t);
  ir_instr *x = param(&t, IR_F32, 3, (int64_t[]){2, 3, 4});
  ir_instr *tr = add(&t, IR_OP_TRANSPOSE, NULL, &x, 1);
  tr->attrs.dimensions = list(&t, (int64_t[]){2, 0, 1}, 3);
  expect(&t, tr, "f32[4,2,3]", "transpose output[i] = input[perm[i]]");
  ir_instr *v = param(&t, IR_F32, 1, (int64_t[]){10});
  ir_instr *sl = add(&t, IR_OP_SLICE, NULL, &v, 1);
  ir_slice_dim sd = {1, 8, 3};
  sl->attrs.u.slice.dims = &sd;
  sl->attrs.u.slice.n = 1;
  expect(&t, sl, "f32[3]", "slice [1:8:3] takes 1, 4, 7");
  ir_instr *tk = add(&t, IR_OP_TOPK, NULL, &x, 1);
  tk->attrs.u.topk.k = 3;
  expect(&t, tk, "(f32[2,3,3], s32[2,3,3])", "topk values and s32 indices");
  ir_instr *rd = add(&t, IR_OP_REDUCE_PRECISION, NULL, &x, 1);
  rd->attrs.u.reduce_precision.exponent_bits = 5;
  rd->attrs.u.reduce_precision.mantissa_bits = 0;
  expect(&t, rd, "f32[2,3,4]", "reduce-precision keeps the shape (0 mantissa bits allowed)");
  ir_instr *c = param(&t, IR_C64, 1, (int64_t[]){4});
  expect(&t, add(&t, IR_OP_REAL, NULL, &c, 1), "f32[4]", "real of complex");
  expect(&t, add(&t, IR_OP_REAL, NULL, &v, 1), "f32[10]", "real of float returns it");
  expect(&t, add(&t, IR_OP_ABS, NULL, &c, 1), "f32[4]", "abs of complex");
  expect(&t, add(&t, IR_OP_IS_FINITE, NULL, &v, 1), "pred[10]", "is-finite -> pred");
  ir_instr *f = param(&t, IR_F64, 1, (int64_t[]){4});
  expect(&t, add(&t, IR_OP_COMPLEX, NULL, (ir_instr *[]){f, f}, 2), "c128[4]", "complex(f64, f64)");
  /* all-gather over 4 replicas multiplies the dimension; reduce-scatter divides it. */
  t.m->replica_count = 4;
  ir_instr *ag = add(&t, IR_OP_ALL_GATHER, NULL, &x, 1);
  ag->attrs.dimensions = list(&t, (int64_t[]){2}, 1);
  expect(&t, ag, "f32[2,3,16]", "all-gather x4");
  ir_instr *tri_a = param(&t, IR_F32, 3, (int64_t[]){2, 3, 3});
  ir_instr *tri_b = param(&t, IR_F32, 3, (int64_t[]){2, 4, 3});
  ir_instr *ts = add(&t, IR_OP_TRIANGULAR_SOLVE, NULL, (ir_instr *[]){tri_a, tri_b}, 2);
  expect(&t, ts, "f32[2,4,3]", "triangular-solve x * op(a) = b (left_side=false)");
  ts->attrs.u.triangular_solve.left_side = true;
  expect_error(&t, ts, "row dimension (4) must equal a's size 3", "triangular-solve left side");
  finish(&t);
}

/* ---- the module verifier ---------------------------------------------------------------------- */

static void test_verify_module(void) {
  tb t;
  tb_init(&t);
  ir_instr *a = param(&t, IR_F32, 2, (int64_t[]){2, 3});
  ir_instr *b = param(&t, IR_S32, 2, (int64_t[]){2, 3});
  ir_instr *n = add(&t, IR_OP_NEGATE, NULL, &a, 1); /* omitted: filled with f32[2,3] */
  ir_instr *bad = add(&t, IR_OP_ADD, NULL, (ir_instr *[]){n, b}, 2);
  ir_instr *user = add(&t, IR_OP_NEGATE, arr(&t, IR_F32, 1, (int64_t[]){9}), &bad, 1);
  t.c->root = user;
  shape_options o = {0};
  bool ok = shape_verify_module(t.m, &o, &t.d);
  char got[64] = "";
  if (n->shape)
    ir_shape_format(n->shape, false, got, sizeof got);
  if (ok || t.d.n_errors != 1 || strcmp(got, "f32[2,3]") != 0 ||
      !strstr(t.d.items[0].message, "operands of 'add' must have the same element type")) {
    fprintf(stderr, "verify: ok=%d errors=%d filled=%s first=%s\n", ok, t.d.n_errors, got,
            t.d.n ? t.d.items[0].message : "-");
    failures++;
  }
  /* A signature that disagrees with the parameter's declaration. */
  tb u;
  tb_init(&u);
  ir_instr *p = param(&u, IR_F32, 1, (int64_t[]){4});
  u.c->root = add(&u, IR_OP_NEGATE, NULL, &p, 1);
  ir_shape *sig = arr(&u, IR_F32, 1, (int64_t[]){5});
  u.c->sig_params = &sig;
  u.c->n_sig_params = 1;
  if (shape_verify_module(u.m, &o, &u.d) || u.d.n_errors != 1 ||
      !strstr(u.d.items[0].message, "gives parameter 0 the shape f32[5] but it is declared f32[4]")) {
    fprintf(stderr, "signature: errors=%d first=%s\n", u.d.n_errors, u.d.n ? u.d.items[0].message : "-");
    failures++;
  }
  finish(&u);
  finish(&t);
}

int main(void) {
  test_dot();
  test_convolution();
  test_gather();
  test_scatter();
  test_reduce_window();
  test_pad();
  test_fft();
  test_bitcast_convert();
  test_misc_rules();
  test_verify_module();
  if (failures) {
    fprintf(stderr, "shape_test: %d failure(s)\n", failures);
    return 1;
  }
  printf("shape_test: all passed\n");
  return 0;
}
