/* fused.c — fused loop kernels: a `fusion` instruction (kLoop, kInput), or one elementwise or
 * data-movement instruction alone, becomes one kernel whose loop computes each result element
 * from the fused instructions' element expressions ("elemental" emission, as XLA's CPU
 * backend does): nothing inside a fusion is stored in between.
 *
 * The loop body lives in a range function `void(ptr args, i64 begin, i64 end)` so that large
 * loops split over the context's thread pool (hlo_rt_parallel_for); small ones call it once.
 * Loops are nests over the result's dimensions (outer rows x innermost dimension, no division
 * per element), 1-D when every member reads its operands at the result's linear index, and
 * 32x32 tiles of the two minor dimensions when a transpose moves the minor dimension, in a
 * view that merges the dimensions the transpose keeps together (tile_view: NHWC -> NCHW is
 * [N, H*W, C] -> [N, C, H*W]; a transpose of a buffer is first copied into a stack array per
 * tile, 8x8 blocks transposed in registers: stage_transpose).  A
 * concatenate whose operand is the same along a whole row gets one copy of the row's loop per
 * operand, picked per row, instead of a branch per element (row_concat).
 * Reductions keep a register accumulator when the minor dimension is reduced (float add and
 * multiply in FZ_LANES lanes of a fixed order, so the bits are the same on every CPU while
 * LLVM vectorizes the lane loop), and accumulate
 * into the result along the kept minor dimension otherwise (column sums: vector lanes are
 * independent outputs), or, when the reduced dimensions are the outer ones and the result
 * small, split over blocks of rows with one partial each in the kernel's scratch (split_parts).
 * A kept minor dimension narrower than a vector (x[i, c], c < 3) has its outputs side by side
 * in one loop along the other dimensions (emit_narrow_reduce; emit_split_rows likewise).
 * A reduce of a few elements inside a loop fusion (fusion_inline_reduce_ok) is computed where
 * it is read, unrolled (inline_reduce_value).
 * A row fusion (softmax, layer norm: reductions of the minor dimension broadcast back) makes
 * one pass over each row per reduction, then one for the outputs; an expensive value that a
 * later pass reads again (exp(x - max)) is kept in a row array on the stack (the row stash).
 * A multi-output fusion (root = tuple, XLA's form) is one loop too: its
 * loop outputs share one index space, or its reductions one input's (each folding its element
 * at every input index, loop outputs of the input's shape stored on the way); each output has
 * its own buffer.  A kOutput fusion's dot or convolution writes the result buffer and the
 * elementwise tail then runs in place; for a dot the GEMM takes with strides, the tail is its
 * epilogue, run on each part of the result as soon as it is final (output_epilogue).
 * A large, cheap loop result is written with non-temporal stores where its buffer is 64-byte
 * aligned (streams_result, emit_streamed_twice; the stores themselves: nontemporal.c).
 * Tests: the golden and conformance suites (testdata/golden/fusion_*, made by make_fusion.py,
 * fusion_stash_* for the row stash; split_reduce_*, made by make_split_reduce.py;
 * nontemporal_* with golden_at.nontemporal; concat_rows_*), cli.hloc.fusion,
 * cli.hloc.nontemporal_asm.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_internal.h"
#include "passes/passes.h"
#include "codegen/ops.h"
#include "hlo/rt.h"

enum {
  FZ_PARALLEL_MIN_ELEMENTS = 1 << 15, /* below this a loop runs on the calling thread */
  FZ_FLAT_CHUNK = 1 << 12,            /* elements per unit of work of a 1-D loop */
  FZ_TILE = 32,                       /* transpose tiles */
  FZ_COLUMN_BLOCK = 1024,             /* kept minor elements per unit of a column reduction */
  FZ_MIN_COLUMN_WIDTH = 8,            /* narrower kept minor dimensions: emit_narrow_reduce */
  FZ_SPLIT_PARTS = 8,                 /* row blocks of a split column reduction */
  FZ_SPLIT_GROUP = 4,                 /* its rows combined before they meet the partial */
  FZ_SPLIT_MAX_KEPT_BYTES = 64 << 10, /* its largest result (the size of each partial) */
  FZ_ROW_SPLIT_UNITS = 16,            /* units a row reduction of fewer outputs is split into */
  FZ_ROW_SPLIT_MIN = 1 << 14,         /* elements of each of its pieces at least */
  FZ_WINDOW_MAX = 64,                 /* window positions of a reduce-window loop kernel */
};

/* Where an element's index is known: linear (row-major), per dimension, or both. */
typedef struct fz_index {
  LLVMValueRef lin;
  LLVMValueRef *multi;
  const ir_shape *shape;
  unsigned serial;  /* unique per index made: what the memo compares */
} fz_index;

/* The dimensions a walk by tiles sees: the root's, or with runs of them merged into one
 * (tile_view).  A transpose that the view suits reads its operand in the view's terms. */
typedef struct fz_view {
  int rank;
  int64_t *dims;   /* the view's dimensions */
  int *group;      /* by root dimension: its view dimension; -1 for a dropped size-1 one */
  bool merged;     /* a view dimension holds two root dimensions of size above 1 */
  int **perm;      /* by id: a transpose member's permutation in the view, NULL if none */
  int64_t **odims; /* by id: that transpose's operand's dimensions in the view */
  bool *staged;    /* by id: staged through a stack array per full tile */
} fz_view;

static void view_free(fz_view *v, int n_instrs) {
  for (int i = 0; v->perm && i < n_instrs; i++) {
    free(v->perm[i]);
    free(v->odims[i]);
  }
  free(v->perm);
  free(v->odims);
  free(v->staged);
  free(v->dims);
  free(v->group);
  memset(v, 0, sizeof *v);
}

/* The emitter's state: which instructions of `comp` are computed (members) and which are
 * loaded from buffers, and a memo of values computed at the loop's own index. */
typedef struct fz {
  cg_function *f;
  ir_computation *comp;
  const ir_instr *root;   /* the output whose loop the kernel runs (a reduce, if any) */
  ir_instr *const *outs;  /* the outputs: the root, or a multi-output fusion's tuple elements */
  int n_outs;
  LLVMValueRef *out_ptr;  /* by output: its result buffer in the range function */
  bool *member;           /* by id in comp */
  LLVMValueRef *buffer;   /* by id in comp: leaf pointer of a non-member */
  LLVMValueRef *memo;     /* by id: value at index serial memo_idx[id], generation memo_gen[id] */
  unsigned *memo_idx;
  unsigned *memo_gen, gen, serial;
  LLVMValueRef *row_value;  /* by id: in a row fusion, the slot of a reduce member's row result */
  LLVMValueRef *stash;      /* by id: in a row fusion, the row array that keeps its values */
  bool *stash_ready;        /* by id: the stash holds this row's values (a later pass) */
  unsigned row_serial;      /* the serial of the row pass's own index, */
  LLVMValueRef row_j;       /* and its position in the row */
  /* In a walk by rows (emit_rows): a concatenate whose operand is the same along a whole row
   * (row_concat), and the operand this row's loop reads, or -1 (the branch per element). */
  const ir_instr *row_cat;
  int row_cat_part;
  /* In a walk by tiles (emit_tiles): the view of the root the tiles walk (tile_view); by
   * id, the stack array that holds a staged transpose's values for the whole tile
   * (stage_transpose), and the element index that reads it. */
  fz_view view;
  LLVMValueRef *stage;
  unsigned tile_serial;
  LLVMValueRef tile_at;  /* the element's position in the tile, row-major */
  unsigned view_serial;  /* the tile element's index, */
  LLVMValueRef *view_at; /* and its multi-index in the view */
} fz;

static int64_t count_of(const ir_shape *s) {
  int64_t n = 0;
  return ir_shape_num_elements(s, &n) ? n : 0;
}

static LLVMValueRef *new_multi(int rank) { return calloc((size_t)rank + 1, sizeof(LLVMValueRef)); }

/* ---- indices -------------------------------------------------------------------------------- */

static LLVMValueRef idx_lin(fz *z, fz_index *x) {
  if (!x->lin)
    x->lin = x->shape->rank ? cg_flatten(z->f, x->multi, x->shape->dims, x->shape->rank) : cg_i64(z->f->cm, 0);
  return x->lin;
}

static LLVMValueRef *idx_multi(fz *z, fz_index *x) {
  if (!x->multi) {
    x->multi = new_multi(x->shape->rank);
    cg_unflatten(z->f, x->lin, x->shape->dims, x->shape->rank, x->multi);
  }
  return x->multi;
}

/* An index of operand shape s built from a multi-index (taken over by the index). */
static fz_index *idx_from_multi(fz *z, const ir_shape *s, LLVMValueRef *multi) {
  fz_index *x = calloc(1, sizeof *x);
  x->multi = multi;
  x->shape = s;
  x->serial = ++z->serial;
  return x;
}

static fz_index *idx_from_lin(fz *z, const ir_shape *s, LLVMValueRef lin) {
  fz_index *x = calloc(1, sizeof *x);
  x->lin = lin;
  x->shape = s;
  x->serial = ++z->serial;
  return x;
}

/* An index on the caller's stack. */
static fz_index idx_local(fz *z, const ir_shape *s, LLVMValueRef lin, LLVMValueRef *multi) {
  return (fz_index){.lin = lin, .multi = multi, .shape = s, .serial = ++z->serial};
}

static void idx_free(fz_index *x) {
  if (x) {
    free(x->multi);
    free(x);
  }
}

/* ---- element values ------------------------------------------------------------------------- */

static LLVMValueRef value_at(fz *z, ir_instr *x, fz_index *idx);

static LLVMValueRef load_buffer(fz *z, ir_instr *x, fz_index *idx) {
  LLVMValueRef at = x->shape->rank == 0 ? cg_i64(z->f->cm, 0) : idx_lin(z, idx);
  return cg_load(z->f, x->shape->et, z->buffer[x->id], at);
}

static LLVMValueRef constant_value(fz *z, ir_instr *x, fz_index *idx) {
  cg_module *cm = z->f->cm;
  LLVMValueRef g = cg_literal_global(cm, x->attrs.u.literal, x->name.p);
  LLVMValueRef at = x->shape->rank == 0 ? cg_i64(cm, 0) : idx_lin(z, idx);
  return cg_load(z->f, x->shape->et, g, at);
}

static LLVMValueRef operand_value(fz *z, ir_instr *x, int k, fz_index *idx) {
  ir_instr *op = x->operands[k];
  if (op->shape->rank == 0) {
    fz_index scalar = idx_local(z, op->shape, cg_i64(z->f->cm, 0), NULL);
    return value_at(z, op, &scalar);
  }
  return value_at(z, op, idx);
}

static LLVMValueRef elementwise(fz *z, ir_instr *x, fz_index *idx) {
  LLVMValueRef v[3] = {NULL, NULL, NULL};
  for (int k = 0; k < x->n_operands && k < 3; k++)
    v[k] = operand_value(z, x, k, idx);
  return cg_elementwise_apply(z->f, x, v);
}

/* Reads operand 0 at the multi-index `m` (taken over). */
static LLVMValueRef operand_at_multi(fz *z, ir_instr *x, LLVMValueRef *m) {
  fz_index *oi = idx_from_multi(z, x->operands[0]->shape, m);
  LLVMValueRef v = value_at(z, x->operands[0], oi);
  idx_free(oi);
  return v;
}

static LLVMValueRef broadcast_value(fz *z, ir_instr *x, fz_index *idx) {
  const ir_shape *s = x->operands[0]->shape;
  if (s->rank == 0)
    return operand_value(z, x, 0, idx);
  LLVMValueRef *m = idx_multi(z, idx), *om = new_multi(s->rank);
  for (int k = 0; k < s->rank; k++) {
    int64_t od = x->attrs.dimensions.v[k];
    om[k] = s->dims[k] == 1 && x->shape->dims[od] != 1 ? cg_i64(z->f->cm, 0) : m[od];
  }
  return operand_at_multi(z, x, om);
}

/* Reshape and bitcast: the same linear index.  When the index also has a multi-index, the
 * dimensions the two shapes share at the minor end carry over as they are and only the rest is
 * split again, so a row loop's minor index stays its induction variable (no division per
 * element, contiguous loads the vectorizer can use). */
static LLVMValueRef same_linear_value(fz *z, ir_instr *x, fz_index *idx) {
  const ir_shape *os = x->operands[0]->shape, *s = x->shape;
  fz_index *oi;
  if (idx->multi && os->rank > 0) {
    int k = 0;
    while (k < os->rank && k < s->rank && os->dims[os->rank - 1 - k] == s->dims[s->rank - 1 - k])
      k++;
    LLVMValueRef *om = new_multi(os->rank);
    for (int j = 0; j < k; j++)
      om[os->rank - 1 - j] = idx->multi[s->rank - 1 - j];
    cg_unflatten(z->f, cg_flatten(z->f, idx->multi, s->dims, s->rank - k), os->dims, os->rank - k, om);
    oi = idx_from_multi(z, os, om);
    oi->lin = idx->lin;
  } else {
    oi = idx_from_lin(z, os, idx_lin(z, idx));
  }
  LLVMValueRef v = value_at(z, x->operands[0], oi);
  idx_free(oi);
  return v;
}

static LLVMValueRef transpose_value(fz *z, ir_instr *x, fz_index *idx) {
  if (z->stage && z->stage[x->id] && idx->serial == z->tile_serial)
    return cg_load(z->f, x->shape->et, z->stage[x->id], z->tile_at);
  const fz_view *v = &z->view;
  if (v->perm && v->perm[x->id] && idx->serial == z->view_serial) { /* in the tiles' view */
    LLVMValueRef *om = new_multi(v->rank);
    for (int d = 0; d < v->rank; d++)
      om[v->perm[x->id][d]] = z->view_at[d];
    fz_index *oi = idx_from_lin(z, x->operands[0]->shape, cg_flatten(z->f, om, v->odims[x->id], v->rank));
    free(om);
    LLVMValueRef val = value_at(z, x->operands[0], oi);
    idx_free(oi);
    return val;
  }
  int r = x->shape->rank;
  LLVMValueRef *m = idx_multi(z, idx), *om = new_multi(r);
  for (int i = 0; i < r; i++)
    om[x->attrs.dimensions.v[i]] = m[i];
  return operand_at_multi(z, x, om);
}

static LLVMValueRef slice_value(fz *z, ir_instr *x, fz_index *idx) {
  cg_module *cm = z->f->cm;
  int r = x->shape->rank;
  LLVMValueRef *m = idx_multi(z, idx), *om = new_multi(r);
  for (int d = 0; d < r; d++) {
    const ir_slice_dim *sd = &x->attrs.u.slice.dims[d];
    LLVMValueRef v = sd->stride == 1 ? m[d] : LLVMBuildMul(cm->b, m[d], cg_i64(cm, sd->stride), "");
    om[d] = sd->start ? LLVMBuildAdd(cm->b, v, cg_i64(cm, sd->start), "") : v;
  }
  return operand_at_multi(z, x, om);
}

static LLVMValueRef reverse_value(fz *z, ir_instr *x, fz_index *idx) {
  cg_module *cm = z->f->cm;
  int r = x->shape->rank;
  LLVMValueRef *m = idx_multi(z, idx), *om = new_multi(r);
  for (int d = 0; d < r; d++)
    om[d] = m[d];
  for (int k = 0; k < x->attrs.dimensions.n; k++) {
    int64_t d = x->attrs.dimensions.v[k];
    om[d] = LLVMBuildSub(cm->b, cg_i64(cm, x->shape->dims[d] - 1), m[d], "");
  }
  return operand_at_multi(z, x, om);
}

static LLVMValueRef iota_value(fz *z, ir_instr *x, fz_index *idx) {
  LLVMValueRef k = idx_multi(z, idx)[x->attrs.u.iota_dimension];
  return cg_convert(z->f, k, IR_S64, x->shape->et);
}

/* Pad: the operand element when the index falls on one (clamped load, then select). */
static LLVMValueRef pad_value(fz *z, ir_instr *x, fz_index *idx) {
  cg_module *cm = z->f->cm;
  LLVMBuilderRef b = cm->b;
  const ir_shape *s = x->operands[0]->shape;
  LLVMValueRef padv = operand_value(z, x, 1, idx);
  if (count_of(s) == 0)
    return padv;
  LLVMValueRef *m = idx_multi(z, idx), *om = new_multi(s->rank), ok = LLVMConstInt(cm->i1, 1, 0);
  for (int d = 0; d < s->rank; d++) {
    const ir_pad_dim *p = &x->attrs.u.padding.dims[d];
    LLVMValueRef t = LLVMBuildSub(b, m[d], cg_i64(cm, p->lo), "");
    LLVMValueRef q = t;
    if (p->interior) {
      LLVMValueRef step = cg_i64(cm, p->interior + 1);
      q = LLVMBuildSDiv(b, t, step, "");
      LLVMValueRef rem = LLVMBuildSub(b, t, LLVMBuildMul(b, q, step, ""), "");
      ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntEQ, rem, cg_i64(cm, 0), ""), "");
    }
    ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntSGE, t, cg_i64(cm, 0), ""), "");
    ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntSLT, q, cg_i64(cm, s->dims[d]), ""), "");
    LLVMValueRef lo = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, q, cg_i64(cm, 0), ""), cg_i64(cm, 0), q, "");
    LLVMValueRef hi = cg_i64(cm, s->dims[d] - 1);
    om[d] = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSGT, lo, hi, ""), hi, lo, "");
  }
  LLVMValueRef v = operand_at_multi(z, x, om);
  return LLVMBuildSelect(b, ok, v, padv, "");
}

/* Concatenate: a branch per operand on the concatenated dimension, joined by a phi. */
/* Operand k of concatenate x (which starts at `start` along dim) at x's index m. */
static LLVMValueRef concat_operand(fz *z, ir_instr *x, int k, int64_t start, LLVMValueRef *m) {
  LLVMBuilderRef b = z->f->cm->b;
  int64_t dim = x->attrs.dimensions.v[0];
  int r = x->shape->rank;
  LLVMValueRef *om = new_multi(r);
  for (int d = 0; d < r; d++)
    om[d] = d == dim ? LLVMBuildSub(b, m[d], cg_i64(z->f->cm, start), "") : m[d];
  fz_index *oi = idx_from_multi(z, x->operands[k]->shape, om);
  LLVMValueRef v = value_at(z, x->operands[k], oi);
  idx_free(oi);
  return v;
}

/* Emits a branch on `at` (an index along concatenate x's dimension) to one block per
 * operand that is not empty, where part(z, k, start, arg) emits what operand k (starting at
 * `start`) gives; every block then joins in `done`, where the builder is left. */
typedef void concat_part_fn(fz *z, int k, int64_t start, void *arg);

static void concat_branches(fz *z, const ir_instr *x, LLVMValueRef at, LLVMBasicBlockRef done, concat_part_fn *part,
                            void *arg) {
  cg_module *cm = z->f->cm;
  LLVMBuilderRef b = cm->b;
  int64_t dim = x->attrs.dimensions.v[0], start = 0;
  for (int k = 0; k < x->n_operands; k++) {
    int64_t size = x->operands[k]->shape->dims[dim], end = start + size;
    if (size == 0)
      continue;
    bool last = end >= x->shape->dims[dim];
    LLVMBasicBlockRef here = LLVMAppendBasicBlockInContext(cm->ctx, z->f->fn, "concat.part");
    LLVMBasicBlockRef next = last ? NULL : LLVMAppendBasicBlockInContext(cm->ctx, z->f->fn, "concat.next");
    if (last)
      LLVMBuildBr(b, here);
    else
      LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, at, cg_i64(cm, end), ""), here, next);
    LLVMPositionBuilderAtEnd(b, here);
    part(z, k, start, arg);
    LLVMBuildBr(b, done);
    if (last)
      break;
    LLVMPositionBuilderAtEnd(b, next);
    start = end;
  }
  LLVMPositionBuilderAtEnd(b, done);
}

/* concat_value's operands: each part's value and the block it was computed in. */
typedef struct concat_values {
  ir_instr *x;
  LLVMValueRef *m;
  LLVMValueRef vals[FUSION_KERNEL_MAX_CONCAT_OPERANDS];
  LLVMBasicBlockRef from[FUSION_KERNEL_MAX_CONCAT_OPERANDS];
  int n;
} concat_values;

static void concat_value_part(fz *z, int k, int64_t start, void *arg) {
  concat_values *c = arg;
  z->gen++;
  c->vals[c->n] = concat_operand(z, c->x, k, start, c->m);
  c->from[c->n++] = LLVMGetInsertBlock(z->f->cm->b);
}

static LLVMValueRef concat_value(fz *z, ir_instr *x, fz_index *idx) {
  cg_module *cm = z->f->cm;
  LLVMBuilderRef b = cm->b;
  int64_t dim = x->attrs.dimensions.v[0];
  LLVMValueRef *m = idx_multi(z, idx);
  if (x == z->row_cat && z->row_cat_part >= 0) { /* this row reads one operand (emit_rows) */
    int64_t start = 0;
    for (int k = 0; k < z->row_cat_part; k++)
      start += x->operands[k]->shape->dims[dim];
    return concat_operand(z, x, z->row_cat_part, start, m);
  }
  concat_values c = {.x = x, .m = m};
  concat_branches(z, x, m[dim], LLVMAppendBasicBlockInContext(cm->ctx, z->f->fn, "concat.done"), concat_value_part,
                  &c);
  LLVMBasicBlockRef done = LLVMGetInsertBlock(b);
  z->gen++;
  /* bf16 operands that are only moved join as their bits, so the store keeps them exactly. */
  LLVMValueRef bits[FUSION_KERNEL_MAX_CONCAT_OPERANDS];
  bool moved = x->shape->et == IR_BF16;
  for (int k = 0; moved && k < c.n; k++) {
    LLVMPositionBuilderBefore(b, LLVMGetBasicBlockTerminator(c.from[k]));
    moved = (bits[k] = cg_bf16_source_bits(z->f, c.vals[k])) != NULL;
  }
  LLVMPositionBuilderAtEnd(b, done);
  if (moved) {
    LLVMValueRef phi = LLVMBuildPhi(b, cm->i16, "concat.bits");
    LLVMAddIncoming(phi, bits, c.from, (unsigned)c.n);
    return cg_bf16_widen(z->f, phi);
  }
  LLVMValueRef phi = LLVMBuildPhi(b, LLVMTypeOf(c.vals[0]), "concat");
  LLVMAddIncoming(phi, c.vals, c.from, (unsigned)c.n);
  return phi;
}

