/* hlorun.c — the runner's command line (DESIGN.md "Command line"): parses flags into
 * run_options, calls run_model (tools/run.c), prints the status, maps it to the exit code
 * (0 ok, 1 run-time error or mismatch, 2 usage, parse, verification or input error).
 * Tests: tests/hlorun_cli.cmake, the golden and conformance suites.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "run.h"

static const char usage[] =
    "usage: hlorun MODEL.hlo|MODEL.so [options]\n"
    "\n"
    "Compiles (through a cache) and runs an XLA HLO module or StableHLO MLIR (MODEL.mlir; its\n"
    "check.expect_* ops are evaluated: \"N checks passed\" or exit 1), or runs a shared object\n"
    "built by hloc.\n"
    "\n"
    "inputs, one per parameter leaf, in order:\n"
    "  --input FILE.npy | --input=@FILE.npy | --input='f32[2,2] {{1,2},{3,4}}'\n"
    "  --input=@FILE.npz | --input=@FILE.safetensors | --input=@DIR\n"
    "                          one input per member (npz: stored order; safetensors: data order;\n"
    "                          DIR: its .npy files by name); by name when every member names a parameter\n"
    "  --random-inputs[=SEED]  deterministic values instead (floats in [-1,1), integers in [0,8), pred 0/1)\n"
    "  --input rK:FILE.npy     an input of replica K only; a replica with rK: inputs reads only those\n"
    "results, one per result leaf, in order (default: print them as HLO literals):\n"
    "  --output FILE.npy       write a result (.npy; bf16 as <u2 raw bits, pred as |b1); rK:FILE.npy\n"
    "                          writes replica K's (unprefixed: replica 0's)\n"
    "  --output-dir DIR        write every result as DIR/out<i>.npy\n"
    "  --expected FILE.npy     compare a result; exit 1 on mismatch, reporting the worst element\n"
    "  --rtol R --atol A       tolerance |got - expected| <= A + R*|expected| (default 1e-5, 1e-6)\n"
    "  --ulp N                 also accept results within N units in the last place\n"
    "runtime:\n"
    "  --infeed FILE.npy       push an infeed buffer before the call (repeatable, in order)\n"
    "  --outfeed-dir DIR       write what the model sent to the outfeed as DIR/outfeed<i>.npy\n"
    "  --recv CHANNEL:FILE.npy push a buffer for the host recv on CHANNEL (is_host_transfer=true)\n"
    "                          before the call (repeatable, in order per channel)\n"
    "  --send-dir DIR          write what host sends put on channel C as DIR/send_<C>_<i>.npy\n"
    "                          (default: print them after the outfeeds, headed 'channel C send I:')\n"
    "  --custom-call-lib LIB.so   look custom-call targets up in LIB.so (repeatable)\n"
    "  --replicas N            run N replicas at once (default: the module's replica_count, or\n"
    "                          the count its collectives' replica ids need when it states none);\n"
    "                          results are printed per replica; --output-dir and --expected are replica 0's\n"
    "  --threads N             worker threads per replica (default: one per CPU)\n"
    "  --timeout SECONDS       cancel the model call after SECONDS (exit 1); checked at while-loop\n"
    "                          back-edges, and hlorun exits 1 s later if the call has not stopped\n"
    "  --mpi                   one replica per MPI rank (implied when started by mpirun; docs/distributed.md)\n"
    "  --collective-timeout SECONDS  with MPI: stop every rank when a collective or recv waits longer\n"
    "  --collective-order native|exact  with MPI: MPI's own reductions (default), or floating-point\n"
    "                          reductions in replica order, bit for bit as with --replicas threads\n"
    "  --donate                pass each donated parameter's buffer as its result (the module's\n"
    "                          input_output_alias): the model updates it in place and the result\n"
    "                          needs no memory of its own; one replica only.  With --benchmark,\n"
    "                          each call then starts from the previous call's results\n"
    "  --max-memory BYTES      refuse (exit 1) a model whose parameters, results and arena exceed\n"
    "                          BYTES (suffixes K, M, G; default: the machine's MemAvailable), before\n"
    "                          reading or allocating anything\n"
    "other:\n"
    "  --benchmark N           then run N more times (after untimed warm-up calls until 0.1 s of calls\n"
    "                          have run; none with several replicas); print: benchmark: iterations=N\n"
    "                          min_ms=A median_ms=B max_ms=C\n"
    "  -O0..-O3 --target-cpu=CPU --strict --nontemporal-min-bytes=N\n"
    "                          compile options for .hlo input (see hloc --help)\n"
    "  -v, --verbose           say on standard error whether the compile cache was hit, how\n"
    "                          the inputs were read, and the peak RSS and arena at the end\n"
    "  --help --version\n"
    "\n"
    "The compiled .so is cached in $XDG_CACHE_HOME/hloc (default ~/.cache/hloc), keyed by a hash\n"
    "of the text, the options and the compiler build.\n"
    "environment: HLO_RT_ISA=baseline|avx2|avx512 holds the runtime's GEMM and convolution\n"
    "kernels to a smaller CPU's instruction set than this one's (docs/runtime.md).\n"
    "GOMP_SPINCOUNT is set to 10000 before the model loads unless it or OMP_WAIT_POLICY is set\n"
    "(oneDNN's OpenMP threads; docs/runtime.md \"Threads\").\n"
    "exit status: 0 ok, 1 run-time error or mismatch, 2 usage, parse, verification or input error\n";

static int usage_error(const char *msg, const char *arg) {
  fprintf(stderr, "hlorun: %s%s%s\ntry 'hlorun --help'\n", msg, arg ? ": " : "", arg ? arg : "");
  return 2;
}

static bool add(const char **list, int *n, int max, const char *v) {
  if (*n >= max)
    return false;
  list[(*n)++] = v[0] == '@' ? v + 1 : v;
  return true;
}

static bool parse_int(const char *v, long lo, long hi, int *out) {
  errno = 0;
  char *end;
  long x = strtol(v, &end, 10);
  if (errno || end == v || *end || x < lo || x > hi)
    return false;
  *out = (int)x;
  return true;
}

static bool parse_double(const char *v, double *out) {
  errno = 0;
  char *end;
  double x = strtod(v, &end);
  if (errno || end == v || *end || !(x >= 0))
    return false;
  *out = x;
  return true;
}

/* A byte count with an optional K, M or G suffix (powers of 1024). */
static bool parse_seed(const char *a, run_options *o) {
  o->random_inputs = true;
  if (!a[15])
    return true;
  errno = 0;
  char *end;
  o->seed = strtoull(a + 16, &end, 10);
  return !errno && end != a + 16 && !*end;
}

