/* emit_parallel.c — a shared object optimized and its object code generated on several
 * threads.  The module's functions are dealt into chunks, a few per thread, a call-graph group
 * at a time: a function stays with every function it calls and takes the address of, except
 * through a hub, a computation that calls many kernels (form_groups).  The module, its data
 * left out, goes to bitcode once; each thread takes the next chunk from a queue, reads the
 * bitcode into an LLVM context of its own (a context is one thread's at a time), keeps that
 * chunk's functions, runs LLVM's pipeline on them (when the module was not optimized whole)
 * and writes their object file.  The original module keeps the data (global initializers) and
 * becomes one more object; compile.c links them all into one .so.  A function referenced from
 * outside its group becomes a hidden symbol first, so the objects reach each other's functions
 * and data inside the .so and nothing more is exported; the others stay local, as in the whole
 * module, so the optimizer may inline, specialize and delete them as before.  Constant data of
 * up to PAR_FOLDED_CONSTANT_BYTES goes with each chunk as available_externally, so loads of it
 * fold as they would in the whole module.  A queue rather than one partition per thread: a
 * function's time follows its instruction count only roughly.  LLVM's optimizer and code
 * generator keep floating-point semantics (hloc's IR carries no fast-math flags; fmuladd is
 * the only fusion and is in the IR), so a function's results do not depend on the chunks:
 * registers, instruction order and inlining may differ, results do not.
 * Tests: tests/hloc_cli_cases.sh (cli.hloc.codegen_threads: bit-for-bit results on 1 and 3
 * threads), golden_at.O3 (the golden suite with every module split).
 */
#include <llvm-c/BitReader.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
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
/* Constant data up to this size goes with every chunk that is optimized, for its loads to fold
 * (scalars, small tables); larger constants (a model's weights) only with the data object. */
#define PAR_FOLDED_CONSTANT_BYTES 65536
/* At most this many functions are made hubs to split an oversized group (form_groups). */
#define PAR_MAX_HUBS 16

static bool is_defined_function(LLVMValueRef fn) { return LLVMCountBasicBlocks(fn) > 0; }

static bool is_local(LLVMValueRef g) {
  LLVMLinkage l = LLVMGetLinkage(g);
  return l == LLVMInternalLinkage || l == LLVMPrivateLinkage;
}

static bool has_function_attribute(LLVMValueRef fn, const char *name) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  return LLVMGetEnumAttributeAtIndex(fn, LLVMAttributeFunctionIndex, kind) != NULL;
}

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

/* ---- the deal: call-graph groups into chunks ---- */

typedef struct fn_index {
  LLVMValueRef fn;
  int index;
} fn_index;

static int by_address(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)((const fn_index *)a)->fn, y = (uintptr_t)((const fn_index *)b)->fn;
  return x < y ? -1 : x > y;
}

/* The functions of a module by index, and each one's group and chunk. */
typedef struct par_deal {
  int n;
  LLVMValueRef *fns;  /* fns[i]: the i-th function in module order */
  fn_index *sorted;   /* fns by address, to find a function's index */
  bool *hub;          /* joins no group (below) */
  int *fan_out;       /* references to functions in each function's instructions */
  int *group;         /* union-find parents; after grouping, each function's group root */
  bool *cross;        /* referenced from outside its group: a hidden symbol */
  int *owner;         /* chunk of each function; -1 declarations */
} par_deal;

static void free_deal(par_deal *d) {
  free(d->fns);
  free(d->sorted);
  free(d->hub);
  free(d->fan_out);
  free(d->group);
  free(d->cross);
  free(d->owner);
}

static int index_of(const par_deal *d, LLVMValueRef fn) {
  fn_index key = {fn, 0};
  const fn_index *hit = bsearch(&key, d->sorted, (size_t)d->n, sizeof key, by_address);
  return hit ? hit->index : -1;
}

static int find_group(int *group, int i) {
  while (group[i] != i) {
    group[i] = group[group[i]];
    i = group[i];
  }
  return group[i];
}

/* The function an instruction is in, or -1 when the user is not an instruction (a constant:
 * a global's initializer, a constant expression). */
static int user_function(const par_deal *d, LLVMValueRef user) {
  if (!LLVMIsAInstruction(user))
    return -1;
  return index_of(d, LLVMGetBasicBlockParent(LLVMGetInstructionParent(user)));
}