/* A start index of dynamic-slice, clamped to [0, dim - size] as the semantics say. */
static LLVMValueRef dynamic_start(fz *z, ir_instr *x, int d, fz_index *idx) {
  cg_module *cm = z->f->cm;
  LLVMBuilderRef b = cm->b;
  ir_instr *op = x->operands[1 + d];
  LLVMValueRef v;
  if (x->n_operands == 2 && x->operands[1]->shape->rank == 1) {
    op = x->operands[1];
    fz_index one = idx_local(z, op->shape, cg_i64(cm, d), NULL);
    v = value_at(z, op, &one);
  } else {
    v = operand_value(z, x, 1 + d, idx);
  }
  v = LLVMBuildIntCast2(b, v, cm->i64, 1, "start");
  int64_t hi_v = x->operands[0]->shape->dims[d] - x->shape->dims[d];
  LLVMValueRef zero = cg_i64(cm, 0), hi = cg_i64(cm, hi_v);
  v = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSLT, v, zero, ""), zero, v, "");
  return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntSGT, v, hi, ""), hi, v, "");
}

static LLVMValueRef dynamic_slice_value(fz *z, ir_instr *x, fz_index *idx) {
  int r = x->shape->rank;
  LLVMValueRef *m = idx_multi(z, idx), *om = new_multi(r);
  for (int d = 0; d < r; d++)
    om[d] = LLVMBuildAdd(z->f->cm->b, dynamic_start(z, x, d, idx), m[d], "");
  return operand_at_multi(z, x, om);
}

static bool inline_member(const fz *z, const ir_instr *x);
static LLVMValueRef inline_reduce_value(fz *z, ir_instr *x, fz_index *idx);
static LLVMValueRef reduce_window_value(fz *z, ir_instr *x, fz_index *idx);
static LLVMValueRef gather_value(fz *z, ir_instr *x, fz_index *idx);

static LLVMValueRef compute(fz *z, ir_instr *x, fz_index *idx) {
  if (ir_is_elementwise(x))
    return elementwise(z, x, idx);
  if (x->op == IR_OP_REDUCE && z->row_value && z->row_value[x->id]) /* computed for this row */
    return LLVMBuildLoad2(z->f->cm->b, cg_compute_type(z->f->cm, x->shape->et), z->row_value[x->id], "row");
  if (inline_member(z, x))
    return inline_reduce_value(z, x, idx);
  switch (ir_opcode_table[x->op].family) {
  case IR_FAM_CONSTANT: return constant_value(z, x, idx);
  case IR_FAM_BROADCAST: return broadcast_value(z, x, idx);
  case IR_FAM_RESHAPE: case IR_FAM_BITCAST: case IR_FAM_COPY: return same_linear_value(z, x, idx);
  case IR_FAM_TRANSPOSE: return transpose_value(z, x, idx);
  case IR_FAM_SLICE: return slice_value(z, x, idx);
  case IR_FAM_REVERSE: return reverse_value(z, x, idx);
  case IR_FAM_IOTA: return iota_value(z, x, idx);
  case IR_FAM_PAD: return pad_value(z, x, idx);
  case IR_FAM_CONCATENATE: return concat_value(z, x, idx);
  case IR_FAM_DYNAMIC_SLICE: return dynamic_slice_value(z, x, idx);
  case IR_FAM_REDUCE_WINDOW: return reduce_window_value(z, x, idx);
  case IR_FAM_GATHER: return gather_value(z, x, idx);
  default:
    cg_fail(z->f->cm, x, "internal error: '%s' inside a loop fusion", ir_opcode_table[x->op].spelling);
    return LLVMGetUndef(cg_compute_type(z->f->cm, x->shape->et));
  }
}

/* Whether x is a convert to a type that holds fewer bits than it is computed in (bf16, 8- and
 * 4-bit floats, computed in f32): its value is rounded to the type, as XLA keeps an explicit
 * narrowing convert (x.astype(bf16).astype(f32) rounds).  Arithmetic results of those types
 * keep f32 precision inside the loop until stored, as XLA's CPU fusions keep them by default
 * (xla_allow_excess_precision; docs/conformance.md). */
static bool rounds(const ir_instr *x) {
  ir_etype et = x->shape->et;
  bool narrow = et == IR_BF16 || (ir_etype_is_float(et) && ir_etype_table[et].storage_bytes == 1);
  ir_family fam = ir_opcode_table[x->op].family;
  return narrow && (fam == IR_FAM_CONVERT || fam == IR_FAM_STOCHASTIC_CONVERT);
}

static LLVMValueRef value_at(fz *z, ir_instr *x, fz_index *idx) {
  if (!z->member[x->id])
    return load_buffer(z, x, idx);
  if (z->memo_idx[x->id] == idx->serial && z->memo_gen[x->id] == z->gen)
    return z->memo[x->id];
  unsigned gen = z->gen;
  LLVMValueRef v;
  if (z->stash && z->stash_ready[x->id] && idx->serial == z->row_serial) { /* kept by an earlier pass */
    cg_module *cm = z->f->cm;
    LLVMTypeRef t = cg_compute_type(cm, x->shape->et);
    v = LLVMBuildLoad2(cm->b, t, LLVMBuildGEP2(cm->b, t, z->stash[x->id], &z->row_j, 1, ""), "kept");
  } else {
    v = compute(z, x, idx);
    if (rounds(x)) /* a narrowing convert holds what its buffer would */
      v = cg_round_to(z->f, x->shape->et, v);
  }
  if (z->gen == gen) { /* no branch in between: the value dominates what follows */
    z->memo[x->id] = v;
    z->memo_idx[x->id] = idx->serial;
    z->memo_gen[x->id] = gen;
  }
  return v;
}

/* ---- the range function ----------------------------------------------------------------------- */

/* The loop body is `inner(ptr ctx, ptr noalias buf1, ..., ptr noalias out, i64 begin, i64 end)`
 * (always inlined), called by `outer(ptr args, i64 begin, i64 end)`, the function
 * hlo_rt_parallel_for runs, which loads ctx and the buffers from args.  The buffers of one
 * kernel never overlap (buffer assignment gives the result a range of its own), and saying so
 * lets LLVM vectorize without run-time overlap checks and hoist per-row values.  rf is set up
 * like a computation function (entry block for allocas, a failure block that returns) so the
 * shared lowering helpers work inside it. */
typedef struct range_fn {
  cg_function rf;
  LLVMValueRef fn, begin, end;
  int n_bufs;             /* buffers including the result */
  bool nontemporal;       /* its result is written with non-temporal stores (CG_NONTEMPORAL_ATTR) */
  LLVMBasicBlockRef resume;
  char name[600];
} range_fn;

static void range_open(range_fn *r, cg_function *f, const char *name, int n_values, int n_bufs) {
  cg_module *cm = f->cm;
  r->n_bufs = n_bufs;
  r->nontemporal = false;
  snprintf(r->name, sizeof r->name, "%s", name);
  LLVMTypeRef *ps = calloc((size_t)n_bufs + 3, sizeof *ps);
  for (int k = 0; k <= n_bufs; k++)
    ps[k] = cm->ptr;
  ps[n_bufs + 1] = ps[n_bufs + 2] = cm->i64;
  LLVMTypeRef t = LLVMFunctionType(cm->void_t, ps, (unsigned)n_bufs + 3, 0);
  free(ps);
  r->resume = LLVMGetInsertBlock(cm->b);
  char inner[620];
  snprintf(inner, sizeof inner, "%s.body", name);
  r->fn = LLVMAddFunction(cm->mod, inner, t);
  LLVMSetLinkage(r->fn, LLVMInternalLinkage);
  cg_add_attr(cm, r->fn, LLVMAttributeFunctionIndex, "alwaysinline");
  for (int k = 1; k <= n_bufs; k++)
    cg_add_attr(cm, r->fn, (unsigned)k + 1, "noalias");
  cg_function *rf = &r->rf;
  memset(rf, 0, sizeof *rf);
  rf->cm = cm;
  rf->comp = f->comp;
  rf->fn = r->fn;
  rf->values = calloc((size_t)n_values + 1, sizeof *rf->values);
  rf->entry_bb = LLVMAppendBasicBlockInContext(cm->ctx, r->fn, "entry");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(cm->ctx, r->fn, "body");
  rf->fail_bb = LLVMAppendBasicBlockInContext(cm->ctx, r->fn, "fail");
  LLVMPositionBuilderAtEnd(cm->b, rf->entry_bb);
  rf->fail_slot = LLVMBuildAlloca(cm->b, cm->ptr, "status");
  rf->ctx_arg = LLVMGetParam(r->fn, 0);
  r->begin = LLVMGetParam(r->fn, (unsigned)n_bufs + 1);
  r->end = LLVMGetParam(r->fn, (unsigned)n_bufs + 2);
  LLVMBuildBr(cm->b, body);
  LLVMPositionBuilderAtEnd(cm->b, rf->fail_bb);
  LLVMBuildRetVoid(cm->b);
  LLVMPositionBuilderAtEnd(cm->b, body);
}

/* Buffer k (1-based; n_bufs is the result) inside the loop body. */
static LLVMValueRef range_arg(range_fn *r, int k) { return LLVMGetParam(r->fn, (unsigned)k); }

/* outer(args, begin, end): loads ctx and the buffers, calls the body. */
static LLVMValueRef range_outer(range_fn *r, cg_module *cm) {
  LLVMTypeRef t = LLVMFunctionType(cm->void_t, (LLVMTypeRef[]){cm->ptr, cm->i64, cm->i64}, 3, 0);
  LLVMValueRef fn = LLVMAddFunction(cm->mod, r->name, t);
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  if (r->nontemporal) { /* the body is inlined here; kept out of its caller, whose other stores are not streamed */
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(cm->ctx, CG_NONTEMPORAL_ATTR,
                                                      (unsigned)strlen(CG_NONTEMPORAL_ATTR), "", 0));
    cg_add_attr(cm, fn, LLVMAttributeFunctionIndex, "noinline");
  }
  LLVMPositionBuilderAtEnd(cm->b, LLVMAppendBasicBlockInContext(cm->ctx, fn, "entry"));
  LLVMValueRef *args = calloc((size_t)r->n_bufs + 3, sizeof *args);
  for (int k = 0; k <= r->n_bufs; k++)
    args[k] = LLVMBuildLoad2(cm->b, cm->ptr,
                             LLVMBuildGEP2(cm->b, cm->ptr, LLVMGetParam(fn, 0), (LLVMValueRef[]){cg_i64(cm, k)}, 1, ""),
                             "buf");
  args[r->n_bufs + 1] = LLVMGetParam(fn, 1);
  args[r->n_bufs + 2] = LLVMGetParam(fn, 2);
  LLVMBuildCall2(cm->b, LLVMGlobalGetValueType(r->fn), r->fn, args, (unsigned)r->n_bufs + 3, "");
  LLVMBuildRetVoid(cm->b);
  free(args);
  return fn;
}

/* Closes the loop body; back in f, returns outer(args, begin, end) (a hlo_rt_range_fn). */
static LLVMValueRef range_close(range_fn *r, cg_function *f) {
  cg_module *cm = f->cm;
  LLVMBuildRetVoid(cm->b);
  free(r->rf.values);
  LLVMValueRef outer = range_outer(r, cm);
  LLVMPositionBuilderAtEnd(cm->b, r->resume);
  return outer;
}

/* Closes the loop body and, back in f, runs it over [0, units): on the pool when the work is
 * large, else directly. */
static void range_close_and_run(range_fn *r, cg_function *f, LLVMValueRef argv, int64_t units, int64_t elements) {
  cg_module *cm = f->cm;
  LLVMValueRef outer = range_close(r, f);
  LLVMTypeRef body_t = LLVMFunctionType(cm->void_t, (LLVMTypeRef[]){cm->ptr, cm->i64, cm->i64}, 3, 0);
  if (elements >= FZ_PARALLEL_MIN_ELEMENTS && units > 1) {
    cg_runtime_call(cm, CG_RT_hlo_rt_parallel_for, (LLVMValueRef[]){f->ctx_arg, cg_i64(cm, units), outer, argv}, 4,
                    "");
  } else {
    LLVMBuildCall2(cm->b, body_t, outer, (LLVMValueRef[]){argv, cg_i64(cm, 0), cg_i64(cm, units)}, 3, "");
  }
}

/* ---- loops ------------------------------------------------------------------------------------ */

/* for (i = lo; i < hi; i++) with a phi-free alloca counter (cg_loop starts at 0). */
static cg_loop loop_from(cg_function *f, LLVMValueRef lo, LLVMValueRef hi, const char *name) {
  cg_module *cm = f->cm;
  LLVMValueRef n = LLVMBuildSub(cm->b, hi, lo, "");
  cg_loop l = cg_loop_begin(f, n, name);
  l.i = LLVMBuildAdd(cm->b, l.i, lo, name);
  return l;
}

static void loop_end_from(cg_function *f, cg_loop *l, LLVMValueRef lo) {
  l->i = LLVMBuildSub(f->cm->b, l->i, lo, "");
  cg_loop_end(f, l);
}

static LLVMValueRef min_i64(cg_module *cm, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildSelect(cm->b, LLVMBuildICmp(cm->b, LLVMIntSLT, a, b, ""), a, b, "");
}

/* ---- the emitter's setup ------------------------------------------------------------------------ */

static void fz_init(fz *z, cg_function *rf, ir_computation *comp, const ir_instr *root) {
  memset(z, 0, sizeof *z);
  z->f = rf;
  z->comp = comp;
  z->root = root;
  size_t n = (size_t)comp->n_instrs + 1;
  z->member = calloc(n, sizeof *z->member);
  z->buffer = calloc(n, sizeof *z->buffer);
  z->memo = calloc(n, sizeof *z->memo);
  z->memo_idx = calloc(n, sizeof *z->memo_idx);
  z->memo_gen = calloc(n, sizeof *z->memo_gen);
  z->gen = 1;
  z->row_cat_part = -1;
}

static void fz_deinit(fz *z) {
  free(z->member);
  free(z->buffer);
  free(z->memo);
  free(z->memo_idx);
  free(z->memo_gen);
  free(z->row_value);
  free(z->stash);
  free(z->stash_ready);
  free(z->out_ptr);
  free(z->stage);
  view_free(&z->view, z->comp->n_instrs);
}

/* Whether every member reads its operands at its own linear index (a 1-D loop suffices). */
static bool flat(const fz *z) {
  for (int i = 0; i < z->comp->n_instrs; i++) {
    const ir_instr *x = z->comp->instrs[i];
    if (!z->member[i] || ir_is_elementwise(x))
      continue;
    switch (ir_opcode_table[x->op].family) {
    case IR_FAM_CONSTANT: case IR_FAM_RESHAPE: case IR_FAM_BITCAST: case IR_FAM_COPY: continue;
    case IR_FAM_BROADCAST:
      if (x->operands[0]->shape->rank == 0)
        continue;
      return false;
    default: return false;
    }
  }
  return true;
}

/* Whether a member transposes the minor dimension (then the loop runs in tiles). */
static bool transposes_minor(const fz *z) {
  for (int i = 0; i < z->comp->n_instrs; i++) {
    const ir_instr *x = z->comp->instrs[i];
    if (z->member[i] && x->op == IR_OP_TRANSPOSE && x->shape->rank >= 2 &&
        x->attrs.dimensions.v[x->shape->rank - 1] != x->shape->rank - 1 && count_of(x->shape) >= 4096)
      return true;
  }
  return false;
}

/* ---- loop kernels ------------------------------------------------------------------------------ */

/* The buffers the range function reads: one per non-member operand, then the result. */
typedef struct fz_buffers {
  ir_instr **insts;   /* instructions of comp loaded from buffers */
  LLVMValueRef *ptrs; /* their leaf pointers in the caller */
  int n;
  /* A kOutput fusion's dot or convolution: already computed into the result buffer, which the
   * loop reads it from (each element at its own index) and overwrites; or the operand whose
   * buffer the result took over (cg_function.in_place), read the same way. */
  const ir_instr *in_out;
} fz_buffers;

/* Packs ctx, the buffers and the n_outs result buffers into an argument array in f. */
static LLVMValueRef pack_args(cg_function *f, const fz_buffers *bufs, const LLVMValueRef *outs, int n_outs) {
  cg_module *cm = f->cm;
  int n = bufs->n + n_outs + 1;
  LLVMValueRef argv = cg_entry_alloca(f, LLVMArrayType2(cm->ptr, (uint64_t)n), "fz.args");
  for (int k = 0; k < n; k++) {
    LLVMValueRef v = k == 0 ? f->ctx_arg : k <= bufs->n ? bufs->ptrs[k - 1] : outs[k - 1 - bufs->n];
    LLVMBuildStore(cm->b, v, LLVMBuildGEP2(cm->b, cm->ptr, argv, (LLVMValueRef[]){cg_i64(cm, k)}, 1, ""));
  }
  return argv;
}

/* In the range function: binds the buffers and the outputs' result buffers to the emitter. */
static void bind_buffers(fz *z, range_fn *r, const fz_buffers *bufs) {
  for (int k = 0; k < bufs->n; k++)
    z->buffer[bufs->insts[k]->id] = range_arg(r, 1 + k);
  if (bufs->in_out)
    z->buffer[bufs->in_out->id] = range_arg(r, bufs->n + 1);
  z->out_ptr = calloc((size_t)z->n_outs + 1, sizeof *z->out_ptr);
  for (int k = 0; k < z->n_outs; k++)
    z->out_ptr[k] = range_arg(r, bufs->n + 1 + k);
}

/* Stores every output that is not a reduce at idx (an index of the loop's shape, which they
 * all have): one loop writes all of a multi-output fusion's outputs, values shared. */
static void store_outputs(fz *z, fz_index *idx) {
  for (int k = 0; k < z->n_outs; k++)
    if (z->outs[k]->op != IR_OP_REDUCE)
      cg_store(z->f, z->outs[k]->shape->et, z->out_ptr[k], idx_lin(z, idx), value_at(z, z->outs[k], idx));
}

static void emit_flat(fz *z, range_fn *r, int64_t n) {
  cg_module *cm = z->f->cm;
  LLVMValueRef lo = LLVMBuildMul(cm->b, r->begin, cg_i64(cm, FZ_FLAT_CHUNK), "");
  LLVMValueRef hi = min_i64(cm, LLVMBuildMul(cm->b, r->end, cg_i64(cm, FZ_FLAT_CHUNK), ""), cg_i64(cm, n));
  cg_loop l = loop_from(z->f, lo, hi, "fz.i");
  fz_index idx = idx_local(z, z->root->shape, l.i, NULL);
  z->gen++;
  store_outputs(z, &idx);
  free(idx.multi);
  loop_end_from(z->f, &l, lo);
}

/* The concatenate whose operand is the same along each row of a walk by rows, or NULL: the
 * loop's one output reaches it through a chain of members that each read the next at the
 * same index along the concatenated dimension, plus a constant (elementwise ops and converts
 * of the same dimensions, slices of stride 1 along it, reshapes, bitcasts and copies that keep
 * every dimension), no other member of the chain reads a concatenate, and that dimension is
 * not the minor one.  *shift: what the chain adds to the row's index along it. */
static const ir_instr *row_concat(const fz *z, int64_t *shift) {
  if (z->n_outs != 1 || z->outs[0]->op == IR_OP_REDUCE)
    return NULL;
  int n = z->comp->n_instrs, rank = z->outs[0]->shape->rank;
  bool *cat = calloc((size_t)n + 1, sizeof *cat); /* by id: a member that reads a concatenate */
  for (int i = 0; cat && i < n; i++) {
    const ir_instr *x = z->comp->instrs[i];
    cat[i] = z->member[i] && x->op == IR_OP_CONCATENATE;
    for (int k = 0; z->member[i] && k < x->n_operands && !cat[i]; k++)
      cat[i] = cat[x->operands[k]->id];
  }
  int64_t add[64] = {0};
  const ir_instr *x = z->outs[0], *found = NULL;
  for (int depth = 0; cat && rank <= 64 && depth < n && x->shape->rank == rank; depth++) {
    if (x->op == IR_OP_CONCATENATE) {
      found = x;
      break;
    }
    const ir_instr *next = NULL;
    bool ok = true;
    for (int k = 0; k < x->n_operands && ok; k++)
      if (cat[x->operands[k]->id] && next && next != x->operands[k])
        ok = false; /* two ways to a concatenate */
      else if (cat[x->operands[k]->id])
        next = x->operands[k];
    if (!ok || !next || next->shape->rank != rank)
      break;
    ir_family fam = ir_opcode_table[x->op].family;
    if (fam == IR_FAM_SLICE) {
      for (int d = 0; d < rank; d++)
        add[d] = x->attrs.u.slice.dims[d].stride == 1 ? add[d] + x->attrs.u.slice.dims[d].start : INT64_MIN / 2;
    } else if (!((ir_is_elementwise(x) || fam == IR_FAM_CONVERT || fam == IR_FAM_RESHAPE || fam == IR_FAM_BITCAST ||
                  fam == IR_FAM_COPY) &&
                 ir_shape_same_dims(x->shape, next->shape))) {
      break;
    }
    x = next;
  }
  free(cat);
  if (!found)
    return NULL;
  int64_t dim = found->attrs.dimensions.v[0];
  if (dim >= rank - 1 || add[dim] < 0 || found->n_operands > FUSION_KERNEL_MAX_CONCAT_OPERANDS)
    return NULL;
  *shift = add[dim];
  return found;
}

