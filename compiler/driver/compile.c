/* compile.c — native output: the LLVM target machine (native: the host CPU and its features;
 * generic: a portable x86-64 object; or a named LLVM CPU, checked), the new pass manager
 * (constant and function merging around default<On> for -O0..-O3, on the whole module or, for
 * a large .so, in chunks on several threads: emit_parallel.c), object/assembly/LLVM IR files,
 * and model.so linked by the system C compiler with the static runtime (so the result never
 * depends on LLVM).
 * Tests: tests/hloc_cli.cmake, tests/abi_example.cmake, every test that runs a model.
 */
#include <errno.h>
#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codegen/codegen.h"
#include "driver/driver.h"
#include "driver/driver_internal.h"

static hlo_status llvm_error(const char *what, char *msg) {
  hlo_status s = hlo_status_make(HLO_INTERNAL, "%s: %s", what, msg ? msg : "unknown LLVM error");
  LLVMDisposeMessage(msg);
  return s;
}

/* Emits an empty function for `tm` (in the probe child: LLVM aborts when it cannot). */
static bool emit_empty_function(LLVMTargetMachineRef tm) {
  LLVMContextRef c = LLVMContextCreate();
  LLVMModuleRef mod = LLVMModuleCreateWithNameInContext("probe", c);
  LLVMValueRef fn = LLVMAddFunction(mod, "probe", LLVMFunctionType(LLVMVoidTypeInContext(c), NULL, 0, 0));
  LLVMBuilderRef b = LLVMCreateBuilderInContext(c);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(c, fn, "entry"));
  LLVMBuildRetVoid(b);
  LLVMDisposeBuilder(b);
  char *err = NULL;
  LLVMMemoryBufferRef out;
  bool ok = !LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMObjectFile, &err, &out);
  if (ok)
    LLVMDisposeMemoryBuffer(out);
  LLVMDisposeMessage(err);
  LLVMDisposeModule(mod);
  LLVMContextDispose(c);
  return ok;
}

/* The probe child: exit 0 when LLVM generates code for `cpu`, 3 when it does not know the
 * name (it says so only as a warning on stderr, which goes to a temporary file here). */
static _Noreturn void probe_cpu_child(LLVMTargetRef target, char *triple, const char *cpu) {
  FILE *log = tmpfile();
  if (!log || dup2(fileno(log), 2) < 0)
    _exit(4);
  LLVMTargetMachineRef tm =
      LLVMCreateTargetMachine(target, triple, cpu, "", LLVMCodeGenLevelNone, LLVMRelocPIC, LLVMCodeModelDefault);
  char said[4096] = {0};
  rewind(log);
  size_t n = fread(said, 1, sizeof said - 1, log);
  said[n] = 0;
  fclose(log);
  bool unknown = !tm || strstr(said, "is not a recognized processor");
  bool ok = !unknown && emit_empty_function(tm);
  if (tm)
    LLVMDisposeTargetMachine(tm);
  LLVMDisposeMessage(triple); /* this process's copy: leak checkers stay quiet in the child */
  _exit(unknown ? 3 : ok ? 0 : 5);
}

/* LLVM's C API cannot ask whether a CPU name is valid: an unknown name is a warning, and a CPU
 * without 64-bit mode aborts the process during code generation.  So a child process tries
 * it first; the answer becomes a clear error instead of an abort. */
static hlo_status check_cpu(LLVMTargetRef target, char *triple, const char *cpu) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0)
    return hlo_status_make(HLO_INTERNAL, "cannot check --target-cpu=%s: %s", cpu, strerror(errno));
  if (pid == 0)
    probe_cpu_child(target, triple, cpu);
  int st;
  if (waitpid(pid, &st, 0) < 0)
    return hlo_status_make(HLO_INTERNAL, "cannot check --target-cpu=%s: %s", cpu, strerror(errno));
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
    return NULL;
  if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
    return hlo_status_make(HLO_INVALID_ARGUMENT,
                           "--target-cpu=%s: LLVM does not know this CPU for %s (use native, generic or an LLVM "
                           "CPU name such as x86-64-v2, x86-64-v3, x86-64-v4, skylake-avx512, znver4; "
                           "'llc-19 -mcpu=help' lists them all)", cpu, triple);
  return hlo_status_make(HLO_INVALID_ARGUMENT, "--target-cpu=%s: LLVM cannot generate code for %s with this CPU",
                         cpu, triple);
}

