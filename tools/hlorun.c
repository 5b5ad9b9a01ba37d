/* hlorun.c — the runner's command line (DESIGN.md "Command line"): parses flags into
 * run_options, calls run_model (tools/run.c), prints the status, maps it to the exit code
 * (0 ok, 1 run-time error or mismatch, 2 usage, parse or verification error).
 * Tests: tests/hlorun_cli.cmake, the golden and conformance suites.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "run.h"

static const char usage[] =
    "usage: hlorun MODEL.hlo|MODEL.so [options]\n"
    "\n"
    "Compiles (through a cache) and runs an XLA HLO module, or runs a shared object built by hloc.\n"
    "\n"
    "inputs, one per parameter leaf, in order:\n"
    "  --input FILE.npy | --input=@FILE.npy | --input='f32[2,2] {{1,2},{3,4}}'\n"
    "  --random-inputs[=SEED]  deterministic values instead (floats in [-1,1), small integers)\n"
    "results, one per result leaf, in order (default: print them as HLO literals):\n"
    "  --output FILE.npy       write a result (.npy; bf16 as <u2 raw bits, pred as |b1)\n"
    "  --output-dir DIR        write every result as DIR/out<i>.npy\n"
    "  --expected FILE.npy     compare a result; exit 1 on mismatch, reporting the worst element\n"
    "  --rtol R --atol A       tolerance |got - expected| <= A + R*|expected| (default 1e-5, 1e-6)\n"
    "  --ulp N                 also accept results within N units in the last place\n"
    "other:\n"
    "  --benchmark N           run N more times; print: benchmark: iterations=N min_ms=A median_ms=B max_ms=C\n"
    "  --threads N             worker threads (default: one per CPU)\n"
    "  -O0..-O3 --target-cpu=CPU --strict   compile options for .hlo input (see hloc --help)\n"
    "  --help --version\n"
    "\n"
    "The compiled .so is cached in $XDG_CACHE_HOME/hloc (default ~/.cache/hloc), keyed by a hash\n"
    "of the text, the options and the compiler version.\n"
    "exit status: 0 ok, 1 run-time error or mismatch, 2 usage, parse or verification error\n";

static int usage_error(const char *msg, const char *arg) {
  fprintf(stderr, "hlorun: %s%s%s\ntry 'hlorun --help'\n", msg, arg ? ": " : "", arg ? arg : "");
  return 2;
}

static bool add(const char **list, int *n, const char *v) {
  if (*n >= RUN_MAX_ARRAYS)
    return false;
  list[(*n)++] = v[0] == '@' ? v + 1 : v;
  return true;
}

int main(int argc, char **argv) {
  static run_options o;
  run_options_init(&o);
  const char *v;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(usage, stdout);
      return ferror(stdout) ? 1 : 0;
    } else if (strcmp(a, "--version") == 0) {
      printf("hlorun %s\n", HLOC_VERSION);
      return 0;
    } else if ((v = cli_flag_value("--input", argc, argv, &i))) {
      if (!add(o.inputs, &o.n_inputs, v))
        return usage_error("too many --input", NULL);
    } else if ((v = cli_flag_value("--output-dir", argc, argv, &i))) {
      o.output_dir = v;
    } else if ((v = cli_flag_value("--output", argc, argv, &i))) {
      if (!add(o.outputs, &o.n_outputs, v))
        return usage_error("too many --output", NULL);
    } else if ((v = cli_flag_value("--expected", argc, argv, &i))) {
      if (!add(o.expected, &o.n_expected, v))
        return usage_error("too many --expected", NULL);
    } else if ((v = cli_flag_value("--rtol", argc, argv, &i))) {
      o.rtol = atof(v);
    } else if ((v = cli_flag_value("--atol", argc, argv, &i))) {
      o.atol = atof(v);
    } else if ((v = cli_flag_value("--ulp", argc, argv, &i))) {
      o.ulp = atoi(v);
    } else if (strncmp(a, "--random-inputs", 15) == 0 && (a[15] == 0 || a[15] == '=')) {
      o.random_inputs = true;
      o.seed = a[15] == '=' ? strtoull(a + 16, NULL, 10) : 0;
    } else if ((v = cli_flag_value("--benchmark", argc, argv, &i))) {
      o.benchmark = atoi(v);
      if (o.benchmark <= 0)
        return usage_error("--benchmark needs a positive count", v);
    } else if ((v = cli_flag_value("--threads", argc, argv, &i))) {
      o.threads = atoi(v);
    } else if ((v = cli_flag_value("--target-cpu", argc, argv, &i))) {
      o.target_cpu = v;
    } else if (strlen(a) == 3 && a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '3') {
      o.opt_level = a[2] - '0';
    } else if (strcmp(a, "--strict") == 0) {
      o.strict = true;
    } else if (a[0] == '-' && a[1]) {
      return usage_error("unknown option", a);
    } else if (!o.model) {
      o.model = a;
    } else {
      return usage_error("more than one model", a);
    }
  }
  if (!o.model)
    return usage_error("no model given", NULL);
  hlo_status s = run_model(&o, stdout);
  int rc = 0;
  if (s) {
    hlo_status_code code = hlo_status_code_of(s);
    const char *msg = hlo_status_message(s);
    if (!(code == HLO_INVALID_ARGUMENT && strstr(msg, " error")))
      fprintf(stderr, "hlorun: %s\n", msg);
    rc = code == HLO_INVALID_ARGUMENT || code == HLO_NOT_FOUND ? 2 : 1;
    hlo_status_free(s);
  }
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "hlorun: write error on standard output\n");
    rc = rc ? rc : 1;
  }
  return rc;
}
