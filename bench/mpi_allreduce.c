/* mpi_allreduce.c — all-reduce bandwidth of the runtime's MPI paths beside raw MPI_Allreduce,
 * measured in the same run (docs/distributed.md).  For each buffer size (MB of f32): the
 * runtime paths are hlo_rt_collective, the call a compiled model makes for an f32 sum
 * all-reduce with replica_groups={} (the description says the reducer is one f32 add, as
 * hloc's does for `add(a, b)`), on the group's native path (MPI_Iallreduce with MPI_SUM) and in
 * exact order (hlo_mpi_group_set_exact_order: the backend's gather, then collectives.c summing
 * in replica order); the raw figure is MPI_Allreduce(MPI_FLOAT, MPI_SUM) on the same buffers.
 * The results are checked to be equal (integer-valued data: exact in any order).  Prints the
 * median of --reps timed calls after one warm-up, as ms and GB/s (buffer bytes / time), then,
 * in parentheses, the same all-reduce through a reducer the description does not name (called
 * per element: natively inside a user-defined MPI_Op, in exact order after the gather) and
 * the runtime's all-gather of the buffer (MPI_Iallgather into the result).  Built when MPI is found
 * (build/mpi_allreduce_bench); run:
 *   mpirun --oversubscribe --allow-run-as-root -np 2 build/mpi_allreduce_bench [--reps N] [MB ...]
 * Test: mpi.bench_smoke (tests/mpi.cmake).
 */
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/rt.h"
#include "hlo/runtime.h"
#include "hlo/runtime_mpi.h"