/* The CPU name and feature string for o->target_cpu (the host's for "native"; *to_free
 * holds what LLVM allocated). */
static const char *pick_cpu(const drv_options *o, const char *triple, const char **features, char **to_free) {
  const char *cpu = o->target_cpu && *o->target_cpu ? o->target_cpu : "native";
  *features = "";
  if (strcmp(cpu, "native") == 0) {
    to_free[0] = LLVMGetHostCPUName();
    to_free[1] = LLVMGetHostCPUFeatures();
    *features = to_free[1];
    return to_free[0];
  }
  if (strcmp(cpu, "generic") == 0)
    return strncmp(triple, "x86_64", 6) == 0 ? "x86-64" : "generic";
  return cpu;
}

static LLVMCodeGenOptLevel codegen_level(const drv_options *o) {
  static const LLVMCodeGenOptLevel levels[] = {LLVMCodeGenLevelNone, LLVMCodeGenLevelLess, LLVMCodeGenLevelDefault,
                                               LLVMCodeGenLevelAggressive};
  return levels[o->opt_level & 3];
}

static hlo_status make_target_machine(const drv_options *o, LLVMTargetMachineRef *out) {
  LLVMInitializeNativeTarget();
  LLVMInitializeNativeAsmPrinter();
  char *triple = LLVMGetDefaultTargetTriple();
  LLVMTargetRef target;
  char *err = NULL;
  if (LLVMGetTargetFromTriple(triple, &target, &err)) {
    LLVMDisposeMessage(triple);
    return llvm_error("no LLVM target for this machine", err);
  }
  char *to_free[2] = {NULL, NULL};
  const char *features;
  const char *cpu = pick_cpu(o, triple, &features, to_free);
  hlo_status s = to_free[0] ? NULL : check_cpu(target, triple, cpu);
  *out = NULL;
  if (!s)
    *out = LLVMCreateTargetMachine(target, triple, cpu, features, codegen_level(o), LLVMRelocPIC,
                                   LLVMCodeModelDefault);
  if (!s && !*out)
    s = hlo_status_make(HLO_INVALID_ARGUMENT, "cannot create a target machine for --target-cpu=%s", cpu);
  LLVMDisposeMessage(triple);
  LLVMDisposeMessage(to_free[0]);
  LLVMDisposeMessage(to_free[1]);
  return s;
}

static hlo_status dump_llvm(const drv_options *o, LLVMModuleRef mod, const char *name) {
  if (!o->dump_dir)
    return NULL;
  mkdir(o->dump_dir, 0777);
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", o->dump_dir, name);
  char *err = NULL;
  if (LLVMPrintModuleToFile(mod, path, &err))
    return llvm_error(path, err);
  return NULL;
}

/* Whether the loops should use 512-bit vectors: compiling for this host (native) when it has
 * AVX-512.  LLVM's tuning for Intel server CPUs prefers 256-bit vectors (older parts lowered
 * their clocks under 512-bit work); measured on a Xeon with AVX-512 (family 6 model 167, 2
 * threads), 512-bit loops ran softmax 25%, gelu 12% and attention 12% faster and the
 * memory-bound loops within 3%.  AMD's Zen 4 and 5 tuning already prefers 512.  Elementwise
 * math is lane by lane and reductions are never reassociated, so the width changes no result
 * bits.  A named CPU (--target-cpu) keeps LLVM's tuning for it. */
static bool wide_vectors(const drv_options *o) {
  if (o->target_cpu && *o->target_cpu && strcmp(o->target_cpu, "native") != 0)
    return false;
  char *features = LLVMGetHostCPUFeatures();
  bool avx512 = features && strstr(features, "+avx512f") != NULL;
  LLVMDisposeMessage(features);
  return avx512;
}

