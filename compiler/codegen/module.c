/* module.c — cg_emit_module: one LLVM function per computation, buffers, loops, calls, and
 * the ABI of runtime/include/hlo/abi.h (SYM_run, the typed SYM, SYM_describe and a weak
 * hlo_module_describe).  Lowering of individual instructions is in lower.c and the family
 * files.  Tests: testdata/golden through hlorun, the conformance suite.
 */
#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_internal.h"
#include "hlo/abi.h"

/* UNIMPLEMENTED for every code-generator failure, malformed attribute text included: hloc
 * prints these statuses itself (an INVALID_ARGUMENT one reads as "already printed by the
 * parser"). */
static void fail_v(cg_module *cm, const ir_instr *in, ir_loc loc, const char *fmt, va_list ap) {
  if (cm->error)
    return;
  char msg[512];
  vsnprintf(msg, sizeof msg, fmt, ap);
  if (in)
    cm->error = hlo_status_make(HLO_UNIMPLEMENTED, "%d:%d: error: %%%s: %s", loc.line, loc.col, in->name.p, msg);
  else
    cm->error = hlo_status_make(HLO_INTERNAL, "%s", msg);
}

void cg_fail(cg_module *cm, const ir_instr *in, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fail_v(cm, in, in ? in->loc : (ir_loc){0, 0}, fmt, ap);
  va_end(ap);
}

void cg_fail_at(cg_module *cm, const ir_instr *in, ir_loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fail_v(cm, in, loc, fmt, ap);
  va_end(ap);
}

char *cg_symbol_for_module(const char *name) {
  size_t n = strlen(name);
  char *s = malloc(n + 2);
  if (!s)
    return NULL;
  size_t k = 0;
  if (!isalpha((unsigned char)name[0]) && name[0] != '_')
    s[k++] = 'm';
  for (size_t i = 0; i < n; i++)
    s[k++] = isalnum((unsigned char)name[i]) ? name[i] : '_';
  s[k] = 0;
  return s;
}


/* ---- buffers ------------------------------------------------------------------------- */

static void remember_heap(cg_function *f, LLVMValueRef slot, LLVMValueRef ptr) {
  if (f->n_heap == f->cap_heap) {
    int cap = f->cap_heap ? f->cap_heap * 2 : 16;
    cg_heap_buffer *p = realloc(f->heap, (size_t)cap * sizeof *p);
    if (!p) {
      cg_fail(f->cm, NULL, "out of memory");
      return;
    }
    f->heap = p;
    f->cap_heap = cap;
  }
  int at = f->current ? f->current->id : 0;
  (void)at;
  f->heap[f->n_heap++] = (cg_heap_buffer){slot, ptr, -1, -1, 0, -1};
}

/* ---- frame buffers ----------------------------------------------------------------------- *
 * The buffer plan (passes/buffer_plan.c) places every result buffer of a computation in its
 * frame before anything is emitted; cg_alloc_result hands those out.  A buffer the plan does
 * not know (a lowerer's own scratch, or a result a lowerer keeps elsewhere than the plan
 * expected) goes after the planned ones: a heap simulation at compile time, best fit among
 * the freed ranges, else the end (emission order is execution order at the level of a
 * computation function, and free_dead_buffers knows when each buffer dies).  The frame's size
 * is the plan's frame plus that scratch peak; callees' frames follow it. */

enum { CG_FRAME_ALIGN = BUFFER_PLAN_ALIGN };

/* Frame bytes a buffer of `bytes` takes. */
static int64_t frame_need(int64_t bytes) { return (bytes + CG_FRAME_ALIGN - 1) / CG_FRAME_ALIGN * CG_FRAME_ALIGN; }

static void remove_range(cg_function *f, int k) {
  memmove(&f->free_ranges[k], &f->free_ranges[k + 1], (size_t)(f->n_free - k - 1) * sizeof *f->free_ranges);
  f->n_free--;
}

static int64_t frame_alloc(cg_function *f, int64_t bytes) {
  int64_t need = frame_need(bytes);
  int best = -1;
  for (int k = 0; k < f->n_free; k++)
    if (f->free_ranges[k].bytes >= need && (best < 0 || f->free_ranges[k].bytes < f->free_ranges[best].bytes))
      best = k;
  if (best >= 0) {
    int64_t off = f->free_ranges[best].offset;
    f->free_ranges[best].offset += need;
    f->free_ranges[best].bytes -= need;
    if (f->free_ranges[best].bytes == 0)
      remove_range(f, best);
    return off;
  }
  int64_t off = f->frame_peak;
  if (f->n_free && f->free_ranges[f->n_free - 1].offset + f->free_ranges[f->n_free - 1].bytes == f->frame_peak) {
    off = f->free_ranges[f->n_free - 1].offset; /* grow the free tail */
    remove_range(f, f->n_free - 1);
  }
  f->frame_peak = off + need;
  return off;
}

static void frame_free(cg_function *f, int64_t off, int64_t bytes) {
  int64_t need = frame_need(bytes);
  if (f->n_free == f->cap_free) {
    int cap = f->cap_free ? 2 * f->cap_free : 16;
    cg_range *p = realloc(f->free_ranges, (size_t)cap * sizeof *p);
    if (!p)
      return; /* the range stays used: correct, only larger */
    f->free_ranges = p;
    f->cap_free = cap;
  }
  int k = 0;
  while (k < f->n_free && f->free_ranges[k].offset < off)
    k++;
  memmove(&f->free_ranges[k + 1], &f->free_ranges[k], (size_t)(f->n_free - k) * sizeof *f->free_ranges);
  f->free_ranges[k] = (cg_range){off, need};
  f->n_free++;
  if (k + 1 < f->n_free && f->free_ranges[k].offset + f->free_ranges[k].bytes == f->free_ranges[k + 1].offset) {
    f->free_ranges[k].bytes += f->free_ranges[k + 1].bytes;
    remove_range(f, k + 1);
  }
  if (k > 0 && f->free_ranges[k - 1].offset + f->free_ranges[k - 1].bytes == f->free_ranges[k].offset) {
    f->free_ranges[k - 1].bytes += f->free_ranges[k].bytes;
    remove_range(f, k);
  }
}

/* Records a line of the buffer-assignment report (printed by print_report). */
static void add_report_line(cg_function *f, cg_report_line l) {
  if (!f->cm->assignment)
    return;
  if (f->n_report == f->cap_report) {
    int cap = f->cap_report ? 2 * f->cap_report : 32;
    cg_report_line *p = realloc(f->report, (size_t)cap * sizeof *p);
    if (!p)
      return; /* the report loses a line; the code is unaffected */
    f->report = p;
    f->cap_report = cap;
  }
  f->report[f->n_report++] = l;
}

/* Keeps the ten largest arena buffers of the module, largest first (cg_options.largest). */
static void note_temporary(cg_module *cm, const cg_function *f, int64_t bytes) {
  cg_options *o = cm->opts;
  if (!o || !f->current)
    return;
  enum { N = (int)(sizeof o->largest / sizeof o->largest[0]) };
  int at;
  if (o->n_largest < N)
    at = o->n_largest++;
  else if (o->largest[N - 1].bytes < bytes)
    at = N - 1;
  else
    return;
  while (at > 0 && o->largest[at - 1].bytes < bytes) {
    o->largest[at] = o->largest[at - 1];
    at--;
  }
  o->largest[at] = (struct cg_temporary){f->comp ? f->comp->name.p : "?", f->current->name.p, bytes};
}

/* A buffer of the frame at `off` (from its start): its pointer is frame + off. */
static LLVMValueRef frame_pointer(cg_function *f, const ir_shape *s, int64_t off, int64_t bytes, int planned_to) {
  cg_module *cm = f->cm;
  note_temporary(cm, f, bytes);
  LLVMValueRef p = LLVMBuildGEP2(cm->b, cm->i8, f->frame_arg, (LLVMValueRef[]){cg_i64(cm, off)}, 1, "buf");
  int n = f->n_heap;
  remember_heap(f, NULL, p);
  if (f->n_heap > n) {
    f->heap[n].offset = off;
    f->heap[n].bytes = bytes;
    f->heap[n].planned_to = planned_to;
    add_report_line(f, (cg_report_line){f->current, NULL, s, n});
  }
  return p;
}