/* The reducer as hloc emits it: (ctx, params, results, frame) on scalars. */
static hlo_status add_f32(hlo_context *ctx, void *const *params, void *const *results, void *frame) {
  (void)ctx;
  (void)frame;
  *(float *)results[0] = *(const float *)params[0] + *(const float *)params[1];
  return NULL;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

typedef struct bench {
  hlo_context *ctx;
  hlo_collective_group *group;
  int rank, reps;
  int64_t n;
  float *src, *ours, *raw, *gathered;
  int64_t desc[11], general_desc[11], gather_desc[11];
} bench;

enum { PATH_RUNTIME, PATH_RAW, PATH_GATHER, PATH_GENERAL };

/* Median seconds of reps calls of one path (exact: the group in exact order), after a
 * warm-up; -1 on error. */
static double time_path(bench *b, int path, int exact) {
  hlo_status es = hlo_mpi_group_set_exact_order(b->group, exact);
  if (es) {
    fprintf(stderr, "rank %d: %s\n", b->rank, hlo_status_message(es));
    hlo_status_free(es);
    return -1;
  }
  double *t = calloc((size_t)b->reps, sizeof *t), med = -1;
  void *ops[1] = {b->src}, *res[1] = {path == PATH_GATHER ? b->gathered : b->ours};
  bool raw = path == PATH_RAW;
  int ok = t != NULL;
  for (int k = -1; ok && k < b->reps; k++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (raw) {
      ok = MPI_Allreduce(b->src, b->raw, (int)b->n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS;
    } else {
      const int64_t *d = path == PATH_GATHER ? b->gather_desc : path == PATH_GENERAL ? b->general_desc : b->desc;
      hlo_status s = hlo_rt_collective(b->ctx, d, "bench", ops, res, (void *)add_f32);
      if (s)
        fprintf(stderr, "rank %d: %s\n", b->rank, hlo_status_message(s));
      ok = s == NULL;
      hlo_status_free(s);
    }
    double dt = MPI_Wtime() - t0, slowest = 0;
    MPI_Allreduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (k >= 0)
      t[k] = slowest;
  }
  if (ok) {
    qsort(t, (size_t)b->reps, sizeof *t, cmp_double);
    med = b->reps % 2 ? t[b->reps / 2] : (t[b->reps / 2 - 1] + t[b->reps / 2]) / 2;
  }
  free(t);
  return med;
}

static int run_size(bench *b, double mb, int size) {
  b->n = (int64_t)(mb * 1024 * 1024) / 4;
  size_t bytes = (size_t)b->n * 4;
  b->src = malloc(bytes);
  b->ours = malloc(bytes);
  b->raw = malloc(bytes);
  b->gathered = malloc(bytes * (size_t)size);
  if (!b->src || !b->ours || !b->raw || !b->gathered)
    return 1;
  for (int64_t i = 0; i < b->n; i++)
    b->src[i] = (float)(b->rank + 1 + i % 7);
  /* kind all-reduce, 1 leaf, no dimension, no groups, no pairs, f32[n] -> f32[n], the reducer
   * one f32 add (as hloc describes `add(a, b)`) */
  int64_t d[] = {0, 1, -1, 0, 0, 0, 4, 1, b->n, 4 * b->n, HLO_DTYPE_IR_F32};
  memcpy(b->desc, d, sizeof d);
  memcpy(b->general_desc, d, sizeof d);
  b->general_desc[10] = -1; /* no add type: the reducer is called per element */
  /* all-gather along dimension 0: f32[n] -> f32[size * n] */
  int64_t gd[] = {1, 1, 0, 0, 0, 0, 4, 1, b->n, 4 * b->n * size, -1};
  memcpy(b->gather_desc, gd, sizeof gd);
  /* every runtime path's result against MPI_Allreduce's */
  double raw = time_path(b, PATH_RAW, 0), t[4];
  int same = raw >= 0;
  const int paths[4][2] = {{PATH_RUNTIME, 0}, {PATH_RUNTIME, 1}, {PATH_GENERAL, 0}, {PATH_GENERAL, 1}};
  for (int i = 0; i < 4; i++) {
    memset(b->ours, 0, bytes);
    t[i] = time_path(b, paths[i][0], paths[i][1]);
    same = same && t[i] >= 0 && memcmp(b->ours, b->raw, bytes) == 0;
  }
  double gather = time_path(b, PATH_GATHER, 0);
  same = same && gather >= 0;
  int all_same = 0;
  MPI_Allreduce(&same, &all_same, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (b->rank == 0 && all_same)
    printf("%8.3f MB  native %9.3f ms %6.2f GB/s   exact order %9.3f ms %6.2f GB/s   MPI_Allreduce %9.3f ms "
           "%6.2f GB/s   (reducer per element: native %9.3f ms, exact order %9.3f ms; all-gather %9.3f ms)\n",
           mb, t[0] * 1e3, bytes / t[0] / 1e9, t[1] * 1e3, bytes / t[1] / 1e9, raw * 1e3, bytes / raw / 1e9,
           t[2] * 1e3, t[3] * 1e3, gather * 1e3);
  else if (b->rank == 0)
    printf("%8.3f MB  FAILED: the runtime's all-reduce and MPI_Allreduce differ or failed\n", mb);
  free(b->src);
  free(b->ours);
  free(b->raw);
  free(b->gathered);
  return !all_same;
}

int main(int argc, char **argv) {
  int32_t rank, size;
  hlo_status s = hlo_mpi_init(&rank, &size);
  hlo_collective_group *g = NULL;
  if (!s)
    s = hlo_collective_group_create_mpi(NULL, 0, &g);
  bench b = {.rank = rank, .reps = 5, .group = g};
  hlo_context_options co;
  hlo_context_options_init(&co);
  co.num_threads = 1;
  co.replica_id = rank;
  co.num_replicas = size;
  co.group = g;
  if (!s)
    s = hlo_context_create(&co, &b.ctx);
  if (s) {
    fprintf(stderr, "mpi_allreduce_bench: %s\n", hlo_status_message(s));
    return 1;
  }
  double sizes[64];
  int n_sizes = 0, rc = 0;
  for (int i = 1; i < argc && n_sizes < 64; i++)
    if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
      b.reps = atoi(argv[++i]) > 0 ? atoi(argv[i]) : 1;
    else
      sizes[n_sizes++] = atof(argv[i]);
  if (n_sizes == 0) {
    sizes[0] = 1;
    sizes[1] = 64;
    n_sizes = 2;
  }
  if (rank == 0)
    printf("%d ranks, f32 sum, median of %d\n", size, b.reps);
  for (int i = 0; i < n_sizes; i++)
    rc |= run_size(&b, sizes[i], size);
  hlo_context_destroy(b.ctx);
  hlo_collective_group_destroy(g);
  hlo_mpi_finalize();
  return rc;
}