/* Sets "prefer-vector-width" on every function defined in mod. */
static void prefer_vector_width(LLVMModuleRef mod, const char *bits) {
  static const char key[] = "prefer-vector-width";
  LLVMContextRef ctx = LLVMGetModuleContext(mod);
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn))
    if (LLVMCountBasicBlocks(fn))
      LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                              LLVMCreateStringAttribute(ctx, key, sizeof key - 1, bits, (unsigned)strlen(bits)));
}

/* Whether tm generates x86 code (x86_64-... or i386..i686-...). */
static bool targets_x86(LLVMTargetMachineRef tm) {
  char *triple = LLVMGetTargetMachineTriple(tm);
  bool x86 = triple && (strncmp(triple, "x86_64", 6) == 0 ||
                        (triple[0] == 'i' && triple[1] >= '3' && triple[1] <= '6' && strncmp(triple + 2, "86", 2) == 0));
  LLVMDisposeMessage(triple);
  return x86;
}

/* hloc's IR checked, and its functions told the vector width to prefer, before LLVM's passes. */
static hlo_status prepare_for_optimization(const drv_options *o, LLVMModuleRef mod) {
  char *err = NULL;
  if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &err))
    return llvm_error("internal error: hloc generated invalid LLVM IR", err);
  LLVMDisposeMessage(err);
  if (wide_vectors(o))
    prefer_vector_width(mod, "512");
  return NULL;
}

/* LLVM's constant and function merging before the pipeline, and function merging after it: a
 * model's repeated layers give kernels that differ only in their values' names and in which
 * copy of the same constant they read (literals are unnamed_addr: data.c cg_literal_global),
 * so identical constants become one, then the kernels reading them one, and the pipeline and
 * the code generator see each body once.  gemma3 1B at -O2 on an AMD EPYC family 25 on one
 * thread: 4,610 functions, 2,702 after mergefunc alone, 352 after both; 28.5 s without merging,
 * 16 s with mergefunc, 3.5 s with both; the same results bit for bit.  A module optimized in
 * chunks (emit_parallel.c) is merged whole first; `passes` is then what each chunk runs. */
#define MERGE_PASSES "constmerge,mergefunc"

static drv_pipeline make_pipeline(const drv_options *o, LLVMTargetMachineRef tm, bool in_chunks) {
  drv_pipeline p = {.opt_level = o->opt_level & 3, .x86 = targets_x86(tm), .verify = o->verify_each};
  const char *merge_first = in_chunks ? "" : MERGE_PASSES ",";
  snprintf(p.passes, sizeof p.passes, "%sdefault<O%d>,mergefunc", merge_first, p.opt_level);
  return p;
}

/* The runtime archive: next to the build, else <exe dir>/../lib/libhlort.a (installed). */
static hlo_status find_runtime(char *out, size_t cap) {
#ifdef HLOC_BUILD_RUNTIME_LIB
  if (access(HLOC_BUILD_RUNTIME_LIB, R_OK) == 0) {
    snprintf(out, cap, "%s", HLOC_BUILD_RUNTIME_LIB);
    return NULL;
  }
#endif
  char exe[PATH_MAX / 2];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) {
      *slash = 0;
      snprintf(out, cap, "%s/../%s/libhlort.a", exe, HLOC_INSTALL_LIBDIR);
      if (access(out, R_OK) == 0)
        return NULL;
    }
  }
  return hlo_status_make(HLO_FAILED_PRECONDITION,
                         "cannot find the hloc runtime library libhlort.a (looked in the build tree and in "
                         "<prefix>/%s next to the hloc executable); rebuild or reinstall hloc", HLOC_INSTALL_LIBDIR);
}

#define MAX_LINK_ARGS 80

/* argv for `$CC -shared -Wl,-soname,NAME -o OUT OBJ RUNTIME [ONEDNN GOMP] -lffi -lm -lpthread -ldl`; $CC
 * may hold words ("ccache gcc").  `words` is storage for the split copy of $CC.  The soname
 * is OUT's file name, so a program linked against OUT records that name (found through its
 * rpath or LD_LIBRARY_PATH), not the path OUT had when it was linked. */