/* A scratch buffer of the frame, after the planned ones. */
static LLVMValueRef frame_buffer(cg_function *f, const ir_shape *s, int64_t bytes) {
  return frame_pointer(f, s, f->scratch_base + frame_alloc(f, bytes), bytes, -1);
}

/* The planned frame buffer pb for the current instruction. */
static LLVMValueRef planned_buffer(cg_function *f, const plan_buffer *pb, const ir_shape *s) {
  return frame_pointer(f, s, pb->offset, pb->bytes, pb->to);
}

/* Prints the buffer-assignment report's lines of f: the plan's buffers (instruction, result
 * leaf or temporary, bytes, offset, live positions), then what the emitted code uses. */
static void print_report(const cg_function *f) {
  FILE *out = f->cm->assignment;
  for (int i = 0; out && f->plan && i < f->plan->n_buffers; i++) {
    const plan_buffer *pb = &f->plan->buffers[i];
    if (pb->param_leaf >= 0)
      continue;
    const char *name = f->comp->instrs[pb->instr]->name.p;
    if (pb->leaf >= 0)
      fprintf(out, "  plan: %%%s{%d}: %lld bytes at offset %lld, live %d..%d\n", name, pb->leaf, (long long)pb->bytes,
              (long long)pb->offset, pb->from, pb->to);
    else
      fprintf(out, "  plan: %%%s temporary %d: %lld bytes at offset %lld, live %d..%d\n", name, -1 - pb->leaf,
              (long long)pb->bytes, (long long)pb->offset, pb->from, pb->to);
  }
  for (int i = 0; out && i < f->n_report; i++) {
    const cg_report_line *l = &f->report[i];
    const cg_heap_buffer *b = &f->heap[l->h];
    if (l->reused) {
      fprintf(out, "  %%%s: reuses %%%s's buffer", l->in ? l->in->name.p : "?", l->reused->name.p);
      if (!b->slot)
        fprintf(out, " (%lld bytes at offset %lld)", (long long)b->bytes, (long long)b->offset);
      fputc('\n', out);
      continue;
    }
    char shape[256];
    ir_shape_format(l->shape, false, shape, sizeof shape);
    fprintf(out, "  %%%s: %s, %lld bytes at offset %lld\n", l->in ? l->in->name.p : "?", shape, (long long)b->bytes,
            (long long)b->offset);
  }
}


LLVMValueRef cg_alloc_leaf(cg_function *f, const ir_shape *s) {
  cg_module *cm = f->cm;
  if (!ir_etype_is_array(s->et))
    return LLVMConstNull(cm->ptr);
  int64_t bytes;
  ir_shape_byte_size(s, &bytes);
  if (bytes <= 256) {
    LLVMValueRef a = cg_entry_alloca(f, LLVMArrayType2(cm->i8, (uint64_t)(bytes ? bytes : 1)), "buf");
    LLVMSetAlignment(a, 64);
    return a;
  }
  if (f->owns_frame)
    return frame_buffer(f, s, bytes);
  /* Heap: the pointer lives in an entry-block slot so the exit path can free it. */
  LLVMValueRef slot = cg_entry_alloca(f, cm->ptr, "heap.slot");
  LLVMBuilderRef b = cm->b;
  LLVMBasicBlockRef cur = LLVMGetInsertBlock(b);
  LLVMValueRef first = LLVMGetFirstInstruction(f->entry_bb);
  LLVMPositionBuilderAtEnd(b, f->entry_bb);
  if (LLVMGetBasicBlockTerminator(f->entry_bb))
    LLVMPositionBuilderBefore(b, LLVMGetBasicBlockTerminator(f->entry_bb));
  (void)first;
  LLVMBuildStore(b, LLVMConstNull(cm->ptr), slot);
  LLVMPositionBuilderAtEnd(b, cur);
  LLVMValueRef p = cg_runtime_call(cm, CG_RT_hlo_rt_alloc, (LLVMValueRef[]){f->ctx_arg, cg_i64(cm, bytes)}, 2, "heap");
  LLVMBuildStore(b, p, slot);
  /* Out of memory: fail. */
  LLVMValueRef isnull = LLVMBuildICmp(b, LLVMIntEQ, p, LLVMConstNull(cm->ptr), "oom");
  LLVMBasicBlockRef ok = LLVMAppendBasicBlockInContext(cm->ctx, f->fn, "alloc.ok");
  LLVMBasicBlockRef bad = LLVMAppendBasicBlockInContext(cm->ctx, f->fn, "alloc.fail");
  LLVMBuildCondBr(b, isnull, bad, ok);
  LLVMPositionBuilderAtEnd(b, bad);
  LLVMValueRef msg = LLVMBuildGlobalStringPtr(b, "out of memory allocating a buffer", "oom.msg");
  LLVMValueRef st = cg_runtime_call(cm, CG_RT_hlo_rt_error, &msg, 1, "st");
  LLVMBuildStore(b, st, f->fail_slot);
  LLVMBuildBr(b, f->fail_bb);
  LLVMPositionBuilderAtEnd(b, ok);
  remember_heap(f, slot, p);
  return p;
}

static void collect_leaves(const ir_shape *s, const ir_shape **out, int *n) {
  if (s->et == IR_TUPLE) {
    for (int i = 0; i < s->n_elems; i++)
      collect_leaves(s->elems[i], out, n);
    return;
  }
  out[(*n)++] = s;
}

cg_value cg_value_of_shape(const ir_shape *s) {
  cg_value v;
  v.n = ir_shape_count_leaves(s);
  v.leaves = calloc((size_t)v.n + 1, sizeof *v.leaves);
  v.shapes = calloc((size_t)v.n + 1, sizeof *v.shapes);
  int k = 0;
  if (v.shapes)
    collect_leaves(s, v.shapes, &k);
  return v;
}

cg_value cg_alloc_value(cg_function *f, const ir_shape *s) {
  cg_value v = cg_value_of_shape(s);
  for (int i = 0; v.leaves && v.shapes && i < v.n; i++)
    v.leaves[i] = cg_alloc_leaf(f, v.shapes[i]);
  return v;
}

LLVMValueRef cg_alloc_result_leaf(cg_function *f, const ir_instr *in, int k, const ir_shape *s) {
  if (k == 0 && in->shape->et != IR_TUPLE && f->result_buffer && f->result_buffer[in->id])
    return f->result_buffer[in->id]; /* the caller's result buffer (buffer_plan_result_writers) */
  const plan_buffer *pb = f->owns_frame ? buffer_plan_leaf(f->plan, in->id, k) : NULL;
  if (pb && pb->instr == in->id && pb->leaf == k)
    return planned_buffer(f, pb, s);
  return cg_alloc_leaf(f, s); /* on the stack, or not planned: scratch */
}

cg_value cg_alloc_result(cg_function *f, const ir_instr *in) {
  cg_value v = cg_value_of_shape(in->shape);
  for (int i = 0; v.leaves && v.shapes && i < v.n; i++)
    v.leaves[i] = cg_alloc_result_leaf(f, in, i, v.shapes[i]);
  return v;
}

LLVMValueRef cg_alloc_temp_leaf(cg_function *f, const ir_instr *in, int k, const ir_shape *s) {
  const plan_buffer *pb = f->owns_frame ? buffer_plan_temp(f->plan, in->id, k) : NULL;
  return pb ? planned_buffer(f, pb, s) : cg_alloc_leaf(f, s);
}

cg_value cg_result_value(cg_function *f, const ir_instr *in) {
  if (f->result_of != in)
    return cg_alloc_result(f, in);
  cg_value v;
  v.n = ir_shape_count_leaves(in->shape);
  v.leaves = calloc((size_t)v.n + 1, sizeof *v.leaves);
  v.shapes = calloc((size_t)v.n + 1, sizeof *v.shapes);
  int k = 0;
  collect_leaves(in->shape, v.shapes, &k);
  for (int i = 0; i < v.n; i++)
    v.leaves[i] = f->result_leaves[i];
  return v;
}

