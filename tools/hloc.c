/* hloc.c — the compiler's command line (DESIGN.md "Command line"): parses flags, calls
 * drv_compile_file, prints the status, maps it to the exit code (0 ok, 1 internal or
 * run-time error, 2 usage, parse or verification error).  Everything else is in
 * compiler/driver.  Tests: tests/hloc_cli.cmake.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "codegen/codegen.h"
#include "driver/driver.h"

static const char usage[] =
    "usage: hloc MODEL.hlo -o OUT [options]\n"
    "\n"
    "Compiles an XLA HLO text module, or StableHLO MLIR (MODEL.mlir).  OUT's suffix picks what\n"
    "is written when --emit is not given: .so (shared object), .o (object), .ll (LLVM IR),\n"
    ".s (assembly), .hlo (canonical HLO text), .h (C header).  -o - writes text kinds to\n"
    "standard output.\n"
    "\n"
    "options:\n"
    "  -o FILE                output file; - is standard output (llvm, asm, hlo, header only);\n"
    "                         may be left out with --emit=hlo (standard output) or --emit=none\n"
    "  --emit=KIND            so | obj | llvm | asm | hlo | header | none (none: parse and verify only)\n"
    "  --verify-only          same as --emit=none\n"
    "  --header FILE.h        also write the C header of the typed entry point (docs/abi.md);\n"
    "                         without -o and --emit, only the header is written\n"
    "  -O0 -O1 -O2 -O3        optimization level: LLVM's default<On> pipeline, identical\n"
    "                         functions merged before and after it (default -O2)\n"
    "  --target-cpu=CPU       native (default: this machine's CPU and features), generic (a\n"
    "                         portable x86-64 object), or an LLVM CPU name (x86-64-v3,\n"
    "                         skylake-avx512, znver4, ...); an unknown name is an error\n"
    "  --strict               reject hloc's broadcasting extensions, as XLA's verifier does\n"
    "  --nontemporal-min-bytes=N|off\n"
    "                         write loop results of at least N bytes (suffixes K, M, G; default\n"
    "                         64M) with non-temporal stores where their buffer is 64-byte aligned;\n"
    "                         off: never\n"
    "  --codegen-threads=N    threads that optimize a .so's LLVM IR and write its object code,\n"
    "                         1 to 8 (default: $HLOC_CODEGEN_THREADS, else one per CPU this\n"
    "                         process may use, for modules of about 4000 LLVM instructions or\n"
    "                         more); results are the same for every N\n"
    "  --dump-dir DIR         write the module after parsing (00-parsed.hlo) and after each pass\n"
    "                         (NN-<pass>.hlo), buffer-assignment.txt, and llvm-before-opt.ll /\n"
    "                         llvm-after-opt.ll (the module then optimized whole), to DIR\n"
    "  -v, --verbose          say what code generation decided (the memory plan:\n"
    "                         parameter, result and arena bytes, the ten largest temporaries)\n"
    "  --time-passes          print a table of the time of each stage to standard error\n"
    "  --verify-each          verify the module after every pass (and the LLVM IR after\n"
    "                         optimization)\n"
    "  --after-passes         with --emit=hlo: print the module after the pass pipeline\n"
    "  --entry-name SYM       C symbol of the entry point: SYM, SYM_run, SYM_describe (default:\n"
    "                         the module name made a C identifier, hlo_ in front when the C\n"
    "                         library defines it: HloModule exp -> hlo_exp)\n"
    "  --help                 print this text\n"
    "  --version              print the version\n"
    "\n"
    "environment: CC is the C compiler that links a .so (default cc); HLOC_CODEGEN_THREADS\n"
    "is --codegen-threads' default (hlorun's compiles take it too).\n"
    "exit status: 0 ok, 1 internal or run-time error, 2 usage, parse or verification error\n";

static int usage_error(const char *msg, const char *arg) {
  fprintf(stderr, "hloc: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
  fprintf(stderr, "try 'hloc --help'\n");
  return 2;
}

/* A thread count from 1 to DRV_MAX_CODEGEN_THREADS (--codegen-threads, HLOC_CODEGEN_THREADS). */
static bool parse_threads(const char *v, int *out) {
  char *end;
  long n = strtol(v, &end, 10);
  if (*v < '0' || *v > '9' || *end || n < 1 || n > DRV_MAX_CODEGEN_THREADS)
    return false;
  *out = (int)n;
  return true;
}

static bool is_c_identifier(const char *s) {
  if (!*s || (*s >= '0' && *s <= '9'))
    return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
      return false;
  return true;
}

