/* emit.c — the floor of the code generator: small LLVM emission helpers that every lowering
 * file uses and that call nothing above them (the module's scalar types, constants, private
 * constant globals, entry-block allocas, tables of pointers).  Nothing here knows an opcode, a
 * plan or a kernel.
 * Tests: every golden test goes through these.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_internal.h"

void cg_module_types_init(cg_module *cm, LLVMContextRef ctx) {
  cm->ptr = LLVMPointerTypeInContext(ctx, 0);
  cm->i1 = LLVMInt1TypeInContext(ctx);
  cm->i8 = LLVMInt8TypeInContext(ctx);
  cm->i16 = LLVMInt16TypeInContext(ctx);
  cm->i32 = LLVMInt32TypeInContext(ctx);
  cm->i64 = LLVMInt64TypeInContext(ctx);
  cm->f16 = LLVMHalfTypeInContext(ctx);
  cm->f32 = LLVMFloatTypeInContext(ctx);
  cm->f64 = LLVMDoubleTypeInContext(ctx);
  cm->void_t = LLVMVoidTypeInContext(ctx);
}

LLVMValueRef cg_i64(cg_module *cm, int64_t v) { return LLVMConstInt(cm->i64, (unsigned long long)v, 1); }

LLVMValueRef cg_const_global(cg_module *cm, LLVMValueRef init, const char *name) {
  LLVMValueRef g = LLVMAddGlobal(cm->mod, LLVMTypeOf(init), name);
  LLVMSetInitializer(g, init);
  LLVMSetGlobalConstant(g, 1);
  LLVMSetLinkage(g, LLVMPrivateLinkage);
  return g;
}

LLVMValueRef cg_const_i64_table(cg_module *cm, const int64_t *v, int64_t n, const char *name) {
  LLVMValueRef small[64], *c = n <= 64 ? small : malloc(sizeof *c * (size_t)n);
  if (!c)
    return NULL;
  for (int64_t i = 0; i < n; i++)
    c[i] = cg_i64(cm, v[i]);
  LLVMValueRef g = cg_const_global(cm, LLVMConstArray2(cm->i64, c, (uint64_t)n), name);
  LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
  if (c != small)
    free(c);
  return g;
}

LLVMValueRef cg_entry_alloca(cg_function *f, LLVMTypeRef t, const char *name) {
  LLVMBuilderRef b = f->cm->b;
  LLVMBasicBlockRef cur = LLVMGetInsertBlock(b);
  LLVMValueRef first = LLVMGetFirstInstruction(f->entry_bb);
  if (first)
    LLVMPositionBuilderBefore(b, first);
  else
    LLVMPositionBuilderAtEnd(b, f->entry_bb);
  LLVMValueRef a = LLVMBuildAlloca(b, t, name);
  LLVMPositionBuilderAtEnd(b, cur);
  return a;
}

LLVMValueRef cg_ptr_table(cg_function *f, LLVMValueRef *ptrs, int n, const char *name) {
  cg_module *cm = f->cm;
  LLVMValueRef arr = cg_entry_alloca(f, LLVMArrayType2(cm->ptr, (uint64_t)(n ? n : 1)), name);
  for (int i = 0; i < n; i++)
    LLVMBuildStore(cm->b, ptrs[i] ? ptrs[i] : LLVMConstNull(cm->ptr),
                   LLVMBuildGEP2(cm->b, cm->ptr, arr, (LLVMValueRef[]){cg_i64(cm, i)}, 1, "slot"));
  return arr;
}

/* ---- errors ---------------------------------------------------------------------------- */

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

/* ---- loops, indices, copies ------------------------------------------------------------- */

void cg_copy_leaf(cg_function *f, LLVMValueRef dst, LLVMValueRef src, const ir_shape *s) {
  int64_t bytes;
  if (!ir_etype_is_array(s->et) || !ir_shape_byte_size(s, &bytes) || bytes == 0)
    return;
  if (bytes >= CG_PARALLEL_COPY_MIN_BYTES && f->ctx_arg) { /* split over the pool */
    cg_runtime_call(f->cm, CG_RT_hlo_rt_copy, (LLVMValueRef[]){f->ctx_arg, dst, src, cg_i64(f->cm, bytes)}, 4, "");
    return;
  }
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

/* ---- intrinsics and statuses ------------------------------------------------------------ */

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

void cg_add_attr(cg_module *cm, LLVMValueRef fn, unsigned index, const char *name) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  LLVMAddAttributeAtIndex(fn, index, LLVMCreateEnumAttribute(cm->ctx, kind, 0));
}