void cg_copy_leaf(cg_function *f, LLVMValueRef dst, LLVMValueRef src, const ir_shape *s) {
  int64_t bytes;
  if (!ir_etype_is_array(s->et) || !ir_shape_byte_size(s, &bytes) || bytes == 0)
    return;
  LLVMBuildMemCpy(f->cm->b, dst, 1, src, 1, cg_i64(f->cm, bytes));
}

/* ---- loops and indices ------------------------------------------------------------------ */

cg_loop cg_loop_begin(cg_function *f, LLVMValueRef n, const char *name) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  cg_loop l;
  l.var = cg_entry_alloca(f, cm->i64, name);
  LLVMBuildStore(b, cg_i64(cm, 0), l.var);
  l.cond = LLVMAppendBasicBlockInContext(cm->ctx, f->fn, "loop.cond");
  l.body = LLVMAppendBasicBlockInContext(cm->ctx, f->fn, "loop.body");
  l.done = LLVMAppendBasicBlockInContext(cm->ctx, f->fn, "loop.done");
  LLVMBuildBr(b, l.cond);
  LLVMPositionBuilderAtEnd(b, l.cond);
  LLVMValueRef i = LLVMBuildLoad2(b, cm->i64, l.var, "i");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, i, n, "more"), l.body, l.done);
  LLVMPositionBuilderAtEnd(b, l.body);
  l.i = LLVMBuildLoad2(b, cm->i64, l.var, "i");
  return l;
}

void cg_loop_end(cg_function *f, cg_loop *l) {
  LLVMBuilderRef b = f->cm->b;
  LLVMValueRef next = LLVMBuildNSWAdd(b, l->i, cg_i64(f->cm, 1), "i.next");
  LLVMBuildStore(b, next, l->var);
  LLVMBuildBr(b, l->cond);
  LLVMPositionBuilderAtEnd(b, l->done);
}

void cg_unflatten(cg_function *f, LLVMValueRef i, const int64_t *dims, int rank, LLVMValueRef *out) {
  LLVMBuilderRef b = f->cm->b;
  LLVMValueRef rest = i;
  for (int d = rank - 1; d >= 0; d--) {
    if (d == 0) {
      out[d] = rest;
      break;
    }
    LLVMValueRef size = cg_i64(f->cm, dims[d] ? dims[d] : 1);
    out[d] = LLVMBuildURem(b, rest, size, "idx");
    rest = LLVMBuildUDiv(b, rest, size, "rest");
  }
}

LLVMValueRef cg_flatten(cg_function *f, LLVMValueRef *idx, const int64_t *dims, int rank) {
  LLVMBuilderRef b = f->cm->b;
  LLVMValueRef lin = cg_i64(f->cm, 0);
  for (int d = 0; d < rank; d++) {
    lin = LLVMBuildMul(b, lin, cg_i64(f->cm, dims[d]), "lin");
    lin = LLVMBuildAdd(b, lin, idx[d], "lin");
  }
  return lin;
}

/* ---- calls ------------------------------------------------------------------------------ */

LLVMValueRef cg_intrinsic(cg_module *cm, const char *name, LLVMTypeRef type, int n_args) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMTypeRef tys[1] = {type};
  (void)n_args;
  return LLVMGetIntrinsicDeclaration(cm->mod, id, tys, 1);
}

void cg_fail_if_status(cg_function *f, LLVMValueRef st) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  LLVMBasicBlockRef ok = LLVMAppendBasicBlockInContext(cm->ctx, f->fn, "status.ok");
  LLVMBasicBlockRef bad = LLVMAppendBasicBlockInContext(cm->ctx, f->fn, "status.fail");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntNE, st, LLVMConstNull(cm->ptr), "failed"), bad, ok);
  LLVMPositionBuilderAtEnd(b, bad);
  LLVMBuildStore(b, st, f->fail_slot);
  LLVMBuildBr(b, f->fail_bb);
  LLVMPositionBuilderAtEnd(b, ok);
}

LLVMValueRef cg_callee_frame(cg_function *f) {
  cg_module *cm = f->cm;
  if (!f->frame_arg)
    return LLVMConstNull(cm->ptr);
  if (!f->owns_frame)
    return f->frame_arg;
  LLVMValueRef own = LLVMBuildLoad2(cm->b, cm->i64, cm->frame_globals[f->comp->id], "frame.own");
  return LLVMBuildGEP2(cm->b, cm->i8, f->frame_arg, &own, 1, "frame.callee");
}

LLVMValueRef cg_kernel_scratch(cg_function *f, int64_t bytes) {
  if (f->owns_frame || !f->frame_arg)
    return NULL;
  int64_t *need = &f->cm->kernel_scratch[f->comp->id];
  int64_t aligned = (bytes + CG_FRAME_ALIGN - 1) / CG_FRAME_ALIGN * CG_FRAME_ALIGN;
  *need = aligned > *need ? aligned : *need;
  if (f->cm->assignment)
    fprintf(f->cm->assignment, "  kernel scratch of %s: %lld bytes where its callees' frames go\n", f->comp->name.p,
            (long long)bytes);
  return f->frame_arg;
}

void cg_call_computation(cg_function *f, ir_computation *c, LLVMValueRef *args, int n_args,
                         LLVMValueRef *outs, int n_outs) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  LLVMValueRef params = cg_ptr_table(f, args, n_args, "ptrs");
  LLVMValueRef results = cg_ptr_table(f, outs, n_outs, "ptrs");
  LLVMValueRef st = LLVMBuildCall2(b, cm->comp_fn_type, cm->comp_fns[c->id],
                                   (LLVMValueRef[]){f->ctx_arg, params, results, cg_callee_frame(f)}, 4, "st");
  cg_fail_if_status(f, st);
}

void cg_call_scalar(cg_function *f, ir_computation *c, LLVMValueRef *vals, const ir_etype *ets, int n,
                    LLVMValueRef *out, const ir_etype *out_ets, int n_out) {
  cg_module *cm = f->cm;
  LLVMValueRef args[64], outs[64];
  for (int i = 0; i < n && i < 64; i++) {
    args[i] = cg_entry_alloca(f, cg_storage_type(cm, ets[i]), "arg");
    cg_store(f, ets[i], args[i], cg_i64(cm, 0), vals[i]);
  }
  for (int i = 0; i < n_out && i < 64; i++)
    outs[i] = cg_entry_alloca(f, cg_storage_type(cm, out_ets[i]), "res");
  cg_call_computation(f, c, args, n, outs, n_out);
  for (int i = 0; i < n_out && i < 64; i++)
    out[i] = cg_load(f, out_ets[i], outs[i], cg_i64(cm, 0));
}

/* ---- computations ----------------------------------------------------------------------- */

/* Opens a function body: entry block (allocas, the status slot), body block. */
static void function_begin(cg_function *f, cg_module *cm, ir_computation *c, LLVMValueRef fn) {
  memset(f, 0, sizeof *f);
  f->cm = cm;
  f->comp = c;
  f->fn = fn;
  f->ctx_arg = LLVMGetParam(fn, 0);
  f->frame_arg = LLVMGetParam(fn, 3);
  f->owns_frame = true;
  f->values = calloc((size_t)c->n_instrs + 1, sizeof *f->values);
  f->entry_bb = LLVMAppendBasicBlockInContext(cm->ctx, fn, "entry");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(cm->ctx, fn, "body");
  f->fail_bb = LLVMAppendBasicBlockInContext(cm->ctx, fn, "fail");
  LLVMPositionBuilderAtEnd(cm->b, f->entry_bb);
  f->fail_slot = LLVMBuildAlloca(cm->b, cm->ptr, "status");
  LLVMBuildStore(cm->b, LLVMConstNull(cm->ptr), f->fail_slot);
  LLVMBuildBr(cm->b, body);
  LLVMPositionBuilderAtEnd(cm->b, body);
}