/* Unites each function with the functions whose instructions call it or take its address,
 * except through hubs. */
static void group_functions(par_deal *d) {
  for (int i = 0; i < d->n; i++)
    d->group[i] = i;
  for (int i = 0; i < d->n; i++) {
    if (!is_defined_function(d->fns[i]) || d->hub[i])
      continue;
    for (LLVMUseRef u = LLVMGetFirstUse(d->fns[i]); u; u = LLVMGetNextUse(u)) {
      int j = user_function(d, LLVMGetUser(u));
      if (j >= 0 && !d->hub[j])
        d->group[find_group(d->group, i)] = find_group(d->group, j);
    }
  }
  for (int i = 0; i < d->n; i++)
    d->group[i] = find_group(d->group, i);
}

/* Marks the functions referenced from outside their group (by another group's instruction,
 * or by a constant: a global's initializer). */
static void mark_cross_references(par_deal *d) {
  for (int i = 0; i < d->n; i++)
    for (LLVMUseRef u = LLVMGetFirstUse(d->fns[i]); u && !d->cross[i]; u = LLVMGetNextUse(u)) {
      int j = user_function(d, LLVMGetUser(u));
      d->cross[i] = j < 0 || d->group[j] != d->group[i];
    }
}

static int64_t function_size(LLVMValueRef fn) { return (int64_t)cg_count_instructions(fn) + 1; }

/* The function of the largest group that references the most functions, when that group
 * is larger than `limit` instructions; -1 when none is. */
static int widest_in_oversized_group(const par_deal *d, int64_t limit) {
  int64_t *size = calloc((size_t)d->n + 1, sizeof *size);
  if (!size)
    return -1;
  int largest = -1;
  for (int i = 0; i < d->n; i++)
    if (is_defined_function(d->fns[i])) {
      size[d->group[i]] += function_size(d->fns[i]);
      if (largest < 0 || size[d->group[i]] > size[largest])
        largest = d->group[i];
    }
  int widest = -1;
  if (largest >= 0 && size[largest] > limit)
    for (int i = 0; i < d->n; i++)
      if (d->group[i] == largest && !d->hub[i] && d->fan_out[i] >= 2 &&
          (widest < 0 || d->fan_out[i] > d->fan_out[widest]))
        widest = i;
  free(size);
  return widest;
}

/* Groups for `chunks` chunks.  Hubs join no group: a computation LLVM leaves unoptimized
 * (module.c's optnone: a large step's calls into kernels), which inlines nothing, and, while
 * the largest group holds more than 1.5 chunks' share of the instructions, its function that
 * references the most others (the computation that calls a model's kernels: ssd_mobilenet's
 * entry is 1,205 instructions, below optnone's size, and would tie all 13,346 into one
 * group).  A hub's calls are not inlined in its chunk; what its callees compute is the same. */
static void form_groups(par_deal *d, int chunks) {
  int64_t total = 0;
  for (int i = 0; i < d->n; i++) {
    d->hub[i] = has_function_attribute(d->fns[i], "optnone");
    if (is_defined_function(d->fns[i]))
      total += function_size(d->fns[i]);
    for (LLVMUseRef u = LLVMGetFirstUse(d->fns[i]); u; u = LLVMGetNextUse(u)) {
      int j = user_function(d, LLVMGetUser(u));
      if (j >= 0 && j != i)
        d->fan_out[j]++;
    }
  }
  int64_t limit = total * 3 / (2 * (int64_t)chunks);
  group_functions(d);
  for (int tries = 0; tries < PAR_MAX_HUBS; tries++) {
    int widest = widest_in_oversized_group(d, limit);
    if (widest < 0)
      break;
    d->hub[widest] = true;
    group_functions(d);
  }
  mark_cross_references(d);
}

/* Sizes of the groups to deal, for qsort: the largest first, then in module order. */
typedef struct group_size {
  int64_t size;
  int root;
} group_size;

static int larger_first(const void *a, const void *b) {
  const group_size *x = a, *y = b;
  return x->size != y->size ? (x->size < y->size ? 1 : -1) : x->root - y->root;
}

/* Each group, the largest first, to the chunk with the fewest instructions so far (ties to
 * the lowest index). */
