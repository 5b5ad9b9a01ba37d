/* emit_parallel.c — the object code of a shared object generated on several threads.  The
 * optimized module's functions are dealt into chunks by size, a few per thread; the module,
 * its data left out, goes to bitcode once; each thread takes the next chunk from a queue,
 * reads the bitcode into an LLVM context of its own (a context is one thread's at a time),
 * keeps that chunk's functions and writes their object file.  The original module keeps the
 * data (global initializers) and becomes one more object; compile.c links them all into one
 * .so.  Local symbols become hidden ones first, so the objects reach each other's functions
 * and data inside the .so and nothing more is exported.  A queue rather than one partition
 * per thread: a function's code-generation time follows its instruction count only roughly
 * (ssd_mobilenet's two halves by count took 0.75 and 1.14 s).  Each function reaches the
 * code generator as the same optimized IR for the same target, and the code generator fuses
 * no floating-point operations the IR does not (fmuladd): registers and instruction order
 * may differ with the chunks, results do not.
 * Tests: tests/hloc_cli_cases.sh (cli.hloc.codegen_threads).
 */
#include <llvm-c/BitReader.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "driver/driver_internal.h"

/* Below this many LLVM instructions the module is written as one object unless threads were
 * asked for: a chunk's start-up (the module read back into a new context, 30-45 ms for
 * ssd_mobilenet) costs more than it saves. */
#define PAR_MIN_INSTRUCTIONS 4000
#define PAR_CHUNKS_PER_THREAD 3

static bool is_defined_function(LLVMValueRef fn) { return LLVMCountBasicBlocks(fn) > 0; }

/* Functions in mod, declarations included: the index space of a deal. */
static int count_functions(LLVMModuleRef mod) {
  int n = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
    n++;
  return n;
}

int drv_codegen_threads(LLVMModuleRef mod, int threads, bool asked) {
  if (threads < 2 || LLVMGetFirstGlobalAlias(mod) || LLVMGetFirstGlobalIFunc(mod))
    return 0;
  int64_t total = 0, defined = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
    if (is_defined_function(fn)) {
      total += (int64_t)cg_count_instructions(fn);
      defined++;
    }
  if (defined < 2 || (!asked && total < PAR_MIN_INSTRUCTIONS))
    return 0;
  return defined < threads ? (int)defined : threads;
}

/* A local symbol (internal, private) becomes a hidden one, named when it had no name. */
static void make_hidden(LLVMValueRef g, int *unnamed) {
  LLVMLinkage l = LLVMGetLinkage(g);
  if (l != LLVMInternalLinkage && l != LLVMPrivateLinkage)
    return;
  size_t len;
  LLVMGetValueName2(g, &len);
  if (len == 0) {
    char name[32];
    snprintf(name, sizeof name, "hloc.part.%d", (*unnamed)++);
    LLVMSetValueName2(g, name, strlen(name));
  }
  LLVMSetLinkage(g, LLVMExternalLinkage);
  LLVMSetVisibility(g, LLVMHiddenVisibility);
}

static void make_local_symbols_hidden(LLVMModuleRef mod) {
  int unnamed = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
    if (is_defined_function(fn))
      make_hidden(fn, &unnamed);
  for (LLVMValueRef g = LLVMGetFirstGlobal(mod); g; g = LLVMGetNextGlobal(g))
    if (LLVMGetInitializer(g))
      make_hidden(g, &unnamed);
}

/* fn's body leaves this module: a declaration of the same symbol takes its place (calls
 * keep their own calling convention and attributes). */
static void drop_function(LLVMModuleRef mod, LLVMValueRef fn) {
  LLVMValueRef decl = LLVMAddFunction(mod, "", LLVMGlobalGetValueType(fn));
  LLVMSetFunctionCallConv(decl, LLVMGetFunctionCallConv(fn));
  LLVMSetLinkage(decl, LLVMExternalLinkage); /* a declaration's only linkage; weak definitions too */
  LLVMSetVisibility(decl, LLVMGetVisibility(fn));
  size_t len;
  const char *name = LLVMGetValueName2(fn, &len);
  char *copy = strndup(name, len);
  LLVMReplaceAllUsesWith(fn, decl);
  LLVMDeleteFunction(fn);
  LLVMSetValueName2(decl, copy ? copy : "", copy ? len : 0);
  free(copy);
}