static void link_argv(const char *const *objs, int n_objs, const char *out, const char *rt, const char *soname,
                      char *words, const char **argv) {
  int n = 0;
  for (char *w = strtok(words, " \t"); w && n < MAX_LINK_ARGS - 16 - DRV_MAX_CODEGEN_CHUNKS; w = strtok(NULL, " \t"))
    argv[n++] = w;
  if (n == 0)
    argv[n++] = "cc";
  const char *head[] = {"-shared", soname, "-o", out};
  for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
    argv[n++] = head[i];
  for (int i = 0; i < n_objs; i++)
    argv[n++] = objs[i];
  const char *rest[] = {rt,
#ifdef HLOC_DNNL_LIBS
                        HLOC_DNNL_LIBS, HLOC_GOMP_LIB, /* runtime/src/kernels/rt_dnnl.c */
#endif
                        "-lffi", "-lm", "-lpthread", "-ldl", NULL};
  memcpy(argv + n, rest, sizeof rest);
}

static hlo_status run_linker(const char *const *objs, int n_objs, const char *out) {
  char rt[PATH_MAX];
  HLO_RETURN_IF_ERROR(find_runtime(rt, sizeof rt)); /* exe dir is at most PATH_MAX/2 */
  const char *cc = getenv("CC");
  char *words = strdup(cc && *cc ? cc : "cc");
  if (!words)
    return hlo_status_make(HLO_RESOURCE_EXHAUSTED, "out of memory");
  char soname[PATH_MAX + 16];
  snprintf(soname, sizeof soname, "-Wl,-soname,%s", strrchr(out, '/') ? strrchr(out, '/') + 1 : out);
  const char *argv[MAX_LINK_ARGS];
  link_argv(objs, n_objs, out, rt, soname, words, argv);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    execvp(argv[0], (char *const *)argv);
    fprintf(stderr, "hloc: cannot run the C compiler '%s' (set $CC): %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  int st = 0;
  hlo_status s = NULL;
  if (pid < 0 || waitpid(pid, &st, 0) < 0)
    s = hlo_status_make(HLO_INTERNAL, "cannot start the linker: %s", strerror(errno));
  else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    s = hlo_status_make(HLO_INTERNAL, "linking %s with '%s' failed", out, cc && *cc ? cc : "cc");
  free(words);
  return s;
}

/* OUT.XXXXXX.o next to OUT, created (so a missing folder is reported for OUT itself). */
static hlo_status temp_object(const char *out_path, char *obj, size_t cap) {
  if ((size_t)snprintf(obj, cap, "%s.XXXXXX.o", out_path) >= cap)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "%s: output path too long", out_path);
  int fd = mkstemps(obj, 2);
  if (fd < 0)
    return hlo_status_make(HLO_IO, "%s: cannot write: %s", out_path, strerror(errno));
  close(fd);
  return NULL;
}

/* Threads for the object code: as asked (--codegen-threads), else the CPUs this process may
 * run on. */
static int codegen_threads(const drv_options *o) {
  int n = o->codegen_threads;
  if (n <= 0) {
    cpu_set_t set;
    n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : (int)sysconf(_SC_NPROCESSORS_ONLN);
  }
  return n < 1 ? 1 : n > DRV_MAX_CODEGEN_THREADS ? DRV_MAX_CODEGEN_THREADS : n;
}

/* The object code, in one file or in chunks written on `threads` threads (emit_parallel.c),
 * each chunk run through `pipeline` first when it is not NULL, linked with the runtime into
 * out_path. */
static hlo_status emit_shared_object(const drv_options *o, LLVMTargetMachineRef tm, LLVMModuleRef mod, int threads,
                                     const drv_pipeline *pipeline, const char *out_path) {
  int n_objs = drv_codegen_objects(threads);
  char objs[1 + DRV_MAX_CODEGEN_CHUNKS][PATH_MAX];
  const char *names[1 + DRV_MAX_CODEGEN_CHUNKS];
  hlo_status s = NULL;
  int made = 0;
  while (made < n_objs && !s) {
    s = temp_object(out_path, objs[made], sizeof objs[made]);
    if (!s) {
      names[made] = objs[made];
      made++;
    }
  }
  if (!s && o->verbose && threads)
    fprintf(stderr, "hloc: object code %swritten on %d threads (%d objects)\n", pipeline ? "optimized and " : "",
            threads, n_objs);
  char *err = NULL;
  if (!s && !threads && LLVMTargetMachineEmitToFile(tm, mod, objs[0], LLVMObjectFile, &err))
    s = llvm_error(objs[0], err);
  else if (!s && threads)
    s = drv_emit_partitioned(tm, codegen_level(o), pipeline, mod, threads, names);
  if (!s)
    s = run_linker(names, n_objs, out_path);
  for (int i = 0; i < made; i++)
    unlink(objs[i]);
  return s;
}