/* The columns of one row (its first element at base, its outer index m). */
static void emit_row_columns(fz *z, LLVMValueRef *m, LLVMValueRef base) {
  cg_module *cm = z->f->cm;
  const ir_shape *s = z->root->shape;
  int rank = s->rank;
  cg_loop col = cg_loop_begin(z->f, cg_i64(cm, s->dims[rank - 1]), "fz.col");
  LLVMValueRef *mm = new_multi(rank);
  memcpy(mm, m, (size_t)rank * sizeof *mm);
  mm[rank - 1] = col.i;
  fz_index idx = idx_local(z, s, LLVMBuildAdd(cm->b, base, col.i, ""), mm);
  z->gen++;
  store_outputs(z, &idx);
  free(mm);
  cg_loop_end(z->f, &col);
}

/* A row's copy of its loop for concatenate operand k (emit_rows: a concat_part_fn). */
typedef struct row_part_args {
  LLVMValueRef *m, base;
} row_part_args;

static void row_part(fz *z, int k, int64_t start, void *arg) {
  const row_part_args *a = arg;
  (void)start;
  z->row_cat_part = k;
  emit_row_columns(z, a->m, a->base);
}

/* Rows of the result (all dimensions but the minor one) in [begin, end), the minor in order.
 * Where a concatenate's operand is the same along a row (row_concat), the row's loop is
 * emitted once per operand, each reading its operand without a branch per element (so it
 * vectorizes), and the row picks its copy. */
static void emit_rows(fz *z, range_fn *r) {
  cg_module *cm = z->f->cm;
  LLVMBuilderRef b = cm->b;
  const ir_shape *s = z->root->shape;
  int rank = s->rank;
  int64_t inner = s->dims[rank - 1], shift = 0;
  cg_loop rows = loop_from(z->f, r->begin, r->end, "fz.row");
  LLVMValueRef *m = new_multi(rank);
  cg_unflatten(z->f, rows.i, s->dims, rank - 1, m);
  LLVMValueRef base = LLVMBuildMul(b, rows.i, cg_i64(cm, inner), "");
  const ir_instr *cat = row_concat(z, &shift);
  if (!cat) {
    emit_row_columns(z, m, base);
  } else {
    row_part_args a = {m, base};
    LLVMValueRef at = LLVMBuildAdd(b, m[cat->attrs.dimensions.v[0]], cg_i64(cm, shift), "fz.cat.at");
    z->row_cat = cat;
    concat_branches(z, cat, at, LLVMAppendBasicBlockInContext(cm->ctx, z->f->fn, "fz.cat.done"), row_part, &a);
    z->row_cat = NULL;
    z->row_cat_part = -1;
  }
  free(m);
  loop_end_from(z->f, &rows, r->begin);
}

/* Units of work of a tiled loop: prefix rows x tile rows x tile columns of the view. */
static int64_t tile_units(const fz_view *v) {
  int rank = v->rank;
  int64_t pre = 1;
  for (int d = 0; d < rank - 2; d++)
    pre *= v->dims[d];
  int64_t tr = (v->dims[rank - 2] + FZ_TILE - 1) / FZ_TILE, tc = (v->dims[rank - 1] + FZ_TILE - 1) / FZ_TILE;
  return pre * tr * tc;
}

/* ---- transpose tiles ----
 * A transpose that moves the minor dimension reads its operand across rows: element by
 * element, one load each.  Tiles walk the result in FZ_TILE x FZ_TILE blocks of its two
 * minor dimensions, in a view where runs of dimensions a transpose keeps together are one
 * (tile_view: NHWC -> NCHW is [N, H*W, C] -> [N, C, H*W]).  Where a member transpose reads a
 * buffer and takes the view's second-minor dimension from its operand's minor one, a full
 * tile first copies its block of the operand into a stack array in result order, FZ_STAGE x
 * FZ_STAGE at a time: FZ_STAGE rows of FZ_STAGE contiguous elements loaded as vectors and
 * transposed in registers by three rounds of shuffles; the tile's element loop then reads the
 * array contiguously, as it reads every other operand.  The values are the operand's bits: the
 * same results, in the same order.  Partial tiles (at the edges) read the operand directly. */
enum { FZ_STAGE = 8 };

/* Whether transpose member x could be staged: it reads a buffer, has the root's dimensions
 * and whole bytes of 1, 2, 4 or 8 per element. */
static bool stage_candidate(const fz *z, const ir_instr *x) {
  const ir_shape *s = z->root->shape;
  if (x->op != IR_OP_TRANSPOSE || !z->member[x->id] || s->rank < 2 || z->member[x->operands[0]->id] ||
      !ir_shape_same_dims(x->shape, s) || x->shape->dyn || x->operands[0]->shape->dyn)
    return false;
  int es = ir_etype_table[x->shape->et].storage_bytes;
  return es == 1 || es == 2 || es == 4 || es == 8;
}

/* Whether operand dimensions a < b have only dimensions of size 1 between them. */
static bool next_in_operand(const ir_shape *os, int64_t a, int64_t b) {
  if (b <= a)
    return false;
  for (int64_t e = a + 1; e < b; e++)
    if (os->dims[e] != 1)
      return false;
  return true;
}

/* Transpose x (the root's dimensions) in view v: *perm (v->rank entries: the operand's view
 * dimension of each result view dimension) and the operand's view dimensions *odims, when
 * each view dimension's root dimensions come from operand dimensions that follow each other
 * (size 1 ones aside) in order.  A view dimension holds one root dimension (the identity
 * view) or several of size above 1 (a merged view drops size 1 ones: group -1). */
static bool view_perm(const fz_view *v, const ir_instr *x, int **perm, int64_t **odims) {
  const ir_shape *s = x->shape, *os = x->operands[0]->shape;
  const int64_t *p = x->attrs.dimensions.v;
  int64_t *first = malloc((size_t)v->rank * sizeof *first), *last = malloc((size_t)v->rank * sizeof *last);
  for (int g = 0; g < v->rank; g++)
    first[g] = last[g] = -1;
  bool ok = true;
  for (int d = 0; d < s->rank && ok; d++) {
    int g = v->group[d];
    if (g < 0)
      continue;
    if (first[g] < 0)
      first[g] = p[d];
    else
      ok = next_in_operand(os, last[g], p[d]);
    last[g] = p[d];
  }
  *perm = ok ? malloc((size_t)v->rank * sizeof **perm) : NULL;
  *odims = ok ? malloc((size_t)v->rank * sizeof **odims) : NULL;
  for (int g = 0; ok && g < v->rank; g++) {
    int at = 0;
    for (int h = 0; h < v->rank; h++)
      at += first[h] < first[g];
    (*perm)[g] = at;
    (*odims)[at] = v->dims[g];
  }
  free(first);
  free(last);
  return ok;
}

/* The identity view: the root's own dimensions. */
static void view_identity(fz_view *v, const ir_shape *s) {
  v->rank = s->rank;
  v->dims = malloc((size_t)s->rank * sizeof *v->dims);
  v->group = malloc((size_t)s->rank * sizeof *v->group);
  for (int d = 0; d < s->rank; d++) {
    v->dims[d] = s->dims[d];
    v->group[d] = d;
  }
}

/* The view that transpose x suggests: size 1 dimensions dropped, each run of result
 * dimensions that follow each other in the operand merged. */
static void view_of_transpose(fz_view *v, const ir_instr *x) {
  const ir_shape *s = x->shape, *os = x->operands[0]->shape;
  const int64_t *p = x->attrs.dimensions.v;
  v->dims = malloc((size_t)s->rank * sizeof *v->dims);
  v->group = malloc((size_t)s->rank * sizeof *v->group);
  int g = -1, in_group = 0;
  int64_t prev = -1;
  for (int d = 0; d < s->rank; d++) {
    v->group[d] = -1;
    if (s->dims[d] == 1)
      continue;
    if (g < 0 || !next_in_operand(os, prev, p[d])) {
      v->dims[++g] = 1;
      in_group = 0;
    }
    v->dims[g] *= s->dims[d];
    v->merged = v->merged || ++in_group > 1;
    v->group[d] = g;
    prev = p[d];
  }
  v->rank = g + 1;
}

/* Whether member x reads its operands at its own linear index, or is a transpose the view
 * suits: what a merged view asks of every member (others would split the index again). */
static bool reads_in_view(const fz *z, const ir_instr *x) {
  if (ir_is_elementwise(x) || (z->view.perm && z->view.perm[x->id]))
    return true;
  switch (ir_opcode_table[x->op].family) {
  case IR_FAM_CONSTANT: case IR_FAM_RESHAPE: case IR_FAM_BITCAST: case IR_FAM_COPY: case IR_FAM_CONVERT: return true;
  default: return false;
  }
}

/* Fills v's permutations for the transpose members it suits, and which of them stage (the
 * view's second-minor dimension from the operand's minor one); false when none stages. */
static bool view_transposes(fz *z) {
  fz_view *v = &z->view;
  size_t n = (size_t)z->comp->n_instrs + 1;
  v->perm = calloc(n, sizeof *v->perm);
  v->odims = calloc(n, sizeof *v->odims);
  v->staged = calloc(n, sizeof *v->staged);
  bool any = false;
  for (int i = 0; i < z->comp->n_instrs; i++) {
    const ir_instr *x = z->comp->instrs[i];
    if (!stage_candidate(z, x) || !view_perm(v, x, &v->perm[i], &v->odims[i]))
      continue;
    v->staged[i] = v->rank >= 2 && v->perm[i][v->rank - 2] == v->rank - 1;
    any = any || v->staged[i];
  }
  return any;
}

/* Chooses the view the tiles walk: the one the first stageable transpose suggests, when it has
 * two dimensions or more and every member reads in it; else the root's own dimensions. */
static void tile_view(fz *z) {
  for (int i = 0; i < z->comp->n_instrs; i++) {
    const ir_instr *x = z->comp->instrs[i];
    if (!stage_candidate(z, x))
      continue;
    view_of_transpose(&z->view, x);
    bool ok = z->view.rank >= 2 && view_transposes(z);
    for (int k = 0; ok && z->view.merged && k < z->comp->n_instrs; k++)
      ok = !z->member[k] || reads_in_view(z, z->comp->instrs[k]);
    if (ok)
      return;
    view_free(&z->view, z->comp->n_instrs);
  }
  view_identity(&z->view, z->root->shape);
  view_transposes(z);
}

/* shufflevector(a, b, mask[0..n-1]). */
static LLVMValueRef shuffle(cg_module *cm, LLVMValueRef a, LLVMValueRef b, const int *mask, int n) {
  LLVMValueRef c[FZ_STAGE];
  for (int k = 0; k < n; k++)
    c[k] = LLVMConstInt(cm->i32, (unsigned long long)mask[k], 0);
  return LLVMBuildShuffleVector(cm->b, a, b, LLVMConstVector(c, (unsigned)n), "");
}

/* Rows r[0..7] of FZ_STAGE elements become the columns o[0..7]: pairs interleaved, then
 * pairs of pairs, then halves (the unpack / shuffle / permute rounds of an 8 x 8 transpose). */
static void transpose8(cg_module *cm, LLVMValueRef *r, LLVMValueRef *o) {
  static const int lo1[8] = {0, 8, 1, 9, 4, 12, 5, 13}, hi1[8] = {2, 10, 3, 11, 6, 14, 7, 15};
  static const int lo2[8] = {0, 1, 8, 9, 4, 5, 12, 13}, hi2[8] = {2, 3, 10, 11, 6, 7, 14, 15};
  static const int lo3[8] = {0, 1, 2, 3, 8, 9, 10, 11}, hi3[8] = {4, 5, 6, 7, 12, 13, 14, 15};
  LLVMValueRef t[8], u[8];
  for (int k = 0; k < 4; k++) {
    t[2 * k] = shuffle(cm, r[2 * k], r[2 * k + 1], lo1, 8);
    t[2 * k + 1] = shuffle(cm, r[2 * k], r[2 * k + 1], hi1, 8);
  }
  for (int h = 0; h < 8; h += 4) {
    u[h] = shuffle(cm, t[h], t[h + 2], lo2, 8);
    u[h + 1] = shuffle(cm, t[h], t[h + 2], hi2, 8);
    u[h + 2] = shuffle(cm, t[h + 1], t[h + 3], lo2, 8);
    u[h + 3] = shuffle(cm, t[h + 1], t[h + 3], hi2, 8);
  }
  for (int k = 0; k < 4; k++) {
    o[k] = shuffle(cm, u[k], u[k + 4], lo3, 8);
    o[k + 4] = shuffle(cm, u[k], u[k + 4], hi3, 8);
  }
}

/* Copies the operand of staged transpose x under the tile at (view prefix m, r0, c0) into its
 * stack array: array[i * FZ_TILE + j] = x's value at (m, r0 + i, c0 + j) of the view. */
static void stage_transpose(fz *z, const ir_instr *x, const LLVMValueRef *m, LLVMValueRef r0, LLVMValueRef c0) {
  cg_function *f = z->f;
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  const ir_instr *op = x->operands[0];
  const int *perm = z->view.perm[x->id];
  const int64_t *odims = z->view.odims[x->id];
  int rank = z->view.rank, p = perm[rank - 1];
  LLVMTypeRef et = LLVMIntTypeInContext(cm->ctx, 8 * (unsigned)ir_etype_table[x->shape->et].storage_bytes);
  LLVMTypeRef vt = LLVMVectorType(et, FZ_STAGE);
  if (!z->stage[x->id]) {
    z->stage[x->id] = cg_entry_alloca(f, LLVMArrayType2(et, FZ_TILE * FZ_TILE), "fz.stage");
    LLVMSetAlignment(z->stage[x->id], 64);
  }
  LLVMValueRef *om = new_multi(rank);
  for (int k = 0; k < rank - 2; k++)
    om[perm[k]] = m[k];
  om[rank - 1] = r0; /* perm[rank - 2] == rank - 1 */
  om[p] = c0;
  LLVMValueRef base = cg_flatten(f, om, odims, rank);
  free(om);
  int64_t stride = 1; /* of the operand's view dimension p: the tile's columns */
  for (int d = p + 1; d < rank; d++)
    stride *= odims[d];
  int per = FZ_TILE / FZ_STAGE;
  cg_loop blk = cg_loop_begin(f, cg_i64(cm, per * per), "fz.stage");
  LLVMValueRef bi = LLVMBuildUDiv(b, blk.i, cg_i64(cm, per), ""), bj = LLVMBuildURem(b, blk.i, cg_i64(cm, per), "");
  LLVMValueRef i0 = LLVMBuildMul(b, bi, cg_i64(cm, FZ_STAGE), ""), j0 = LLVMBuildMul(b, bj, cg_i64(cm, FZ_STAGE), "");
  LLVMValueRef rows[FZ_STAGE], cols[FZ_STAGE];
  for (int k = 0; k < FZ_STAGE; k++) {
    LLVMValueRef j = LLVMBuildAdd(b, j0, cg_i64(cm, k), "");
    LLVMValueRef at = LLVMBuildAdd(b, LLVMBuildAdd(b, base, i0, ""), LLVMBuildMul(b, j, cg_i64(cm, stride), ""), "");
    LLVMValueRef ptr = LLVMBuildGEP2(b, et, z->buffer[op->id], &at, 1, "");
    rows[k] = LLVMBuildLoad2(b, vt, ptr, "row");
    LLVMSetAlignment(rows[k], (unsigned)ir_etype_table[x->shape->et].storage_bytes);
  }
  transpose8(cm, rows, cols);
  for (int k = 0; k < FZ_STAGE; k++) {
    LLVMValueRef i = LLVMBuildAdd(b, i0, cg_i64(cm, k), "");
    LLVMValueRef at = LLVMBuildAdd(b, LLVMBuildMul(b, i, cg_i64(cm, FZ_TILE), ""), j0, "");
    LLVMValueRef st = LLVMBuildStore(b, cols[k], LLVMBuildGEP2(b, et, z->stage[x->id], &at, 1, ""));
    LLVMSetAlignment(st, (unsigned)ir_etype_table[x->shape->et].storage_bytes);
  }
  cg_loop_end(f, &blk);
}

/* The element loops of one tile: view rows [r0, r1) x columns [c0, c1) under view prefix m;
 * staged transposes read their stack arrays.  The element's index is the root's linear one
 * (the view's is the same) and, unless the view merged dimensions, the root's multi-index. */
static void tile_elements(fz *z, const LLVMValueRef *m, LLVMValueRef r0, LLVMValueRef r1, LLVMValueRef c0,
                          LLVMValueRef c1, bool staged) {
  cg_module *cm = z->f->cm;
  LLVMBuilderRef b = cm->b;
  const ir_shape *s = z->root->shape;
  const fz_view *v = &z->view;
  cg_loop li = loop_from(z->f, r0, r1, "fz.ti");
  cg_loop lj = loop_from(z->f, c0, c1, "fz.tj");
  LLVMValueRef *vm = new_multi(v->rank), *mm = NULL;
  memcpy(vm, m, (size_t)(v->rank - 2) * sizeof *vm);
  vm[v->rank - 2] = li.i;
  vm[v->rank - 1] = lj.i;
  if (!v->merged) {
    mm = new_multi(s->rank);
    for (int d = 0; d < s->rank; d++)
      mm[d] = v->group[d] < 0 ? cg_i64(cm, 0) : vm[v->group[d]];
  }
  fz_index idx = idx_local(z, s, cg_flatten(z->f, vm, v->dims, v->rank), mm);
  z->gen++;
  z->view_serial = idx.serial;
  z->view_at = vm;
  if (staged) {
    z->tile_serial = idx.serial;
    z->tile_at = LLVMBuildAdd(b, LLVMBuildMul(b, LLVMBuildSub(b, li.i, r0, ""), cg_i64(cm, FZ_TILE), ""),
                              LLVMBuildSub(b, lj.i, c0, ""), "");
  }
  store_outputs(z, &idx);
  z->tile_serial = 0;
  z->view_serial = 0;
  z->view_at = NULL;
  free(mm);
  free(vm);
  loop_end_from(z->f, &lj, c0);
  loop_end_from(z->f, &li, r0);
}

static void emit_tiles(fz *z, range_fn *r) {
  cg_module *cm = z->f->cm;
  LLVMBuilderRef b = cm->b;
  const fz_view *v = &z->view;
  int rank = v->rank;
  int64_t R = v->dims[rank - 2], C = v->dims[rank - 1];
  int64_t tr = (R + FZ_TILE - 1) / FZ_TILE, tc = (C + FZ_TILE - 1) / FZ_TILE;
  cg_loop t = loop_from(z->f, r->begin, r->end, "fz.tile");
  LLVMValueRef tcol = LLVMBuildURem(b, t.i, cg_i64(cm, tc), "");
  LLVMValueRef rest = LLVMBuildUDiv(b, t.i, cg_i64(cm, tc), "");
  LLVMValueRef trow = LLVMBuildURem(b, rest, cg_i64(cm, tr), "");
  LLVMValueRef pre = LLVMBuildUDiv(b, rest, cg_i64(cm, tr), "");
  LLVMValueRef *m = new_multi(rank);
  cg_unflatten(z->f, pre, v->dims, rank - 2, m);
  LLVMValueRef r0 = LLVMBuildMul(b, trow, cg_i64(cm, FZ_TILE), ""), c0 = LLVMBuildMul(b, tcol, cg_i64(cm, FZ_TILE), "");
  LLVMValueRef r1 = min_i64(cm, LLVMBuildAdd(b, r0, cg_i64(cm, FZ_TILE), ""), cg_i64(cm, R));
  LLVMValueRef c1 = min_i64(cm, LLVMBuildAdd(b, c0, cg_i64(cm, FZ_TILE), ""), cg_i64(cm, C));
  bool any = false;
  for (int i = 0; i < z->comp->n_instrs; i++)
    any = any || v->staged[i];
  if (!any) {
    tile_elements(z, m, r0, r1, c0, c1, false);
  } else {
    if (!z->stage)
      z->stage = calloc((size_t)z->comp->n_instrs + 1, sizeof *z->stage);
    LLVMBasicBlockRef full = LLVMAppendBasicBlockInContext(cm->ctx, z->f->fn, "fz.tile.full");
    LLVMBasicBlockRef part = LLVMAppendBasicBlockInContext(cm->ctx, z->f->fn, "fz.tile.part");
    LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(cm->ctx, z->f->fn, "fz.tile.next");
    LLVMValueRef whole = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntSLT, LLVMBuildAdd(b, r0, cg_i64(cm, FZ_TILE - 1), ""), cg_i64(cm, R), ""),
                                      LLVMBuildICmp(b, LLVMIntSLT, LLVMBuildAdd(b, c0, cg_i64(cm, FZ_TILE - 1), ""), cg_i64(cm, C), ""), "whole");
    LLVMBuildCondBr(b, whole, full, part);
    LLVMPositionBuilderAtEnd(b, full);
    for (int i = 0; i < z->comp->n_instrs; i++)
      if (v->staged[i])
        stage_transpose(z, z->comp->instrs[i], m, r0, c0);
    tile_elements(z, m, r0, LLVMBuildAdd(b, r0, cg_i64(cm, FZ_TILE), ""), c0, LLVMBuildAdd(b, c0, cg_i64(cm, FZ_TILE), ""), true);
    LLVMBuildBr(b, next);
    LLVMPositionBuilderAtEnd(b, part);
    tile_elements(z, m, r0, r1, c0, c1, false);
    LLVMBuildBr(b, next);
    LLVMPositionBuilderAtEnd(b, next);
    z->gen++;
  }
  free(m);
  loop_end_from(z->f, &t, r->begin);
}

/* ---- non-temporal stores for large results --------------------------------------------------- */