/* Closes it: the failure path and the exit, which frees heap buffers and returns the status. */
static void function_end(cg_function *f) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  LLVMBasicBlockRef exit_bb = LLVMAppendBasicBlockInContext(cm->ctx, f->fn, "exit");
  LLVMBuildBr(b, exit_bb);
  LLVMPositionBuilderAtEnd(b, f->fail_bb);
  LLVMBuildBr(b, exit_bb);
  LLVMPositionBuilderAtEnd(b, exit_bb);
  for (int i = 0; i < f->n_heap; i++) {
    if (!f->heap[i].slot)
      continue; /* an arena buffer */
    LLVMValueRef p = LLVMBuildLoad2(b, cm->ptr, f->heap[i].slot, "p");
    cg_runtime_call(cm, CG_RT_hlo_rt_free, (LLVMValueRef[]){f->ctx_arg, p}, 2, "");
  }
  LLVMBuildRet(b, LLVMBuildLoad2(b, cm->ptr, f->fail_slot, "status"));
  for (int i = 0; i < f->comp->n_instrs; i++) {
    free(f->values[i].leaves);
    free((void *)f->values[i].shapes);
  }
  free(f->values);
  free(f->heap);
  free(f->free_ranges);
  free(f->report);
}

/* Loads n leaf pointers from a pointer array starting at *k into a value. */
static cg_value leaves_from_array(cg_function *f, LLVMValueRef arr, int *k, const ir_shape *shape, const char *name) {
  cg_module *cm = f->cm;
  cg_value v;
  v.n = ir_shape_count_leaves(shape);
  v.leaves = calloc((size_t)v.n + 1, sizeof *v.leaves);
  v.shapes = calloc((size_t)v.n + 1, sizeof *v.shapes);
  int j = 0;
  collect_leaves(shape, v.shapes, &j);
  for (int i = 0; i < v.n; i++, (*k)++) {
    LLVMValueRef slot = LLVMBuildGEP2(cm->b, cm->ptr, arr, (LLVMValueRef[]){cg_i64(cm, *k)}, 1, "slot");
    v.leaves[i] = LLVMBuildLoad2(cm->b, cm->ptr, slot, name);
  }
  return v;
}

/* A computation function whose body is this many LLVM instructions or more is left to LLVM
 * unoptimized (optnone): its work is calls into outlined kernels, which are optimized on their
 * own, while LLVM's function passes grow quadratically on one huge straight-line body (a 4000-op
 * training step took over 15 minutes at -O2). */
enum { CG_OPTNONE_INSTRUCTIONS = 4000 };

static size_t count_instructions(LLVMValueRef fn) {
  size_t n = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i))
      n++;
  return n;
}

static void add_fn_attr(cg_module *cm, LLVMValueRef fn, const char *name) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(cm->ctx, kind, 0));
}

static void leave_large_function_unoptimized(cg_module *cm, LLVMValueRef fn) {
  if (count_instructions(fn) < CG_OPTNONE_INSTRUCTIONS)
    return;
  add_fn_attr(cm, fn, "noinline");
  add_fn_attr(cm, fn, "optnone");
}

/* One kernel call in the making: the kernel's function and state, and where the caller resumes. */
typedef struct {
  LLVMValueRef fn, args;
  LLVMBasicBlockRef resume;
  cg_function kf;
  LLVMValueRef *kouts; /* the result leaves, as seen inside the kernel */
} kernel_call;

/* A kernel over a few elements in a small computation (a while body's state update, say) is
 * inlined: its call, argument array and loop setup would cost more than its work, and the
 * computation stays small enough for LLVM.  Everything else stays its own function. */
enum { CG_INLINE_KERNEL_ELEMENTS = 512, CG_INLINE_KERNEL_COMPUTATION = 200 };

static bool small_kernel(const ir_computation *c, const ir_instr *in) {
  int64_t n = 0;
  if (c->n_instrs > CG_INLINE_KERNEL_COMPUTATION || in->shape->et == IR_TUPLE || !ir_shape_num_elements(in->shape, &n))
    return false;
  for (int i = 0; i < in->n_operands; i++) {
    int64_t k = 0;
    if (in->operands[i]->shape->et == IR_TUPLE || !ir_shape_num_elements(in->operands[i]->shape, &k) ||
        k > CG_INLINE_KERNEL_ELEMENTS)
      return false;
  }
  return n <= CG_INLINE_KERNEL_ELEMENTS;
}

/* Slots the argument array needs for `in`: its operand leaves, then its result leaves. */
static int kernel_arg_count(const ir_instr *in) {
  int n = ir_shape_count_leaves(in->shape);
  for (int j = 0; j < in->n_operands; j++)
    n += ir_shape_count_leaves(in->operands[j]->shape);
  return n;
}

/* In the caller: stores the operand leaves and `outs` into the shared argument array (sized for
 * the widest instruction of the computation); then creates the kernel and positions the builder
 * inside it, with the operands and kc->kouts loaded from its argument array. */
static void kernel_begin(cg_function *f, ir_instr *in, const LLVMValueRef *outs, int n_outs, kernel_call *kc) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  if (!f->kernel_args) {
    int widest = 1;
    for (int i = 0; i < f->comp->n_instrs; i++) {
      int w = kernel_arg_count(f->comp->instrs[i]);
      widest = w > widest ? w : widest;
    }
    f->kernel_args_len = widest;
    f->kernel_args = cg_entry_alloca(f, LLVMArrayType2(cm->ptr, (uint64_t)widest), "kargs");
  }
  kc->args = f->kernel_args;
  int na = 0;
  for (int i = 0; i < in->n_operands; i++) {
    cg_value o = f->values[in->operands[i]->id];
    for (int j = 0; j < o.n; j++, na++)
      LLVMBuildStore(b, o.leaves[j], LLVMBuildGEP2(b, cm->ptr, kc->args, (LLVMValueRef[]){cg_i64(cm, na)}, 1, ""));
  }
  for (int j = 0; j < n_outs; j++, na++)
    LLVMBuildStore(b, outs[j], LLVMBuildGEP2(b, cm->ptr, kc->args, (LLVMValueRef[]){cg_i64(cm, na)}, 1, ""));
  char name[600];
  snprintf(name, sizeof name, "hlo.kernel.%s.%s", f->comp->name.p, in->name.p);
  kc->fn = LLVMAddFunction(cm->mod, name, cm->comp_fn_type);
  LLVMSetLinkage(kc->fn, LLVMInternalLinkage);
  add_fn_attr(cm, kc->fn, small_kernel(f->comp, in) ? "alwaysinline" : "noinline");
  kc->resume = LLVMGetInsertBlock(b);
  function_begin(&kc->kf, cm, f->comp, kc->fn);
  kc->kf.owns_frame = false; /* its callees get the frame after the caller's */
  LLVMValueRef karr = LLVMGetParam(kc->fn, 1);
  int k = 0;
  for (int i = 0; i < in->n_operands; i++) {
    ir_instr *op = in->operands[i];
    if (!kc->kf.values[op->id].leaves)
      kc->kf.values[op->id] = leaves_from_array(&kc->kf, karr, &k, op->shape, op->name.p);
    else
      k += ir_shape_count_leaves(op->shape);
  }
  kc->kouts = calloc((size_t)n_outs + 1, sizeof *kc->kouts);
  for (int j = 0; j < n_outs; j++, k++)
    kc->kouts[j] = LLVMBuildLoad2(b, cm->ptr, LLVMBuildGEP2(b, cm->ptr, karr, (LLVMValueRef[]){cg_i64(cm, k)}, 1, ""),
                                  "out");
}

/* Closes the kernel; back in the caller, calls it and propagates a failing status. */
static void kernel_end(cg_function *f, kernel_call *kc, bool may_fail) {
  cg_module *cm = f->cm;
  LLVMBuilderRef b = cm->b;
  function_end(&kc->kf);
  free(kc->kouts);
  LLVMPositionBuilderAtEnd(b, kc->resume);
  LLVMValueRef st = LLVMBuildCall2(b, cm->comp_fn_type, kc->fn,
                                   (LLVMValueRef[]){f->ctx_arg, kc->args, LLVMConstNull(cm->ptr), cg_callee_frame(f)}, 4,
                                   "st");
  if (may_fail)
    cg_fail_if_status(f, st);
}