/* Text kinds go to standard output for "-"; LLVM's writers need a file for binary ones. */
static hlo_status emit_to_stdout(LLVMTargetMachineRef tm, LLVMModuleRef mod, drv_emit emit) {
  if (emit == DRV_EMIT_LLVM) {
    char *text = LLVMPrintModuleToString(mod);
    fputs(text, stdout);
    LLVMDisposeMessage(text);
  } else {
    char *err = NULL;
    LLVMMemoryBufferRef buf;
    if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMAssemblyFile, &err, &buf))
      return llvm_error("assembly", err);
    fwrite(LLVMGetBufferStart(buf), 1, LLVMGetBufferSize(buf), stdout);
    LLVMDisposeMemoryBuffer(buf);
  }
  if (fflush(stdout) != 0 || ferror(stdout))
    return hlo_status_make(HLO_IO, "write error on standard output");
  return NULL;
}

static hlo_status emit_output(const drv_options *o, LLVMTargetMachineRef tm, LLVMModuleRef mod, const char *out_path,
                              drv_emit emit, int threads) {
  char *err = NULL;
  if (strcmp(out_path, "-") == 0)
    return emit_to_stdout(tm, mod, emit);
  if (emit == DRV_EMIT_SO)
    return emit_shared_object(o, tm, mod, threads, NULL, out_path);
  if (emit == DRV_EMIT_LLVM) {
    if (LLVMPrintModuleToFile(mod, out_path, &err))
      return llvm_error(out_path, err);
    return NULL;
  }
  if (LLVMTargetMachineEmitToFile(tm, mod, out_path, emit == DRV_EMIT_ASM ? LLVMAssemblyFile : LLVMObjectFile, &err))
    return llvm_error(out_path, err);
  return NULL;
}

/* The memory plan's summary: parameter and result bytes (the caller's buffers), then the ten
 * largest temporaries with the instructions that make them. */
static void print_plan(FILE *out, const char *prefix, const ir_module *m, const cg_options *co) {
  int64_t params = 0;
  for (int i = 0; i < m->entry->n_params; i++)
    params += ir_shape_total_bytes(m->entry->params[i]->shape);
  fprintf(out, "%s%s: parameters %lld bytes, results %lld bytes, arena %lld bytes\n", prefix, m->name.p,
          (long long)params, (long long)ir_shape_total_bytes(m->entry->root->shape), (long long)co->arena_bytes);
  if (co->n_largest)
    fprintf(out, "%s%s: largest temporaries:\n", prefix, m->name.p);
  for (int i = 0; i < co->n_largest; i++)
    fprintf(out, "%s  %12lld bytes  %%%s in %%%s\n", prefix, (long long)co->largest[i].bytes,
            co->largest[i].instruction, co->largest[i].computation);
}

/* A .so's module merged whole (identical functions become one), then optimized and written
 * in chunks on `threads` threads (emit_parallel.c): LLVM's pipeline takes most of a large
 * model's compile time and runs on one function's group at a time. */
static hlo_status optimize_and_emit_in_chunks(const drv_options *o, LLVMTargetMachineRef tm, LLVMModuleRef mod,
                                              const char *out_path, int threads) {
  double t0 = drv_now_ms();
  hlo_status s = drv_run_passes(mod, tm, MERGE_PASSES, o->opt_level);
  drv_time_stage(o, "llvm-merge", t0);
  HLO_RETURN_IF_ERROR(s);
  t0 = drv_now_ms();
  drv_pipeline p = make_pipeline(o, tm, true);
  threads = drv_codegen_threads(mod, threads, true); /* merging may leave one function */
  if (!threads)
    s = drv_run_pipeline(mod, tm, &p);
  if (!s)
    s = emit_shared_object(o, tm, mod, threads, threads ? &p : NULL, out_path);
  drv_time_stage(o, "optimize, emit object and link", t0);
  return s;
}