enum {
  /* Streamed results: loops of at most this element_cost (no transcendental op, at most one
   * division); costlier ones are bound by their arithmetic, and there non-temporal stores
   * measured slower (docs/performance.md, "Non-temporal stores"). */
  FZ_NONTEMPORAL_MAX_COST = 12,
  FZ_NONTEMPORAL_VISITS = 512, /* element_cost's walk */
};

static int element_cost(const fz *z, const ir_instr *x, int limit, bool rows, int *visits);

/* How a loop kernel without reductions walks its result. */
typedef enum { FZ_WALK_FLAT, FZ_WALK_ROWS, FZ_WALK_TILES } fz_walk;

/* Whether the kernel's result is written with non-temporal stores: one output, not written in
 * place (an in-place loop has just read each line), of at least
 * cg_options.nontemporal_min_bytes and whole bytes per element, cheap to compute
 * (FZ_NONTEMPORAL_MAX_COST), whose loop starts each run of the minor dimension at a multiple
 * of 64 bytes from the buffer's start (a flat loop's chunks always do; rows and tiles when a
 * row, and a tile's row, is a multiple of 64 bytes). */
static bool streams_result(const fz *z, const fz_buffers *bufs, fz_walk w) {
  const cg_options *o = z->f->cm->opts;
  int64_t min = o && o->nontemporal_min_bytes ? o->nontemporal_min_bytes : CG_NONTEMPORAL_MIN_BYTES;
  const ir_shape *s = z->outs[0]->shape;
  int64_t bytes = 0, count = count_of(s);
  if (min < 0 || z->n_outs != 1 || bufs->in_out || !ir_shape_byte_size(s, &bytes) || bytes < min || count <= 0 ||
      bytes % count)
    return false;
  int visits = FZ_NONTEMPORAL_VISITS;
  if (element_cost(z, z->outs[0], FZ_NONTEMPORAL_MAX_COST + 1, w != FZ_WALK_FLAT, &visits) > FZ_NONTEMPORAL_MAX_COST ||
      visits < 0)
    return false;
  int64_t es = bytes / count;
  if (w == FZ_WALK_TILES)
    return FZ_TILE * es % 64 == 0 && z->view.dims[z->view.rank - 1] * es % 64 == 0;
  return w == FZ_WALK_FLAT || (s->rank >= 1 && s->dims[s->rank - 1] * es % 64 == 0);
}

/* Branches on the result buffer's alignment: leaves the builder in the aligned block, where
 * an llvm.assume "align" bundle tells LLVM (its vector stores then carry the alignment that
 * cg_mark_nontemporal_stores asks for), and returns the block for any other address (a
 * caller's buffer need not be aligned; the arena's are: BUFFER_PLAN_ALIGN). */
static LLVMBasicBlockRef branch_on_alignment(fz *z) {
  cg_module *cm = z->f->cm;
  LLVMBuilderRef b = cm->b;
  LLVMValueRef out = z->out_ptr[0];
  LLVMBasicBlockRef aligned = LLVMAppendBasicBlockInContext(cm->ctx, z->f->fn, "fz.nt");
  LLVMBasicBlockRef plain = LLVMAppendBasicBlockInContext(cm->ctx, z->f->fn, "fz.plain");
  LLVMValueRef low = LLVMBuildAnd(b, LLVMBuildPtrToInt(b, out, cm->i64, ""), cg_i64(cm, 63), "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, low, cg_i64(cm, 0), ""), aligned, plain);
  LLVMPositionBuilderAtEnd(b, aligned);
  static const char name[] = "llvm.assume";
  LLVMValueRef assume = LLVMGetIntrinsicDeclaration(cm->mod, LLVMLookupIntrinsicID(name, sizeof name - 1), NULL, 0);
  LLVMOperandBundleRef align = LLVMCreateOperandBundle("align", 5, (LLVMValueRef[]){out, cg_i64(cm, 64)}, 2);
  LLVMBuildCallWithOperandBundles(b, LLVMGlobalGetValueType(assume), assume,
                                  (LLVMValueRef[]){LLVMConstInt(cm->i1, 1, 0)}, 1, &align, 1, "");
  LLVMDisposeOperandBundle(align);
  return plain;
}

/* Emits a loop (emit(z, arg)) twice: branch_on_alignment's aligned copy, whose stores
 * become non-temporal (r's attribute), and the copy for any other address. */
typedef void fz_emit_fn(fz *z, void *arg);

static void emit_streamed_twice(fz *z, range_fn *r, fz_emit_fn *emit, void *arg) {
  cg_module *cm = z->f->cm;
  LLVMBuilderRef b = cm->b;
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(cm->ctx, r->fn, "fz.done");
  LLVMBasicBlockRef plain = branch_on_alignment(z);
  emit(z, arg);
  LLVMBuildBr(b, join);
  LLVMPositionBuilderAtEnd(b, plain);
  emit(z, arg);
  LLVMBuildBr(b, join);
  LLVMPositionBuilderAtEnd(b, join);
  r->nontemporal = true;
}

/* A walk of n result elements in range function r (an fz_emit_fn's argument). */
typedef struct walk_args {
  range_fn *r;
  fz_walk w;
  int64_t n;
} walk_args;

static void walk_emit(fz *z, void *arg) {
  const walk_args *a = arg;
  if (a->w == FZ_WALK_FLAT)
    emit_flat(z, a->r, a->n);
  else if (a->w == FZ_WALK_ROWS)
    emit_rows(z, a->r);
  else
    emit_tiles(z, a->r);
}

/* ---- reductions ------------------------------------------------------------------------------- */

/* Whether the reducer is one binary op of its two parameters (applied directly, no call). */
static bool direct_reducer(const ir_instr *red) {
  const ir_computation *c = red->called[0];
  const ir_instr *root = c->root;
  return c->n_params == 2 && root->n_operands == 2 && ir_is_elementwise(root) &&
         ir_opcode_table[root->op].family == IR_FAM_BINARY && root->shape->et == red->shape->et &&
         root->operands[0]->op == IR_OP_PARAMETER && root->operands[1]->op == IR_OP_PARAMETER &&
         root->operands[0] != root->operands[1];
}

/* acc (op) v through the reducer: its root instruction applied directly when it is one binary
 * op of its two parameters, else a call of the reducer computation.  No reassociation flag is
 * set: the order of a reduction is the one emitted (lanes below), the same on every CPU. */
static LLVMValueRef combine(fz *z, const ir_instr *red, LLVMValueRef acc, LLVMValueRef v) {
  ir_computation *c = red->called[0];
  ir_instr *root = c->root;
  ir_etype et = red->shape->et;
  if (direct_reducer(red)) {
    bool swapped = root->operands[0]->attrs.u.parameter_number == 1;
    LLVMValueRef ops[2] = {swapped ? v : acc, swapped ? acc : v};
    return cg_elementwise_apply(z->f, root, ops);
  }
  /* A mixed-precision reducer (a bf16 reduce of an f32 add: shape/infer_reduce.c) computes in
   * its own types; the accumulator keeps the reduce's. */
  ir_etype pt = c->params[0]->shape->et, rt = root->shape->et;
  LLVMValueRef res[1];
  ir_etype ets[2] = {pt, pt};
  if (pt != et) {
    acc = cg_convert(z->f, acc, et, pt);
    v = cg_convert(z->f, v, et, pt);
  }
  cg_call_scalar(z->f, c, (LLVMValueRef[]){acc, v}, ets, 2, res, &rt, 1);
  return rt != et ? cg_convert(z->f, res[0], rt, et) : res[0];
}

/* ---- lanes: a fixed association for float sums and products ------------------------------------
 * A float add or multiply reduction over a row of n >= 2 * FZ_LANES elements folds element i
 * into lane (i mod FZ_LANES) of FZ_LANES partial accumulators, each starting at the reducer's
 * identity and folding its elements in order; then the lanes are combined pairwise (lane l with
 * lane l + w for w = FZ_LANES/2, ..., 1), and the initial value with lane 0 last.  The order
 * is written in the IR, with no reassociation flag, so every CPU and every optimization level
 * computes the same bits; the lane loop is independent across lanes, so LLVM vectorizes it at
 * the target's width (one 512-bit register per 16 f32 lanes, two 256-bit ones, four SSE). */
enum { FZ_LANES = 32 };

/* The identity of a reducer that takes lanes (a direct float add or multiply), else NULL. */
static LLVMValueRef lane_identity(cg_module *cm, const ir_instr *red) {
  ir_etype et = red->shape->et;
  if (!(et == IR_F16 || et == IR_BF16 || et == IR_F32 || et == IR_F64) || !direct_reducer(red))
    return NULL;
  LLVMTypeRef t = cg_compute_type(cm, et);
  switch (red->called[0]->root->op) {
  case IR_OP_ADD: return LLVMConstReal(t, -0.0); /* x + -0 = x for every x, -0 included */
  case IR_OP_MULTIPLY: return LLVMConstReal(t, 1.0);
  default: return NULL;
  }
}

/* A lane array for red, set to its identity, when red takes lanes over n elements; else NULL. */
static LLVMValueRef lanes_new(fz *z, const ir_instr *red, int64_t n) {
  cg_module *cm = z->f->cm;
  LLVMValueRef id = n >= 2 * FZ_LANES ? lane_identity(cm, red) : NULL;
  if (!id)
    return NULL;
  LLVMValueRef lanes = cg_entry_alloca(z->f, LLVMArrayType2(LLVMTypeOf(id), FZ_LANES), "lanes");
  LLVMValueRef vals[FZ_LANES];
  for (int l = 0; l < FZ_LANES; l++)
    vals[l] = id;
  LLVMBuildStore(cm->b, LLVMConstArray2(LLVMTypeOf(id), vals, FZ_LANES), lanes);
  return lanes;
}

static LLVMValueRef lane_ptr(cg_module *cm, LLVMValueRef lanes, LLVMValueRef l) {
  LLVMTypeRef at = LLVMGetAllocatedType(lanes);
  return LLVMBuildGEP2(cm->b, at, lanes, (LLVMValueRef[]){cg_i64(cm, 0), l}, 2, "");
}

/* The fold of red's lanes, pairwise, then the initial value in front: init (op) lanes. */
static LLVMValueRef lanes_end(fz *z, const ir_instr *red, LLVMValueRef lanes, LLVMValueRef init) {
  cg_module *cm = z->f->cm;
  LLVMTypeRef t = LLVMGetElementType(LLVMGetAllocatedType(lanes));
  LLVMValueRef v[FZ_LANES];
  for (int l = 0; l < FZ_LANES; l++)
    v[l] = LLVMBuildLoad2(cm->b, t, lane_ptr(cm, lanes, cg_i64(cm, l)), "lane");
  for (int w = FZ_LANES / 2; w >= 1; w /= 2)
    for (int l = 0; l < w; l++)
      v[l] = combine(z, red, v[l], v[l + w]);
  return combine(z, red, init, v[0]);
}

/* Runs body(ri, slot) for ri = lo .. lo + n - 1 in order (lo and n: i64 values), where
 * slot[k] (k < n_slots) is where accumulator k folds the element: its lane ((ri - lo) mod
 * FZ_LANES) when lanes[k], else acc[k] (may be NULL).  With lanes, the loop is chunks of
 * FZ_LANES (an inner loop over the lanes, which LLVM vectorizes) and a tail. */
typedef void lane_body(fz *z, LLVMValueRef ri, LLVMValueRef *slot, void *ctx);
static void lanes_span(fz *z, LLVMValueRef lo, LLVMValueRef n, int n_slots, LLVMValueRef *lanes, LLVMValueRef *acc,
                       lane_body *body, void *ctx, const char *name) {
  cg_module *cm = z->f->cm;
  LLVMBuilderRef b = cm->b;
  LLVMValueRef *slot = calloc((size_t)n_slots + 1, sizeof *slot);
  bool any = false;
  for (int k = 0; k < n_slots; k++)
    any |= lanes[k] != NULL;
  if (!any) {
    cg_loop ri = cg_loop_begin(z->f, n, name);
    z->gen++;
    memcpy(slot, acc, (size_t)n_slots * sizeof *slot);
    body(z, LLVMBuildAdd(b, lo, ri.i, ""), slot, ctx);
    cg_loop_end(z->f, &ri);
    free(slot);
    return;
  }
  LLVMValueRef chunks = LLVMBuildUDiv(b, n, cg_i64(cm, FZ_LANES), "");
  LLVMValueRef whole = LLVMBuildMul(b, chunks, cg_i64(cm, FZ_LANES), "");
  for (int part = 0; part < 2; part++) { /* the chunks, then the tail */
    cg_loop c = cg_loop_begin(z->f, part == 0 ? chunks : cg_i64(cm, 1), name);
    cg_loop l = cg_loop_begin(z->f, part == 0 ? cg_i64(cm, FZ_LANES) : LLVMBuildSub(b, n, whole, ""), "lane");
    z->gen++;
    LLVMValueRef first = part == 0 ? LLVMBuildMul(b, c.i, cg_i64(cm, FZ_LANES), "") : whole;
    LLVMValueRef ri = LLVMBuildAdd(b, lo, LLVMBuildAdd(b, first, l.i, ""), "");
    for (int k = 0; k < n_slots; k++)
      slot[k] = lanes[k] ? lane_ptr(cm, lanes[k], l.i) : acc[k];
    body(z, ri, slot, ctx);
    cg_loop_end(z->f, &l);
    cg_loop_end(z->f, &c);
  }
  free(slot);
}

/* lanes_span over ri = 0 .. n - 1 (n a constant). */
static void lanes_loop(fz *z, int64_t n, int n_slots, LLVMValueRef *lanes, LLVMValueRef *acc, lane_body *body,
                       void *ctx, const char *name) {
  lanes_span(z, cg_i64(z->f->cm, 0), cg_i64(z->f->cm, n), n_slots, lanes, acc, body, ctx, name);
}

/* Reduced dimensions as a bit set, kept and reduced dims in order. */
typedef struct red_dims {
  uint64_t reduced;
  int64_t kdims[64], rdims[64];
  int nk, nr;
  int64_t kcount, rcount;
} red_dims;

static void red_dims_of(const ir_instr *red, red_dims *d) {
  const ir_shape *s = red->operands[0]->shape;
  memset(d, 0, sizeof *d);
  for (int i = 0; i < red->attrs.dimensions.n; i++)
    d->reduced |= 1ull << red->attrs.dimensions.v[i];
  d->kcount = d->rcount = 1;
  for (int i = 0; i < s->rank; i++) {
    if (d->reduced >> i & 1) {
      d->rdims[d->nr++] = s->dims[i];
      d->rcount *= s->dims[i];
    } else {
      d->kdims[d->nk++] = s->dims[i];
      d->kcount *= s->dims[i];
    }
  }
}

/* The input multi-index from kept and reduced multi-indices. */
static LLVMValueRef *merge_index(const ir_shape *s, const red_dims *d, LLVMValueRef *k, LLVMValueRef *r) {
  LLVMValueRef *m = new_multi(s->rank);
  for (int i = 0, kk = 0, rr = 0; i < s->rank; i++)
    m[i] = (d->reduced >> i & 1) ? r[rr++] : k[kk++];
  return m;
}

/* Each reduce output's initial value (a scalar member or buffer). */
static LLVMValueRef init_value(fz *z, const ir_instr *red) {
  fz_index scalar = idx_local(z, red->operands[1]->shape, cg_i64(z->f->cm, 0), NULL);
  return value_at(z, red->operands[1], &scalar);
}

/* A small reduce member (fusion_inline_reduce_ok) at output index idx: the initial value,
 * then each of its few input elements in order, unrolled. */
static LLVMValueRef inline_reduce_value(fz *z, ir_instr *x, fz_index *idx) {
  cg_module *cm = z->f->cm;
  const ir_shape *in = x->operands[0]->shape;
  red_dims d;
  red_dims_of(x, &d);
  LLVMValueRef *km = idx_multi(z, idx), *rm = new_multi(d.nr);
  LLVMValueRef acc = init_value(z, x);
  for (int64_t r = 0; r < d.rcount; r++) {
    for (int i = d.nr - 1, rest = (int)r; i >= 0; i--) {
      rm[i] = cg_i64(cm, rest % d.rdims[i]);
      rest /= (int)d.rdims[i];
    }
    fz_index *ri = idx_from_multi(z, in, merge_index(in, &d, km, rm));
    acc = combine(z, x, acc, value_at(z, x->operands[0], ri));
    idx_free(ri);
  }
  free(rm);
  return acc;
}

/* ---- gather ------------------------------------------------------------------------------------
 * A gather alone is a loop kernel (cg_lower_fused_single) over its result's rows: each element
 * reads the operand at its slice's start (the index vector's components, clamped so that the
 * slice fits, XLA's rule) plus its offset -- the index rule is window.c's cg_gather_source,
 * which window.c's element loop (complex and dynamic shapes) shares -- without a division per
 * index; an embedding lookup's row (the minor dimension an offset dimension) is one run of the
 * operand, its start indices loaded once per row, and rows go to threads. */
bool cg_gather_loop_ok(const ir_instr *x) {
  return x->op == IR_OP_GATHER && x->n_operands == 2 && ir_etype_is_array(x->shape->et) && !x->shape->dyn &&
         !x->operands[0]->shape->dyn && !x->operands[1]->shape->dyn && x->shape->rank <= 64 &&
         x->operands[0]->shape->rank <= 64 && x->operands[1]->shape->rank <= 64 &&
         ir_etype_is_int(x->operands[1]->shape->et) && !ir_etype_is_complex(x->shape->et);
}

/* cg_gather_source's component: the indices operand's value, loaded or computed. */
typedef struct gather_arg {
  fz *z;
  ir_instr *x;
} gather_arg;

static LLVMValueRef fused_component(cg_function *f, int k, LLVMValueRef *ibatch, void *arg) {
  gather_arg *a = arg;
  ir_instr *ind = a->x->operands[1];
  const ir_shape *is = ind->shape;
  int64_t ivd = a->x->attrs.u.gather.index_vector_dim;
  LLVMValueRef *im = new_multi(is->rank);
  for (int e = 0, kb = 0; e < is->rank; e++)
    im[e] = e == ivd ? cg_i64(f->cm, k) : ibatch[kb++];
  fz_index *ii = idx_from_multi(a->z, is, im);
  LLVMValueRef v = LLVMBuildIntCast2(f->cm->b, value_at(a->z, ind, ii), f->cm->i64, ir_etype_is_signed(is->et), "start");
  idx_free(ii);
  return v;
}

static LLVMValueRef gather_value(fz *z, ir_instr *x, fz_index *idx) {
  const ir_instr *op = x->operands[0];
  LLVMValueRef *src = new_multi(op->shape->rank);
  gather_arg a = {z, x};
  cg_gather_source(z->f, x, idx_multi(z, idx), fused_component, &a, src);
  fz_index *at = idx_from_multi(z, op->shape, src);
  LLVMValueRef v = value_at(z, (ir_instr *)op, at);
  idx_free(at);
  return v;
}

/* ---- reduce-window ---------------------------------------------------------------------------
 * A single-input reduce-window of at most FZ_WINDOW_MAX window positions (pooling) runs alone
 * as a loop kernel (cg_lower_fused_single): each result element is its initial value folded
 * with its window's elements in window order, unrolled, each step rounded to the element type,
 * as window.c's loop does (a position in the padding or between dilated elements is skipped:
 * its load reads element 0 and a select keeps the accumulator; so an empty operand stays with
 * window.c).  The loop walks result rows, so a window that leaves the minor dimension alone
 * (NHWC pooling) reads runs of it and vectorizes; rows go to the threads. */
static int scan_dim(const ir_instr *x);

bool cg_reduce_window_loop_ok(const ir_instr *x) {
  if (x->op != IR_OP_REDUCE_WINDOW || x->n_operands != 2 || x->n_called != 1 || x->shape->et == IR_TUPLE ||
      !ir_etype_is_array(x->shape->et) || ir_etype_is_complex(x->shape->et) || x->shape->dyn ||
      x->operands[0]->shape->dyn || count_of(x->operands[0]->shape) <= 0)
    return false;
  const ir_window *w = &x->attrs.u.reduce_window.window;
  if (w->n != x->operands[0]->shape->rank)
    return false;
  int64_t count = 1;
  for (int d = 0; d < w->n; d++) {
    if (w->dims[d].size < 0 || w->dims[d].stride < 1 || w->dims[d].lhs_dilate < 1 || w->dims[d].rhs_dilate < 1)
      return false;
    count *= w->dims[d].size;
    if (count > FZ_WINDOW_MAX)
      return scan_dim(x) >= 0;
  }
  return true;
}

/* The dimension along which reduce-window x is a running fold (JAX's cumsum, cumprod, cummax):
 * its window spans the whole dimension, stride 1, padded by all but one element in front, so
 * result element i folds the operand's elements 0 .. i in order from the initial value; every
 * other dimension plain.  -1 when x is not one. */
static int scan_dim(const ir_instr *x) {
  const ir_window *w = &x->attrs.u.reduce_window.window;
  const ir_shape *s = x->operands[0]->shape;
  int found = -1;
  if (w->n != s->rank || !ir_shape_same_dims(s, x->shape))
    return -1;
  for (int d = 0; d < w->n; d++) {
    const ir_window_dim *wd = &w->dims[d];
    if (cg_window_dim_plain(wd))
      continue;
    if (found >= 0 || wd->size != s->dims[d] || wd->size < 2 || wd->stride != 1 || wd->pad_lo != wd->size - 1 ||
        wd->pad_hi != 0 || wd->lhs_dilate != 1 || wd->rhs_dilate != 1)
      return -1;
    found = d;
  }
  return found;
}

/* A running fold along dimension d of the operand (outer x n x inner in memory): a unit is an
 * outer index and a block of FZ_COLUMN_BLOCK inner ones; result element i is the fold of
 * element i - 1 (read back from the result) with operand element i, the first one the initial
 * value's fold with element 0: the same operations, in the same order, as the windowed fold
 * of elements 0 .. i, so the same bits, in n steps instead of n (n + 1) / 2.  Along the inner
 * block the folds are independent and vectorize. */
static void emit_scan(fz *z, range_fn *r, int d) {
  cg_module *cm = z->f->cm;
  LLVMBuilderRef b = cm->b;
  ir_instr *x = z->outs[0];
  const ir_shape *s = x->operands[0]->shape;
  ir_etype et = x->shape->et;
  int64_t n = s->dims[d], inner = 1;
  for (int i = d + 1; i < s->rank; i++)
    inner *= s->dims[i];
  int64_t blocks = (inner + FZ_COLUMN_BLOCK - 1) / FZ_COLUMN_BLOCK;
  cg_loop u = loop_from(z->f, r->begin, r->end, "scan.u");
  LLVMValueRef outer = LLVMBuildUDiv(b, u.i, cg_i64(cm, blocks), "");
  LLVMValueRef j0 = LLVMBuildMul(b, LLVMBuildURem(b, u.i, cg_i64(cm, blocks), ""), cg_i64(cm, FZ_COLUMN_BLOCK), "");
  LLVMValueRef j1 = min_i64(cm, LLVMBuildAdd(b, j0, cg_i64(cm, FZ_COLUMN_BLOCK), ""), cg_i64(cm, inner));
  LLVMValueRef base = LLVMBuildMul(b, outer, cg_i64(cm, n * inner), "");
  z->gen++;
  LLVMValueRef init = init_value(z, x);
  cg_loop i = cg_loop_begin(z->f, cg_i64(cm, n), "scan.i");
  LLVMValueRef row = LLVMBuildAdd(b, base, LLVMBuildMul(b, i.i, cg_i64(cm, inner), ""), "");
  LLVMValueRef first = LLVMBuildICmp(b, LLVMIntEQ, i.i, cg_i64(cm, 0), "");
  cg_loop j = loop_from(z->f, j0, j1, "scan.j");
  z->gen++;
  LLVMValueRef at = LLVMBuildAdd(b, row, j.i, "");
  fz_index idx = idx_local(z, s, at, NULL);
  LLVMValueRef prev_at = LLVMBuildSelect(b, first, at, LLVMBuildSub(b, at, cg_i64(cm, inner), ""), "");
  LLVMValueRef prev = LLVMBuildSelect(b, first, init, cg_load(z->f, et, z->out_ptr[0], prev_at), "");
  LLVMValueRef v = cg_round_to(z->f, et, combine(z, x, prev, value_at(z, x->operands[0], &idx)));
  free(idx.multi);
  cg_store(z->f, et, z->out_ptr[0], at, v);
  loop_end_from(z->f, &j, j0);
  cg_loop_end(z->f, &i);
  loop_end_from(z->f, &u, r->begin);
}

static LLVMValueRef reduce_window_value(fz *z, ir_instr *x, fz_index *idx) {
  cg_module *cm = z->f->cm;
  LLVMBuilderRef b = cm->b;
  const ir_shape *s = x->operands[0]->shape;
  const ir_window *w = &x->attrs.u.reduce_window.window;
  int rank = s->rank;
  LLVMValueRef *om = idx_multi(z, idx);
  fz_index scalar = idx_local(z, x->operands[1]->shape, cg_i64(cm, 0), NULL);
  LLVMValueRef acc = value_at(z, x->operands[1], &scalar);
  int64_t count = 1;
  for (int d = 0; d < rank; d++)
    count *= w->dims[d].size;
  for (int64_t p = 0; p < count; p++) {
    LLVMValueRef *im = new_multi(rank), ok = NULL;
    int64_t rest = p;
    for (int d = rank - 1; d >= 0; d--) { /* window position p, the last dimension fastest */
      const ir_window_dim *wd = &w->dims[d];
      int64_t at = rest % wd->size;
      rest /= wd->size;
      if (cg_window_dim_plain(wd)) {
        im[d] = om[d];
        continue;
      }
      LLVMValueRef in = cg_window_input(z->f, wd, s->dims[d], om[d], cg_i64(cm, at), &im[d]);
      ok = ok ? LLVMBuildAnd(b, ok, in, "") : in;
    }
    fz_index *ii = idx_from_multi(z, s, im);
    /* each step rounded to the element type, as the reducer computes it (bf16: kept in f32) */
    LLVMValueRef next = cg_round_to(z->f, x->shape->et, combine(z, x, acc, value_at(z, x->operands[0], ii)));
    idx_free(ii);
    acc = ok ? LLVMBuildSelect(b, ok, next, acc, "") : next;
  }
  return acc;
}

/* At input index idx: folds each reduce output's element into its accumulator (acc[k]: a slot,
 * or NULL for the result element at out_at), and stores every loop output there.  The
 * outputs of a multi-output fusion thus share one pass over the input and its loaded values. */
static void accumulate_outputs(fz *z, fz_index *idx, LLVMValueRef *acc, LLVMValueRef out_at) {
  LLVMBuilderRef b = z->f->cm->b;
  for (int k = 0; k < z->n_outs; k++) {
    ir_instr *o = z->outs[k];
    if (o->op != IR_OP_REDUCE)
      continue;
    LLVMValueRef v = value_at(z, o->operands[0], idx);
    ir_etype et = o->shape->et;
    LLVMValueRef a = acc[k] ? LLVMBuildLoad2(b, cg_compute_type(z->f->cm, et), acc[k], "a")
                            : cg_load(z->f, et, z->out_ptr[k], out_at);
    LLVMValueRef r = combine(z, o, a, v);
    if (acc[k])
      LLVMBuildStore(b, r, acc[k]);
    else
      cg_store(z->f, et, z->out_ptr[k], out_at, r);
  }
  store_outputs(z, idx);
}

/* Minor dimension reduced: outputs [begin, end), each a register accumulation (in lanes for
 * float sums and products).  The reduced elements of one output lie in runs of `run`
 * consecutive input elements (the reduced dimensions after the last kept one: a batch
 * norm's H x W of NCHW reduced over N, H and W); the walk goes run by run, each run's
 * elements read at a linear index (the multi-index of every element cost divisions and kept
 * the loop scalar).  Lanes take the element at index i of its run into lane i mod FZ_LANES,
 * runs in order: when the reduced dimensions are all minor, one run holds them all and that
 * is the row's lane order. */
typedef struct row_reduce_ctx {
  const red_dims *d;
  LLVMValueRef *km, *rm_outer, base;
  int n_outer; /* reduced dimensions outside the run */
} row_reduce_ctx;

static void row_reduce_body(fz *z, LLVMValueRef ri, LLVMValueRef *slot, void *ctx) {
  row_reduce_ctx *c = ctx;
  const ir_shape *s = z->root->operands[0]->shape;
  LLVMValueRef *rm = new_multi(c->d->nr);
  for (int i = 0; i < c->n_outer; i++)
    rm[i] = c->rm_outer[i];
  cg_unflatten(z->f, ri, c->d->rdims + c->n_outer, c->d->nr - c->n_outer, rm + c->n_outer);
  fz_index *idx = idx_from_multi(z, s, merge_index(s, c->d, c->km, rm));
  idx->lin = LLVMBuildAdd(z->f->cm->b, c->base, ri, "");
  free(rm);
  accumulate_outputs(z, idx, slot, NULL);
  idx_free(idx);
}

/* A row reduction walks runs: the reduced dimensions after the input's last kept one are one
 * contiguous run of *run elements at a linear index; returns how many reduced dimensions lie
 * outside the run (the outer ones, walked by a loop of rcount / run steps). */
static int run_split(const ir_shape *s, const red_dims *d, int64_t *run) {
  int n = 0;
  for (int i = s->rank - 1; i >= 0 && (d->reduced >> i & 1); i--)
    n++;
  *run = 1;
  for (int i = d->nr - n; i < d->nr; i++)
    *run *= d->rdims[i];
  return d->nr - n;
}

/* The parts a row reduction with few outputs is split into (0: none): each output's runs, or
 * when there are fewer runs than parts each run's elements, cut into that many pieces, each
 * reduced in its own lanes by one unit of work; then every output is its initial value and its
 * pieces' sums in order (emit_split_combine).  Fixed by the shape, so the bits do not depend on
 * the thread count; for one kernel output, a float sum or product (lanes) over enough
 * elements, in a kernel that can hold the partial sums (the caller's kernel has one output). */
static int row_parts(const cg_function *kf, const ir_instr *red, const red_dims *d) {
  ir_etype et = red->shape->et; /* partials in the element type: no rounding a half type would add */
  if (kf->owns_frame || !kf->frame_arg || d->kcount >= FZ_ROW_SPLIT_UNITS || !(et == IR_F32 || et == IR_F64) ||
      !lane_identity(kf->cm, red))
    return 0;
  int64_t parts = (FZ_ROW_SPLIT_UNITS + d->kcount - 1) / d->kcount, most = d->rcount / FZ_ROW_SPLIT_MIN;
  if (most < parts)
    parts = most;
  return parts >= 2 ? (int)parts : 0;
}

/* Where piece p of `parts` even pieces of [0, whole) starts (p = parts: whole), rounded down to
 * a multiple of step. */
static LLVMValueRef piece_bound(cg_module *cm, LLVMValueRef p, int64_t whole, int64_t parts, int64_t step) {
  LLVMBuilderRef b = cm->b;
  LLVMValueRef at = LLVMBuildUDiv(b, LLVMBuildMul(b, p, cg_i64(cm, whole), ""), cg_i64(cm, parts), "");
  LLVMValueRef down = LLVMBuildAnd(b, at, cg_i64(cm, -step), "");
  return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, at, cg_i64(cm, whole), ""), at, down, "");
}