static bool parse_emit(const char *s, drv_emit *out) {
  static const struct { const char *name; drv_emit emit; } kinds[] = {
      {"so", DRV_EMIT_SO}, {"obj", DRV_EMIT_OBJ}, {"llvm", DRV_EMIT_LLVM}, {"asm", DRV_EMIT_ASM},
      {"hlo", DRV_EMIT_HLO}, {"header", DRV_EMIT_HEADER}, {"none", DRV_EMIT_NONE}};
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
    if (strcmp(s, kinds[i].name) == 0) {
      *out = kinds[i].emit;
      return true;
    }
  return false;
}

int main(int argc, char **argv) {
  drv_options o;
  drv_options_init(&o);
  const char *input = NULL, *output = NULL, *header = NULL, *v;
  drv_emit emit = DRV_EMIT_SO;
  bool have_emit = false;
  const char *threads_env = getenv("HLOC_CODEGEN_THREADS");
  if (threads_env && *threads_env && !parse_threads(threads_env, &o.codegen_threads))
    return usage_error("HLOC_CODEGEN_THREADS needs a count from 1 to 8", threads_env);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(usage, stdout);
      return ferror(stdout) ? 1 : 0;
    } else if (strcmp(a, "--version") == 0) {
      printf("hloc %s\n", HLOC_VERSION);
      return ferror(stdout) ? 1 : 0;
    } else if (strcmp(a, "-o") == 0) {
      if (++i >= argc)
        return usage_error("-o needs a file name", NULL);
      output = argv[i];
    } else if ((v = cli_flag_value("--emit", argc, argv, &i))) {
      if (!parse_emit(v, &emit))
        return usage_error("unknown --emit kind", v);
      have_emit = true;
    } else if (strcmp(a, "--verify-only") == 0) {
      emit = DRV_EMIT_NONE;
      have_emit = true;
    } else if ((v = cli_flag_value("--header", argc, argv, &i))) {
      header = v;
    } else if (strlen(a) == 3 && a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '3') {
      o.opt_level = a[2] - '0';
    } else if ((v = cli_flag_value("--target-cpu", argc, argv, &i))) {
      o.target_cpu = v;
    } else if ((v = cli_flag_value("--nontemporal-min-bytes", argc, argv, &i))) {
      if (!cli_parse_nontemporal(v, &o.nontemporal_min_bytes))
        return usage_error("--nontemporal-min-bytes needs a byte count > 0 (suffixes K, M, G) or 'off'", v);
    } else if ((v = cli_flag_value("--codegen-threads", argc, argv, &i))) {
      if (!parse_threads(v, &o.codegen_threads))
        return usage_error("--codegen-threads needs a count from 1 to 8", v);
    } else if (strcmp(a, "--strict") == 0) {
      o.strict = true;
    } else if ((v = cli_flag_value("--dump-dir", argc, argv, &i))) {
      o.dump_dir = v;
    } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
      o.verbose = true;
    } else if (strcmp(a, "--time-passes") == 0) {
      o.time_passes = true;
    } else if (strcmp(a, "--after-passes") == 0) {
      o.after_passes = true;
    } else if (strcmp(a, "--verify-each") == 0) {
      o.verify_each = true;
    } else if ((v = cli_flag_value("--entry-name", argc, argv, &i))) {
      o.symbol = v;
    } else if (a[0] == '-' && a[1] != 0) {
      return usage_error("unknown option", a);
    } else if (!input) {
      input = a;
    } else {
      return usage_error("more than one input file", a);
    }
  }
  if (!input)
    return usage_error("no input file", NULL);
  if (!output && !have_emit && header)
    emit = DRV_EMIT_NONE; /* hloc model.hlo --header model.h: only the header */
  if (!have_emit && output && !drv_emit_from_suffix(output, &emit))
    return usage_error("cannot tell what to write from the output name; use --emit", output);
  if (!output && emit != DRV_EMIT_NONE && emit != DRV_EMIT_HLO)
    return usage_error("-o is required", NULL);
  if (output && strcmp(output, "-") == 0 && (emit == DRV_EMIT_SO || emit == DRV_EMIT_OBJ))
    return usage_error("-o - writes only text kinds (llvm, asm, hlo, header); give a file name", NULL);
  if (o.symbol && !is_c_identifier(o.symbol))
    return usage_error("--entry-name must be a C identifier", o.symbol);
  if (o.symbol && cg_symbol_reserved(o.symbol))
    return usage_error("--entry-name names a symbol of the C library or the runtime; choose another", o.symbol);
  o.header_path = header;
  hlo_status s = drv_compile_file(input, output, emit, &o);
  int rc = 0;
  if (s) {
    hlo_status_code code = hlo_status_code_of(s);
    if (code != HLO_INVALID_ARGUMENT || !strstr(hlo_status_message(s), " error"))
      fprintf(stderr, "hloc: %s\n", hlo_status_message(s));
    rc = code == HLO_INVALID_ARGUMENT || code == HLO_NOT_FOUND ? 2 : 1;
    hlo_status_free(s);
  }
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "hloc: write error on standard output\n");
    rc = rc ? rc : 1;
  }
  return rc;
}