/* Sizes of the functions to deal, for qsort: the largest first, then in module order. */
typedef struct fn_size {
  int64_t size;
  int index;
} fn_size;

static int larger_first(const void *a, const void *b) {
  const fn_size *x = a, *y = b;
  return x->size != y->size ? (x->size < y->size ? 1 : -1) : x->index - y->index;
}

/* owner[i] for the i-th function: the largest first, each to the chunk with the fewest
 * instructions so far (ties to the lowest index); -1 for declarations. */
static int *deal_functions(LLVMModuleRef mod, int chunks, int *n_functions) {
  int n = count_functions(mod);
  int *owner = malloc(((size_t)n + 1) * sizeof *owner);
  fn_size *sizes = malloc(((size_t)n + 1) * sizeof *sizes);
  int64_t load[DRV_MAX_CODEGEN_CHUNKS] = {0};
  if (!owner || !sizes) {
    free(owner);
    free(sizes);
    return NULL;
  }
  int i = 0, defined = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn), i++) {
    owner[i] = -1;
    if (is_defined_function(fn))
      sizes[defined++] = (fn_size){(int64_t)cg_count_instructions(fn) + 1, i};
  }
  qsort(sizes, (size_t)defined, sizeof *sizes, larger_first);
  for (int f = 0; f < defined; f++) {
    int c = 0;
    for (int q = 1; q < chunks; q++)
      if (load[q] < load[c])
        c = q;
    owner[sizes[f].index] = c;
    load[c] += sizes[f].size;
  }
  free(sizes);
  *n_functions = n;
  return owner;
}

/* The module's data leaves it for a while: each initializer is kept in inits[] (globals in
 * order; NULL for declarations) and the globals become declarations. */
static LLVMValueRef *take_data(LLVMModuleRef mod) {
  int n = 0;
  for (LLVMValueRef g = LLVMGetFirstGlobal(mod); g; g = LLVMGetNextGlobal(g))
    n++;
  LLVMValueRef *inits = calloc((size_t)n + 1, sizeof *inits);
  if (!inits)
    return NULL;
  int i = 0;
  for (LLVMValueRef g = LLVMGetFirstGlobal(mod); g; g = LLVMGetNextGlobal(g), i++)
    if (LLVMGetLinkage(g) != LLVMAppendingLinkage) {
      inits[i] = LLVMGetInitializer(g);
      LLVMSetInitializer(g, NULL);
    }
  return inits;
}

static void give_back_data(LLVMModuleRef mod, LLVMValueRef *inits) {
  int i = 0;
  for (LLVMValueRef g = LLVMGetFirstGlobal(mod); g; g = LLVMGetNextGlobal(g), i++)
    if (inits[i])
      LLVMSetInitializer(g, inits[i]);
  free(inits);
}

/* What every thread shares: the bitcode (read-only), the deal, the target, the queue. */
typedef struct par_work {
  LLVMMemoryBufferRef bitcode; /* the module without its data */
  const int *owner;
  int n_functions, chunks;
  LLVMTargetRef target;
  const char *triple, *cpu, *features;
  LLVMCodeGenOptLevel level;
  const char *const *objs; /* objs[1 + c]: chunk c's object file */
  _Atomic int next;        /* the next chunk to take */
  pthread_mutex_t lock;    /* guards error */
  char *error;             /* the first failure (malloc'd), or NULL */
} par_work;

static void work_failed(par_work *w, const char *what, char *llvm_msg) {
  char *msg = NULL;
  if (asprintf(&msg, "%s: %s", what, llvm_msg ? llvm_msg : "LLVM failed") < 0)
    msg = NULL;
  LLVMDisposeMessage(llvm_msg);
  pthread_mutex_lock(&w->lock);
  if (!w->error)
    w->error = msg ? msg : strdup(what);
  else
    free(msg);
  pthread_mutex_unlock(&w->lock);
}

/* Keeps chunk c's function bodies in mod (read back from the bitcode: the same functions
 * in the same order) and drops the special arrays (llvm.used, llvm.global_ctors), which
 * the data object carries.  False when the functions do not line up. */
