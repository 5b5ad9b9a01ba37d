/* conv_dnnl.c — oneDNN's forward convolution (libdnnl-dev, the library PyTorch and XLA's CPU
 * backend call) on the arrays run.py wrote, as the peer of hloc's convolutions.  Modes:
 *   nhwc N H W C K       3x3, padding 1: x NHWC, w HWIO, y NHWC (bench/workloads/conv.hlo)
 *   dw N C H W S         depthwise 3x3, padding 1, stride S: x NCHW, w [C,1,3,3], y NCHW
 *   1x1 N C H W K        x NCHW, w [K,C,1,1], y NCHW
 * Two variants are timed: the convolution on the arrays' own layouts, and oneDNN's preferred
 * (blocked) layouts with the reorders into and out of them counted; the faster one is the
 * baseline (`median_ms=`), both are printed with oneDNN's kernel names.  Built by run.py only
 * when dnnl.h is installed; threads through OpenMP (omp_set_num_threads), as oneDNN uses. */
#include "common.h"
#include <dnnl.h>

#define CHECK(x)                                                             \
  do {                                                                       \
    dnnl_status_t s_ = (x);                                                  \
    if (s_ != dnnl_success) {                                                \
      fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #x, s_); \
      exit(1);                                                               \
    }                                                                        \
  } while (0)

typedef struct {
  int nd;
  dnnl_dims_t src, wei, dst, strides, dil, pl, pr;
  dnnl_format_tag_t src_tag, wei_tag, dst_tag;
} conv_case;

static dnnl_memory_t mem(dnnl_engine_t e, const dnnl_memory_desc_t *md, void *p) {
  dnnl_memory_t m;
  CHECK(dnnl_memory_create(&m, md, e, p));
  return m;
}

/* A reorder from one layout into another, or NULL when they are the same. */
static dnnl_primitive_t reorder(dnnl_engine_t e, const dnnl_memory_desc_t *from, const dnnl_memory_desc_t *to) {
  if (dnnl_memory_desc_equal(from, to))
    return NULL;
  dnnl_primitive_desc_t pd;
  dnnl_primitive_t p;
  CHECK(dnnl_reorder_primitive_desc_create(&pd, from, e, to, e, NULL));
  CHECK(dnnl_primitive_create(&p, pd));
  dnnl_primitive_desc_destroy(pd);
  return p;
}

static void run_reorder(dnnl_primitive_t p, dnnl_stream_t s, dnnl_memory_t a, dnnl_memory_t b) {
  dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, a}, {DNNL_ARG_TO, b}};
  CHECK(dnnl_primitive_execute(p, s, 2, args));
}

/* Times the convolution; any_layouts: oneDNN picks the layouts, reorders are timed too. */
static double time_case(const conv_case *c, int any_layouts, float *x, float *w, float *y, int reps) {
  dnnl_engine_t e;
  dnnl_stream_t s;
  CHECK(dnnl_engine_create(&e, dnnl_cpu, 0));
  CHECK(dnnl_stream_create(&s, e, dnnl_stream_default_flags));
  dnnl_memory_desc_t ux, uw, uy, cx, cw, cy;
  CHECK(dnnl_memory_desc_init_by_tag(&ux, 4, c->src, dnnl_f32, c->src_tag));
  CHECK(dnnl_memory_desc_init_by_tag(&uw, c->nd, c->wei, dnnl_f32, c->wei_tag));
  CHECK(dnnl_memory_desc_init_by_tag(&uy, 4, c->dst, dnnl_f32, c->dst_tag));
  CHECK(dnnl_memory_desc_init_by_tag(&cx, 4, c->src, dnnl_f32, any_layouts ? dnnl_format_tag_any : c->src_tag));
  CHECK(dnnl_memory_desc_init_by_tag(&cw, c->nd, c->wei, dnnl_f32, dnnl_format_tag_any));
  CHECK(dnnl_memory_desc_init_by_tag(&cy, 4, c->dst, dnnl_f32, any_layouts ? dnnl_format_tag_any : c->dst_tag));
  dnnl_convolution_desc_t cd;
  CHECK(dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &cx, &cw,
                                                   NULL, &cy, c->strides, c->dil, c->pl, c->pr));
  dnnl_primitive_desc_t pd;
  CHECK(dnnl_primitive_desc_create(&pd, &cd, NULL, e, NULL));
  const char *impl = "?";
  CHECK(dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl));
  const dnnl_memory_desc_t *px = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
  const dnnl_memory_desc_t *pw = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  const dnnl_memory_desc_t *py = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
  dnnl_primitive_t conv, rx = reorder(e, &ux, px), rw = reorder(e, &uw, pw), ry = reorder(e, py, &uy);
  CHECK(dnnl_primitive_create(&conv, pd));
  dnnl_memory_t mx = mem(e, &ux, x), mw = mem(e, &uw, w), my = mem(e, &uy, y);
  dnnl_memory_t kx = rx ? mem(e, px, DNNL_MEMORY_ALLOCATE) : mx, kw = rw ? mem(e, pw, DNNL_MEMORY_ALLOCATE) : mw;
  dnnl_memory_t ky = ry ? mem(e, py, DNNL_MEMORY_ALLOCATE) : my;
  dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, kx}, {DNNL_ARG_WEIGHTS, kw}, {DNNL_ARG_DST, ky}};
  double best = 0;
  BENCH_LOOP(reps)
  if (rx)
    run_reorder(rx, s, mx, kx);
  if (rw)
    run_reorder(rw, s, mw, kw);
  CHECK(dnnl_primitive_execute(conv, s, 3, args));
  if (ry)
    run_reorder(ry, s, ky, my);
  CHECK(dnnl_stream_wait(s));
  BENCH_END_QUIET(reps, best);
  printf("%s_ms=%.4f impl=%s%s\n", any_layouts ? "any" : "plain", best, impl, rx || ry ? " +reorders" : "");
  dnnl_primitive_desc_destroy(pd);
  return best;
}

