/* run_mpi.h — hlorun's multi-process mode (docs/distributed.md): whether it is wanted (--mpi,
 * or started by mpirun), and libhlort_mpi.so loaded with dlopen, so that hlorun itself never
 * links MPI.  The run itself is in run.c (run_model_mpi).  Tests: tests/mpi.cmake.
 */
#ifndef HLOC_TOOLS_RUN_MPI_H
#define HLOC_TOOLS_RUN_MPI_H

#include <stdbool.h>

#include "hlo/runtime_mpi.h"
#include "run.h"

typedef struct mpi_api {
  void *handle;
  hlo_mpi_init_fn init;
  hlo_collective_group_create_mpi_fn group_create;
  hlo_mpi_allgather_fn allgather;
  hlo_mpi_group_set_exact_order_fn set_exact_order;
  hlo_mpi_abort_fn abort;
  hlo_mpi_finalize_fn finalize;
} mpi_api;

/* --mpi, or an mpirun environment (OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_RANK). */
bool run_mpi_wanted(const run_options *o);
/* Loads libhlort_mpi.so: $HLORUN_MPI_LIB, else next to hlorun, else ../lib of it, else the
 * loader's search path.  A build without MPI says so. */
HLO_MUST_USE hlo_status run_mpi_load(mpi_api *api);
/* The run's collective group over MPI_COMM_WORLD, with o's --collective-timeout and
 * --collective-order. */
HLO_MUST_USE hlo_status run_mpi_group_create(const mpi_api *api, const run_options *o, hlo_collective_group **out);

#endif