static bool keep_chunk(LLVMModuleRef mod, const par_work *w, int c) {
  int n = count_functions(mod);
  if (n != w->n_functions)
    return false;
  LLVMValueRef fn = LLVMGetFirstFunction(mod);
  for (int idx = 0; idx < n; idx++) { /* the declarations that take their places come after */
    LLVMValueRef next = LLVMGetNextFunction(fn);
    if (is_defined_function(fn) && w->owner[idx] != c)
      drop_function(mod, fn);
    fn = next;
  }
  for (LLVMValueRef g = LLVMGetFirstGlobal(mod), next; g; g = next) {
    next = LLVMGetNextGlobal(g);
    if (LLVMGetLinkage(g) == LLVMAppendingLinkage)
      LLVMDeleteGlobal(g);
  }
  return true;
}

static void emit_chunk(par_work *w, int c) {
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef mod = NULL;
  char *err = NULL;
  if (LLVMParseBitcodeInContext2(ctx, w->bitcode, &mod)) {
    work_failed(w, "reading a code chunk back from bitcode", NULL);
  } else if (!keep_chunk(mod, w, c)) {
    work_failed(w, "a code chunk's functions differ from the module's", NULL);
  } else {
    LLVMTargetMachineRef tm = LLVMCreateTargetMachine(w->target, w->triple, w->cpu, w->features, w->level,
                                                      LLVMRelocPIC, LLVMCodeModelDefault);
    if (!tm)
      work_failed(w, "creating a target machine for a code chunk", NULL);
    else if (LLVMTargetMachineEmitToFile(tm, mod, (char *)w->objs[1 + c], LLVMObjectFile, &err))
      work_failed(w, w->objs[1 + c], err);
    if (tm)
      LLVMDisposeTargetMachine(tm);
  }
  if (mod)
    LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
}

static void *take_chunks(void *arg) {
  par_work *w = arg;
  for (int c; (c = atomic_fetch_add(&w->next, 1)) < w->chunks;)
    emit_chunk(w, c);
  return NULL;
}

int drv_codegen_objects(int threads) { return threads ? 1 + threads * PAR_CHUNKS_PER_THREAD : 1; }

/* The functions without the data to bitcode; then mod keeps the data and no function body. */
static hlo_status split_module(LLVMModuleRef mod, LLVMMemoryBufferRef *bitcode) {
  LLVMValueRef *inits = take_data(mod);
  if (!inits)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory splitting the module");
  *bitcode = LLVMWriteBitcodeToMemoryBuffer(mod);
  give_back_data(mod, inits);
  if (!*bitcode)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory writing the module's bitcode");
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod), next; fn; fn = next) {
    next = LLVMGetNextFunction(fn);
    if (is_defined_function(fn))
      drop_function(mod, fn);
  }
  return NULL;
}

hlo_status drv_emit_partitioned(LLVMTargetMachineRef tm, LLVMCodeGenOptLevel level, LLVMModuleRef mod, int threads,
                                const char *const *objs) {
  make_local_symbols_hidden(mod);
  par_work w = {.chunks = drv_codegen_objects(threads) - 1, .target = LLVMGetTargetMachineTarget(tm),
                .level = level, .objs = objs};
  int *owner = deal_functions(mod, w.chunks, &w.n_functions);
  if (!owner)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory dealing functions into chunks");
  w.owner = owner;
  hlo_status s = split_module(mod, &w.bitcode);
  if (s) {
    free(owner);
    return s;
  }
  char *triple = LLVMGetTargetMachineTriple(tm), *cpu = LLVMGetTargetMachineCPU(tm),
       *features = LLVMGetTargetMachineFeatureString(tm);
  w.triple = triple;
  w.cpu = cpu;
  w.features = features;
  pthread_mutex_init(&w.lock, NULL);
  pthread_t helpers[DRV_MAX_CODEGEN_THREADS];
  int started = 0;
  while (started < threads - 1 && pthread_create(&helpers[started], NULL, take_chunks, &w) == 0)
    started++;
  char *err = NULL;
  if (LLVMTargetMachineEmitToFile(tm, mod, (char *)objs[0], LLVMObjectFile, &err)) /* the data */
    work_failed(&w, objs[0], err);
  take_chunks(&w);
  for (int t = 0; t < started; t++)
    pthread_join(helpers[t], NULL);
  if (w.error)
    s = hlo_status_make(HLO_INTERNAL, "%s", w.error);
  free(w.error);
  pthread_mutex_destroy(&w.lock);
  LLVMDisposeMemoryBuffer(w.bitcode);
  LLVMDisposeMessage(triple);
  LLVMDisposeMessage(cpu);
  LLVMDisposeMessage(features);
  free(owner);
  return s;
}