/* parts: row_parts's count, each unit one piece of one output into its partial (at
 * piece * kcount + output); 0: a unit is one output, into the result. */
static void emit_row_reduce(fz *z, range_fn *r, const red_dims *d, int parts) {
  cg_module *cm = z->f->cm;
  LLVMBuilderRef b = cm->b;
  const ir_shape *s = z->root->operands[0]->shape;
  int64_t run;
  int n_outer = run_split(s, d, &run);
  int64_t runs = run ? d->rcount / run : 0, n_parts = parts ? parts : 1;
  LLVMValueRef *acc = calloc((size_t)z->n_outs + 1, sizeof *acc), *lanes = calloc((size_t)z->n_outs + 1, sizeof *lanes);
  for (int k = 0; k < z->n_outs; k++)
    if (z->outs[k]->op == IR_OP_REDUCE)
      acc[k] = cg_entry_alloca(z->f, cg_compute_type(cm, z->outs[k]->shape->et), "acc");
  cg_loop ko = loop_from(z->f, r->begin, r->end, "red.k");
  z->gen++;
  LLVMValueRef out = LLVMBuildUDiv(b, ko.i, cg_i64(cm, n_parts), ""), piece = LLVMBuildURem(b, ko.i, cg_i64(cm, n_parts), "");
  /* this unit's runs [run0, run1) and elements [e0, e1) of each */
  LLVMValueRef run0 = cg_i64(cm, 0), run1 = cg_i64(cm, runs), e0 = cg_i64(cm, 0), e1 = cg_i64(cm, run);
  LLVMValueRef next = LLVMBuildAdd(b, piece, cg_i64(cm, 1), "");
  if (parts && runs >= parts) {
    run0 = piece_bound(cm, piece, runs, parts, 1);
    run1 = piece_bound(cm, next, runs, parts, 1);
  } else if (parts) {
    e0 = piece_bound(cm, piece, run, parts, FZ_LANES);
    e1 = piece_bound(cm, next, run, parts, FZ_LANES);
  }
  for (int k = 0; k < z->n_outs; k++)
    lanes[k] = z->outs[k]->op == IR_OP_REDUCE ? lanes_new(z, z->outs[k], d->rcount) : NULL;
  for (int k = 0; k < z->n_outs; k++)
    if (acc[k] && !lanes[k])
      LLVMBuildStore(b, init_value(z, z->outs[k]), acc[k]);
  row_reduce_ctx c = {d, new_multi(d->nk), new_multi(d->nr), NULL, n_outer};
  cg_unflatten(z->f, out, d->kdims, d->nk, c.km);
  cg_loop ro = loop_from(z->f, run0, run1, "red.run");
  z->gen++;
  cg_unflatten(z->f, ro.i, d->rdims, n_outer, c.rm_outer);
  for (int i = n_outer; i < d->nr; i++)
    c.rm_outer[i] = cg_i64(cm, 0);
  fz_index *start = idx_from_multi(z, s, merge_index(s, d, c.km, c.rm_outer));
  c.base = idx_lin(z, start);
  idx_free(start);
  lanes_span(z, e0, LLVMBuildSub(b, e1, e0, ""), z->n_outs, lanes, acc, row_reduce_body, &c, "red.r");
  loop_end_from(z->f, &ro, run0);
  z->gen++;
  for (int k = 0; k < z->n_outs; k++)
    if (acc[k]) {
      ir_etype et = z->outs[k]->shape->et;
      if (parts) /* this piece's partial: its lanes folded, no initial value */
        cg_store(z->f, et, z->out_ptr[k],
                 LLVMBuildAdd(b, LLVMBuildMul(b, piece, cg_i64(cm, d->kcount), ""), out, ""),
                 lanes_end(z, z->outs[k], lanes[k], lane_identity(cm, z->outs[k])));
      else
        cg_store(z->f, et, z->out_ptr[k], ko.i,
                 lanes[k] ? lanes_end(z, z->outs[k], lanes[k], init_value(z, z->outs[k]))
                          : LLVMBuildLoad2(b, cg_compute_type(cm, et), acc[k], "a"));
    }
  free(c.km);
  free(c.rm_outer);
  free(acc);
  free(lanes);
  loop_end_from(z->f, &ko, r->begin);
}

/* Minor dimension kept: units are (outer kept index, block of the minor dimension); each
 * initializes its block of the result, then accumulates the reduced elements into it in the
 * input's order (every lane its own output, so no reassociation is needed). */
static void emit_column_reduce(fz *z, range_fn *r, const red_dims *d) {
  cg_module *cm = z->f->cm;
  LLVMBuilderRef b = cm->b;
  const ir_shape *s = z->root->operands[0]->shape;
  int64_t minor = d->kdims[d->nk - 1], blocks = (minor + FZ_COLUMN_BLOCK - 1) / FZ_COLUMN_BLOCK;
  cg_loop u = loop_from(z->f, r->begin, r->end, "red.u");
  LLVMValueRef outer = LLVMBuildUDiv(b, u.i, cg_i64(cm, blocks), "");
  LLVMValueRef j0 = LLVMBuildMul(b, LLVMBuildURem(b, u.i, cg_i64(cm, blocks), ""), cg_i64(cm, FZ_COLUMN_BLOCK), "");
  LLVMValueRef j1 = min_i64(cm, LLVMBuildAdd(b, j0, cg_i64(cm, FZ_COLUMN_BLOCK), ""), cg_i64(cm, minor));
  LLVMValueRef *km = new_multi(d->nk);
  cg_unflatten(z->f, outer, d->kdims, d->nk - 1, km);
  LLVMValueRef obase = LLVMBuildMul(b, outer, cg_i64(cm, minor), "");
  z->gen++;
  LLVMValueRef *init = calloc((size_t)z->n_outs + 1, sizeof *init), *acc = calloc((size_t)z->n_outs + 1, sizeof *acc);
  for (int k = 0; k < z->n_outs; k++)
    if (z->outs[k]->op == IR_OP_REDUCE)
      init[k] = init_value(z, z->outs[k]);
  cg_loop ji = loop_from(z->f, j0, j1, "red.init");
  for (int k = 0; k < z->n_outs; k++)
    if (init[k])
      cg_store(z->f, z->outs[k]->shape->et, z->out_ptr[k], LLVMBuildAdd(b, obase, ji.i, ""), init[k]);
  loop_end_from(z->f, &ji, j0);
  cg_loop ri = cg_loop_begin(z->f, cg_i64(cm, d->rcount), "red.r");
  LLVMValueRef *rm = new_multi(d->nr);
  cg_unflatten(z->f, ri.i, d->rdims, d->nr, rm);
  cg_loop jj = loop_from(z->f, j0, j1, "red.j");
  km[d->nk - 1] = jj.i;
  fz_index *idx = idx_from_multi(z, s, merge_index(s, d, km, rm));
  z->gen++;
  accumulate_outputs(z, idx, acc, LLVMBuildAdd(b, obase, jj.i, ""));
  idx_free(idx);
  loop_end_from(z->f, &jj, j0);
  free(rm);
  cg_loop_end(z->f, &ri);
  free(km);
  free(init);
  free(acc);
  loop_end_from(z->f, &u, r->begin);
}

/* Kept minor dimension narrower than a vector (the 3 components of an N-body sum, out[i, c] =
 * sum_j f(i, j, c)), one float-sum or product output: a unit is an outer kept index, and its
 * `width` outputs fold in as many lane arrays in one lane loop over the reduced elements, the
 * element expression emitted once per output side by side.  LLVM merges what does not depend
 * on the output (f's part of (i, j) alone, computed once instead of `width` times) and the
 * outputs' reads strided by `width` form whole interleave groups, so the loop vectorizes along
 * the reduced dimension; the column walk would run a `width`-long inner loop, scalar.  Same
 * association as every lane reduction (FZ_LANES lanes, fixed order). */
/* The kept minor width emit_narrow_reduce takes for the kernel's one reduce output (2 to
 * FZ_MIN_COLUMN_WIDTH - 1, a float sum or product over enough elements for lanes), else 0. */
static int narrow_width(const fz *z, const red_dims *d) {
  if (z->n_outs != 1 || d->nk == 0 || d->rcount < 2 * FZ_LANES || !lane_identity(z->f->cm, z->outs[0]))
    return 0;
  int64_t w = d->kdims[d->nk - 1];
  return w >= 2 && w < FZ_MIN_COLUMN_WIDTH ? (int)w : 0;
}

typedef struct narrow_ctx {
  const red_dims *d;
  LLVMValueRef *km;
  int width;
} narrow_ctx;

static void narrow_body(fz *z, LLVMValueRef ri, LLVMValueRef *slot, void *ctx) {
  narrow_ctx *c = ctx;
  cg_module *cm = z->f->cm;
  const ir_instr *red = z->outs[0];
  const ir_shape *s = red->operands[0]->shape;
  LLVMValueRef *rm = new_multi(c->d->nr);
  cg_unflatten(z->f, ri, c->d->rdims, c->d->nr, rm);
  for (int w = 0; w < c->width; w++) {
    c->km[c->d->nk - 1] = cg_i64(cm, w);
    fz_index *idx = idx_from_multi(z, s, merge_index(s, c->d, c->km, rm));
    LLVMValueRef v = value_at(z, red->operands[0], idx);
    LLVMValueRef a = LLVMBuildLoad2(cm->b, cg_compute_type(cm, red->shape->et), slot[w], "a");
    LLVMBuildStore(cm->b, combine(z, red, a, v), slot[w]);
    idx_free(idx);
  }
  free(rm);
}

static void emit_narrow_reduce(fz *z, range_fn *r, const red_dims *d, int width) {
  cg_module *cm = z->f->cm;
  const ir_instr *red = z->outs[0];
  LLVMValueRef lanes[FZ_MIN_COLUMN_WIDTH], acc[FZ_MIN_COLUMN_WIDTH] = {0};
  cg_loop ko = loop_from(z->f, r->begin, r->end, "red.k");
  z->gen++;
  for (int w = 0; w < width; w++)
    lanes[w] = lanes_new(z, red, d->rcount);
  narrow_ctx c = {d, new_multi(d->nk), width};
  cg_unflatten(z->f, ko.i, d->kdims, d->nk - 1, c.km);
  lanes_loop(z, d->rcount, width, lanes, acc, narrow_body, &c, "red.r");
  z->gen++;
  LLVMValueRef base = LLVMBuildMul(cm->b, ko.i, cg_i64(cm, width), "");
  for (int w = 0; w < width; w++)
    cg_store(z->f, red->shape->et, z->out_ptr[0], LLVMBuildAdd(cm->b, base, cg_i64(cm, w), ""),
             lanes_end(z, red, lanes[w], init_value(z, red)));
  free(c.km);
  loop_end_from(z->f, &ko, r->begin);
}

/* A column reduction split over its reduced rows: when the reduced dimensions are the outer
 * ones (the input is `rows` x `kept` in memory, kept small) and the reducer is one associative
 * operation, unit p sums its block of rows, each row read front to back, into partial p of
 * `parts`; then the partials are combined, in order, after the initial value.  Every thread
 * streams whole rows instead of strips of them, as a row reduction does; float add and
 * multiply are reassociated as the row reduction's accumulators already are. */
static int split_parts(const cg_function *kf, const ir_instr *red, const red_dims *d) {
  if (red->n_operands != 2 || kf->owns_frame || !kf->frame_arg || d->nr == 0 || d->nk == 0 ||
      d->reduced != (1ull << d->nr) - 1 || d->rcount < 4 * FZ_SPLIT_PARTS ||
      d->rcount * d->kcount < FZ_PARALLEL_MIN_ELEMENTS)
    return 0;
  int64_t elem = 0;
  const ir_shape *s = red->shape;
  if (!ir_shape_byte_size(s, &elem) || elem > FZ_SPLIT_MAX_KEPT_BYTES)
    return 0;
  const ir_computation *c = red->called[0];
  const ir_instr *root = c->root;
  bool binary = c->n_params == 2 && root && root->n_operands == 2 && root->shape->et == s->et &&
                root->operands[0]->op == IR_OP_PARAMETER && root->operands[1]->op == IR_OP_PARAMETER &&
                root->operands[0] != root->operands[1];
  bool assoc = root && (root->op == IR_OP_ADD || root->op == IR_OP_MULTIPLY || root->op == IR_OP_MAXIMUM ||
                        root->op == IR_OP_MINIMUM || root->op == IR_OP_AND || root->op == IR_OP_OR);
  return binary && assoc ? FZ_SPLIT_PARTS : 0;
}