static bool deal_groups(par_deal *d, int chunks) {
  group_size *sizes = calloc((size_t)d->n + 1, sizeof *sizes);
  int *slot = malloc(((size_t)d->n + 1) * sizeof *slot);
  if (!sizes || !slot) {
    free(sizes);
    free(slot);
    return false;
  }
  int groups = 0;
  for (int i = 0; i < d->n; i++)
    slot[i] = -1;
  for (int i = 0; i < d->n; i++) {
    if (!is_defined_function(d->fns[i]))
      continue;
    int r = d->group[i];
    if (slot[r] < 0) {
      slot[r] = groups;
      sizes[groups++] = (group_size){0, r};
    }
    sizes[slot[r]].size += function_size(d->fns[i]);
  }
  qsort(sizes, (size_t)groups, sizeof *sizes, larger_first);
  int64_t load[DRV_MAX_CODEGEN_CHUNKS] = {0};
  int *chunk_of_root = slot; /* reused: group root -> chunk */
  for (int g = 0; g < groups; g++) {
    int c = 0;
    for (int q = 1; q < chunks; q++)
      if (load[q] < load[c])
        c = q;
    chunk_of_root[sizes[g].root] = c;
    load[c] += sizes[g].size;
  }
  for (int i = 0; i < d->n; i++)
    d->owner[i] = is_defined_function(d->fns[i]) ? chunk_of_root[d->group[i]] : -1;
  free(sizes);
  free(slot);
  return true;
}

static bool make_deal(LLVMModuleRef mod, int chunks, par_deal *d) {
  int n = count_functions(mod);
  *d = (par_deal){.n = n,
                  .fns = malloc(((size_t)n + 1) * sizeof *d->fns),
                  .sorted = malloc(((size_t)n + 1) * sizeof *d->sorted),
                  .hub = calloc((size_t)n + 1, sizeof *d->hub),
                  .fan_out = calloc((size_t)n + 1, sizeof *d->fan_out),
                  .group = malloc(((size_t)n + 1) * sizeof *d->group),
                  .cross = calloc((size_t)n + 1, sizeof *d->cross),
                  .owner = malloc(((size_t)n + 1) * sizeof *d->owner)};
  if (!d->fns || !d->sorted || !d->hub || !d->fan_out || !d->group || !d->cross || !d->owner)
    return false;
  int i = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn), i++) {
    d->fns[i] = fn;
    d->sorted[i] = (fn_index){fn, i};
  }
  qsort(d->sorted, (size_t)n, sizeof *d->sorted, by_address);
  form_groups(d, chunks);
  return deal_groups(d, chunks);
}

