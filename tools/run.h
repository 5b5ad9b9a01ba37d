/* run.h — hlorun's work as a library call: options in, status out (tools/hlorun.c is the
 * thin main).  Exit-code mapping: HLO_INVALID_ARGUMENT/NOT_FOUND -> 2 (usage, parse,
 * verification or input error), anything else -> 1 (run-time error or mismatch).
 * Tests: tests/hlorun_cli.cmake, the golden and conformance suites.
 */
#ifndef HLOC_TOOLS_RUN_H
#define HLOC_TOOLS_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "hlo/abi.h"
#include "hlo/status.h"

enum { RUN_MAX_ARRAYS = 4096, RUN_MAX_LIBS = 64 };

typedef struct run_options {
  const char *model;                 /* .hlo (compiled through the cache) or .so */
  const char *inputs[RUN_MAX_ARRAYS];/* .npy paths or inline literals "f32[2] {1, 2}" */
  int n_inputs;
  const char *outputs[RUN_MAX_ARRAYS];
  int n_outputs;
  const char *output_dir;            /* writes out<i>.npy for every result */
  const char *expected[RUN_MAX_ARRAYS];
  int n_expected;
  double rtol, atol;
  int ulp;
  bool random_inputs;
  uint64_t seed;
  int benchmark;                     /* iterations; 0 = none */
  const char *infeeds[RUN_MAX_ARRAYS];/* .npy files pushed, in order, before each call */
  int n_infeeds;
  const char *outfeed_dir;           /* writes outfeed<i>.npy for every outfeed buffer */
  const char *recvs[RUN_MAX_ARRAYS]; /* "CHANNEL:FILE.npy": pushed to the channel, in order */
  int n_recvs;
  const char *send_dir;              /* writes send_<channel>_<i>.npy for every host send */
  const char *custom_call_libs[RUN_MAX_LIBS];
  int n_custom_call_libs;
  int replicas;                      /* 0: the module's replica_count */
  int threads;                       /* per replica; 0 = one per CPU */
  int opt_level;
  const char *target_cpu;
  bool strict;
  int64_t nontemporal_min_bytes; /* --nontemporal-min-bytes: 0 hloc's default, < 0 off */
  bool verbose;                      /* cache hits and misses on stderr */
  double timeout_s;                  /* --timeout: cancel the call after this long; 0 = none */
  int64_t max_memory;                /* --max-memory: byte limit for the model's buffers; 0 = none */
  bool mpi;                          /* --mpi: one replica per MPI rank (also implied by mpirun) */
  double collective_timeout_s;       /* --collective-timeout: how long an MPI collective waits; 0 = for ever */
  bool collective_exact;             /* --collective-order exact: MPI reductions in replica order */
  bool donate;                       /* --donate: donated parameters' buffers are their results */
} run_options;

void run_options_init(run_options *o);
/* What a run of `desc` with `replicas` replicas allocates, in bytes: the parameters once, and
 * per replica its results (but those that are donated parameters' buffers: donors, from
 * run_result_donors, or NULL) and its context's arena (hlo_module_desc.arena_bytes, which
 * holds the kernels' scratch too).  The one place the memory limit is computed. */
typedef struct run_memory {
  int64_t params, results, arena, total;
} run_memory;
int64_t run_memory_needed(const hlo_module_desc *desc, int replicas, const int32_t *donors, run_memory *parts);
/* The model's donors (hlo_module_desc.result_donors) when --donate applies (one replica), else
 * NULL. */
const int32_t *run_result_donors(const run_options *o, const hlo_module_desc *desc, int replicas);
/* Refuses (RESOURCE_EXHAUSTED) a run that needs more than --max-memory, or by default more than
 * the machine's MemAvailable, saying how much and of what. */
HLO_MUST_USE hlo_status run_check_memory(const run_options *o, const hlo_module_desc *desc, int replicas);
/* Runs the model; printed results and the benchmark line go to out, notes to stderr. */
HLO_MUST_USE hlo_status run_model(const run_options *o, FILE *out);

#endif