/* The input element at reduced row `row` (a linear index over the reduced dimensions) and kept
 * index `k`: the input is rows x kept in memory.  km: the kept multi-index of k, or NULL
 * (then known only for one kept dimension). */
static LLVMValueRef split_element(fz *z, const red_dims *d, LLVMValueRef row, LLVMValueRef k, LLVMValueRef *km) {
  cg_module *cm = z->f->cm;
  ir_instr *input = z->root->operands[0];
  LLVMValueRef *multi = NULL;
  if (d->nk == 1 || km) {
    multi = new_multi(d->nr + d->nk);
    cg_unflatten(z->f, row, d->rdims, d->nr, multi);
    for (int i = 0; i < d->nk; i++)
      multi[d->nr + i] = km ? km[i] : k;
  }
  LLVMValueRef lin = LLVMBuildAdd(cm->b, LLVMBuildMul(cm->b, row, cg_i64(cm, d->kcount), ""), k, "");
  fz_index idx = idx_local(z, input->shape, lin, multi);
  z->gen++;
  LLVMValueRef v = value_at(z, input, &idx);
  free(multi);
  return v;
}

/* for g in [0, n_groups): partial[k] (+)= rows lo+g*group .. lo+g*group+group-1 at k, the group
 * combined first (so the partial is loaded and stored once per group); `first` stores the
 * group's value instead. */
static void emit_split_rows(fz *z, const red_dims *d, LLVMValueRef parts, LLVMValueRef pbase, LLVMValueRef lo,
                            LLVMValueRef n_groups, int group, bool first) {
  cg_module *cm = z->f->cm;
  LLVMBuilderRef b = cm->b;
  const ir_instr *red = z->root;
  ir_etype et = red->shape->et;
  /* A kept minor dimension narrower than a vector (x[j, c] with c < 3): the loop walks the
   * outer kept index and does the `width` minor elements side by side, each with its kept
   * multi-index known (no division per element), so the loop vectorizes along j. */
  int64_t minor = d->kdims[d->nk - 1];
  int width = d->nk >= 2 && minor >= 2 && minor < FZ_MIN_COLUMN_WIDTH ? (int)minor : 1;
  cg_loop gi = cg_loop_begin(z->f, n_groups, "split.g");
  LLVMValueRef row0 = LLVMBuildAdd(b, lo, LLVMBuildMul(b, gi.i, cg_i64(cm, group), ""), "");
  cg_loop kj = cg_loop_begin(z->f, cg_i64(cm, d->kcount / width), "split.k");
  LLVMValueRef *km = width > 1 ? new_multi(d->nk) : NULL;
  if (km)
    cg_unflatten(z->f, kj.i, d->kdims, d->nk - 1, km);
  for (int w = 0; w < width; w++) {
    LLVMValueRef k = width > 1 ? LLVMBuildAdd(b, LLVMBuildMul(b, kj.i, cg_i64(cm, width), ""), cg_i64(cm, w), "") : kj.i;
    if (km)
      km[d->nk - 1] = cg_i64(cm, w);
    LLVMValueRef v = split_element(z, d, row0, k, km);
    for (int g = 1; g < group; g++)
      v = combine(z, red, v, split_element(z, d, LLVMBuildAdd(b, row0, cg_i64(cm, g), ""), k, km));
    LLVMValueRef at = LLVMBuildAdd(b, pbase, k, "");
    if (!first)
      v = combine(z, red, cg_load(z->f, et, parts, at), v);
    cg_store(z->f, et, parts, at, v);
  }
  free(km);
  cg_loop_end(z->f, &kj);
  cg_loop_end(z->f, &gi);
}

/* The range function's part: unit p reduces rows [rcount*p/P, rcount*(p+1)/P) into partial p:
 * its first row, then groups of FZ_SPLIT_GROUP rows, then the rows left over one by one. */
static void emit_split_reduce(fz *z, range_fn *r, LLVMValueRef parts, const red_dims *d, int n_parts) {
  cg_module *cm = z->f->cm;
  LLVMBuilderRef b = cm->b;
  cg_loop u = loop_from(z->f, r->begin, r->end, "split.u");
  LLVMValueRef r0 = LLVMBuildUDiv(b, LLVMBuildMul(b, u.i, cg_i64(cm, d->rcount), ""), cg_i64(cm, n_parts), "");
  LLVMValueRef r1 = LLVMBuildUDiv(b, LLVMBuildMul(b, LLVMBuildAdd(b, u.i, cg_i64(cm, 1), ""), cg_i64(cm, d->rcount), ""),
                                  cg_i64(cm, n_parts), "");
  LLVMValueRef pbase = LLVMBuildMul(b, u.i, cg_i64(cm, d->kcount), "");
  emit_split_rows(z, d, parts, pbase, r0, cg_i64(cm, 1), 1, true);
  LLVMValueRef lo = LLVMBuildAdd(b, r0, cg_i64(cm, 1), "");
  LLVMValueRef left = LLVMBuildSub(b, r1, lo, "");
  LLVMValueRef groups = LLVMBuildUDiv(b, left, cg_i64(cm, FZ_SPLIT_GROUP), "");
  emit_split_rows(z, d, parts, pbase, lo, groups, FZ_SPLIT_GROUP, false);
  LLVMValueRef rest = LLVMBuildAdd(b, lo, LLVMBuildMul(b, groups, cg_i64(cm, FZ_SPLIT_GROUP), ""), "");
  emit_split_rows(z, d, parts, pbase, rest, LLVMBuildSub(b, r1, rest, ""), 1, false);
  loop_end_from(z->f, &u, r->begin);
}

/* Back in the kernel, after the units ran: out = init (+) partial 0 (+) ... (+) partial P-1. */
static void emit_split_combine(cg_function *kf, fz *z, const fz_buffers *bufs, LLVMValueRef parts, LLVMValueRef out,
                               const red_dims *d, int n_parts) {
  cg_module *cm = kf->cm;
  const ir_instr *red = z->root;
  ir_etype et = red->shape->et;
  cg_function *inner = z->f;
  z->f = kf;
  for (int k = 0; k < bufs->n; k++) /* the kernel's own pointers, not the range function's */
    z->buffer[bufs->insts[k]->id] = bufs->ptrs[k];
  z->gen++;
  fz_index scalar = idx_local(z, red->operands[1]->shape, cg_i64(cm, 0), NULL);
  LLVMValueRef init = value_at(z, red->operands[1], &scalar);
  cg_loop kj = cg_loop_begin(kf, cg_i64(cm, d->kcount), "split.out");
  LLVMValueRef acc = init;
  for (int p = 0; p < n_parts; p++) {
    LLVMValueRef at = LLVMBuildAdd(cm->b, kj.i, cg_i64(cm, p * d->kcount), "");
    acc = combine(z, red, acc, cg_load(kf, et, parts, at));
  }
  cg_store(kf, et, out, kj.i, acc);
  cg_loop_end(kf, &kj);
  z->f = inner;
}

/* Row fusion (fusion.c): per row of the root, each reduce member (a reduction of the minor
 * dimension) runs over the row first, in order, into a register slot; then the row of the
 * root is computed, reading those slots.  The row stays in cache between the passes. */
/* ---- the row stash: what a later pass of a row fusion reads again -------------------------------
 * A row fusion makes one pass over the row per reduce member, then one that stores the outputs
 * (softmax: the max, the sum of exp(x - max), then exp(x - max) / sum).  An expensive
 * elementwise member that a later pass reads again at the row's own index (exp(x - max)
 * above) is computed once: the first pass that reads it stores its row into an array on the
 * range function's stack, and later passes load it from there.  What is stored is the value
 * computed, so the results keep their bits. */
enum {
  FZ_STASH_MIN_COST = 8,         /* element_cost worth a store and a load per element */
  FZ_STASH_MAX_BYTES = 64 << 10, /* all stashed rows of one kernel (per thread, on its stack) */
  FZ_STASH_MAX_INSTRS = 4096,    /* larger fusions are not searched */
};

/* Whether x broadcasts a value that does not vary along the minor dimension of its result
 * (a loop over that dimension computes it once per row: LLVM hoists it). */
static bool per_row_broadcast(const ir_instr *x) {
  if (x->op != IR_OP_BROADCAST || x->shape->rank == 0)
    return false;
  for (int k = 0; k < x->attrs.dimensions.n; k++)
    if (x->attrs.dimensions.v[k] == x->shape->rank - 1)
      return false;
  return true;
}

/* A rough cost per element of computing x from what it loads: 16 per transcendental op, 8 per
 * division or remainder, 1 per other elementwise op; reduce members (a loaded row value) and
 * non-members cost nothing, and, when `rows` (a loop whose inner loop runs along the minor
 * dimension), so does a per-row broadcast value.  Counts up to `limit`; *visits bounds the
 * walk. */
static int element_cost(const fz *z, const ir_instr *x, int limit, bool rows, int *visits) {
  if (!z->member[x->id] || x->op == IR_OP_REDUCE || (rows && per_row_broadcast(x)) || --*visits < 0)
    return 0;
  int c = 0;
  if (ir_is_elementwise(x))
    c = (ir_opcode_table[x->op].flags & OPF_TRANSCENDENTAL) ? 16
        : x->op == IR_OP_DIVIDE || x->op == IR_OP_REMAINDER ? 8
                                                            : 1;
  for (int k = 0; k < x->n_operands && c < limit; k++)
    c += element_cost(z, x->operands[k], limit, rows, visits);
  return c;
}

/* Marks in seen what x reads (x included), through members other than reduces and the
 * instructions `stop` marks. */
static void mark_reads(const fz *z, const ir_instr *x, const bool *stop, bool *seen) {
  if (!z->member[x->id] || seen[x->id])
    return;
  seen[x->id] = true;
  if (x->op == IR_OP_REDUCE || (stop && stop[x->id]))
    return;
  for (int k = 0; k < x->n_operands; k++)
    mark_reads(z, x->operands[k], stop, seen);
}

/* The members pass p reads (pass p < n_reds: reduce reds[p]'s operand; n_reds: the outputs),
 * through neither reduces nor `stop`. */
static void pass_reads(const fz *z, ir_instr *const *reds, int n_reds, int p, const bool *stop, bool *seen) {
  memset(seen, 0, (size_t)z->comp->n_instrs * sizeof *seen);
  if (p < n_reds)
    mark_reads(z, reds[p]->operands[0], stop, seen);
  else
    for (int k = 0; k < z->n_outs; k++)
      mark_reads(z, z->outs[k], stop, seen);
}

/* Chooses what to stash and where: z->stash[id] (an array of the row's length) for each
 * elementwise member of the row's shape that costs at least FZ_STASH_MIN_COST and that a pass
 * after the first one reading it (first[id], set here) still reads, through what is already
 * chosen; users are chosen before their operands, so exp(x - max) / s keeps the quotient and
 * not the exponential as well. */
static void plan_stash(fz *z, const ir_shape *row_shape, ir_instr *const *reds, int n_reds, int *first) {
  int n = z->comp->n_instrs;
  if (n_reds == 0 || n > FZ_STASH_MAX_INSTRS)
    return;
  bool *seen = calloc((size_t)n + 1, sizeof *seen), *chosen = calloc((size_t)n + 1, sizeof *chosen);
  for (int i = 0; i < n; i++)
    first[i] = -1;
  for (int p = n_reds; p >= 0; p--) {
    pass_reads(z, reds, n_reds, p, NULL, seen);
    for (int i = 0; i < n; i++)
      if (seen[i])
        first[i] = p;
  }
  int64_t row = row_shape->dims[row_shape->rank - 1], bytes = 0;
  for (int i = n - 1; i >= 0; i--) {
    ir_instr *x = z->comp->instrs[i];
    int visits = 256;
    if (!z->member[i] || !ir_is_elementwise(x) || first[i] < 0 || first[i] == n_reds ||
        !ir_shape_same_dims(x->shape, row_shape) || !ir_shape_same_dims(x->shape, reds[first[i]]->operands[0]->shape) ||
        element_cost(z, x, FZ_STASH_MIN_COST, false, &visits) < FZ_STASH_MIN_COST)
      continue;
    ir_etype et = x->shape->et;
    if (et == IR_C64 || et == IR_C128 || et == IR_TOKEN || et == IR_TUPLE)
      continue;
    int64_t size = row * 8; /* a scalar's compute type holds at most 8 bytes */
    bool again = false;
    for (int p = first[i] + 1; p <= n_reds && !again; p++) {
      pass_reads(z, reds, n_reds, p, chosen, seen);
      again = seen[i];
    }
    if (!again || bytes + size > FZ_STASH_MAX_BYTES)
      continue;
    chosen[i] = true;
    bytes += size;
    LLVMTypeRef t = cg_compute_type(z->f->cm, et);
    z->stash[i] = cg_entry_alloca(z->f, LLVMArrayType2(t, (uint64_t)row), "stash");
    LLVMSetAlignment(z->stash[i], 64);
  }
  free(seen);
  free(chosen);
}

/* In pass p, at the row's own index idx (position j): stores the values that pass p is the
 * first to read into their stash. */
static void stash_store(fz *z, const int *first, int p, fz_index *idx, LLVMValueRef j) {
  if (!z->stash)
    return;
  z->row_serial = idx->serial;
  z->row_j = j;
  for (int i = 0; i < z->comp->n_instrs; i++)
    if (z->stash[i] && first[i] == p) {
      ir_instr *x = z->comp->instrs[i];
      cg_module *cm = z->f->cm;
      LLVMTypeRef t = cg_compute_type(cm, x->shape->et);
      LLVMValueRef v = value_at(z, x, idx);
      LLVMBuildStore(cm->b, v, LLVMBuildGEP2(cm->b, t, z->stash[i], &j, 1, ""));
    }
}

typedef struct row_fusion_ctx {
  const ir_instr *red;
  LLVMValueRef *m, base;
  int rank;
  int pass;          /* which reduce member's pass */
  const int *first;  /* by id: the first pass that reads it (plan_stash) */
} row_fusion_ctx;

static void row_fusion_body(fz *z, LLVMValueRef j, LLVMValueRef *slot, void *ctx) {
  row_fusion_ctx *c = ctx;
  LLVMBuilderRef b = z->f->cm->b;
  LLVMValueRef *mm = new_multi(c->rank);
  memcpy(mm, c->m, (size_t)c->rank * sizeof *mm);
  mm[c->rank - 1] = j;
  fz_index idx = idx_local(z, c->red->operands[0]->shape, LLVMBuildAdd(b, c->base, j, ""), mm);
  z->gen++;
  stash_store(z, c->first, c->pass, &idx, j);
  LLVMValueRef v = value_at(z, c->red->operands[0], &idx);
  LLVMTypeRef t = cg_compute_type(z->f->cm, c->red->shape->et);
  LLVMBuildStore(b, combine(z, c->red, LLVMBuildLoad2(b, t, slot[0], "a"), v), slot[0]);
  free(mm);
}

/* A row fusion's last pass: the outputs of row m (its first element at base), n elements. */
typedef struct row_out_args {
  LLVMValueRef *m, base;
  int64_t n;
} row_out_args;

static void row_outputs_emit(fz *z, void *arg) {
  const row_out_args *a = arg;
  LLVMValueRef *m = a->m, base = a->base;
  int64_t n = a->n;
  cg_module *cm = z->f->cm;
  const ir_shape *s = z->root->shape;
  int rank = s->rank;
  cg_loop j = cg_loop_begin(z->f, cg_i64(cm, n), "row.out");
  LLVMValueRef *mm = new_multi(rank);
  memcpy(mm, m, (size_t)rank * sizeof *mm);
  mm[rank - 1] = j.i;
  fz_index idx = idx_local(z, s, LLVMBuildAdd(cm->b, base, j.i, ""), mm);
  z->gen++;
  z->row_serial = idx.serial;
  z->row_j = j.i;
  store_outputs(z, &idx);
  free(mm);
  cg_loop_end(z->f, &j);
}

/* stream: the result is written with non-temporal stores where it is aligned (streams_result). */
static void emit_row_fusion(fz *z, range_fn *r, bool stream) {
  cg_module *cm = z->f->cm;
  LLVMBuilderRef b = cm->b;
  const ir_shape *s = z->root->shape;
  int rank = s->rank;
  int64_t n = s->dims[rank - 1];
  int n_instrs = z->comp->n_instrs, n_reds = 0;
  z->row_value = calloc((size_t)n_instrs + 1, sizeof *z->row_value);
  z->stash = calloc((size_t)n_instrs + 1, sizeof *z->stash);
  z->stash_ready = calloc((size_t)n_instrs + 1, sizeof *z->stash_ready);
  ir_instr **reds = calloc((size_t)n_instrs + 1, sizeof *reds);
  int *first = calloc((size_t)n_instrs + 1, sizeof *first);
  for (int i = 0; i < n_instrs; i++)
    if (z->member[i] && z->comp->instrs[i]->op == IR_OP_REDUCE && !inline_member(z, z->comp->instrs[i]))
      reds[n_reds++] = z->comp->instrs[i];
  plan_stash(z, s, reds, n_reds, first);
  cg_loop rows = loop_from(z->f, r->begin, r->end, "row");
  LLVMValueRef *m = new_multi(rank);
  cg_unflatten(z->f, rows.i, s->dims, rank - 1, m);
  LLVMValueRef base = LLVMBuildMul(b, rows.i, cg_i64(cm, n), "");
  for (int p = 0; p < n_reds; p++) {
    ir_instr *red = reds[p];
    LLVMTypeRef t = cg_compute_type(cm, red->shape->et);
    LLVMValueRef acc = cg_entry_alloca(z->f, t, "row.acc");
    LLVMValueRef lanes = lanes_new(z, red, n);
    z->gen++;
    fz_index scalar = idx_local(z, red->operands[1]->shape, cg_i64(cm, 0), NULL);
    LLVMBuildStore(b, value_at(z, red->operands[1], &scalar), acc);
    row_fusion_ctx c = {red, m, base, rank, p, first};
    lanes_loop(z, n, 1, &lanes, &acc, row_fusion_body, &c, "row.red");
    if (lanes)
      LLVMBuildStore(b, lanes_end(z, red, lanes, LLVMBuildLoad2(b, t, acc, "init")), acc);
    z->row_value[red->id] = acc;
    for (int i = 0; i < n_instrs; i++) /* later passes load what this one stored */
      z->stash_ready[i] |= z->stash[i] && first[i] == p;
  }
  row_out_args out = {m, base, n};
  if (stream) /* the output pass twice: non-temporal where the result is aligned */
    emit_streamed_twice(z, r, row_outputs_emit, &out);
  else
    row_outputs_emit(z, &out);
  free(m);
  free(reds);
  free(first);
  loop_end_from(z->f, &rows, r->begin);
}

static bool has_reduce_member(const fz *z) {
  for (int i = 0; i < z->comp->n_instrs; i++)
    if (z->member[i] && z->comp->instrs[i]->op == IR_OP_REDUCE && z->comp->instrs[i] != z->root &&
        !inline_member(z, z->comp->instrs[i]))
      return true;
  return false;
}

/* ---- entry points --------------------------------------------------------------------------------- */

/* The output whose loop a kernel runs: the first reduce, else the first output. */
static ir_instr *hero_of(ir_instr *const *outs, int n) {
  for (int k = 0; k < n; k++)
    if (outs[k]->op == IR_OP_REDUCE)
      return outs[k];
  return outs[0];
}

/* Emits one loop computing the n_outs outputs (in comp, members marked) into a range function
 * of kf, writing output k to outp[k], reading the non-members from `bufs`. */
static void emit_kernel(cg_function *kf, ir_computation *comp, ir_instr *const *outs, int n_outs, const bool *member,
                        const fz_buffers *bufs, const LLVMValueRef *outp) {
  cg_module *cm = kf->cm;
  const ir_instr *root = hero_of(outs, n_outs);
  char name[600];
  snprintf(name, sizeof name, "hlo.loop.%s.%s", kf->comp->name.p, root->name.p);
  red_dims d;
  int n_parts = 0;
  LLVMValueRef parts = NULL;
  bool minor_kept = false;
  if (root->op == IR_OP_REDUCE) {
    red_dims_of(root, &d);
    const ir_shape *s = root->operands[0]->shape;
    minor_kept = s->rank > 0 && !(d.reduced >> (s->rank - 1) & 1) && d.nk > 0;
    n_parts = n_outs != 1 ? 0 : minor_kept ? split_parts(kf, root, &d) : row_parts(kf, root, &d);
    int64_t bytes = 0;
    if (n_parts && ir_shape_byte_size(root->shape, &bytes))
      parts = cg_kernel_scratch(kf, bytes * n_parts, root);
    n_parts = parts ? n_parts : 0;
  }
  LLVMValueRef argv = pack_args(kf, bufs, parts ? &parts : outp, n_outs);
  range_fn r;
  range_open(&r, kf, name, comp->n_instrs, bufs->n + n_outs);
  fz z;
  fz_init(&z, &r.rf, comp, root);
  z.outs = outs;
  z.n_outs = n_outs;
  memcpy(z.member, member, (size_t)comp->n_instrs * sizeof *member);
  bind_buffers(&z, &r, bufs);
  int64_t units, elements;
  if (root->op == IR_OP_REDUCE) {
    const ir_shape *s = root->operands[0]->shape;
    elements = count_of(s);
    if (n_parts && minor_kept) {
      units = n_parts;
      emit_split_reduce(&z, &r, z.out_ptr[0], &d, n_parts);
    } else if (minor_kept && narrow_width(&z, &d)) {
      int width = narrow_width(&z, &d);
      units = d.kcount / width;
      emit_narrow_reduce(&z, &r, &d, width);
    } else if (minor_kept) {
      int64_t minor = d.kdims[d.nk - 1];
      units = minor ? d.kcount / minor * ((minor + FZ_COLUMN_BLOCK - 1) / FZ_COLUMN_BLOCK) : 0;
      emit_column_reduce(&z, &r, &d);
    } else {
      units = d.kcount * (n_parts ? n_parts : 1);
      emit_row_reduce(&z, &r, &d, n_parts);
    }
  } else if (root->op == IR_OP_REDUCE_WINDOW && n_outs == 1 && scan_dim(root) >= 0) {
    const ir_shape *s = root->operands[0]->shape;
    int sd = scan_dim(root);
    int64_t inner = 1;
    for (int i = sd + 1; i < s->rank; i++)
      inner *= s->dims[i];
    elements = count_of(s);
    units = s->dims[sd] && inner ? elements / s->dims[sd] / inner * ((inner + FZ_COLUMN_BLOCK - 1) / FZ_COLUMN_BLOCK) : 0;
    emit_scan(&z, &r, sd);
  } else {
    const ir_shape *s = root->shape;
    elements = count_of(s);
    if (has_reduce_member(&z)) {
      units = s->dims[s->rank - 1] ? elements / s->dims[s->rank - 1] : 0;
      emit_row_fusion(&z, &r, streams_result(&z, bufs, FZ_WALK_ROWS)); /* its last pass walks rows */
    } else {
      fz_walk w = s->rank <= 1 || flat(&z) ? FZ_WALK_FLAT : transposes_minor(&z) ? FZ_WALK_TILES : FZ_WALK_ROWS;
      if (w == FZ_WALK_TILES)
        tile_view(&z);
      if (w == FZ_WALK_FLAT)
        units = (elements + FZ_FLAT_CHUNK - 1) / FZ_FLAT_CHUNK;
      else if (w == FZ_WALK_TILES)
        units = tile_units(&z.view);
      else
        units = s->dims[s->rank - 1] ? elements / s->dims[s->rank - 1] : 0;
      walk_args walk = {&r, w, elements};
      if (streams_result(&z, bufs, w))
        emit_streamed_twice(&z, &r, walk_emit, &walk);
      else
        walk_emit(&z, &walk);
    }
  }
  range_close_and_run(&r, kf, argv, units, elements);
  if (n_parts)
    emit_split_combine(kf, &z, bufs, parts, outp[0], &d, n_parts);
  fz_deinit(&z);
  (void)cm;
}

