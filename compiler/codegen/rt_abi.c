/* rt_abi.c — the runtime functions generated code calls, declared from hlo/rt_abi.def: the
 * same rows that give hlo/rt.h its prototypes give each function its LLVM type here, so no
 * lowering file types a runtime signature by hand.  A declaration is added to the module on
 * first use, so a module declares only what it calls, in the order of the first calls.
 * Calls whose arguments differ from the row are refused before LLVM sees them.
 * Calls nothing above emit.c's level.  Tests: rt_abi_test.c, every golden test.
 */
#include <stdlib.h>

#include "codegen/cg_internal.h"
#include "hlo/rt.h"

/* LLVM kinds of the vocabulary of hlo/rt_abi.def; 0 ends a parameter list. */
enum { CG_RT_K_END, CG_RT_K_VOID, CG_RT_K_PTR, CG_RT_K_I8, CG_RT_K_I32, CG_RT_K_I64, CG_RT_K_F32, CG_RT_K_F64 };

#define CG_RT_MAX_PARAMS 16

typedef struct cg_rt_sig {
  const char *name;
  unsigned char ret;
  unsigned char params[CG_RT_MAX_PARAMS + 1]; /* kinds, CG_RT_K_END-terminated; {VOID}: none */
} cg_rt_sig;

#define CG_RT_UNPAREN(...) __VA_ARGS__
#define HLO_RT_ARG(ctype, kind, name) CG_RT_K_##kind
#define HLO_RT_FN(ret, name, params) {#name, ret, {CG_RT_UNPAREN params}},
static const cg_rt_sig cg_rt_sigs[] = {
#include "hlo/rt_abi.def"
};

/* The row count matches the enumerators (cg_internal.h expands the same file). */
_Static_assert(sizeof cg_rt_sigs / sizeof cg_rt_sigs[0] == CG_RT_COUNT, "hlo/rt_abi.def rows");

/* Each vocabulary word's C type has its LLVM kind's representation: a row whose C type and
 * LLVM kind disagree (an int32_t passed as I64, a pointer as I64, ...) does not compile,
 * because its check below declares a parameter of negative array size. */
#define CG_RT_CHECK_VOID(t) 1
#define CG_RT_CHECK_PTR(t) _Generic((t)0, int64_t: -1, uint64_t: -1, default: sizeof(t) == sizeof(void *) ? 1 : -1)
#define CG_RT_CHECK_I8(t) _Generic((t)0, int8_t: 1, uint8_t: 1, default: -1)
#define CG_RT_CHECK_I32(t) _Generic((t)0, int32_t: 1, uint32_t: 1, default: -1)
#define CG_RT_CHECK_I64(t) _Generic((t)0, int64_t: 1, uint64_t: 1, default: -1)
#define CG_RT_CHECK_F32(t) _Generic((t)0, float: 1, default: -1)
#define CG_RT_CHECK_F64(t) _Generic((t)0, double: 1, default: -1)
#define HLO_RT_ARG(ctype, kind, name) char (*)[CG_RT_CHECK_##kind(ctype)]
#define HLO_RT_FN(ret, name, params) typedef void cg_rt_check_##name(ret, CG_RT_UNPAREN params);
#include "hlo/rt_abi.def"

static LLVMTypeRef kind_type(cg_module *cm, unsigned char k) {
  switch (k) {
  case CG_RT_K_VOID: return cm->void_t;
  case CG_RT_K_PTR: return cm->ptr;
  case CG_RT_K_I8: return cm->i8;
  case CG_RT_K_I32: return cm->i32;
  case CG_RT_K_I64: return cm->i64;
  case CG_RT_K_F32: return cm->f32;
  case CG_RT_K_F64: return cm->f64;
  }
  abort(); /* not a kind of the vocabulary */
}

static unsigned n_params(const cg_rt_sig *s) {
  unsigned n = 0;
  while (n < CG_RT_MAX_PARAMS && s->params[n] != CG_RT_K_END)
    n++;
  return n == 1 && s->params[0] == CG_RT_K_VOID ? 0 : n;
}

const char *cg_runtime_name(cg_rt_fn fn) { return cg_rt_sigs[fn].name; }

LLVMTypeRef cg_runtime_type(cg_module *cm, cg_rt_fn fn) {
  const cg_rt_sig *s = &cg_rt_sigs[fn];
  LLVMTypeRef params[CG_RT_MAX_PARAMS];
  unsigned n = n_params(s);
  for (unsigned i = 0; i < n; i++)
    params[i] = kind_type(cm, s->params[i]);
  return LLVMFunctionType(kind_type(cm, s->ret), params, n, 0);
}

LLVMValueRef cg_runtime(cg_module *cm, cg_rt_fn fn) {
  const char *name = cg_rt_sigs[fn].name;
  LLVMValueRef f = LLVMGetNamedFunction(cm->mod, name);
  return f ? f : LLVMAddFunction(cm->mod, name, cg_runtime_type(cm, fn));
}

bool cg_runtime_args_ok(cg_module *cm, cg_rt_fn fn, LLVMValueRef *args, unsigned n) {
  const cg_rt_sig *s = &cg_rt_sigs[fn];
  if (n != n_params(s))
    return false;
  for (unsigned i = 0; i < n; i++)
    if (LLVMTypeOf(args[i]) != kind_type(cm, s->params[i]))
      return false;
  return true;
}

LLVMValueRef cg_runtime_call_at(cg_module *cm, LLVMBuilderRef b, cg_rt_fn fn, LLVMValueRef *args, unsigned n,
                                const char *name) {
  if (!cg_runtime_args_ok(cm, fn, args, n)) {
    /* A lowering that passes what hlo/rt_abi.def does not say: a bug in hloc, not in the model. */
    fprintf(stderr, "hloc: internal error: a call of %s whose arguments differ from hlo/rt_abi.def\n",
            cg_rt_sigs[fn].name);
    abort();
  }
  return LLVMBuildCall2(b, cg_runtime_type(cm, fn), cg_runtime(cm, fn), args, n, name);
}

LLVMValueRef cg_runtime_call(cg_module *cm, cg_rt_fn fn, LLVMValueRef *args, unsigned n, const char *name) {
  return cg_runtime_call_at(cm, cm->b, fn, args, n, name);
}

LLVMValueRef cg_libm_fn(cg_module *cm, const char *name, LLVMTypeRef fn_type) {
  LLVMValueRef f = LLVMGetNamedFunction(cm->mod, name);
  return f ? f : LLVMAddFunction(cm->mod, name, fn_type);
}
