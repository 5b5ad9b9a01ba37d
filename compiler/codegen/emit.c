/* emit.c — the floor of the code generator: small LLVM emission helpers that every lowering
 * file uses and that call nothing above them (the module's scalar types, constants, private
 * constant globals, entry-block allocas, tables of pointers).  Nothing here knows an opcode, a
 * plan or a kernel.
 * Tests: every golden test goes through these.
 */
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