/* A kOutput fusion's producer: the dot or convolution of c (its operands parameters). */
static ir_instr *output_producer(const ir_computation *c) {
  for (int i = 0; i < c->n_instrs; i++)
    if (c->instrs[i]->op == IR_OP_DOT || c->instrs[i]->op == IR_OP_CONVOLUTION)
      return c->instrs[i];
  return NULL;
}

/* Computes a kOutput fusion's producer into `out`: its lowering (GEMM, convolution) runs with
 * the fused computation's parameters bound to the fusion's operand buffers.  epi (with its
 * argument array argv), when not NULL: the epilogue the GEMM runs on each finished part
 * (output_epilogue; the producer then passed cg_dot_gemm_epilogue_ok). */
static void lower_output_producer(cg_function *kf, ir_instr *in, ir_instr *producer, LLVMValueRef out,
                                  LLVMValueRef epi, LLVMValueRef argv) {
  ir_computation *c = in->called[0];
  cg_value *outer = kf->values, *inner = calloc((size_t)c->n_instrs + 1, sizeof *inner);
  if (!inner) {
    cg_fail(kf->cm, in, "out of memory");
    return;
  }
  for (int p = 0; p < c->n_params; p++)
    inner[c->params[p]->id] = outer[in->operands[p]->id];
  kf->values = inner;
  kf->fusion_call = in;
  if (epi)
    cg_dot_gemm_epilogue(kf, producer, out, epi, argv);
  else if (producer->op == IR_OP_DOT)
    cg_lower_dot(kf, producer, out);
  else
    cg_lower_convolution(kf, producer, out);
  kf->values = outer;
  kf->fusion_call = NULL;
  free(inner);
}

/* The outputs of fused computation c: its root, or the elements of its root tuple (a
 * multi-output fusion); NULL unless each is an array computed in c (no parameter, no tuple). */
static ir_instr **fusion_outputs(const ir_computation *c, int *n) {
  const ir_instr *root = c->root;
  bool multi = root->op == IR_OP_TUPLE;
  *n = multi ? root->n_operands : 1;
  if (*n == 0 || (!multi && root->shape->et == IR_TUPLE))
    return NULL;
  ir_instr **outs = malloc((size_t)*n * sizeof *outs);
  for (int k = 0; outs && k < *n; k++) {
    outs[k] = multi ? root->operands[k] : c->root;
    if (outs[k]->op == IR_OP_PARAMETER || outs[k]->shape->et == IR_TUPLE || !fusion_member_ok(outs[k])) {
      free(outs);
      return NULL;
    }
  }
  return outs;
}

/* The epilogue body: result elements [begin, end) (linear), each computed from the producer's
 * value already in the result at the same index and written back in place. */
static void emit_span(fz *z, range_fn *r) {
  cg_loop l = loop_from(z->f, r->begin, r->end, "fz.e");
  fz_index idx = idx_local(z, z->root->shape, l.i, NULL);
  z->gen++;
  store_outputs(z, &idx);
  free(idx.multi);
  loop_end_from(z->f, &l, r->begin);
}

/* A kOutput fusion whose producer is a dot the GEMM kernel takes with an epilogue: the
 * fusion's elementwise tail becomes a range function over result elements that the kernel
 * runs on each part of the result as soon as it is final (while it is in cache), instead of
 * a second pass over the whole result.  False, emitting nothing, for other fusions (a
 * convolution, a dot with offset tables or conversions, a row-reduce member). */
static bool output_epilogue(cg_function *kf, ir_instr *in, ir_instr *producer, const bool *member,
                            const fz_buffers *bufs, LLVMValueRef out) {
  ir_computation *c = in->called[0];
  if (producer->op != IR_OP_DOT || !cg_dot_gemm_epilogue_ok(producer))
    return false;
  for (int i = 0; i < c->n_instrs; i++)
    if (member[i] && c->instrs[i]->op == IR_OP_REDUCE)
      return false;
  char name[600];
  snprintf(name, sizeof name, "hlo.epilogue.%s.%s", kf->comp->name.p, c->root->name.p);
  LLVMValueRef argv = pack_args(kf, bufs, &out, 1);
  range_fn r;
  range_open(&r, kf, name, c->n_instrs, bufs->n + 1);
  fz z;
  fz_init(&z, &r.rf, c, c->root);
  ir_instr *root = c->root;
  z.outs = &root;
  z.n_outs = 1;
  memcpy(z.member, member, (size_t)c->n_instrs * sizeof *member);
  bind_buffers(&z, &r, bufs);
  emit_span(&z, &r);
  fz_deinit(&z);
  lower_output_producer(kf, in, producer, out, range_close(&r, kf), argv);
  return true;
}

/* Kernel body for a fusion instruction writing the buffers outp (one per output): the fused
 * computation's parameters are the kernel's operands. */
static void fusion_body(cg_function *kf, ir_instr *in, const LLVMValueRef *outp) {
  ir_computation *c = in->called[0];
  int n_outs;
  ir_instr **outs = fusion_outputs(c, &n_outs);
  bool *member = calloc((size_t)c->n_instrs + 1, sizeof *member);
  fz_buffers bufs = {calloc((size_t)c->n_params + 1, sizeof(ir_instr *)), calloc((size_t)c->n_params + 1, sizeof(LLVMValueRef)), 0, NULL};
  for (int i = 0; i < c->n_instrs; i++)
    member[i] = c->instrs[i]->op != IR_OP_PARAMETER;
  for (int p = 0; p < c->n_params; p++) {
    bufs.insts[bufs.n] = c->params[p];
    bufs.ptrs[bufs.n++] = kf->values[in->operands[p]->id].leaves[0];
  }
  ir_instr *producer = n_outs == 1 ? output_producer(c) : NULL;
  bool done = false;
  if (producer) {
    member[producer->id] = false;
    bufs.in_out = producer;
    done = output_epilogue(kf, in, producer, member, &bufs, outp[0]);
    if (!done)
      lower_output_producer(kf, in, producer, outp[0], NULL, NULL);
  } else if (kf->in_place == in) { /* the result took over this parameter's buffer (module.c) */
    bufs.in_out = c->params[kf->in_place_operand];
  }
  if (!done)
    emit_kernel(kf, c, outs, n_outs, member, &bufs, outp);
  free(outs);
  free(member);
  free(bufs.insts);
  free(bufs.ptrs);
}

static void fusion_kernel(cg_function *kf, ir_instr *in, LLVMValueRef out) { fusion_body(kf, in, &out); }

/* A multi-output fusion: its value is one buffer per tuple element, which the kernel writes. */
static void multi_fusion_value(cg_function *kf, ir_instr *in) {
  cg_value v = cg_result_value(kf, in);
  fusion_body(kf, in, v.leaves);
  kf->values[in->id] = v;
}

/* Kernel body for one instruction alone: its operands are the buffers. */
static void single_kernel(cg_function *kf, ir_instr *in, LLVMValueRef out) {
  ir_computation *c = kf->comp;
  bool *member = calloc((size_t)c->n_instrs + 1, sizeof *member);
  fz_buffers bufs = {calloc((size_t)in->n_operands + 1, sizeof(ir_instr *)), calloc((size_t)in->n_operands + 1, sizeof(LLVMValueRef)), 0, NULL};
  member[in->id] = true;
  for (int k = 0; k < in->n_operands; k++) {
    bool seen = false;
    for (int j = 0; j < bufs.n; j++)
      seen |= bufs.insts[j] == in->operands[k];
    if (seen)
      continue;
    bufs.insts[bufs.n] = in->operands[k];
    bufs.ptrs[bufs.n++] = kf->values[in->operands[k]->id].leaves[0];
  }
  if (kf->in_place == in) /* the result took over this operand's buffer (module.c) */
    bufs.in_out = in->operands[kf->in_place_operand];
  emit_kernel(kf, c, &in, 1, member, &bufs, &out);
  free(member);
  free(bufs.insts);
  free(bufs.ptrs);
}

/* ---- select-and-scatter ---------------------------------------------------------------------
 * Max-pool's gradient: the result starts as the initial value; each source element, in
 * row-major order, selects one element of its window of the operand (the first in window
 * order, replaced by each later one that select(current, later) rejects; positions in the
 * padding skipped) and folds itself into the result there through the scatter computation.
 * The leading dimensions that the window leaves alone (size 1, stride 1, no padding or
 * dilation: N of NHWC, N and C of NCHW) split the work: the windows of one leading index read
 * and write only that index's part of the operand and result, so each unit fills its part and
 * runs its source elements in order, every result element receiving its sources in the
 * order window.c's single loop gives them (the same bits).  The window is unrolled (at most
 * FZ_WINDOW_MAX positions), the source walked by nested loops (no division per element). */
static bool sas_window_ok(const ir_instr *x, int *lead) {
  if (x->op != IR_OP_SELECT_AND_SCATTER || x->n_operands != 3 || x->n_called != 2)
    return false;
  const ir_window *w = &x->attrs.u.reduce_window.window;
  const ir_shape *s = x->operands[0]->shape;
  if (!ir_etype_is_array(s->et) || count_of(s) <= 0 || /* its loads are unconditional, masked by selects */
      ir_etype_is_complex(s->et) || s->dyn || x->operands[1]->shape->dyn || w->n != s->rank || s->rank > 64 ||
      !ir_shape_same_dims(s, x->shape))
    return false;
  int64_t count = 1;
  *lead = 0;
  bool leading = true;
  for (int d = 0; d < w->n; d++) {
    const ir_window_dim *wd = &w->dims[d];
    if (wd->size < 1 || wd->stride < 1 || wd->lhs_dilate != 1 || wd->rhs_dilate < 1)
      return false;
    leading = leading && cg_window_dim_plain(wd);
    *lead += leading;
    count *= wd->size;
    if (count > FZ_WINDOW_MAX)
      return false;
  }
  return true;
}

/* Where a row of select-and-scatter's sources (om[rank - 1] left out) reads and writes when
 * its windows lie inside the operand: source minor index c's window position p is operand
 * (and result) element base + c * step + off[p], its source element sbase + c. */
typedef struct sas_row {
  LLVMValueRef base, sbase;
  int64_t step, count, *off;
} sas_row;

static sas_row sas_row_of(cg_function *rf, const ir_instr *in, LLVMValueRef *om) {
  cg_module *cm = rf->cm;
  LLVMBuilderRef b = cm->b;
  const ir_shape *s = in->operands[0]->shape, *ss = in->operands[1]->shape;
  const ir_window *w = &in->attrs.u.reduce_window.window;
  int rank = s->rank;
  sas_row r = {.count = 1, .step = w->dims[rank - 1].stride};
  int64_t stride[64];
  for (int d = rank - 1, st = 1; d >= 0; d--) {
    stride[d] = st;
    st *= s->dims[d];
    r.count *= w->dims[d].size;
  }
  LLVMValueRef ii[64], sm[64];
  for (int d = 0; d < rank - 1; d++) {
    const ir_window_dim *wd = &w->dims[d];
    ii[d] = cg_window_dim_plain(wd) ? om[d]
                                    : LLVMBuildSub(b, LLVMBuildMul(b, om[d], cg_i64(cm, wd->stride), ""), cg_i64(cm, wd->pad_lo), "");
    sm[d] = om[d];
  }
  ii[rank - 1] = cg_i64(cm, -w->dims[rank - 1].pad_lo);
  sm[rank - 1] = cg_i64(cm, 0);
  r.base = cg_flatten(rf, ii, s->dims, rank);
  r.sbase = cg_flatten(rf, sm, ss->dims, rank);
  r.off = calloc((size_t)r.count, sizeof *r.off);
  for (int64_t p = 0; p < r.count; p++)
    for (int64_t d = rank - 1, q = p; d >= 0; d--) {
      r.off[p] += q % w->dims[d].size * w->dims[d].rhs_dilate * stride[d];
      q /= w->dims[d].size;
    }
  return r;
}

/* The position source c of row r selects (the first in window order, replaced by each later
 * one that the select computation rejects), as a number, without branches; the window's
 * first operand element is at `at`. */
static LLVMValueRef sas_row_choice(cg_function *rf, ir_instr *in, const sas_row *r, LLVMValueRef op, LLVMValueRef at) {
  cg_module *cm = rf->cm;
  LLVMBuilderRef b = cm->b;
  ir_etype et = in->operands[0]->shape->et, pt = IR_PRED, pair[2] = {et, et};
  LLVMValueRef cur = NULL, chosen = LLVMConstInt(cm->i32, 0, 0);
  for (int64_t p = 0; p < r->count; p++) {
    LLVMValueRef cand = cg_load(rf, et, op, LLVMBuildAdd(b, at, cg_i64(cm, r->off[p]), "")), keep;
    if (!cur) {
      cur = cand;
      continue;
    }
    cg_call_scalar(rf, in->called[0], (LLVMValueRef[]){cur, cand}, pair, 2, &keep, &pt, 1);
    cur = LLVMBuildSelect(b, keep, cur, cand, "");
    chosen = LLVMBuildSelect(b, keep, chosen, LLVMConstInt(cm->i32, (unsigned long long)p, 0), "");
  }
  return chosen;
}

/* Sources [c0, c1) of a row whose windows lie inside the operand, along a plain minor
 * dimension (NHWC's channels): every position's result element is rewritten, with the
 * scatter's value where chosen and its own value elsewhere: no branch and no data-dependent
 * address, so LLVM vectorizes the loop along c (the lanes' windows are disjoint).  Each
 * result element receives its sources in row-major source order. */
static void sas_row_plain(cg_function *rf, ir_instr *in, const sas_row *r, LLVMValueRef op, LLVMValueRef src,
                          LLVMValueRef res, int64_t c0, int64_t c1) {
  cg_module *cm = rf->cm;
  LLVMBuilderRef b = cm->b;
  ir_etype et = in->operands[0]->shape->et, pair[2] = {et, et};
  cg_loop c = loop_from(rf, cg_i64(cm, c0), cg_i64(cm, c1), "sas.c");
  LLVMValueRef row = LLVMBuildAdd(b, r->base, LLVMBuildMul(b, c.i, cg_i64(cm, r->step), ""), "");
  LLVMValueRef chosen = sas_row_choice(rf, in, r, op, row);
  LLVMValueRef sv = cg_load(rf, et, src, LLVMBuildAdd(b, r->sbase, c.i, ""));
  for (int64_t p = 0; p < r->count; p++) {
    LLVMValueRef at = LLVMBuildAdd(b, row, cg_i64(cm, r->off[p]), ""), old = cg_load(rf, et, res, at), sum;
    cg_call_scalar(rf, in->called[1], (LLVMValueRef[]){old, sv}, pair, 2, &sum, &et, 1);
    LLVMValueRef here = LLVMBuildICmp(b, LLVMIntEQ, chosen, LLVMConstInt(cm->i32, (unsigned long long)p, 0), "");
    cg_store(rf, et, res, at, LLVMBuildSelect(b, here, sum, old, ""));
  }
  loop_end_from(rf, &c, cg_i64(cm, c0));
}

/* Chunk of sources whose choices sas_row_windowed keeps at once. */
enum { SAS_CHUNK = 64 };

/* Sources [c0, c1) of a row whose windows lie inside the operand, along a windowed minor
 * dimension (NCHW's width), where neighbouring sources' windows overlap: per chunk of
 * SAS_CHUNK sources, first every source's choice into a stack array (no branch, no store to
 * the result: LLVM vectorizes it along c), then in source order each source folds itself into
 * its chosen element (one load and store at an address looked up by the choice). */
static void sas_row_windowed(cg_function *rf, ir_instr *in, const sas_row *r, LLVMValueRef op, LLVMValueRef src,
                             LLVMValueRef res, int64_t c0, int64_t c1) {
  cg_module *cm = rf->cm;
  LLVMBuilderRef b = cm->b;
  ir_etype et = in->operands[0]->shape->et, pair[2] = {et, et};
  LLVMValueRef choice = cg_entry_alloca(rf, LLVMArrayType2(cm->i32, SAS_CHUNK), "sas.choice");
  LLVMValueRef *offs = malloc((size_t)r->count * sizeof *offs);
  for (int64_t p = 0; p < r->count; p++)
    offs[p] = cg_i64(cm, r->off[p]);
  LLVMValueRef table = cg_const_global(cm, LLVMConstArray2(cm->i64, offs, (uint64_t)r->count), "sas.offsets");
  free(offs);
  int64_t chunks = (c1 - c0 + SAS_CHUNK - 1) / SAS_CHUNK;
  cg_loop k = cg_loop_begin(rf, cg_i64(cm, chunks), "sas.chunk");
  LLVMValueRef first = LLVMBuildAdd(b, cg_i64(cm, c0), LLVMBuildMul(b, k.i, cg_i64(cm, SAS_CHUNK), ""), "");
  LLVMValueRef n = min_i64(cm, cg_i64(cm, SAS_CHUNK), LLVMBuildSub(b, cg_i64(cm, c1), first, ""));
  cg_loop j = cg_loop_begin(rf, n, "sas.choose");
  LLVMValueRef c = LLVMBuildAdd(b, first, j.i, "");
  LLVMValueRef row = LLVMBuildAdd(b, r->base, LLVMBuildMul(b, c, cg_i64(cm, r->step), ""), "");
  LLVMBuildStore(b, sas_row_choice(rf, in, r, op, row),
                 LLVMBuildGEP2(b, cm->i32, choice, &j.i, 1, ""));
  cg_loop_end(rf, &j);
  cg_loop t = cg_loop_begin(rf, n, "sas.scatter");
  c = LLVMBuildAdd(b, first, t.i, "");
  LLVMValueRef ch = LLVMBuildZExt(b, LLVMBuildLoad2(b, cm->i32, LLVMBuildGEP2(b, cm->i32, choice, &t.i, 1, ""), ""),
                                  cm->i64, "");
  LLVMValueRef off = LLVMBuildLoad2(b, cm->i64, LLVMBuildGEP2(b, cm->i64, table, &ch, 1, ""), "off");
  LLVMValueRef at = LLVMBuildAdd(b, LLVMBuildAdd(b, r->base, LLVMBuildMul(b, c, cg_i64(cm, r->step), ""), ""), off, "");
  LLVMValueRef sv = cg_load(rf, et, src, LLVMBuildAdd(b, r->sbase, c, "")), sum;
  cg_call_scalar(rf, in->called[1], (LLVMValueRef[]){cg_load(rf, et, res, at), sv}, pair, 2, &sum, &et, 1);
  cg_store(rf, et, res, at, sum);
  cg_loop_end(rf, &t);
  cg_loop_end(rf, &k);
}

/* Sources [c0, c1) of the row om whose windows lie inside the operand. */
static void sas_row_inside(cg_function *rf, ir_instr *in, LLVMValueRef op, LLVMValueRef src, LLVMValueRef res,
                           LLVMValueRef *om, int64_t c0, int64_t c1) {
  if (c0 >= c1)
    return;
  sas_row r = sas_row_of(rf, in, om);
  const ir_window *w = &in->attrs.u.reduce_window.window;
  if (cg_window_dim_plain(&w->dims[in->operands[0]->shape->rank - 1]))
    sas_row_plain(rf, in, &r, op, src, res, c0, c1);
  else
    sas_row_windowed(rf, in, &r, op, src, res, c0, c1);
  free(r.off);
}

/* The source minor indices [*c0, *c1) whose windows lie inside the operand's minor dimension
 * of size n (all of them for a plain dimension). */
static void sas_inside_columns(const ir_window_dim *wd, int64_t n, int64_t sources, int64_t *c0, int64_t *c1) {
  int64_t reach = (wd->size - 1) * wd->rhs_dilate; /* the last position's offset */
  *c0 = wd->pad_lo <= 0 ? 0 : (wd->pad_lo + wd->stride - 1) / wd->stride;
  *c1 = n - 1 - reach + wd->pad_lo < 0 ? 0 : (n - 1 - reach + wd->pad_lo) / wd->stride + 1;
  *c1 = *c1 > sources ? sources : *c1;
  *c0 = *c0 > *c1 ? *c1 : *c0;
}

