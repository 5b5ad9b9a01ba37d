/* emit.c — native output: LLVM target machine (native, generic or a named CPU), the new
 * pass manager (default<On>), object/assembly/LLVM IR files, linking model.so with the
 * system C compiler and the static runtime (no LLVM dependency in the result), and the C
 * header of the typed entry point.  Tests: golden tests through hlorun, tests/abi_example.
 */
#include <errno.h>
#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "codegen/codegen.h"
#include "driver/driver.h"

static hlo_status llvm_error(const char *what, char *msg) {
  hlo_status s = hlo_status_make(HLO_INTERNAL, "%s: %s", what, msg ? msg : "unknown LLVM error");
  LLVMDisposeMessage(msg);
  return s;
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
  const char *cpu = o->target_cpu ? o->target_cpu : "native";
  char *host_cpu = NULL, *host_features = NULL;
  const char *features = "";
  if (strcmp(cpu, "native") == 0) {
    host_cpu = LLVMGetHostCPUName();
    host_features = LLVMGetHostCPUFeatures();
    cpu = host_cpu;
    features = host_features;
  } else if (strcmp(cpu, "generic") == 0) {
    cpu = "x86-64";
  }
  static const LLVMCodeGenOptLevel levels[] = {LLVMCodeGenLevelNone, LLVMCodeGenLevelLess, LLVMCodeGenLevelDefault,
                                               LLVMCodeGenLevelAggressive};
  *out = LLVMCreateTargetMachine(target, triple, cpu, features, levels[o->opt_level & 3], LLVMRelocPIC,
                                 LLVMCodeModelDefault);
  LLVMDisposeMessage(triple);
  LLVMDisposeMessage(host_cpu);
  LLVMDisposeMessage(host_features);
  if (!*out)
    return hlo_status_make(HLO_INVALID_ARGUMENT, "cannot create a target machine for --target-cpu=%s", o->target_cpu);
  return NULL;
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

static hlo_status optimize(const drv_options *o, LLVMModuleRef mod, LLVMTargetMachineRef tm) {
  char *err = NULL;
  if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &err))
    return llvm_error("internal error: hloc generated invalid LLVM IR", err);
  LLVMDisposeMessage(err);
  char passes[32];
  snprintf(passes, sizeof passes, "default<O%d>", o->opt_level & 3);
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  LLVMPassBuilderOptionsSetLoopVectorization(po, o->opt_level >= 2);
  LLVMPassBuilderOptionsSetSLPVectorization(po, o->opt_level >= 2);
  LLVMErrorRef e = LLVMRunPasses(mod, passes, tm, po);
  LLVMDisposePassBuilderOptions(po);
  if (e)
    return llvm_error("LLVM optimization failed", LLVMGetErrorMessage(e));
  return NULL;
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
  return hlo_status_make(HLO_NOT_FOUND, "cannot find the hloc runtime library libhlort.a (looked next to the build "
                                        "and in <prefix>/%s)", HLOC_INSTALL_LIBDIR);
}

static hlo_status run_linker(const char *obj, const char *out) {
  char rt[PATH_MAX];
  HLO_RETURN_IF_ERROR(find_runtime(rt, sizeof rt)); /* exe dir is at most PATH_MAX/2 */
  const char *cc = getenv("CC");
  if (!cc || !*cc)
    cc = "cc";
  pid_t pid = fork();
  if (pid < 0)
    return hlo_status_make(HLO_INTERNAL, "cannot start the linker: %s", strerror(errno));
  if (pid == 0) {
    execlp(cc, cc, "-shared", "-o", out, obj, rt, "-lffi", "-lm", "-lpthread", "-ldl", (char *)NULL);
    fprintf(stderr, "hloc: cannot run %s: %s\n", cc, strerror(errno));
    _exit(127);
  }
  int st;
  if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
    return hlo_status_make(HLO_INTERNAL, "linking %s with %s failed", out, cc);
  return NULL;
}

static const char *c_type(ir_etype et) {
  switch (et) {
  case IR_PRED: return "bool";
  case IR_S8: case IR_S1: case IR_S2: case IR_S4: return "int8_t";
  case IR_S16: return "int16_t";
  case IR_S32: return "int32_t";
  case IR_S64: return "int64_t";
  case IR_U8: case IR_U1: case IR_U2: case IR_U4: return "uint8_t";
  case IR_U16: case IR_BF16: return "uint16_t";
  case IR_U32: return "uint32_t";
  case IR_U64: return "uint64_t";
  case IR_F16: return "_Float16";
  case IR_F32: return "float";
  case IR_F64: return "double";
  case IR_C64: return "float _Complex";
  case IR_C128: return "double _Complex";
  case IR_TOKEN: return "void";
  default: return "uint8_t";
  }
}

static void header_leaves(FILE *f, const ir_shape *s, const char *base, bool is_result, int *k) {
  if (s->et == IR_TUPLE) {
    for (int i = 0; i < s->n_elems; i++) {
      char buf[512];
      snprintf(buf, sizeof buf, "%s_%d", base, i);
      header_leaves(f, s->elems[i], buf, is_result, k);
    }
    return;
  }
  char shape[512];
  ir_shape_format(s, false, shape, sizeof shape);
  fprintf(f, ",\n    %s%s *%s /* %s */", is_result ? "" : "const ", c_type(s->et), base, shape);
  (*k)++;
}

