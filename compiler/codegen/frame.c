/* frame.c — a computation function's state while it is emitted: the buffers of its values
 * (from the buffer plan: planned frame offsets, the caller's result buffers, heap and scratch
 * for what the plan did not place, the report of `hloc -v`), its values, opening and closing
 * its body, calls to other computations' functions, and the scratch kernels borrow.  It calls
 * only the floor (emit.c, types.c) and the runtime's declarations; lowerings call it.
 * Tests: compiler/passes/buffer_plan_test.c (the plan), the golden and arena tests.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_internal.h"

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
void cg_report_add(cg_function *f, cg_report_line l) {
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
    cg_report_add(f, (cg_report_line){f->current, NULL, s, n});
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
void cg_report_print(const cg_function *f) {
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

void cg_collect_leaves(const ir_shape *s, const ir_shape **out, int *n) {
  if (s->et == IR_TUPLE) {
    for (int i = 0; i < s->n_elems; i++)
      cg_collect_leaves(s->elems[i], out, n);
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
    cg_collect_leaves(s, v.shapes, &k);
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
  cg_collect_leaves(in->shape, v.shapes, &k);
  for (int i = 0; i < v.n; i++)
    v.leaves[i] = f->result_leaves[i];
  return v;
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

LLVMValueRef cg_kernel_scratch(cg_function *f, int64_t bytes, const void *owner) {
  if (f->owns_frame || !f->frame_arg || (f->scratch_owner && f->scratch_owner != owner))
    return NULL;
  f->scratch_owner = owner;
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

/* ---- function bodies -------------------------------------------------------------------- */

/* Opens a function body: entry block (allocas, the status slot), body block. */
void cg_function_begin(cg_function *f, cg_module *cm, ir_computation *c, LLVMValueRef fn) {
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
void cg_function_end(cg_function *f) {
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
cg_value cg_leaves_from_array(cg_function *f, LLVMValueRef arr, int *k, const ir_shape *shape, const char *name) {
  cg_module *cm = f->cm;
  cg_value v;
  v.n = ir_shape_count_leaves(shape);
  v.leaves = calloc((size_t)v.n + 1, sizeof *v.leaves);
  v.shapes = calloc((size_t)v.n + 1, sizeof *v.shapes);
  int j = 0;
  cg_collect_leaves(shape, v.shapes, &j);
  for (int i = 0; i < v.n; i++, (*k)++) {
    LLVMValueRef slot = LLVMBuildGEP2(cm->b, cm->ptr, arr, (LLVMValueRef[]){cg_i64(cm, *k)}, 1, "slot");
    v.leaves[i] = LLVMBuildLoad2(cm->b, cm->ptr, slot, name);
  }
  return v;
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
void cg_free_dead_buffers(cg_function *f, int i, const int *last) {
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