/* The buffer for `in`'s single array result: the caller's result buffer when `in` writes one. */
static LLVMValueRef result_leaf(cg_function *f, ir_instr *in) { return cg_alloc_result_leaf(f, in, 0, in->shape); }

/* The heap entry of the buffer that operand k of `in` holds when it is a temporary of this
 * function (not a parameter, constant or caller's buffer: those are not in f->heap) that no
 * later instruction reads through any of its holders, nor another operand of `in`; else -1. */
static int dying_buffer(cg_function *f, const ir_instr *in, int k) {
  cg_value o = f->values[in->operands[k]->id];
  if (o.n != 1 || !o.leaves[0])
    return -1;
  for (int j = 0; j < in->n_operands; j++) {
    cg_value other = f->values[in->operands[j]->id];
    for (int l = 0; l < other.n && in->operands[j] != in->operands[k]; l++)
      if (other.leaves[l] == o.leaves[0])
        return -1; /* read through another holder as well */
  }
  for (int h = f->n_heap - 1; h >= 0; h--)
    if (f->heap[h].ptr == o.leaves[0])
      return f->heap[h].until == in->id ? h : -1;
  return -1;
}

/* The operand of `in` whose buffer in's result takes over, or -1: the one the plan chose
 * (a dynamic-update-slice's operand 0, or an operand read only at the element being written,
 * that dies at `in`), when it holds that buffer here too.  The buffer then lives on as in's
 * result, and the arena needs no new range for it. */
static int reused_operand(cg_function *f, const ir_instr *in, int *heap) {
  if ((f->result_buffer && f->result_buffer[in->id]) || !f->heap || !f->plan || !f->owns_frame)
    return -1;
  int k = f->plan->reuse[in->id];
  if (k >= 0 && (*heap = dying_buffer(f, in, k)) >= 0)
    return k;
  return -1;
}

void cg_outline(cg_function *f, ir_instr *in, cg_kernel_fn body, bool may_fail) {
  int h = -1, k = reused_operand(f, in, &h);
  LLVMValueRef out = k >= 0 ? f->values[in->operands[k]->id].leaves[0] : result_leaf(f, in);
  if (k >= 0)
    add_report_line(f, (cg_report_line){in, in->operands[k], in->shape, h});
  kernel_call kc;
  kernel_begin(f, in, &out, 1, &kc);
  kc.kf.in_place = k >= 0 ? in : NULL;
  kc.kf.in_place_operand = k;
  body(&kc.kf, in, kc.kouts[0]);
  kernel_end(f, &kc, may_fail);
  cg_value v = {calloc(2, sizeof(LLVMValueRef)), calloc(2, sizeof(ir_shape *)), 1};
  v.leaves[0] = out;
  v.shapes[0] = in->shape;
  f->values[in->id] = v;
}

/* The caller's result buffer for leaf k of a multi-output fusion when the root tuple returns
 * that leaf through a get-tuple-element (the kernel then writes it there, no copy), or NULL. */
static LLVMValueRef returned_leaf(cg_function *f, const ir_instr *in, int k) {
  if (!f->result_buffer || in->op != IR_OP_FUSION || in->shape->et != IR_TUPLE ||
      ir_shape_count_leaves(in->shape) != in->shape->n_elems)
    return NULL;
  for (int i = 0; i < f->comp->n_instrs; i++) {
    const ir_instr *g = f->comp->instrs[i];
    if (g->op == IR_OP_GET_TUPLE_ELEMENT && g->operands[0] == in && g->attrs.u.tuple_index == k &&
        f->result_buffer[g->id])
      return f->result_buffer[g->id];
  }
  return NULL;
}

void cg_outline_value(cg_function *f, ir_instr *in, cg_value_lower_fn lower, bool may_fail) {
  cg_value v = {calloc((size_t)ir_shape_count_leaves(in->shape) + 1, sizeof(LLVMValueRef)),
                calloc((size_t)ir_shape_count_leaves(in->shape) + 1, sizeof(ir_shape *)), 0};
  collect_leaves(in->shape, v.shapes, &v.n);
  for (int i = 0; i < v.n; i++)
    if (!(v.leaves[i] = returned_leaf(f, in, i)))
      v.leaves[i] = cg_alloc_result_leaf(f, in, i, v.shapes[i]);
  kernel_call kc;
  kernel_begin(f, in, v.leaves, v.n, &kc);
  kc.kf.result_of = in;
  kc.kf.result_leaves = kc.kouts;
  lower(&kc.kf, in);
  if (!f->cm->error) { /* a lowerer that did not use cg_result_value: copy its result over */
    cg_value r = kc.kf.values[in->id];
    for (int i = 0; i < r.n; i++)
      if (r.leaves[i] && r.leaves[i] != kc.kouts[i])
        cg_copy_leaf(&kc.kf, kc.kouts[i], r.leaves[i], r.shapes[i]);
  }
  kernel_end(f, &kc, may_fail);
  f->values[in->id] = v;
}

/* Buffer lifetimes in a computation function come from the plan's last_reader[id]: the
 * position of the last instruction that reads instruction id (the root lives to the end).  A
 * buffer may be held by several values (tuple, get-tuple-element and forwarding ops share
 * leaves); it lives until the last reader of any of them.  Every holder of a buffer is
 * lowered before the buffer's first holder is last read (a new holder reads an old one), so
 * once position i is lowered, a buffer whose lifetime ends at i is dead: a heap buffer is
 * freed there, a scratch range of the frame is free for later buffers, and a planned buffer
 * is checked against its planned end. */
/* After lowering position i: extends the lifetime of the buffers i holds, frees those ending. */
static void free_dead_buffers(cg_function *f, int i, const int *last) {
  cg_module *cm = f->cm;
  cg_value v = f->values[i];
  for (int k = 0; k < v.n; k++)
    for (int h = f->n_heap - 1; h >= 0; h--)
      if (v.leaves[k] && f->heap[h].ptr == v.leaves[k]) {
        if (f->heap[h].until < last[i])
          f->heap[h].until = last[i];
        if (f->heap[h].planned_to >= 0 && last[i] > f->heap[h].planned_to)
          cg_fail(cm, f->current, "internal error: buffer plan: a buffer %%%s holds is read at position %d, after "
                  "its planned end %d", f->current ? f->current->name.p : "?", last[i], f->heap[h].planned_to);
        break;
      }
  for (int h = 0; h < f->n_heap; h++) {
    if (f->heap[h].until < 0 || f->heap[h].until > i)
      continue;
    if (!f->heap[h].slot) { /* an arena buffer: a scratch range is free for later buffers */
      if (f->heap[h].planned_to < 0)
        frame_free(f, f->heap[h].offset - f->scratch_base, f->heap[h].bytes);
      f->heap[h].until = INT_MAX;
      continue;
    }
    LLVMValueRef p = LLVMBuildLoad2(cm->b, cm->ptr, f->heap[h].slot, "dead");
    cg_runtime_call(cm, CG_RT_hlo_rt_free, (LLVMValueRef[]){f->ctx_arg, p}, 2, "");
    LLVMBuildStore(cm->b, LLVMConstNull(cm->ptr), f->heap[h].slot);
    f->heap[h].until = INT_MAX; /* freed: the exit path frees the null it now holds */
  }
}

/* The result buffers of c (one per root leaf), and which instruction writes each directly
 * (buffer_plan_result_writers). */
