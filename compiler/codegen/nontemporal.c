/* nontemporal.c — non-temporal stores for large loop results (cg_mark_nontemporal_stores,
 * codegen.h).  fused.c marks the range functions of loops whose result is large
 * (cg_options.nontemporal_min_bytes) with the attribute CG_NONTEMPORAL_ATTR and writes them so
 * that, where the result buffer is 64-byte aligned, LLVM can prove its vector stores aligned.
 * Here, after LLVM's optimization (the vectorizer refuses loops whose scalar stores already
 * carry !nontemporal without that alignment), those vector stores, except those into the
 * function's own stack arrays, get !nontemporal, which x86 lowers to streaming stores: the
 * result goes to memory without being read into the cache first and without evicting the
 * operands.  Small copies LLVM made of row-copying loops (a staged transpose tile's rows) are
 * written out as such vector stores first (expand_copies).  Scalar stores (a loop's
 * remainder) stay ordinary.
 * Measurements: docs/performance.md, "Non-temporal stores".  Tests: golden_at.nontemporal
 * (tests/golden.cmake) runs the golden suite with every eligible result streamed,
 * cli.hloc.nontemporal_asm checks the instructions, codegen_test an unaligned result.
 */
#include <string.h>

#include "codegen/cg_internal.h"
#include "codegen/codegen.h"

/* Whether p points into a stack array of the function (a row fusion's stash, a reduction's
 * lanes): through address arithmetic to an alloca.  Such rows are read again at once and stay
 * ordinary. */
static bool on_stack(LLVMValueRef p) {
  for (int depth = 0; p && depth < 64; depth++) {
    if (LLVMIsAAllocaInst(p))
      return true;
    if (!LLVMIsAGetElementPtrInst(p) && !LLVMIsABitCastInst(p))
      return false;
    p = LLVMGetOperand(p, 0);
  }
  return true; /* unknown: do not stream */
}

enum { NT_MEMCPY_MAX = 1024 }; /* bytes of a copy that expand_copies writes out */

/* The alignment a call's argument k (0-based) carries as a parameter attribute, or 1. */
static unsigned arg_align(LLVMValueRef call, unsigned k) {
  static const char name[] = "align";
  LLVMAttributeRef a = LLVMGetCallSiteEnumAttribute(call, k + 1, LLVMGetEnumAttributeKindForName(name, sizeof name - 1));
  return a ? (unsigned)LLVMGetEnumAttributeValue(a) : 1;
}

/* LLVM turns a loop that copies a row into llvm.memcpy (a transpose tile's row copied from its
 * stack array, fused.c stage_transpose): a small copy of a constant length to an aligned
 * address that is not the stack becomes vector loads and stores here, which mark_stores then
 * streams like the stores of any other loop.  Returns how many copies it rewrote. */
static int expand_copies(LLVMValueRef fn, LLVMBuilderRef b) {
  LLVMContextRef ctx = LLVMGetModuleContext(LLVMGetGlobalParent(fn));
  int done = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb), next; in; in = next) {
      next = LLVMGetNextInstruction(in);
      if (!LLVMIsACallInst(in) || LLVMGetNumArgOperands(in) != 4)
        continue;
      LLVMValueRef callee = LLVMGetCalledValue(in);
      size_t len = 0;
      const char *name = callee && LLVMIsAFunction(callee) ? LLVMGetValueName2(callee, &len) : "";
      LLVMValueRef n = LLVMGetOperand(in, 2), vol = LLVMGetOperand(in, 3);
      if (strncmp(name, "llvm.memcpy.", 12) || !LLVMIsAConstantInt(n) || !LLVMIsAConstantInt(vol) ||
          LLVMConstIntGetZExtValue(vol))
        continue;
      unsigned long long bytes = LLVMConstIntGetZExtValue(n);
      unsigned dst_align = arg_align(in, 0), src_align = arg_align(in, 1);
      unsigned chunk = dst_align >= 32 && bytes % 32 == 0 ? 32 : 16;
      if (bytes == 0 || bytes > NT_MEMCPY_MAX || bytes % chunk || dst_align < chunk || on_stack(LLVMGetOperand(in, 0)))
        continue;
      LLVMTypeRef vt = LLVMVectorType(LLVMInt32TypeInContext(ctx), chunk / 4), i8 = LLVMInt8TypeInContext(ctx);
      LLVMPositionBuilderBefore(b, in);
      for (unsigned long long off = 0; off < bytes; off += chunk) {
        LLVMValueRef at = LLVMConstInt(LLVMInt64TypeInContext(ctx), off, 0);
        LLVMValueRef v = LLVMBuildLoad2(b, vt, LLVMBuildGEP2(b, i8, LLVMGetOperand(in, 1), &at, 1, ""), "");
        LLVMSetAlignment(v, src_align < chunk ? src_align : chunk);
        LLVMSetAlignment(LLVMBuildStore(b, v, LLVMBuildGEP2(b, i8, LLVMGetOperand(in, 0), &at, 1, "")), chunk);
      }
      LLVMInstructionEraseFromParent(in);
      done++;
    }
  return done;
}

/* Marks the aligned vector stores of fn that do not write its stack; returns how many. */
static int mark_stores(LLVMValueRef fn, LLVMTargetDataRef dl, unsigned kind, LLVMValueRef one) {
  int marked = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
      if (!LLVMIsAStoreInst(in))
        continue;
      LLVMTypeRef t = LLVMTypeOf(LLVMGetOperand(in, 0));
      if (LLVMGetTypeKind(t) != LLVMVectorTypeKind)
        continue;
      unsigned long long size = LLVMStoreSizeOfType(dl, t);
      if (size < 16 || LLVMGetAlignment(in) < size || on_stack(LLVMGetOperand(in, 1)))
        continue;
      LLVMSetMetadata(in, kind, one);
      marked++;
    }
  return marked;
}

/* An sfence before each return of fn. */
static void fence_returns(LLVMModuleRef mod, LLVMValueRef fn) {
  static const char name[] = "llvm.x86.sse.sfence";
  LLVMValueRef sfence = LLVMGetIntrinsicDeclaration(mod, LLVMLookupIntrinsicID(name, sizeof name - 1), NULL, 0);
  LLVMTypeRef t = LLVMGlobalGetValueType(sfence);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetModuleContext(mod));
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
    LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
    if (term && LLVMIsAReturnInst(term)) {
      LLVMPositionBuilderBefore(b, term);
      LLVMBuildCall2(b, t, sfence, NULL, 0, "");
    }
  }
  LLVMDisposeBuilder(b);
}

void cg_mark_nontemporal_stores(LLVMModuleRef mod, bool x86) {
  if (!x86)
    return;
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  LLVMTargetDataRef dl = LLVMGetModuleDataLayout(mod);
  unsigned kind = LLVMGetMDKindIDInContext(ctx, "nontemporal", 11);
  LLVMMetadataRef md[1] = {LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(ctx), 1, 0))};
  LLVMValueRef one = LLVMMetadataAsValue(ctx, LLVMMDNodeInContext2(ctx, md, 1));
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    if (!LLVMGetStringAttributeAtIndex(fn, LLVMAttributeFunctionIndex, CG_NONTEMPORAL_ATTR,
                                       (unsigned)strlen(CG_NONTEMPORAL_ATTR)))
      continue;
    LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
    expand_copies(fn, b);
    LLVMDisposeBuilder(b);
    if (mark_stores(fn, dl, kind, one))
      fence_returns(mod, fn);
  }
}
