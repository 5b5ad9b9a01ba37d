/* rt_abi_test.c — the runtime ABI is described once (hlo/rt_abi.def): every row is a function
 * libhlort defines (this test takes each one's address through hlo/rt.h's prototype, so a row
 * without a definition does not link), the code generator declares each row with the LLVM
 * type of its C prototype, and a call whose arguments differ from the row is refused
 * (cg_runtime_args_ok).  tests/rt_abi.cmake checks the other direction: a runtime definition
 * that differs from its row does not compile.
 */
#include <stdio.h>
#include <string.h>

#include "codegen/cg_internal.h"
#include "hlo/rt.h"

static int failures;
#define CHECK(cond, ...)                                    \
  do {                                                      \
    if (!(cond)) {                                          \
      fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);       \
      fprintf(stderr, __VA_ARGS__);                         \
      fputc('\n', stderr);                                  \
      failures++;                                           \
    }                                                       \
  } while (0)

/* Every row, by name and address, from the C side. */
typedef struct rt_row {
  const char *name;
  void (*fn)(void);
  int n_params; /* counted from the C prototype's parameter list */
} rt_row;

#define UNPAREN(...) __VA_ARGS__
#define HLO_RT_ARG(ctype, kind, name) 0
#define HLO_RT_FN(ret, name, params) {#name, (void (*)(void))name, (int)sizeof((char[]){UNPAREN params})},
static const rt_row rows[] = {
#include "hlo/rt_abi.def"
};

int main(void) {
  LLVMContextRef ctx = LLVMContextCreate();
  cg_module cm = {0};
  cm.ctx = ctx;
  cm.mod = LLVMModuleCreateWithNameInContext("rt_abi_test", ctx);
  cm.b = LLVMCreateBuilderInContext(ctx);
  cg_module_types_init(&cm, ctx);

  CHECK(sizeof rows / sizeof rows[0] == CG_RT_COUNT, "%zu rows, %d enumerators", sizeof rows / sizeof rows[0],
        (int)CG_RT_COUNT);
  for (int i = 0; i < CG_RT_COUNT; i++) {
    const rt_row *r = &rows[i];
    /* (VOID()) counts as one parameter on the C side: a function of no parameters. */
    int c_params = r->n_params;
    CHECK(r->fn != NULL, "%s: no definition", r->name);
    CHECK(strcmp(cg_runtime_name((cg_rt_fn)i), r->name) == 0, "row %d: %s vs %s", i, cg_runtime_name((cg_rt_fn)i),
          r->name);
    LLVMValueRef decl = cg_runtime(&cm, (cg_rt_fn)i);
    LLVMTypeRef ft = cg_runtime_type(&cm, (cg_rt_fn)i);
    CHECK(LLVMGlobalGetValueType(decl) == ft, "%s: declared with another type", r->name);
    CHECK(cg_runtime(&cm, (cg_rt_fn)i) == decl, "%s: declared twice", r->name);
    unsigned n = LLVMCountParamTypes(ft);
    CHECK((int)n == c_params || (n == 0 && c_params == 1), "%s: %u LLVM parameters, %d in C", r->name, n, c_params);

    /* The row's own argument types pass; one fewer, one more, or one of another type do not. */
    LLVMTypeRef types[32];
    LLVMValueRef args[32];
    LLVMGetParamTypes(ft, types);
    for (unsigned k = 0; k < n; k++)
      args[k] = LLVMGetUndef(types[k]);
    CHECK(cg_runtime_args_ok(&cm, (cg_rt_fn)i, args, n), "%s: its own types refused", r->name);
    if (n > 0)
      CHECK(!cg_runtime_args_ok(&cm, (cg_rt_fn)i, args, n - 1), "%s: a missing argument passes", r->name);
    args[n] = LLVMGetUndef(cm.i64);
    CHECK(!cg_runtime_args_ok(&cm, (cg_rt_fn)i, args, n + 1), "%s: an extra argument passes", r->name);
    for (unsigned k = 0; k < n; k++) {
      LLVMValueRef keep = args[k];
      args[k] = LLVMGetUndef(types[k] == cm.i64 ? cm.i32 : cm.i64);
      CHECK(!cg_runtime_args_ok(&cm, (cg_rt_fn)i, args, n), "%s: argument %u of another type passes", r->name, k);
      args[k] = keep;
    }
  }

  /* Spot checks against what the C prototypes say. */
  LLVMTypeRef t = cg_runtime_type(&cm, CG_RT_hlo_rt_f32_to_f8);
  LLVMTypeRef p[2];
  LLVMGetParamTypes(t, p);
  CHECK(LLVMGetReturnType(t) == cm.i8 && p[0] == cm.i32 && p[1] == cm.f32, "hlo_rt_f32_to_f8: (i32, float) -> i8");
  t = cg_runtime_type(&cm, CG_RT_hlo_rt_replica_id);
  CHECK(LLVMCountParamTypes(t) == 1 && LLVMGetReturnType(t) == cm.i32, "hlo_rt_replica_id: (ctx) -> i32");

  LLVMDisposeBuilder(cm.b);
  LLVMDisposeModule(cm.mod);
  LLVMContextDispose(ctx);
  if (failures)
    fprintf(stderr, "rt_abi_test: %d failure(s)\n", failures);
  else
    printf("rt_abi_test: %d runtime functions, declarations and argument checks agree\n", (int)CG_RT_COUNT);
  return failures ? 1 : 0;
}