static void assign_result_buffers(cg_function *f, ir_computation *c, LLVMValueRef results, LLVMValueRef *dst) {
  cg_module *cm = f->cm;
  int nr = ir_shape_count_leaves(c->root->shape);
  for (int i = 0; i < nr; i++)
    dst[i] = LLVMBuildLoad2(cm->b, cm->ptr, LLVMBuildGEP2(cm->b, cm->ptr, results, (LLVMValueRef[]){cg_i64(cm, i)}, 1, ""),
                            "res");
  f->result_buffer = calloc((size_t)c->n_instrs + 1, sizeof *f->result_buffer);
  int *writer = f->plan ? NULL : malloc(((size_t)c->n_instrs + 1) * sizeof *writer);
  const int *leaf = f->plan ? f->plan->result_leaf : writer;
  if (f->result_buffer && leaf) {
    if (writer)
      buffer_plan_result_writers(c, writer);
    for (int i = 0; i < c->n_instrs; i++)
      if (leaf[i] >= 0)
        f->result_buffer[i] = dst[leaf[i]];
  }
  free(writer);
}

void cg_copy_leaf_if_distinct(cg_function *f, LLVMValueRef dst, LLVMValueRef src, const ir_shape *s) {
  cg_module *cm = f->cm;
  LLVMBasicBlockRef copy = LLVMAppendBasicBlockInContext(cm->ctx, f->fn, "copy.distinct");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(cm->ctx, f->fn, "copy.done");
  LLVMBuildCondBr(cm->b, LLVMBuildICmp(cm->b, LLVMIntNE, dst, src, "distinct"), copy, done);
  LLVMPositionBuilderAtEnd(cm->b, copy);
  cg_copy_leaf(f, dst, src, s);
  LLVMBuildBr(cm->b, done);
  LLVMPositionBuilderAtEnd(cm->b, done);
}

/* Copies a root leaf into the caller's result buffer; a parameter's leaf only when the caller
 * did not pass the same buffer as parameter and result (a while loop's pass-through state). */
static bool holds_parameter_leaf(cg_function *f, const ir_computation *c, LLVMValueRef src) {
  for (int p = 0; p < c->n_params; p++) {
    cg_value v = f->values[c->params[p]->id];
    for (int k = 0; k < v.n; k++)
      if (v.leaves[k] == src)
        return true;
  }
  return false;
}

static void copy_result_leaf(cg_function *f, const ir_computation *c, LLVMValueRef dst, LLVMValueRef src,
                             const ir_shape *s) {
  if (holds_parameter_leaf(f, c, src))
    cg_copy_leaf_if_distinct(f, dst, src, s);
  else
    cg_copy_leaf(f, dst, src, s);
}

static void emit_computation(cg_module *cm, ir_computation *c) {
  cg_function f;
  function_begin(&f, cm, c, cm->comp_fns[c->id]);
  LLVMValueRef params = LLVMGetParam(f.fn, 1), results = LLVMGetParam(f.fn, 2);
  int leaf = 0;
  for (int p = 0; p < c->n_params; p++)
    f.values[c->params[p]->id] = leaves_from_array(&f, params, &leaf, c->params[p]->shape, c->params[p]->name.p);
  const comp_plan *cp = cm->plan && c->id < cm->plan->n_comps ? &cm->plan->comps[c->id] : NULL;
  f.plan = cp && cp->planned ? cp : NULL;
  f.scratch_base = f.plan ? f.plan->frame_bytes : 0;
  LLVMValueRef *dst = calloc((size_t)ir_shape_count_leaves(c->root->shape) + 1, sizeof *dst);
  assign_result_buffers(&f, c, results, dst);
  const int *last = f.plan ? f.plan->last_reader : NULL;
  if (cm->assignment)
    fprintf(cm->assignment, "computation %s:\n", c->name.p);
  for (int i = 0; i < c->n_instrs && !cm->error; i++) {
    f.current = c->instrs[i];
    if (c->instrs[i]->op != IR_OP_PARAMETER)
      cg_lower_instr(&f, c->instrs[i]);
    if (last && !cm->error)
      free_dead_buffers(&f, i, last);
  }
  if (!cm->error) {
    /* Parameters first: a donated parameter's buffer may be a result buffer (the plan's
     * result_donor), which other results overwrite only after it has been read. */
    cg_value r = f.values[c->root->id];
    for (int pass = 0; pass < 2; pass++)
      for (int i = 0; i < r.n; i++)
        if (r.leaves[i] != dst[i] && holds_parameter_leaf(&f, c, r.leaves[i]) == (pass == 0))
          copy_result_leaf(&f, c, dst[i], r.leaves[i], r.shapes[i]);
  }
  free(dst);
  free(f.result_buffer);
  print_report(&f);
  int64_t frame = f.scratch_base + f.frame_peak;
  cm->frame_bytes[c->id] = frame;
  LLVMSetInitializer(cm->frame_globals[c->id], cg_i64(cm, frame));
  if (cm->assignment && frame)
    fprintf(cm->assignment, "  frame: %lld bytes\n", (long long)frame);
  function_end(&f);
  leave_large_function_unoptimized(cm, f.fn);
}

/* Computations that only fusions call, whose fused kernels compute them element by element
 * (fused.c): no function of their own is needed. */
static bool *fused_only(const ir_module *m) {
  bool *called_other = calloc((size_t)m->n_comps + 1, sizeof(bool)), *fused = calloc((size_t)m->n_comps + 1, sizeof(bool));
  if (!called_other || !fused) {
    free(called_other);
    free(fused);
    return NULL;
  }
  for (int ci = 0; ci < m->n_comps; ci++)
    for (int i = 0; i < m->comps[ci]->n_instrs; i++) {
      const ir_instr *in = m->comps[ci]->instrs[i];
      for (int k = 0; k < in->n_called; k++) {
        if (in->op == IR_OP_FUSION && cg_fusion_supported(in))
          fused[in->called[k]->id] = true;
        else
          called_other[in->called[k]->id] = true;
      }
    }
  for (int ci = 0; ci < m->n_comps; ci++)
    fused[ci] = fused[ci] && !called_other[ci] && !m->comps[ci]->is_entry;
  free(called_other);
  return fused;
}

/* A function that is never called: returns ok. */
static void emit_empty(cg_module *cm, ir_computation *c) {
  LLVMSetInitializer(cm->frame_globals[c->id], cg_i64(cm, 0));
  LLVMPositionBuilderAtEnd(cm->b, LLVMAppendBasicBlockInContext(cm->ctx, cm->comp_fns[c->id], "entry"));
  LLVMBuildRet(cm->b, LLVMConstNull(cm->ptr));
}

/* ---- ABI: entry points and the descriptor ------------------------------------------------ */

static LLVMValueRef const_string(cg_module *cm, const char *s, const char *name) {
  return cg_const_global(cm, LLVMConstStringInContext(cm->ctx, s, (unsigned)strlen(s), 0), name);
}

/* The custom-call targets the module resolves by name, each once: a constant array of
 * strings (hlo_module_desc.custom_call_targets); *n gets the count. */
static LLVMValueRef custom_call_targets(cg_module *cm, int32_t *n) {
  const ir_module *m = cm->ir;
  int cap = 0;
  for (int ci = 0; ci < m->n_comps; ci++)
    cap += m->comps[ci]->n_instrs;
  ir_str *seen = calloc((size_t)cap + 1, sizeof *seen);
  LLVMValueRef *elems = calloc((size_t)cap + 1, sizeof *elems);
  *n = 0;
  for (int ci = 0; seen && elems && ci < m->n_comps; ci++)
    for (int i = 0; i < m->comps[ci]->n_instrs; i++) {
      const ir_instr *in = m->comps[ci]->instrs[i];
      if (!cg_custom_call_needs_target(in))
        continue;
      ir_str t = in->attrs.custom_text;
      bool dup = false;
      for (int k = 0; k < *n && !dup; k++)
        dup = seen[k].len == t.len && memcmp(seen[k].p, t.p, t.len) == 0;
      if (dup)
        continue;
      char name[300];
      snprintf(name, sizeof name, "%.*s", (int)t.len, t.p);
      seen[*n] = t;
      elems[(*n)++] = const_string(cm, name, "module.cc_target");
    }
  LLVMValueRef g = cg_const_global(cm, LLVMConstArray2(cm->ptr, elems, (uint64_t)*n), "module.cc_targets");
  free(seen);
  free(elems);
  return g;
}