static void c_ident(const char *s, char *out, size_t cap, const char *fallback) {
  size_t k = 0;
  for (size_t i = 0; s[i] && k + 1 < cap; i++)
    out[k++] = (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ? s[i] : '_';
  out[k] = 0;
  if (!k || (out[0] >= '0' && out[0] <= '9'))
    snprintf(out, cap, "%s", fallback);
}

static hlo_status write_header(ir_module *m, const drv_options *o, const char *path) {
  char *sym = o->symbol ? strdup(o->symbol) : cg_symbol_for_module(m->name.p);
  FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
  if (!f || !sym) {
    free(sym);
    return hlo_status_make(HLO_IO, "%s: cannot write: %s", path, strerror(errno));
  }
  fprintf(f, "/* %s — generated by hloc %s from HLO module %s.  Do not edit. */\n", path, HLOC_VERSION, m->name.p);
  fprintf(f, "#ifndef HLO_MODEL_%s_H\n#define HLO_MODEL_%s_H\n\n", sym, sym);
  fprintf(f, "#include <stdbool.h>\n#include <stdint.h>\n\n#include <hlo/abi.h>\n\n");
  fprintf(f, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
  fprintf(f, "/* The module's signature, entry points and leaf shapes. */\n");
  fprintf(f, "const hlo_module_desc *%s_describe(void);\n", sym);
  fprintf(f, "hlo_status %s_run(hlo_context *ctx, void *const *params, void *const *results);\n\n", sym);
  fprintf(f, "/* Typed entry: parameters (dense row-major buffers), then results (caller-allocated).\n"
             "   Returns NULL on success, else a status to read and free (hlo/status.h). */\n");
  fprintf(f, "hlo_status %s(hlo_context *ctx", sym);
  int k = 0;
  ir_computation *e = m->entry;
  for (int i = 0; i < e->n_params; i++) {
    char base[256];
    c_ident(e->params[i]->name.p, base, sizeof base, "param");
    header_leaves(f, e->params[i]->shape, base, false, &k);
  }
  header_leaves(f, e->root->shape, "out", true, &k);
  fprintf(f, ");\n\n#ifdef __cplusplus\n}\n#endif\n#endif\n");
  free(sym);
  bool bad = ferror(f);
  if (f != stdout && fclose(f) != 0)
    bad = true;
  return bad ? hlo_status_make(HLO_IO, "%s: write error", path) : NULL;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void report_time(const drv_options *o, const char *stage, double t0) {
  if (o->time_passes)
    fprintf(stderr, "time-passes: %-26s %8.3f ms\n", stage, now_ms() - t0);
}

hlo_status drv_emit_native(ir_module *m, const char *out_path, drv_emit emit, const drv_options *o) {
  if (emit == DRV_EMIT_HEADER)
    return write_header(m, o, out_path);
  LLVMTargetMachineRef tm;
  HLO_RETURN_IF_ERROR(make_target_machine(o, &tm));
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef mod = NULL;
  cg_options co = {.symbol = o->symbol, .opt_level = o->opt_level, .elided_constants = m->n_filled_constants};
  double t0 = now_ms();
  hlo_status s = cg_emit_module(m, &co, ctx, tm, &mod);
  report_time(o, "codegen (LLVM IR)", t0);
  if (!s)
    s = dump_llvm(o, mod, "llvm-before-opt.ll");
  t0 = now_ms();
  if (!s)
    s = optimize(o, mod, tm);
  report_time(o, "llvm-optimize", t0);
  if (!s)
    s = dump_llvm(o, mod, "llvm-after-opt.ll");
  t0 = now_ms();
  char *err = NULL;
  if (!s && emit == DRV_EMIT_LLVM) {
    if (LLVMPrintModuleToFile(mod, strcmp(out_path, "-") == 0 ? "/dev/stdout" : out_path, &err))
      s = llvm_error(out_path, err);
  } else if (!s && emit == DRV_EMIT_ASM && strcmp(out_path, "-") == 0) {
    LLVMMemoryBufferRef buf;
    if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMAssemblyFile, &err, &buf)) {
      s = llvm_error("assembly", err);
    } else {
      fwrite(LLVMGetBufferStart(buf), 1, LLVMGetBufferSize(buf), stdout);
      LLVMDisposeMemoryBuffer(buf);
    }
  } else if (!s && (emit == DRV_EMIT_ASM || emit == DRV_EMIT_OBJ)) {
    if (LLVMTargetMachineEmitToFile(tm, mod, out_path, emit == DRV_EMIT_ASM ? LLVMAssemblyFile : LLVMObjectFile, &err))
      s = llvm_error(out_path, err);
  } else if (!s && emit == DRV_EMIT_SO) {
    char obj[PATH_MAX];
    snprintf(obj, sizeof obj, "%s.%d.o", out_path, (int)getpid());
    if (LLVMTargetMachineEmitToFile(tm, mod, obj, LLVMObjectFile, &err))
      s = llvm_error(obj, err);
    else
      s = run_linker(obj, out_path);
    unlink(obj);
  }
  report_time(o, "emit and link", t0);
  if (mod)
    LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
  LLVMDisposeTargetMachine(tm);
  return s;
}