/* A local symbol (internal, private) becomes a hidden one, named when it had no name. */
static void make_hidden(LLVMValueRef g, int *unnamed) {
  if (!is_local(g))
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

/* Functions referenced from outside their group, and all data, become hidden symbols; a
 * function its group alone references stays local in its chunk. */
static void hide_shared_symbols(LLVMModuleRef mod, const par_deal *d) {
  int unnamed = 0;
  for (int i = 0; i < d->n; i++)
    if (is_defined_function(d->fns[i]) && d->cross[i])
      make_hidden(d->fns[i], &unnamed);
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

/* Whether a constant of g's size goes with each optimized chunk (see PAR_FOLDED_CONSTANT_BYTES). */
static bool folds_in_chunks(LLVMModuleRef mod, LLVMValueRef g) {
  if (!LLVMIsGlobalConstant(g))
    return false;
  unsigned long long bytes = LLVMABISizeOfType(LLVMGetModuleDataLayout(mod), LLVMGlobalGetValueType(g));
  return bytes <= PAR_FOLDED_CONSTANT_BYTES;
}

/* The module's data leaves it for a while: each initializer is kept in inits[] (globals in
 * order; NULL for declarations) and the globals become declarations, but for the small
 * constants of a module to be optimized in chunks (`keep_small_constants`). */
static LLVMValueRef *take_data(LLVMModuleRef mod, bool keep_small_constants) {
  int n = 0;
  for (LLVMValueRef g = LLVMGetFirstGlobal(mod); g; g = LLVMGetNextGlobal(g))
    n++;
  LLVMValueRef *inits = calloc((size_t)n + 1, sizeof *inits);
  if (!inits)
    return NULL;
  int i = 0;
  for (LLVMValueRef g = LLVMGetFirstGlobal(mod); g; g = LLVMGetNextGlobal(g), i++)
    if (LLVMGetLinkage(g) != LLVMAppendingLinkage && LLVMGetInitializer(g) &&
        !(keep_small_constants && folds_in_chunks(mod, g))) {
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
  const par_deal *deal;
  int chunks;
  LLVMTargetRef target;
  const char *triple, *cpu, *features;
  LLVMCodeGenOptLevel level;
  const drv_pipeline *pipeline; /* run on each chunk; NULL: the module came optimized */
  const char *const *objs;      /* objs[1 + c]: chunk c's object file */
  _Atomic int next;             /* the next chunk to take */
  pthread_mutex_t lock;         /* guards error */
  char *error;                  /* the first failure (malloc'd), or NULL */
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
 * in the same order), makes the constants that came along
 * available_externally (read, never written: the data object defines them), and drops the
 * special arrays (llvm.used, llvm.global_ctors), which the data object carries.  False when
 * the functions do not line up. */
static bool keep_chunk(LLVMModuleRef mod, const par_work *w, int c) {
  int n = count_functions(mod);
  if (n != w->deal->n)
    return false;
  LLVMValueRef fn = LLVMGetFirstFunction(mod);
  for (int idx = 0; idx < n; idx++) { /* the declarations that take their places come after */
    LLVMValueRef next = LLVMGetNextFunction(fn);
    if (is_defined_function(fn) && w->deal->owner[idx] != c)
      drop_function(mod, fn);
    fn = next;
  }
  for (LLVMValueRef g = LLVMGetFirstGlobal(mod), next; g; g = next) {
    next = LLVMGetNextGlobal(g);
    if (LLVMGetLinkage(g) == LLVMAppendingLinkage)
      LLVMDeleteGlobal(g);
    else if (LLVMGetInitializer(g))
      LLVMSetLinkage(g, LLVMAvailableExternallyLinkage);
  }
  return true;
}

static void compile_chunk(par_work *w, int c, LLVMModuleRef mod) {
  LLVMTargetMachineRef tm = LLVMCreateTargetMachine(w->target, w->triple, w->cpu, w->features, w->level,
                                                    LLVMRelocPIC, LLVMCodeModelDefault);
  if (!tm) {
    work_failed(w, "creating a target machine for a code chunk", NULL);
    return;
  }
  hlo_status s = w->pipeline ? drv_run_pipeline(mod, tm, w->pipeline) : NULL;
  char *err = NULL;
  if (s) {
    work_failed(w, "optimizing a code chunk", LLVMCreateMessage(hlo_status_message(s)));
    hlo_status_free(s);
  } else if (LLVMTargetMachineEmitToFile(tm, mod, (char *)w->objs[1 + c], LLVMObjectFile, &err)) {
    work_failed(w, w->objs[1 + c], err);
  }
  LLVMDisposeTargetMachine(tm);
}

static void emit_chunk(par_work *w, int c) {
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef mod = NULL;
  if (LLVMParseBitcodeInContext2(ctx, w->bitcode, &mod))
    work_failed(w, "reading a code chunk back from bitcode", NULL);
  else if (!keep_chunk(mod, w, c))
    work_failed(w, "a code chunk's functions differ from the module's", NULL);
  else
    compile_chunk(w, c, mod);
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
static hlo_status split_module(LLVMModuleRef mod, bool optimize_chunks, LLVMMemoryBufferRef *bitcode) {
  LLVMValueRef *inits = take_data(mod, optimize_chunks);
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

hlo_status drv_emit_partitioned(LLVMTargetMachineRef tm, LLVMCodeGenOptLevel level, const drv_pipeline *pipeline,
                                LLVMModuleRef mod, int threads, const char *const *objs) {
  par_work w = {.chunks = drv_codegen_objects(threads) - 1, .target = LLVMGetTargetMachineTarget(tm),
                .level = level, .pipeline = pipeline, .objs = objs};
  par_deal deal;
  if (!make_deal(mod, w.chunks, &deal)) {
    free_deal(&deal);
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory dealing functions into chunks");
  }
  w.deal = &deal;
  hide_shared_symbols(mod, &deal);
  hlo_status s = split_module(mod, pipeline != NULL, &w.bitcode);
  if (s) {
    free_deal(&deal);
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
  free_deal(&deal);
  return s;
}