/* Returns -1 when argv is fine, else the exit status. */
static int parse_args(int argc, char **argv, run_options *o) {
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
      if (o->n_inputs >= RUN_MAX_ARRAYS)
        return usage_error("too many --input", NULL);
      o->inputs[o->n_inputs++] = v; /* with its '@', which makes @DIR a folder of inputs (tools/inputs.c) */
    } else if ((v = cli_flag_value("--output-dir", argc, argv, &i))) {
      o->output_dir = v;
    } else if ((v = cli_flag_value("--output", argc, argv, &i))) {
      if (!add(o->outputs, &o->n_outputs, RUN_MAX_ARRAYS, v))
        return usage_error("too many --output", NULL);
    } else if ((v = cli_flag_value("--expected", argc, argv, &i))) {
      if (!add(o->expected, &o->n_expected, RUN_MAX_ARRAYS, v))
        return usage_error("too many --expected", NULL);
    } else if ((v = cli_flag_value("--infeed", argc, argv, &i))) {
      if (!add(o->infeeds, &o->n_infeeds, RUN_MAX_ARRAYS, v))
        return usage_error("too many --infeed", NULL);
    } else if ((v = cli_flag_value("--outfeed-dir", argc, argv, &i))) {
      o->outfeed_dir = v;
    } else if ((v = cli_flag_value("--recv", argc, argv, &i))) {
      if (!add(o->recvs, &o->n_recvs, RUN_MAX_ARRAYS, v))
        return usage_error("too many --recv", NULL);
    } else if ((v = cli_flag_value("--send-dir", argc, argv, &i))) {
      o->send_dir = v;
    } else if ((v = cli_flag_value("--custom-call-lib", argc, argv, &i))) {
      if (!add(o->custom_call_libs, &o->n_custom_call_libs, RUN_MAX_LIBS, v))
        return usage_error("too many --custom-call-lib", NULL);
    } else if ((v = cli_flag_value("--rtol", argc, argv, &i))) {
      if (!parse_double(v, &o->rtol))
        return usage_error("--rtol needs a number >= 0", v);
    } else if ((v = cli_flag_value("--atol", argc, argv, &i))) {
      if (!parse_double(v, &o->atol))
        return usage_error("--atol needs a number >= 0", v);
    } else if ((v = cli_flag_value("--ulp", argc, argv, &i))) {
      if (!parse_int(v, 0, 1L << 30, &o->ulp))
        return usage_error("--ulp needs a count >= 0", v);
    } else if (strncmp(a, "--random-inputs", 15) == 0 && (a[15] == 0 || a[15] == '=')) {
      if (!parse_seed(a, o))
        return usage_error("--random-inputs=SEED needs an unsigned integer", a);
    } else if ((v = cli_flag_value("--benchmark", argc, argv, &i))) {
      if (!parse_int(v, 1, 100000000, &o->benchmark))
        return usage_error("--benchmark needs a positive count", v);
    } else if ((v = cli_flag_value("--replicas", argc, argv, &i))) {
      if (!parse_int(v, 1, 1024, &o->replicas))
        return usage_error("--replicas needs a count from 1 to 1024", v);
    } else if ((v = cli_flag_value("--threads", argc, argv, &i))) {
      if (!parse_int(v, 0, 1024, &o->threads))
        return usage_error("--threads needs a count from 0 (one per CPU) to 1024", v);
    } else if ((v = cli_flag_value("--timeout", argc, argv, &i))) {
      if (!parse_double(v, &o->timeout_s) || !(o->timeout_s > 0) || o->timeout_s > 1e9)
        return usage_error("--timeout needs a number of seconds > 0", v);
    } else if ((v = cli_flag_value("--collective-timeout", argc, argv, &i))) {
      if (!parse_double(v, &o->collective_timeout_s) || !(o->collective_timeout_s > 0) || o->collective_timeout_s > 1e9)
        return usage_error("--collective-timeout needs a number of seconds > 0", v);
    } else if ((v = cli_flag_value("--collective-order", argc, argv, &i))) {
      if (strcmp(v, "exact") != 0 && strcmp(v, "native") != 0)
        return usage_error("--collective-order needs 'native' or 'exact'", v);
      o->collective_exact = strcmp(v, "exact") == 0;
    } else if (strcmp(a, "--mpi") == 0) {
      o->mpi = true;
    } else if ((v = cli_flag_value("--max-memory", argc, argv, &i))) {
      if (!cli_parse_bytes(v, &o->max_memory) || o->max_memory <= 0)
        return usage_error("--max-memory needs a byte count > 0 (suffixes K, M, G)", v);
    } else if ((v = cli_flag_value("--target-cpu", argc, argv, &i))) {
      o->target_cpu = v;
    } else if ((v = cli_flag_value("--nontemporal-min-bytes", argc, argv, &i))) {
      if (!cli_parse_nontemporal(v, &o->nontemporal_min_bytes))
        return usage_error("--nontemporal-min-bytes needs a byte count > 0 (suffixes K, M, G) or 'off'", v);
    } else if (strlen(a) == 3 && a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '3') {
      o->opt_level = a[2] - '0';
    } else if (strcmp(a, "--donate") == 0) {
      o->donate = true;
    } else if (strcmp(a, "--strict") == 0) {
      o->strict = true;
    } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
      o->verbose = true;
    } else if (a[0] == '-' && a[1]) {
      return usage_error("unknown option", a);
    } else if (!o->model) {
      o->model = a;
    } else {
      return usage_error("more than one model", a);
    }
  }
  if (!o->model)
    return usage_error("no model given", NULL);
  return -1;
}

int main(int argc, char **argv) {
  static run_options o;
  run_options_init(&o);
  int rc = parse_args(argc, argv, &o);
  if (rc >= 0)
    return rc;
  hlo_status s = run_model(&o, stdout);
  rc = 0;
  if (s) {
    hlo_status_code code = hlo_status_code_of(s);
    fprintf(stderr, "hlorun: %s\n", hlo_status_message(s));
    rc = code == HLO_INVALID_ARGUMENT || code == HLO_NOT_FOUND ? 2 : 1;
    hlo_status_free(s);
  }
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "hlorun: write error on standard output\n");
    rc = rc ? rc : 1;
  }
  return rc;
}