static LLVMValueRef array_descs(cg_module *cm, LLVMTypeRef desc_t, const ir_shape **leaves, char **names, int n,
                                const char *tag) {
  LLVMValueRef *elems = calloc((size_t)n + 1, sizeof *elems);
  for (int i = 0; i < n; i++) {
    const ir_shape *s = leaves[i];
    LLVMValueRef dims_c[64];
    for (int d = 0; d < s->rank; d++)
      dims_c[d] = cg_i64(cm, s->dims[d]);
    LLVMValueRef dims_init = LLVMConstArray2(cm->i64, dims_c, (uint64_t)s->rank);
    char gname[64];
    snprintf(gname, sizeof gname, "%s.dims.%d", tag, i);
    LLVMValueRef dims_g = cg_const_global(cm, dims_init, gname);
    int64_t bytes = 0;
    if (ir_etype_is_array(s->et))
      ir_shape_byte_size(s, &bytes);
    snprintf(gname, sizeof gname, "%s.name.%d", tag, i);
    LLVMValueRef fields[5] = {LLVMConstInt(cm->i32, (unsigned long long)s->et, 0),
                              LLVMConstInt(cm->i32, (unsigned long long)s->rank, 0), dims_g, cg_i64(cm, bytes),
                              const_string(cm, names[i], gname)};
    elems[i] = LLVMConstNamedStruct(desc_t, fields, 5);
  }
  LLVMValueRef init = LLVMConstArray2(desc_t, elems, (uint64_t)n);
  free(elems);
  char gname[64];
  snprintf(gname, sizeof gname, "%s.descs", tag);
  return cg_const_global(cm, init, gname);
}

static void leaf_names(const ir_shape *s, const char *base, char **out, int *n) {
  if (s->et != IR_TUPLE) {
    out[(*n)++] = strdup(base);
    return;
  }
  for (int i = 0; i < s->n_elems; i++) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s{%d}", base, i);
    leaf_names(s->elems[i], buf, out, n);
  }
}

/* The arena a call of c needs: its own frame, then the largest of its callees' frames and of
 * its kernels' scratch. */
static int64_t total_frame(const cg_module *cm, const ir_computation *c, int64_t *memo) {
  if (memo[c->id] >= 0)
    return memo[c->id];
  int64_t callees = 0;
  for (int i = 0; i < c->n_instrs; i++)
    for (int k = 0; k < c->instrs[i]->n_called; k++) {
      int64_t t = total_frame(cm, c->instrs[i]->called[k], memo);
      callees = t > callees ? t : callees;
    }
  if (cm->kernel_scratch[c->id] > callees)
    callees = cm->kernel_scratch[c->id];
  return memo[c->id] = cm->frame_bytes[c->id] + callees;
}

static int64_t arena_bytes(const cg_module *cm) {
  int64_t *memo = malloc(((size_t)cm->ir->n_comps + 1) * sizeof *memo);
  if (!memo)
    return -1;
  for (int i = 0; i < cm->ir->n_comps; i++)
    memo[i] = -1;
  int64_t t = total_frame(cm, cm->ir->entry, memo);
  free(memo);
  return t;
}

/* The descriptor's result_donors: a constant i32 array of the plan's donors, or null. */
static LLVMValueRef result_donors(cg_module *cm, int nr) {
  const ir_computation *e = cm->ir->entry;
  const comp_plan *cp = cm->plan && e->id < cm->plan->n_comps ? &cm->plan->comps[e->id] : NULL;
  if (!cp || !cp->result_donor)
    return LLVMConstNull(cm->ptr);
  LLVMValueRef *v = calloc((size_t)nr + 1, sizeof *v);
  if (!v)
    return LLVMConstNull(cm->ptr);
  for (int r = 0; r < nr; r++)
    v[r] = LLVMConstInt(cm->i32, (unsigned long long)(int64_t)cp->result_donor[r], 1);
  LLVMValueRef arr = LLVMConstArray2(cm->i32, v, (uint64_t)nr);
  free(v);
  return cg_const_global(cm, arr, "module.result_donors");
}

/* SYM_run(ctx, params, results): the entry computation with the call's arena. */
static LLVMValueRef emit_run(cg_module *cm, const char *name, int64_t arena) {
  LLVMBuilderRef b = cm->b;
  LLVMTypeRef run_t = LLVMFunctionType(cm->ptr, (LLVMTypeRef[]){cm->ptr, cm->ptr, cm->ptr}, 3, 0);
  LLVMValueRef run = LLVMAddFunction(cm->mod, name, run_t);
  LLVMValueRef ctx = LLVMGetParam(run, 0);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(cm->ctx, run, "entry"));
  LLVMValueRef frame = LLVMConstNull(cm->ptr);
  if (arena > 0) {
    LLVMValueRef st_slot = LLVMBuildAlloca(b, cm->ptr, "st");
    frame = cg_runtime_call(cm, CG_RT_hlo_rt_arena_acquire, (LLVMValueRef[]){ctx, cg_i64(cm, arena), st_slot}, 3,
                            "arena");
    LLVMBasicBlockRef ok = LLVMAppendBasicBlockInContext(cm->ctx, run, "ok");
    LLVMBasicBlockRef bad = LLVMAppendBasicBlockInContext(cm->ctx, run, "no.arena");
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, frame, LLVMConstNull(cm->ptr), ""), bad, ok);
    LLVMPositionBuilderAtEnd(b, bad);
    LLVMBuildRet(b, LLVMBuildLoad2(b, cm->ptr, st_slot, "st"));
    LLVMPositionBuilderAtEnd(b, ok);
  }
  LLVMValueRef st = LLVMBuildCall2(b, cm->comp_fn_type, cm->comp_fns[cm->ir->entry->id],
                                   (LLVMValueRef[]){ctx, LLVMGetParam(run, 1), LLVMGetParam(run, 2), frame}, 4, "st");
  if (arena > 0) {
    cg_runtime_call(cm, CG_RT_hlo_rt_arena_release, (LLVMValueRef[]){ctx, frame}, 2, "");
  }
  LLVMBuildRet(b, st);
  return run;
}