static hlo_status lower_and_emit(ir_module *m, const char *out_path, drv_emit emit, const drv_options *o,
                                 LLVMTargetMachineRef tm, LLVMContextRef ctx, LLVMModuleRef *mod) {
  cg_options co = {.symbol = o->symbol, .opt_level = o->opt_level, .elided_constants = m->n_filled_constants,
                   .nontemporal_min_bytes = o->nontemporal_min_bytes};
  char path[4096];
  if (o->dump_dir) {
    mkdir(o->dump_dir, 0777);
    snprintf(path, sizeof path, "%s/buffer-assignment.txt", o->dump_dir);
    co.assignment = fopen(path, "w");
  }
  double t0 = drv_now_ms();
  hlo_status s = cg_emit_module(m, &co, ctx, tm, mod);
  drv_time_stage(o, "codegen (LLVM IR)", t0);
  if (co.assignment) {
    fprintf(co.assignment, "arena: %lld bytes\n", (long long)co.arena_bytes);
    print_plan(co.assignment, "", m, &co);
    fclose(co.assignment);
  }
  if (!s && o->arena_out)
    *o->arena_out = co.arena_bytes;
  if (!s && o->verbose) {
    fprintf(stderr, "hloc: %s: arena of %lld bytes per call (temporaries at fixed offsets)\n", m->name.p,
            (long long)co.arena_bytes);
    print_plan(stderr, "hloc: ", m, &co);
  }
  HLO_RETURN_IF_ERROR(s);
  HLO_RETURN_IF_ERROR(dump_llvm(o, *mod, "llvm-before-opt.ll"));
  HLO_RETURN_IF_ERROR(prepare_for_optimization(o, *mod));
  int threads = emit == DRV_EMIT_SO ? drv_codegen_threads(*mod, codegen_threads(o), o->codegen_threads > 0) : 0;
  if (threads && !o->dump_dir) /* optimized and written in chunks, after merging whole */
    return optimize_and_emit_in_chunks(o, tm, *mod, out_path, threads);
  t0 = drv_now_ms();
  drv_pipeline p = make_pipeline(o, tm, false);
  s = drv_run_pipeline(*mod, tm, &p);
  drv_time_stage(o, "llvm-optimize", t0);
  HLO_RETURN_IF_ERROR(s);
  HLO_RETURN_IF_ERROR(dump_llvm(o, *mod, "llvm-after-opt.ll"));
  t0 = drv_now_ms();
  s = emit_output(o, tm, *mod, out_path, emit, threads);
  drv_time_stage(o, emit == DRV_EMIT_SO ? "emit object and link" : "emit", t0);
  return s;
}

hlo_status drv_emit_native(ir_module *m, const char *out_path, drv_emit emit, const drv_options *o) {
  if (emit == DRV_EMIT_HEADER)
    return drv_write_header(m, o, out_path);
  if (emit != DRV_EMIT_SO && emit != DRV_EMIT_OBJ && emit != DRV_EMIT_LLVM && emit != DRV_EMIT_ASM)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "drv_emit_native writes so, obj, llvm, asm or header");
  if (strcmp(out_path, "-") == 0 && (emit == DRV_EMIT_SO || emit == DRV_EMIT_OBJ))
    return hlo_status_make(HLO_INVALID_ARGUMENT, "-o - writes only text (llvm, asm, hlo, header); "
                                                 "give a file name for a shared object or object file");
  LLVMTargetMachineRef tm;
  HLO_RETURN_IF_ERROR(make_target_machine(o, &tm));
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef mod = NULL;
  hlo_status s = lower_and_emit(m, out_path, emit, o, tm, ctx, &mod);
  if (mod)
    LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
  LLVMDisposeTargetMachine(tm);
  return s;
}