/* cg_sas_element for source minor indices [c0, c1) of the row om. */
static void sas_columns(cg_function *rf, ir_instr *in, LLVMValueRef op, LLVMValueRef src, LLVMValueRef res,
                        LLVMValueRef *om, int64_t c0, int64_t c1) {
  if (c0 >= c1)
    return;
  cg_loop c = loop_from(rf, cg_i64(rf->cm, c0), cg_i64(rf->cm, c1), "sas.c");
  om[in->operands[0]->shape->rank - 1] = c.i;
  cg_sas_element(rf, in, op, src, res, om);
  loop_end_from(rf, &c, cg_i64(rf->cm, c0));
}

static void sas_value(cg_function *kf, ir_instr *in, LLVMValueRef out) {
  cg_module *cm = kf->cm;
  LLVMBuilderRef b = cm->b;
  const ir_shape *s = in->operands[0]->shape, *ss = in->operands[1]->shape;
  const ir_window *w = &in->attrs.u.reduce_window.window;
  ir_etype et = s->et;
  int rank = s->rank, lead = 0;
  sas_window_ok(in, &lead);
  int64_t units = 1, part = 1;
  for (int d = 0; d < rank; d++)
    if (d < lead)
      units *= s->dims[d];
    else
      part *= s->dims[d];
  /* rows of the minor dimension (NHWC's channels, NCHW's width) take sas_row_inside where
   * their windows lie inside the operand */
  bool rows = lead < rank;
  fz_buffers bufs = {NULL, calloc(4, sizeof(LLVMValueRef)), 3, NULL};
  for (int k = 0; k < 3; k++)
    bufs.ptrs[k] = kf->values[in->operands[k]->id].leaves[0];
  LLVMValueRef argv = pack_args(kf, &bufs, &out, 1);
  char name[600];
  snprintf(name, sizeof name, "hlo.loop.%s.%s", kf->comp->name.p, in->name.p);
  range_fn r;
  range_open(&r, kf, name, kf->comp->n_instrs, 4);
  cg_function *rf = &r.rf;
  LLVMValueRef op = range_arg(&r, 1), src = range_arg(&r, 2), res = range_arg(&r, 4);
  LLVMValueRef iv = cg_load(rf, et, range_arg(&r, 3), cg_i64(cm, 0));
  cg_loop u = loop_from(rf, r.begin, r.end, "sas.u");
  LLVMValueRef obase = LLVMBuildMul(b, u.i, cg_i64(cm, part), "");
  cg_loop fill = cg_loop_begin(rf, cg_i64(cm, part), "sas.fill");
  cg_store(rf, et, res, LLVMBuildAdd(b, obase, fill.i, ""), iv);
  cg_loop_end(rf, &fill);
  LLVMValueRef om[64];
  cg_unflatten(rf, u.i, s->dims, lead, om);
  cg_loop loops[64];
  int last = rows ? rank - 1 : rank; /* dimensions walked by loops here */
  for (int d = lead; d < last; d++) {
    loops[d] = cg_loop_begin(rf, cg_i64(cm, ss->dims[d]), "sas.d");
    om[d] = loops[d].i;
  }
  if (!rows) {
    cg_sas_element(rf, in, op, src, res, om);
  } else {
    /* every window position of this row inside the operand? */
    LLVMValueRef inside = LLVMConstInt(cm->i1, 1, 0), dummy;
    for (int d = lead; d < rank - 1; d++) {
      const ir_window_dim *wd = &w->dims[d];
      if (cg_window_dim_plain(wd))
        continue;
      inside = LLVMBuildAnd(b, inside, cg_window_input(rf, wd, s->dims[d], om[d], cg_i64(cm, 0), &dummy), "");
      inside = LLVMBuildAnd(b, inside, cg_window_input(rf, wd, s->dims[d], om[d], cg_i64(cm, wd->size - 1), &dummy), "");
    }
    LLVMBasicBlockRef fast = LLVMAppendBasicBlockInContext(cm->ctx, rf->fn, "sas.inside");
    LLVMBasicBlockRef edge = LLVMAppendBasicBlockInContext(cm->ctx, rf->fn, "sas.edge");
    LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(cm->ctx, rf->fn, "sas.row.done");
    int64_t c0, c1, n_src = ss->dims[rank - 1];
    sas_inside_columns(&w->dims[rank - 1], s->dims[rank - 1], n_src, &c0, &c1);
    LLVMBuildCondBr(b, inside, fast, edge);
    LLVMPositionBuilderAtEnd(b, fast); /* in source order: edge columns, inside ones, edge ones */
    sas_columns(rf, in, op, src, res, om, 0, c0);
    sas_row_inside(rf, in, op, src, res, om, c0, c1);
    sas_columns(rf, in, op, src, res, om, c1, n_src);
    LLVMBuildBr(b, join);
    LLVMPositionBuilderAtEnd(b, edge);
    sas_columns(rf, in, op, src, res, om, 0, n_src);
    LLVMBuildBr(b, join);
    LLVMPositionBuilderAtEnd(b, join);
  }
  for (int d = last - 1; d >= lead; d--)
    cg_loop_end(rf, &loops[d]);
  loop_end_from(rf, &u, r.begin);
  range_close_and_run(&r, kf, argv, units, count_of(s));
  free(bufs.ptrs);
}

bool cg_select_and_scatter_loop_ok(const ir_instr *x) {
  int lead;
  return sas_window_ok(x, &lead);
}

/* ---- variadic reduce --------------------------------------------------------------------------
 * A reduce of several inputs (argmax: values and their indices) whose minor dimension is
 * reduced, alone: a loop kernel over its outputs, split over threads, each output folding its
 * elements in index order through the reducer (called with the accumulators and the elements,
 * every input read at one linear index: the runs of emit_row_reduce).  No lanes within an
 * output: interleaved lanes need the reducer commutative, and JAX's argmax keeps the first of
 * two NaNs (its reducer picks its first argument), which a lane tree would not.  Instead
 * FZ_VARIADIC_CHAINS outputs fold side by side, each in its own order: one output's fold is a
 * chain of dependent compares and selects (about 5 cycles per element on an AMD Zen 3), and
 * independent chains overlap.  Four, not eight: LLVM's SLP vectorizer turns eight chains into
 * vectors whose elements are loaded one insert at a time, no faster than one chain. */
enum { FZ_VARIADIC_MAX = FUSION_VARIADIC_MAX, FZ_VARIADIC_CHAINS = 4 };

/* The variadic reduce `in` computes (itself, or the root of a fusion whose other members are
 * iotas with its inputs' dimensions: fusion.c's), else NULL. */
static const ir_instr *variadic_reduce_of(const ir_instr *in) {
  if (in->op != IR_OP_FUSION)
    return fusion_variadic_reduce_ok(in) ? in : NULL;
  const ir_computation *c = in->n_called == 1 ? in->called[0] : NULL;
  if (!c || !c->root || !fusion_variadic_reduce_ok(c->root))
    return NULL;
  for (int i = 0; i < c->n_instrs; i++) {
    const ir_instr *x = c->instrs[i];
    if (x != c->root && x->op != IR_OP_PARAMETER &&
        (x->op != IR_OP_IOTA || !ir_shape_same_dims(x->shape, c->root->operands[0]->shape)))
      return NULL;
  }
  return c->root;
}

/* Input x of a variadic reduce, an iota, at the element e of a run whose first element's
 * multi-index is start (n_run: the dimensions the run walks, the minor ones). */
static LLVMValueRef variadic_iota(cg_function *rf, const ir_instr *x, LLVMValueRef *start, int n_run, LLVMValueRef e) {
  cg_module *cm = rf->cm;
  LLVMBuilderRef b = cm->b;
  const ir_shape *s = x->shape;
  int id = (int)x->attrs.u.iota_dimension;
  LLVMValueRef k = start[id];
  if (id >= s->rank - n_run) { /* walked by the run: e's digit for dimension id */
    int64_t inner = 1;
    for (int i = id + 1; i < s->rank; i++)
      inner *= s->dims[i];
    k = id == s->rank - n_run && inner == 1 ? e : LLVMBuildURem(b, LLVMBuildUDiv(b, e, cg_i64(cm, inner), ""), cg_i64(cm, s->dims[id]), "");
  }
  return cg_convert(rf, k, IR_S64, s->et);
}

/* The outputs first .. first + chains - 1 of variadic reduce `in` (range function r: inputs at
 * arguments 1 .. n, initial values n + 1 .. 2n, results 2n + 1 .. 3n), folded side by side;
 * an iota input (inside a fusion) is computed, not loaded. */
static void variadic_chains(range_fn *r, const ir_instr *in, const red_dims *d, LLVMValueRef first, int chains) {
  cg_function *rf = &r->rf;
  cg_module *cm = rf->cm;
  LLVMBuilderRef b = cm->b;
  int n = in->n_operands / 2;
  const ir_shape *s = in->operands[0]->shape;
  ir_etype ets[2 * FZ_VARIADIC_MAX];
  LLVMValueRef acc[FZ_VARIADIC_CHAINS][FZ_VARIADIC_MAX], base[FZ_VARIADIC_CHAINS], *start[FZ_VARIADIC_CHAINS];
  LLVMValueRef vals[2 * FZ_VARIADIC_MAX], res[FZ_VARIADIC_MAX];
  for (int i = 0; i < n; i++)
    ets[i] = ets[n + i] = in->operands[i]->shape->et;
  for (int c = 0; c < chains; c++)
    for (int i = 0; i < n; i++) {
      acc[c][i] = cg_entry_alloca(rf, cg_compute_type(cm, ets[i]), "acc");
      LLVMBuildStore(b, cg_load(rf, ets[i], range_arg(r, 1 + n + i), cg_i64(cm, 0)), acc[c][i]);
    }
  int64_t run;
  int n_outer = run_split(s, d, &run);
  LLVMValueRef *km = new_multi(d->nk), *rm = new_multi(d->nr);
  /* runs in index order */
  cg_loop ro = cg_loop_begin(rf, cg_i64(cm, run ? d->rcount / run : 0), "vr.run");
  cg_unflatten(rf, ro.i, d->rdims, n_outer, rm);
  for (int i = n_outer; i < d->nr; i++)
    rm[i] = cg_i64(cm, 0);
  for (int c = 0; c < chains; c++) {
    cg_unflatten(rf, LLVMBuildAdd(b, first, cg_i64(cm, c), ""), d->kdims, d->nk, km);
    start[c] = merge_index(s, d, km, rm);
    base[c] = cg_flatten(rf, start[c], s->dims, s->rank);
  }
  cg_loop e = cg_loop_begin(rf, cg_i64(cm, run), "vr.e");
  for (int c = 0; c < chains; c++) {
    LLVMValueRef at = LLVMBuildAdd(b, base[c], e.i, "");
    for (int i = 0; i < n; i++) {
      vals[i] = LLVMBuildLoad2(b, cg_compute_type(cm, ets[i]), acc[c][i], "a");
      const ir_instr *x = in->operands[i];
      vals[n + i] = x->op == IR_OP_IOTA ? variadic_iota(rf, x, start[c], d->nr - n_outer, e.i)
                                        : cg_load(rf, ets[i], range_arg(r, 1 + i), at);
    }
    cg_call_scalar(rf, in->called[0], vals, ets, 2 * n, res, ets, n);
    for (int i = 0; i < n; i++)
      LLVMBuildStore(b, res[i], acc[c][i]);
  }
  cg_loop_end(rf, &e);
  cg_loop_end(rf, &ro);
  for (int c = 0; c < chains; c++)
    free(start[c]);
  for (int c = 0; c < chains; c++)
    for (int i = 0; i < n; i++)
      cg_store(rf, ets[i], range_arg(r, 1 + 2 * n + i), LLVMBuildAdd(b, first, cg_i64(cm, c), ""),
               LLVMBuildLoad2(b, cg_compute_type(cm, ets[i]), acc[c][i], "a"));
  free(km);
  free(rm);
}

/* Variadic reduce `in`, or a fusion of one and its iota inputs (variadic_reduce_of). */
static void variadic_reduce_value(cg_function *kf, ir_instr *in) {
  cg_module *cm = kf->cm;
  LLVMBuilderRef b = cm->b;
  const ir_instr *red = variadic_reduce_of(in);
  int n = red->n_operands / 2;
  const ir_shape *s = red->operands[0]->shape;
  cg_value v = cg_result_value(kf, in);
  red_dims d;
  red_dims_of(red, &d);
  fz_buffers bufs = {NULL, calloc((size_t)(2 * n) + 1, sizeof(LLVMValueRef)), 2 * n, NULL};
  for (int i = 0; i < 2 * n; i++) {
    const ir_instr *o = red->operands[i]; /* an iota is computed (variadic_chains) */
    if (o->op == IR_OP_PARAMETER && red != in)
      o = in->operands[o->attrs.u.parameter_number];
    bufs.ptrs[i] = red->operands[i]->op == IR_OP_IOTA ? LLVMConstNull(cm->ptr) : kf->values[o->id].leaves[0];
  }
  LLVMValueRef argv = pack_args(kf, &bufs, v.leaves, n);
  char name[600];
  snprintf(name, sizeof name, "hlo.loop.%s.%s", kf->comp->name.p, in->name.p);
  range_fn r;
  range_open(&r, kf, name, kf->comp->n_instrs, 3 * n);
  cg_function *rf = &r.rf;
  /* units: blocks of FZ_VARIADIC_CHAINS outputs; the last may be short (one chain each) */
  int64_t blocks = (d.kcount + FZ_VARIADIC_CHAINS - 1) / FZ_VARIADIC_CHAINS;
  cg_loop blk = loop_from(rf, r.begin, r.end, "vr.block");
  LLVMValueRef first = LLVMBuildMul(b, blk.i, cg_i64(cm, FZ_VARIADIC_CHAINS), "");
  LLVMValueRef whole = LLVMBuildICmp(b, LLVMIntSLE, LLVMBuildAdd(b, first, cg_i64(cm, FZ_VARIADIC_CHAINS), ""),
                                     cg_i64(cm, d.kcount), "whole");
  LLVMBasicBlockRef full = LLVMAppendBasicBlockInContext(cm->ctx, rf->fn, "vr.full");
  LLVMBasicBlockRef part = LLVMAppendBasicBlockInContext(cm->ctx, rf->fn, "vr.part");
  LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(cm->ctx, rf->fn, "vr.next");
  LLVMBuildCondBr(b, whole, full, part);
  LLVMPositionBuilderAtEnd(b, full);
  variadic_chains(&r, red, &d, first, FZ_VARIADIC_CHAINS);
  LLVMBuildBr(b, next);
  LLVMPositionBuilderAtEnd(b, part);
  cg_loop k = loop_from(rf, first, cg_i64(cm, d.kcount), "vr.k");
  variadic_chains(&r, red, &d, k.i, 1);
  loop_end_from(rf, &k, first);
  LLVMBuildBr(b, next);
  LLVMPositionBuilderAtEnd(b, next);
  loop_end_from(rf, &blk, r.begin);
  range_close_and_run(&r, kf, argv, blocks, count_of(s));
  free(bufs.ptrs);
  kf->values[in->id] = v;
}

/* A reduce inside a fusion (not its root): a reduction of the minor dimension of an array
 * with the root's dimensions (fusion.c's row fusion), read only through broadcasts. */
static bool row_reduce_ok(const ir_instr *x, const ir_instr *root) {
  const ir_shape *in = x->operands[0]->shape;
  return root->op != IR_OP_REDUCE && x->n_operands == 2 && x->attrs.dimensions.n == 1 && in->rank >= 2 &&
         x->attrs.dimensions.v[0] == in->rank - 1 && ir_shape_same_dims(in, root->shape) &&
         !ir_etype_is_complex(x->shape->et);
}

/* A reduce member computed inline where it is read (inline_reduce_value): small
 * (fusion_inline_reduce_ok), neither the root, an output nor a row fusion's reduction. */
static bool reduce_inline_in(const ir_instr *x, const ir_instr *root) {
  return x->op == IR_OP_REDUCE && x != root && fusion_inline_reduce_ok(x) && !row_reduce_ok(x, root);
}

static bool inline_member(const fz *z, const ir_instr *x) {
  for (int k = 0; k < z->n_outs; k++)
    if (z->outs[k] == x)
      return false;
  return reduce_inline_in(x, z->root);
}

/* Whether x is the one dot or convolution of a kOutput fusion that the kernel can compute into
 * the result buffer first: operands are parameters, the result has the root's shape and type,
 * and the only path to the root is elementwise (each element read at its own index). */
static bool output_producer_ok(const ir_computation *c, const ir_instr *x) {
  const ir_instr *root = c->root;
  if ((x->op != IR_OP_DOT && x->op != IR_OP_CONVOLUTION) || x == root || root->op == IR_OP_REDUCE ||
      x->shape->et != root->shape->et || !ir_shape_same_dims(x->shape, root->shape) || x->shape->dyn)
    return false;
  for (int k = 0; k < x->n_operands; k++)
    if (x->operands[k]->op != IR_OP_PARAMETER)
      return false;
  int producers = 0;
  bool *reads = calloc((size_t)c->n_instrs + 1, sizeof *reads), ok = reads != NULL;
  for (int i = 0; ok && i < c->n_instrs; i++) {
    const ir_instr *y = c->instrs[i];
    producers += y->op == IR_OP_DOT || y->op == IR_OP_CONVOLUTION;
    reads[i] = y == x;
    for (int k = 0; k < y->n_operands && !reads[i]; k++)
      reads[i] = reads[y->operands[k]->id];
    if (reads[i] && y != x && (!(ir_opcode_table[y->op].flags & OPF_ELEMENTWISE) || !ir_shape_same_dims(y->shape, x->shape)))
      ok = false; /* x read at another element's index: not in place */
  }
  free(reads);
  return ok && producers == 1;
}

static uint64_t reduced_set(const ir_instr *red) {
  uint64_t m = 0;
  for (int i = 0; i < red->attrs.dimensions.n; i++)
    m |= 1ull << red->attrs.dimensions.v[i];
  return m;
}

/* Whether one loop computes all outputs: a reduce hero's siblings are reduces of an input with
 * its dimensions over the same dimensions, or arrays with its input's dimensions (written at
 * each input index); otherwise every output has the hero's dimensions. */
static bool outputs_share_loop(ir_instr *const *outs, int n, const ir_instr *hero) {
  bool red = hero->op == IR_OP_REDUCE;
  if (red && (hero->n_operands != 2 || hero->operands[0]->shape->rank > 64))
    return false;
  const ir_shape *space = red ? hero->operands[0]->shape : hero->shape;
  for (int k = 0; k < n; k++) {
    const ir_instr *o = outs[k];
    if (o->op != IR_OP_REDUCE ? !ir_shape_same_dims(o->shape, space)
                              : o->n_operands != 2 || !ir_shape_same_dims(o->operands[0]->shape, space) ||
                                    reduced_set(o) != reduced_set(hero))
      return false;
  }
  return true;
}

static bool is_output(ir_instr *const *outs, int n, const ir_instr *x) {
  for (int k = 0; k < n; k++)
    if (outs[k] == x)
      return true;
  return false;
}

/* Whether the fused emitter handles every instruction of fused computation c (and, for a
 * multi-output fusion, computes all its outputs in one loop). */
static bool fusion_supported(const ir_computation *c) {
  int n;
  ir_instr **outs = fusion_outputs(c, &n);
  if (!outs)
    return false;
  const ir_instr *hero = hero_of(outs, n);
  bool ok = outputs_share_loop(outs, n, hero);
  int row_reds = 0, inline_reds = 0;
  for (int i = 0; ok && i < c->n_instrs; i++) {
    const ir_instr *x = c->instrs[i];
    if (output_producer_ok(c, x) || (x == c->root && n > 1) || is_output(outs, n, x))
      continue;
    if (x->op == IR_OP_REDUCE && !row_reduce_ok(x, hero) && !reduce_inline_in(x, hero))
      ok = false;
    row_reds += x->op == IR_OP_REDUCE && row_reduce_ok(x, hero);
    inline_reds += reduce_inline_in(x, hero);
    if (x->op != IR_OP_PARAMETER && !fusion_member_ok(x))
      ok = false;
    if (x->op == IR_OP_PARAMETER && (x->shape->et == IR_TUPLE || !ir_etype_is_array(x->shape->et)))
      ok = false;
  }
  free(outs);
  return ok && !(row_reds && inline_reds); /* a row fusion's passes do not plan inline reduces */
}

bool cg_fusion_supported(const ir_instr *in) { return in->n_called == 1 && fusion_supported(in->called[0]); }

bool cg_lower_fusion(cg_function *f, ir_instr *in) {
  if (variadic_reduce_of(in)) {
    cg_outline_value(f, in, variadic_reduce_value, true);
    return true;
  }
  if (!cg_fusion_supported(in))
    return false;
  if (in->called[0]->root->op == IR_OP_TUPLE)
    cg_outline_value(f, in, multi_fusion_value, true);
  else
    cg_outline(f, in, fusion_kernel, true);
  return true;
}

bool cg_lower_fused_single(cg_function *f, ir_instr *in) {
  if (cg_select_and_scatter_loop_ok(in)) {
    cg_outline(f, in, sas_value, true);
    return true;
  }
  if (variadic_reduce_of(in)) {
    cg_outline_value(f, in, variadic_reduce_value, true);
    return true;
  }
  if (!(fusion_member_ok(in) || cg_reduce_window_loop_ok(in) || cg_gather_loop_ok(in)) || in->op == IR_OP_CONSTANT)
    return false;
  bool red = in->op == IR_OP_REDUCE;
  if (count_of(red ? in->operands[0]->shape : in->shape) <= 1)
    return false;
  cg_outline(f, in, single_kernel, red);
  return true;
}