static void emit_abi(cg_module *cm, const cg_options *opts, const char *sym, int64_t arena) {
  ir_computation *entry = cm->ir->entry;
  LLVMBuilderRef b = cm->b;
  int np = 0, nr = ir_shape_count_leaves(entry->root->shape);
  for (int i = 0; i < entry->n_params; i++)
    np += ir_shape_count_leaves(entry->params[i]->shape);
  const ir_shape **pleaves = calloc((size_t)np + 1, sizeof *pleaves), **rleaves = calloc((size_t)nr + 1, sizeof *rleaves);
  char **pnames = calloc((size_t)np + 1, sizeof *pnames), **rnames = calloc((size_t)nr + 1, sizeof *rnames);
  int k = 0, kn = 0;
  for (int i = 0; i < entry->n_params; i++) {
    collect_leaves(entry->params[i]->shape, pleaves, &k);
    leaf_names(entry->params[i]->shape, entry->params[i]->name.p, pnames, &kn);
  }
  k = kn = 0;
  collect_leaves(entry->root->shape, rleaves, &k);
  leaf_names(entry->root->shape, entry->root->name.p, rnames, &kn);

  char name[512];
  snprintf(name, sizeof name, "%s_run", sym);
  LLVMValueRef run = emit_run(cm, name, arena);
  LLVMTypeRef run_t = LLVMGlobalGetValueType(run);

  /* SYM(ctx, p0, ..., r0, ...) */
  int nargs = 1 + np + nr;
  LLVMTypeRef *ats = calloc((size_t)nargs, sizeof *ats);
  for (int i = 0; i < nargs; i++)
    ats[i] = cm->ptr;
  LLVMTypeRef typed_t = LLVMFunctionType(cm->ptr, ats, (unsigned)nargs, 0);
  LLVMValueRef typed = LLVMAddFunction(cm->mod, sym, typed_t);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(cm->ctx, typed, "entry"));
  LLVMValueRef parr = LLVMBuildAlloca(b, LLVMArrayType2(cm->ptr, (uint64_t)(np ? np : 1)), "params");
  LLVMValueRef rarr = LLVMBuildAlloca(b, LLVMArrayType2(cm->ptr, (uint64_t)(nr ? nr : 1)), "results");
  for (int i = 0; i < np; i++)
    LLVMBuildStore(b, LLVMGetParam(typed, (unsigned)(1 + i)),
                   LLVMBuildGEP2(b, cm->ptr, parr, (LLVMValueRef[]){cg_i64(cm, i)}, 1, ""));
  for (int i = 0; i < nr; i++)
    LLVMBuildStore(b, LLVMGetParam(typed, (unsigned)(1 + np + i)),
                   LLVMBuildGEP2(b, cm->ptr, rarr, (LLVMValueRef[]){cg_i64(cm, i)}, 1, ""));
  LLVMBuildRet(b, LLVMBuildCall2(b, run_t, run, (LLVMValueRef[]){LLVMGetParam(typed, 0), parr, rarr}, 3, "st"));
  free(ats);

  /* The descriptor (field order and types mirror hlo_array_desc / hlo_module_desc). */
  LLVMTypeRef desc_t = LLVMStructCreateNamed(cm->ctx, "hlo_array_desc");
  LLVMStructSetBody(desc_t, (LLVMTypeRef[]){cm->i32, cm->i32, cm->ptr, cm->i64, cm->ptr}, 5, 0);
  LLVMTypeRef mod_t = LLVMStructCreateNamed(cm->ctx, "hlo_module_desc");
  LLVMTypeRef mfields[] = {cm->i32, cm->i32, cm->ptr, cm->ptr, cm->ptr, cm->i32, cm->ptr, cm->i32,
                           cm->ptr, cm->ptr, cm->ptr, cm->i32, cm->i32, cm->i32, cm->i64, cm->i32, cm->ptr, cm->ptr};
  LLVMStructSetBody(mod_t, mfields, 18, 0);
  unsigned long long size = LLVMABISizeOfType(LLVMGetModuleDataLayout(cm->mod), mod_t);
  LLVMValueRef pd = array_descs(cm, desc_t, pleaves, pnames, np, "param");
  LLVMValueRef rd = array_descs(cm, desc_t, rleaves, rnames, nr, "result");
  uint32_t features = opts->elided_constants ? HLO_FEATURE_ELIDED_CONSTANTS : 0;
  LLVMValueRef vals[] = {LLVMConstInt(cm->i32, HLO_ABI_VERSION, 0), LLVMConstInt(cm->i32, size, 0),
                         const_string(cm, cm->ir->name.p, "module.name"), const_string(cm, sym, "module.symbol"),
                         const_string(cm, HLOC_VERSION, "module.version"), LLVMConstInt(cm->i32, (unsigned long long)np, 0),
                         pd, LLVMConstInt(cm->i32, (unsigned long long)nr, 0), rd, run, typed,
                         LLVMConstInt(cm->i32, features, 0),
                         LLVMConstInt(cm->i32, (unsigned long long)(cm->ir->replica_count ? cm->ir->replica_count
                                                                     : cm->ir->inferred_replica_count ? cm->ir->inferred_replica_count : 1), 0),
                         LLVMConstInt(cm->i32, (unsigned long long)(cm->ir->num_partitions ? cm->ir->num_partitions : 1), 0),
                         cg_i64(cm, arena), NULL, NULL, NULL};
  int32_t n_targets = 0;
  vals[16] = custom_call_targets(cm, &n_targets);
  vals[15] = LLVMConstInt(cm->i32, (unsigned long long)n_targets, 0);
  vals[17] = result_donors(cm, nr);
  LLVMValueRef desc = cg_const_global(cm, LLVMConstNamedStruct(mod_t, vals, 18), "module.desc");
  LLVMTypeRef describe_t = LLVMFunctionType(cm->ptr, NULL, 0, 0);
  snprintf(name, sizeof name, "%s_describe", sym);
  const char *names[2] = {name, "hlo_module_describe"};
  for (int i = 0; i < 2; i++) {
    LLVMValueRef fn = LLVMAddFunction(cm->mod, names[i], describe_t);
    if (i == 1)
      LLVMSetLinkage(fn, LLVMWeakAnyLinkage);
    LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(cm->ctx, fn, "entry"));
    LLVMBuildRet(b, desc);
  }
  for (int i = 0; i < np; i++)
    free(pnames[i]);
  for (int i = 0; i < nr; i++)
    free(rnames[i]);
  free(pnames);
  free(rnames);
  free(pleaves);
  free(rleaves);
}

hlo_status cg_emit_module(ir_module *m, cg_options *opts, LLVMContextRef ctx, LLVMTargetMachineRef tm,
                          LLVMModuleRef *out_mod) {
  *out_mod = NULL;
  cg_module cm = {0};
  cm.ctx = ctx;
  cm.ir = m;
  cm.mod = LLVMModuleCreateWithNameInContext(m->name.p, ctx);
  if (tm) {
    char *triple = LLVMGetTargetMachineTriple(tm);
    LLVMSetTarget(cm.mod, triple);
    LLVMDisposeMessage(triple);
    LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
    LLVMSetModuleDataLayout(cm.mod, td);
    LLVMDisposeTargetData(td);
  }
  cm.b = LLVMCreateBuilderInContext(ctx);
  cg_module_types_init(&cm, ctx);
  cm.comp_fn_type = LLVMFunctionType(cm.ptr, (LLVMTypeRef[]){cm.ptr, cm.ptr, cm.ptr, cm.ptr}, 4, 0);
  cm.comp_fns = calloc((size_t)m->n_comps + 1, sizeof *cm.comp_fns);
  cm.frame_bytes = calloc((size_t)m->n_comps + 1, sizeof *cm.frame_bytes);
  cm.frame_globals = calloc((size_t)m->n_comps + 1, sizeof *cm.frame_globals);
  cm.kernel_scratch = calloc((size_t)m->n_comps + 1, sizeof *cm.kernel_scratch);
  cm.assignment = opts->assignment;
  cm.opts = opts;
  opts->n_largest = 0;
  for (int i = 0; i < m->n_comps; i++) {
    m->comps[i]->id = i;
    char name[600];
    snprintf(name, sizeof name, "hlo.comp.%d.%s", i, m->comps[i]->name.p);
    cm.comp_fns[i] = LLVMAddFunction(cm.mod, name, cm.comp_fn_type);
    LLVMSetLinkage(cm.comp_fns[i], LLVMInternalLinkage);
    snprintf(name, sizeof name, "hlo.frame.%d", i);
    cm.frame_globals[i] = LLVMAddGlobal(cm.mod, cm.i64, name);
    LLVMSetGlobalConstant(cm.frame_globals[i], 1);
    LLVMSetLinkage(cm.frame_globals[i], LLVMPrivateLinkage);
  }
  buffer_plan *own_plan = NULL;
  cm.plan = opts->plan;
  if (!cm.plan && !(cm.error = buffer_plan_build(m, &own_plan)))
    cm.plan = own_plan;
  bool *inlined = fused_only(m);
  for (int i = 0; i < m->n_comps && !cm.error; i++) {
    if (inlined && inlined[i])
      emit_empty(&cm, m->comps[i]);
    else
      emit_computation(&cm, m->comps[i]);
  }
  free(inlined);
  char *sym = opts->symbol ? strdup(opts->symbol) : cg_symbol_for_module(m->name.p);
  int64_t arena = cm.error ? 0 : arena_bytes(&cm);
  opts->arena_bytes = arena;
  if (!cm.error)
    emit_abi(&cm, opts, sym, arena);
  free(sym);
  LLVMDisposeBuilder(cm.b);
  free(cm.comp_fns);
  free(cm.frame_bytes);
  free(cm.frame_globals);
  free(cm.kernel_scratch);
  buffer_plan_free(own_plan);
  if (cm.error) {
    LLVMDisposeModule(cm.mod);
    return cm.error;
  }
  *out_mod = cm.mod;
  return NULL;
}