int main(int argc, char **argv) {
  BENCH_ARGS(9);
  const char *mode = argv[4];
  long a[5] = {0};
  for (int i = 0; i < 5 && 5 + i < argc; i++)
    a[i] = atol(argv[5 + i]);
  conv_case c = {.nd = 4, .strides = {1, 1}, .dil = {0, 0}, .pl = {1, 1}, .pr = {1, 1}};
  long xn, wn, yn;
  if (strcmp(mode, "nhwc") == 0) { /* N H W C K */
    long n = a[0], h = a[1], w = a[2], ch = a[3], k = a[4];
    c = (conv_case){4, {n, ch, h, w}, {k, ch, 3, 3}, {n, k, h, w}, {1, 1}, {0, 0}, {1, 1}, {1, 1},
                    dnnl_nhwc, dnnl_hwio, dnnl_nhwc};
    xn = n * h * w * ch, wn = 9 * ch * k, yn = n * h * w * k;
  } else if (strcmp(mode, "dw") == 0) { /* N C H W S */
    long n = a[0], ch = a[1], h = a[2], w = a[3], st = a[4] ? a[4] : 1;
    long oh = (h + 2 - 3) / st + 1, ow = (w + 2 - 3) / st + 1;
    c = (conv_case){5, {n, ch, h, w}, {ch, 1, 1, 3, 3}, {n, ch, oh, ow}, {st, st}, {0, 0}, {1, 1},
                    {(oh - 1) * st + 3 - h - 1, (ow - 1) * st + 3 - w - 1}, dnnl_nchw, dnnl_goihw, dnnl_nchw};
    xn = n * ch * h * w, wn = 9 * ch, yn = n * ch * oh * ow;
  } else if (strcmp(mode, "1x1") == 0) { /* N C H W K */
    long n = a[0], ch = a[1], h = a[2], w = a[3], k = a[4];
    c = (conv_case){4, {n, ch, h, w}, {k, ch, 1, 1}, {n, k, h, w}, {1, 1}, {0, 0}, {0, 0}, {0, 0},
                    dnnl_nchw, dnnl_oihw, dnnl_nchw};
    xn = n * ch * h * w, wn = k * ch, yn = n * k * h * w;
  } else {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  float *x = bench_read(dir, 0, xn * 4), *w = bench_read(dir, 1, wn * 4), *y = bench_alloc(yn * 4);
  double plain = time_case(&c, 0, x, w, y, reps);
  bench_write(dir, 0, y, yn * 4);
  double any = time_case(&c, 1, x, w, y, reps);
  printf("median_ms=%.4f\n", plain < any ? plain : any);
  return 0;
}
